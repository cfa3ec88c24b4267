/* Unit tests of --presign (flood/send/presign.c) and of what it relies on: the crowd serves
 * what was built ahead as of its intended time (flood/send/workload_due.c). The option's
 * grammar and refusals; the plan's count of a window and its memory check; notes deleted or
 * edited, outboxes and actor revisions (several pending for one actor) served by time. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flood/core/clock.h"
#include "flood/send/presign.h"
#include "flood/send/workload.h"
#include "tests/check.h"
#include "tests/unit/workload_fixture.h"
#include "webfinger/activity.h"

static void parse_cases(void)
{
    double w = 0;
    struct flood_err err = {0};
    CHECK(presign_parse("30s", &w, &err) == 0 && w == 30, "--presign 30s: 30 s");
    CHECK(presign_parse("10m", &w, &err) == 0 && w == 600, "--presign 10m: 600 s");
    CHECK(presign_parse("all", &w, &err) == 0 && w == PRESIGN_ALL, "--presign all");
    CHECK(presign_parse("soon", &w, &err) < 0 && strstr(err.msg, "--presign") &&
              strstr(err.msg, "all"),
          "--presign soon refused, naming the option and 'all' (%s)", err.msg);
    CHECK(presign_parse("0", &w, &err) < 0 && strstr(err.msg, "--presign"),
          "--presign 0 refused (%s)", err.msg);
}

static void plan_cases(void)
{
    struct sched sc;
    struct flood_err err = {0};
    CHECK(sched_init_rate(&sc, 100, 10, SCHED_CONSTANT, 1, &err) == 0, "100/s for 10 s");
    struct presign_plan p;
    CHECK(presign_plan(&sc, 3, 0, &p, &err) == 0 && p.n == 300 && p.window_s == 3 && p.ring >= 300,
          "a 3 s window holds 300 requests (%" PRIu64 "), the ring at least that (%zu)", p.n,
          p.ring);
    CHECK(presign_plan(&sc, PRESIGN_ALL, 0, &p, &err) == 0 && p.n == 1000 && p.window_s > 10,
          "all: every one of the 1000, the window past the end (%g s)", p.window_s);
    CHECK(presign_plan(&sc, 60, 0, &p, &err) == 0 && p.n == 1000,
          "a window longer than the run: the whole run");
    /* the memory bound: 1000 requests at 1 KiB at the least need more than 512 KiB */
    CHECK(presign_plan(&sc, PRESIGN_ALL, 512 * 1024, &p, &err) < 0 &&
              strstr(err.msg, "--presign-memory"),
          "all of 1000 requests refused under --presign-memory 512KiB (%s)", err.msg);
    CHECK(presign_plan(&sc, PRESIGN_ALL, 2 * 1024 * 1024, &p, &err) == 0, "and taken under 2MiB");
    CHECK(presign_plan(&sc, 3, 512 * 1024, &p, &err) == 0 && p.n == 300,
          "a 3 s window (300 requests) fits 512KiB");
}

/* A workload of create, update and delete built far from now: its notes served as of now. */
static void notes_by_time(void)
{
    struct crowd c = crowd_of(2, 3, "https");
    for (int future = 1; future >= 0; future--) {
        struct workload_opts o = {.seed = 11};
        o.mix[OP_CREATE] = 4;
        o.mix[OP_UPDATE] = 1;
        o.mix[OP_DELETE] = 1;
        struct flood_err err = {0};
        time_t now = time(NULL);
        time_t start = future ? now + 3600 : now - 3600;
        struct workload *w = workload_new_at(&c, &o, personas, 2, start, &err);
        CHECK(w != NULL, "workload (%s)", err.msg);
        if (!w)
            return;
        int deletes = 0, gone = 0, updates = 0, edited = 0, upd_gone = 0, bad = 0;
        char del_ids[64][WF_URL_MAX], upd_ids[64][WF_URL_MAX], upd_at[64][40];
        /* everything built first (as --presign does), served after */
        for (uint64_t s = 0; s < 600; s++) {
            struct workload_item it;
            if (workload_build_at(w, s, start + (time_t)(s / 20), &it, &err) < 0) {
                bad++;
                continue;
            }
            json_t *j = parse(it.body);
            const json_t *obj = json_object_get(j, "object");
            if (it.op == OP_DELETE && deletes < 64)
                snprintf(del_ids[deletes++], WF_URL_MAX, "%s", jstr(obj, "id"));
            if (it.op == OP_UPDATE && updates < 64) {
                snprintf(upd_ids[updates], WF_URL_MAX, "%s", jstr(obj, "id"));
                snprintf(upd_at[updates++], 40, "%s", jstr(obj, "updated"));
            }
            json_decref(j);
            workload_item_free(&it);
        }
        for (int i = 0; i < deletes; i++) {
            struct wf_doc d;
            gone += hook_get(w, &c, del_ids[i], &d) == 410;
            wf_doc_free(&d);
        }
        for (int i = 0; i < updates; i++) {
            struct wf_doc d;
            int st = hook_get(w, &c, upd_ids[i], &d);
            json_t *n = parse(d.body);
            /* an edit counts when the note shows that Update's (or a later one's) time */
            edited +=
                st == 200 && strcmp(jstr(n, "updated"), upd_at[i]) >= 0 && jstr(n, "updated")[0];
            upd_gone += st == 410; /* edited, then deleted */
            json_decref(n);
            wf_doc_free(&d);
        }
        CHECK(bad == 0 && deletes > 5 && updates > 5, "600 built: %d deletes, %d updates", deletes,
              updates);
        if (future) {
            CHECK(gone == 0, "Deletes an hour ahead: their notes still served 200 (%d 410)", gone);
            CHECK(edited == 0 && upd_gone == 0,
                  "Updates an hour ahead: their notes served unedited (%d edited, %d 410)", edited,
                  upd_gone);
        } else {
            CHECK(gone == deletes, "Deletes sent an hour ago: their notes 410 (%d of %d)", gone,
                  deletes);
            CHECK(edited + upd_gone == updates && edited > 0,
                  "Updates sent an hour ago: their notes edited, or 410 when deleted since (%d "
                  "and %d of %d)",
                  edited, upd_gone, updates);
        }
        /* the outbox lists a Create only from its intended second on */
        char url[WF_URL_MAX];
        wf_actor_url(&c.wf, 1, 1, url);
        snprintf(url + strlen(url), sizeof(url) - strlen(url), "/outbox");
        struct wf_doc d;
        int st = hook_get(w, &c, url, &d);
        json_t *box = parse(d.body);
        size_t listed = json_array_size(json_object_get(box, "orderedItems"));
        CHECK(st == 200 && (future ? listed == 0 : listed > 0), "%s: the outbox lists %zu Creates",
              future ? "ahead" : "sent", listed);
        json_decref(box);
        wf_doc_free(&d);
        workload_free(w);
    }
}

