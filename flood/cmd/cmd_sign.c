/* flood/cmd/cmd_sign.c: `flood sign` prints the headers that sign a request; `flood verify`
 * checks a signed request. Thin glue: files and the clock here, every rule in sign/. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "flood/cmd/cmd_sign.h"
#include "flood/core/opt.h"
#include "sign/err.h"
#include "flood/core/url.h"
#include "sign/sign.h"

#define CMD_FILE_MAX    (64L * 1024 * 1024) /* bodies and header files */
#define CMD_HEADERS_MAX 256

/* Read a whole file; NULL and a message on stderr when it cannot. *len gets its size. */
static char *read_file(const char *cmd, const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f) {
        fprintf(stderr, "flood: %s: cannot open '%s': %s\n", cmd, path, strerror(errno));
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || n > CMD_FILE_MAX ||
        fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "flood: %s: cannot read '%s' (or larger than %ld bytes)\n", cmd, path,
                CMD_FILE_MAX);
        fclose(f);
        return NULL;
    }
    buf = flood_xmalloc((size_t)n + 1);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "flood: %s: cannot read '%s'\n", cmd, path);
        free(buf);
        fclose(f);
        return NULL;
    }
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static struct sign_key *load_key(const char *cmd, const char *path)
{
    size_t len;
    char *pem = read_file(cmd, path, &len);
    struct flood_err err = {0, ""};
    struct sign_key *key;
    if (!pem)
        return NULL;
    key = sign_key_from_pem(pem, len, &err);
    free(pem);
    if (!key)
        fprintf(stderr, "flood: %s: key '%s': %s\n", cmd, path, err.msg);
    return key;
}

/* Split an http(s) URL into scheme, authority and path?query (new strings, the fragment
 * dropped) with flood/url.h, so they are what curl sends for the same URL. 0 or -1. */
static int split_url(const char *url, char **scheme, char **authority, char **path)
{
    struct url_parts u;
    struct flood_err err;
    if (url_split(url, &u, &err) < 0)
        return -1;
    *scheme = flood_xstrdup(u.scheme);
    *authority = flood_xstrdup(u.authority);
    *path = flood_xstrdup(u.target);
    return 0;
}

static int parse_epoch(const char *s, time_t *out)
{
    char *end;
    long long v;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < 0)
        return -1;
    *out = (time_t)v;
    return 0;
}

/* ---- flood sign ----------------------------------------------------------------------- */

struct sign_args {
    const char *key_path, *key_id, *method, *url, *body_path, *ctype;
    int dialect; /* enum sign_dialect */
    time_t now;
    int have_time;
};

/* --date and --time: one signing time. */
static int set_date(void *base, const struct opt *row, const char *arg, struct flood_err *err)
{
    struct sign_args *a = base;
    int is_date = !strcmp(row->name, "date");
    if (a->have_time ||
        (is_date ? sign_parse_http_date(arg, &a->now) < 0 : parse_epoch(arg, &a->now) < 0)) {
        flood_err_set(err, FLOOD_EINVAL, "--%s '%s' is not one %s", row->name, arg,
                      is_date ? "IMF-fixdate" : "epoch second count");
        return -1;
    }
    a->have_time = 1;
    return 0;
}

#define SG(m) OPT_AT(struct sign_args, m)

static const char *const dialect_words[] = {"cavage", "rfc9421", NULL};

const struct opt sign_opt_rows[] = {
    {"key", OPT_STRING, "PEM_FILE", SG(key_path),
     .help = "private key (PKCS#8 or traditional RSA, or Ed25519)"},
    {"key-id", OPT_STRING, "ID", SG(key_id),
     .help = "keyId / keyid, e.g. https://host/users/x#main-key"},
    {"method", OPT_STRING, "M", SG(method), .help = "GET, POST, ..."},
    {"url", OPT_STRING, "URL", SG(url), .help = "http(s)://host[:port]/path?query"},
    {"body", OPT_STRING, "FILE", SG(body_path),
     .help = "the request body (adds Digest / Content-Digest)"},
    {"content-type", OPT_STRING, "CT", SG(ctype),
     .help = "default application/activity+json with a body"},
    {"dialect", OPT_KEYWORD, "D", SG(dialect), .words = dialect_words, .def = "cavage",
     .help = "cavage or rfc9421"},
    {"date", OPT_CUSTOM, "'IMF-fixdate'", .set = set_date,
     .help = "the signing time, e.g. 'Sun, 06 Nov 1994 08:49:37 GMT'"},
    {"time", OPT_CUSTOM, "EPOCH_SECONDS", .set = set_date,
     .help = "the same as a number (default: now)"},
    {0},
};

static const char sign_usage[] =
    "usage: flood sign --key PEM_FILE --key-id ID --method M --url URL [options]\n"
    "Prints the headers that sign the request, one \"Name: value\" a line (Host, Date,\n"
    "Content-Type and Digest or Content-Digest with a body, then Signature or\n"
    "Signature-Input and Signature), ready for curl -H.\n";

