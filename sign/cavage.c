/* sign/cavage.c: draft-cavage-http-signatures-12, the dialect every fediverse server
 * speaks: the Signature header, the signing string (section 2.3), rsa-sha256 and hs2019. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sign/internal.h"

#define CAVAGE_PARAMS_MAX 16

static int is_token_char(int ch)
{
    return isalnum(ch) || (ch > 0 && strchr("!#$%&'*+-.^_`|~()", ch) != NULL);
}

/* Whether a header value would break the line structure of a signing string. */
static int has_newline(const char *v)
{
    return strpbrk(v, "\r\n") != NULL;
}

char *sign_cavage_signing_string(const struct sign_msg *msg, const char *const *headers, size_t n,
                                 long long created, long long expires, struct flood_err *err)
{
    struct sign_buf b;
    size_t i;
    sign_buf_init(&b, SIGN_MAX_COVERED * (SIGN_HEADER_VALUE_MAX + 64));
    for (i = 0; i < n; i++) {
        const char *h = headers[i];
        char num[32];
        if (i)
            sign_buf_add(&b, "\n", 1);
        if (strcmp(h, "(request-target)") == 0) {
            const char *m = msg->method ? msg->method : "";
            sign_buf_str(&b, "(request-target): ");
            for (; *m; m++) {
                char c = (char)tolower((unsigned char)*m);
                sign_buf_add(&b, &c, 1);
            }
            sign_buf_add(&b, " ", 1);
            if (!msg->path || has_newline(msg->path) || strlen(msg->path) > SIGN_HEADER_VALUE_MAX) {
                flood_err_set(err, SIGN_ERR_SYNTAX, "sign: bad request target");
                goto bad;
            }
            sign_buf_str(&b, msg->path);
        } else if (strcmp(h, "(created)") == 0 || strcmp(h, "(expires)") == 0) {
            long long v = h[1] == 'c' ? created : expires;
            if (v < 0) {
                flood_err_set(err, SIGN_ERR_NOT_COVERED, "sign: '%s' listed without its parameter",
                              h);
                goto bad;
            }
            snprintf(num, sizeof(num), "%s: %lld", h, v);
            sign_buf_str(&b, num);
        } else {
            int too_long;
            char *v = sign_msg_header(msg, h, &too_long);
            if (!v && !too_long && strcmp(h, "host") == 0 && msg->authority)
                v = flood_xstrdup(msg->authority);
            if (!v) {
                if (too_long)
                    flood_err_set(err, SIGN_ERR_SYNTAX, "sign: header '%s' is too long", h);
                else
                    flood_err_set(err, SIGN_ERR_NOT_COVERED,
                                  "sign: header '%s' is signed but absent", h);
                goto bad;
            }
            if (has_newline(v)) {
                free(v);
                flood_err_set(err, SIGN_ERR_SYNTAX, "sign: header '%s' holds a line break", h);
                goto bad;
            }
            sign_buf_str(&b, h);
            sign_buf_add(&b, ": ", 2);
            sign_buf_str(&b, v);
            free(v);
        }
    }
    if (b.overflow) {
        flood_err_set(err, SIGN_ERR_SYNTAX, "sign: signing string too long");
        goto bad;
    }
    return b.p;
bad:
    sign_buf_free(&b);
    return NULL;
}

/* ---- parsing the Signature header ----------------------------------------------------- */

static int set_verdict(struct flood_err *err, int verdict, const char *fmt, const char *arg)
{
    flood_err_set(err, verdict, fmt, arg);
    return verdict;
}

static int parse_headers_list(struct sign_parsed *sp, const char *list, struct flood_err *err)
{
    const char *p = list;
    while (*p) {
        const char *e;
        size_t k;
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        e = p;
        while (*e && *e != ' ')
            e++;
        if (sp->n_covered == SIGN_MAX_COVERED)
            return set_verdict(err, SIGN_ERR_SYNTAX, "sign: more than %s signed headers", "32");
        for (k = 0; p + k < e; k++)
            if (!is_token_char((unsigned char)p[k]))
                return set_verdict(err, SIGN_ERR_SYNTAX, "sign: bad name in headers=\"%s\"", list);
        sp->covered[sp->n_covered] = flood_xstrndup(p, (size_t)(e - p));
        for (k = 0; sp->covered[sp->n_covered][k]; k++)
            sp->covered[sp->n_covered][k] =
                (char)tolower((unsigned char)sp->covered[sp->n_covered][k]);
        sp->n_covered++;
        p = e;
    }
    if (sp->n_covered == 0)
        return set_verdict(err, SIGN_ERR_SYNTAX, "sign: empty headers=\"%s\"", list);
    return SIGN_OK;
}

