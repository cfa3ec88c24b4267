/* sign/internal.h: what the files of sign/ share and nothing outside sign/ uses.
 * Limits, the key structure, base64, the RFC 8941 structured-field subset, header lookup. */
#ifndef FLOOD_SIGN_INTERNAL_H
#define FLOOD_SIGN_INTERNAL_H

#include <openssl/evp.h>
#include <stddef.h>

#include "sign/sign.h"

/* Bounds on hostile input: every parser stops at these. */
#define SIGN_HEADER_VALUE_MAX 8192 /* one header value, combined lines included */
#define SIGN_MAX_COVERED      32   /* headers / components one signature may cover */
#define SIGN_SIG_BYTES_MAX    1024 /* a decoded signature (RSA-8192 is 1024 bytes) */
#define SIGN_SFV_MAX_MEMBERS  16   /* dictionary members (signature labels, digests) */
#define SIGN_SFV_MAX_PARAMS   16   /* parameters on one item or inner list */

/* ---- keys ---------------------------------------------------------------------------- */

struct sign_key {
    EVP_PKEY *pkey;
    enum sign_key_type type;
    int is_private;
    int pss_only; /* an RSASSA-PSS key (OID 1.2.840.113549.1.1.10): PSS signatures only */
    /* Private keys: a signing context for the default algorithm, set up once at load and
     * never changed; each signature works on a fresh copy of it (EVP_MD_CTX_copy_ex only
     * reads the source), so threads can share the key. NULL when the copy is unsupported. */
    EVP_MD_CTX *sign_tmpl;
};

/* Signature algorithms flood signs or verifies. */
enum sign_alg {
    SIGN_ALG_RSA_SHA256,     /* RSASSA-PKCS1-v1_5 with SHA-256 (cavage rsa-sha256,
                                RFC 9421 rsa-v1_5-sha256) */
    SIGN_ALG_RSA_PSS_SHA512, /* RFC 9421 rsa-pss-sha512: MGF1-SHA-512, salt 64 */
    SIGN_ALG_ED25519,
};

/* The algorithm a key signs with by default (RSA: rsa-sha256, Ed25519: ed25519). */
enum sign_alg sign_key_default_alg(const struct sign_key *key);
/* Whether key can make or check alg. */
int sign_key_can(const struct sign_key *key, enum sign_alg alg);

/* Sign data with key; sig[SIGN_SIG_BYTES_MAX]. A fresh EVP_MD_CTX per call: a key may be
 * shared by threads. 0, or -1 and err. */
int sign_key_sign(const struct sign_key *key, enum sign_alg alg, const void *data, size_t len,
                  unsigned char *sig, size_t *sig_len, struct flood_err *err) FLOOD_WUR;
/* 1 when sig verifies, 0 when it does not, -1 and err when the key cannot do alg. */
int sign_key_verify(const struct sign_key *key, enum sign_alg alg, const void *data, size_t len,
                    const unsigned char *sig, size_t sig_len, struct flood_err *err);

/* ---- base64 (RFC 4648 section 4, padded) --------------------------------------------- */

/* Encode into out (room for 4*ceil(len/3)+1); returns the length written (NUL added). */
size_t sign_b64_encode(const unsigned char *in, size_t len, char *out);
/* Strict decode: padded, no whitespace, canonical trailing bits. Returns the decoded
 * length, or -1 when the text is not base64 or does not fit out_max. */
long sign_b64_decode(const char *in, size_t len, unsigned char *out, size_t out_max);

/* ---- growing string with a cap --------------------------------------------------------- */

struct sign_buf {
    char *p; /* owned, NUL-terminated */
    size_t len, cap, max;
    int overflow; /* set once an append would pass max; later appends are dropped */
};

void sign_buf_init(struct sign_buf *b, size_t max);
void sign_buf_add(struct sign_buf *b, const char *s, size_t n);
void sign_buf_str(struct sign_buf *b, const char *s);
void sign_buf_free(struct sign_buf *b);

/* ---- message helpers ------------------------------------------------------------------- */

/* Value of header name (case-insensitive) in msg: NULL when absent. Several lines of the
 * same name are joined by ", " with each value's surrounding whitespace trimmed, as
 * draft-cavage-12 section 2.3 and RFC 9421 section 2.1 both ask. *too_long is set when the
 * combined value passes SIGN_HEADER_VALUE_MAX. The result is owned by the caller (free). */
