/* flood/measure/fetches.c: fetch accounting (see fetches.h). The hot path is a few
 * atomic adds, a hash of the URL, a short probe of the table and a histogram record under
 * its kind's lock; the top list's lock is taken only by repeats that could enter it. */
#include "flood/measure/fetches.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "flood/core/hash.h"
#include "sign/err.h"

struct slot {
    _Atomic uint64_t key; /* the URL's hash, 0 for an empty slot */
    _Atomic uint64_t count;
};

struct fetches {
    _Atomic uint64_t requests[FETCH__COUNT], bytes[FETCH__COUNT];
    _Atomic uint64_t repeat_requests[FETCH__COUNT], repeat_urls[FETCH__COUNT];
    _Atomic uint64_t untracked;
    pthread_mutex_t serve_lock[FETCH__COUNT];
    struct hist serve[FETCH__COUNT];
    struct slot slots[FETCHES_SLOTS];
    pthread_mutex_t top_lock;
    struct fetches_top top[FETCHES_TOP];
    uint64_t top_hash[FETCHES_TOP];
    size_t n_top;
    _Atomic uint64_t top_floor; /* a repeat must exceed this count to enter the top list */
};

static const char *const kind_names[FETCH__COUNT] = {"webfinger", "nodeinfo",   "actor", "key",
                                                     "note",      "media",      "link",  "emoji",
                                                     "avatar",    "collection", "other"};

const char *fetch_kind_name(int kind)
{
    return kind >= 0 && kind < FETCH__COUNT ? kind_names[kind] : "other";
}

enum fetch_kind fetch_kind_of(enum wf_route_kind kind)
{
    switch (kind) {
    case WF_ROUTE_WEBFINGER:
    case WF_ROUTE_HOST_META:
        return FETCH_WEBFINGER;
    case WF_ROUTE_NODEINFO_WK:
    case WF_ROUTE_NODEINFO_20:
    case WF_ROUTE_NODEINFO_21:
        return FETCH_NODEINFO;
    case WF_ROUTE_ACTOR:
        return FETCH_ACTOR;
    case WF_ROUTE_KEY:
        return FETCH_KEY;
    case WF_ROUTE_NOTE:
    case WF_ROUTE_ACTIVITY:
        return FETCH_NOTE;
    case WF_ROUTE_MEDIA:
        return FETCH_MEDIA;
    case WF_ROUTE_PAGE:
        return FETCH_LINK;
    case WF_ROUTE_EMOJI:
    case WF_ROUTE_EMOJI_DOC:
        return FETCH_EMOJI;
    case WF_ROUTE_AVATAR:
    case WF_ROUTE_HEADER:
        return FETCH_AVATAR;
    case WF_ROUTE_INBOX:
    case WF_ROUTE_SHARED_INBOX:
    case WF_ROUTE_OUTBOX:
    case WF_ROUTE_FOLLOWERS:
    case WF_ROUTE_FOLLOWING:
        return FETCH_COLLECTION;
    default:
        return FETCH_OTHER;
    }
}

struct fetches *fetches_new(void)
{
    struct fetches *f = flood_xcalloc(1, sizeof(*f));
    for (int k = 0; k < FETCH__COUNT; k++) {
        pthread_mutex_init(&f->serve_lock[k], NULL);
        hist_init(&f->serve[k]);
    }
    pthread_mutex_init(&f->top_lock, NULL);
    atomic_store(&f->top_floor, 1);
    return f;
}

void fetches_free(struct fetches *f)
{
    if (!f)
        return;
    for (int k = 0; k < FETCH__COUNT; k++)
        pthread_mutex_destroy(&f->serve_lock[k]);
    pthread_mutex_destroy(&f->top_lock);
    free(f);
}

/* A URL's key in the table: FNV-1a over it, 64 bits, its top 4 bits replaced by the
 * fetch's kind (a URL has one kind: its route's), so that a table written out
 * (fetches_write_urls) says each URL's kind; never 0 (the empty slot). */