static const char sign_tail[] = "Exit codes: 0 ok, 1 failure, 2 usage.\n";

int cmd_sign(int argc, char **argv)
{
    struct sign_args a = {.now = time(NULL)};
    int rc = 1;
    char *scheme = NULL, *authority = NULL, *path = NULL, *body = NULL;
    size_t body_len = 0, i;
    struct sign_key *key = NULL;
    struct sign_header hs[1];
    struct sign_out out = {{0}, 0};
    struct flood_err err = {0, ""};
    struct opt_spec spec = {.cmd = "sign",
                            .mask = OPT_CMD_SIGN,
                            .sets = {{sign_opt_rows, &a}},
                            .n_sets = 1,
                            .usage = sign_usage,
                            .tail = sign_tail};
    int prc = opt_defaults(&spec, &err) ? 2 : opt_parse(&spec, argc, argv);
    if (prc)
        return prc == 1 ? 0 : 2;
    const char *key_path = a.key_path, *key_id = a.key_id, *method = a.method, *url = a.url,
               *body_path = a.body_path, *ctype = a.ctype;
    enum sign_dialect dialect = (enum sign_dialect)a.dialect;
    time_t now = a.now;
    if (!key_path || !key_id || !method || !url) {
        fprintf(stderr, "flood: sign: --key, --key-id, --method and --url are needed\n");
        opt_help(&spec, stderr);
        return 2;
    }
    if (split_url(url, &scheme, &authority, &path) < 0) {
        fprintf(stderr, "flood: sign: --url '%s' is not http(s)://host[:port]/path\n", url);
        return 2;
    }
    if (body_path && !(body = read_file("sign", body_path, &body_len)))
        goto out;
    if (body_path && !ctype)
        ctype = "application/activity+json";
    if (!(key = load_key("sign", key_path)))
        goto out;
    if (!sign_key_is_private(key)) {
        fprintf(stderr, "flood: sign: key '%s' is not a private key\n", key_path);
        goto out;
    }
    {
        struct sign_params p = {dialect, key, key_id, now};
        struct sign_msg msg = {method, scheme, authority, path, hs, 0, body, body_len};
        if (ctype) {
            hs[0] = (struct sign_header){"Content-Type", ctype};
            msg.n_headers = 1;
        }
        if (sign_request(&p, &msg, &out, &err) < 0) {
            fprintf(stderr, "flood: sign: %s\n", err.msg);
            goto out;
        }
    }
    /* Host and Date first, then the body's type, then the rest, as a request carries them. */
    for (i = 0; i < out.n; i++) {
        if (ctype && i == 2)
            printf("Content-Type: %s\n", ctype);
        printf("%s\n", out.lines[i]);
    }
    rc = 0;
out:
    sign_out_free(&out);
    sign_key_free(key);
    free(scheme);
    free(authority);
    free(path);
    free(body);
    return rc;
}

/* ---- flood verify ----------------------------------------------------------------------- */

