/* flood/crowd/crowd.c: the crowd's options, keys and pre-rendered documents. */
#include "flood/crowd/crowd.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "flood/core/addr.h"
#include "flood/core/clock.h"
#include "flood/core/fsutil.h"
#include "flood/core/opt.h"
#include "flood/crowd/tls.h"
#include "flood/crowd/tls_sni.h"

/* Crowds up to this many actors get every actor document rendered at start; bigger ones
 * render on demand (a 1,000 x 1,000 crowd would need over a gigabyte of documents). */
#define CROWD_PRERENDER_MAX 20000

static int set_scheme(void *base, const struct opt *row, const char *arg, struct flood_err *err)
{
    (void)base;
    (void)row;
    static const char *const words[] = {"http", "https"};
    int k;
    return gram_keyword("--scheme", arg, GRAM_NUL, words, 2, &k, err);
}

/* config.crowd.scheme: the one in force when none was given. */
static json_t *rec_scheme(const void *base, const struct opt *row)
{
    (void)row;
    const struct crowd_opts *co = base;
    return json_string(co->scheme ? co->scheme : (co->tls ? "https" : "http"));
}

/* --dns: a numeric listening address, checked when given. */
static int check_listen(void *base, const struct opt *row, const char *arg, struct flood_err *err)
{
    (void)base;
    if (addr_parse_listen(arg, NULL, NULL, err) == 0)
        return 0;
    flood_err_set(err, FLOOD_EINVAL, "--%s: expected ADDR:PORT (a numeric address), got '%s'",
                  row->name, arg);
    return -1;
}

#define CO(m) OPT_AT(struct crowd_opts, m)

static const char *const key_type_words[] = {"rsa", "ed25519", NULL};

const struct opt crowd_opt_rows[] = {
    OPT_HEAD("crowd options:", 0),
    {"instances", OPT_UINT, "N", CO(instances), .lo = 1, .hi = 1000000, .def = "20",
     .json = "instances", .help = "fake instances"},
    {"actors", OPT_UINT, "M", CO(actors), .lo = 1, .hi = 1000000, .def = "10", .json = "actors",
     .help = "actors per instance"},
    {"domain", OPT_STRING, "TEMPLATE", CO(domain), .def = "flood%d.test", .json = "domain",
     .flags = OPT_F_NO_JSON_NULL, .help = "host name template with one %d"},
    {"listen", OPT_STRING, "ADDR:PORT", CO(listen), .def = "127.0.0.1:8080", .json = "listen",
     .flags = OPT_F_NO_JSON_NULL,
     .help = "listening address; port 0 picks one, printed as 'listening on http://ADDR:PORT'"},
    {"public-port", OPT_UINT, "P", CO(public_port), .lo = 1, .hi = 65535, .json = "public_port",
     .help = "port written in the crowd's URLs (default none)"},
    {"scheme", OPT_STRING, "http|https", CO(scheme), .set = set_scheme, .json = "scheme",
     .record = rec_scheme, .help = "scheme of the crowd's URLs (default http; https with --tls)"},
    {"state", OPT_STRING, "DIR", CO(state), .json = "state",
     .help = "keys and certificates kept across runs (default $FLOOD_STATE, else "
             "$XDG_STATE_HOME/flood, else ~/.local/state/flood)"},
    {"key-bits", OPT_UINT, "B", CO(key_bits), .lo = 2048, .hi = 8192, .def = "2048",
     .json = "key_bits", .help = "RSA key size"},
    {"key-pool", OPT_UINT, "K", CO(key_pool), .lo = 0, .hi = 10000000, .json = "key_pool",
     .help = "K keys shared by the whole crowd, 0 for a key per actor (default: what the state "
             "folder was made with; a new one gets 4 RSA keys per core, 8 to 64, or a key per "
             "actor with Ed25519; each actor keeps its own keyId and actor document either "
             "way)"},
    {"key-type", OPT_KEYWORD, "rsa|ed25519", CO(key_type), .words = key_type_words, .def = "rsa",
     .json = "key_type", .help = "actor keys (ed25519 for RFC 9421 runs)"},
    {"tls", OPT_FLAG, CO(tls), .json = "tls",
     .help = "serve HTTPS with a CA made in the state folder (its path is printed) and a leaf "
             "naming every instance (up to 100), a wildcard (a template like i%d.flood.test) "
             "or a leaf per instance by SNI"},
    {"server-threads", OPT_UINT, "T", CO(threads), .lo = 1, .hi = 64, .def = "4",
     .json = "server_threads", .help = "server threads (a key fetch blocks its thread)"},
    {"dns", OPT_STRING, "ADDR:PORT", CO(dns), .set = check_listen, .json = "dns",
     .help = "a name server (UDP and TCP; port 0 picks one, printed as 'dns on ADDR:PORT') "
             "answering the crowd's names with its address, REFUSED for every other name"},
    {"proxy", OPT_STRING, "ADDR:PORT", CO(proxy), .json = "proxy",
     .cmds = OPT_CMD_SERVE | OPT_CMD_RUN | OPT_CMD_CAPACITY,
     .help = "an egress proxy for the target: crowd names relayed (http://) or tunnelled "
             "(CONNECT) into the crowd, anything else refused with 403 and counted; port 0 "
             "picks one, printed as 'proxy listening on http://ADDR:PORT'"},
    {0},
};

