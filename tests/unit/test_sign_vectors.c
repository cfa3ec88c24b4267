/* tests/unit/test_sign_vectors.c: the generic runner over fixtures/sign/<case>/.
 *
 * Each case folder holds:
 *   case       key=value lines: dialect (cavage|rfc9421), mode (sign|verify), key_id, scheme,
 *              and for sign cases headers= (cavage) or input= (RFC 9421), created=, expires=;
 *              verify cases may give verdict= (default ok)
 *   request    "METHOD TARGET", header lines, an empty line, then the body bytes
 *   key.pem    the key (private for sign cases)
 *   base       the expected signing string / signature base (one trailing newline dropped)
 *   signature  sign cases: the expected base64 signature
 * Expected values come from the specifications and openssl(1); see fixtures/sign/README.md. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sign/sign.h"
#include "tests/check.h"

#define ROOT        "fixtures/sign"
#define MAX_HEADERS 32

static char *slurp(const char *dir, const char *name, size_t *len_out)
{
    char path[512];
    FILE *f;
    char *buf;
    long n;
    snprintf(path, sizeof(path), "%s/%s/%s", ROOT, dir, name);
    f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n)
        n = 0;
    buf[n] = '\0';
    fclose(f);
    if (len_out)
        *len_out = (size_t)n;
    return buf;
}

/* An expected value: the file without its one trailing newline. */
static char *expected(const char *dir, const char *name)
{
    size_t n;
    char *s = slurp(dir, name, &n);
    if (s && n && s[n - 1] == '\n')
        s[n - 1] = '\0';
    return s;
}

static const char *case_get(char *const *keys, char *const *vals, size_t n, const char *k)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (strcmp(keys[i], k) == 0)
            return vals[i];
    return NULL;
}

struct req {
    char *text;
    char method[16];
    char *target;
    struct sign_header h[MAX_HEADERS];
    size_t n;
    char *body;
    size_t body_len;
};

/* Split the request file in place. */
static int parse_request(char *text, size_t len, struct req *r)
{
    char *p = text, *nl, *sp;
    r->text = text;
    r->n = 0;
    nl = strchr(p, '\n');
    if (!nl)
        return -1;
    *nl = '\0';
    sp = strchr(p, ' ');
    if (!sp || (size_t)(sp - p) >= sizeof(r->method))
        return -1;
    memcpy(r->method, p, (size_t)(sp - p));
    r->method[sp - p] = '\0';
    r->target = sp + 1;
    p = nl + 1;
    while (*p && *p != '\n') {
        char *colon;
        nl = strchr(p, '\n');
        if (!nl || r->n == MAX_HEADERS)
            return -1;
        *nl = '\0';
        colon = strchr(p, ':');
        if (!colon)
            return -1;
        *colon = '\0';
        r->h[r->n].name = p;
        r->h[r->n].value = colon + 1 + (colon[1] == ' ');
        r->n++;
        p = nl + 1;
    }
    if (*p == '\n')
        p++;
    r->body = p;
    r->body_len = len - (size_t)(p - text);
    return 0;
}

static const char *header(const struct req *r, const char *name)
{
    size_t i;
    for (i = 0; i < r->n; i++)
        if (strcasecmp(r->h[i].name, name) == 0)
            return r->h[i].value;
    return NULL;
}

static int verdict_of(const char *name)
{
    int v;
    for (v = 0; v <= SIGN_ERR_KEY; v++)
        if (strcmp(sign_verdict_name(v), name) == 0)
            return v;
    return -1;
}

