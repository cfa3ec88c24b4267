/* Unit tests of flood/workload's kept mix and follow state: each kind at its asked share
 * within 1 point over 2,000 seeded activities, updates and deletes by actors with a post,
 * the same sequence from shards, the kinds refused before a run, the follow state across
 * runs (a Follow by an actor that does not follow yet, refollows when every actor follows,
 * --refollow undo-first embedding an earlier run's Follow) and its file's merge rule. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flood/core/fsutil.h"
#include "flood/crowd/sizes.h"
#include "flood/send/workload.h"
#include "tests/check.h"
#include "webfinger/activity.h"
#include "webfinger/content.h"

static struct crowd crowd_of(int instances, int actors)
{
    struct crowd c;
    memset(&c, 0, sizeof(c));
    c.opts.instances = instances;
    c.opts.actors = actors;
    c.wf.instances = instances;
    c.wf.actors = actors;
    c.wf.domain_template = "flood%d.test";
    c.wf.scheme = "https";
    c.wf.version = "0";
    return c;
}

static char *posts_a[] = {"https://target.test/users/alice/statuses/1",
                          "https://target.test/users/alice/statuses/2"};
static struct persona personas[2] = {
    {"acct:alice@target.test", "https://target.test/users/alice",
     "https://target.test/users/alice/inbox", "https://target.test/inbox", posts_a, 2},
    {NULL, "https://target.test/users/bob", "https://target.test/users/bob/inbox", NULL, NULL, 0},
};

static json_t *parse(const char *s)
{
    json_error_t e;
    return s ? json_loads(s, 0, &e) : NULL;
}

static const char *jstr(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* Build n activities; count by kind into ops; every update/delete names one of its own
 * sender's notes (bad counts those that do not). -1 on a build error. */
static int run_n(struct workload *w, uint64_t n, unsigned per_s, unsigned ops[OP__COUNT], int *bad)
{
    struct flood_err err = {0};
    for (uint64_t s = 0; s < n; s++) {
        struct workload_item it;
        if (workload_build_at(w, s, 1764493200 + (time_t)(s / per_s), &it, &err) < 0) {
            printf("# %s\n", err.msg);
            return -1;
        }
        ops[it.op]++;
        if (it.op == OP_UPDATE || it.op == OP_DELETE) {
            json_t *j = parse(it.body);
            const char *actor = jstr(j, "actor");
            const char *note = jstr(json_object_get(j, "object"), "id");
            size_t al = strlen(actor);
            /* the note's id is under its author's actor id: .../users/NAME/notes/ID */
            if (!al || strncmp(note, actor, al) || strncmp(note + al, "/notes/", 7))
                (*bad)++;
            json_decref(j);
        }
        workload_item_free(&it);
    }
    return 0;
}

/* Each kind's share within 1 point of its weight's. */
static void shares_within(const char *what, const unsigned mix[OP__COUNT],
                          const unsigned ops[OP__COUNT], uint64_t n)
{
    unsigned total = 0;
    for (int i = 0; i < OP__COUNT; i++)
        total += mix[i];
    double worst = 0;
    int worst_op = 0;
    for (int i = 0; i < OP__COUNT; i++) {
        double d = fabs(100.0 * ops[i] / (double)n - 100.0 * mix[i] / total);
        if (d > worst) {
            worst = d;
            worst_op = i;
        }
    }
    CHECK(worst <= 1.0, "%s: every kind within 1 point of its asked share (worst %s %.2f)", what,
          op_name((enum op_kind)worst_op), worst);
}

