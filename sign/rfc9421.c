/* sign/rfc9421.c: RFC 9421 HTTP Message Signatures: Signature-Input and Signature,
 * the signature base (section 2.5), rsa-v1_5-sha256, rsa-pss-sha512 and ed25519. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sign/internal.h"

static int verdict_set(struct flood_err *err, int verdict, const char *fmt, const char *arg)
{
    flood_err_set(err, verdict, fmt, arg);
    return verdict;
}

static void add_lower(struct sign_buf *b, const char *s, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        char c = (char)tolower((unsigned char)s[i]);
        sign_buf_add(b, &c, 1);
    }
}

/* Append the value of one component (section 2.2 derived components, section 2.1 fields).
 * Returns SIGN_OK or a verdict with err set. */
static int component_value(struct sign_buf *b, const struct sign_msg *msg, const char *name,
                           struct flood_err *err)
{
    const char *path = msg->path ? msg->path : "";
    const char *q = strchr(path, '?');
    size_t path_len = q ? (size_t)(q - path) : strlen(path);
    if (strpbrk(path, "\r\n ") || strlen(path) > SIGN_HEADER_VALUE_MAX)
        return verdict_set(err, SIGN_ERR_SYNTAX, "sign: bad request target%s", "");
    if (name[0] == '@') {
        if (strcmp(name, "@method") == 0) {
            sign_buf_str(b, msg->method ? msg->method : "");
        } else if (strcmp(name, "@target-uri") == 0) {
            if (!msg->scheme || !msg->authority)
                return verdict_set(err, SIGN_ERR_NOT_COVERED, "sign: %s needs scheme and authority",
                                   name);
            add_lower(b, msg->scheme, strlen(msg->scheme));
            sign_buf_str(b, "://");
            add_lower(b, msg->authority, strlen(msg->authority));
            sign_buf_str(b, path);
        } else if (strcmp(name, "@authority") == 0) {
            if (!msg->authority)
                return verdict_set(err, SIGN_ERR_NOT_COVERED, "sign: %s is unknown", name);
            add_lower(b, msg->authority, strlen(msg->authority));
        } else if (strcmp(name, "@scheme") == 0) {
            if (!msg->scheme)
                return verdict_set(err, SIGN_ERR_NOT_COVERED, "sign: %s is unknown", name);
            add_lower(b, msg->scheme, strlen(msg->scheme));
        } else if (strcmp(name, "@path") == 0) {
            /* Section 2.2.6: an empty path is "/". */
            if (path_len == 0)
                sign_buf_add(b, "/", 1);
            else
                sign_buf_add(b, path, path_len);
        } else if (strcmp(name, "@query") == 0) {
            /* Section 2.2.7: the query with its "?", just "?" when there is none. */
            sign_buf_str(b, q ? q : "?");
        } else if (strcmp(name, "@request-target") == 0) {
            sign_buf_str(b, path);
        } else {
            return verdict_set(err, SIGN_ERR_SYNTAX, "sign: unsupported component '%s'", name);
        }
        return SIGN_OK;
    }
    {
        int too_long;
        char *v = sign_msg_header(msg, name, &too_long);
        if (!v && !too_long && strcmp(name, "host") == 0 && msg->authority)
            v = flood_xstrdup(msg->authority);
        if (!v)
            return verdict_set(err, too_long ? SIGN_ERR_SYNTAX : SIGN_ERR_NOT_COVERED,
                               too_long ? "sign: header '%s' is too long"
                                        : "sign: header '%s' is signed but absent",
                               name);
        if (strpbrk(v, "\r\n")) {
            free(v);
            return verdict_set(err, SIGN_ERR_SYNTAX, "sign: header '%s' holds a line break", name);
        }
        sign_buf_str(b, v);
        free(v);
    }
    return SIGN_OK;
}

