/* tests/unit/test_inbound.c: the inbox handler without a server. Requests are signed with
 * sign_request by a sender key whose public half is seeded into the key cache; each
 * rejection (unsigned, wrong key, stale date, digest, a keyId on a host not allowed, bad
 * JSON, not an activity, content type, deep JSON, actor on another host) has an accepted
 * twin. A Follow gets a signed Accept, posted to a small HTTP sink in this test that first
 * answers 503 with Retry-After: 1, then 202. */
#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "flood/crowd/crowd.h"
#include "flood/inbound/deliver.h"
#include "flood/inbound/inbound.h"
#include "flood/inbound/keycache.h"
#include "flood/measure/probes.h"
#include "flood/send/workload.h"
#include "sign/sign.h"
#include "tests/check.h"

#define ALICE     "http://remote.test/users/alice"
#define ALICE_KEY ALICE "#main-key"

static struct crowd *crowd;
static struct sign_key *alice_key, *other_key;

/* ---- a request ------------------------------------------------------------------------ */

struct req {
    struct sign_header h[16];
    size_t n;
    char *lines[16];
    struct inbound_req r;
    struct wf_doc out;
    int status;
};

static void req_free(struct req *q)
{
    for (size_t i = 0; i < 16; i++)
        free(q->lines[i]);
    wf_doc_free(&q->out);
}

/* Sign body_signed and send body (the same unless a test tampers), as key_id with key at
 * now, in dialect; ctype NULL for none; key NULL for an unsigned request. */
static int post(struct inbound *in, struct req *q, const char *body_signed, const char *body,
                const struct sign_key *key, const char *key_id, time_t now, int dialect,
                const char *ctype)
{
    memset(q, 0, sizeof(*q));
    if (ctype) {
        q->h[q->n].name = "Content-Type";
        q->h[q->n++].value = ctype;
    }
    if (key) {
        struct sign_msg m = {.method = "POST",
                             .scheme = "http",
                             .authority = "flood1.test",
                             .path = "/users/user1/inbox",
                             .headers = q->h,
                             .n_headers = q->n,
                             .body = body_signed,
                             .body_len = strlen(body_signed)};
        struct sign_params p = {.dialect = dialect, .key = key, .key_id = key_id, .now = now};
        struct sign_out so = {0};
        struct flood_err e = {0};
        if (sign_request(&p, &m, &so, &e) < 0) {
            printf("# sign_request: %s\n", e.msg);
            return -1;
        }
        for (size_t i = 0; i < so.n && q->n < 15; i++) {
            q->lines[i] = flood_xstrdup(so.lines[i]);
            char *colon = strchr(q->lines[i], ':');
            *colon = '\0';
            q->h[q->n].name = q->lines[i];
            q->h[q->n++].value = colon + 2;
        }
        sign_out_free(&so);
    } else {
        q->h[q->n].name = "Host";
        q->h[q->n++].value = "flood1.test";
    }
    q->r = (struct inbound_req){.method = "POST",
                                .host = "flood1.test",
                                .path = "/users/user1/inbox",
                                .headers = q->h,
                                .n_headers = q->n,
                                .body = body,
                                .body_len = strlen(body),
                                .instance = 1,
                                .actor = 1};
    q->status = inbound_handle(in, &q->r, &q->out);
    return q->status;
}

static int simple(struct inbound *in, const char *body, const struct sign_key *key,
                  const char *key_id, time_t now, const char *ctype, char *err_out, size_t n)
{
    struct req q;
    int st = post(in, &q, body, body, key, key_id, now, SIGN_CAVAGE, ctype);
    if (err_out)
        snprintf(err_out, n, "%s", q.out.body ? q.out.body : "");
    req_free(&q);
    return st;
}

static json_t *stats(struct inbound *in)
{
    return inbound_json(in);
}