static uint64_t url_key(const char *s, size_t len, int kind)
{
    uint64_t h = hash_fnv1a(s, len);
    h = (h & ~FETCHES_KIND_MASK) | (uint64_t)kind << FETCHES_KIND_SHIFT;
    return h ? h : 1;
}

/* The slot of hash h (claimed when new), or NULL when its probe window is full. */
static struct slot *slot_of(struct fetches *f, uint64_t h)
{
    for (unsigned i = 0; i < FETCHES_PROBES; i++) {
        struct slot *s = &f->slots[(h + i) & (FETCHES_SLOTS - 1)];
        uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
        if (k == 0) {
            uint64_t empty = 0;
            if (atomic_compare_exchange_strong(&s->key, &empty, h))
                return s;
            k = empty; /* another thread claimed it first: maybe for the same URL */
        }
        if (k == h)
            return s;
    }
    return NULL;
}

/* A URL fetched count times (count >= 2): into the top list if it ranks. */
static void top_update(struct fetches *f, uint64_t h, const char *url, size_t len, uint64_t count,
                       int kind)
{
    if (count <= atomic_load_explicit(&f->top_floor, memory_order_relaxed))
        return;
    pthread_mutex_lock(&f->top_lock);
    size_t i = 0, min = 0;
    while (i < f->n_top && f->top_hash[i] != h)
        i++;
    if (i == f->n_top) {
        if (f->n_top < FETCHES_TOP) {
            f->n_top++;
        } else {
            for (size_t j = 1; j < f->n_top; j++)
                if (f->top[j].count < f->top[min].count)
                    min = j;
            i = count > f->top[min].count ? min : FETCHES_TOP;
        }
        if (i < FETCHES_TOP) {
            size_t n = len < FETCHES_URL_MAX - 1 ? len : FETCHES_URL_MAX - 1;
            /* printable ASCII only: a Host header may hold anything, JSON wants UTF-8 */
            for (size_t j = 0; j < n; j++)
                f->top[i].url[j] = url[j] > 0x20 && url[j] < 0x7f ? url[j] : '?';
            f->top[i].url[n] = '\0';
            f->top[i].kind = kind;
            f->top_hash[i] = h;
            f->top[i].count = 0;
        }
    }
    if (i < FETCHES_TOP && count > f->top[i].count)
        f->top[i].count = count;
    if (f->n_top == FETCHES_TOP) {
        uint64_t floor = f->top[0].count;
        for (size_t j = 1; j < f->n_top; j++)
            if (f->top[j].count < floor)
                floor = f->top[j].count;
        atomic_store_explicit(&f->top_floor, floor, memory_order_relaxed);
    }
    pthread_mutex_unlock(&f->top_lock);
}

void fetches_record(struct fetches *f, enum fetch_kind kind, const char *url, size_t len,
                    uint64_t bytes, uint64_t serve_us)
{
    if ((int)kind < 0 || kind >= FETCH__COUNT)
        kind = FETCH_OTHER;
    atomic_fetch_add_explicit(&f->requests[kind], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&f->bytes[kind], bytes, memory_order_relaxed);
    pthread_mutex_lock(&f->serve_lock[kind]);
    hist_record(&f->serve[kind], serve_us);
    pthread_mutex_unlock(&f->serve_lock[kind]);

    uint64_t h = url_key(url, len, (int)kind);
    struct slot *s = slot_of(f, h);
    if (!s) {
        atomic_fetch_add_explicit(&f->untracked, 1, memory_order_relaxed);
        return;
    }
    uint64_t count = atomic_fetch_add_explicit(&s->count, 1, memory_order_relaxed) + 1;
    if (count < 2)
        return;
    atomic_fetch_add_explicit(&f->repeat_requests[kind], 1, memory_order_relaxed);
    if (count == 2)
        atomic_fetch_add_explicit(&f->repeat_urls[kind], 1, memory_order_relaxed);
    top_update(f, h, url, len, count, kind);
}

uint64_t fetches_count(struct fetches *f, int kind)
{
    if (kind < 0 || kind >= FETCH__COUNT)
        return 0;
    return atomic_load_explicit(&f->requests[kind], memory_order_relaxed);
}

