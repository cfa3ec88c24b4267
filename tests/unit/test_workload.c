/* Unit tests of flood/workload: the mix proportions over 100k activities, determinism for
 * a seed, the Follow/Undo pairing, the object hook rebuilding exactly what was sent, its
 * 404s, outboxes, the placeholder persona of --inbox, and the refusals of workload_new. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flood/send/workload.h"
#include "tests/check.h"
#include "webfinger/content.h"
#include "webfinger/activity.h"

static struct crowd crowd_of(int instances, int actors, const char *scheme)
{
    struct crowd c;
    memset(&c, 0, sizeof(c));
    c.opts.instances = instances;
    c.opts.actors = actors;
    c.wf.instances = instances;
    c.wf.actors = actors;
    c.wf.domain_template = "flood%d.test";
    c.wf.scheme = scheme;
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

static int hook_get(struct workload *w, struct crowd *c, const char *url, struct wf_doc *out)
{
    const char *host = strstr(url, "://") + 3;
    size_t hl = strcspn(host, "/");
    char h[256];
    snprintf(h, sizeof(h), "%.*s", (int)hl, host);
    struct server_req req;
    memset(&req, 0, sizeof(req));
    req.method = "GET";
    req.host = h;
    req.path = host + hl;
    memset(out, 0, sizeof(*out));
    if (wf_route(&c->wf, h, req.path, &req.route) != 0)
        return -1;
    return workload_object_hook(w, &req, out);
}

static void mix_and_spread(void)
{
    struct crowd c = crowd_of(20, 10, "https");
    struct workload_opts o = {.seed = 42, .mix = {70, 20, 10, 0}};
    struct flood_err err = {0};
    struct workload *w = workload_new_at(&c, &o, personas, 2, 1764493200, &err);
    CHECK(w != NULL, "workload over 2 personas (%s)", err.msg);
    if (!w)
        return;
    enum { N = 100000 };
    unsigned ops[OP__COUNT] = {0}, inst[21] = {0}, pers[2] = {0};
    int bad = 0, shared = 0;
    for (uint64_t s = 0; s < N; s++) {
        struct workload_item it;
        if (workload_build_at(w, s, 1764493200 + (time_t)(s / 1000), &it, &err) < 0) {
            bad++;
            continue;
        }
        ops[it.op]++;
        inst[it.instance]++;
        pers[it.persona]++;
        if (it.persona == 0 && !strcmp(it.inbox, "https://target.test/inbox"))
            shared++;
        if (it.persona == 1 && strcmp(it.inbox, "https://target.test/users/bob/inbox"))
            bad++;
        workload_item_free(&it);
    }
    CHECK(bad == 0, "100k activities built, each to the right inbox (%d bad)", bad);
    CHECK(shared == (int)pers[0], "alice's activities go to her shared inbox");
    /* binomial standard deviation at N = 1e5 is at most 0.0016: 1% is over 6 sigma */
    double create = ops[OP_CREATE] / (double)N, like = ops[OP_LIKE] / (double)N,
           follow = (ops[OP_FOLLOW] + ops[OP_UNDO]) / (double)N;
    CHECK(fabs(create - 0.70) < 0.01, "create share %.4f within 0.01 of 0.70", create);
    CHECK(fabs(like - 0.20) < 0.01, "like share %.4f within 0.01 of 0.20", like);
    CHECK(fabs(follow - 0.10) < 0.01, "follow+undo share %.4f within 0.01 of 0.10", follow);
    CHECK(ops[OP_UNDO] > 0 && ops[OP_UNDO] < ops[OP_FOLLOW] + 200,
          "repeated follows became undos (%u follow, %u undo)", ops[OP_FOLLOW], ops[OP_UNDO]);
    unsigned lo = N, hi = 0;
    for (int i = 1; i <= 20; i++) {
        lo = inst[i] < lo ? inst[i] : lo;
        hi = inst[i] > hi ? inst[i] : hi;
    }
    CHECK(inst[0] == 0 && lo > 4500 && hi < 5500, "instances uniform: %u..%u of 5000", lo, hi);
    /* likes go to alice (the only persona with posts): bob gets half of the rest */
    double bob = pers[1] / (double)(N - ops[OP_LIKE]);
    CHECK(fabs(bob - 0.5) < 0.02, "personas uniform outside likes (bob %.3f)", bob);
    uint64_t by[OP__COUNT];
    CHECK(workload_built(w, by) == N && by[OP_CREATE] == ops[OP_CREATE], "counters agree");

    /* the same seq twice, and a seq going backwards: refused */
    struct workload_item it;
    CHECK(workload_build_at(w, N - 1, 0, &it, &err) == -1, "a seq built twice is refused (%s)",
          err.msg);
    CHECK(workload_build_at(w, N + 5, 0, &it, &err) == 0, "its twin, a later seq, builds");
    workload_item_free(&it);
    workload_free(w);
}

