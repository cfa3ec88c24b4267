/* sign/key.c: key generation, PEM load and store, and the raw sign / verify calls. */
#include <openssl/core_names.h>
#include <openssl/decoder.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <stdlib.h>
#include <string.h>

#include "sign/internal.h"

#define SIGN_RSA_BITS_MIN 1024 /* draft-cavage-12 Appendix C's test key is 1024 bits */
#define SIGN_RSA_BITS_MAX 8192 /* bounds the cost of one verification */
#define SIGN_PEM_MAX      (64 * 1024)

static int ctx_init(EVP_MD_CTX *ctx, const struct sign_key *key, enum sign_alg alg, int signing);

/* The per-key signing template (see struct sign_key); NULL when this OpenSSL cannot copy a
 * signing context of this type, and signing then sets up a context per call. */
static EVP_MD_CTX *make_template(const struct sign_key *key)
{
    EVP_MD_CTX *t = EVP_MD_CTX_new(), *probe = EVP_MD_CTX_new();
    int ok = t && probe;
    if (ok) {
        EVP_MD_CTX_set_flags(t, EVP_MD_CTX_FLAG_FINALISE);
        ok = ctx_init(t, key, sign_key_default_alg(key), 1) == 0 &&
             EVP_MD_CTX_copy_ex(probe, t) == 1;
    }
    EVP_MD_CTX_free(probe);
    ERR_clear_error();
    if (!ok) {
        EVP_MD_CTX_free(t);
        return NULL;
    }
    return t;
}

static struct sign_key *key_wrap(EVP_PKEY *pkey, int is_private, struct flood_err *err)
{
    struct sign_key *k;
    int id = EVP_PKEY_get_base_id(pkey);
    if (id == EVP_PKEY_RSA || id == EVP_PKEY_RSA_PSS) {
        int bits = EVP_PKEY_get_bits(pkey);
        if (bits < SIGN_RSA_BITS_MIN || bits > SIGN_RSA_BITS_MAX) {
            flood_err_set(err, FLOOD_EINVAL, "sign: RSA key of %d bits (want %d..%d)", bits,
                          SIGN_RSA_BITS_MIN, SIGN_RSA_BITS_MAX);
            EVP_PKEY_free(pkey);
            return NULL;
        }
    } else if (id != EVP_PKEY_ED25519) {
        flood_err_set(err, FLOOD_EINVAL, "sign: unsupported key type '%s'",
                      OBJ_nid2sn(id) ? OBJ_nid2sn(id) : "?");
        EVP_PKEY_free(pkey);
        return NULL;
    }
    if (EVP_PKEY_get_size(pkey) <= 0 || EVP_PKEY_get_size(pkey) > SIGN_SIG_BYTES_MAX) {
        flood_err_set(err, FLOOD_EINVAL, "sign: key signatures too large");
        EVP_PKEY_free(pkey);
        return NULL;
    }
    k = flood_xcalloc(1, sizeof(*k));
    k->pkey = pkey;
    k->type = id == EVP_PKEY_ED25519 ? SIGN_KEY_ED25519 : SIGN_KEY_RSA;
    k->pss_only = id == EVP_PKEY_RSA_PSS;
    k->is_private = is_private;
    if (is_private)
        k->sign_tmpl = make_template(k);
    return k;
}

struct sign_key *sign_key_generate(enum sign_key_type type, int bits, struct flood_err *err)
{
    EVP_PKEY *pkey = NULL;
    EVP_PKEY_CTX *ctx;
    if (type == SIGN_KEY_RSA && (bits < 2048 || bits > SIGN_RSA_BITS_MAX)) {
        flood_err_set(err, FLOOD_EINVAL, "sign: RSA key size %d (want 2048..%d)", bits,
                      SIGN_RSA_BITS_MAX);
        return NULL;
    }
    ctx = EVP_PKEY_CTX_new_from_name(NULL, type == SIGN_KEY_RSA ? "RSA" : "ED25519", NULL);
    if (!ctx || EVP_PKEY_keygen_init(ctx) <= 0 ||
        (type == SIGN_KEY_RSA && EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, bits) <= 0) ||
        EVP_PKEY_generate(ctx, &pkey) <= 0) {
        flood_err_set(err, FLOOD_ECRYPTO, "sign: key generation failed");
        flood_err_openssl(err);
        EVP_PKEY_CTX_free(ctx);
        return NULL;
    }
    EVP_PKEY_CTX_free(ctx);
    return key_wrap(pkey, 1, err);
}