/* Add "Name: value" (owned by storage) to hs. -1 when it is not a header line. */
static int add_header_line(char *line, struct sign_header *hs, size_t *n)
{
    char *colon = strchr(line, ':'), *v, *e;
    size_t k;
    if (!colon || colon == line || *n == CMD_HEADERS_MAX)
        return -1;
    for (k = 0; line + k < colon; k++)
        if (line[k] == ' ' || line[k] == '\t')
            return -1;
    *colon = '\0';
    v = colon + 1;
    while (*v == ' ' || *v == '\t')
        v++;
    e = v + strlen(v);
    while (e > v && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
        *--e = '\0';
    hs[*n].name = line;
    hs[*n].value = v;
    (*n)++;
    return 0;
}

struct verify_args {
    const char *key_path, *method, *url, *body_path;
    char **lines, **files; /* --header, --headers-file (owned) */
    size_t n_lines, n_files;
    uint64_t now, window;
};

#define VA(m) OPT_AT(struct verify_args, m)

const struct opt verify_opt_rows[] = {
    {"key", OPT_STRING, "PEM_FILE", VA(key_path),
     .help = "the signer's public key (SPKI), or its private key"},
    {"method", OPT_STRING, "M", VA(method), .help = "the request method"},
    {"url", OPT_STRING, "URL", VA(url), .help = "http(s)://host[:port]/path?query as requested"},
    {"body", OPT_STRING, "FILE", VA(body_path), .help = "the request body"},
    {"header", OPT_STRINGS, "'Name: value'", VA(lines),
     .n_off = offsetof(struct verify_args, n_lines), .help = "a request header (repeat)"},
    {"headers-file", OPT_STRINGS, "FILE", VA(files), .n_off = offsetof(struct verify_args, n_files),
     .help = "request headers, one \"Name: value\" a line"},
    {"now", OPT_UINT, "EPOCH", VA(now), .lo = 0, .hi = 1e12,
     .help = "the verifier's time (default: now)"},
    {"window", OPT_UINT, "SECONDS", VA(window), .lo = 0, .hi = 10.0 * 365 * 86400, .def = "3600",
     .help = "accepted Date / created skew"},
    {0},
};

static const char verify_usage[] =
    "usage: flood verify --key PEM_FILE --method M --url URL [options]\n"
    "Verifies a signed request (draft-cavage-12, or RFC 9421 when Signature-Input is\n"
    "present) and prints \"ok <dialect> keyId=<id>\"; a refusal prints\n"
    "\"flood: verify: <verdict>: <detail>\" on stderr.\n";

static const char verify_tail[] = "Exit codes: 0 accepted, 1 refused or failed, 2 usage.\n";

int cmd_verify(int argc, char **argv)
{
    struct verify_args a = {.now = (uint64_t)time(NULL)};
    size_t n = 0, body_len = 0, i;
    char *file_bufs[16];
    size_t n_bufs = 0;
    struct sign_header hs[CMD_HEADERS_MAX];
    int rc = 1, verdict;
    char *scheme = NULL, *authority = NULL, *path = NULL, *body = NULL;
    struct sign_key *key = NULL;
    struct sign_parsed *sp = NULL;
    struct flood_err err = {0, ""};
    struct opt_spec spec = {.cmd = "verify",
                            .mask = OPT_CMD_VERIFY,
                            .sets = {{verify_opt_rows, &a}},
                            .n_sets = 1,
                            .usage = verify_usage,
                            .tail = verify_tail};
    int prc = opt_defaults(&spec, &err) ? 2 : opt_parse(&spec, argc, argv);
    const char *key_path = a.key_path, *method = a.method, *url = a.url, *body_path = a.body_path;
    char **lines = a.lines, **files = a.files;
    size_t n_lines = a.n_lines, n_files = a.n_files;
    time_t now = (time_t)a.now;
    long window = (long)a.window;
    if (prc) {
        rc = prc == 1 ? 0 : 2;
        goto out;
    }
    if (n_lines > CMD_HEADERS_MAX || n_files > 16) {
        fprintf(stderr, "flood: verify: more than %s\n",
                n_files > 16 ? "16 --headers-file" : "256 --header");
        rc = 2;
        goto out;
    }
    if (!key_path || !method || !url) {
        fprintf(stderr, "flood: verify: --key, --method and --url are needed\n");
        opt_help(&spec, stderr);
        rc = 2;
        goto out;
    }
    if (split_url(url, &scheme, &authority, &path) < 0) {
        fprintf(stderr, "flood: verify: --url '%s' is not http(s)://host[:port]/path\n", url);
        rc = 2;
        goto out;
    }
    for (i = 0; i < n_lines; i++)
        if (add_header_line(lines[i], hs, &n) < 0) {
            fprintf(stderr, "flood: verify: --header '%s' is not 'Name: value'\n", lines[i]);
            rc = 2;
            goto out;
        }
    for (i = 0; i < n_files; i++) {
        size_t len;
        char *buf = read_file("verify", files[i], &len), *line, *save = NULL;
        if (!buf)
            goto out;
        file_bufs[n_bufs++] = buf;
        for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            if (line[0] == '\0' || (line[0] == '\r' && line[1] == '\0'))
                continue;
            if (add_header_line(line, hs, &n) < 0) {
                fprintf(stderr, "flood: verify: '%s' in %s is not 'Name: value'\n", line, files[i]);
                rc = 2;
                goto out;
            }
        }
    }
    if (body_path && !(body = read_file("verify", body_path, &body_len)))
        goto out;
    if (!(key = load_key("verify", key_path)))
        goto out;
    {
        struct sign_msg msg = {method, scheme, authority, path, hs, n, body, body_len};
        verdict = sign_parse(&msg, &sp, &err);
        if (verdict == SIGN_OK)
            verdict = sign_verify(sp, &msg, key, now, window, &err);
        if (verdict != SIGN_OK) {
            fprintf(stderr, "flood: verify: %s: %s\n", sign_verdict_name(verdict), err.msg);
            goto out;
        }
        printf("ok %s keyId=%s\n", sign_parsed_dialect(sp) == SIGN_RFC9421 ? "rfc9421" : "cavage",
               sign_parsed_key_id(sp));
        rc = 0;
    }
out:
    sign_parsed_free(sp);
    sign_key_free(key);
    opt_strs_free(lines, n_lines);
    opt_strs_free(files, n_files);
    for (i = 0; i < n_bufs; i++)
        free(file_bufs[i]);
    free(scheme);
    free(authority);
    free(path);
    free(body);
    return rc;
}