static long long get(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

static double getf(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(json_object_get(o, a), b);
    return json_is_number(v) ? json_number_value(v) : -1;
}

static char *activity(const char *type, const char *id, const char *actor, const char *extra)
{
    return flood_xasprintf("{\"@context\":\"https://www.w3.org/ns/activitystreams\","
                           "\"id\":\"%s\",\"type\":\"%s\",\"actor\":\"%s\"%s%s}",
                           id, type, actor, extra ? "," : "", extra ? extra : "");
}

/* ---- an HTTP sink for Accepts --------------------------------------------------------- */

struct sink {
    int fd, port;
    pthread_t th;
    int n;              /* requests seen */
    char *bodies[4];    /* bodies received */
    char *sig_lines[4]; /* the Signature header of each */
    char *heads[4];     /* the whole request head */
};

static void *sink_run(void *arg)
{
    struct sink *s = arg;
    for (int i = 0; i < 2; i++) {
        int c = accept(s->fd, NULL, NULL);
        if (c < 0)
            return NULL;
        char buf[65536];
        size_t len = 0;
        char *end = NULL;
        long clen = 0;
        while (len < sizeof(buf) - 1) {
            ssize_t r = read(c, buf + len, sizeof(buf) - 1 - len);
            if (r <= 0)
                break;
            len += (size_t)r;
            buf[len] = '\0';
            if (!end && (end = strstr(buf, "\r\n\r\n"))) {
                char *cl = strcasestr(buf, "\r\ncontent-length:");
                clen = cl ? strtol(cl + 17, NULL, 10) : 0;
            }
            if (end && len >= (size_t)(end + 4 - buf) + (size_t)clen)
                break;
        }
        if (end) {
            s->heads[i] = flood_xstrndup(buf, (size_t)(end - buf));
            s->bodies[i] = flood_xstrdup(end + 4);
        }
        s->n++;
        const char *ans = i == 0 ? "HTTP/1.1 503 Busy\r\nRetry-After: 1\r\nContent-Length: "
                                   "0\r\nConnection: close\r\n\r\n"
                                 : "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: "
                                   "close\r\n\r\n";
        if (write(c, ans, strlen(ans)) < 0)
            perror("sink write");
        close(c);
    }
    return NULL;
}

static int sink_start(struct sink *s)
{
    memset(s, 0, sizeof(*s));
    s->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s->fd, 4) < 0 ||
        getsockname(s->fd, (struct sockaddr *)&a, &al) < 0)
        return -1;
    s->port = ntohs(a.sin_port);
    return pthread_create(&s->th, NULL, sink_run, s);
}

/* ---- cases ---------------------------------------------------------------------------- */

/* JSON nesting: 64 levels is fine, 65 is refused before parsing, 100,000 too. */
static void rejections_nesting(struct inbound *in, time_t now)
{
    char err[512];
    for (int depth = 64; depth <= 65; depth++) {
        size_t inner = (size_t)depth - 1; /* the activity object is level 1 */
        char *nest = flood_xmalloc(inner * 2 + 1);
        memset(nest, '[', inner);
        memset(nest + inner, ']', inner);
        nest[inner * 2] = '\0';
        char *extra = flood_xasprintf("\"x\":%s", nest);
        char *deep = activity("Create", ALICE "/activities/deep", ALICE, extra);
        int st = simple(in, deep, alice_key, ALICE_KEY, now, "application/activity+json", err,
                        sizeof(err));
        if (depth == 64)
            CHECK(st == 202, "JSON nested 64 deep is accepted");
        else
            CHECK(st == 400 && strstr(err, "too_deep"), "JSON nested 65 deep: 400 too_deep (%s)",
                  err);
        free(nest);
        free(extra);
        free(deep);
    }
    size_t huge = 100000;
    char *bomb = flood_xmalloc(huge * 2 + 1);
    memset(bomb, '[', huge);
    memset(bomb + huge, ']', huge);
    bomb[huge * 2] = '\0';
    CHECK(simple(in, bomb, alice_key, ALICE_KEY, now, "application/activity+json", err,
                 sizeof(err)) == 400 &&
              strstr(err, "too_deep"),
          "100,000 nested arrays: 400 too_deep");
    free(bomb);
}

