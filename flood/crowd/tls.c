/* flood/crowd/tls.c: the crowd's CA and leaf certificate in the state folder (rules in tls.h).
 * OpenSSL 3 EVP and X509 interfaces only. */
#include "flood/crowd/tls.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "flood/core/fsutil.h"

#define CA_DAYS           3650
#define LEAF_DAYS         397        /* what browsers accept for any leaf; long enough for a lab */
#define RENEW_MARGIN_DAYS 30         /* a leaf closer than this to its end is remade */
#define PEM_FILE_MAX      (16 << 20) /* no PEM flood writes comes near this */

/* One subjectAltName entry, as "DNS:name" (lower case) or "IP:address" (canonical text). */
struct san {
    char *text;
};

static int san_cmp(const void *a, const void *b)
{
    return strcmp(((const struct san *)a)->text, ((const struct san *)b)->text);
}

static void sans_free(struct san *s, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        free(s[i].text);
    free(s);
}

/* A DNS name flood can put in a certificate: labels of letters, digits and '-' (not at a
 * label's ends), 1..63 bytes each, 253 in all. */
static int valid_dns_name(const char *h)
{
    size_t len = strlen(h), label = 0;
    if (len == 0 || len > 253)
        return 0;
    for (size_t i = 0; i <= len; i++) {
        char c = h[i];
        if (c == '.' || c == '\0') {
            if (label == 0 || label > 63 || h[i - 1] == '-')
                return 0;
            label = 0;
        } else if (isalnum((unsigned char)c) || (c == '-' && label > 0)) {
            label++;
        } else {
            return 0;
        }
    }
    return 1;
}

/* The SAN entry of host h into *out (new string), or -1 for a host that is neither a DNS
 * name nor an IP literal. */
static int san_of_host(const char *h, char **out)
{
    unsigned char addr[16];
    char buf[INET6_ADDRSTRLEN];
    if (inet_pton(AF_INET, h, addr) == 1 && inet_ntop(AF_INET, addr, buf, sizeof(buf))) {
        *out = flood_xasprintf("IP:%s", buf);
        return 0;
    }
    if (inet_pton(AF_INET6, h, addr) == 1 && inet_ntop(AF_INET6, addr, buf, sizeof(buf))) {
        *out = flood_xasprintf("IP:%s", buf);
        return 0;
    }
    /* A wildcard "*.PARENT" (RFC 6125 6.4.3: a whole left-most label) under a parent of at
     * least two labels: clients refuse "*.test" (one label, a TLD). */
    const char *name = !strncmp(h, "*.", 2) ? h + 2 : h;
    if (!valid_dns_name(name) || (name != h && !strchr(name, '.')))
        return -1;
    char *s = flood_xasprintf("DNS:%s", h);
    for (char *p = s + 4; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    *out = s;
    return 0;
}

/* Sort and drop duplicates; returns the new count. */
static size_t sans_unique(struct san *s, size_t n)
{
    if (n == 0)
        return 0;
    qsort(s, n, sizeof(*s), san_cmp);
    size_t k = 1;
    for (size_t i = 1; i < n; i++) {
        if (strcmp(s[i].text, s[k - 1].text) == 0)
            free(s[i].text);
        else
            s[k++] = s[i];
    }
    return k;
}

/* The SAN set wanted for hosts (sorted, unique) into *out; its count, or -1 and err. */
static int wanted_sans(const char *const *hosts, size_t n, struct san **out, size_t *n_out,
                       struct flood_err *err)
{
    static const char *const fixed[] = {"DNS:localhost", "IP:127.0.0.1", "IP:::1"};
    size_t nf = sizeof(fixed) / sizeof(fixed[0]);
    struct san *s = flood_xcalloc(n + nf, sizeof(*s));
    for (size_t i = 0; i < n; i++) {
        if (!hosts[i] || san_of_host(hosts[i], &s[i].text)) {
            flood_err_set(err, FLOOD_EINVAL,
                          "tls: host '%.200s' is not a DNS name or an IP address",
                          hosts[i] ? hosts[i] : "(null)");
            sans_free(s, n + nf);
            return -1;
        }
    }
    for (size_t i = 0; i < nf; i++)
        s[n + i].text = flood_xstrdup(fixed[i]);
    *n_out = sans_unique(s, n + nf);
    *out = s;
    return 0;
}

/* The SAN set of cert (sorted, unique), or -1 when it has none or an entry of another kind. */
static int cert_sans(X509 *cert, struct san **out, size_t *n_out)
{
    GENERAL_NAMES *names = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
    if (!names)
        return -1;
    int n = sk_GENERAL_NAME_num(names);
    struct san *s = flood_xcalloc(n > 0 ? (size_t)n : 1, sizeof(*s));
    size_t k = 0;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        const GENERAL_NAME *g = sk_GENERAL_NAME_value(names, i);
        int type;
        const ASN1_STRING *v = GENERAL_NAME_get0_value(g, &type);
        const unsigned char *d = v ? ASN1_STRING_get0_data(v) : NULL;
        int len = v ? ASN1_STRING_length(v) : 0;
        char buf[INET6_ADDRSTRLEN];
        if (type == GEN_DNS && d && len > 0 && memchr(d, 0, (size_t)len) == NULL) {
            char *t = flood_xasprintf("DNS:%.*s", len, (const char *)d);
            for (char *p = t + 4; *p; p++)
                *p = (char)tolower((unsigned char)*p);
            s[k++].text = t;
        } else if (type == GEN_IPADD && d && (len == 4 || len == 16) &&
                   inet_ntop(len == 4 ? AF_INET : AF_INET6, d, buf, sizeof(buf))) {
            s[k++].text = flood_xasprintf("IP:%s", buf);
        } else {
            rc = -1;
        }
    }
    GENERAL_NAMES_free(names);
    if (rc) {
        sans_free(s, k);
        return -1;
    }
    *n_out = sans_unique(s, k);
    *out = s;
    return 0;
}