/* Check the covered components and parameters of a Signature-Input member. */
static int check_member(const struct sfv_member *m, struct flood_err *err)
{
    size_t i, j, k;
    if (!m->is_inner)
        return verdict_set(err, SIGN_ERR_SYNTAX, "sign: Signature-Input '%s' is not an inner list",
                           m->key);
    for (i = 0; i < m->n_items; i++) {
        const struct sfv_item *it = &m->items[i];
        const char *name = it->bare.text;
        if (it->bare.type != SFV_STRING)
            return verdict_set(err, SIGN_ERR_SYNTAX, "sign: component %s is not a string", "id");
        if (it->n_params)
            return verdict_set(err, SIGN_ERR_SYNTAX,
                               "sign: component parameter ';%s' is not supported",
                               it->params[0].key);
        if (!name[0] || strcmp(name, "@signature-params") == 0)
            return verdict_set(err, SIGN_ERR_SYNTAX, "sign: bad component '%s'", name);
        for (k = 0; name[k]; k++)
            if (name[0] != '@' && (isupper((unsigned char)name[k]) || name[k] == ' '))
                return verdict_set(err, SIGN_ERR_SYNTAX,
                                   "sign: component '%s' must be a lower-case field name", name);
        for (j = 0; j < i; j++)
            if (strcmp(m->items[j].bare.text, name) == 0)
                return verdict_set(err, SIGN_ERR_SYNTAX, "sign: component '%s' listed twice", name);
    }
    for (i = 0; i < m->n_params; i++) {
        const struct sfv_param *p = &m->params[i];
        int want_int = strcmp(p->key, "created") == 0 || strcmp(p->key, "expires") == 0;
        int want_str = strcmp(p->key, "keyid") == 0 || strcmp(p->key, "alg") == 0 ||
                       strcmp(p->key, "nonce") == 0 || strcmp(p->key, "tag") == 0;
        if ((want_int && p->value.type != SFV_INTEGER) || (want_str && p->value.type != SFV_STRING))
            return verdict_set(err, SIGN_ERR_SYNTAX, "sign: bad type for parameter '%s'", p->key);
    }
    return SIGN_OK;
}

/* The base for a parsed member (section 2.5). */
static char *base_of(const struct sign_msg *msg, const struct sfv_member *m, int *verdict,
                     struct flood_err *err)
{
    struct sign_buf b;
    size_t i;
    sign_buf_init(&b, (SIGN_MAX_COVERED + 1) * (SIGN_HEADER_VALUE_MAX + 64));
    for (i = 0; i < m->n_items; i++) {
        sign_buf_add(&b, "\"", 1);
        sign_buf_str(&b, m->items[i].bare.text);
        sign_buf_str(&b, "\": ");
        *verdict = component_value(&b, msg, m->items[i].bare.text, err);
        if (*verdict != SIGN_OK) {
            sign_buf_free(&b);
            return NULL;
        }
        sign_buf_add(&b, "\n", 1);
    }
    sign_buf_str(&b, "\"@signature-params\": ");
    sfv_serialize_inner(&b, m);
    if (b.overflow) {
        sign_buf_free(&b);
        *verdict = verdict_set(err, SIGN_ERR_SYNTAX, "sign: signature base too long%s", "");
        return NULL;
    }
    *verdict = SIGN_OK;
    return b.p;
}

char *sign_rfc9421_base(const struct sign_msg *msg, const char *input, struct flood_err *err)
{
    struct sfv_dict d;
    char *wrapped, *base = NULL;
    int verdict;
    if (strlen(input) > SIGN_HEADER_VALUE_MAX) {
        flood_err_set(err, SIGN_ERR_SYNTAX, "sign: signature input too long");
        return NULL;
    }
    wrapped = flood_xasprintf("sig=%s", input);
    if (sfv_parse_dict(wrapped, strlen(wrapped), &d, err) < 0) {
        free(wrapped);
        return NULL;
    }
    free(wrapped);
    if (d.n == 1 && check_member(&d.members[0], err) == SIGN_OK)
        base = base_of(msg, &d.members[0], &verdict, err);
    else if (d.n != 1)
        flood_err_set(err, SIGN_ERR_SYNTAX, "sign: one signature input expected");
    sfv_dict_free(&d);
    return base;
}

/* ---- parsing ---------------------------------------------------------------------------- */

int sign_rfc9421_parse(const struct sign_msg *msg, const char *label, struct sign_parsed *sp,
                       struct flood_err *err)
{
    char *in_h, *sig_h;
    int too_long1, too_long2, verdict;
    struct sfv_dict sigs;
    const struct sfv_member *sm;
    const struct sfv_bare *v;
    struct flood_err e2 = {0, ""};