static void determinism(void)
{
    struct crowd c = crowd_of(20, 10, "https");
    struct workload_opts o = {.seed = 7, .mix = {50, 20, 20, 10}};
    struct flood_err err = {0};
    struct workload *a = workload_new_at(&c, &o, personas, 2, 1000000, &err);
    struct workload *b = workload_new_at(&c, &o, personas, 2, 1000000, &err);
    o.seed = 8;
    struct workload *d = workload_new_at(&c, &o, personas, 2, 1000000, &err);
    o.seed = 7;
    struct workload *e = workload_new_at(&c, &o, personas, 2, 1000001, &err);
    CHECK(a && b && d && e, "four workloads");
    if (!a || !b || !d || !e)
        return;
    int same = 1, differ = 0, ops_same_e = 1, ids_differ_e = 1;
    for (uint64_t s = 0; s < 2000; s++) {
        struct workload_item x, y, z, v;
        if (workload_build_at(a, s, 1000000, &x, &err) ||
            workload_build_at(b, s, 1000000, &y, &err) ||
            workload_build_at(d, s, 1000000, &z, &err) ||
            workload_build_at(e, s, 1000000, &v, &err)) {
            same = 0;
            break;
        }
        if (strcmp(x.body, y.body) || x.op != y.op || x.instance != y.instance)
            same = 0;
        if (x.op != z.op || x.instance != z.instance || x.actor != z.actor)
            differ++;
        if (x.op != v.op || x.actor != v.actor || x.instance != v.instance)
            ops_same_e = 0;
        json_t *jx = parse(x.body), *jv = parse(v.body);
        if (!strcmp(jstr(jx, "id"), jstr(jv, "id")))
            ids_differ_e = 0;
        json_decref(jx);
        json_decref(jv);
        workload_item_free(&x);
        workload_item_free(&y);
        workload_item_free(&z);
        workload_item_free(&v);
    }
    CHECK(same, "same seed and start: the same 2000 bodies, byte for byte");
    CHECK(differ > 1500, "another seed: other choices (%d of 2000 differ)", differ);
    CHECK(ops_same_e, "the same seed a second later: the same choices");
    CHECK(ids_differ_e, "... but never the same ids (another run number)");
    CHECK(workload_id_seq(a, 5) != workload_id_seq(e, 5) &&
              (workload_id_seq(a, 5) & ((UINT64_C(1) << WORKLOAD_RUN_SHIFT) - 1)) == 5,
          "id seq = run << 40 | n");
    workload_free(a);
    workload_free(b);
    workload_free(d);
    workload_free(e);
}

/* Build seq and return its parsed body (new reference). */
static json_t *build_json(struct workload *w, uint64_t s, struct workload_item *it)
{
    struct flood_err err = {0};
    if (workload_build_at(w, s, 2000000, it, &err) < 0) {
        printf("# build %" PRIu64 ": %s\n", s, err.msg);
        return NULL;
    }
    return parse(it->body);
}