void crowd_opts_defaults(struct crowd_opts *o)
{
    memset(o, 0, sizeof(*o));
    struct opt_spec spec = {.sets = {{crowd_opt_rows, o}}, .n_sets = 1};
    struct flood_err err = {0};
    if (opt_defaults(&spec, &err)) {
        fprintf(stderr, "flood: %s\n", err.msg);
        abort();
    }
    o->key_pool = CROWD_KEY_POOL_FOLDER;
}

int crowd_opts_set(struct crowd_opts *o, const char *name, const char *arg, struct flood_err *err)
{
    const struct opt *row = opt_find(crowd_opt_rows, name);
    if (!row) {
        flood_err_set(err, FLOOD_EINVAL, "crowd: no option --%s", name);
        return -1;
    }
    return opt_apply(row, o, arg, err);
}

int crowd_opts_check(const struct crowd_opts *o, struct flood_err *err)
{
    struct wf_crowd wf = {.instances = o->instances,
                          .actors = o->actors,
                          .domain_template = o->domain,
                          .scheme = o->scheme ? o->scheme : "http",
                          .public_port = o->public_port,
                          .version = FLOOD_VERSION};
    struct flood_err e2 = {0};
    if (wf_crowd_check(&wf, &e2)) {
        flood_err_set(err, FLOOD_EINVAL, "--domain/--instances/--actors: %s", e2.msg);
        return -1;
    }
    if (o->tls && o->scheme && strcmp(o->scheme, "https")) {
        flood_err_set(err, FLOOD_EINVAL, "--tls: the crowd's URLs must then be https");
        return -1;
    }
    if (o->proxy && addr_parse_listen(o->proxy, NULL, NULL, err)) {
        flood_err_set(err, FLOOD_EINVAL,
                      "--proxy: expected ADDR:PORT (a numeric address), got '%s'", o->proxy);
        return -1;
    }
    return addr_parse_listen(o->listen, NULL, NULL, err);
}

int crowd_port_warning(const struct crowd_opts *o, int bound_port, char *buf, size_t size)
{
    if (o->public_port || o->proxy) /* the proxy takes any port to the listener */
        return 0;
    int https = o->scheme ? !strcmp(o->scheme, "https") : o->tls;
    int url_port = https ? 443 : 80;
    if (bound_port == url_port)
        return 0;
    snprintf(buf, size,
             "warning: the crowd listens on port %d but its URLs name port %d (no "
             "--public-port): a target can fetch the crowd's actors, keys and media only "
             "through a redirect or a proxy to port %d; give --public-port %d when it connects "
             "straight to the listener",
             bound_port, url_port, bound_port, bound_port);
    return 1;
}

/* ---- the state folder ----------------------------------------------------------------- */

static char *default_state_dir(void)
{
    const char *e = getenv("FLOOD_STATE");
    if (e && *e)
        return flood_xstrdup(e);
    e = getenv("XDG_STATE_HOME");
    if (e && *e)
        return flood_xasprintf("%s/flood", e);
    e = getenv("HOME");
    if (e && *e)
        return flood_xasprintf("%s/.local/state/flood", e);
    return flood_xstrdup(".flood-state");
}