static char *read_file(const char *path, size_t *len)
{
    return fs_read_file(path, PEM_FILE_MAX, len);
}

/* Write data to path with mode 0600, synced, through a temporary file renamed into place
 * (tls.lock is held: only this process writes here now). */
static int write_file(const char *path, const char *data, size_t len, struct flood_err *err)
{
    return fs_write_file(path, data, len, 0600, FS_REPLACE, 1, "tls", err);
}

/* PEM of a certificate or a private key (PKCS#8, unencrypted) into a new string. */
static char *pem_of(X509 *cert, EVP_PKEY *key, size_t *len_out)
{
    BIO *b = BIO_new(BIO_s_mem());
    if (!b)
        return NULL;
    int ok = cert ? PEM_write_bio_X509(b, cert)
                  : PEM_write_bio_PrivateKey(b, key, NULL, NULL, 0, NULL, NULL);
    char *data = NULL, *out = NULL;
    long len = BIO_get_mem_data(b, &data);
    if (ok == 1 && len > 0 && data) {
        out = flood_xstrndup(data, (size_t)len);
        *len_out = (size_t)len;
    }
    BIO_free(b);
    return out;
}

/* Never prompt for a passphrase: flood's keys have none, and an encrypted one is refused. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)u;
    return -1;
}

/* Parse the PEM text of a certificate (cert != NULL) or a private key. */
static int parse_pem(const char *text, size_t len, X509 **cert, EVP_PKEY **key)
{
    if (len > INT32_MAX)
        return -1;
    BIO *b = BIO_new_mem_buf(text, (int)len);
    if (!b)
        return -1;
    if (cert)
        *cert = PEM_read_bio_X509(b, NULL, no_passphrase, NULL);
    else
        *key = PEM_read_bio_PrivateKey(b, NULL, no_passphrase, NULL);
    BIO_free(b);
    return (cert ? *cert != NULL : *key != NULL) ? 0 : -1;
}

/* 0 when cert's notAfter is more than days from now. */
static int expires_within(X509 *cert, int days)
{
    time_t t = time(NULL) + (time_t)days * 86400;
    return X509_cmp_time(X509_get0_notAfter(cert), &t) <= 0;
}