static void follow_undo(void)
{
    struct crowd c = crowd_of(1, 1, "https");
    struct workload_opts o = {.seed = 1, .mix = {0, 0, 1, 0}};
    struct flood_err err = {0};
    struct workload *w = workload_new_at(&c, &o, personas, 1, 2000000, &err);
    CHECK(w != NULL, "one actor, one persona, follow only");
    if (!w)
        return;
    char prev_follow[WF_URL_MAX] = "";
    int ok = 1;
    for (uint64_t s = 0; s < 10; s++) {
        struct workload_item it;
        json_t *j = build_json(w, s, &it);
        const char *type = jstr(j, "type");
        if (s % 2 == 0) {
            if (strcmp(type, "Follow") || it.op != OP_FOLLOW ||
                strcmp(jstr(j, "object"), "https://target.test/users/alice"))
                ok = 0;
            snprintf(prev_follow, sizeof(prev_follow), "%s", jstr(j, "id"));
            if (workload_follow_seq(w, prev_follow) != (int64_t)s)
                ok = 0;
        } else {
            json_t *obj = json_object_get(j, "object");
            if (strcmp(type, "Undo") || it.op != OP_UNDO || !json_is_object(obj) ||
                strcmp(jstr(obj, "id"), prev_follow) || strcmp(jstr(obj, "type"), "Follow") ||
                json_object_get(obj, "@context") ||
                strcmp(jstr(obj, "object"), "https://target.test/users/alice"))
                ok = 0;
            if (workload_follow_seq(w, jstr(j, "id")) != -1)
                ok = 0;
        }
        json_decref(j);
        workload_item_free(&it);
    }
    CHECK(ok, "Follow, Undo(that Follow embedded), Follow, ... for one pair");
    /* the Follow an Undo embeds is byte-equal to the Follow served at its id */
    struct wf_doc d;
    struct workload_item it;
    json_t *u = build_json(w, 10, &it); /* a Follow again (pair free after the Undo at 9) */
    workload_item_free(&it);
    json_t *u2 = build_json(w, 11, &it);
    int st = hook_get(w, &c, jstr(u, "id"), &d);
    json_t *f = parse(d.body);
    json_object_del(f, "@context");
    CHECK(st == 200 && json_equal(f, json_object_get(u2, "object")) &&
              !strcmp(jstr(u2, "type"), "Undo") &&
              !strcmp(jstr(json_object_get(u2, "object"), "id"), jstr(u, "id")),
          "the embedded Follow equals the one served");
    workload_item_free(&it);
    json_decref(f);
    json_decref(u);
    json_decref(u2);
    wf_doc_free(&d);
    workload_free(w);

    /* explicit undo share: falls back to Follow when nothing is followed */
    o.mix[OP_FOLLOW] = 0;
    o.mix[OP_UNDO] = 1;
    w = workload_new_at(&c, &o, personas, 1, 2000000, &err);
    const char *want[] = {"Follow", "Undo", "Follow", "Undo"};
    ok = 1;
    for (uint64_t s = 0; s < 4; s++) {
        json_t *j = build_json(w, s, &it);
        if (strcmp(jstr(j, "type"), want[s]))
            ok = 0;
        json_decref(j);
        workload_item_free(&it);
    }
    CHECK(ok, "undo share with nothing followed: Follow, then Undo of it, ...");
    workload_free(w);

    /* many pairs: every Undo undoes a Follow of the same pair that is still followed */
    struct crowd c2 = crowd_of(3, 3, "https");
    o.mix[OP_FOLLOW] = 3;
    o.mix[OP_UNDO] = 1;
    w = workload_new_at(&c2, &o, personas, 2, 2000000, &err);
    char *followed[64] = {0}; /* pair -> Follow id */
    ok = 1;
    for (uint64_t s = 0; s < 5000 && ok; s++) {
        json_t *j = build_json(w, s, &it);
        int pair = ((it.instance - 1) * 3 + it.actor - 1) * 2 + it.persona;
        if (!strcmp(jstr(j, "type"), "Follow")) {
            if (followed[pair])
                ok = 0;
            followed[pair] = flood_xstrdup(jstr(j, "id"));
        } else if (!strcmp(jstr(j, "type"), "Undo")) {
            const char *fid = jstr(json_object_get(j, "object"), "id");
            if (!followed[pair] || strcmp(followed[pair], fid))
                ok = 0;
            free(followed[pair]);
            followed[pair] = NULL;
        } else {
            ok = 0;
        }
        json_decref(j);
        workload_item_free(&it);
    }
    CHECK(ok, "18 pairs, 5000 follows/undos: never a Follow of a followed pair, every Undo "
              "of that pair's last Follow");
    for (int i = 0; i < 64; i++)
        free(followed[i]);
    workload_free(w);
}