int crowd_default_pool(enum sign_key_type t)
{
    if (t == SIGN_KEY_ED25519)
        return 0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    long k = 4 * (cores > 1 ? cores : 1);
    return k < 8 ? 8 : k > 64 ? 64 : (int)k;
}

/* 1 when dir holds a key file (NNNNNN.pem). */
static int has_keys(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        found = n > 4 && strcmp(e->d_name + n - 4, ".pem") == 0;
    }
    closedir(d);
    return found;
}

/* The layout recorded in DIR/pool into *pool; 1 when there is no record, -1 and err when
 * it is not a number. */
static int read_layout(const char *path, int *pool, struct flood_err *err)
{
    char *text = fs_read_file(path, 64, NULL);
    if (!text) {
        if (errno == ENOENT)
            return 1;
        flood_err_set(err, FLOOD_EIO, "crowd: cannot read '%s': %s", path, strerror(errno));
        return -1;
    }
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    int bad = errno || end == text || (*end && *end != '\n') || v < 0 || v > 10000000;
    free(text);
    if (bad) {
        flood_err_set(err, FLOOD_EINVAL,
                      "crowd: '%s' should hold the number of keys in the pool (0 for a key per "
                      "actor)",
                      path);
        return -1;
    }
    *pool = (int)v;
    return 0;
}

/* The key layout of the key folder dir (its lock held): the recorded one, or the one
 * recorded now on first use (a key per actor when keys are there without a record). */
static int folder_layout(const char *dir, enum sign_key_type t, int *pool, struct flood_err *err)
{
    char *path = flood_xasprintf("%s/pool", dir);
    int rc = read_layout(path, pool, err);
    if (rc == 1) {
        int old = has_keys(dir), k = old ? 0 : crowd_default_pool(t);
        if (old && access(dir, W_OK) != 0) {
            /* a read-only copy (a Kubernetes Secret) of a folder made before the record */
            *pool = k;
            free(path);
            return 0;
        }
        char text[32];
        int len = snprintf(text, sizeof(text), "%d\n", k);
        /* FS_FIRST: should a flood without the lock have recorded one meanwhile, its wins */
        rc = fs_write_file(path, text, (size_t)len, 0600, FS_FIRST, 1, "crowd", err);
        if (rc == 0)
            *pool = k;
        else if (rc == 1)
            rc = read_layout(path, pool, err) == 0 ? 0 : -1;
    }
    free(path);
    return rc;
}

/* ---- keys ---------------------------------------------------------------------------- */

struct keygen_shared {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t made;    /* keys made so far, all threads */
    size_t running; /* threads still working */
};

struct keygen {
    struct crowd *c;
    const char *dir;
    size_t from, step;
    int failed;
    struct flood_err err;
    size_t generated;
    struct keygen_shared *sh;
};

/* Take k as key i of the crowd. */
static int use_key(struct crowd *c, size_t i, struct sign_key *k, struct flood_err *err)
{
    char *pub = sign_key_public_pem(k, err);
    if (!pub) {
        sign_key_free(k);
        return -1;
    }
    c->keys[i] = k;
    c->key_pems[i] = pub;
    if (c->opts.key_type == SIGN_KEY_ED25519) {
        c->key_multibase[i] = sign_key_multibase(k, err);
        if (!c->key_multibase[i])
            return -1;
    }
    return 0;
}

/* Key i from its file: 0, 1 when there is no file, -1 and err when it is not a key. */
static int load_key(struct crowd *c, const char *path, size_t i, struct flood_err *err)
{
    char *pem = fs_read_file(path, 64 * 1024, NULL);
    if (!pem) {
        if (errno == ENOENT)
            return 1;
        flood_err_set(err, FLOOD_EIO, "crowd: cannot read key file '%s': %s", path,
                      strerror(errno));
        return -1;
    }
    struct sign_key *k = sign_key_from_pem(pem, 0, err);
    free(pem);
    if (!k) {
        char msg[sizeof(err->msg)];
        snprintf(msg, sizeof(msg), "%s", err->msg);
        flood_err_set(err, FLOOD_EINVAL, "crowd: bad key file '%s': %s", path, msg);
        return -1;
    }
    if (sign_key_type(k) != c->opts.key_type || !sign_key_is_private(k)) {
        flood_err_set(err, FLOOD_EINVAL, "crowd: key file '%s' is not a private %s key", path,
                      c->opts.key_type == SIGN_KEY_RSA ? "RSA" : "Ed25519");
        sign_key_free(k);
        return -1;
    }
    return use_key(c, i, k, err);
}