uint64_t fetches_count_all(struct fetches *f)
{
    uint64_t n = 0;
    for (int k = 0; k < FETCH__COUNT; k++)
        n += fetches_count(f, k);
    return n;
}

void fetches_kind_get(struct fetches *f, int kind, struct fetches_kind *out)
{
    out->requests = atomic_load(&f->requests[kind]);
    out->bytes = atomic_load(&f->bytes[kind]);
    out->repeat_requests = atomic_load(&f->repeat_requests[kind]);
    out->repeat_urls = atomic_load(&f->repeat_urls[kind]);
    pthread_mutex_lock(&f->serve_lock[kind]);
    out->serve = f->serve[kind];
    pthread_mutex_unlock(&f->serve_lock[kind]);
}

static int by_count(const void *a, const void *b)
{
    const struct fetches_top *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return strcmp(x->url, y->url);
}

size_t fetches_top_get(struct fetches *f, struct fetches_top *out, size_t max)
{
    struct fetches_top all[FETCHES_TOP];
    pthread_mutex_lock(&f->top_lock);
    size_t n = f->n_top;
    memcpy(all, f->top, n * sizeof(all[0]));
    pthread_mutex_unlock(&f->top_lock);
    qsort(all, n, sizeof(all[0]), by_count);
    if (n > max)
        n = max;
    memcpy(out, all, n * sizeof(all[0]));
    return n;
}

uint64_t fetches_untracked(struct fetches *f)
{
    return atomic_load(&f->untracked);
}

int fetches_write_urls(struct fetches *f, FILE *out)
{
    for (size_t i = 0; i < FETCHES_SLOTS; i++) {
        uint64_t k = atomic_load_explicit(&f->slots[i].key, memory_order_acquire);
        uint64_t n = atomic_load_explicit(&f->slots[i].count, memory_order_relaxed);
        if (k && n)
            fprintf(out, "%016" PRIx64 "\t%" PRIu64 "\n", k, n);
    }
    return ferror(out) ? -1 : 0;
}

int fetches_add_url(struct fetches *f, uint64_t key, uint64_t count)
{
    if (!key || (key >> FETCHES_KIND_SHIFT) >= FETCH__COUNT || !count)
        return -1;
    struct slot *s = slot_of(f, key);
    if (!s) {
        atomic_fetch_add_explicit(&f->untracked, 1, memory_order_relaxed);
        return 1;
    }
    atomic_fetch_add_explicit(&s->count, count, memory_order_relaxed);
    return 0;
}

void fetches_add_kind(struct fetches *f, int kind, uint64_t requests, uint64_t bytes,
                      const struct hist *serve)
{
    if (kind < 0 || kind >= FETCH__COUNT)
        return;
    atomic_fetch_add_explicit(&f->requests[kind], requests, memory_order_relaxed);
    atomic_fetch_add_explicit(&f->bytes[kind], bytes, memory_order_relaxed);
    pthread_mutex_lock(&f->serve_lock[kind]);
    hist_merge(&f->serve[kind], serve);
    pthread_mutex_unlock(&f->serve_lock[kind]);
}

void fetches_add_untracked(struct fetches *f, uint64_t urls)
{
    atomic_fetch_add_explicit(&f->untracked, urls, memory_order_relaxed);
}

/* The slot holding key, or NULL (never claims one). */
static struct slot *slot_find(struct fetches *f, uint64_t key)
{
    for (unsigned i = 0; i < FETCHES_PROBES; i++) {
        struct slot *s = &f->slots[(key + i) & (FETCHES_SLOTS - 1)];
        uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
        if (k == key)
            return s;
        if (k == 0)
            return NULL;
    }
    return NULL;
}

