/* flood/inbound/keycache.h: the public keys of the senders that deliver to the crowd, by keyId, and
 * their actors' inboxes.
 *
 * A key missing from the cache is fetched with a signed GET (cavage, as the receiving
 * instance's actor) of the keyId URL, only from allowed hosts, with no redirect off them,
 * at most KEYCACHE_DOC_MAX bytes and KEYCACHE_TIMEOUT_MS. The fetch blocks the calling
 * thread (a server thread): a few server threads keep serving while one waits. Keys of the
 * crowd's own actors resolve locally, without a fetch. Thread-safe (one mutex; fetches run
 * outside it). */
#ifndef FLOOD_KEYCACHE_H
#define FLOOD_KEYCACHE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "flood/crowd/crowd.h"
#include "sign/err.h"
#include "sign/sign.h"

#define KEYCACHE_DOC_MAX       (256 * 1024)
#define KEYCACHE_TIMEOUT_MS    5000
#define KEYCACHE_CAP_DEFAULT   10000
#define KEYCACHE_REFRESH_MIN_S 60 /* a cached key is re-fetched at most once a minute */
#define KEYCACHE_REDIRECTS_MAX 3

/* A cached key. Borrowed from keycache_get until keycache_key_release. */
struct keycache_key {
    struct sign_key *key; /* public */
    char *key_id;
    char *owner;              /* the actor that owns the key */
    uint64_t fetched_mono_us; /* when it was fetched (0: seeded or the crowd's own) */
    int local;                /* the crowd's own key or a seeded one: never re-fetched */
    _Atomic int refs;
};

/* What a key document gives (keycache_parse_key_doc). Strings owned; keycache_doc_clear. */
struct keycache_doc {
    struct sign_key *key;
    char *owner;
    char *inbox; /* the owner's inbox when the document is the owner's actor, else NULL */
};

/* Find key_id in a fetched document: an actor's publicKey (object or array, the entry
 * whose id is key_id), an FEP-521a assertionMethod Multikey (Ed25519), a bare Key object
 * with an owner, or a stub actor served at the key URL (GoToSocial). 0, or -1 and err. */
int keycache_parse_key_doc(const char *body, size_t len, const char *key_id,
                           struct keycache_doc *out, struct flood_err *err) FLOOD_WUR;
void keycache_doc_clear(struct keycache_doc *d);
/* The inbox (a new string) of an actor document whose id is actor, or NULL and err. */
char *keycache_parse_inbox(const char *body, size_t len, const char *actor,
                           struct flood_err *err) FLOOD_WUR;

struct keycache;

/* A new cache for the crowd (borrowed), keeping at most cap keys (oldest evicted). */
struct keycache *keycache_new(struct crowd *crowd, size_t cap);
void keycache_free(struct keycache *kc);
/* Allow fetches from host ("target.test", or "target.test:8200" for that port only).
 * Call before the cache is used. */
void keycache_allow_host(struct keycache *kc, const char *host);
/* Add a curl-style "HOST:PORT:ADDR" resolve entry for fetches. */
void keycache_add_resolve(struct keycache *kc, const char *entry);
/* 1 when url is http(s) on an allowed host, else 0. */
int keycache_url_allowed(struct keycache *kc, const char *url);

enum keycache_result {
    KEYCACHE_OK = 0,
    KEYCACHE_REFUSED, /* the host is not allowed: nothing was fetched */
    KEYCACHE_FAILED,  /* the fetch failed (transport, status, size, time) */
    KEYCACHE_BAD_DOC, /* fetched, but no usable key for key_id in it */
};

/* The key for key_id: from the cache, else fetched as instance's actor. With refresh, a
 * cached key older than KEYCACHE_REFRESH_MIN_S is fetched again (local keys never are).
 * On KEYCACHE_OK *out is a reference (keycache_key_release) and *fetched says whether it
 * came from the network just now; otherwise err says why. */
int keycache_get(struct keycache *kc, const char *key_id, int instance, int refresh,
                 struct keycache_key **out, int *fetched, struct flood_err *err);
void keycache_key_release(struct keycache_key *k);

/* The inbox of actor (a new string): cached from an earlier fetch of its actor document,
 * else fetched now as instance's actor. NULL and err on failure (refused hosts too). */
char *keycache_inbox(struct keycache *kc, const char *actor, int instance,
                     struct flood_err *err) FLOOD_WUR;

/* Fetch counters. */
struct keycache_stats {
    uint64_t ok, failed, refused, cached;
};
void keycache_stats(struct keycache *kc, struct keycache_stats *out);

/* Tests and tools: put a key (public or private PEM) for key_id owned by owner, and an
 * actor's inbox, straight into the cache. 0, or -1 and err. */
int keycache_seed_pem(struct keycache *kc, const char *key_id, const char *owner, const char *pem,
                      struct flood_err *err) FLOOD_WUR;
void keycache_seed_inbox(struct keycache *kc, const char *actor, const char *inbox);

/* The host[:port] of an http(s) URL, lower-cased, into out; 0, or -1 when it is not one. */
int keycache_url_authority(const char *url, char *out, size_t size, int with_port);

#endif
