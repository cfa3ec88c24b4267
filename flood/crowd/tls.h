/* flood/crowd/tls.h: the crowd's TLS material (--tls), kept in the state folder.
 *
 * Which leaf a crowd gets (crowd.c): up to TLS_ONE_LEAF_MAX instances one leaf naming every
 * instance (below); a bigger crowd whose template puts every instance under one parent of
 * two labels or more ('i%d.flood.test') one wildcard leaf, *.flood.test, made the same way;
 * any other big crowd a leaf per instance made on first use by SNI (tls_sni.h). Never one
 * leaf naming thousands of hosts: 10,000 names make a 216 KB certificate, past OpenSSL's
 * 100 KB limit on a peer's certificate list, so clients abort the handshake.
 *
 *   ca.pem, ca.key       a self-signed CA (EC P-256, 10 years): the file a target trusts
 *   crowd.pem, crowd.key one leaf certificate (EC P-256, 397 days) signed by that CA, naming
 *                        every instance host, plus localhost, 127.0.0.1 and ::1
 *   tls.lock             held (flock) while the files are checked or made, so processes
 *                        sharing a state folder (shards) do not race
 *
 * Every file is created mode 0600 (written under a temporary name, then renamed into place).
 *
 * Reuse rules. The CA is made only when ca.pem is absent (an orphan ca.key is then
 * replaced: nobody can trust a CA whose certificate was never written). A ca.pem that exists
 * but does not parse, has no ca.key, does not match ca.key, is not a CA, expires within 30
 * days, or whose ca.key is readable by group or others is an ERROR, never silently
 * replaced: a target may already trust it, and a new CA would break that trust far away.
 * The error names the file and says to remove ca.pem and ca.key to start over.
 * The leaf is disposable: it is remade whenever it is missing, does not parse, does not
 * match crowd.key, was not signed by the CA, expires within 30 days, or names a different
 * set of hosts (compared as a set: order and duplicates do not matter, DNS names ignore
 * case). */
#ifndef FLOOD_TLS_H
#define FLOOD_TLS_H

#include <stddef.h>

#include "sign/err.h"

#define TLS_PATH_MAX  1024
#define TLS_HOSTS_MAX 100000 /* host names in one leaf */
/* Crowds up to this many instances keep one leaf naming every instance: about 2 KB, the
 * certificate flight well inside a TCP initial window (10 segments). */
#define TLS_ONE_LEAF_MAX 100

struct tls_files {
    char ca_path[TLS_PATH_MAX];   /* STATE/ca.pem: what a target must trust */
    char cert_path[TLS_PATH_MAX]; /* STATE/crowd.pem */
    char key_path[TLS_PATH_MAX];  /* STATE/crowd.key */
    char *cert_pem;               /* crowd.pem's contents, NUL-terminated (owned) */
    size_t cert_len;
    char *key_pem; /* crowd.key's contents (PKCS#8 PEM), NUL-terminated (owned) */
    size_t key_len;
    int made_ca;   /* 1 when this call made a new CA */
    int made_cert; /* 1 when this call made a new leaf */
};

/* Make, or reuse when still valid for exactly these hosts, the TLS files in state_dir
 * (made mode 0700 with any missing parent when missing). hosts are DNS names without a
 * port ("flood1.test") or IP literals ("127.0.0.11"); n_hosts may be 0.
 * Fills *out (zeroed first; free with tls_files_free, even after a failure).
 * Returns 0, or -1 and err: FLOOD_EINVAL for a bad host name or an unusable CA (see the
 * rules above), FLOOD_EIO for a folder or file that cannot be read or written (the message
 * names it), FLOOD_ECRYPTO when OpenSSL refuses, FLOOD_ELIMIT for a path longer than
 * TLS_PATH_MAX or more than TLS_HOSTS_MAX hosts. */
int tls_ensure(const char *state_dir, const char *const *hosts, size_t n_hosts,
               struct tls_files *out, struct flood_err *err) FLOOD_WUR;

/* Free the PEM strings of f and zero it. f may be NULL or already freed. */
void tls_files_free(struct tls_files *f);

/* ---- leaves made per name (tls_sni.h) ------------------------------------------------ */

/* The CA in memory (its private key too). */
struct tls_ca;

/* The CA of state_dir under the rules above (made when ca.pem is absent: *made 1; an
 * unusable one is an error), its path into ca_path. A new CA (tls_ca_free), or -1 and err. */
int tls_ensure_ca(const char *state_dir, struct tls_ca **ca, char ca_path[TLS_PATH_MAX], int *made,
                  struct flood_err *err) FLOOD_WUR;
void tls_ca_free(struct tls_ca *ca);
/* A new leaf signed by ca naming hosts[n_hosts] (n_hosts >= 1; hosts[0] is also its CN),
 * with a new EC P-256 key, as one PEM text: the certificate then the key (PKCS#8). A new
 * string (its length in *len; free it after OPENSSL_cleanse), or NULL and err. Thread-safe. */
char *tls_leaf_pem(const struct tls_ca *ca, const char *const *hosts, size_t n_hosts, size_t *len,
                   struct flood_err *err);
/* 1 when pem (a tls_leaf_pem text, e.g. read back from the state folder) holds a leaf of ca
 * for host with its key, more than 30 days from its end. */
int tls_leaf_ok(const struct tls_ca *ca, const char *pem, size_t len, const char *host);

#endif