static int parse_int(const char *s, long long *out)
{
    long long v = 0;
    size_t i;
    if (!*s || strlen(s) > 15)
        return -1;
    for (i = 0; s[i]; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

int sign_cavage_parse(const struct sign_msg *msg, struct sign_parsed *sp, struct flood_err *err)
{
    static const char *const known[] = {"keyId",     "algorithm", "headers",
                                        "signature", "created",   "expires"};
    char *vals[6] = {0};
    char *hv;
    const char *p;
    int too_long, verdict = SIGN_OK;
    size_t i, n_params = 0;

    sp->dialect = SIGN_CAVAGE;
    hv = sign_msg_header(msg, "signature", &too_long);
    if (!hv && !too_long) {
        /* The same parameters may come as "Authorization: Signature ..." (section 3). */
        char *auth = sign_msg_header(msg, "authorization", &too_long);
        if (auth && strncasecmp(auth, "Signature ", 10) == 0)
            hv = flood_xstrdup(auth + 10);
        free(auth);
    }
    if (too_long)
        return set_verdict(err, SIGN_ERR_SYNTAX, "sign: %s header too long", "Signature");
    if (!hv)
        return set_verdict(err, SIGN_ERR_MISSING, "sign: no %s header", "Signature");
    if (sign_msg_header_count(msg, "signature") > 1) {
        free(hv);
        return set_verdict(err, SIGN_ERR_SYNTAX, "sign: %s", "more than one Signature header");
    }

    p = hv;
    while (*p) {
        const char *name = p, *ne, *vs, *ve;
        while (*name == ' ' || *name == '\t')
            name++;
        ne = name;
        while (isalnum((unsigned char)*ne))
            ne++;
        if (ne == name || *ne != '=') {
            verdict = set_verdict(err, SIGN_ERR_SYNTAX,
                                  "sign: bad Signature parameter near '%.20s'", name);
            goto done;
        }
        if (++n_params > CAVAGE_PARAMS_MAX) {
            verdict =
                set_verdict(err, SIGN_ERR_SYNTAX, "sign: %s", "too many Signature parameters");
            goto done;
        }
        vs = ne + 1;
        if (*vs == '"') {
            vs++;
            ve = strchr(vs, '"');
            if (!ve) {
                verdict =
                    set_verdict(err, SIGN_ERR_SYNTAX, "sign: unterminated value of '%.20s'", name);
                goto done;
            }
            p = ve + 1;
        } else {
            ve = vs;
            while (isdigit((unsigned char)*ve))
                ve++;
            p = ve;
        }
        for (i = 0; i < 6; i++) {
            if (strlen(known[i]) == (size_t)(ne - name) &&
                strncmp(known[i], name, (size_t)(ne - name)) == 0) {
                if (vals[i]) {
                    verdict = set_verdict(err, SIGN_ERR_SYNTAX,
                                          "sign: Signature parameter '%s' given twice", known[i]);
                    goto done;
                }
                vals[i] = flood_xstrndup(vs, (size_t)(ve - vs));
            }
        }
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == ',')
            p++;
        else if (*p) {
            verdict = set_verdict(err, SIGN_ERR_SYNTAX, "sign: expected ',' near '%.20s'", p);
            goto done;
        }
    }
    if (!vals[0] || !vals[0][0]) {
        verdict = set_verdict(err, SIGN_ERR_SYNTAX, "sign: Signature has no %s", "keyId");
        goto done;
    }
    if (!vals[3]) {
        verdict = set_verdict(err, SIGN_ERR_SYNTAX, "sign: Signature has no %s", "signature");
        goto done;
    }
    {
        long n = sign_b64_decode(vals[3], strlen(vals[3]), sp->sig, sizeof(sp->sig));
        if (n <= 0) {
            verdict =
                set_verdict(err, SIGN_ERR_SYNTAX, "sign: signature %s is not base64", "value");
            goto done;
        }
        sp->sig_len = (size_t)n;
    }
    sp->created = sp->expires = -1;
    if ((vals[4] && parse_int(vals[4], &sp->created) < 0) ||
        (vals[5] && parse_int(vals[5], &sp->expires) < 0)) {
        verdict = set_verdict(err, SIGN_ERR_SYNTAX, "sign: bad %s", "created/expires");
        goto done;
    }
    /* Section 2.1.6: without headers, only the Date header is signed. */
    verdict = parse_headers_list(sp, vals[2] ? vals[2] : "date", err);
    if (verdict != SIGN_OK)
        goto done;
    sp->key_id = vals[0];
    vals[0] = NULL;
    sp->algorithm = vals[1];
    vals[1] = NULL;
done:
    for (i = 0; i < 6; i++)
        free(vals[i]);
    free(hv);
    return verdict;
}

/* ---- verifying ------------------------------------------------------------------------- */

static int covers(const struct sign_parsed *sp, const char *name)
{
    size_t i;
    for (i = 0; i < sp->n_covered; i++)
        if (strcmp(sp->covered[i], name) == 0)
            return 1;
    return 0;
}

int sign_cavage_check(const struct sign_parsed *sp, const struct sign_msg *msg,
                      const struct sign_key *key, struct flood_err *err)
{
    enum sign_alg alg;
    char *s;
    struct flood_err e2 = {0, ""};
    int r;
    if (!sp->algorithm || strcmp(sp->algorithm, "hs2019") == 0) {
        /* hs2019: the algorithm comes from the key (section 2.1.3); RSA keys sign
         * RSASSA-PKCS1-v1_5 SHA-256 there, as Mastodon and GoToSocial do. */
        alg = key->type == SIGN_KEY_ED25519 ? SIGN_ALG_ED25519 : SIGN_ALG_RSA_SHA256;
    } else if (strcmp(sp->algorithm, "rsa-sha256") == 0) {
        alg = SIGN_ALG_RSA_SHA256;
    } else if (strcmp(sp->algorithm, "ed25519") == 0) {
        alg = SIGN_ALG_ED25519;
    } else {
        return set_verdict(err, SIGN_ERR_ALGORITHM, "sign: unknown algorithm '%s'", sp->algorithm);
    }
    if (!sign_key_can(key, alg))
        return set_verdict(err, SIGN_ERR_ALGORITHM, "sign: key cannot check algorithm '%s'",
                           sp->algorithm ? sp->algorithm : "hs2019");
    s = sign_cavage_signing_string(msg, (const char *const *)sp->covered, sp->n_covered,
                                   sp->created, sp->expires, &e2);
    if (!s) {
        flood_err_set(err, e2.code, "%s", e2.msg);
        return e2.code;
    }
    r = sign_key_verify(key, alg, s, strlen(s), sp->sig, sp->sig_len, err);
    free(s);
    if (r < 0)
        return SIGN_ERR_ALGORITHM;
    if (r == 0)
        return set_verdict(err, SIGN_ERR_MISMATCH, "sign: signature does not verify with key '%s'",
                           sp->key_id);
    return SIGN_OK;
}

int sign_cavage_policy(const struct sign_parsed *sp, const struct sign_msg *msg, time_t now,
                       long window_s, struct flood_err *err)
{
    int too_long;
    /* Mastodon's rules (app/controllers/concerns/signature_verification.rb). */
    if (!covers(sp, "date") && !covers(sp, "(created)"))
        return set_verdict(err, SIGN_ERR_NOT_COVERED, "sign: %s is not signed", "date");
    if (!covers(sp, "(request-target)") && !covers(sp, "digest"))
        return set_verdict(err, SIGN_ERR_NOT_COVERED, "sign: %s is not signed",
                           "(request-target) or digest");
    if (sign_method_is(msg, "GET") && !covers(sp, "host"))
        return set_verdict(err, SIGN_ERR_NOT_COVERED, "sign: %s is not signed", "host");
    if (sign_msg_has_body(msg) && !covers(sp, "digest"))
        return set_verdict(err, SIGN_ERR_NOT_COVERED, "sign: %s is not signed", "digest");
    if (covers(sp, "date")) {
        char *d = sign_msg_header(msg, "date", &too_long);
        time_t t;
        if (!d)
            return set_verdict(err, SIGN_ERR_NOT_COVERED, "sign: %s is signed but absent", "date");
        if (sign_parse_http_date(d, &t) < 0) {
            set_verdict(err, SIGN_ERR_DATE, "sign: Date '%.40s' is not an IMF-fixdate", d);
            free(d);
            return SIGN_ERR_DATE;
        }
        if (t < now - window_s || t > now + window_s) {
            set_verdict(err, SIGN_ERR_DATE, "sign: Date '%s' is outside the window", d);
            free(d);
            return SIGN_ERR_DATE;
        }
        free(d);
    }
    if (covers(sp, "(created)") && (sp->created < 0 || sp->created < (long long)now - window_s ||
                                    sp->created > (long long)now + window_s))
        return set_verdict(err, SIGN_ERR_DATE, "sign: %s is outside the window", "(created)");
    if (covers(sp, "(expires)") && (sp->expires < 0 || sp->expires < (long long)now))
        return set_verdict(err, SIGN_ERR_DATE, "sign: %s has passed", "(expires)");
    if (covers(sp, "digest")) {
        char *d = sign_msg_header(msg, "digest", &too_long);
        int v;
        if (!d)
            return set_verdict(err, SIGN_ERR_NOT_COVERED, "sign: %s is signed but absent",
                               "digest");
        v = sign_digest_check(d, msg->body, msg->body_len);
        free(d);
        if (v == SIGN_ERR_DIGEST)
            return set_verdict(err, v, "sign: %s does not match the body", "Digest");
        if (v == SIGN_ERR_ALGORITHM)
            return set_verdict(err, v, "sign: %s has no SHA-256 member", "Digest");
        if (v != SIGN_OK)
            return set_verdict(err, v, "sign: %s does not parse", "Digest");
    }
    return SIGN_OK;
}

/* ---- signing ---------------------------------------------------------------------------- */

/* Headers sign_request writes itself; copies in msg are left out of the signed message. */
static int is_generated(const char *name)
{
    return strcasecmp(name, "host") == 0 || strcasecmp(name, "date") == 0 ||
           strcasecmp(name, "digest") == 0 || strcasecmp(name, "content-digest") == 0 ||
           strcasecmp(name, "signature") == 0 || strcasecmp(name, "signature-input") == 0;
}

int sign_cavage_sign(const struct sign_params *p, const struct sign_msg *msg, struct sign_out *out,
                     struct flood_err *err)
{
    struct sign_header hs[64];
    struct sign_msg m = *msg;
    const char *cov[5];
    size_t n = 0, n_cov = 0, i, sig_len;
    char date[32], digest[SIGN_DIGEST_MAX], *s, *b64, *line;
    unsigned char sig[SIGN_SIG_BYTES_MAX];
    int body = sign_msg_has_body(msg), ctype = 0;
    enum sign_alg alg = sign_key_default_alg(p->key);

    for (i = 0; i < msg->n_headers && n < 60; i++) {
        if (is_generated(msg->headers[i].name))
            continue;
        if (strcasecmp(msg->headers[i].name, "content-type") == 0)
            ctype = 1;
        hs[n++] = msg->headers[i];
    }
    if (i < msg->n_headers) {
        flood_err_set(err, FLOOD_ELIMIT, "sign: too many headers to sign");
        return -1;
    }
    sign_http_date(p->now, date);
    hs[n++] = (struct sign_header){"Host", msg->authority};
    hs[n++] = (struct sign_header){"Date", date};
    if (body) {
        sign_digest(msg->body, msg->body_len, digest);
        hs[n++] = (struct sign_header){"Digest", digest};
    }
    m.headers = hs;
    m.n_headers = n;
    cov[n_cov++] = "(request-target)";
    cov[n_cov++] = "host";
    cov[n_cov++] = "date";
    if (body)
        cov[n_cov++] = "digest";
    if (ctype)
        cov[n_cov++] = "content-type";
    s = sign_cavage_signing_string(&m, cov, n_cov, -1, -1, err);
    if (!s)
        return -1;
    if (sign_key_sign(p->key, alg, s, strlen(s), sig, &sig_len, err) < 0) {
        free(s);
        return -1;
    }
    free(s);
    b64 = flood_xmalloc(sig_len / 3 * 4 + 8);
    sign_b64_encode(sig, sig_len, b64);
    line = flood_xasprintf("keyId=\"%s\",algorithm=\"%s\",headers=\"(request-target) host "
                           "date%s%s\",signature=\"%s\"",
                           p->key_id, alg == SIGN_ALG_ED25519 ? "hs2019" : "rsa-sha256",
                           body ? " digest" : "", ctype ? " content-type" : "", b64);
    free(b64);
    sign_out_add(out, "Host", msg->authority);
    sign_out_add(out, "Date", date);
    if (body)
        sign_out_add(out, "Digest", digest);
    sign_out_add(out, "Signature", line);
    free(line);
    return 0;
}