/* update-actor with rotation, every one built before any is served: at each one's intended
 * time the actor is served at its revision and key, a nanosecond before at the one before
 * (several pending for one actor, as a presigned window holds). */
static void actors_by_time(void)
{
    char dir[] = "/tmp/flood-test-presign-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "temporary state folder");
        return;
    }
    struct crowd_opts co;
    crowd_opts_defaults(&co);
    co.instances = 1;
    co.actors = 2;
    co.state = dir;
    co.key_type = SIGN_KEY_ED25519;
    co.key_pool = 2;
    co.quiet = 1;
    struct flood_err err = {0};
    struct crowd *c = crowd_new(&co, &err);
    CHECK(c != NULL, "a crowd of 2 actors (%s)", err.msg);
    if (!c)
        return;
    struct workload_opts o = {.seed = 5, .rotate_pct = 100};
    o.mix[OP_UPDATE_ACTOR] = 1;
    /* an hour ahead: a revision is kept with its time only until that time has come */
    time_t start = time(NULL) + 3600;
    struct workload *w = workload_new_at(c, &o, personas, 2, start, &err);
    CHECK(w != NULL, "workload of update-actor (%s)", err.msg);
    enum { N = 16 };
    int64_t t0 = (int64_t)start * 1000000000;
    uint32_t rev[N], rot[N], prev_rev[N], prev_rot[N];
    int inst[N], act[N], built = 0;
    uint32_t last_rev[3] = {0}, last_rot[3] = {0};
    for (uint64_t s = 0; w && s < N; s++) {
        struct workload_item it;
        if (workload_build_at_ns(w, s, t0 + (int64_t)s * 1000000000, &it, &err) < 0)
            break;
        inst[s] = it.instance;
        act[s] = it.actor;
        prev_rev[s] = last_rev[it.actor];
        prev_rot[s] = last_rot[it.actor];
        rev[s] = workload_actor_state(w, it.instance, it.actor, INT64_MAX, &rot[s], NULL);
        last_rev[it.actor] = rev[s];
        last_rot[it.actor] = rot[s];
        workload_item_free(&it);
        built++;
    }
    int at_ok = 0, before_ok = 0;
    for (int s = 0; s < built; s++) {
        uint32_t r1, r0;
        uint32_t v1 =
            workload_actor_state(w, inst[s], act[s], t0 + (int64_t)s * 1000000000, &r1, NULL);
        uint32_t v0 =
            workload_actor_state(w, inst[s], act[s], t0 + (int64_t)s * 1000000000 - 1, &r0, NULL);
        at_ok += v1 == rev[s] && r1 == rot[s];
        before_ok += v0 == prev_rev[s] && r0 == prev_rot[s];
    }
    CHECK(built == N, "%d update-actors of 2 actors built ahead", built);
    CHECK(at_ok == N, "each revision and key served from its own time (%d of %d)", at_ok, N);
    CHECK(before_ok == N, "and the one before it until then, not the latest built (%d of %d)",
          before_ok, N);
    workload_free(w);
    crowd_free(c);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", dir);
}

int main(void)
{
    parse_cases();
    plan_cases();
    notes_by_time();
    actors_by_time();
    return check_done();
}
