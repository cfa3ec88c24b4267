/* Unit tests of flood/workload's actors: Update(Person) served from its send time, with
 * and without key rotation (a real crowd's key pool), and Delete(Person): an actor served
 * before its Delete's time and gone after it. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flood/send/workload.h"
#include "tests/check.h"
#include "tests/unit/workload_fixture.h"
#include "webfinger/content.h"
#include "webfinger/activity.h"

/* GET url through the actor hook (actor and key documents). */
static int actor_get(struct workload *w, struct crowd *c, const char *url, struct wf_doc *out)
{
    const char *host = strstr(url, "://") + 3;
    size_t hl = strcspn(host, "/#");
    char h[256], path[512];
    snprintf(h, sizeof(h), "%.*s", (int)hl, host);
    snprintf(path, sizeof(path), "%.*s", (int)strcspn(host + hl, "#"), host + hl);
    struct server_req req;
    memset(&req, 0, sizeof(req));
    req.method = "GET";
    req.host = h;
    req.path = path;
    memset(out, 0, sizeof(*out));
    if (wf_route(&c->wf, h, req.path, &req.route) != 0)
        return -1;
    return workload_actor_hook(w, &req, out);
}

/* Update(Person) served and key rotation: a real crowd (Ed25519 keys, a pool of 4, in a
 * temporary state folder); every update-actor rotates; the Update embeds the new key, the
 * actor served after its send time shows it (before it, the old one: test_presign.c, whose
 * times are ahead of the clock, as only those are kept), the key document too, and the item
 * carries the new key for the signer. Its twin: without rotation the key stays the actor's
 * own and the hook still serves the revised name. */
static void actor_revisions(void)
{
    char dir[] = "/tmp/flood-test-workload-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "temporary state folder");
        return;
    }
    struct crowd_opts co;
    crowd_opts_defaults(&co);
    co.instances = 2;
    co.actors = 3;
    co.state = dir;
    co.key_type = SIGN_KEY_ED25519;
    co.key_pool = 4;
    co.quiet = 1;
    struct flood_err err = {0};
    struct crowd *c = crowd_new(&co, &err);
    CHECK(c != NULL, "a crowd with a pool of 4 Ed25519 keys (%s)", err.msg);
    if (!c)
        return;
    for (int rotate = 100; rotate >= 0; rotate -= 100) {
        struct workload_opts o = {.seed = 3, .rotate_pct = (unsigned)rotate};
        o.mix[OP_UPDATE_ACTOR] = 1;
        struct workload *w = workload_new_at(c, &o, personas, 2, 1764493200, &err);
        CHECK(w != NULL, "workload of update-actor (%s)", err.msg);
        if (!w)
            break;
        int64_t t0 = (int64_t)1764493200 * 1000000000;
        int ok_embed = 0, ok_served = 0, ok_key = 0, ok_item = 0, n = 0;
        const struct sign_key *last[6] = {0}; /* each actor's key before */
        for (uint64_t s = 0; s < 12; s++) {
            struct workload_item it;
            if (workload_build_at_ns(w, s, t0 + (int64_t)s * 1000000000, &it, &err) < 0) {
                printf("# %s\n", err.msg);
                continue;
            }
            n++;
            const struct sign_key *want =
                rotate ? it.key : crowd_key(c, it.instance, it.actor); /* never rotated */
            struct flood_err e2 = {0};
            char *pem = sign_key_public_pem(want, &e2);
            json_t *j = parse(it.body);
            const json_t *pk = json_object_get(json_object_get(j, "object"), "publicKey");
            ok_embed += pem && !strcmp(jstr(pk, "publicKeyPem"), pem);
            size_t fi = (size_t)((it.instance - 1) * 3 + it.actor - 1);
            if (!last[fi])
                last[fi] = crowd_key(c, it.instance, it.actor);
            ok_item += rotate ? it.key != last[fi] : it.key == last[fi];
            last[fi] = it.key;
            char url[WF_URL_MAX];
            wf_actor_url(&c->wf, it.instance, it.actor, url);
            /* the hook serves at the wall clock: long after 2025-11-30 */
            struct wf_doc d;
            int st = actor_get(w, c, url, &d);
            json_t *a = parse(d.body);
            const json_t *apk = json_object_get(a, "publicKey");
            ok_served += st == 200 && pem && !strcmp(jstr(apk, "publicKeyPem"), pem) &&
                         strstr(jstr(a, "name"), "(rev ") && jstr(a, "updated")[0];
            json_decref(a);
            wf_doc_free(&d);
            snprintf(url + strlen(url), sizeof(url) - strlen(url), "/main-key");
            st = actor_get(w, c, url, &d);
            a = parse(d.body);
            ok_key += rotate ? st == 200 && pem && !strcmp(jstr(a, "publicKeyPem"), pem) : st == 0;
            json_decref(a);
            wf_doc_free(&d);
            free(pem);
            json_decref(j);
            workload_item_free(&it);
        }
        CHECK(n == 12 && ok_embed == n && ok_item == n,
              "rotate %d%%: each Update(Person) embeds the key its item signs with, %s (%d, %d of "
              "%d)",
              rotate, rotate ? "a new one" : "the actor's own", ok_embed, ok_item, n);
        CHECK(ok_served == n, "rotate %d%%: the actor is served revised with that key (%d of %d)",
              rotate, ok_served, n);
        CHECK(ok_key == n, "rotate %d%%: the key document %s (%d of %d)", rotate,
              rotate ? "shows the rotated key" : "is left to the crowd", ok_key, n);
        workload_free(w);
    }
    crowd_free(c);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", dir);
}