static void run_case(const char *dir)
{
    char *keys[16], *vals[16], *cfg, *line, *save = NULL, *text, *pem, *base, *want_sig;
    size_t n_cfg = 0, len;
    struct req r;
    struct sign_msg msg;
    struct sign_key *key;
    struct flood_err err = {0, ""};
    const char *dialect, *mode, *key_id, *v;

    cfg = slurp(dir, "case", NULL);
    if (!cfg)
        return;
    for (line = strtok_r(cfg, "\n", &save); line && n_cfg < 16;
         line = strtok_r(NULL, "\n", &save)) {
        char *eq = strchr(line, '=');
        if (!eq)
            continue;
        *eq = '\0';
        keys[n_cfg] = line;
        vals[n_cfg++] = eq + 1;
    }
    dialect = case_get(keys, vals, n_cfg, "dialect");
    mode = case_get(keys, vals, n_cfg, "mode");
    key_id = case_get(keys, vals, n_cfg, "key_id");
    text = slurp(dir, "request", &len);
    pem = slurp(dir, "key.pem", NULL);
    base = expected(dir, "base");
    CHECK(dialect && mode && key_id && text && pem && base, "%s: case files present", dir);
    if (!(dialect && mode && key_id && text && pem && base) || parse_request(text, len, &r) < 0) {
        CHECK(0, "%s: request parses", dir);
        goto out;
    }
    memset(&msg, 0, sizeof(msg));
    msg.method = r.method;
    msg.scheme = case_get(keys, vals, n_cfg, "scheme");
    msg.authority = header(&r, "host");
    msg.path = r.target;
    msg.headers = r.h;
    msg.n_headers = r.n;
    msg.body = r.body;
    msg.body_len = r.body_len;
    key = sign_key_from_pem(pem, 0, &err);
    CHECK(key != NULL, "%s: key loads %s", dir, key ? "" : err.msg);
    if (!key)
        goto out;

    if (strcmp(mode, "sign") == 0) {
        char *got_base = NULL, *sig, hv[2048], hv2[4200];
        long long created = -1, expires = -1;
        want_sig = expected(dir, "signature");
        if ((v = case_get(keys, vals, n_cfg, "created")))
            created = atoll(v);
        if ((v = case_get(keys, vals, n_cfg, "expires")))
            expires = atoll(v);
        if (strcmp(dialect, "cavage") == 0) {
            const char *list[16];
            size_t n = 0;
            char *hl = strdup(case_get(keys, vals, n_cfg, "headers")), *tok, *s2 = NULL;
            for (tok = strtok_r(hl, " ", &s2); tok && n < 16; tok = strtok_r(NULL, " ", &s2))
                list[n++] = tok;
            got_base = sign_cavage_signing_string(&msg, list, n, created, expires, &err);
            snprintf(hv, sizeof(hv), "keyId=\"%s\",algorithm=\"rsa-sha256\",headers=\"%s\"", key_id,
                     case_get(keys, vals, n_cfg, "headers"));
            if (created >= 0)
                snprintf(hv, sizeof(hv),
                         "keyId=\"%s\",algorithm=\"rsa-sha256\",created=%lld,expires=%lld,"
                         "headers=\"%s\"",
                         key_id, created, expires, case_get(keys, vals, n_cfg, "headers"));
            free(hl);
        } else {
            got_base = sign_rfc9421_base(&msg, case_get(keys, vals, n_cfg, "input"), &err);
            snprintf(hv, sizeof(hv), "sig=%s", case_get(keys, vals, n_cfg, "input"));
        }
        CHECK_STR(got_base, base, "%s: signing base matches the spec byte for byte", dir);
        sig = got_base ? sign_data_b64(key, strcmp(dialect, "cavage") == 0 ? "rsa-sha256" : NULL,
                                       got_base, strlen(got_base), &err)
                       : NULL;
        CHECK_STR(sig, want_sig, "%s: signature reproduced exactly", dir);
        /* The expected signature must also pass our verifier. */
        if (want_sig && r.n + 2 <= MAX_HEADERS) {
            struct sign_parsed *sp = NULL;
            int verdict;
            if (strcmp(dialect, "cavage") == 0) {
                snprintf(hv2, sizeof(hv2), "%s,signature=\"%s\"", hv, want_sig);
                r.h[r.n++] = (struct sign_header){"Signature", hv2};
            } else {
                snprintf(hv2, sizeof(hv2), "sig=:%s:", want_sig);
                r.h[r.n++] = (struct sign_header){"Signature-Input", hv};
                r.h[r.n++] = (struct sign_header){"Signature", hv2};
            }
            msg.n_headers = r.n;
            verdict = sign_parse(&msg, &sp, &err);
            if (verdict == SIGN_OK)
                verdict = sign_verify_signature(sp, &msg, key, &err);
            CHECK(verdict == SIGN_OK, "%s: the expected signature verifies (%s %s)", dir,
                  sign_verdict_name(verdict), verdict ? err.msg : "");
            sign_parsed_free(sp);
        }
        free(got_base);
        free(sig);
        free(want_sig);
    } else {
        struct sign_parsed *sp = NULL;
        int verdict = sign_parse(&msg, &sp, &err), want;
        char *got_base;
        CHECK(verdict == SIGN_OK, "%s: parses (%s)", dir, verdict ? err.msg : "ok");
        if (sp) {
            CHECK_STR(sign_parsed_key_id(sp), key_id, "%s: key id", dir);
            got_base = sign_parsed_base(sp, &msg, &err);
            CHECK_STR(got_base, base, "%s: signing base matches the spec byte for byte", dir);
            free(got_base);
            v = case_get(keys, vals, n_cfg, "verdict");
            want = v ? verdict_of(v) : SIGN_OK;
            verdict = sign_verify_signature(sp, &msg, key, &err);
            CHECK(verdict == want, "%s: verdict %s (want %s) %s", dir, sign_verdict_name(verdict),
                  sign_verdict_name(want), verdict ? err.msg : "");
            sign_parsed_free(sp);
        }
    }
    sign_key_free(key);
out:
    free(cfg);
    free(text);
    free(pem);
    free(base);
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
    DIR *d = opendir(ROOT);
    struct dirent *e;
    char *names[256];
    size_t n = 0, i;
    CHECK(d != NULL, "fixtures folder %s opens (run from the repository root)", ROOT);
    if (!d)
        return check_done();
    while ((e = readdir(d)) && n < 256)
        if (e->d_name[0] != '.')
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof(names[0]), cmp);
    for (i = 0; i < n; i++) {
        run_case(names[i]);
        free(names[i]);
    }
    CHECK(n >= 10, "found %zu vector cases", n);
    return check_done();
}
