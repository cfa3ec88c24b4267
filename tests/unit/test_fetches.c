/* tests/unit/test_fetches.c: fetch accounting (flood/measure/fetches.c): kinds from
 * routes, repeats, the top list, the fixed memory bound, threads, run.json's shape, and
 * accountings merged (flood merge) as one process would have counted. */
#include "tests/check.h"
#include "flood/measure/fetches.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void rec(struct fetches *f, enum fetch_kind k, const char *url, uint64_t bytes)
{
    fetches_record(f, k, url, strlen(url), bytes, 1500);
}

static void test_kinds(void)
{
    static const struct {
        enum wf_route_kind route;
        enum fetch_kind want;
    } cases[] = {
        {WF_ROUTE_WEBFINGER, FETCH_WEBFINGER},
        {WF_ROUTE_HOST_META, FETCH_WEBFINGER},
        {WF_ROUTE_NODEINFO_WK, FETCH_NODEINFO},
        {WF_ROUTE_NODEINFO_21, FETCH_NODEINFO},
        {WF_ROUTE_ACTOR, FETCH_ACTOR},
        {WF_ROUTE_KEY, FETCH_KEY},
        {WF_ROUTE_NOTE, FETCH_NOTE},
        {WF_ROUTE_ACTIVITY, FETCH_NOTE},
        {WF_ROUTE_MEDIA, FETCH_MEDIA},
        {WF_ROUTE_PAGE, FETCH_LINK},
        {WF_ROUTE_EMOJI, FETCH_EMOJI},
        {WF_ROUTE_EMOJI_DOC, FETCH_EMOJI},
        {WF_ROUTE_AVATAR, FETCH_AVATAR},
        {WF_ROUTE_HEADER, FETCH_AVATAR},
        {WF_ROUTE_OUTBOX, FETCH_COLLECTION},
        {WF_ROUTE_FOLLOWERS, FETCH_COLLECTION},
        {WF_ROUTE_FOLLOWING, FETCH_COLLECTION},
        {WF_ROUTE_INBOX, FETCH_COLLECTION},
        {WF_ROUTE_SHARED_INBOX, FETCH_COLLECTION},
        {WF_ROUTE_NONE, FETCH_OTHER},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        CHECK(fetch_kind_of(cases[i].route) == cases[i].want, "route %d is %s", cases[i].route,
              fetch_kind_name(cases[i].want));
    CHECK_STR(fetch_kind_name(FETCH_AVATAR), "avatar", "kind name avatar");
    CHECK_STR(fetch_kind_name(99), "other", "an unknown kind's name is other");
}

static void test_repeats(void)
{
    struct fetches *f = fetches_new();
    rec(f, FETCH_ACTOR, "flood1.test/users/user1", 1000);
    rec(f, FETCH_ACTOR, "flood1.test/users/user2", 1000);
    rec(f, FETCH_ACTOR, "flood1.test/users/user1", 1000);
    rec(f, FETCH_ACTOR, "flood1.test/users/user1", 1000);
    rec(f, FETCH_MEDIA, "flood1.test/media/1-1x1-72.png", 72);
    rec(f, FETCH_MEDIA, "flood2.test/media/1-1x1-72.png", 72); /* another host: another URL */
    struct fetches_kind k;
    fetches_kind_get(f, FETCH_ACTOR, &k);
    CHECK(k.requests == 4 && k.bytes == 4000, "actor: 4 requests, 4000 bytes");
    CHECK(k.repeat_requests == 2 && k.repeat_urls == 1, "actor: 2 repeats of 1 URL");
    CHECK(hist_count(&k.serve) == 4 && hist_max(&k.serve) == 1500, "actor: serving times kept");
    fetches_kind_get(f, FETCH_MEDIA, &k);
    CHECK(k.requests == 2 && k.repeat_requests == 0 && k.repeat_urls == 0,
          "media: the same path on two hosts is no repeat");
    CHECK(fetches_count(f, FETCH_ACTOR) == 4 && fetches_count_all(f) == 6, "running counts");
    struct fetches_top top[FETCHES_TOP];
    size_t n = fetches_top_get(f, top, FETCHES_TOP);
    CHECK(n == 1 && !strcmp(top[0].url, "flood1.test/users/user1") && top[0].count == 3 &&
              top[0].kind == FETCH_ACTOR,
          "top: the one repeated URL, 3 fetches");

    json_t *j = fetches_json(f, 4, (const char *const[]){"create", "like"}, (uint64_t[]){2, 0}, 2);
    json_t *actor = json_object_get(json_object_get(j, "by_kind"), "actor");
    CHECK(json_integer_value(json_object_get(actor, "requests")) == 4 &&
              json_integer_value(json_object_get(actor, "repeat_requests")) == 2 &&
              json_integer_value(json_object_get(actor, "repeat_urls")) == 1 &&
              json_real_value(json_object_get(json_object_get(actor, "serve_ms"), "max")) == 1.5,
          "json: by_kind.actor");
    CHECK(json_integer_value(json_object_get(json_object_get(j, "total"), "requests")) == 6,
          "json: total.requests");
    CHECK(json_real_value(json_object_get(json_object_get(j, "amplification"), "actor")) == 1.0 &&
              json_real_value(json_object_get(json_object_get(j, "amplification"), "media")) == 0.5,
          "json: amplification = fetches / sent");
    json_t *per = json_object_get(j, "amplification_by_type");
    CHECK(json_real_value(json_object_get(json_object_get(per, "create"), "actor")) == 2.0 &&
              !json_object_get(per, "like"),
          "json: per type, types with none sent left out");
    CHECK(json_array_size(json_object_get(j, "top_repeats")) == 1, "json: top_repeats");
    CHECK(json_object_size(json_object_get(j, "by_kind")) == FETCH__COUNT, "json: every kind");
    json_decref(j);
    fetches_free(f);
}

static void test_top(void)
{
    struct fetches *f = fetches_new();
    char url[64];
    /* URL i fetched i+1 times, 20 URLs: the top ten are 10..19 */
    for (int i = 0; i < 20; i++)
        for (int r = 0; r <= i; r++) {
            snprintf(url, sizeof(url), "flood1.test/notes/%d", i);
            rec(f, FETCH_NOTE, url, 10);
        }
    struct fetches_top top[FETCHES_TOP];
    size_t n = fetches_top_get(f, top, FETCHES_TOP);
    int ok = n == FETCHES_TOP;
    for (size_t i = 0; ok && i < n; i++) {
        snprintf(url, sizeof(url), "flood1.test/notes/%zu", 19 - i);
        ok = !strcmp(top[i].url, url) && top[i].count == 20 - i;
    }
    CHECK(ok, "top: the ten most fetched, most first");
    n = fetches_top_get(f, top, 3);
    CHECK(n == 3 && top[0].count == 20, "top: at most max");
    struct fetches_kind k;
    fetches_kind_get(f, FETCH_NOTE, &k);
    CHECK(k.repeat_urls == 19 && k.repeat_requests == 210 - 20, "repeats: 19 URLs, 190 requests");
    fetches_free(f);
}

static void test_bound(void)
{
    struct fetches *f = fetches_new();
    char url[64];
    unsigned n = FETCHES_SLOTS + 5000;
    for (unsigned i = 0; i < n; i++) {
        snprintf(url, sizeof(url), "flood1.test/media/%u-1x1-72.png", i);
        rec(f, FETCH_MEDIA, url, 72);
    }
    struct fetches_kind k;
    fetches_kind_get(f, FETCH_MEDIA, &k);
    CHECK(k.requests == n && k.repeat_requests == 0,
          "more URLs than slots: all counted, no repeat");
    CHECK(fetches_untracked(f) >= 5000, "the overflow is untracked (%llu), memory stays fixed",
          (unsigned long long)fetches_untracked(f));
    fetches_free(f);
}

struct worker {
    struct fetches *f;
    int id;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    char url[64];
    for (int r = 0; r < 2000; r++) {
        snprintf(url, sizeof(url), "flood1.test/users/user%d", r % 100);
        rec(w->f, FETCH_ACTOR, url, 10);
        snprintf(url, sizeof(url), "flood1.test/media/%d-%d", w->id, r);
        rec(w->f, FETCH_MEDIA, url, 1);
    }
    return NULL;
}

static void test_threads(void)
{
    struct fetches *f = fetches_new();
    enum { T = 4 };
    pthread_t th[T];
    struct worker w[T];
    for (int i = 0; i < T; i++) {
        w[i] = (struct worker){f, i};
        pthread_create(&th[i], NULL, work, &w[i]);
    }
    for (int i = 0; i < T; i++)
        pthread_join(th[i], NULL);
    struct fetches_kind k;
    fetches_kind_get(f, FETCH_ACTOR, &k);
    CHECK(k.requests == T * 2000 && k.bytes == T * 20000 && hist_count(&k.serve) == T * 2000,
          "threads: actor counts exact");
    CHECK(k.repeat_urls == 100 && k.repeat_requests == T * 2000 - 100,
          "threads: 100 URLs repeated, every fetch but the first of each a repeat");
    fetches_kind_get(f, FETCH_MEDIA, &k);
    CHECK(k.requests == T * 2000 && k.repeat_requests == 0, "threads: distinct media, no repeat");
    struct fetches_top top[FETCHES_TOP];
    size_t n = fetches_top_get(f, top, FETCHES_TOP);
    CHECK(n == FETCHES_TOP && top[0].count == T * 20 && top[9].count == T * 20,
          "threads: the top list holds the final counts");
    fetches_free(f);
}

/* f's URL table written out and added into m, as flood merge does with fetches.tsv;
 * also checks that each key's first hex digit is a kind. */
static int add_table(struct fetches *m, struct fetches *f)
{
    FILE *t = tmpfile();
    if (!t || fetches_write_urls(f, t))
        return -1;
    rewind(t);
    uint64_t key, count;
    int ok = 1;
    while (fscanf(t, "%" SCNx64 "\t%" SCNu64 "\n", &key, &count) == 2)
        ok &= (key >> FETCHES_KIND_SHIFT) < FETCH__COUNT && fetches_add_url(m, key, count) == 0;
    fclose(t);
    return ok ? 0 : -1;
}

static void test_merge(void)
{
    static const struct {
        int shard; /* 0, 1: which accounting saw it */
        enum fetch_kind kind;
        const char *url;
    } seen[] = {
        {0, FETCH_ACTOR, "flood1.test/users/user1"}, {0, FETCH_ACTOR, "flood1.test/users/user1"},
        {1, FETCH_ACTOR, "flood1.test/users/user1"}, {0, FETCH_ACTOR, "flood1.test/users/user2"},
        {1, FETCH_ACTOR, "flood1.test/users/user2"}, {0, FETCH_KEY, "flood1.test/users/user2#k"},
        {1, FETCH_KEY, "flood1.test/users/user2#k"}, {1, FETCH_KEY, "flood1.test/users/user2#k"},
        {0, FETCH_MEDIA, "flood2.test/media/1.png"}, {1, FETCH_NOTE, "flood2.test/notes/1"},
    };
    struct fetches *one = fetches_new(), *sh[2] = {fetches_new(), fetches_new()};
    for (size_t i = 0; i < sizeof(seen) / sizeof(seen[0]); i++) {
        rec(one, seen[i].kind, seen[i].url, 100 + i);
        rec(sh[seen[i].shard], seen[i].kind, seen[i].url, 100 + i);
    }
    struct fetches *m = fetches_new();
    struct fetches_top cand[2 * FETCHES_TOP];
    size_t nc = 0;
    struct fetches_kind *k = malloc(sizeof(*k));
    for (int s = 0; s < 2; s++) {
        CHECK(add_table(m, sh[s]) == 0, "merge: shard %d's table written, keys carry kinds, added",
              s);
        for (int i = 0; i < FETCH__COUNT; i++) {
            fetches_kind_get(sh[s], i, k);
            fetches_add_kind(m, i, k->requests, k->bytes, &k->serve);
        }
        nc += fetches_top_get(sh[s], cand + nc, FETCHES_TOP);
    }
    fetches_merged(m, cand, nc);
    int same = 1;
    for (int i = 0; i < FETCH__COUNT; i++) {
        struct fetches_kind a;
        fetches_kind_get(one, i, k);
        fetches_kind_get(m, i, &a);
        same &= a.requests == k->requests && a.bytes == k->bytes &&
                a.repeat_requests == k->repeat_requests && a.repeat_urls == k->repeat_urls &&
                hist_count(&a.serve) == hist_count(&k->serve);
    }
    CHECK(same, "merge: every kind's requests, bytes, repeats and serving times = one process's");
    fetches_kind_get(m, FETCH_ACTOR, k);
    CHECK(k->repeat_requests == 3 && k->repeat_urls == 2,
          "merge: actors: 3 repeats of 2 URLs, one of them seen once by each shard");
    fetches_kind_get(m, FETCH_KEY, k);
    CHECK(k->repeat_requests == 2 && k->repeat_urls == 1, "merge: the key: 2 repeats");
    free(k);
    struct fetches_top top[FETCHES_TOP];
    size_t n = fetches_top_get(m, top, FETCHES_TOP);
    CHECK(n == 2 && !strcmp(top[0].url, "flood1.test/users/user1") && top[0].count == 3 &&
              top[0].kind == FETCH_ACTOR && !strcmp(top[1].url, "flood1.test/users/user2#k") &&
              top[1].count == 3 && top[1].kind == FETCH_KEY,
          "merge: the top list from the shards' own tops, counted in all (3 and 3)");
    CHECK(fetches_add_url(m, 0, 1) == -1 && fetches_add_url(m, 0xf000000000000001ULL, 1) == -1 &&
              fetches_add_url(m, 0x2000000000000001ULL, 0) == -1,
          "merge: key 0, an unknown kind and a count of 0 refused");
    fetches_free(one);
    fetches_free(sh[0]);
    fetches_free(sh[1]);
    fetches_free(m);
}

int main(void)
{
    test_kinds();
    test_repeats();
    test_top();
    test_bound();
    test_threads();
    test_merge();
    return check_done();
}