/* Never prompt for a passphrase: an encrypted key is an error. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf, (void)size, (void)rwflag, (void)u;
    return -1;
}

/* "-----BEGIN RSA PUBLIC KEY-----" (PKCS#1), which PEM_read_bio_PUBKEY does not take. */
static EVP_PKEY *decode_pkcs1_public(const char *pem, size_t len)
{
    EVP_PKEY *pkey = NULL;
    const unsigned char *p = (const unsigned char *)pem;
    size_t n = len;
    OSSL_DECODER_CTX *dctx = OSSL_DECODER_CTX_new_for_pkey(
        &pkey, "PEM", "type-specific", "RSA", OSSL_KEYMGMT_SELECT_PUBLIC_KEY, NULL, NULL);
    if (!dctx)
        return NULL;
    if (!OSSL_DECODER_from_data(dctx, &p, &n)) {
        EVP_PKEY_free(pkey);
        pkey = NULL;
    }
    OSSL_DECODER_CTX_free(dctx);
    return pkey;
}

struct sign_key *sign_key_from_pem(const char *pem, size_t len, struct flood_err *err)
{
    EVP_PKEY *pkey;
    BIO *bio;
    if (!pem) {
        flood_err_set(err, FLOOD_EINVAL, "sign: no PEM text");
        return NULL;
    }
    if (len == 0)
        len = strlen(pem);
    if (len > SIGN_PEM_MAX) {
        flood_err_set(err, FLOOD_ELIMIT, "sign: PEM text of %zu bytes is too long", len);
        return NULL;
    }
    /* A file may hold a public and a private block (RFC 9421 B.1 does): the private one
     * wins, PEM_read_bio_* skip blocks of other types. */
    bio = BIO_new_mem_buf(pem, (int)len);
    if (!bio) {
        flood_err_set(err, FLOOD_ECRYPTO, "sign: out of memory");
        return NULL;
    }
    pkey = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL);
    BIO_free(bio);
    if (pkey) {
        ERR_clear_error();
        return key_wrap(pkey, 1, err);
    }
    bio = BIO_new_mem_buf(pem, (int)len);
    if (!bio) {
        flood_err_set(err, FLOOD_ECRYPTO, "sign: out of memory");
        return NULL;
    }
    pkey = PEM_read_bio_PUBKEY(bio, NULL, no_passphrase, NULL);
    BIO_free(bio);
    if (!pkey)
        pkey = decode_pkcs1_public(pem, len);
    if (!pkey) {
        flood_err_set(err, FLOOD_EINVAL, "sign: no PEM private or public key found");
        flood_err_openssl(err);
        return NULL;
    }
    ERR_clear_error();
    return key_wrap(pkey, 0, err);
}

void sign_key_free(struct sign_key *key)
{
    if (!key)
        return;
    EVP_MD_CTX_free(key->sign_tmpl);
    EVP_PKEY_free(key->pkey);
    free(key);
}

enum sign_key_type sign_key_type(const struct sign_key *key)
{
    return key->type;
}

int sign_key_is_private(const struct sign_key *key)
{
    return key->is_private;
}

static char *bio_to_string(BIO *bio)
{
    char *data;
    long n = BIO_get_mem_data(bio, &data);
    char *s = flood_xmalloc((size_t)(n > 0 ? n : 0) + 1);
    if (n > 0)
        memcpy(s, data, (size_t)n);
    s[n > 0 ? n : 0] = '\0';
    return s;
}

char *sign_key_private_pem(const struct sign_key *key, struct flood_err *err)
{
    BIO *bio;
    char *s;
    if (!key->is_private) {
        flood_err_set(err, FLOOD_EINVAL, "sign: not a private key");
        return NULL;
    }
    bio = BIO_new(BIO_s_mem());
    if (!bio || !PEM_write_bio_PrivateKey(bio, key->pkey, NULL, NULL, 0, NULL, NULL)) {
        flood_err_set(err, FLOOD_ECRYPTO, "sign: cannot write the private key");
        flood_err_openssl(err);
        BIO_free(bio);
        return NULL;
    }
    s = bio_to_string(bio);
    BIO_free(bio);
    return s;
}

