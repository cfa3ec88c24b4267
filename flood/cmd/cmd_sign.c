/* flood/cmd/cmd_sign.c: `flood sign` prints the headers that sign a request; `flood verify`
 * checks a signed request. Thin glue: files and the clock here, every rule in sign/. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "flood/cmd/cmd_sign.h"
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

static void sign_usage(FILE *f)
{
    fprintf(f, "usage: flood sign --key PEM_FILE --key-id ID --method M --url URL [options]\n"
               "Prints the headers that sign the request, one \"Name: value\" a line (Host, Date,\n"
               "Content-Type and Digest or Content-Digest with a body, then Signature or\n"
               "Signature-Input and Signature), ready for curl -H.\n\n"
               "  --key PEM_FILE          private key (PKCS#8 or traditional RSA, or Ed25519)\n"
               "  --key-id ID             keyId / keyid, e.g. https://host/users/x#main-key\n"
               "  --method M              GET, POST, ...\n"
               "  --url URL               http(s)://host[:port]/path?query\n"
               "  --body FILE             the request body (adds Digest / Content-Digest)\n"
               "  --content-type CT       default application/activity+json with a body\n"
               "  --dialect D             cavage (default) or rfc9421\n"
               "  --date 'IMF-fixdate'    the signing time, e.g. 'Sun, 06 Nov 1994 08:49:37 GMT'\n"
               "  --time EPOCH_SECONDS    the same as a number (default: now)\n"
               "  --help                  this text\n"
               "Exit codes: 0 ok, 1 failure, 2 usage.\n");
}

int cmd_sign(int argc, char **argv)
{
    static const struct option opts[] = {{"key", required_argument, NULL, 'k'},
                                         {"key-id", required_argument, NULL, 'i'},
                                         {"method", required_argument, NULL, 'm'},
                                         {"url", required_argument, NULL, 'u'},
                                         {"body", required_argument, NULL, 'b'},
                                         {"content-type", required_argument, NULL, 'c'},
                                         {"dialect", required_argument, NULL, 'd'},
                                         {"date", required_argument, NULL, 'D'},
                                         {"time", required_argument, NULL, 't'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *key_path = NULL, *key_id = NULL, *method = NULL, *url = NULL, *body_path = NULL,
               *ctype = NULL;
    enum sign_dialect dialect = SIGN_CAVAGE;
    time_t now = time(NULL);
    int c, have_time = 0, rc = 1;
    char *scheme = NULL, *authority = NULL, *path = NULL, *body = NULL;
    size_t body_len = 0, i;
    struct sign_key *key = NULL;
    struct sign_header hs[1];
    struct sign_out out = {{0}, 0};
    struct flood_err err = {0, ""};

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'k':
            key_path = optarg;
            break;
        case 'i':
            key_id = optarg;
            break;
        case 'm':
            method = optarg;
            break;
        case 'u':
            url = optarg;
            break;
        case 'b':
            body_path = optarg;
            break;
        case 'c':
            ctype = optarg;
            break;
        case 'd':
            if (strcmp(optarg, "cavage") == 0)
                dialect = SIGN_CAVAGE;
            else if (strcmp(optarg, "rfc9421") == 0)
                dialect = SIGN_RFC9421;
            else {
                fprintf(stderr, "flood: sign: --dialect '%s' (want cavage or rfc9421)\n", optarg);
                return 2;
            }
            break;
        case 'D':
            if (have_time || sign_parse_http_date(optarg, &now) < 0) {
                fprintf(stderr, "flood: sign: --date '%s' is not one IMF-fixdate\n", optarg);
                return 2;
            }
            have_time = 1;
            break;
        case 't':
            if (have_time || parse_epoch(optarg, &now) < 0) {
                fprintf(stderr, "flood: sign: --time '%s' is not one epoch second count\n", optarg);
                return 2;
            }
            have_time = 1;
            break;
        case 'h':
            sign_usage(stdout);
            return 0;
        default:
            fprintf(stderr, "flood: sign: unknown or incomplete option '%s'\n", argv[optind - 1]);
            sign_usage(stderr);
            return 2;
        }
    }
    if (optind < argc || !key_path || !key_id || !method || !url) {
        fprintf(stderr, "flood: sign: %s\n",
                optind < argc ? "unexpected argument"
                              : "--key, --key-id, --method and --url are needed");
        sign_usage(stderr);
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

static void verify_usage(FILE *f)
{
    fprintf(f, "usage: flood verify --key PEM_FILE --method M --url URL [options]\n"
               "Verifies a signed request (draft-cavage-12, or RFC 9421 when Signature-Input is\n"
               "present) and prints \"ok <dialect> keyId=<id>\"; a refusal prints\n"
               "\"flood: verify: <verdict>: <detail>\" on stderr.\n\n"
               "  --key PEM_FILE          the signer's public key (SPKI), or its private key\n"
               "  --method M              the request method\n"
               "  --url URL               http(s)://host[:port]/path?query as requested\n"
               "  --body FILE             the request body\n"
               "  --header 'Name: value'  a request header (repeat)\n"
               "  --headers-file FILE     request headers, one \"Name: value\" a line\n"
               "  --now EPOCH             the verifier's time (default: now)\n"
               "  --window SECONDS        accepted Date / created skew (default 3600)\n"
               "  --help                  this text\n"
               "Exit codes: 0 accepted, 1 refused or failed, 2 usage.\n");
}

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

int cmd_verify(int argc, char **argv)
{
    static const struct option opts[] = {
        {"key", required_argument, NULL, 'k'},    {"method", required_argument, NULL, 'm'},
        {"url", required_argument, NULL, 'u'},    {"body", required_argument, NULL, 'b'},
        {"header", required_argument, NULL, 'H'}, {"headers-file", required_argument, NULL, 'F'},
        {"now", required_argument, NULL, 'n'},    {"window", required_argument, NULL, 'w'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    const char *key_path = NULL, *method = NULL, *url = NULL, *body_path = NULL;
    const char *files[16];
    size_t n_files = 0, n = 0, body_len = 0, i;
    char *lines[CMD_HEADERS_MAX], *file_bufs[16];
    size_t n_lines = 0, n_bufs = 0;
    struct sign_header hs[CMD_HEADERS_MAX];
    time_t now = time(NULL), w;
    long window = 3600;
    int c, rc = 1, verdict;
    char *scheme = NULL, *authority = NULL, *path = NULL, *body = NULL;
    struct sign_key *key = NULL;
    struct sign_parsed *sp = NULL;
    struct flood_err err = {0, ""};

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'k':
            key_path = optarg;
            break;
        case 'm':
            method = optarg;
            break;
        case 'u':
            url = optarg;
            break;
        case 'b':
            body_path = optarg;
            break;
        case 'H':
            if (n_lines == CMD_HEADERS_MAX) {
                fprintf(stderr, "flood: verify: more than %d --header\n", CMD_HEADERS_MAX);
                rc = 2;
                goto out;
            }
            lines[n_lines++] = flood_xstrdup(optarg);
            break;
        case 'F':
            if (n_files == 16) {
                fprintf(stderr, "flood: verify: more than 16 --headers-file\n");
                rc = 2;
                goto out;
            }
            files[n_files++] = optarg;
            break;
        case 'n':
            if (parse_epoch(optarg, &now) < 0) {
                fprintf(stderr, "flood: verify: --now '%s' is not an epoch second count\n", optarg);
                rc = 2;
                goto out;
            }
            break;
        case 'w':
            if (parse_epoch(optarg, &w) < 0 || w > 10L * 365 * 86400) {
                fprintf(stderr, "flood: verify: --window '%s' is not a number of seconds\n",
                        optarg);
                rc = 2;
                goto out;
            }
            window = (long)w;
            break;
        case 'h':
            verify_usage(stdout);
            rc = 0;
            goto out;
        default:
            fprintf(stderr, "flood: verify: unknown or incomplete option '%s'\n", argv[optind - 1]);
            verify_usage(stderr);
            rc = 2;
            goto out;
        }
    }
    if (optind < argc || !key_path || !method || !url) {
        fprintf(stderr, "flood: verify: %s\n",
                optind < argc ? "unexpected argument" : "--key, --method and --url are needed");
        verify_usage(stderr);
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
    for (i = 0; i < n_lines; i++)
        free(lines[i]);
    for (i = 0; i < n_bufs; i++)
        free(file_bufs[i]);
    free(scheme);
    free(authority);
    free(path);
    free(body);
    return rc;
}