static void test_rejections(struct inbound *in)
{
    time_t now = time(NULL);
    char err[512];
    char pub[64];
    struct tm tm;
    time_t two_s_ago = now - 2;
    gmtime_r(&two_s_ago, &tm);
    strftime(pub, sizeof(pub), "\"published\":\"%Y-%m-%dT%H:%M:%SZ\"", &tm);
    char *note = activity("Create", ALICE "/activities/1", ALICE, pub);

    CHECK(simple(in, note, alice_key, ALICE_KEY, now, "application/activity+json", err,
                 sizeof(err)) == 202,
          "a signed Create is accepted (202)");
    CHECK(simple(in, note, NULL, NULL, now, "application/activity+json", err, sizeof(err)) == 401 &&
              strstr(err, "signature: missing"),
          "an unsigned one is 401 missing (%s)", err);
    CHECK(simple(in, note, other_key, ALICE_KEY, now, "application/activity+json", err,
                 sizeof(err)) == 401 &&
              strstr(err, "signature: mismatch"),
          "signed with another key: 401 mismatch (%s)", err);
    CHECK(simple(in, note, alice_key, ALICE_KEY, now - 7200, "application/activity+json", err,
                 sizeof(err)) == 401 &&
              strstr(err, "signature: date"),
          "a Date two hours old: 401 date (%s)", err);
    CHECK(simple(in, note, alice_key, ALICE_KEY, now - 3000, "application/activity+json", err,
                 sizeof(err)) == 202,
          "a Date 50 minutes old is inside the window");

    struct req q;
    char *tampered = activity("Create", ALICE "/activities/2", ALICE, NULL);
    post(in, &q, note, tampered, alice_key, ALICE_KEY, now, SIGN_CAVAGE,
         "application/activity+json");
    CHECK(q.status == 401 && strstr(q.out.body, "signature: digest"),
          "a body that is not the signed one: 401 digest (%s)", q.out.body);
    req_free(&q);
    free(tampered);

    json_t *s0 = stats(in);
    CHECK(simple(in, note, alice_key, "http://elsewhere.test/users/x#main-key", now,
                 "application/activity+json", err, sizeof(err)) == 401 &&
              strstr(err, "signature: host_not_allowed"),
          "a keyId on a host not allowed: 401 host_not_allowed (%s)", err);
    json_t *s1 = stats(in);
    CHECK(get(s1, "key_fetches", "refused") == get(s0, "key_fetches", "refused") + 1 &&
              get(s1, "key_fetches", "ok") == 0 && get(s1, "key_fetches", "failed") == 0,
          "the refusal is counted and nothing was fetched");
    json_decref(s0);
    json_decref(s1);
    CHECK(simple(in, note, alice_key, "http://127.0.0.1:1/users/x#main-key", now,
                 "application/activity+json", err, sizeof(err)) == 401 &&
              strstr(err, "signature: key_fetch"),
          "a key that cannot be fetched (allowed host, closed port): 401 key_fetch (%s)", err);

    const char *bad_json = "{\"type\":\"Create\",";
    CHECK(simple(in, bad_json, alice_key, ALICE_KEY, now, "application/activity+json", err,
                 sizeof(err)) == 400 &&
              strstr(err, "bad_json"),
          "signed bad JSON: 400 bad_json (%s)", err);
    const char *not_act = "{\"id\":\"" ALICE "/x\",\"type\":\"Create\"}";
    CHECK(simple(in, not_act, alice_key, ALICE_KEY, now, "application/activity+json", err,
                 sizeof(err)) == 400 &&
              strstr(err, "not_activity"),
          "an object with no actor: 400 not_activity (%s)", err);
    CHECK(simple(in, "[1,2]", alice_key, ALICE_KEY, now, "application/activity+json", err,
                 sizeof(err)) == 400 &&
              strstr(err, "not_activity"),
          "an array: 400 not_activity");
    CHECK(simple(in, note, alice_key, ALICE_KEY, now, "text/plain", err, sizeof(err)) == 415,
          "text/plain: 415");
    CHECK(simple(in, note, alice_key, ALICE_KEY, now, NULL, err, sizeof(err)) == 415,
          "no Content-Type: 415");
    CHECK(simple(in, note, alice_key, ALICE_KEY, now,
                 "application/ld+json; profile=\"https://www.w3.org/ns/activitystreams\"", err,
                 sizeof(err)) == 202,
          "ld+json with the profile: 202");
    CHECK(simple(in, note, alice_key, ALICE_KEY, now, "Application/JSON; charset=utf-8", err,
                 sizeof(err)) == 202,
          "application/json with a charset: 202");

    rejections_nesting(in, now);

    char *foreign = activity("Create", ALICE "/activities/3", "http://other.test/users/bob", NULL);
    CHECK(simple(in, foreign, alice_key, ALICE_KEY, now, "application/activity+json", err,
                 sizeof(err)) == 401 &&
              strstr(err, "actor_mismatch"),
          "an actor on another host than the key's owner: 401 actor_mismatch (%s)", err);
    free(foreign);

    struct req r9;
    post(in, &r9, note, note, alice_key, ALICE_KEY, now, SIGN_RFC9421, "application/activity+json");
    CHECK(r9.status == 202, "an RFC 9421 signature is accepted (%s)",
          r9.out.body ? r9.out.body : "");
    req_free(&r9);
    struct req r9b;
    post(in, &r9b, note, note, other_key, ALICE_KEY, now, SIGN_RFC9421,
         "application/activity+json");
    CHECK(r9b.status == 401 && strstr(r9b.out.body, "mismatch"),
          "an RFC 9421 signature by another key: 401 mismatch");
    req_free(&r9b);

    char own_id[WF_URL_MAX], own_actor[WF_URL_MAX];
    crowd_key_id(crowd, 2, 1, own_id);
    wf_actor_url(&crowd->wf, 2, 1, own_actor);
    char *own = activity("Like", "http://flood2.test/users/user1/likes/1", own_actor, NULL);
    CHECK(simple(in, own, crowd_key(crowd, 2, 1), own_id, now, "application/activity+json", err,
                 sizeof(err)) == 202,
          "a crowd actor's own key resolves without a fetch (%s)", err);
    CHECK(simple(in, own, crowd_key(crowd, 2, 2), own_id, now, "application/activity+json", err,
                 sizeof(err)) == 401,
          "another crowd actor's key does not verify it");
    free(own);

    json_t *s = stats(in);
    CHECK(get(s, "deliveries", "Create") == 6 && get(s, "deliveries", "Like") == 1,
          "deliveries by type: Create %lld, Like %lld", get(s, "deliveries", "Create"),
          get(s, "deliveries", "Like"));
    CHECK(get(s, "rejected", "missing") == 1 && get(s, "rejected", "mismatch") == 3 &&
              get(s, "rejected", "date") == 1 && get(s, "rejected", "digest") == 1 &&
              get(s, "rejected", "host_not_allowed") == 1 && get(s, "rejected", "key_fetch") == 1 &&
              get(s, "rejected", "bad_json") == 1 && get(s, "rejected", "not_activity") == 2 &&
              get(s, "rejected", "content_type") == 2 && get(s, "rejected", "too_deep") == 2 &&
              get(s, "rejected", "actor_mismatch") == 1,
          "rejections counted by reason");
    CHECK(get(s, "duplicates", NULL) == 4, "the same Create id 5 times is 4 duplicates (%lld)",
          get(s, "duplicates", NULL));
    double lag = getf(s, "delivery_lag_ms", "p50");
    CHECK(get(json_object_get(s, "delivery_lag_ms"), "count", NULL) == 5 && lag >= 1000 &&
              lag < 10000,
          "delivery lag recorded from published, p50 %.0f ms", lag);
    json_decref(s);
    free(note);
}