static void serving(void)
{
    struct crowd c = crowd_of(4, 3, "https");
    struct workload_opts o = {.seed = 3, .mix = {60, 20, 15, 5}};
    struct flood_err err = {0};
    struct workload *w = workload_new_at(&c, &o, personas, 2, 1764493200, &err);
    if (!w)
        return;
    enum { N = 600 };
    int same = 1, notes = 0, notes_ok = 1, creates[5][4] = {{0}};
    char first_create[WF_URL_MAX] = "", first_like[WF_URL_MAX] = "";
    int fc_inst = 0, fc_actor = 0;
    for (uint64_t s = 0; s < N; s++) {
        struct workload_item it;
        json_t *j = build_json(w, s, &it);
        struct wf_doc d;
        int st = hook_get(w, &c, jstr(j, "id"), &d);
        if (st != 200 || !d.body || strcmp(d.body, it.body) ||
            strcmp(d.content_type, WF_CT_ACTIVITY))
            same = 0;
        wf_doc_free(&d);
        if (it.op == OP_CREATE) {
            creates[it.instance][it.actor]++;
            json_t *obj = json_object_get(j, "object");
            st = hook_get(w, &c, jstr(obj, "id"), &d);
            json_t *n = parse(d.body);
            if (n)
                json_object_del(n, "@context");
            if (st != 200 || !json_equal(n, obj))
                notes_ok = 0;
            notes++;
            json_decref(n);
            wf_doc_free(&d);
            if (!first_create[0]) {
                snprintf(first_create, sizeof(first_create), "%s", jstr(j, "id"));
                fc_inst = it.instance;
                fc_actor = it.actor;
            }
            if (strcmp(jstr(j, "published"), "1970-01-24T03:33:20Z") != 0)
                notes_ok = 0; /* published = the time given (2000000) */
        }
        if (it.op == OP_LIKE && !first_like[0])
            snprintf(first_like, sizeof(first_like), "%s", jstr(j, "id"));
        json_decref(j);
        workload_item_free(&it);
    }
    CHECK(same, "GET of each of %d activity ids gives the body sent, byte for byte", N);
    CHECK(notes > 0 && notes_ok, "GET of each of %d note ids gives the Create's Note", notes);

    struct wf_doc d;
    char url[WF_URL_MAX + 64];
    /* 404 twins */
    const char *p = strstr(first_create, "/users/");
    int other = fc_actor == 3 ? 1 : fc_actor + 1;
    snprintf(url, sizeof(url), "https://flood%d.test/users/user%d%s", fc_inst, other,
             strchr(p + 7, '/'));
    CHECK(hook_get(w, &c, url, &d) == 404, "the same seq under another actor: 404");
    wf_doc_free(&d);
    snprintf(url, sizeof(url), "https://flood%d.test%s", fc_inst % 4 + 1, p);
    CHECK(hook_get(w, &c, url, &d) == 404, "the same path on another instance: 404");
    wf_doc_free(&d);
    wf_activity_url(&c.wf, 1, 1, workload_id_seq(w, N + 10), url);
    CHECK(hook_get(w, &c, url, &d) == 404, "a seq never built: 404");
    wf_doc_free(&d);
    wf_activity_url(&c.wf, fc_inst, fc_actor, (uint64_t)12345 << WORKLOAD_RUN_SHIFT, url);
    CHECK(hook_get(w, &c, url, &d) == 404, "another run's id: 404");
    wf_doc_free(&d);
    snprintf(url, sizeof(url), "%s", first_like);
    char *act = strstr(url, "/activities/");
    memmove(act + 6, act + 11, strlen(act + 11) + 1);
    memcpy(act, "/notes", 6);
    CHECK(hook_get(w, &c, url, &d) == 404, "the note of a Like: 404 (%s)", url);
    wf_doc_free(&d);
    CHECK(hook_get(w, &c, "https://flood1.test/users/user1/followers", &d) == 0,
          "other routes are not the hook's");

    /* outboxes */
    int ok = 1;
    for (int i = 1; i <= 4; i++) {
        for (int a = 1; a <= 3; a++) {
            snprintf(url, sizeof(url), "https://flood%d.test/users/user%d/outbox", i, a);
            int st = hook_get(w, &c, url, &d);
            json_t *j = parse(d.body);
            json_t *items = json_object_get(j, "orderedItems");
            size_t want_n = creates[i][a] < 20 ? (size_t)creates[i][a] : 20;
            if (st != 200 ||
                json_integer_value(json_object_get(j, "totalItems")) != creates[i][a] ||
                json_array_size(items) != want_n)
                ok = 0;
            /* newest first: decreasing ids, each served as a Create */
            for (size_t k = 0; k < json_array_size(items); k++) {
                const char *id = json_string_value(json_array_get(items, k));
                struct wf_doc d2;
                json_t *cj = NULL;
                if (!id || hook_get(w, &c, id, &d2) != 200 ||
                    strcmp(jstr(cj = parse(d2.body), "type"), "Create"))
                    ok = 0;
                if (k > 0 && strcmp(id, json_string_value(json_array_get(items, k - 1))) >= 0 &&
                    strlen(id) == strlen(json_string_value(json_array_get(items, k - 1))))
                    ok = 0;
                json_decref(cj);
                if (id)
                    wf_doc_free(&d2);
            }
            json_decref(j);
            wf_doc_free(&d);
        }
    }
    CHECK(ok, "each actor's outbox: totalItems = its Creates, the last 20 newest first");
    CHECK(hook_get(w, &c, "https://flood1.test/actor/outbox", &d) == 200 &&
              strstr(d.body, "\"totalItems\":0"),
          "the instance actor's outbox is empty");
    wf_doc_free(&d);

    /* workload_follow_seq negative twins */
    CHECK(workload_follow_seq(w, first_create) == -1, "a Create id is not a Follow");
    CHECK(workload_follow_seq(w, "https://other.test/users/user1/activities/1") == -1,
          "a foreign host is not ours");
    CHECK(workload_follow_seq(w, NULL) == -1 && workload_follow_seq(w, "garbage") == -1,
          "garbage is not a Follow");
    workload_free(w);
}