static void mix_kept(void)
{
    struct crowd c = crowd_of(20, 10);
    enum { N = 2000 };
    /* the runs: create=50,delete=50 and a 150-activity run that sent no Delete */
    /* create=50,delete=50: a Delete names a post sent 5 s before or earlier, so the last 5 s
     * of Creates stay (at 5/s, 12 of 2,000): within 1 point still */
    static const struct {
        const char *mix;
        uint64_t seed;
        unsigned per_s;
    } runs[] = {
        {"create=50,delete=50", 3, 5},
        {"create=35,like=10,follow=10,announce=10,reply=10,update=10,delete=5,question=5,"
         "vote=5",
         11, 100},
        {"create=40,update=30,delete=30", 5, 100},
        {"create=40,follow=20,undo=10,refollow=10,delete=20", 9, 100},
    };
    for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
        struct workload_opts o = {.seed = runs[r].seed, .unseen_pct = 50};
        struct flood_err err = {0};
        CHECK(workload_parse_mix(runs[r].mix, o.mix, &err) == 0, "--mix %s parses", runs[r].mix);
        struct workload *w = workload_new_at(&c, &o, personas, 2, 1764493200, &err);
        CHECK(w != NULL, "workload for %s (%s)", runs[r].mix, err.msg);
        if (!w)
            continue;
        unsigned ops[OP__COUNT] = {0};
        int bad = 0;
        CHECK(run_n(w, N, runs[r].per_s, ops, &bad) == 0, "%d activities built", N);
        shares_within(runs[r].mix, o.mix, ops, N);
        CHECK(bad == 0, "every update and delete names a note of its own sender (%d do not)", bad);
        if (r == 0) {
            /* the first 1,000 activities of a feasible delete-heavy mix, at 50/s: at the
             * shares although the first 5 s (250 activities) have no post old enough */
            struct workload_opts o2 = {.seed = 3};
            CHECK(workload_parse_mix("create=60,delete=40", o2.mix, &err) == 0, "parsed");
            struct workload *w2 = workload_new_at(&c, &o2, personas, 2, 1764493200, &err);
            unsigned ops2[OP__COUNT] = {0};
            int bad2 = 0;
            CHECK(w2 && run_n(w2, 1000, 50, ops2, &bad2) == 0 && bad2 == 0, "1,000 built");
            shares_within("the first 1,000 of create=60,delete=40", o2.mix, ops2, 1000);
            workload_free(w2);
        }
        json_t *m = workload_mix_json(w);
        json_t *k = json_object_get(json_object_get(m, "kinds"), "delete");
        CHECK(k && json_integer_value(json_object_get(k, "sent")) == ops[OP_DELETE] &&
                  json_real_value(json_object_get(k, "asked_pct")) > 0,
              "workload_mix_json: delete asked %.2f%%, sent %" JSON_INTEGER_FORMAT,
              json_real_value(json_object_get(k, "asked_pct")),
              json_integer_value(json_object_get(k, "sent")));
        json_t *sub = json_object_get(m, "substituted");
        CHECK(json_array_size(sub) <= 2, "at most a few kinds still substituted (%zu)",
              json_array_size(sub));
        json_decref(m);
        workload_free(w);
    }
}

/* --population sizes=zipf:1.1: 200 actors on 20 instances, the biggest 57 (the grid 20 x
 * 57): each kind still within 1 point over 2,000, every sender one of its instance's live
 * actors, and the busiest tenth of the actors sending most. */
static void mix_kept_skewed(void)
{
    static const char *const mixes[] = {
        "create=50,delete=50",
        "create=35,like=10,follow=10,announce=10,reply=10,update=10,delete=5,question=5,vote=5",
        "create=40,follow=20,undo=10,refollow=10,delete=20",
    };
    for (size_t r = 0; r < sizeof(mixes) / sizeof(mixes[0]); r++) {
        struct sizes sz = {.size_s = 1.1};
        struct flood_err err = {0};
        if (sizes_layout(&sz, 20, 10, 7, &err))
            return;
        struct crowd c = crowd_of(20, sz.width);
        struct workload_opts o = {.seed = 3 + r, .unseen_pct = 50, .sizes = &sz};
        CHECK(workload_parse_mix(mixes[r], o.mix, &err) == 0, "--mix %s parses", mixes[r]);
        struct workload *w = workload_new_at(&c, &o, personas, 2, 1764493200, &err);
        CHECK(w != NULL, "a skewed crowd's workload (%s)", err.msg);
        if (!w)
            continue;
        unsigned ops[OP__COUNT] = {0};
        int dead = 0;
        for (uint64_t n = 0; n < 2000; n++) {
            struct workload_item it;
            if (workload_build_at(w, n, 1764493200 + (time_t)(n / 5), &it, &err) < 0)
                break;
            ops[it.op]++;
            json_t *j = parse(it.body);
            int i = 0, a = 0;
            if (sscanf(jstr(j, "actor"), "https://flood%d.test/users/user%d", &i, &a) != 2 ||
                !sizes_live(&sz, i, a))
                dead++;
            json_decref(j);
            workload_item_free(&it);
        }
        shares_within(mixes[r], o.mix, ops, 2000);
        CHECK(dead == 0, "skewed: every sender a live actor of its instance (%d not)", dead);
        json_t *sj = sizes_json(&sz);
        CHECK(json_real_value(json_object_get(sj, "top10_drawn_share")) > 0.5,
              "skewed: the top tenth of the actors drew %.2f of the activity",
              json_real_value(json_object_get(sj, "top10_drawn_share")));
        json_decref(sj);
        workload_free(w);
        sizes_clear(&sz);
    }
}

