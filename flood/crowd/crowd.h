/* flood/crowd/crowd.h: the crowd of fake instances: its options, its keys (generated once and
 * kept in the state folder), its pre-rendered documents and its follow state.
 *
 * Indexing: instance i in 1..instances, actor j in 1..actors, actor 0 the instance actor.
 * The crowd is built once (crowd_new) and read by the server's threads and the sender
 * without locks; only the follow state (crowd->follows) changes, behind its own lock.
 *
 * The room flood/crowd/: the fake instances as a server sees them: the crowd's options and
 * keys (crowd.c), who follows whom (follows.c), TLS (tls.c), the libmicrohttpd glue
 * (server.c) and fault injection (fault.c). It calls core/, webfinger/ and sign/; what the
 * rooms above must add to a request (inbox handling, objects, faults) reaches it through
 * struct server_hooks, a table of function pointers. */
#ifndef FLOOD_CROWD_H
#define FLOOD_CROWD_H

#include <stdint.h>

#include "flood/core/opt.h"
#include "sign/err.h"
#include "flood/crowd/follows.h"
#include "sign/sign.h"
#include "webfinger/wf.h"

struct crowd_opts {
    int instances;               /* --instances, default 20 */
    int actors;                  /* --actors, default 10 */
    const char *domain;          /* --domain, default "flood%d.test" */
    const char *listen;          /* --listen ADDR:PORT, default "127.0.0.1:8080"; port 0 allowed */
    int public_port;             /* --public-port, 0 = none in URLs */
    const char *scheme;          /* --scheme http|https (default http, https with --tls) */
    const char *state;           /* --state DIR */
    int key_bits;                /* --key-bits, default 2048 */
    int key_pool;                /* --key-pool K; 0 = a key per actor; CROWD_KEY_POOL_FOLDER */
    enum sign_key_type key_type; /* --key-type rsa|ed25519 */
    int tls;                     /* --tls */
    int threads;                 /* --server-threads, default 1 */
    int quiet;                   /* no progress lines on stderr */
    const char *dns;             /* --dns ADDR:PORT: the crowd's name server (dns.h), or NULL */
    uint32_t dns_src_base, dns_src_count; /* run's --source-ips: instance i's own address */
    const char *proxy; /* --proxy ADDR:PORT: the egress proxy (crowd/proxy.h), or NULL */
};

/* key_pool when --key-pool is not given: the layout the state folder was made with, kept in
 * STATE/keys/TYPE/pool (one number: K keys shared, 0 for a key per actor). A new folder gets
 * crowd_default_pool(); a folder that holds keys without that record was made by a flood
 * that gave each actor its own key, and keeps doing so. After crowd_new, crowd->opts.key_pool
 * is the layout in force (0 or K). Either way every actor keeps its own keyId
 * (ACTOR#main-key) and its own actor document: whether two actors share key material is
 * invisible to a target. */
#define CROWD_KEY_POOL_FOLDER (-1)

/* The pool a new state folder gets for key type t: for RSA four keys per core (8 to 64),
 * made in about a second by one thread per core, where a key per actor would take 220
 * RSA keys and half a minute on two cores; 0 (a key per actor) for Ed25519, whose keys
 * are made in microseconds. */
int crowd_default_pool(enum sign_key_type t);

/* The crowd's option rows (core/opt.h) over struct crowd_opts, for every command that runs
 * a crowd; their config record is run.json's config.crowd. */
extern const struct opt crowd_opt_rows[];

/* o with every default in force (key_pool: CROWD_KEY_POOL_FOLDER). */
void crowd_opts_defaults(struct crowd_opts *o);
/* Apply option --name with its argument (NULL for --tls). 0, or -1 and err ("--actors: ..."). */
int crowd_opts_set(struct crowd_opts *o, const char *name, const char *arg,
                   struct flood_err *err) FLOOD_WUR;

/* Check options before anything is made (the template, counts, scheme, --listen).
 * 0, or -1 and err naming the option. */