static void placeholder_and_refusals(void)
{
    struct crowd c = crowd_of(2, 2, "http");
    struct flood_err err = {0};
    struct workload_opts o = {
        .seed = 1, .mix = {1, 0, 1, 0}, .inbox_url = "http://127.0.0.1:9000/inbox"};
    struct workload *w = workload_new_at(&c, &o, NULL, 0, 5, &err);
    CHECK(w != NULL, "--inbox alone with create and follow (%s)", err.msg);
    int ok = 1, creates = 0;
    for (uint64_t s = 0; w && s < 50; s++) {
        struct workload_item it;
        json_t *j = build_json(w, s, &it);
        if (it.persona != -1 || strcmp(it.inbox, "http://127.0.0.1:9000/inbox"))
            ok = 0;
        if (it.op == OP_CREATE) {
            creates++;
            json_t *tag = json_array_get(json_object_get(json_object_get(j, "object"), "tag"), 0);
            if (strcmp(jstr(tag, "href"), "http://127.0.0.1:9000/users/flood") ||
                strcmp(jstr(tag, "name"), "@flood@127.0.0.1:9000"))
                ok = 0;
        }
        json_decref(j);
        workload_item_free(&it);
    }
    CHECK(ok && creates > 0, "placeholder persona ORIGIN/users/flood, everything to --inbox");
    workload_free(w);

    o.mix[OP_LIKE] = 1;
    w = workload_new_at(&c, &o, NULL, 0, 5, &err);
    CHECK(w == NULL && strstr(err.msg, "like"), "like with nothing to like refused: %s", err.msg);
    char *lp[] = {"http://127.0.0.1:9000/objects/1"};
    struct persona carrier = {NULL, NULL, NULL, NULL, lp, 1};
    w = workload_new_at(&c, &o, &carrier, 1, 5, &err);
    CHECK(w != NULL, "its twin: a persona without actor carrying --like-object posts");
    workload_free(w);

    o.inbox_url = NULL;
    w = workload_new_at(&c, &o, NULL, 0, 5, &err);
    CHECK(w == NULL && err.msg[0], "no persona and no inbox refused: %s", err.msg);
    struct persona noinbox = {NULL, "https://target.test/users/x", NULL, NULL, lp, 1};
    w = workload_new_at(&c, &o, &noinbox, 1, 5, &err);
    CHECK(w == NULL && strstr(err.msg, "inbox"), "a persona without inbox refused: %s", err.msg);
    o.mix[0] = o.mix[1] = o.mix[2] = 0;
    w = workload_new_at(&c, &o, personas, 1, 5, &err);
    CHECK(w == NULL, "an all-zero mix refused: %s", err.msg);
    o.mix[0] = 1;
    o.personal_inbox = 1;
    w = workload_new_at(&c, &o, personas, 1, 5, &err);
    struct workload_item it;
    CHECK(w && workload_build_at(w, 0, 5, &it, &err) == 0 &&
              !strcmp(it.inbox, "https://target.test/users/alice/inbox"),
          "personal_inbox sends to the persona's own inbox");
    workload_item_free(&it);
    workload_free(w);
}