/* Load key i from the state folder, or generate and store it. The file is written whole
 * under a temporary name and linked into place: a reader never sees half a key, and should
 * another process have made the same key meanwhile, both use the one linked first. */
static int load_or_make_key(struct crowd *c, const char *dir, size_t i, size_t *generated,
                            struct flood_err *err)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%06zu.pem", dir, i);
    int rc = load_key(c, path, i, err);
    if (rc <= 0)
        return rc;
    struct sign_key *k = sign_key_generate(c->opts.key_type, c->opts.key_bits, err);
    if (!k)
        return -1;
    char *priv = sign_key_private_pem(k, err);
    rc = priv ? fs_write_file(path, priv, strlen(priv), 0600, FS_FIRST, 1, "crowd", err) : -1;
    if (priv)
        OPENSSL_cleanse(priv, strlen(priv));
    free(priv);
    if (rc == 0) {
        (*generated)++;
        return use_key(c, i, k, err);
    }
    sign_key_free(k);
    return rc == 1 ? load_key(c, path, i, err) : -1;
}

static void *keygen_thread(void *arg)
{
    struct keygen *g = arg;
    for (size_t i = g->from; i < g->c->n_keys && !g->failed; i += g->step) {
        size_t before = g->generated;
        if (load_or_make_key(g->c, g->dir, i, &g->generated, &g->err))
            g->failed = 1;
        if (g->generated != before) {
            pthread_mutex_lock(&g->sh->mu);
            g->sh->made++;
            pthread_cond_signal(&g->sh->cv);
            pthread_mutex_unlock(&g->sh->mu);
        }
    }
    pthread_mutex_lock(&g->sh->mu);
    g->sh->running--;
    pthread_cond_signal(&g->sh->cv);
    pthread_mutex_unlock(&g->sh->mu);
    return NULL;
}

/* How many of the n keys in dir are still to be made. */
static size_t keys_missing(const char *dir, size_t n)
{
    size_t missing = 0;
    char path[PATH_MAX];
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%s/%06zu.pem", dir, i);
        missing += access(path, F_OK) != 0;
    }
    return missing;
}

/* Wait for the key threads; with keys to make, say how many are made each second. */
static void keygen_wait(struct keygen_shared *sh, size_t to_make, int quiet)
{
    struct timespec next = clock_mono_after(0);
    pthread_mutex_lock(&sh->mu);
    while (sh->running > 0) {
        next.tv_sec += 1;
        while (sh->running > 0 && pthread_cond_timedwait(&sh->cv, &sh->mu, &next) != ETIMEDOUT)
            ;
        if (sh->running > 0 && !quiet && to_make)
            fprintf(stderr, "flood: %zu of %zu keys made\n", sh->made, to_make);
    }
    pthread_mutex_unlock(&sh->mu);
}