/* delete-actor: each crowd actor deleted at most once and never the last one standing; the
 * Delete's object is its actor; no later activity is sent by a deleted actor (nor an Undo of
 * its Follows); from the Delete's intended time on the actor answers 410 (its key document
 * still served, its notes 410), before it the crowd's 200. */
static void delete_actors(void)
{
    struct crowd c = crowd_of(2, 5, "https");
    struct workload_opts o = {.seed = 11};
    o.mix[OP_CREATE] = 3;
    o.mix[OP_FOLLOW] = 2;
    o.mix[OP_UNDO] = 1;
    o.mix[OP_DELETE_ACTOR] = 1;
    struct flood_err err = {0};
    struct workload *w = workload_new_at(&c, &o, personas, 2, 1764493200, &err);
    CHECK(w != NULL, "workload with delete-actor (%s)", err.msg);
    if (!w)
        return;
    int64_t t0 = (int64_t)1764493200 * 1000000000; /* long past: the hook sees every Delete */
    int deleted[11] = {0}, twice = 0, late = 0, body_ok = 0, n_del = 0, time_ok = 0, built = 0;
    uint64_t create_of[11] = {0};
    int has_create[11] = {0};
    for (uint64_t s = 0; s < 400; s++) {
        struct workload_item it;
        int64_t when = t0 + (int64_t)s * 1000000;
        if (workload_build_at_ns(w, s, when, &it, &err) < 0) {
            printf("# %s\n", err.msg);
            continue;
        }
        built++;
        int f = (it.instance - 1) * 5 + it.actor;
        late += deleted[f];
        if (it.op == OP_CREATE && !has_create[f]) {
            has_create[f] = 1;
            create_of[f] = workload_id_seq(w, s);
        }
        if (it.op == OP_DELETE_ACTOR) {
            n_del++;
            twice += deleted[f];
            deleted[f] = 1;
            char url[WF_URL_MAX];
            wf_actor_url(&c.wf, it.instance, it.actor, url);
            json_t *j = parse(it.body);
            body_ok += !strcmp(jstr(j, "type"), "Delete") && !strcmp(jstr(j, "actor"), url) &&
                       !strcmp(jstr(j, "object"), url);
            json_decref(j);
            time_ok += !workload_actor_gone(w, it.instance, it.actor, when - 1) &&
                       workload_actor_gone(w, it.instance, it.actor, when);
        }
        workload_item_free(&it);
    }
    CHECK(built == 400, "400 activities built (%d)", built);
    CHECK(n_del == 9 && twice == 0, "9 of 10 actors deleted, each once (%d, %d twice)", n_del,
          twice);
    CHECK(late == 0, "no activity sent by an actor after its Delete (%d)", late);
    CHECK(body_ok == n_del, "Delete(Person): object the actor itself (%d of %d)", body_ok, n_del);
    CHECK(time_ok == n_del, "deleted from the Delete's intended time on (%d of %d)", time_ok,
          n_del);
    int gone_ok = 0, key_ok = 0, note_ok = 0, notes = 0, live_ok = 0;
    for (int f = 1; f <= 10; f++) {
        int inst = (f - 1) / 5 + 1, act = (f - 1) % 5 + 1;
        char url[WF_URL_MAX];
        wf_actor_url(&c.wf, inst, act, url);
        struct wf_doc d;
        int st = actor_get(w, &c, url, &d);
        wf_doc_free(&d);
        if (!deleted[f]) {
            live_ok += st == 0; /* left to the crowd: its 200 */
            continue;
        }
        gone_ok += st == 410;
        snprintf(url + strlen(url), sizeof(url) - strlen(url), "/main-key");
        st = actor_get(w, &c, url, &d);
        key_ok += st != 410;
        wf_doc_free(&d);
        if (has_create[f]) {
            notes++;
            wf_note_url(&c.wf, inst, act, create_of[f], url);
            note_ok += hook_get(w, &c, url, &d) == 410;
            wf_doc_free(&d);
        }
    }
    CHECK(gone_ok == 9 && live_ok == 1, "deleted actors answer 410, the one standing 200 (%d, %d)",
          gone_ok, live_ok);
    CHECK(key_ok == 9, "their key documents still served (%d of 9)", key_ok);
    CHECK(note_ok == notes, "their notes answer 410 (%d of %d)", note_ok, notes);
    workload_free(w);

    /* a Delete intended in the future: the actor is served until then */
    w = workload_new_at(&c, &o, personas, 2, time(NULL), &err);
    CHECK(w != NULL, "second workload (%s)", err.msg);
    if (!w)
        return;
    int64_t later = ((int64_t)time(NULL) + 3600) * 1000000000;
    int before_ok = 0, n = 0;
    for (uint64_t s = 0; s < 60; s++) {
        struct workload_item it;
        if (workload_build_at_ns(w, s, later + (int64_t)s, &it, &err) < 0)
            continue;
        if (it.op == OP_DELETE_ACTOR) {
            n++;
            char url[WF_URL_MAX];
            wf_actor_url(&c.wf, it.instance, it.actor, url);
            struct wf_doc d;
            before_ok += actor_get(w, &c, url, &d) == 0;
            wf_doc_free(&d);
        }
        workload_item_free(&it);
    }
    CHECK(n > 0 && before_ok == n, "before its Delete's time an actor is served (%d of %d)",
          before_ok, n);
    workload_free(w);
}

int main(void)
{
    delete_actors();
    actor_revisions();
    return check_done();
}