/* Shards (each builds n mod N == K and walks the rest) send the unsharded run's activities. */
static void shards_same(void)
{
    struct crowd c = crowd_of(20, 10);
    struct workload_opts o = {.seed = 77, .unseen_pct = 50};
    struct flood_err err = {0};
    CHECK(workload_parse_mix("create=30,update=20,delete=20,follow=15,undo=5,refollow=10", o.mix,
                             &err) == 0,
          "a mix of every state-bearing kind");
    enum { N = 2000, SHARDS = 3 };
    struct workload *one = workload_new_at(&c, &o, personas, 2, 1764493200, &err);
    struct workload *sh[SHARDS];
    for (int k = 0; k < SHARDS; k++)
        sh[k] = workload_new_at(&c, &o, personas, 2, 1764493200, &err);
    int same = 1;
    unsigned ops[OP__COUNT] = {0};
    for (uint64_t s = 0; s < N && same; s++) {
        struct workload_item a, b;
        time_t t = 1764493200 + (time_t)(s / 100);
        if (workload_build_at(one, s, t, &a, &err)) {
            same = 0;
            break;
        }
        ops[a.op]++;
        for (int k = 0; k < SHARDS; k++) {
            if ((int)(s % SHARDS) != k) {
                if (workload_skip_at(sh[k], s, t, &err))
                    same = 0;
                continue;
            }
            if (workload_build_at(sh[k], s, t, &b, &err) || b.op != a.op ||
                b.instance != a.instance || b.actor != a.actor || strcmp(a.body, b.body))
                same = 0;
            else
                workload_item_free(&b);
        }
        workload_item_free(&a);
    }
    CHECK(same, "3 shards build the unsharded run's %d activities byte for byte", N);
    shares_within("the sharded mix", o.mix, ops, N);
    uint64_t by[SHARDS][OP__COUNT], sum = 0;
    for (int k = 0; k < SHARDS; k++)
        sum += workload_built(sh[k], by[k]);
    CHECK(sum == N, "the shards' parts add up to the run (%" PRIu64 ")", sum);
    workload_free(one);
    for (int k = 0; k < SHARDS; k++)
        workload_free(sh[k]);
}

/* More Deletes asked than Creates: said before the run, and the shortfall counted. */
static void infeasible(void)
{
    struct crowd c = crowd_of(20, 10);
    struct workload_opts o = {.seed = 5};
    struct flood_err err = {0};
    CHECK(workload_parse_mix("create=20,update=40,delete=40", o.mix, &err) == 0, "parsed");
    struct workload *w = workload_new_at(&c, &o, personas, 2, 1764493200, &err);
    char note[1024] = "";
    if (w)
        workload_notes(w, note, sizeof(note));
    CHECK(w && strstr(note, "delete=40") && strstr(note, "create=20"),
          "more Deletes than Creates asked: said before the run: %s", note);
    unsigned ops[OP__COUNT] = {0};
    int bad = 0;
    CHECK(w && run_n(w, 2000, 100, ops, &bad) == 0 && bad == 0, "2000 built");
    json_t *m = w ? workload_mix_json(w) : NULL;
    json_t *subs = json_object_get(m, "substituted");
    json_int_t as_create = 0;
    int delete_why = 0;
    for (size_t i = 0; i < json_array_size(subs); i++) {
        json_t *sub = json_array_get(subs, i);
        if (!strcmp(jstr(sub, "sent_as"), "create"))
            as_create += json_integer_value(json_object_get(sub, "count"));
        delete_why |= !strcmp(jstr(sub, "asked"), "delete") && strstr(jstr(sub, "why"), "post");
    }
    json_int_t drawn = json_integer_value(
        json_object_get(json_object_get(json_object_get(m, "kinds"), "create"), "drawn"));
    CHECK(delete_why && drawn >= 395 && drawn <= 405 &&
              as_create == (json_int_t)ops[OP_CREATE] - drawn,
          "every Create past the %" JSON_INTEGER_FORMAT " drawn is counted as a substitution, "
          "with why (%" JSON_INTEGER_FORMAT " of %u)",
          drawn, as_create, ops[OP_CREATE]);
    json_decref(m);
    workload_free(w);
}