static void mix_parsing(void)
{
    unsigned m[OP__COUNT];
    struct flood_err err;
    CHECK(workload_parse_mix("create=70,like=20,follow=10", m, &err) == 0 && m[0] == 70 &&
              m[1] == 20 && m[2] == 10 && m[3] == 0,
          "--mix create=70,like=20,follow=10");
    CHECK(workload_parse_mix("undo=1,create=2", m, &err) == 0 && m[3] == 1 && m[0] == 2 &&
              m[1] == 0,
          "--mix in any order");
    const char *bad[] = {"",       "create",   "create=",   "create=x",  "create=1,create=2",
                         "post=1", "create=0", "create=-1", "create=1,", "create=5000000"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = workload_parse_mix(bad[i], m, &err);
        CHECK(rc == -1 && !strncmp(err.msg, "--mix", 5) &&
                  (strstr(err.msg, "expected") || strstr(err.msg, "twice") ||
                   strstr(err.msg, "every weight is 0")),
              "--mix '%s' refused, naming --mix and the forms (%s)", bad[i], err.msg);
    }
    CHECK(!strcmp(op_name(OP_UNDO), "undo") && !strcmp(op_name(OP_CREATE), "create"), "op names");
    for (int i = 0; i < OP__COUNT; i++) {
        char one[64];
        snprintf(one, sizeof(one), "%s=1", op_name((enum op_kind)i));
        CHECK(strcmp(op_name((enum op_kind)i), "?") != 0 && workload_parse_mix(one, m, &err) == 0 &&
                  m[i] == 1,
              "op %d has a name --mix takes (%s)", i, op_name((enum op_kind)i));
    }
}

/* Issue 12's kinds: each built, each parses, counted under its op; the unseen crowd objects
 * and chains served at their ids; a deleted note answers 410; revisions count up. */