char *sign_key_public_pem(const struct sign_key *key, struct flood_err *err)
{
    BIO *bio = BIO_new(BIO_s_mem());
    char *s;
    if (!bio || !PEM_write_bio_PUBKEY(bio, key->pkey)) {
        flood_err_set(err, FLOOD_ECRYPTO, "sign: cannot write the public key");
        flood_err_openssl(err);
        BIO_free(bio);
        return NULL;
    }
    s = bio_to_string(bio);
    BIO_free(bio);
    return s;
}

/* ---- FEP-521a publicKeyMultibase: "z" + base58btc(0xed 0x01 + 32-byte key) ---------- */

static const char B58[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

char *sign_key_multibase(const struct sign_key *key, struct flood_err *err)
{
    unsigned char in[34], digits[64];
    size_t raw_len = 32, n_digits = 0, zeros = 0, i, j, k = 0;
    char *out;
    if (key->type != SIGN_KEY_ED25519) {
        flood_err_set(err, FLOOD_EINVAL, "sign: multibase form needs an Ed25519 key");
        return NULL;
    }
    in[0] = 0xed;
    in[1] = 0x01;
    if (!EVP_PKEY_get_raw_public_key(key->pkey, in + 2, &raw_len) || raw_len != 32) {
        flood_err_set(err, FLOOD_ECRYPTO, "sign: cannot read the Ed25519 public key");
        flood_err_openssl(err);
        return NULL;
    }
    while (zeros < sizeof(in) && in[zeros] == 0)
        zeros++;
    /* Base conversion 256 -> 58, little-endian digits. */
    for (i = zeros; i < sizeof(in); i++) {
        unsigned carry = in[i];
        for (j = 0; j < n_digits; j++) {
            carry += (unsigned)digits[j] << 8;
            digits[j] = (unsigned char)(carry % 58);
            carry /= 58;
        }
        while (carry) {
            digits[n_digits++] = (unsigned char)(carry % 58);
            carry /= 58;
        }
    }
    out = flood_xmalloc(1 + zeros + n_digits + 1);
    out[k++] = 'z';
    for (i = 0; i < zeros; i++)
        out[k++] = '1';
    for (i = n_digits; i > 0; i--)
        out[k++] = B58[digits[i - 1]];
    out[k] = '\0';
    return out;
}

struct sign_key *sign_key_from_multibase(const char *mb, struct flood_err *err)
{
    unsigned char bytes[64];
    size_t n_bytes = 0, zeros = 0, len, i, j;
    EVP_PKEY *pkey;
    if (!mb || mb[0] != 'z') {
        flood_err_set(err, FLOOD_EINVAL, "sign: multibase key does not start with 'z'");
        return NULL;
    }
    len = strlen(mb + 1);
    if (len == 0 || len > 60) {
        flood_err_set(err, FLOOD_EINVAL, "sign: multibase key of bad length %zu", len);
        return NULL;
    }
    for (i = 1; mb[i] == '1'; i++)
        zeros++;
    for (; mb[i]; i++) {
        const char *d = strchr(B58, mb[i]);
        unsigned carry;
        if (!d || !mb[i]) {
            flood_err_set(err, FLOOD_EINVAL, "sign: bad base58 character '%c'", mb[i]);
            return NULL;
        }
        carry = (unsigned)(d - B58);
        for (j = 0; j < n_bytes; j++) {
            carry += (unsigned)bytes[j] * 58;
            bytes[j] = (unsigned char)(carry & 0xff);
            carry >>= 8;
        }
        while (carry) {
            if (n_bytes == sizeof(bytes)) {
                flood_err_set(err, FLOOD_EINVAL, "sign: multibase key too long");
                return NULL;
            }
            bytes[n_bytes++] = (unsigned char)(carry & 0xff);
            carry >>= 8;
        }
    }
    /* bytes is little-endian; the decoded value is zeros x 0x00 then bytes reversed. */
    if (zeros + n_bytes != 34 || zeros != 0 || bytes[n_bytes - 1] != 0xed ||
        bytes[n_bytes - 2] != 0x01) {
        flood_err_set(err, FLOOD_EINVAL,
                      "sign: multibase key is not an Ed25519 multicodec key (0xed01 + 32 bytes)");
        return NULL;
    }
    {
        unsigned char raw[32];
        for (i = 0; i < 32; i++)
            raw[i] = bytes[31 - i];
        pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, raw, 32);
    }
    if (!pkey) {
        flood_err_set(err, FLOOD_EINVAL, "sign: bad Ed25519 public key");
        flood_err_openssl(err);
        return NULL;
    }
    return key_wrap(pkey, 0, err);
}