static int add_ext(X509 *cert, X509V3_CTX *ctx, int nid, const char *value, struct flood_err *err)
{
    X509_EXTENSION *ex = X509V3_EXT_nconf_nid(NULL, ctx, nid, value);
    if (!ex) {
        flood_err_set(err, FLOOD_ECRYPTO, "tls: cannot make extension '%s'", OBJ_nid2sn(nid));
        flood_err_openssl(err);
        return -1;
    }
    int ok = X509_add_ext(cert, ex, -1);
    X509_EXTENSION_free(ex);
    if (ok != 1) {
        flood_err_set(err, FLOOD_ECRYPTO, "tls: cannot add extension '%s'", OBJ_nid2sn(nid));
        flood_err_openssl(err);
        return -1;
    }
    return 0;
}

/* A new EC P-256 key, or NULL and err. */
static EVP_PKEY *new_key(struct flood_err *err)
{
    EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    if (!k) {
        flood_err_set(err, FLOOD_ECRYPTO, "tls: cannot generate an EC P-256 key");
        flood_err_openssl(err);
    }
    return k;
}

/* A new certificate for key: version 3, random positive 127-bit serial, subject
 * O=flood/CN=cn, valid from an hour ago (clock skew) for days. Extensions and signature are
 * the caller's. */
static X509 *new_cert(EVP_PKEY *key, const char *cn, int days, struct flood_err *err)
{
    X509 *x = X509_new();
    unsigned char serial[16];
    BIGNUM *bn = NULL;
    X509_NAME *name = x ? X509_get_subject_name(x) : NULL;
    int ok = x && name && X509_set_version(x, X509_VERSION_3) == 1 &&
             RAND_bytes(serial, sizeof(serial)) == 1;
    if (ok) {
        serial[0] &= 0x7f;
        serial[0] |= 0x40; /* positive, and 16 bytes long */
        bn = BN_bin2bn(serial, sizeof(serial), NULL);
        ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
    }
    ok = ok && X509_gmtime_adj(X509_getm_notBefore(x), -3600) != NULL &&
         X509_time_adj_ex(X509_getm_notAfter(x), days, 0, NULL) != NULL &&
         X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"flood", -1, -1,
                                    0) == 1 &&
         X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1,
                                    0) == 1 &&
         X509_set_pubkey(x, key) == 1;
    BN_free(bn);
    if (!ok) {
        flood_err_set(err, FLOOD_ECRYPTO, "tls: cannot build the certificate '%s'", cn);
        flood_err_openssl(err);
        X509_free(x);
        return NULL;
    }
    return x;
}

static int sign_cert(X509 *x, EVP_PKEY *ca_key, struct flood_err *err)
{
    if (X509_sign(x, ca_key, EVP_sha256()) <= 0) {
        flood_err_set(err, FLOOD_ECRYPTO, "tls: cannot sign the certificate");
        flood_err_openssl(err);
        return -1;
    }
    return 0;
}

/* Write key then certificate (so an existing certificate always has its key). */
static int write_pair(const char *cert_path, X509 *cert, const char *key_path, EVP_PKEY *key,
                      struct flood_err *err)
{
    size_t cl = 0, kl = 0;
    char *cp = pem_of(cert, NULL, &cl), *kp = pem_of(NULL, key, &kl);
    int rc = -1;
    if (!cp || !kp) {
        flood_err_set(err, FLOOD_ECRYPTO, "tls: cannot encode '%s' as PEM", cert_path);
        flood_err_openssl(err);
    } else if (write_file(key_path, kp, kl, err) == 0 && write_file(cert_path, cp, cl, err) == 0) {
        rc = 0;
    }
    if (kp)
        OPENSSL_cleanse(kp, kl);
    free(kp);
    free(cp);
    return rc;
}