static void more_kinds(void)
{
    struct crowd c = crowd_of(20, 10, "https");
    struct wf_content_profile prof;
    CHECK(wf_content_profile("default", &prof, NULL) == 0, "default profile");
    struct workload_opts o = {
        .seed = 7, .content = &prof, .reply_depth = 3, .unseen_pct = 50, .undo_pct = 20};
    for (int i = 0; i < OP__COUNT; i++)
        o.mix[i] = 10;
    o.mix[OP_UPDATE_ACTOR] = 0; /* this test crowd has no keys to render an actor with */
    struct flood_err err = {0};
    struct workload *w = workload_new_at(&c, &o, personas, 2, 1764493200, &err);
    CHECK(w != NULL, "workload with every kind (%s)", err.msg);
    if (!w)
        return;
    enum { N = 3000 };
    unsigned ops[OP__COUNT] = {0};
    int bad = 0, chains = 0, chain_ok = 0, unseen_ann = 0, gone = 0, revs = 0, edited = 0;
    for (uint64_t s = 0; s < N; s++) {
        struct workload_item it;
        if (workload_build_at(w, s, 1764493200 + (time_t)(s / 100), &it, &err) < 0) {
            printf("# %s\n", err.msg);
            bad++;
            continue;
        }
        ops[it.op]++;
        json_t *j = parse(it.body);
        if (!j)
            bad++;
        const json_t *obj = json_object_get(j, "object");
        const char *irt = jstr(obj, "inReplyTo");
        if (it.op == OP_REPLY && strstr(irt, "flood") && chains < 40) {
            /* walk the chain: each parent served, each replying to the next, 3 deep */
            chains++;
            int depth = 0;
            char url[WF_URL_MAX];
            snprintf(url, sizeof(url), "%s", irt);
            while (url[0] && depth < 10) {
                struct wf_doc d;
                if (hook_get(w, &c, url, &d) != 200)
                    break;
                json_t *n = parse(d.body);
                depth++;
                snprintf(url, sizeof(url), "%s", jstr(n, "inReplyTo"));
                if (strcmp(jstr(n, "type"), "Note") ||
                    strcmp(jstr(n, "id"), d.body ? jstr(n, "id") : ""))
                    depth = 100;
                json_decref(n);
                wf_doc_free(&d);
            }
            chain_ok += depth == 3;
        }
        if (it.op == OP_ANNOUNCE && json_is_string(obj) &&
            strstr(json_string_value(obj), "flood")) {
            struct wf_doc d;
            unseen_ann += hook_get(w, &c, json_string_value(obj), &d) == 200;
            wf_doc_free(&d);
        }
        if (it.op == OP_DELETE) {
            struct wf_doc d;
            gone += hook_get(w, &c, jstr(obj, "id"), &d) == 410;
            wf_doc_free(&d);
        }
        if (it.op == OP_UPDATE) {
            /* the note's own id serves the edited note, as the Update showed it */
            struct wf_doc d;
            int st = hook_get(w, &c, jstr(obj, "id"), &d);
            json_t *n = parse(d.body);
            edited += st == 200 && jstr(obj, "updated")[0] &&
                      !strcmp(jstr(n, "updated"), jstr(obj, "updated")) &&
                      !strcmp(jstr(n, "content"), jstr(obj, "content"));
            json_decref(n);
            wf_doc_free(&d);
        }
        if (it.op == OP_UPDATE_ACTOR)
            revs += workload_actor_revision(w, it.instance, it.actor, NULL) >= 1;
        /* every activity is served again, byte for byte */
        struct wf_doc d;
        int st = hook_get(w, &c, jstr(j, "id"), &d);
        if (st != 200 || d.len != it.body_len || memcmp(d.body, it.body, d.len)) {
            if (bad++ < 2)
                printf("# %d %s\n#  sent %s\n#  got  %s\n", st, jstr(j, "id"), it.body,
                       d.body ? d.body : "");
        }
        wf_doc_free(&d);
        json_decref(j);
        workload_item_free(&it);
    }
    CHECK(bad == 0, "%d activities of every kind built, parsed, served again (%d bad)", N, bad);
    int every = 1;
    for (int i = 0; i < OP__COUNT; i++)
        every &= ops[i] > 0 || i == OP_UPDATE_ACTOR;
    CHECK(every,
          "each op sent: create %u announce %u reply %u update %u delete %u update-actor "
          "%u question %u vote %u emoji-react %u undo %u",
          ops[OP_CREATE], ops[OP_ANNOUNCE], ops[OP_REPLY], ops[OP_UPDATE], ops[OP_DELETE],
          ops[OP_UPDATE_ACTOR], ops[OP_QUESTION], ops[OP_VOTE], ops[OP_EMOJI_REACT], ops[OP_UNDO]);
    CHECK(chains > 0 && chain_ok == chains, "%d of %d unseen reply chains 3 deep, served", chain_ok,
          chains);
    CHECK(unseen_ann > 0, "%d unseen announced notes served", unseen_ann);
    CHECK(gone == (int)ops[OP_DELETE], "every deleted note answers 410 (%d)", gone);
    CHECK(ops[OP_UPDATE] > 0 && edited == (int)ops[OP_UPDATE],
          "every updated note serves its edit at its id (%d of %u)", edited, ops[OP_UPDATE]);
    CHECK(revs == (int)ops[OP_UPDATE_ACTOR] && workload_actor_revision(w, 1, 1, NULL) == 0,
          "no actor revised without update-actor");
    workload_free(w);
}

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
 * actor served after its send time shows it (and before, the old one), the key document
 * too, and the item carries the new key for the signer. Its twin: without rotation the key
 * stays the actor's own and the hook still serves the revised name. */
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
        int ok_embed = 0, ok_served = 0, ok_key = 0, ok_before = 0, ok_item = 0, n = 0;
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
            uint32_t rot = 0;
            uint32_t rev = workload_actor_state(w, it.instance, it.actor,
                                                t0 + (int64_t)s * 1000000000, &rot, NULL);
            uint32_t rev_before = workload_actor_state(
                w, it.instance, it.actor, t0 + (int64_t)s * 1000000000 - 1, NULL, NULL);
            ok_before += rev_before + 1 == rev;
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
        CHECK(ok_before == n, "a revision counts from its send time, the one before until then");
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
    more_kinds();
    mix_and_spread();
    determinism();
    follow_undo();
    serving();
    placeholder_and_refusals();
    mix_parsing();
    return check_done();
}
