/* flood/crowd/tls_sni.c: leaves per instance, made on first SNI use (rules in tls_sni.h). */
#include "flood/crowd/tls_sni.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "flood/core/fsutil.h"

#define LEAF_FILE_MAX (64 * 1024)

/* A leaf as GnuTLS serves it. */
struct leaf {
    gnutls_pcert_st pcert;
    gnutls_privkey_t key;
};

struct tls_sni {
    const struct wf_crowd *wf;
    struct tls_ca *ca;
    char dir[TLS_PATH_MAX];         /* STATE/leaves */
    _Atomic(struct leaf *) *leaves; /* [instance - 1], made once */
    struct leaf *fallback;          /* no SNI, or not an instance */
    pthread_mutex_t lock;           /* held while a leaf is made */
    atomic_ullong made, read, failed;
    pthread_t ahead; /* makes the first leaves while the server starts */
    int ahead_started;
    atomic_int stopping;
};

static _Atomic(struct tls_sni *) active;

static void leaf_free(struct leaf *l)
{
    if (!l)
        return;
    gnutls_pcert_deinit(&l->pcert);
    gnutls_privkey_deinit(l->key);
    free(l);
}

/* A leaf from PEM text (certificate and key), or NULL. */
static struct leaf *leaf_import(const char *pem, size_t len)
{
    struct leaf *l = flood_xcalloc(1, sizeof(*l));
    gnutls_datum_t d = {.data = (unsigned char *)pem, .size = (unsigned)len};
    if (gnutls_pcert_import_x509_raw(&l->pcert, &d, GNUTLS_X509_FMT_PEM, 0) < 0) {
        free(l);
        return NULL;
    }
    if (gnutls_privkey_init(&l->key) < 0 ||
        gnutls_privkey_import_x509_raw(l->key, &d, GNUTLS_X509_FMT_PEM, NULL, 0) < 0) {
        leaf_free(l);
        return NULL;
    }
    return l;
}

/* The leaf of instance i: read back from its file when that is still good, else made and
 * written. NULL and err when neither works. */
static struct leaf *leaf_get(struct tls_sni *t, int i, struct flood_err *err)
{
    char host[WF_HOST_MAX], path[TLS_PATH_MAX + WF_HOST_MAX + 8];
    wf_host(t->wf, i, host);
    snprintf(path, sizeof(path), "%s/%s.pem", t->dir, host);
    size_t len = 0;
    char *pem = fs_read_file(path, LEAF_FILE_MAX, &len);
    int fresh = 0;
    if (!pem || !tls_leaf_ok(t->ca, pem, len, host)) {
        if (pem)
            OPENSSL_cleanse(pem, len);
        free(pem);
        const char *hosts[] = {host};
        pem = tls_leaf_pem(t->ca, hosts, 1, &len, err);
        if (!pem)
            return NULL;
        fresh = 1;
        /* the cache is disposable: no fsync; a file that cannot be written is remade next time */
        struct flood_err e2 = {0};
        (void)!fs_write_file(path, pem, len, 0600, FS_REPLACE, 0, "tls", &e2);
    }
    struct leaf *l = leaf_import(pem, len);
    OPENSSL_cleanse(pem, len);
    free(pem);
    if (!l)
        flood_err_set(err, FLOOD_ECRYPTO, "tls: GnuTLS cannot load the leaf of '%s'", host);
    else
        atomic_fetch_add(fresh ? &t->made : &t->read, 1);
    return l;
}

/* The leaf of instance i, made (once) when missing; NULL when it cannot be had. */
static struct leaf *leaf_of(struct tls_sni *t, int i)
{
    struct leaf *l = atomic_load_explicit(&t->leaves[i - 1], memory_order_acquire);
    if (l)
        return l;
    pthread_mutex_lock(&t->lock);
    l = atomic_load_explicit(&t->leaves[i - 1], memory_order_acquire);
    if (!l) {
        struct flood_err err = {0};
        l = leaf_get(t, i, &err);
        if (l)
            atomic_store_explicit(&t->leaves[i - 1], l, memory_order_release);
        else
            atomic_fetch_add(&t->failed, 1);
    }
    pthread_mutex_unlock(&t->lock);
    return l;
}