/* Run threads over the crowd's keys in dir (its lock held): load each, or make it. */
static int run_keygen(struct crowd *c, const char *dir, struct flood_err *err)
{
    size_t to_make = keys_missing(dir, c->n_keys);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nthreads = cores > 1 ? (size_t)cores : 1;
    if (nthreads > 16)
        nthreads = 16;
    if (nthreads > c->n_keys)
        nthreads = c->n_keys;
    if (to_make && !c->opts.quiet)
        fprintf(stderr, "flood: making %zu %s keys in %s (%zu threads)...\n", to_make,
                c->opts.key_type == SIGN_KEY_RSA ? "RSA" : "Ed25519", dir, nthreads);
    struct keygen_shared sh = {.running = 0};
    pthread_mutex_init(&sh.mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&sh.cv, &ca);
    pthread_condattr_destroy(&ca);
    struct keygen *g = flood_xcalloc(nthreads, sizeof(*g));
    pthread_t *tids = flood_xcalloc(nthreads, sizeof(*tids));
    int *started = flood_xcalloc(nthreads, sizeof(*started));
    int64_t t0 = clock_mono_ns();
    for (size_t t = 0; t < nthreads; t++) {
        g[t] = (struct keygen){.c = c, .dir = dir, .from = t, .step = nthreads, .sh = &sh};
        pthread_mutex_lock(&sh.mu);
        sh.running++;
        pthread_mutex_unlock(&sh.mu);
        if (pthread_create(&tids[t], NULL, keygen_thread, &g[t]) == 0) {
            started[t] = 1;
        } else {
            pthread_mutex_lock(&sh.mu);
            sh.running--;
            pthread_mutex_unlock(&sh.mu);
            g[t].failed = 1;
            flood_err_set(&g[t].err, FLOOD_EIO, "crowd: cannot start a key thread");
        }
    }
    keygen_wait(&sh, to_make, c->opts.quiet);
    int rc = 0;
    size_t generated = 0;
    for (size_t t = 0; t < nthreads; t++) {
        if (started[t])
            pthread_join(tids[t], NULL);
        generated += g[t].generated;
        if (g[t].failed && !rc) {
            *err = g[t].err;
            rc = -1;
        }
    }
    int64_t t1 = clock_mono_ns();
    if (!rc && !c->opts.quiet)
        fprintf(stderr, "crowd: %zu keys (%zu generated) in %s, %.2f s\n", c->n_keys, generated,
                dir, (double)(t1 - t0) / 1e9);
    pthread_cond_destroy(&sh.cv);
    pthread_mutex_destroy(&sh.mu);
    free(started);
    free(g);
    free(tids);
    return rc;
}

static int crowd_keys(struct crowd *c, struct flood_err *err)
{
    uint64_t total = (uint64_t)c->opts.instances * (uint64_t)(c->opts.actors + 1);
    char *dir = c->opts.key_type == SIGN_KEY_RSA
                    ? flood_xasprintf("%s/keys/rsa-%d", c->state_dir, c->opts.key_bits)
                    : flood_xasprintf("%s/keys/ed25519", c->state_dir);
    /* Processes sharing the state folder start together (shards, serve + run): the key
     * folder's lock lets one of them record the layout and make the keys while the others
     * wait, then load them. */
    char *note = c->opts.quiet ? NULL
                               : flood_xasprintf("flood: waiting for another flood process "
                                                 "making keys in %s",
                                                 dir);
    int lock = -1, pool = 0, rc = -1;
    if (fs_mkdir_p(dir, 0700, "crowd: state folder", err) ||
        fs_lock(dir, note, &lock, "crowd", err) || folder_layout(dir, c->opts.key_type, &pool, err))
        goto done;
    if (c->opts.key_pool != CROWD_KEY_POOL_FOLDER)
        pool = c->opts.key_pool;
    c->opts.key_pool = pool;
    c->n_keys = pool ? (size_t)pool : (size_t)total;
    if (c->n_keys > total)
        c->n_keys = (size_t)total;
    if (c->n_keys > 1000000) {
        flood_err_set(err, FLOOD_ELIMIT,
                      "crowd: %zu keys is too many; use --key-pool K (a big crowd shares K keys)",
                      c->n_keys);
        goto done;
    }
    c->keys = flood_xcalloc(c->n_keys, sizeof(*c->keys));
    c->key_pems = flood_xcalloc(c->n_keys, sizeof(*c->key_pems));
    c->key_multibase = flood_xcalloc(c->n_keys, sizeof(*c->key_multibase));
    rc = run_keygen(c, dir, err);
done:
    if (lock >= 0)
        close(lock);
    free(note);
    free(dir);
    return rc;
}

static size_t key_slot(const struct crowd *c, int instance, int actor)
{
    return (size_t)(crowd_actor_index(c, instance, actor) % c->n_keys);
}

/* Rotation rot (0 = the actor's own slot) of an actor: base + rot x step, step in 1..K-1
 * drawn from the actor's index, so two rotations in a row never share a key. */