static int make_ca(const char *ca_path, const char *ca_key_path, X509 **ca_out, EVP_PKEY **key_out,
                   struct flood_err *err)
{
    EVP_PKEY *key = new_key(err);
    if (!key)
        return -1;
    X509 *ca = new_cert(key, "flood crowd CA", CA_DAYS, err);
    X509V3_CTX ctx;
    int rc = -1;
    if (ca && X509_set_issuer_name(ca, X509_get_subject_name(ca)) != 1) {
        flood_err_set(err, FLOOD_ECRYPTO, "tls: cannot set the CA's issuer");
        flood_err_openssl(err);
    } else if (ca) {
        X509V3_set_ctx(&ctx, ca, ca, NULL, NULL, 0);
        if (add_ext(ca, &ctx, NID_basic_constraints, "critical,CA:TRUE", err) == 0 &&
            add_ext(ca, &ctx, NID_key_usage, "critical,keyCertSign,cRLSign", err) == 0 &&
            add_ext(ca, &ctx, NID_subject_key_identifier, "hash", err) == 0 &&
            sign_cert(ca, key, err) == 0 && write_pair(ca_path, ca, ca_key_path, key, err) == 0)
            rc = 0;
    }
    if (rc) {
        X509_free(ca);
        EVP_PKEY_free(key);
        return -1;
    }
    *ca_out = ca;
    *key_out = key;
    return 0;
}

/* The subjectAltName value "DNS:a,IP:b,..." of a SAN set (entries are validated: no
 * commas or other configuration syntax can occur in them). */
static char *san_value(const struct san *s, size_t n)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(s[i].text) + 1;
    char *v = flood_xmalloc(len), *p = v;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(s[i].text);
        if (i)
            *p++ = ',';
        memcpy(p, s[i].text, l);
        p += l;
    }
    *p = '\0';
    return v;
}

static int make_leaf(const char *cert_path, const char *key_path, X509 *ca, EVP_PKEY *ca_key,
                     const struct san *sans, size_t n_sans, struct flood_err *err)
{
    EVP_PKEY *key = new_key(err);
    if (!key)
        return -1;
    X509 *leaf = new_cert(key, "flood crowd", LEAF_DAYS, err);
    int rc = -1;
    if (leaf && X509_set_issuer_name(leaf, X509_get_subject_name(ca)) != 1) {
        flood_err_set(err, FLOOD_ECRYPTO, "tls: cannot set the leaf's issuer");
        flood_err_openssl(err);
    } else if (leaf) {
        X509V3_CTX ctx;
        X509V3_set_ctx(&ctx, ca, leaf, NULL, NULL, 0);
        char *alt = san_value(sans, n_sans);
        if (add_ext(leaf, &ctx, NID_basic_constraints, "critical,CA:FALSE", err) == 0 &&
            add_ext(leaf, &ctx, NID_key_usage, "critical,digitalSignature", err) == 0 &&
            add_ext(leaf, &ctx, NID_ext_key_usage, "serverAuth", err) == 0 &&
            add_ext(leaf, &ctx, NID_subject_key_identifier, "hash", err) == 0 &&
            add_ext(leaf, &ctx, NID_authority_key_identifier, "keyid:always", err) == 0 &&
            add_ext(leaf, &ctx, NID_subject_alt_name, alt, err) == 0 &&
            sign_cert(leaf, ca_key, err) == 0 &&
            write_pair(cert_path, leaf, key_path, key, err) == 0)
            rc = 0;
        free(alt);
    }
    X509_free(leaf);
    EVP_PKEY_free(key);
    return rc;
}

