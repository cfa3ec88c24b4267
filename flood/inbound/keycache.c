/* flood/inbound/keycache.c: senders' keys by keyId and actors' inboxes, fetched with signed GETs
 * from allowed hosts only (see keycache.h). */
#include "flood/inbound/keycache.h"

#include <ctype.h>
#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "flood/core/clock.h"
#include "flood/core/hash.h"
#include "flood/core/http.h"
#include "flood/core/url.h"

/* ---- a bounded string map, oldest entry evicted first ---------------------------------- */

struct smap_node {
    char *name;
    void *val;
    struct smap_node *next; /* bucket chain */
};

struct smap {
    struct smap_node **buckets;
    size_t n_buckets;         /* a power of two */
    struct smap_node **order; /* ring of nodes in insertion order */
    size_t cap, head, count;
    void (*drop)(void *val);
};

static void smap_init(struct smap *m, size_t cap, void (*drop)(void *))
{
    m->cap = cap ? cap : 1;
    m->n_buckets = 16;
    while (m->n_buckets < m->cap)
        m->n_buckets <<= 1;
    m->buckets = flood_xcalloc(m->n_buckets, sizeof(*m->buckets));
    m->order = flood_xcalloc(m->cap, sizeof(*m->order));
    m->head = m->count = 0;
    m->drop = drop;
}

static struct smap_node **smap_slot(struct smap *m, const char *name)
{
    struct smap_node **p = &m->buckets[hash_fnv1a_str(name) & (m->n_buckets - 1)];
    while (*p && strcmp((*p)->name, name))
        p = &(*p)->next;
    return p;
}

static void *smap_get(struct smap *m, const char *name)
{
    struct smap_node *n = *smap_slot(m, name);
    return n ? n->val : NULL;
}

/* Put val under name (taking it); an old value is dropped. */
static void smap_put(struct smap *m, const char *name, void *val)
{
    struct smap_node **p = smap_slot(m, name);
    if (*p) {
        m->drop((*p)->val);
        (*p)->val = val;
        return;
    }
    if (m->count == m->cap) {
        struct smap_node *old = m->order[m->head];
        struct smap_node **q = smap_slot(m, old->name);
        *q = old->next;
        m->drop(old->val);
        free(old->name);
        free(old);
        m->order[m->head] = NULL;
        m->head = (m->head + 1) % m->cap;
        m->count--;
        p = smap_slot(m, name);
    }
    struct smap_node *n = flood_xcalloc(1, sizeof(*n));
    n->name = flood_xstrdup(name);
    n->val = val;
    *p = n;
    m->order[(m->head + m->count) % m->cap] = n;
    m->count++;
}

static void smap_clear(struct smap *m)
{
    for (size_t i = 0; i < m->count; i++) {
        struct smap_node *n = m->order[(m->head + i) % m->cap];
        m->drop(n->val);
        free(n->name);
        free(n);
    }
    free(m->buckets);
    free(m->order);
}

/* ---- key documents (pure) -------------------------------------------------------------- */

void keycache_doc_clear(struct keycache_doc *d)
{
    sign_key_free(d->key);
    free(d->owner);
    free(d->inbox);
    memset(d, 0, sizeof(*d));
}