static void test_follow(struct inbound *in)
{
    struct sink sk;
    if (sink_start(&sk) < 0) {
        CHECK(0, "sink starts");
        return;
    }
    char inbox[128];
    snprintf(inbox, sizeof(inbox), "http://127.0.0.1:%d/users/alice/inbox", sk.port);
    keycache_seed_inbox(inbound_keycache(in), ALICE, inbox);
    time_t now = time(NULL);
    char err[512];
    char actor[WF_URL_MAX];
    wf_actor_url(&crowd->wf, 1, 2, actor);
    char *extra = flood_xasprintf("\"object\":\"%s\"", actor);
    char *follow = activity("Follow", ALICE "/follows/1", ALICE, extra);
    free(extra);
    uint64_t idx = crowd_actor_index(crowd, 1, 2);
    CHECK(!follows_has(crowd->follows, idx, ALICE), "alice does not follow user2 yet");
    CHECK(simple(in, follow, alice_key, ALICE_KEY, now, "application/activity+json", err,
                 sizeof(err)) == 202,
          "a Follow of user2 is accepted");
    CHECK(follows_has(crowd->follows, idx, ALICE), "alice now follows user2");

    /* the sink answers 503 + Retry-After: 1 first, then 202 */
    for (int i = 0; i < 100 && sk.n < 2; i++)
        usleep(50000);
    pthread_join(sk.th, NULL);
    close(sk.fd);
    CHECK(sk.n == 2, "the Accept was posted twice (a retry after 503)");
    json_error_t je;
    json_t *acc = sk.bodies[1] ? json_loads(sk.bodies[1], 0, &je) : NULL;
    json_t *obj = json_object_get(acc, "object");
    CHECK(acc && !strcmp(json_string_value(json_object_get(acc, "type")), "Accept") &&
              !strcmp(json_string_value(json_object_get(acc, "actor")), actor) &&
              json_is_object(obj) &&
              !strcmp(json_string_value(json_object_get(obj, "id")), ALICE "/follows/1"),
          "the Accept is from user2 and embeds the Follow");
    const char *id = json_string_value(json_object_get(acc, "id"));
    CHECK(id && !strncmp(id, actor, strlen(actor)), "the Accept's id is under user2 (%s)",
          id ? id : "");
    CHECK(sk.heads[1] && strcasestr(sk.heads[1], "\r\nsignature: keyId=\"") &&
              strcasestr(sk.heads[1], "\r\ndigest: SHA-256=") &&
              strcasestr(sk.heads[1], "\r\ncontent-type: application/activity+json"),
          "the Accept is signed with a Digest and the AS2 content type");

    /* the sink's request verifies with user2's key */
    if (sk.heads[1]) {
        struct sign_header h[32];
        size_t n = 0;
        char *save = NULL, *head = flood_xstrdup(sk.heads[1]);
        char *line = strtok_r(head, "\r\n", &save); /* request line */
        while ((line = strtok_r(NULL, "\r\n", &save)) && n < 32) {
            char *c = strchr(line, ':');
            if (!c)
                continue;
            *c = '\0';
            h[n].name = line;
            h[n++].value = c + 1 + strspn(c + 1, " ");
        }
        char auth[64];
        snprintf(auth, sizeof(auth), "127.0.0.1:%d", sk.port);
        struct sign_msg m = {.method = "POST",
                             .scheme = "http",
                             .authority = auth,
                             .path = "/users/alice/inbox",
                             .headers = h,
                             .n_headers = n,
                             .body = sk.bodies[1],
                             .body_len = strlen(sk.bodies[1])};
        struct sign_parsed *sp = NULL;
        struct flood_err e = {0};
        int v = sign_parse(&m, &sp, &e);
        char kid[WF_URL_MAX];
        crowd_key_id(crowd, 1, 2, kid);
        CHECK(v == SIGN_OK && !strcmp(sign_parsed_key_id(sp), kid), "keyId is user2's");
        CHECK(v == SIGN_OK &&
                  sign_verify(sp, &m, crowd_key(crowd, 1, 2), time(NULL), 300, &e) == SIGN_OK,
              "the Accept's signature verifies with user2's key (%s)", e.msg);
        sign_parsed_free(sp);
        free(head);
    }
    json_decref(acc);
    for (int i = 0; i < 4; i++) {
        free(sk.bodies[i]);
        free(sk.heads[i]);
    }

    json_t *s = stats(in);
    for (int i = 0; i < 40 && get(s, "accepts_sent", "ok") < 1; i++) {
        usleep(50000);
        json_decref(s);
        s = stats(in);
    }
    CHECK(get(s, "follows_received", NULL) == 1 && get(s, "accepts_sent", "ok") == 1 &&
              get(s, "accepts_sent", "retried") == 1 && get(s, "accepts_sent", "failed") == 0,
          "follows_received 1, accepts_sent ok 1 retried 1 failed 0");
    json_decref(s);

    /* Undo by someone else does nothing; Undo by alice removes the follow */
    char *undo_extra = flood_xasprintf("\"object\":%s", follow);
    char *undo = activity("Undo", ALICE "/undo/1", ALICE, undo_extra);
    char *mallory_follow = flood_xasprintf(
        "{\"id\":\"x\",\"type\":\"Follow\",\"actor\":\"http://remote.test/users/mallory\","
        "\"object\":\"%s\"}",
        actor);
    char *undo2_extra = flood_xasprintf("\"object\":%s", mallory_follow);
    char *undo2 = activity("Undo", ALICE "/undo/2", ALICE, undo2_extra);
    CHECK(simple(in, undo2, alice_key, ALICE_KEY, now, "application/activity+json", err,
                 sizeof(err)) == 202 &&
              follows_has(crowd->follows, idx, ALICE),
          "an Undo of someone else's Follow leaves alice following");
    CHECK(simple(in, undo, alice_key, ALICE_KEY, now, "application/activity+json", err,
                 sizeof(err)) == 202 &&
              !follows_has(crowd->follows, idx, ALICE),
          "Undo(Follow) by alice removes the follow");
    free(undo_extra);
    free(undo);
    free(undo2_extra);
    free(undo2);
    free(mallory_follow);
    free(follow);
}