/* Load the existing CA, checking every rule of tls.h; -1 and err when it is unusable. */
static int load_ca(const char *ca_path, const char *ca_key_path, X509 **ca_out, EVP_PKEY **key_out,
                   struct flood_err *err)
{
    static const char fix[] = "remove ca.pem and ca.key to make a new CA (targets must then "
                              "trust the new one)";
    size_t len = 0;
    X509 *ca = NULL;
    EVP_PKEY *key = NULL;
    struct stat st;
    char *text = read_file(ca_path, &len);
    if (!text) {
        flood_err_set(err, FLOOD_EIO, "tls: cannot read '%s': %s", ca_path, strerror(errno));
        return -1;
    }
    int bad = parse_pem(text, len, &ca, NULL);
    free(text);
    if (bad) {
        ERR_clear_error();
        flood_err_set(err, FLOOD_EINVAL, "tls: '%s' is not a PEM certificate; %s", ca_path, fix);
        return -1;
    }
    text = read_file(ca_key_path, &len);
    if (!text) {
        int e = errno;
        X509_free(ca);
        flood_err_set(err, e == ENOENT ? FLOOD_EINVAL : FLOOD_EIO, "tls: cannot read '%s': %s; %s",
                      ca_key_path, strerror(e), fix);
        return -1;
    }
    bad = parse_pem(text, len, NULL, &key);
    OPENSSL_cleanse(text, len);
    free(text);
    const char *why = NULL;
    if (bad)
        why = "ca.key is not a PEM private key without passphrase";
    else if (X509_check_private_key(ca, key) != 1)
        why = "ca.key does not match ca.pem";
    else if (X509_check_ca(ca) < 1)
        why = "ca.pem is not a CA certificate";
    else if (expires_within(ca, RENEW_MARGIN_DAYS))
        why = "ca.pem has expired or expires within 30 days";
    ERR_clear_error();
    if (!why && stat(ca_key_path, &st) == 0 && (st.st_mode & 077)) {
        flood_err_set(err, FLOOD_EINVAL,
                      "tls: '%s' is readable by group or others (mode %04o); "
                      "chmod 600 it",
                      ca_key_path, (unsigned)(st.st_mode & 07777));
        X509_free(ca);
        EVP_PKEY_free(key);
        return -1;
    }
    if (why) {
        flood_err_set(err, FLOOD_EINVAL, "tls: %s (in '%s'); %s", why, ca_path, fix);
        X509_free(ca);
        EVP_PKEY_free(key);
        return -1;
    }
    *ca_out = ca;
    *key_out = key;
    return 0;
}

/* 1 when the leaf in cert_path/key_path is usable as is for sans under ca. */
static int leaf_ok(const char *cert_path, const char *key_path, X509 *ca, const struct san *sans,
                   size_t n_sans)
{
    size_t cl = 0, kl = 0;
    char *ct = read_file(cert_path, &cl), *kt = read_file(key_path, &kl);
    X509 *leaf = NULL;
    EVP_PKEY *key = NULL;
    struct san *have = NULL;
    size_t n_have = 0;
    struct stat st;
    int ok = ct && kt && parse_pem(ct, cl, &leaf, NULL) == 0 &&
             parse_pem(kt, kl, NULL, &key) == 0 && X509_check_private_key(leaf, key) == 1 &&
             X509_NAME_cmp(X509_get_issuer_name(leaf), X509_get_subject_name(ca)) == 0 &&
             X509_verify(leaf, X509_get0_pubkey(ca)) == 1 &&
             !expires_within(leaf, RENEW_MARGIN_DAYS) && stat(key_path, &st) == 0 &&
             (st.st_mode & 077) == 0 && cert_sans(leaf, &have, &n_have) == 0 && n_have == n_sans;
    for (size_t i = 0; ok && i < n_sans; i++)
        ok = strcmp(have[i].text, sans[i].text) == 0;
    ERR_clear_error();
    sans_free(have, n_have);
    X509_free(leaf);
    EVP_PKEY_free(key);
    if (kt)
        OPENSSL_cleanse(kt, kl);
    free(kt);
    free(ct);
    return ok;
}

static int join(char *out, const char *dir, const char *name, struct flood_err *err)
{
    int n = snprintf(out, TLS_PATH_MAX, "%s/%s", dir, name);
    if (n < 0 || n >= TLS_PATH_MAX) {
        flood_err_set(err, FLOOD_ELIMIT, "tls: state folder path too long '%.100s...'", dir);
        return -1;
    }
    return 0;
}

/* The folder exists (made mode 0700 when missing, by this process or another one at the
 * same moment); a lock file in it is held on return. */