static void refusals(void)
{
    struct crowd one = crowd_of(1, 1);
    struct flood_err err = {0};
    struct workload_opts o = {.seed = 1};
    o.mix[OP_VOTE] = 1;
    CHECK(workload_new_at(&one, &o, personas, 2, 1, &err) == NULL && strstr(err.msg, "vote=1"),
          "vote with one crowd actor is refused before the run: %s", err.msg);
    o.mix[OP_VOTE] = 0;
    o.mix[OP_ANNOUNCE] = 1;
    CHECK(workload_new_at(&one, &o, personas + 1, 1, 1, &err) == NULL &&
              strstr(err.msg, "nothing to point at"),
          "announce with no post and one actor is refused: %s", err.msg);
    struct workload *w = workload_new_at(&one, &o, personas, 1, 1, &err);
    CHECK(w != NULL, "... and allowed when the persona has posts");
    workload_free(w);
    o.mix[OP_ANNOUNCE] = 0;
    o.mix[OP_DELETE_ACTOR] = 1;
    CHECK(workload_new_at(&one, &o, personas, 1, 1, &err) == NULL &&
              strstr(err.msg, "delete-actor"),
          "delete-actor with one actor is refused: %s", err.msg);
}

/* Run a follow-only workload over the state in dir: n activities, types into types[]. */
static struct workload *state_run(struct crowd *c, const char *dir, int refollow, time_t start,
                                  uint64_t n, char types[][16], char ids[][WF_URL_MAX])
{
    struct workload_opts o = {.seed = 5, .state_dir = dir, .refollow = refollow};
    o.mix[OP_FOLLOW] = 1;
    struct flood_err err = {0};
    struct workload *w = workload_new_at(c, &o, personas, 1, start, &err);
    if (!w) {
        printf("# %s\n", err.msg);
        return NULL;
    }
    for (uint64_t s = 0; s < n; s++) {
        struct workload_item it;
        if (workload_build_at(w, s, start, &it, &err) < 0)
            break;
        json_t *j = parse(it.body);
        snprintf(types[s], 16, "%s", op_name(it.op));
        const json_t *obj = json_object_get(j, "object");
        snprintf(ids[s], WF_URL_MAX, "%s", json_is_object(obj) ? jstr(obj, "id") : jstr(j, "id"));
        json_decref(j);
        workload_item_free(&it);
    }
    return w;
}