static void test_accept_probe(struct inbound *in, struct probes *pr)
{
    struct workload_opts wo = {.seed = 1, .inbox_url = "http://remote.test/inbox"};
    wo.mix[OP_FOLLOW] = 1;
    struct flood_err e = {0};
    struct workload *w = workload_new(crowd, &wo, NULL, 0, &e);
    CHECK(w != NULL, "a workload of Follows (%s)", e.msg);
    if (!w)
        return;
    inbound_set_workload(in, w);
    struct workload_item it;
    CHECK(workload_build(w, 0, &it, &e) == 0 && it.op == OP_FOLLOW, "Follow 0 built");
    json_error_t je;
    json_t *f = json_loads(it.body, 0, &je);
    const char *fid = json_string_value(json_object_get(f, "id"));
    probes_follow_sent(pr, 0, 1);
    time_t now = time(NULL);
    char err[512];
    char *extra = flood_xasprintf("\"object\":%s", it.body);
    char *acc = activity("Accept", ALICE "/accepts/1", ALICE, extra);
    CHECK(simple(in, acc, alice_key, ALICE_KEY, now, "application/activity+json", err,
                 sizeof(err)) == 202,
          "an Accept of our Follow is taken");
    struct probes_totals t;
    probes_snapshot(pr, &t, NULL);
    CHECK(t.accepted == 1 && t.open == 0, "it closes the probe");
    char *by_id = flood_xasprintf("\"object\":\"%s\"", fid);
    char *acc2 = activity("Accept", ALICE "/accepts/2", ALICE, by_id);
    CHECK(simple(in, acc2, alice_key, ALICE_KEY, now, "application/activity+json", err,
                 sizeof(err)) == 202,
          "a second Accept (object by id) is taken too");
    probes_snapshot(pr, &t, NULL);
    CHECK(t.accepted == 1 && t.duplicates == 1, "and counted as a duplicate answer");
    char *other = activity("Accept", ALICE "/accepts/3", ALICE,
                           "\"object\":\"http://flood1.test/users/user1/activities/999999\"");
    CHECK(simple(in, other, alice_key, ALICE_KEY, now, "application/activity+json", err,
                 sizeof(err)) == 202,
          "an Accept of a Follow we never sent is taken");
    json_t *s = inbound_json(in);
    CHECK(get(s, "accepts", NULL) == 2 && get(s, "answers_unknown", NULL) == 1,
          "accepts 2 (ours), answers_unknown 1");
    CHECK(get(json_object_get(s, "follow_to_accept_ms"), "count", NULL) == 1,
          "the Follow-to-Accept histogram has one sample");
    json_decref(s);
    int inst = it.instance, act = it.actor;
    size_t n = 0;
    char **list = follows_list(crowd->follows, crowd_actor_index(crowd, inst, act), 0, &n);
    CHECK(n == 1 && !strcmp(list[0], ALICE), "the crowd actor now follows alice");
    follows_list_free(list, n);
    inbound_set_workload(in, NULL);
    free(extra);
    free(acc);
    free(by_id);
    free(acc2);
    free(other);
    json_decref(f);
    workload_item_free(&it);
    workload_free(w);
}