char *sign_msg_header(const struct sign_msg *msg, const char *name, int *too_long);
/* Number of header lines named name. */
size_t sign_msg_header_count(const struct sign_msg *msg, const char *name);
/* Whether method is (case-insensitively) m. */
int sign_method_is(const struct sign_msg *msg, const char *m);
/* Whether a request of this method carries a body that must be digested (POST, PUT,
 * PATCH, or any request with body bytes). */
int sign_msg_has_body(const struct sign_msg *msg);

/* ---- RFC 8941 structured fields: the subset HTTP signatures use ------------------------ */

enum sfv_type { SFV_INTEGER, SFV_DECIMAL, SFV_STRING, SFV_TOKEN, SFV_BYTES, SFV_BOOLEAN };

struct sfv_bare {
    enum sfv_type type;
    long long integer;    /* SFV_INTEGER; SFV_BOOLEAN 0/1 */
    char *text;           /* SFV_STRING (unescaped), SFV_TOKEN, SFV_DECIMAL (as written) */
    unsigned char *bytes; /* SFV_BYTES */
    size_t n_bytes;
};

struct sfv_param {
    char *key;
    struct sfv_bare value;
};

struct sfv_item {
    struct sfv_bare bare;
    struct sfv_param *params;
    size_t n_params;
};

struct sfv_member {
    char *key;
    int is_inner;           /* an inner list: items/n_items and params */
    struct sfv_item item;   /* when !is_inner: the item with its parameters */
    struct sfv_item *items; /* when is_inner */
    size_t n_items;
    struct sfv_param *params; /* inner-list parameters */
    size_t n_params;
};

struct sfv_dict {
    struct sfv_member *members;
    size_t n;
};

/* Parse an RFC 8941 Dictionary (section 4.2.2) strictly: bounded members, parameters and
 * inner-list items, no duplicate keys. 0, or -1 and err. Free with sfv_dict_free. */
int sfv_parse_dict(const char *s, size_t len, struct sfv_dict *out, struct flood_err *err);
void sfv_dict_free(struct sfv_dict *d);
const struct sfv_member *sfv_dict_get(const struct sfv_dict *d, const char *key);
const struct sfv_bare *sfv_params_get(const struct sfv_param *p, size_t n, const char *key);
/* Serialise (RFC 8941 section 4.1) an inner list with its parameters, or one bare item. */
void sfv_serialize_inner(struct sign_buf *b, const struct sfv_member *m);
void sfv_serialize_bare(struct sign_buf *b, const struct sfv_bare *v);
void sfv_serialize_params(struct sign_buf *b, const struct sfv_param *p, size_t n);

/* ---- the two dialects ---------------------------------------------------------------- */

struct sign_parsed {
    enum sign_dialect dialect;
    char *key_id;
    char *algorithm; /* NULL when not given */
    char *label;     /* RFC 9421 signature label */
    unsigned char sig[SIGN_SIG_BYTES_MAX];
    size_t sig_len;
    /* cavage: the declared header list, lower-cased */
    char *covered[SIGN_MAX_COVERED];
    size_t n_covered;
    long long created, expires; /* -1 when absent */
    /* RFC 9421: the Signature-Input dictionary and the chosen member */
    struct sfv_dict input;
    const struct sfv_member *member;
};

int sign_cavage_parse(const struct sign_msg *msg, struct sign_parsed *sp, struct flood_err *err);
int sign_cavage_sign(const struct sign_params *p, const struct sign_msg *msg, struct sign_out *out,
                     struct flood_err *err) FLOOD_WUR;
int sign_cavage_check(const struct sign_parsed *sp, const struct sign_msg *msg,
                      const struct sign_key *key, struct flood_err *err);
int sign_cavage_policy(const struct sign_parsed *sp, const struct sign_msg *msg, time_t now,
                       long window_s, struct flood_err *err);

int sign_rfc9421_parse(const struct sign_msg *msg, const char *label, struct sign_parsed *sp,
                       struct flood_err *err);
int sign_rfc9421_sign(const struct sign_params *p, const struct sign_msg *msg, struct sign_out *out,
                      struct flood_err *err) FLOOD_WUR;
int sign_rfc9421_check(const struct sign_parsed *sp, const struct sign_msg *msg,
                       const struct sign_key *key, struct flood_err *err);
int sign_rfc9421_policy(const struct sign_parsed *sp, const struct sign_msg *msg, time_t now,
                        long window_s, struct flood_err *err);

/* Append a "Name: value" line to out. */
void sign_out_add(struct sign_out *out, const char *name, const char *value);

#endif