static void follow_state(void)
{
    char dir[] = "/tmp/flood-test-follows-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "a temporary state folder");
    struct crowd c = crowd_of(3, 3); /* 9 actors */
    char types[32][16], ids[32][WF_URL_MAX], first[32][WF_URL_MAX], second[32][WF_URL_MAX];
    struct flood_err err = {0};

    /* run 1: four Follows, kept */
    struct workload *w = state_run(&c, dir, WORKLOAD_REFOLLOW_REPEAT, 2000000, 4, types, first);
    CHECK(w && workload_state_write(w, &err) == 0, "run 1 writes its follow state (%s)", err.msg);
    workload_free(w);

    /* run 2: the five actors that do not follow yet, then refollows */
    w = state_run(&c, dir, WORKLOAD_REFOLLOW_REPEAT, 2000100, 8, types, ids);
    memcpy(second, ids, sizeof(second));
    int ok = w != NULL;
    for (int s = 0; ok && s < 8; s++)
        ok = !strcmp(types[s], s < 5 ? "follow" : "refollow");
    CHECK(ok, "run 2: 5 Follows by the actors not following yet, then refollows");
    char note[1024];
    if (w)
        workload_notes(w, note, sizeof(note));
    CHECK(w && strstr(note, "every crowd actor (9) already follows"),
          "after its 5 Follows every actor follows, and workload_notes says so");
    json_t *m = w ? workload_mix_json(w) : NULL;
    json_t *rf = json_object_get(m, "refollows");
    CHECK(json_integer_value(json_object_get(rf, "sent")) == 3 &&
              json_integer_value(
                  json_object_get(json_object_get(m, "follow_state"), "followed_at_start")) == 4,
          "run.json's mix: 3 refollows, 4 followed at the start");
    /* a refollow's answer is counted apart, once */
    CHECK(w && workload_refollow_answer(w, ids[6], 1) == 1 &&
              workload_refollow_answer(w, ids[6], 0) == 1 &&
              workload_refollow_answer(w, ids[0], 1) == 0 && workload_follow_seq(w, ids[6]) == -1,
          "a refollow's Accept is recorded (the second answer ignored); a first Follow is not one");
    json_decref(m);
    m = w ? workload_mix_json(w) : NULL;
    rf = json_object_get(m, "refollows");
    CHECK(json_integer_value(json_object_get(rf, "accepted")) == 1 &&
              json_integer_value(json_object_get(rf, "unanswered")) == 2,
          "1 refollow accepted, 2 unanswered");
    json_decref(m);
    CHECK(w && workload_state_write(w, &err) == 0, "run 2 writes its follow state");
    workload_free(w);

    /* run 3: every actor follows: said before the run; undo-first sends an Undo of a Follow
     * run 1 sent, embedded with its id as sent */
    struct workload_opts o = {.seed = 5, .state_dir = dir};
    o.mix[OP_FOLLOW] = 1;
    w = workload_new_at(&c, &o, personas, 1, 2000200, &err);
    if (w)
        workload_notes(w, note, sizeof(note));
    CHECK(w &&
              strstr(note, "every crowd actor (9) already follows https://target.test/users/alice"),
          "every actor follows: said before the run: %s", w ? note : err.msg);
    workload_free(w);
    w = state_run(&c, dir, WORKLOAD_REFOLLOW_UNDO_FIRST, 2000200, 4, types, ids);
    int earlier = 0;
    for (int k = 0; k < 8; k++)
        earlier |= (k < 4 && !strcmp(ids[0], first[k])) || !strcmp(ids[0], second[k]);
    CHECK(w && !strcmp(types[0], "undo") && !strcmp(types[1], "follow") && earlier,
          "undo-first: an Undo embedding the Follow an earlier run sent last for the pair (%s), "
          "then the Follow",
          ids[0]);
    workload_free(w);

    /* --refollow alternate over a state of its own: run A follows with all 9 actors, then
     * has nothing an earlier run followed to undo (never an Undo racing its own run's Follow):
     * Creates, counted; run B undoes run A's follows; run C follows with the pairs B undid,
     * the second draw undoing the last of A's follows */
    char dir2[] = "/tmp/flood-test-follows-XXXXXX";
    CHECK(mkdtemp(dir2) != NULL, "another temporary state folder");
    static const struct {
        time_t start;
        uint64_t n;
        const char *want; /* f follow, u undo, c create */
    } alt[] = {
        {3000000, 14, "fffffffffccccc"}, {3000100, 8, "uuuuuuuu"}, {3000200, 10, "fufffffffc"}};
    for (int r = 0; r < 3; r++) {
        w = state_run(&c, dir2, WORKLOAD_REFOLLOW_ALTERNATE, alt[r].start, alt[r].n, types, ids);
        char got[16] = "";
        for (uint64_t k = 0; w && k < alt[r].n; k++)
            got[k] = types[k][0];
        CHECK_STR(got, alt[r].want, "alternate, run %c: %s", 'A' + r,
                  r == 0   ? "9 Follows, then Creates (nothing of an earlier run to undo)"
                  : r == 1 ? "every draw an Undo of run A's follows"
                           : "the 8 pairs run B undid follow again, every second draw an "
                             "Undo while run A's follows stand");
        if (r == 1) {
            m = w ? workload_mix_json(w) : NULL;
            CHECK(json_integer_value(json_object_get(
                      json_object_get(json_object_get(m, "kinds"), "undo"), "sent")) == 8,
                  "run B's mix: 8 Undos sent for 8 Follows asked");
            json_decref(m);
        }
        CHECK(w && workload_state_write(w, &err) == 0, "run %c writes its follow state", 'A' + r);
        workload_free(w);
    }
    snprintf(note, sizeof(note), "rm -rf %s", dir2);
    CHECK(system(note) == 0, "the second state folder removed");

    /* a malformed state file is refused, naming its line */
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "f=$(ls %s/follows/*.tsv | head -1) && printf 'x\\ty\\n' >>\"$f\"",
             dir);
    CHECK(system(cmd) == 0, "a line appended to the state file");
    struct workload *bad = workload_new_at(&c, &o, personas, 1, 2000300, &err);
    CHECK(bad == NULL && strstr(err.msg, "follow state") && strstr(err.msg, ":"),
          "a bad state line is refused: %s", err.msg);
    workload_free(bad);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    CHECK(system(cmd) == 0, "the state folder removed");
}

int main(void)
{
    mix_kept();
    mix_kept_skewed();
    shards_same();
    infeasible();
    refusals();
    follow_state();
    return check_done();
}