static void test_no_verify(void)
{
    struct inbound_opts *o = inbound_opts_new();
    struct flood_err e = {0};
    CHECK(inbound_opts_set(o, "no-verify", NULL, &e) == 0, "--no-verify");
    struct inbound *in = inbound_new(crowd, o, NULL, &e);
    char *note = activity("Create", ALICE "/activities/nv", ALICE, NULL);
    char err[512];
    CHECK(simple(in, note, NULL, NULL, time(NULL), "application/activity+json", err, sizeof(err)) ==
              202,
          "--no-verify: an unsigned delivery is accepted");
    CHECK(simple(in, note, other_key, ALICE_KEY, time(NULL), "application/activity+json", err,
                 sizeof(err)) == 401,
          "--no-verify: a signed one is still verified (host not allowed here)");
    json_t *s = inbound_json(in);
    CHECK(get(s, "accepted_unverified", NULL) == 1, "counted as accepted_unverified");
    json_decref(s);
    free(note);
    inbound_free(in, 0);
    inbound_opts_free(o);
}

/* ---- key documents (fixtures/inbound/keydocs, see its README) --------------------------- */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = flood_xmalloc(1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

/* Parse fixture file for key_id; 1 when it gives the key in pub_file with owner and inbox
 * (NULL: none expected). */
static int keydoc(const char *file, const char *key_id, const char *pub_file, const char *owner,
                  const char *inbox, char *why, size_t why_n)
{
    char path[256];
    snprintf(path, sizeof(path), "fixtures/inbound/keydocs/%s", file);
    size_t len;
    char *body = slurp(path, &len);
    if (!body) {
        snprintf(why, why_n, "no fixture %s", path);
        return 0;
    }
    struct keycache_doc d;
    struct flood_err e = {0};
    int rc = keycache_parse_key_doc(body, len, key_id, &d, &e);
    free(body);
    if (rc < 0) {
        snprintf(why, why_n, "%s", e.msg);
        return 0;
    }
    snprintf(path, sizeof(path), "fixtures/inbound/keydocs/%s", pub_file);
    char *want = slurp(path, NULL);
    char *got = sign_key_public_pem(d.key, &e);
    int same = want && got && !strcmp(want, got) && !strcmp(d.owner, owner) &&
               ((!inbox && !d.inbox) || (inbox && d.inbox && !strcmp(inbox, d.inbox)));
    snprintf(why, why_n, "owner %s inbox %s", d.owner, d.inbox ? d.inbox : "(none)");
    free(want);
    free(got);
    keycache_doc_clear(&d);
    return same;
}

static void test_keydocs(void)
{
    const char *A = "https://remote.test/users/alice";
    char k[256], why[512];
    snprintf(k, sizeof(k), "%s#main-key", A);
    CHECK(keydoc("mastodon.json", k, "rsa.pub", A, "https://remote.test/users/alice/inbox", why,
                 sizeof(why)),
          "Mastodon actor: publicKey object (%s)", why);
    snprintf(k, sizeof(k), "%s#key-2", A);
    CHECK(keydoc("array.json", k, "rsa.pub", A, "https://remote.test/users/alice/inbox", why,
                 sizeof(why)),
          "publicKey array: the entry whose id matches (%s)", why);
    snprintf(k, sizeof(k), "%s#key-1", A);
    CHECK(!keydoc("array.json", k, "rsa.pub", A, NULL, why, sizeof(why)),
          "publicKey array: the other entry's bad PEM is refused (%s)", why);
    snprintf(k, sizeof(k), "%s#ed25519-key", A);
    CHECK(keydoc("multikey.json", k, "ed.pub", A, "https://remote.test/users/alice/inbox", why,
                 sizeof(why)),
          "FEP-521a assertionMethod Multikey gives the Ed25519 key (%s)", why);
    snprintf(k, sizeof(k), "%s#main-key", A);
    CHECK(keydoc("multikey.json", k, "rsa.pub", A, "https://remote.test/users/alice/inbox", why,
                 sizeof(why)),
          "and #main-key of the same actor the RSA one (%s)", why);
    CHECK(keydoc("bare-key.json", k, "rsa.pub", A, NULL, why, sizeof(why)),
          "a bare Key with an owner (%s)", why);
    snprintf(k, sizeof(k), "%s/main-key", A);
    CHECK(keydoc("gts-stub.json", k, "rsa.pub", A, NULL, why, sizeof(why)),
          "GoToSocial: a stub actor at the key URL (%s)", why);
    snprintf(k, sizeof(k), "%s#main-key", A);
    CHECK(keydoc("other-owner.json", k, "rsa.pub", "https://remote.test/users/bob", NULL, why,
                 sizeof(why)),
          "a key owned by another actor: that owner, and no inbox taken (%s)", why);
    CHECK(!keydoc("no-match.json", k, "rsa.pub", A, NULL, why, sizeof(why)),
          "no key with the asked id is refused (%s)", why);
    CHECK(!keydoc("mastodon.json", "https://remote.test/users/alice#other", "rsa.pub", A, NULL, why,
                  sizeof(why)),
          "the same document asked for another key id is refused");
    CHECK(!keydoc("bare-key-no-owner.json", k, "rsa.pub", A, NULL, why, sizeof(why)),
          "a bare Key with no owner is refused (%s)", why);
    CHECK(!keydoc("bad-pem.json", k, "rsa.pub", A, NULL, why, sizeof(why)),
          "a PEM that does not parse is refused (%s)", why);
    snprintf(k, sizeof(k), "%s#ed25519-key", A);
    CHECK(!keydoc("bad-multibase.json", k, "ed.pub", A, NULL, why, sizeof(why)),
          "a multibase that does not parse is refused (%s)", why);
    CHECK(!keydoc("not-json.json", k, "rsa.pub", A, NULL, why, sizeof(why)),
          "a document that is not JSON is refused (%s)", why);

    char out[300];
    CHECK(keycache_url_authority("HTTPS://Remote.Test:8443/users/a#k", out, sizeof(out), 1) == 0 &&
              !strcmp(out, "remote.test:8443"),
          "authority with port, lower-cased");
    CHECK(keycache_url_authority("https://remote.test:8443/users/a", out, sizeof(out), 0) == 0 &&
              !strcmp(out, "remote.test"),
          "authority without port");
    CHECK(keycache_url_authority("https://evil.test@remote.test/x", out, sizeof(out), 0) < 0,
          "userinfo in a URL is refused");
    CHECK(keycache_url_authority("ftp://remote.test/x", out, sizeof(out), 0) < 0,
          "a scheme other than http(s) is refused");
    CHECK(keycache_url_authority("https://remote.test:80a/x", out, sizeof(out), 0) < 0,
          "a port that is not a number is refused");
}

static void test_retry_policy(void)
{
    /* RFC 9110 section 10.2.3: Retry-After is delay-seconds or an HTTP-date */
    time_t now = 1764494000; /* Sun, 30 Nov 2025 09:13:20 GMT */
    CHECK(deliver_retry_delay_ms(1, 202, NULL, now) == -1, "a 202 is not retried");
    CHECK(deliver_retry_delay_ms(1, 503, NULL, now) == 1000, "503 after try 1: 1 s");
    CHECK(deliver_retry_delay_ms(2, 0, NULL, now) == 2000, "transport error after try 2: 2 s");
    CHECK(deliver_retry_delay_ms(4, 429, NULL, now) == 8000, "429 after try 4: 8 s");
    CHECK(deliver_retry_delay_ms(5, 503, NULL, now) == -1, "no sixth try");
    CHECK(deliver_retry_delay_ms(1, 408, NULL, now) == 1000, "408 is retried");
    CHECK(deliver_retry_delay_ms(1, 404, NULL, now) == -1, "404 is final");
    CHECK(deliver_retry_delay_ms(1, 401, NULL, now) == -1, "401 is final");
    CHECK(deliver_retry_delay_ms(1, 429, "30", now) == 30000, "Retry-After: 30 waits 30 s");
    CHECK(deliver_retry_delay_ms(3, 429, "1", now) == 4000,
          "a Retry-After shorter than the backoff keeps the backoff");
    CHECK(deliver_retry_delay_ms(1, 503, "3600", now) == 60000, "Retry-After is capped at 60 s");
    CHECK(deliver_retry_delay_ms(1, 503, "Sun, 30 Nov 2025 09:13:50 GMT", now) == 30000,
          "Retry-After as an HTTP date 30 s ahead");
    CHECK(deliver_retry_delay_ms(1, 503, "Sun, 30 Nov 2025 09:00:00 GMT", now) == 1000,
          "an HTTP date in the past falls back to the backoff");
    CHECK(deliver_retry_delay_ms(1, 503, "soon", now) == 1000, "a bad Retry-After is ignored");
    CHECK(deliver_retry_delay_ms(1, 503, "30s", now) == 1000, "\"30s\" is not delay-seconds");
}

static void test_allow(struct inbound *in)
{
    struct keycache *kc = inbound_keycache(in);
    CHECK(keycache_url_allowed(kc, "https://remote.test/users/a"), "remote.test is allowed");
    CHECK(keycache_url_allowed(kc, "http://REMOTE.test:8080/users/a"), "on any port, in any case");
    CHECK(!keycache_url_allowed(kc, "https://remote.test.evil/users/a"), "remote.test.evil is not");
    CHECK(!keycache_url_allowed(kc, "https://evil.test/remote.test"), "a path naming it is not");
    CHECK(keycache_url_allowed(kc, "http://127.0.0.1:1/x"), "127.0.0.1:1 is allowed");
    CHECK(!keycache_url_allowed(kc, "http://127.0.0.1:2/x"), "127.0.0.1:2 is not");
    CHECK(!keycache_url_allowed(kc, "file:///etc/passwd"), "file: is not");
}

static void test_opts(void)
{
    struct inbound_opts *o = inbound_opts_new();
    struct flood_err e = {0};
    CHECK(inbound_opts_set(o, "fault", "flood1:x=1", &e) < 0 &&
              !strcmp(e.msg, "--fault: unknown key 'x' in 'flood1:x=1'"),
          "--fault with a bad spec is refused");
    CHECK(inbound_opts_set(o, "fault", "flood9:hang", &e) == 0, "--fault flood9:hang parses");
    CHECK(inbound_new(crowd, o, NULL, &e) == NULL &&
              strstr(e.msg, "fault: no instance 'flood9' in the crowd"),
          "but a crowd of 2 has no flood9 (%s)", e.msg);
    CHECK(inbound_opts_set(o, "resolve", "remote.test:80:127.0.0.1", &e) == 0,
          "--resolve HOST:PORT:ADDR");
    CHECK(inbound_opts_set(o, "resolve", "remote.test:http:127.0.0.1", &e) < 0,
          "--resolve with a port that is not a number is refused");
    CHECK(inbound_opts_set(o, "allow-host", "a b", &e) < 0, "--allow-host with a space is refused");
    inbound_opts_free(o);

    o = inbound_opts_new();
    CHECK(inbound_opts_set(o, "fault", "flood2:status=503,share=50%", &e) == 0,
          "fault for run.json");
    struct inbound *in = inbound_new(crowd, o, NULL, &e);
    json_t *s = in ? inbound_json(in) : NULL;
    json_t *f = json_object_get(s, "faults");
    CHECK(json_array_size(f) == 1 &&
              !strcmp(json_string_value(json_array_get(f, 0)), "flood2:status=503,share=50%"),
          "faults in force appear in inbound_json");
    json_decref(s);
    inbound_free(in, 0);
    inbound_opts_free(o);
}

int main(void)
{
    char dir[] = "/tmp/flood-test-inbound-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    struct crowd_opts co;
    crowd_opts_defaults(&co);
    co.instances = 2;
    co.actors = 3;
    co.state = dir;
    co.key_pool = 2;
    co.quiet = 1;
    struct flood_err e = {0};
    crowd = crowd_new(&co, &e);
    CHECK(crowd != NULL, "a crowd of 2 x 3 (%s)", e.msg);
    if (!crowd)
        return check_done();
    alice_key = sign_key_generate(SIGN_KEY_RSA, 2048, &e);
    other_key = sign_key_generate(SIGN_KEY_RSA, 2048, &e);
    char *alice_pem = sign_key_public_pem(alice_key, &e);

    struct inbound_opts *o = inbound_opts_new();
    inbound_opts_allow_host(o, "remote.test");
    inbound_opts_allow_host(o, "127.0.0.1:1");
    struct probes *pr = probes_new();
    struct inbound *in = inbound_new(crowd, o, pr, &e);
    CHECK(in != NULL, "inbound_new (%s)", e.msg);
    CHECK(keycache_seed_pem(inbound_keycache(in), ALICE_KEY, ALICE, alice_pem, &e) == 0,
          "alice's key seeded");

    test_keydocs();
    test_retry_policy();
    test_allow(in);
    test_rejections(in);
    test_follow(in);
    test_accept_probe(in, pr);
    test_no_verify();
    test_opts();

    inbound_free(in, 1000);
    inbound_opts_free(o);
    probes_free(pr);
    free(alice_pem);
    sign_key_free(alice_key);
    sign_key_free(other_key);
    crowd_free(crowd);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", dir);
    return check_done();
}