/* The first TLS_SNI_AHEAD leaves, made (or read back) beside the server's start: a leaf
 * costs a few milliseconds (OpenSSL 3 decodes and checks a file's key slowly), so 128 of
 * them would add most of a second to the start, while a handshake that comes first just
 * makes its own under the same lock. */
static void *ahead_main(void *arg)
{
    struct tls_sni *t = arg;
    for (int i = 1; i <= t->wf->instances && i <= TLS_SNI_AHEAD && !atomic_load(&t->stopping); i++)
        (void)leaf_of(t, i);
    return NULL;
}

struct tls_sni *tls_sni_new(const char *state_dir, const struct wf_crowd *wf,
                            char ca_path[TLS_PATH_MAX], int *made_ca, struct flood_err *err)
{
    struct tls_sni *t = flood_xcalloc(1, sizeof(*t));
    t->wf = wf;
    pthread_mutex_init(&t->lock, NULL);
    t->leaves = flood_xcalloc((size_t)wf->instances, sizeof(*t->leaves));
    int n = snprintf(t->dir, sizeof(t->dir), "%s/leaves", state_dir);
    if (n < 0 || n >= (int)sizeof(t->dir)) {
        flood_err_set(err, FLOOD_ELIMIT, "tls: state folder path too long '%.100s...'", state_dir);
        goto fail;
    }
    if (tls_ensure_ca(state_dir, &t->ca, ca_path, made_ca, err) ||
        fs_mkdir_p(t->dir, 0700, "tls: leaves folder", err))
        goto fail;
    static const char *const local[] = {"localhost", "127.0.0.1", "::1"};
    size_t len = 0;
    char *pem = tls_leaf_pem(t->ca, local, 3, &len, err);
    if (!pem)
        goto fail;
    t->fallback = leaf_import(pem, len);
    OPENSSL_cleanse(pem, len);
    free(pem);
    if (!t->fallback) {
        flood_err_set(err, FLOOD_ECRYPTO, "tls: GnuTLS cannot load the localhost leaf");
        goto fail;
    }
    struct leaf *first = leaf_get(t, 1, err); /* one now: any error is said at start */
    if (!first)
        goto fail;
    atomic_store(&t->leaves[0], first);
    t->ahead_started = pthread_create(&t->ahead, NULL, ahead_main, t) == 0;
    return t;
fail:
    tls_sni_free(t);
    return NULL;
}

void tls_sni_free(struct tls_sni *t)
{
    if (!t)
        return;
    struct tls_sni *expect = t;
    atomic_compare_exchange_strong(&active, &expect, NULL);
    atomic_store(&t->stopping, 1);
    if (t->ahead_started)
        pthread_join(t->ahead, NULL);
    for (int i = 0; t->leaves && i < t->wf->instances; i++)
        leaf_free(atomic_load(&t->leaves[i]));
    free(t->leaves);
    leaf_free(t->fallback);
    tls_ca_free(t->ca);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

void tls_sni_get_stats(struct tls_sni *t, struct tls_sni_stats *out)
{
    out->made = atomic_load(&t->made);
    out->read = atomic_load(&t->read);
    out->failed = atomic_load(&t->failed);
}

void tls_sni_activate(struct tls_sni *t)
{
    atomic_store(&active, t);
}

int tls_sni_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
                     const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                     gnutls_pcert_st **pcert, unsigned int *pcert_length, gnutls_privkey_t *pkey)
{
    (void)req_ca_rdn;
    (void)nreqs;
    (void)pk_algos;
    (void)pk_algos_length;
    struct tls_sni *t = atomic_load(&active);
    if (!t)
        return -1;
    char name[WF_HOST_MAX];
    size_t len = sizeof(name);
    unsigned type = 0;
    struct leaf *l = NULL;
    if (gnutls_server_name_get(session, name, &len, &type, 0) == GNUTLS_E_SUCCESS &&
        type == GNUTLS_NAME_DNS && len < sizeof(name)) {
        int i = wf_instance_of_host_n(t->wf, name, len, WF_PORT_ANY);
        if (i > 0)
            l = leaf_of(t, i);
    }
    if (!l)
        l = t->fallback; /* GnuTLS makes it the client's to refuse, with its reason */
    *pcert = &l->pcert;
    *pcert_length = 1;
    *pkey = l->key;
    return 0;
}