static size_t key_slot_rot(const struct crowd *c, int instance, int actor, uint32_t rot)
{
    size_t base = key_slot(c, instance, actor);
    if (rot == 0 || c->n_keys < 2)
        return base;
    uint64_t x = crowd_actor_index(c, instance, actor) * UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 31)) * UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 29;
    uint64_t step = 1 + x % (c->n_keys - 1);
    return (size_t)((base + (uint64_t)rot * step) % c->n_keys);
}

const struct sign_key *crowd_key(const struct crowd *c, int instance, int actor)
{
    return c->keys[key_slot(c, instance, actor)];
}

const struct sign_key *crowd_key_rot(const struct crowd *c, int instance, int actor, uint32_t rot)
{
    return c->keys[key_slot_rot(c, instance, actor, rot)];
}

void crowd_key_id(const struct crowd *c, int instance, int actor, char out[WF_URL_MAX])
{
    char url[WF_URL_MAX];
    wf_actor_url(&c->wf, instance, actor, url);
    snprintf(out, WF_URL_MAX, "%.*s#main-key", WF_URL_MAX - 10, url);
}

static void render_actor(const struct crowd *c, int instance, int actor, uint32_t rot,
                         struct wf_doc *out)
{
    size_t slot = key_slot_rot(c, instance, actor, rot);
    struct wf_key_info ki = {.public_pem = c->key_pems[slot],
                             .ed25519_multibase = c->key_multibase[slot]};
    wf_actor(&c->wf, instance, actor, &ki, out);
}

void crowd_key_doc(const struct crowd *c, int instance, int actor, struct wf_doc *out)
{
    crowd_key_doc_rot(c, instance, actor, 0, out);
}

void crowd_key_doc_rot(const struct crowd *c, int instance, int actor, uint32_t rot,
                       struct wf_doc *out)
{
    size_t slot = key_slot_rot(c, instance, actor, rot);
    struct wf_key_info ki = {.public_pem = c->key_pems[slot]};
    wf_key_doc(&c->wf, instance, actor, &ki, out);
}

void crowd_actor_doc_rot(const struct crowd *c, int instance, int actor, uint32_t rot,
                         struct wf_doc *out)
{
    if (rot == 0)
        crowd_actor_doc(c, instance, actor, out);
    else
        render_actor(c, instance, actor, rot, out);
}

void crowd_actor_doc(const struct crowd *c, int instance, int actor, struct wf_doc *out)
{
    if (c->actor_docs) {
        const struct crowd_doc *d = &c->actor_docs[crowd_actor_index(c, instance, actor)];
        out->status = 200;
        out->content_type = WF_CT_ACTIVITY;
        out->body = flood_xstrndup(d->body, d->len);
        out->len = d->len;
        return;
    }
    render_actor(c, instance, actor, 0, out);
}

int crowd_tls_wildcard(const char *t, char *out, size_t size)
{
    const char *dot = strchr(t, '.'), *pd = strstr(t, "%d");
    if (!dot || !pd || pd > dot || strchr(dot + 1, '%') || !strchr(dot + 1, '.'))
        return 0;
    return snprintf(out, size, "*%s", dot) < (int)size;
}

/* TLS for a crowd over TLS_ONE_LEAF_MAX instances: a wildcard leaf when the template allows
 * one, else a leaf per instance by SNI. */
static int crowd_tls_big(struct crowd *c, struct flood_err *err)
{
    char wild[WF_HOST_MAX];
    if (crowd_tls_wildcard(c->opts.domain, wild, sizeof(wild))) {
        const char *hosts[] = {wild};
        struct tls_files tf;
        if (tls_ensure(c->state_dir, hosts, 1, &tf, err)) {
            tls_files_free(&tf);
            return -1;
        }
        c->ca_path = flood_xstrdup(tf.ca_path);
        c->tls_cert_pem = flood_xstrdup(tf.cert_pem);
        c->tls_key_pem = flood_xstrdup(tf.key_pem);
        tls_files_free(&tf);
        if (!c->opts.quiet)
            fprintf(stderr, "crowd: tls: one wildcard leaf, %s\n", wild);
        return 0;
    }
    char ca_path[TLS_PATH_MAX];
    int made = 0;
    c->tls_sni = tls_sni_new(c->state_dir, &c->wf, ca_path, &made, err);
    if (!c->tls_sni)
        return -1;
    c->ca_path = flood_xstrdup(ca_path);
    if (!c->opts.quiet)
        fprintf(stderr,
                "crowd: tls: a leaf per instance, made on first use by SNI (in %s/leaves)\n",
                c->state_dir);
    return 0;
}