    sp->dialect = SIGN_RFC9421;
    sp->created = sp->expires = -1;
    in_h = sign_msg_header(msg, "signature-input", &too_long1);
    sig_h = sign_msg_header(msg, "signature", &too_long2);
    if (too_long1 || too_long2) {
        free(in_h);
        free(sig_h);
        return verdict_set(err, SIGN_ERR_SYNTAX, "sign: %s too long", "signature header");
    }
    if (!in_h || !sig_h) {
        free(in_h);
        free(sig_h);
        return verdict_set(err, SIGN_ERR_MISSING, "sign: %s", "no Signature-Input and Signature");
    }
    if (sfv_parse_dict(in_h, strlen(in_h), &sp->input, &e2) < 0) {
        free(in_h);
        free(sig_h);
        flood_err_set(err, SIGN_ERR_SYNTAX, "%s (Signature-Input)", e2.msg);
        return SIGN_ERR_SYNTAX;
    }
    free(in_h);
    if (sfv_parse_dict(sig_h, strlen(sig_h), &sigs, &e2) < 0) {
        free(sig_h);
        flood_err_set(err, SIGN_ERR_SYNTAX, "%s (Signature)", e2.msg);
        return SIGN_ERR_SYNTAX;
    }
    free(sig_h);
    /* Which signature: the label asked for, else the first member of Signature-Input.
     * Mastodon accepts exactly one signature; a sender with several puts its own first. */
    sp->member = label ? sfv_dict_get(&sp->input, label) : &sp->input.members[0];
    if (!sp->member) {
        sfv_dict_free(&sigs);
        return verdict_set(err, SIGN_ERR_MISSING, "sign: no signature labelled '%s'", label);
    }
    verdict = check_member(sp->member, err);
    if (verdict != SIGN_OK) {
        sfv_dict_free(&sigs);
        return verdict;
    }
    sp->label = flood_xstrdup(sp->member->key);
    sm = sfv_dict_get(&sigs, sp->label);
    if (!sm || sm->is_inner || sm->item.bare.type != SFV_BYTES || sm->item.bare.n_bytes == 0 ||
        sm->item.bare.n_bytes > SIGN_SIG_BYTES_MAX) {
        sfv_dict_free(&sigs);
        return verdict_set(err, sm ? SIGN_ERR_SYNTAX : SIGN_ERR_MISSING,
                           "sign: no usable Signature for label '%s'", sp->label);
    }
    memcpy(sp->sig, sm->item.bare.bytes, sm->item.bare.n_bytes);
    sp->sig_len = sm->item.bare.n_bytes;
    sfv_dict_free(&sigs);

    v = sfv_params_get(sp->member->params, sp->member->n_params, "keyid");
    if (!v || !v->text[0])
        return verdict_set(err, SIGN_ERR_SYNTAX, "sign: signature '%s' has no keyid", sp->label);
    sp->key_id = flood_xstrdup(v->text);
    v = sfv_params_get(sp->member->params, sp->member->n_params, "alg");
    if (v)
        sp->algorithm = flood_xstrdup(v->text);
    v = sfv_params_get(sp->member->params, sp->member->n_params, "created");
    if (v)
        sp->created = v->integer;
    v = sfv_params_get(sp->member->params, sp->member->n_params, "expires");
    if (v)
        sp->expires = v->integer;
    return SIGN_OK;
}

/* ---- verifying -------------------------------------------------------------------------- */

int sign_rfc9421_check(const struct sign_parsed *sp, const struct sign_msg *msg,
                       const struct sign_key *key, struct flood_err *err)
{
    enum sign_alg alg;
    char *base;
    int verdict, r;
    if (!sp->algorithm) {
        alg = sign_key_default_alg(key); /* section 3.2: the key decides */
    } else if (strcmp(sp->algorithm, "rsa-v1_5-sha256") == 0) {
        alg = SIGN_ALG_RSA_SHA256;
    } else if (strcmp(sp->algorithm, "rsa-pss-sha512") == 0) {
        alg = SIGN_ALG_RSA_PSS_SHA512;
    } else if (strcmp(sp->algorithm, "ed25519") == 0) {
        alg = SIGN_ALG_ED25519;
    } else {
        return verdict_set(err, SIGN_ERR_ALGORITHM, "sign: unknown alg '%s'", sp->algorithm);
    }
    if (!sign_key_can(key, alg))
        return verdict_set(err, SIGN_ERR_ALGORITHM, "sign: key cannot check alg '%s'",
                           sp->algorithm ? sp->algorithm : "(key default)");
    base = base_of(msg, sp->member, &verdict, err);
    if (!base)
        return verdict;
    r = sign_key_verify(key, alg, base, strlen(base), sp->sig, sp->sig_len, err);
    free(base);
    if (r < 0)
        return SIGN_ERR_ALGORITHM;
    if (r == 0)
        return verdict_set(err, SIGN_ERR_MISMATCH, "sign: signature does not verify with key '%s'",
                           sp->key_id);
    return SIGN_OK;
}

static int covers(const struct sign_parsed *sp, const char *name)
{
    size_t i;
    for (i = 0; i < sp->member->n_items; i++)
        if (strcmp(sp->member->items[i].bare.text, name) == 0)
            return 1;
    return 0;
}