static int open_dir_locked(const char *dir, int *lock_fd, struct flood_err *err)
{
    char path[TLS_PATH_MAX];
    if (fs_mkdir_p(dir, 0700, "tls: state folder", err) || join(path, dir, "tls.lock", err))
        return -1;
    return fs_lock(path, NULL, lock_fd, "tls", err);
}

int tls_ensure(const char *state_dir, const char *const *hosts, size_t n_hosts,
               struct tls_files *out, struct flood_err *err)
{
    memset(out, 0, sizeof(*out));
    if (!state_dir || !*state_dir || (n_hosts && !hosts)) {
        flood_err_set(err, FLOOD_EINVAL, "tls: no state folder or no host list");
        return -1;
    }
    if (n_hosts > TLS_HOSTS_MAX) {
        flood_err_set(err, FLOOD_ELIMIT, "tls: %zu hosts, more than %d in one certificate", n_hosts,
                      TLS_HOSTS_MAX);
        return -1;
    }
    char ca_key_path[TLS_PATH_MAX];
    if (join(out->ca_path, state_dir, "ca.pem", err) ||
        join(ca_key_path, state_dir, "ca.key", err) ||
        join(out->cert_path, state_dir, "crowd.pem", err) ||
        join(out->key_path, state_dir, "crowd.key", err))
        return -1;

    struct san *sans = NULL;
    size_t n_sans = 0;
    if (wanted_sans(hosts, n_hosts, &sans, &n_sans, err))
        return -1;

    int lock_fd = -1, rc = -1;
    X509 *ca = NULL;
    EVP_PKEY *ca_key = NULL;
    if (open_dir_locked(state_dir, &lock_fd, err))
        goto done;

    struct stat st;
    if (stat(out->ca_path, &st) != 0 && errno == ENOENT) {
        if (make_ca(out->ca_path, ca_key_path, &ca, &ca_key, err))
            goto done;
        out->made_ca = 1;
    } else if (load_ca(out->ca_path, ca_key_path, &ca, &ca_key, err)) {
        goto done;
    }

    if (out->made_ca || !leaf_ok(out->cert_path, out->key_path, ca, sans, n_sans)) {
        if (make_leaf(out->cert_path, out->key_path, ca, ca_key, sans, n_sans, err))
            goto done;
        out->made_cert = 1;
    }

    out->cert_pem = read_file(out->cert_path, &out->cert_len);
    out->key_pem = out->cert_pem ? read_file(out->key_path, &out->key_len) : NULL;
    if (!out->key_pem) {
        flood_err_set(err, FLOOD_EIO, "tls: cannot read '%s': %s",
                      out->cert_pem ? out->key_path : out->cert_path, strerror(errno));
        goto done;
    }
    rc = 0;
done:
    if (lock_fd >= 0)
        close(lock_fd); /* releases the lock */
    X509_free(ca);
    EVP_PKEY_free(ca_key);
    sans_free(sans, n_sans);
    if (rc)
        tls_files_free(out);
    return rc;
}

/* ---- the CA alone, and leaves made from it in memory ---------------------------------- */

struct tls_ca {
    X509 *cert;
    EVP_PKEY *key;
};

int tls_ensure_ca(const char *state_dir, struct tls_ca **ca, char ca_path[TLS_PATH_MAX], int *made,
                  struct flood_err *err)
{
    *ca = NULL;
    *made = 0;
    char ca_key_path[TLS_PATH_MAX];
    if (!state_dir || !*state_dir) {
        flood_err_set(err, FLOOD_EINVAL, "tls: no state folder");
        return -1;
    }
    if (join(ca_path, state_dir, "ca.pem", err) || join(ca_key_path, state_dir, "ca.key", err))
        return -1;
    int lock_fd = -1, rc = -1;
    struct tls_ca *c = flood_xcalloc(1, sizeof(*c));
    struct stat st;
    if (open_dir_locked(state_dir, &lock_fd, err))
        goto done;
    if (stat(ca_path, &st) != 0 && errno == ENOENT) {
        if (make_ca(ca_path, ca_key_path, &c->cert, &c->key, err))
            goto done;
        *made = 1;
    } else if (load_ca(ca_path, ca_key_path, &c->cert, &c->key, err)) {
        goto done;
    }
    rc = 0;
done:
    if (lock_fd >= 0)
        close(lock_fd);
    if (rc)
        tls_ca_free(c);
    else
        *ca = c;
    return rc;
}