static int crowd_tls(struct crowd *c, struct flood_err *err)
{
    if (c->opts.instances > TLS_ONE_LEAF_MAX)
        return crowd_tls_big(c, err);
    size_t n = (size_t)c->opts.instances;
    char **hosts = flood_xcalloc(n, sizeof(*hosts));
    for (size_t i = 0; i < n; i++) {
        char h[WF_HOST_MAX];
        wf_host(&c->wf, (int)i + 1, h);
        hosts[i] = flood_xstrdup(h);
    }
    struct tls_files tf;
    memset(&tf, 0, sizeof(tf));
    int rc = tls_ensure(c->state_dir, (const char *const *)hosts, n, &tf, err);
    for (size_t i = 0; i < n; i++)
        free(hosts[i]);
    free(hosts);
    if (rc)
        return -1;
    c->ca_path = flood_xstrdup(tf.ca_path);
    c->tls_cert_pem = flood_xstrdup(tf.cert_pem);
    c->tls_key_pem = flood_xstrdup(tf.key_pem);
    tls_files_free(&tf);
    return 0;
}

struct crowd *crowd_new(const struct crowd_opts *o, struct flood_err *err)
{
    struct crowd *c = flood_xcalloc(1, sizeof(*c));
    c->opts = *o;
    if (!c->opts.scheme)
        c->opts.scheme = c->opts.tls ? "https" : "http";
    c->wf = (struct wf_crowd){
        .instances = o->instances,
        .actors = o->actors,
        .domain_template = o->domain,
        .scheme = c->opts.scheme,
        .public_port = o->public_port,
        .version = FLOOD_VERSION,
    };
    if (wf_crowd_check(&c->wf, err))
        goto fail;
    if (c->opts.key_type == SIGN_KEY_ED25519 && o->key_bits != 2048 && !o->quiet)
        fprintf(stderr, "crowd: --key-bits is ignored for Ed25519 keys\n");
    c->state_dir = o->state ? flood_xstrdup(o->state) : default_state_dir();
    if (fs_mkdir_p(c->state_dir, 0700, "crowd: state folder", err) || crowd_keys(c, err))
        goto fail;
    if (c->opts.tls && crowd_tls(c, err))
        goto fail;
    uint64_t total = (uint64_t)o->instances * (uint64_t)(o->actors + 1);
    c->follows = follows_new(total);
    if (total <= CROWD_PRERENDER_MAX) {
        c->actor_docs = flood_xcalloc((size_t)total, sizeof(*c->actor_docs));
        for (int i = 1; i <= o->instances; i++)
            for (int a = 0; a <= o->actors; a++) {
                struct wf_doc d;
                render_actor(c, i, a, 0, &d);
                struct crowd_doc *cd = &c->actor_docs[crowd_actor_index(c, i, a)];
                cd->body = d.body;
                cd->len = d.len;
            }
    }
    return c;
fail:
    crowd_free(c);
    return NULL;
}

void crowd_free(struct crowd *c)
{
    if (!c)
        return;
    if (c->actor_docs) {
        uint64_t total = (uint64_t)c->opts.instances * (uint64_t)(c->opts.actors + 1);
        for (uint64_t i = 0; i < total; i++)
            free(c->actor_docs[i].body);
        free(c->actor_docs);
    }
    for (size_t i = 0; i < c->n_keys; i++) {
        sign_key_free(c->keys ? c->keys[i] : NULL);
        free(c->key_pems ? c->key_pems[i] : NULL);
        free(c->key_multibase ? c->key_multibase[i] : NULL);
    }
    free(c->keys);
    free(c->key_pems);
    free(c->key_multibase);
    follows_free(c->follows);
    free(c->state_dir);
    free(c->ca_path);
    free(c->tls_cert_pem);
    free(c->tls_key_pem);
    tls_sni_free(c->tls_sni);
    free(c);
}
