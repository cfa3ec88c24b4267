/* sign/: HTTP Signatures (draft-cavage-12 and RFC 9421), Digest (RFC 3230) and
 * Content-Digest (RFC 9530), key generation and loading.
 *
 * Pure functions: no I/O, no clock. The caller passes the time. A key is parsed once
 * (sign_key_*) and reused by every signature; a struct sign_key is immutable after
 * loading and may be shared by threads. */
#ifndef FLOOD_SIGN_H
#define FLOOD_SIGN_H

#include <stddef.h>
#include <time.h>

#include "sign/err.h"

/* ---- keys ---------------------------------------------------------------------------- */

enum sign_key_type { SIGN_KEY_RSA, SIGN_KEY_ED25519 };

struct sign_key; /* opaque; a private or a public key */

/* A new key pair (bits only for RSA). Returns a new key, free with sign_key_free; NULL and
 * err on failure. */
struct sign_key *sign_key_generate(enum sign_key_type type, int bits,
                                   struct flood_err *err) FLOOD_WUR;
/* Parse a PEM private key (PKCS#8 or traditional) or public key (SPKI). NULL and err on
 * failure. len may be 0 for a NUL-terminated string. */
struct sign_key *sign_key_from_pem(const char *pem, size_t len, struct flood_err *err) FLOOD_WUR;
/* Parse an Ed25519 public key from FEP-521a publicKeyMultibase ("z6Mk..."). */
struct sign_key *sign_key_from_multibase(const char *mb, struct flood_err *err) FLOOD_WUR;
void sign_key_free(struct sign_key *key);
enum sign_key_type sign_key_type(const struct sign_key *key);
int sign_key_is_private(const struct sign_key *key);
/* New strings, free(): PKCS#8 private PEM, SPKI public PEM, and (Ed25519 only)
 * the FEP-521a multibase form of the public key. NULL and err on failure. */
char *sign_key_private_pem(const struct sign_key *key, struct flood_err *err) FLOOD_WUR;
char *sign_key_public_pem(const struct sign_key *key, struct flood_err *err) FLOOD_WUR;
char *sign_key_multibase(const struct sign_key *key, struct flood_err *err) FLOOD_WUR;

/* ---- digests ------------------------------------------------------------------------- */

#define SIGN_DIGEST_MAX 64 /* "SHA-256=" + 44 base64 + NUL, or "sha-256=:...:" */

/* Write "SHA-256=<base64>" (Digest) or "sha-256=:<base64>:" (Content-Digest) of body into
 * out[SIGN_DIGEST_MAX]. */
void sign_digest(const void *body, size_t len, char out[SIGN_DIGEST_MAX]);
void sign_content_digest(const void *body, size_t len, char out[SIGN_DIGEST_MAX]);
/* Check a received Digest / Content-Digest header value against body. Returns
 * SIGN_OK, SIGN_ERR_DIGEST (a sha-256 member present and wrong), SIGN_ERR_SYNTAX, or
 * SIGN_ERR_ALGORITHM (no sha-256 member). */
int sign_digest_check(const char *header, const void *body, size_t len);
int sign_content_digest_check(const char *header, const void *body, size_t len);

/* ---- messages ------------------------------------------------------------------------ */

struct sign_header {
    const char *name; /* any case */
    const char *value;
};

/* A request as the signer or verifier sees it. Nothing is owned. */
struct sign_msg {
    const char *method;    /* "POST", "GET" */
    const char *scheme;    /* "http" or "https" (RFC 9421 @target-uri, @scheme) */
    const char *authority; /* host[:port] as in the Host header (@authority, "host") */
    const char *path;      /* the request target: path with "?query" when there is one */
    const struct sign_header *headers;
    size_t n_headers;
    const void *body; /* may be NULL with body_len 0 */
    size_t body_len;
};

enum sign_dialect { SIGN_CAVAGE, SIGN_RFC9421 };

/* Why a verification failed. SIGN_OK is 0. */
enum sign_verdict {
    SIGN_OK = 0,
    SIGN_ERR_MISSING,     /* no Signature / Signature-Input header */
    SIGN_ERR_SYNTAX,      /* a header that does not parse */
    SIGN_ERR_ALGORITHM,   /* an algorithm we do not know, or one the key cannot do */
    SIGN_ERR_NOT_COVERED, /* a required component/header not signed, or absent */
    SIGN_ERR_DIGEST,      /* Digest / Content-Digest does not match the body */
    SIGN_ERR_DATE,        /* Date or created outside the caller's window */
    SIGN_ERR_MISMATCH,    /* the signature does not verify with the key */
    SIGN_ERR_KEY,         /* no usable key */
};

/* A short stable name for a verdict ("ok", "missing", "syntax", "algorithm",
 * "not_covered", "digest", "date", "mismatch", "key"), used as a counter name. */
const char *sign_verdict_name(int verdict);

/* ---- signing ------------------------------------------------------------------------- */

struct sign_params {
    enum sign_dialect dialect;
    const struct sign_key *key; /* private */
    const char *key_id;         /* "https://host/users/x#main-key" */
    time_t now;                 /* the Date header / created parameter */
};