int sign_rfc9421_policy(const struct sign_parsed *sp, const struct sign_msg *msg, time_t now,
                        long window_s, struct flood_err *err)
{
    /* Mastodon's rules (app/lib/signed_request.rb): @method and @target-uri covered, a
     * created parameter, content-digest covered on a request with a body. */
    if (!covers(sp, "@method"))
        return verdict_set(err, SIGN_ERR_NOT_COVERED, "sign: %s is not signed", "@method");
    if (!covers(sp, "@target-uri") &&
        !(covers(sp, "@authority") && (covers(sp, "@request-target") || covers(sp, "@path"))))
        return verdict_set(err, SIGN_ERR_NOT_COVERED, "sign: %s is not signed", "@target-uri");
    if (sign_msg_has_body(msg) && !covers(sp, "content-digest"))
        return verdict_set(err, SIGN_ERR_NOT_COVERED, "sign: %s is not signed", "content-digest");
    if (sp->created < 0)
        return verdict_set(err, SIGN_ERR_DATE, "sign: signature has no %s parameter", "created");
    if (sp->created < (long long)now - window_s || sp->created > (long long)now + window_s)
        return verdict_set(err, SIGN_ERR_DATE, "sign: %s is outside the window", "created");
    if (sp->expires >= 0 && sp->expires < (long long)now)
        return verdict_set(err, SIGN_ERR_DATE, "sign: %s has passed", "expires");
    if (covers(sp, "content-digest")) {
        int too_long, v;
        char *d = sign_msg_header(msg, "content-digest", &too_long);
        if (!d)
            return verdict_set(err, SIGN_ERR_NOT_COVERED, "sign: %s is signed but absent",
                               "content-digest");
        v = sign_content_digest_check(d, msg->body, msg->body_len);
        free(d);
        if (v == SIGN_ERR_DIGEST)
            return verdict_set(err, v, "sign: %s does not match the body", "Content-Digest");
        if (v == SIGN_ERR_ALGORITHM)
            return verdict_set(err, v, "sign: %s has no sha-256 or sha-512 member",
                               "Content-Digest");
        if (v != SIGN_OK)
            return verdict_set(err, v, "sign: %s does not parse", "Content-Digest");
    }
    return SIGN_OK;
}

/* ---- signing ---------------------------------------------------------------------------- */

static int is_generated(const char *name)
{
    return strcasecmp(name, "host") == 0 || strcasecmp(name, "date") == 0 ||
           strcasecmp(name, "digest") == 0 || strcasecmp(name, "content-digest") == 0 ||
           strcasecmp(name, "signature") == 0 || strcasecmp(name, "signature-input") == 0;
}

int sign_rfc9421_sign(const struct sign_params *p, const struct sign_msg *msg, struct sign_out *out,
                      struct flood_err *err)
{
    struct sign_header hs[64];
    struct sign_msg m = *msg;
    size_t n = 0, i, sig_len;
    char date[32], digest[SIGN_DIGEST_MAX], *input, *base, *b64, *line;
    unsigned char sig[SIGN_SIG_BYTES_MAX];
    int body = sign_msg_has_body(msg);
    enum sign_alg alg = sign_key_default_alg(p->key);

    if (strpbrk(p->key_id, "\"\\")) {
        flood_err_set(err, FLOOD_EINVAL, "sign: key id '%s' holds a quote", p->key_id);
        return -1;
    }
    for (i = 0; i < msg->n_headers && n < 60; i++)
        if (!is_generated(msg->headers[i].name))
            hs[n++] = msg->headers[i];
    if (i < msg->n_headers) {
        flood_err_set(err, FLOOD_ELIMIT, "sign: too many headers to sign");
        return -1;
    }
    sign_http_date(p->now, date);
    hs[n++] = (struct sign_header){"Host", msg->authority};
    hs[n++] = (struct sign_header){"Date", date};
    if (body) {
        sign_content_digest(msg->body, msg->body_len, digest);
        hs[n++] = (struct sign_header){"Content-Digest", digest};
    }
    m.headers = hs;
    m.n_headers = n;
    input = flood_xasprintf("(\"@method\" \"@target-uri\" \"@authority\"%s);created=%lld;"
                            "keyid=\"%s\";alg=\"%s\"",
                            body ? " \"content-digest\"" : "", (long long)p->now, p->key_id,
                            alg == SIGN_ALG_ED25519 ? "ed25519" : "rsa-v1_5-sha256");
    base = sign_rfc9421_base(&m, input, err);
    if (!base) {
        free(input);
        return -1;
    }
    if (sign_key_sign(p->key, alg, base, strlen(base), sig, &sig_len, err) < 0) {
        free(base);
        free(input);
        return -1;
    }
    free(base);
    b64 = flood_xmalloc(sig_len / 3 * 4 + 8);
    sign_b64_encode(sig, sig_len, b64);
    sign_out_add(out, "Host", msg->authority);
    sign_out_add(out, "Date", date);
    if (body)
        sign_out_add(out, "Content-Digest", digest);
    line = flood_xasprintf("sig1=%s", input);
    sign_out_add(out, "Signature-Input", line);
    free(line);
    line = flood_xasprintf("sig1=:%s:", b64);
    sign_out_add(out, "Signature", line);
    free(line);
    free(b64);
    free(input);
    return 0;
}