void tls_ca_free(struct tls_ca *ca)
{
    if (!ca)
        return;
    X509_free(ca->cert);
    EVP_PKEY_free(ca->key);
    free(ca);
}

char *tls_leaf_pem(const struct tls_ca *ca, const char *const *hosts, size_t n_hosts, size_t *len,
                   struct flood_err *err)
{
    struct san *sans = flood_xcalloc(n_hosts ? n_hosts : 1, sizeof(*sans));
    for (size_t i = 0; i < n_hosts; i++) {
        if (san_of_host(hosts[i], &sans[i].text)) {
            flood_err_set(err, FLOOD_EINVAL,
                          "tls: host '%.200s' is not a DNS name or an IP address", hosts[i]);
            sans_free(sans, n_hosts);
            return NULL;
        }
    }
    EVP_PKEY *key = new_key(err);
    X509 *leaf = key ? new_cert(key, hosts[0], LEAF_DAYS, err) : NULL;
    char *alt = san_value(sans, n_hosts), *out = NULL;
    X509V3_CTX ctx;
    if (leaf) {
        X509V3_set_ctx(&ctx, ca->cert, leaf, NULL, NULL, 0);
        if (X509_set_issuer_name(leaf, X509_get_subject_name(ca->cert)) == 1 &&
            add_ext(leaf, &ctx, NID_basic_constraints, "critical,CA:FALSE", err) == 0 &&
            add_ext(leaf, &ctx, NID_key_usage, "critical,digitalSignature", err) == 0 &&
            add_ext(leaf, &ctx, NID_ext_key_usage, "serverAuth", err) == 0 &&
            add_ext(leaf, &ctx, NID_authority_key_identifier, "keyid:always", err) == 0 &&
            add_ext(leaf, &ctx, NID_subject_alt_name, alt, err) == 0 &&
            sign_cert(leaf, ca->key, err) == 0) {
            size_t cl = 0, kl = 0;
            char *cp = pem_of(leaf, NULL, &cl), *kp = pem_of(NULL, key, &kl);
            if (cp && kp) {
                out = flood_xmalloc(cl + kl + 1);
                memcpy(out, cp, cl);
                memcpy(out + cl, kp, kl + 1);
                *len = cl + kl;
            } else {
                flood_err_set(err, FLOOD_ECRYPTO, "tls: cannot encode the leaf of '%s'", hosts[0]);
            }
            if (kp)
                OPENSSL_cleanse(kp, kl);
            free(kp);
            free(cp);
        }
    }
    free(alt);
    X509_free(leaf);
    EVP_PKEY_free(key);
    sans_free(sans, n_hosts);
    return out;
}

int tls_leaf_ok(const struct tls_ca *ca, const char *pem, size_t len, const char *host)
{
    X509 *leaf = NULL;
    EVP_PKEY *key = NULL;
    int ok = parse_pem(pem, len, &leaf, NULL) == 0 && parse_pem(pem, len, NULL, &key) == 0 &&
             X509_check_private_key(leaf, key) == 1 &&
             X509_NAME_cmp(X509_get_issuer_name(leaf), X509_get_subject_name(ca->cert)) == 0 &&
             X509_verify(leaf, X509_get0_pubkey(ca->cert)) == 1 &&
             !expires_within(leaf, RENEW_MARGIN_DAYS) &&
             X509_check_host(leaf, host, 0, X509_CHECK_FLAG_NO_WILDCARDS, NULL) == 1;
    ERR_clear_error();
    X509_free(leaf);
    EVP_PKEY_free(key);
    return ok;
}

void tls_files_free(struct tls_files *f)
{
    if (!f)
        return;
    free(f->cert_pem);
    if (f->key_pem)
        OPENSSL_cleanse(f->key_pem, f->key_len);
    free(f->key_pem);
    memset(f, 0, sizeof(*f));
}