#define SIGN_MAX_OUT 6

/* Headers to add to a request, each a complete "Name: value" line (no CRLF). */
struct sign_out {
    char *lines[SIGN_MAX_OUT]; /* owned, free with sign_out_free */
    size_t n;
};

/* Sign msg. The result carries Host, Date and, with a body (a POST), Digest or
 * Content-Digest, then Signature (cavage) or Signature-Input and Signature (RFC 9421).
 * msg->headers may already hold a Content-Type, which cavage signs when present.
 * Covered: cavage "(request-target) host date [digest content-type]", algorithm
 * "rsa-sha256" for RSA ("hs2019" for Ed25519); RFC 9421 ("@method" "@target-uri"
 * "@authority" ["content-digest"]);created;keyid;alg. Returns 0, or -1 and err. */
int sign_request(const struct sign_params *p, const struct sign_msg *msg, struct sign_out *out,
                 struct flood_err *err) FLOOD_WUR;
void sign_out_free(struct sign_out *out);

/* ---- verifying ----------------------------------------------------------------------- */

struct sign_parsed; /* what a received signature declares */

/* Parse the signature headers of msg (RFC 9421 when Signature-Input is present, else
 * cavage: Signature, or "Authorization: Signature ..."). With several RFC 9421 signatures
 * the first member of Signature-Input is taken (Mastodon accepts exactly one; a sender
 * that adds more puts its own first); sign_parse_label picks one by label. On SIGN_OK
 * *out is a new object (free with sign_parsed_free) whose key id the caller uses to find
 * the key; otherwise *out is NULL and the verdict says why. */
int sign_parse(const struct sign_msg *msg, struct sign_parsed **out, struct flood_err *err);
enum sign_dialect sign_parsed_dialect(const struct sign_parsed *sp);
/* Borrowed: valid until sign_parsed_free. */
const char *sign_parsed_key_id(const struct sign_parsed *sp);
const char *sign_parsed_algorithm(const struct sign_parsed *sp); /* may be NULL */
void sign_parsed_free(struct sign_parsed *sp);

/* Verify a parsed signature against msg with the public key. The Date header (cavage) or
 * created parameter (RFC 9421) must lie within [now - window_s, now + window_s]. A POST
 * must cover its digest and the digest must match the body. Returns a verdict. */
int sign_verify(const struct sign_parsed *sp, const struct sign_msg *msg,
                const struct sign_key *key, time_t now, long window_s, struct flood_err *err);

/* ---- lower-level pieces: the fixture runner, tools and tests use them ---------------- */

/* The draft-cavage-12 signing string (section 2.3) of msg over the lower-case header
 * names in order; created/expires give "(created)"/"(expires)" (-1: not available). A new
 * string (free), or NULL and err (a declared header absent, a value too long). */
char *sign_cavage_signing_string(const struct sign_msg *msg, const char *const *headers, size_t n,
                                 long long created, long long expires,
                                 struct flood_err *err) FLOOD_WUR;
/* The RFC 9421 signature base (section 2.5) of msg for one Signature-Input member value:
 * the inner list with its parameters, e.g. ("@method" "@path");created=1;keyid="k". A new
 * string (free), or NULL and err. */
char *sign_rfc9421_base(const struct sign_msg *msg, const char *input,
                        struct flood_err *err) FLOOD_WUR;
/* Sign data with a private key and return the base64 signature (a new string). alg is
 * "rsa-sha256", "rsa-v1_5-sha256", "ed25519", "hs2019" (the key's own) or NULL (same). */
char *sign_data_b64(const struct sign_key *key, const char *alg, const void *data, size_t len,
                    struct flood_err *err) FLOOD_WUR;
/* As sign_parse, choosing the RFC 9421 signature by label (NULL: the first member of
 * Signature-Input, which is what sign_parse takes). */
int sign_parse_label(const struct sign_msg *msg, const char *label, struct sign_parsed **out,
                     struct flood_err *err);
/* The RFC 9421 label of a parsed signature (NULL for cavage). Borrowed. */
const char *sign_parsed_label(const struct sign_parsed *sp);
/* The signing string (cavage) or signature base (RFC 9421) sp covers in msg: a new
 * string, or NULL and err. */
char *sign_parsed_base(const struct sign_parsed *sp, const struct sign_msg *msg,
                       struct flood_err *err) FLOOD_WUR;
/* The cryptographic check alone, no policy (coverage, dates and digests are not looked
 * at): SIGN_OK, SIGN_ERR_MISMATCH, SIGN_ERR_ALGORITHM, SIGN_ERR_KEY, SIGN_ERR_NOT_COVERED
 * (a covered header absent) or SIGN_ERR_SYNTAX. */
int sign_verify_signature(const struct sign_parsed *sp, const struct sign_msg *msg,
                          const struct sign_key *key, struct flood_err *err);

/* ---- small helpers shared with the rest of flood --------------------------------------- */

/* IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") of t into out[32]. */
void sign_http_date(time_t t, char out[32]);
/* Parse an IMF-fixdate; -1 when it does not parse (second 60 included: time_t has no leap
 * second). */
int sign_parse_http_date(const char *s, time_t *out);

#endif