int crowd_opts_check(const struct crowd_opts *o, struct flood_err *err) FLOOD_WUR;

/* The warning to print at start when the crowd listens on bound_port but its URLs name
 * another port (no --public-port: the scheme's default): a target fetching them reaches
 * the listener only through a redirect or a proxy. 1 and the text in buf[size] (naming
 * --public-port), or 0 when the ports agree or --public-port was given. */
int crowd_port_warning(const struct crowd_opts *o, int bound_port, char *buf, size_t size);

struct crowd_doc {
    char *body; /* owned */
    size_t len;
};

struct crowd {
    struct crowd_opts opts;
    struct wf_crowd wf;
    char *state_dir;        /* resolved state folder */
    struct sign_key **keys; /* the key pool, n_keys of them (private) */
    char **key_pems;        /* public PEM of each key */
    char **key_multibase;   /* FEP-521a form of each Ed25519 key, else NULL */
    size_t n_keys;
    struct crowd_doc *actor_docs;     /* pre-rendered actor documents, or NULL (big crowds) */
    struct follows *follows;          /* who follows whom (inbound updates it) */
    char *ca_path;                    /* with --tls: the CA a target must trust */
    char *tls_cert_pem, *tls_key_pem; /* one leaf (every instance, or a wildcard), or NULL */
    struct tls_sni *tls_sni;          /* else a leaf per instance by SNI (tls_sni.h) */
};

struct tls_sni;

/* The wildcard "*.PARENT" of a domain template whose %d sits in its first label, under a
 * parent of two labels or more ("i%d.flood.test" gives "*.flood.test"), into out[size];
 * 0 when the template allows none ("flood%d.test": "*.test" is a TLD wildcard clients
 * refuse; "a.b%d.test": the instances differ below the first label). */
int crowd_tls_wildcard(const char *domain_template, char *out, size_t size);

/* Build the crowd: check options, load or generate keys in the state folder, make TLS
 * material with --tls, pre-render documents. A new crowd (crowd_free), or NULL and err. */
struct crowd *crowd_new(const struct crowd_opts *o, struct flood_err *err) FLOOD_WUR;
void crowd_free(struct crowd *c);

/* Global index of (instance, actor): (instance-1)*(actors+1) + actor. */
static inline uint64_t crowd_actor_index(const struct crowd *c, int instance, int actor)
{
    return (uint64_t)(instance - 1) * (uint64_t)(c->opts.actors + 1) + (uint64_t)actor;
}
/* The private key of an actor (borrowed from the crowd). */
const struct sign_key *crowd_key(const struct crowd *c, int instance, int actor);
/* The private key of rotation rot of an actor's key (borrowed): rot 0 is crowd_key, each
 * later rotation another key of the pool (a pure function of instance, actor and rot; never
 * the one of rot - 1), under the same keyId. With a pool of one key there is nothing to
 * rotate to: every rotation is the actor's own key. */
const struct sign_key *crowd_key_rot(const struct crowd *c, int instance, int actor, uint32_t rot);
/* keyId of an actor ("ACTOR#main-key") into out. */
void crowd_key_id(const struct crowd *c, int instance, int actor, char out[WF_URL_MAX]);
/* The actor document of (instance, actor): from the pre-rendered table or rendered now.
 * out->body is new (free with wf_doc_free) either way. */
void crowd_actor_doc(const struct crowd *c, int instance, int actor, struct wf_doc *out);
/* The standalone key document of (instance, actor) (wf_key_doc with its key); out->body
 * is new (wf_doc_free). */
void crowd_key_doc(const struct crowd *c, int instance, int actor, struct wf_doc *out);
/* The actor document and the key document showing rotation rot's public key (rendered
 * now unless rot is 0); out->body is new (wf_doc_free). */
void crowd_actor_doc_rot(const struct crowd *c, int instance, int actor, uint32_t rot,
                         struct wf_doc *out);
void crowd_key_doc_rot(const struct crowd *c, int instance, int actor, uint32_t rot,
                       struct wf_doc *out);

#endif