void fetches_merged(struct fetches *f, const struct fetches_top *cand, size_t n)
{
    for (int k = 0; k < FETCH__COUNT; k++) {
        atomic_store(&f->repeat_requests[k], 0);
        atomic_store(&f->repeat_urls[k], 0);
    }
    for (size_t i = 0; i < FETCHES_SLOTS; i++) {
        uint64_t key = atomic_load(&f->slots[i].key), count = atomic_load(&f->slots[i].count);
        int kind = (int)(key >> FETCHES_KIND_SHIFT);
        if (count < 2 || kind >= FETCH__COUNT)
            continue;
        atomic_fetch_add(&f->repeat_requests[kind], count - 1);
        atomic_fetch_add(&f->repeat_urls[kind], 1);
    }
    for (size_t i = 0; i < n; i++) {
        int kind = cand[i].kind >= 0 && cand[i].kind < FETCH__COUNT ? cand[i].kind : FETCH_OTHER;
        size_t len = strlen(cand[i].url);
        uint64_t key = url_key(cand[i].url, len, kind);
        struct slot *s = slot_find(f, key);
        /* a URL its shard had to shorten or mend is not found by its key: its own count */
        uint64_t count = s ? atomic_load(&s->count) : cand[i].count;
        if (count >= 2)
            top_update(f, key, cand[i].url, len, count, kind);
    }
}

static double ratio(uint64_t a, uint64_t b)
{
    return b ? (double)a / (double)b : 0.0;
}

json_t *fetches_json(struct fetches *f, uint64_t sent, const char *const *type_names,
                     const uint64_t *type_sent, size_t n_types)
{
    json_t *root = json_object(), *by = json_object(), *amp = json_object();
    struct fetches_kind t = {0};
    struct fetches_kind *snap = flood_xmalloc(sizeof(*snap)); /* a hist: too big for a stack */
    uint64_t counts[FETCH__COUNT];
    for (int i = 0; i < FETCH__COUNT; i++) {
        const struct fetches_kind *k = snap;
        fetches_kind_get(f, i, snap);
        counts[i] = k->requests;
        t.requests += k->requests;
        t.bytes += k->bytes;
        t.repeat_requests += k->repeat_requests;
        t.repeat_urls += k->repeat_urls;
        json_object_set_new(by, fetch_kind_name(i),
                            json_pack("{s:I,s:I,s:I,s:I,s:{s:f,s:f,s:f}}", "requests",
                                      (json_int_t)k->requests, "bytes", (json_int_t)k->bytes,
                                      "repeat_requests", (json_int_t)k->repeat_requests,
                                      "repeat_urls", (json_int_t)k->repeat_urls, "serve_ms", "p50",
                                      hist_value_at_percentile(&k->serve, 50) / 1000.0, "p99",
                                      hist_value_at_percentile(&k->serve, 99) / 1000.0, "max",
                                      hist_max(&k->serve) / 1000.0));
        json_object_set_new(amp, fetch_kind_name(i), json_real(ratio(k->requests, sent)));
    }
    free(snap);
    json_object_set_new(amp, "total", json_real(ratio(t.requests, sent)));
    json_object_set_new(root, "by_kind", by);
    json_object_set_new(root, "total",
                        json_pack("{s:I,s:I,s:I,s:I}", "requests", (json_int_t)t.requests, "bytes",
                                  (json_int_t)t.bytes, "repeat_requests",
                                  (json_int_t)t.repeat_requests, "repeat_urls",
                                  (json_int_t)t.repeat_urls));
    struct fetches_top top[FETCHES_TOP];
    size_t n = fetches_top_get(f, top, FETCHES_TOP);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, json_pack("{s:s,s:I,s:s}", "url", top[i].url, "count",
                                             (json_int_t)top[i].count, "kind",
                                             fetch_kind_name(top[i].kind)));
    json_object_set_new(root, "top_repeats", arr);
    json_object_set_new(root, "untracked_urls", json_integer((json_int_t)fetches_untracked(f)));
    json_object_set_new(root, "sent", json_integer((json_int_t)sent));
    json_object_set_new(root, "amplification", amp);
    json_t *per = json_object();
    for (size_t j = 0; j < n_types; j++) {
        if (!type_sent[j])
            continue;
        json_t *o = json_object();
        for (int i = 0; i < FETCH__COUNT; i++)
            json_object_set_new(o, fetch_kind_name(i), json_real(ratio(counts[i], type_sent[j])));
        json_object_set_new(per, type_names[j], o);
    }
    json_object_set_new(root, "amplification_by_type", per);
    return root;
}