static const char *str_member(const json_t *o, const char *name)
{
    const json_t *v = json_object_get(o, name);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* The entry of a publicKey / assertionMethod value (object or array) whose id is key_id. */
static const json_t *find_entry(const json_t *v, const char *key_id)
{
    if (json_is_object(v)) {
        const char *id = str_member(v, "id");
        return id && !strcmp(id, key_id) ? v : NULL;
    }
    if (json_is_array(v)) {
        size_t i;
        const json_t *e;
        json_array_foreach(v, i, e)
        {
            const char *id = json_is_object(e) ? str_member(e, "id") : NULL;
            if (id && !strcmp(id, key_id))
                return e;
        }
    }
    return NULL;
}

/* Key from a publicKey-style entry (publicKeyPem) or a Multikey (publicKeyMultibase). */
static struct sign_key *entry_key(const json_t *e, struct flood_err *err)
{
    const char *pem = str_member(e, "publicKeyPem");
    if (pem)
        return sign_key_from_pem(pem, 0, err);
    const char *mb = str_member(e, "publicKeyMultibase");
    if (mb)
        return sign_key_from_multibase(mb, err);
    flood_err_set(err, FLOOD_EINVAL, "keycache: no publicKeyPem or publicKeyMultibase");
    return NULL;
}

int keycache_parse_key_doc(const char *body, size_t len, const char *key_id,
                           struct keycache_doc *out, struct flood_err *err)
{
    memset(out, 0, sizeof(*out));
    json_error_t je;
    json_t *doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    if (!json_is_object(doc)) {
        flood_err_set(err, FLOOD_EINVAL, "keycache: key document for '%s' is not a JSON object",
                      key_id);
        json_decref(doc);
        return -1;
    }
    const char *doc_id = str_member(doc, "id");
    const char *owner = NULL;
    const json_t *e = find_entry(json_object_get(doc, "publicKey"), key_id);
    if (e) {
        owner = str_member(e, "owner");
    } else if ((e = find_entry(json_object_get(doc, "assertionMethod"), key_id))) {
        owner = str_member(e, "controller"); /* FEP-521a Multikey */
    } else if (doc_id && !strcmp(doc_id, key_id) &&
               (json_object_get(doc, "publicKeyPem") ||
                json_object_get(doc, "publicKeyMultibase"))) {
        e = doc; /* a bare Key / CryptographicKey object */
        owner = str_member(doc, "owner");
        if (!owner)
            owner = str_member(doc, "controller");
        if (!owner) {
            flood_err_set(err, FLOOD_EINVAL, "keycache: key '%s' has no owner", key_id);
            json_decref(doc);
            return -1;
        }
    } else {
        /* a keyId that is the actor's URL itself (no fragment), with one publicKey */
        const json_t *pk = json_object_get(doc, "publicKey");
        if (doc_id && !strchr(key_id, '#') && !strcmp(doc_id, key_id) &&
            (json_is_object(pk) || (json_is_array(pk) && json_array_size(pk) == 1)))
            e = json_is_object(pk) ? pk : json_array_get(pk, 0);
        if (!json_is_object(e)) {
            flood_err_set(err, FLOOD_EINVAL, "keycache: no key '%s' in its document", key_id);
            json_decref(doc);
            return -1;
        }
        owner = str_member(e, "owner");
    }
    if (!owner)
        owner = doc_id;
    if (!owner) {
        flood_err_set(err, FLOOD_EINVAL, "keycache: key '%s' has no owner", key_id);
        json_decref(doc);
        return -1;
    }
    out->key = entry_key(e, err);
    if (!out->key) {
        json_decref(doc);
        return -1;
    }
    out->owner = flood_xstrdup(owner);
    const char *inbox = str_member(doc, "inbox");
    if (inbox && doc_id && !strcmp(doc_id, owner))
        out->inbox = flood_xstrdup(inbox);
    json_decref(doc);
    return 0;
}

char *keycache_parse_inbox(const char *body, size_t len, const char *actor, struct flood_err *err)
{
    json_error_t je;
    json_t *doc = json_loadb(body, len, 0, &je);
    const char *id = json_is_object(doc) ? str_member(doc, "id") : NULL;
    const char *inbox = json_is_object(doc) ? str_member(doc, "inbox") : NULL;
    char *r = NULL;
    if (!id || strcmp(id, actor))
        flood_err_set(err, FLOOD_EINVAL, "keycache: document of '%s' is not that actor", actor);
    else if (!inbox || strncmp(inbox, "http", 4))
        flood_err_set(err, FLOOD_EINVAL, "keycache: actor '%s' has no inbox", actor);
    else
        r = flood_xstrdup(inbox);
    json_decref(doc);
    return r;
}

int keycache_url_authority(const char *url, char *out, size_t size, int with_port)
{
    struct url_parts u;
    struct flood_err err;
    if (url_split(url, &u, &err) < 0)
        return -1;
    const char *v = with_port ? u.authority : u.host;
    size_t n = strlen(v);
    if (n + 1 > size)
        return -1;
    memcpy(out, v, n + 1);
    return 0;
}

/* ---- the cache ----------------------------------------------------------------------- */

struct keycache {
    struct crowd *crowd;
    pthread_mutex_t lock;
    struct smap keys;    /* key_id -> struct keycache_key */
    struct smap inboxes; /* actor -> char * */
    char **allow;
    size_t n_allow;
    char **resolve; /* curl-style HOST:PORT:ADDR entries */
    size_t n_resolve;
    struct keycache_stats stats;
};

void keycache_key_release(struct keycache_key *k)
{
    if (!k || atomic_fetch_sub(&k->refs, 1) != 1)
        return;
    sign_key_free(k->key);
    free(k->key_id);
    free(k->owner);
    free(k);
}

static void drop_key(void *v)
{
    keycache_key_release(v);
}

struct keycache *keycache_new(struct crowd *crowd, size_t cap)
{
    struct keycache *kc = flood_xcalloc(1, sizeof(*kc));
    kc->crowd = crowd;
    pthread_mutex_init(&kc->lock, NULL);
    smap_init(&kc->keys, cap ? cap : KEYCACHE_CAP_DEFAULT, drop_key);
    smap_init(&kc->inboxes, cap ? cap : KEYCACHE_CAP_DEFAULT, free);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    return kc;
}

void keycache_free(struct keycache *kc)
{
    if (!kc)
        return;
    smap_clear(&kc->keys);
    smap_clear(&kc->inboxes);
    for (size_t i = 0; i < kc->n_allow; i++)
        free(kc->allow[i]);
    free(kc->allow);
    for (size_t i = 0; i < kc->n_resolve; i++)
        free(kc->resolve[i]);
    free(kc->resolve);
    pthread_mutex_destroy(&kc->lock);
    free(kc);
    curl_global_cleanup();
}

void keycache_allow_host(struct keycache *kc, const char *host)
{
    char *h = flood_xstrdup(host);
    for (char *p = h; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    pthread_mutex_lock(&kc->lock);
    kc->allow = flood_xrealloc(kc->allow, (kc->n_allow + 1) * sizeof(*kc->allow));
    kc->allow[kc->n_allow++] = h;
    pthread_mutex_unlock(&kc->lock);
}

void keycache_add_resolve(struct keycache *kc, const char *entry)
{
    pthread_mutex_lock(&kc->lock);
    kc->resolve = flood_xrealloc(kc->resolve, (kc->n_resolve + 1) * sizeof(*kc->resolve));
    kc->resolve[kc->n_resolve++] = flood_xstrdup(entry);
    pthread_mutex_unlock(&kc->lock);
}

int keycache_url_allowed(struct keycache *kc, const char *url)
{
    struct url_parts u;
    struct flood_err err;
    if (url_split(url, &u, &err) < 0)
        return 0;
    /* an entry with a port allows that port (written or the scheme's default), one without
     * allows every port of the host; an IPv6 entry names a port after its "]" */
    char host_port[URL_AUTHORITY_MAX];
    snprintf(host_port, sizeof(host_port), "%s:%u", u.host, u.port);
    int ok = 0;
    pthread_mutex_lock(&kc->lock);
    for (size_t i = 0; i < kc->n_allow && !ok; i++) {
        const char *a = kc->allow[i];
        int has_port = a[0] == '[' ? strstr(a, "]:") != NULL : strchr(a, ':') != NULL;
        ok = has_port ? !strcmp(a, u.authority) || !strcmp(a, host_port) : !strcmp(a, u.host);
    }
    pthread_mutex_unlock(&kc->lock);
    return ok;
}

/* ---- fetching ------------------------------------------------------------------------ */

struct redirect_rule {
    struct keycache *kc;
    int refused;
};

/* A redirect is followed to an allowed host only. */
static int redirect_allowed(void *ctx, const char *url, const char *location, struct flood_err *err)
{
    struct redirect_rule *r = ctx;
    (void)url;
    if (keycache_url_allowed(r->kc, location))
        return 1;
    r->refused = 1;
    flood_err_set(err, FLOOD_EINVAL, "keycache: host of '%s' is not allowed", location);
    return 0;
}

/* A signed GET of url as instance's actor, following at most KEYCACHE_REDIRECTS_MAX
 * redirects on allowed hosts. KEYCACHE_OK with *body (new, NUL-terminated), or a result
 * and err. */
static int fetch(struct keycache *kc, const char *url, int instance, char **body, size_t *len,
                 struct flood_err *err)
{
    *body = NULL;
    if (!keycache_url_allowed(kc, url)) {
        flood_err_set(err, FLOOD_EINVAL, "keycache: host of '%s' is not allowed", url);
        return KEYCACHE_REFUSED;
    }
    char key_id[WF_URL_MAX];
    crowd_key_id(kc->crowd, instance, 0, key_id);
    struct http_signer s = {
        .dialect = SIGN_CAVAGE, .key = crowd_key(kc->crowd, instance, 0), .key_id = key_id};
    struct http_opts o = {.resolve = (const char *const *)kc->resolve,
                          .n_resolve = kc->n_resolve,
                          .timeout_ms = KEYCACHE_TIMEOUT_MS,
                          .max_body = KEYCACHE_DOC_MAX,
                          .max_redirects = KEYCACHE_REDIRECTS_MAX};
    struct redirect_rule rule = {.kc = kc};
    struct http_req req = {.method = HTTP_GET,
                           .url = url,
                           .accept = "application/activity+json, application/ld+json; "
                                     "profile=\"https://www.w3.org/ns/activitystreams\"",
                           .signer = &s,
                           .o = &o,
                           .who = "keycache",
                           .redirect_ok = redirect_allowed,
                           .redirect_ctx = &rule};
    struct http_resp r;
    if (http_fetch(&req, &r, err) < 0)
        return rule.refused ? KEYCACHE_REFUSED : KEYCACHE_FAILED;
    int rc = KEYCACHE_FAILED;
    if (r.location)
        flood_err_set(err, FLOOD_EIO, "keycache: too many redirects from '%s'", url);
    else if (r.status != 200)
        flood_err_set(err, FLOOD_EIO, "keycache: GET '%s': HTTP %ld", r.url, r.status);
    else
        rc = KEYCACHE_OK;
    if (rc == KEYCACHE_OK) {
        *body = r.body;
        *len = r.len;
        r.body = NULL;
    }
    http_resp_free(&r);
    return rc;
}

static struct keycache_key *new_key(struct sign_key *key, const char *key_id, const char *owner,
                                    int local)
{
    struct keycache_key *k = flood_xcalloc(1, sizeof(*k));
    k->key = key;
    k->key_id = flood_xstrdup(key_id);
    k->owner = flood_xstrdup(owner);
    k->local = local;
    k->fetched_mono_us = local ? 0 : clock_mono_us();
    atomic_init(&k->refs, 1);
    return k;
}

/* Insert k (taking the caller's reference for the map) and return it with one more. */
static struct keycache_key *insert_key(struct keycache *kc, struct keycache_key *k)
{
    pthread_mutex_lock(&kc->lock);
    atomic_fetch_add(&k->refs, 1);
    smap_put(&kc->keys, k->key_id, k);
    pthread_mutex_unlock(&kc->lock);
    return k;
}

/* A key of the crowd's own actors, or NULL. */
static struct keycache_key *local_key(struct keycache *kc, const char *key_id)
{
    const struct wf_crowd *wc = &kc->crowd->wf;
    char auth[WF_HOST_MAX + 8];
    if (keycache_url_authority(key_id, auth, sizeof(auth), 1) < 0)
        return NULL;
    int inst = wf_instance_of_host(wc, auth);
    if (!inst)
        return NULL;
    /* hand-written on purpose: every inbound request passes here, and url_split above
     * already vouched for the "://" and the authority this skips */
    const char *path = strstr(key_id, "://") + 3;
    path += strcspn(path, "/");
    struct wf_route r;
    if (wf_route_path(wc, inst, path, strcspn(path, "#?"), &r) != 0 || r.kind != WF_ROUTE_ACTOR)
        return NULL;
    char want[WF_URL_MAX];
    crowd_key_id(kc->crowd, inst, r.actor, want);
    if (strcmp(want, key_id))
        return NULL;
    struct flood_err e;
    char *pem = sign_key_public_pem(crowd_key(kc->crowd, inst, r.actor), &e);
    struct sign_key *key = pem ? sign_key_from_pem(pem, 0, &e) : NULL;
    free(pem);
    if (!key)
        return NULL;
    char owner[WF_URL_MAX];
    wf_actor_url(wc, inst, r.actor, owner);
    return insert_key(kc, new_key(key, key_id, owner, 1));
}

int keycache_get(struct keycache *kc, const char *key_id, int instance, int refresh,
                 struct keycache_key **out, int *fetched, struct flood_err *err)
{
    *out = NULL;
    *fetched = 0;
    pthread_mutex_lock(&kc->lock);
    struct keycache_key *k = smap_get(&kc->keys, key_id);
    if (k && (!refresh || k->local ||
              clock_mono_us() - k->fetched_mono_us < KEYCACHE_REFRESH_MIN_S * 1000000ULL)) {
        atomic_fetch_add(&k->refs, 1);
        kc->stats.cached++;
        pthread_mutex_unlock(&kc->lock);
        *out = k;
        return KEYCACHE_OK;
    }
    pthread_mutex_unlock(&kc->lock);
    if (!k && (k = local_key(kc, key_id))) {
        *out = k;
        return KEYCACHE_OK;
    }
    char *body = NULL;
    size_t len = 0;
    int rc = fetch(kc, key_id, instance, &body, &len, err);
    pthread_mutex_lock(&kc->lock);
    if (rc == KEYCACHE_REFUSED)
        kc->stats.refused++;
    else if (rc != KEYCACHE_OK)
        kc->stats.failed++;
    pthread_mutex_unlock(&kc->lock);
    if (rc != KEYCACHE_OK)
        return rc;
    struct keycache_doc d;
    int prc = keycache_parse_key_doc(body, len, key_id, &d, err);
    free(body);
    pthread_mutex_lock(&kc->lock);
    if (prc < 0)
        kc->stats.failed++;
    else
        kc->stats.ok++;
    if (prc == 0 && d.inbox)
        smap_put(&kc->inboxes, d.owner, flood_xstrdup(d.inbox));
    pthread_mutex_unlock(&kc->lock);
    if (prc < 0)
        return KEYCACHE_BAD_DOC;
    k = new_key(d.key, key_id, d.owner, 0);
    d.key = NULL;
    keycache_doc_clear(&d);
    *out = insert_key(kc, k);
    *fetched = 1;
    return KEYCACHE_OK;
}

char *keycache_inbox(struct keycache *kc, const char *actor, int instance, struct flood_err *err)
{
    pthread_mutex_lock(&kc->lock);
    const char *cached = smap_get(&kc->inboxes, actor);
    char *r = cached ? flood_xstrdup(cached) : NULL;
    pthread_mutex_unlock(&kc->lock);
    if (r)
        return r;
    char *body = NULL;
    size_t len = 0;
    int rc = fetch(kc, actor, instance, &body, &len, err);
    if (rc == KEYCACHE_OK)
        r = keycache_parse_inbox(body, len, actor, err);
    free(body);
    pthread_mutex_lock(&kc->lock);
    if (rc == KEYCACHE_REFUSED)
        kc->stats.refused++;
    else if (!r)
        kc->stats.failed++;
    else {
        kc->stats.ok++;
        smap_put(&kc->inboxes, actor, flood_xstrdup(r));
    }
    pthread_mutex_unlock(&kc->lock);
    return r;
}

void keycache_stats(struct keycache *kc, struct keycache_stats *out)
{
    pthread_mutex_lock(&kc->lock);
    *out = kc->stats;
    pthread_mutex_unlock(&kc->lock);
}

int keycache_seed_pem(struct keycache *kc, const char *key_id, const char *owner, const char *pem,
                      struct flood_err *err)
{
    struct sign_key *key = sign_key_from_pem(pem, 0, err);
    if (!key)
        return -1;
    if (sign_key_is_private(key)) {
        char *pub = sign_key_public_pem(key, err);
        sign_key_free(key);
        key = pub ? sign_key_from_pem(pub, 0, err) : NULL;
        free(pub);
        if (!key)
            return -1;
    }
    keycache_key_release(insert_key(kc, new_key(key, key_id, owner, 1)));
    return 0;
}

void keycache_seed_inbox(struct keycache *kc, const char *actor, const char *inbox)
{
    pthread_mutex_lock(&kc->lock);
    smap_put(&kc->inboxes, actor, flood_xstrdup(inbox));
    pthread_mutex_unlock(&kc->lock);
}