/* ---- sign and verify ----------------------------------------------------------------- */

enum sign_alg sign_key_default_alg(const struct sign_key *key)
{
    if (key->type == SIGN_KEY_ED25519)
        return SIGN_ALG_ED25519;
    return key->pss_only ? SIGN_ALG_RSA_PSS_SHA512 : SIGN_ALG_RSA_SHA256;
}

int sign_key_can(const struct sign_key *key, enum sign_alg alg)
{
    switch (alg) {
    case SIGN_ALG_ED25519:
        return key->type == SIGN_KEY_ED25519;
    case SIGN_ALG_RSA_SHA256:
        return key->type == SIGN_KEY_RSA && !key->pss_only;
    case SIGN_ALG_RSA_PSS_SHA512:
        return key->type == SIGN_KEY_RSA;
    }
    return 0;
}

/* Set up ctx for alg: RSA-PSS per RFC 9421 section 3.3.1 (SHA-512, MGF1 SHA-512, salt 64). */
static int ctx_init(EVP_MD_CTX *ctx, const struct sign_key *key, enum sign_alg alg, int signing)
{
    EVP_PKEY_CTX *pctx = NULL;
    const EVP_MD *md = alg == SIGN_ALG_ED25519      ? NULL
                       : alg == SIGN_ALG_RSA_SHA256 ? EVP_sha256()
                                                    : EVP_sha512();
    int ok = signing ? EVP_DigestSignInit(ctx, &pctx, md, NULL, key->pkey)
                     : EVP_DigestVerifyInit(ctx, &pctx, md, NULL, key->pkey);
    if (ok <= 0)
        return -1;
    if (alg == SIGN_ALG_RSA_PSS_SHA512 &&
        (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) <= 0 ||
         EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, EVP_sha512()) <= 0 ||
         EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, 64) <= 0))
        return -1;
    return 0;
}

int sign_key_sign(const struct sign_key *key, enum sign_alg alg, const void *data, size_t len,
                  unsigned char *sig, size_t *sig_len, struct flood_err *err)
{
    EVP_MD_CTX *ctx;
    size_t n = 0;
    if (!key->is_private) {
        flood_err_set(err, FLOOD_EINVAL, "sign: signing needs a private key");
        return -1;
    }
    if (!sign_key_can(key, alg)) {
        flood_err_set(err, FLOOD_EINVAL, "sign: this key cannot make that algorithm");
        return -1;
    }
    ctx = EVP_MD_CTX_new();
    /* The context is used once: FINALISE spares EVP_DigestSignFinal a copy of it. key_wrap
     * made sure EVP_PKEY_get_size(key) <= SIGN_SIG_BYTES_MAX, so no size query. */
    if (ctx)
        EVP_MD_CTX_set_flags(ctx, EVP_MD_CTX_FLAG_FINALISE);
    n = SIGN_SIG_BYTES_MAX;
    if (!ctx ||
        (key->sign_tmpl && alg == sign_key_default_alg(key)
             ? EVP_MD_CTX_copy_ex(ctx, key->sign_tmpl) != 1
             : ctx_init(ctx, key, alg, 1) < 0) ||
        EVP_DigestSign(ctx, sig, &n, data, len) <= 0) {
        flood_err_set(err, FLOOD_ECRYPTO, "sign: signing failed");
        flood_err_openssl(err);
        EVP_MD_CTX_free(ctx);
        return -1;
    }
    EVP_MD_CTX_free(ctx);
    *sig_len = n;
    return 0;
}

int sign_key_verify(const struct sign_key *key, enum sign_alg alg, const void *data, size_t len,
                    const unsigned char *sig, size_t sig_len, struct flood_err *err)
{
    EVP_MD_CTX *ctx;
    int r;
    if (!sign_key_can(key, alg)) {
        flood_err_set(err, FLOOD_EINVAL, "sign: the key cannot check this algorithm");
        return -1;
    }
    ctx = EVP_MD_CTX_new();
    if (!ctx || ctx_init(ctx, key, alg, 0) < 0) {
        flood_err_set(err, FLOOD_ECRYPTO, "sign: cannot set up verification");
        flood_err_openssl(err);
        EVP_MD_CTX_free(ctx);
        return -1;
    }
    r = EVP_DigestVerify(ctx, sig, sig_len, data, len);
    EVP_MD_CTX_free(ctx);
    ERR_clear_error();
    return r == 1 ? 1 : 0;
}
