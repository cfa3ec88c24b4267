/* sign/sign.c: the public entry points, dispatching to the two dialects. */
#include <stdlib.h>
#include <string.h>

#include "sign/internal.h"

int sign_request(const struct sign_params *p, const struct sign_msg *msg, struct sign_out *out,
                 struct flood_err *err)
{
    out->n = 0;
    if (!p || !p->key || !p->key_id || !msg || !msg->method || !msg->path || !msg->authority ||
        (p->dialect == SIGN_RFC9421 && !msg->scheme)) {
        flood_err_set(err, FLOOD_EINVAL, "sign: incomplete request or parameters");
        return -1;
    }
    if (strpbrk(p->key_id, "\"\\\r\n") || strpbrk(msg->path, "\r\n ") ||
        strpbrk(msg->authority, "\r\n /") || strpbrk(msg->method, "\r\n ")) {
        flood_err_set(err, FLOOD_EINVAL,
                      "sign: key id, method, path or authority holds a "
                      "character that cannot be signed");
        return -1;
    }
    if (p->dialect == SIGN_RFC9421)
        return sign_rfc9421_sign(p, msg, out, err);
    return sign_cavage_sign(p, msg, out, err);
}

int sign_parse_label(const struct sign_msg *msg, const char *label, struct sign_parsed **out,
                     struct flood_err *err)
{
    struct sign_parsed *sp = flood_xcalloc(1, sizeof(*sp));
    int verdict, too_long = 0;
    char *in = sign_msg_header(msg, "signature-input", &too_long);
    *out = NULL;
    if (in || too_long)
        verdict = sign_rfc9421_parse(msg, label, sp, err);
    else
        verdict = sign_cavage_parse(msg, sp, err);
    free(in);
    if (verdict != SIGN_OK) {
        sign_parsed_free(sp);
        return verdict;
    }
    *out = sp;
    return SIGN_OK;
}

int sign_parse(const struct sign_msg *msg, struct sign_parsed **out, struct flood_err *err)
{
    return sign_parse_label(msg, NULL, out, err);
}

enum sign_dialect sign_parsed_dialect(const struct sign_parsed *sp)
{
    return sp->dialect;
}

const char *sign_parsed_key_id(const struct sign_parsed *sp)
{
    return sp->key_id;
}

const char *sign_parsed_algorithm(const struct sign_parsed *sp)
{
    return sp->algorithm;
}

const char *sign_parsed_label(const struct sign_parsed *sp)
{
    return sp->label;
}

void sign_parsed_free(struct sign_parsed *sp)
{
    size_t i;
    if (!sp)
        return;
    free(sp->key_id);
    free(sp->algorithm);
    free(sp->label);
    for (i = 0; i < sp->n_covered; i++)
        free(sp->covered[i]);
    sfv_dict_free(&sp->input);
    free(sp);
}

char *sign_parsed_base(const struct sign_parsed *sp, const struct sign_msg *msg,
                       struct flood_err *err)
{
    if (sp->dialect == SIGN_CAVAGE)
        return sign_cavage_signing_string(msg, (const char *const *)sp->covered, sp->n_covered,
                                          sp->created, sp->expires, err);
    {
        struct sign_buf b;
        char *base;
        sign_buf_init(&b, SIGN_HEADER_VALUE_MAX);
        sfv_serialize_inner(&b, sp->member);
        base = sign_rfc9421_base(msg, b.p, err);
        sign_buf_free(&b);
        return base;
    }
}

int sign_verify_signature(const struct sign_parsed *sp, const struct sign_msg *msg,
                          const struct sign_key *key, struct flood_err *err)
{
    if (!key) {
        flood_err_set(err, SIGN_ERR_KEY, "sign: no key for '%s'", sp->key_id);
        return SIGN_ERR_KEY;
    }
    if (sp->dialect == SIGN_RFC9421)
        return sign_rfc9421_check(sp, msg, key, err);
    return sign_cavage_check(sp, msg, key, err);
}

int sign_verify(const struct sign_parsed *sp, const struct sign_msg *msg,
                const struct sign_key *key, time_t now, long window_s, struct flood_err *err)
{
    int verdict;
    if (!sp) {
        flood_err_set(err, SIGN_ERR_MISSING, "sign: nothing parsed");
        return SIGN_ERR_MISSING;
    }
    if (!key) {
        flood_err_set(err, SIGN_ERR_KEY, "sign: no key for '%s'", sp->key_id);
        return SIGN_ERR_KEY;
    }
    /* Cheap checks first: coverage, the time window and the digest, then the signature. */
    verdict = sp->dialect == SIGN_RFC9421 ? sign_rfc9421_policy(sp, msg, now, window_s, err)
                                          : sign_cavage_policy(sp, msg, now, window_s, err);
    if (verdict != SIGN_OK)
        return verdict;
    return sign_verify_signature(sp, msg, key, err);
}

char *sign_data_b64(const struct sign_key *key, const char *alg, const void *data, size_t len,
                    struct flood_err *err)
{
    enum sign_alg a;
    unsigned char sig[SIGN_SIG_BYTES_MAX];
    size_t n;
    char *out;
    if (!alg || strcmp(alg, "hs2019") == 0)
        a = sign_key_default_alg(key);
    else if (strcmp(alg, "rsa-sha256") == 0 || strcmp(alg, "rsa-v1_5-sha256") == 0)
        a = SIGN_ALG_RSA_SHA256;
    else if (strcmp(alg, "rsa-pss-sha512") == 0)
        a = SIGN_ALG_RSA_PSS_SHA512;
    else if (strcmp(alg, "ed25519") == 0)
        a = SIGN_ALG_ED25519;
    else {
        flood_err_set(err, FLOOD_EINVAL, "sign: unknown algorithm '%s'", alg);
        return NULL;
    }
    if (sign_key_sign(key, a, data, len, sig, &n, err) < 0)
        return NULL;
    out = flood_xmalloc(n / 3 * 4 + 8);
    sign_b64_encode(sig, n, out);
    return out;
}
