/* flood/cmd/cmd_fetch.c: `flood fetch URL`, a signed GET as a crowd actor. The tool to reach
 * for when a target answers 401 to unsigned fetches (Mastodon's authorized fetch,
 * GoToSocial). The target checks the signature by fetching the signing actor's key from
 * the crowd, so `flood serve` with the same --state (and naming options) must be running
 * and reachable from the target under the crowd's host names. */
#include "flood/cmd/cmd_fetch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flood/core/opt.h"
#include "flood/crowd/crowd.h"
#include "flood/core/http.h"
#include "flood/send/target.h"

struct fetch_args {
    int instance, actor;
    char **resolve, **connect_to;
    size_t n_resolve, n_connect_to;
    int insecure, include, dialect, discover, target_http;
    const char *cacert, *accept;
    long timeout_ms;
};

/* --as I[/A]. */
static int set_as(void *base, const struct opt *row, const char *arg, struct flood_err *err)
{
    (void)row;
    struct fetch_args *a = base;
    char *end;
    long i = strtol(arg, &end, 10), j = 0;
    int bad = end == arg || i < 1 || i > 1000000;
    if (!bad && *end == '/') {
        const char *p = end + 1;
        j = strtol(p, &end, 10);
        bad = end == p || j < 0 || j > 1000000;
    }
    if (bad || *end) {
        flood_err_set(err, FLOOD_EINVAL, "--as: expected INSTANCE[/ACTOR], got '%s'", arg);
        return -1;
    }
    a->instance = (int)i;
    a->actor = (int)j;
    return 0;
}

/* --dialect: the keyword's index as the signer's dialect (none: unsigned). */
static int set_dialect(void *base, const struct opt *row, const char *arg, struct flood_err *err)
{
    static const int dialects[] = {SIGN_CAVAGE, SIGN_RFC9421, HTTP_SIGN_NONE};
    struct fetch_args *a = base;
    int k;
    if (gram_keyword("--dialect", arg, GRAM_NUL, row->words, 3, &k, err))
        return -1;
    a->dialect = dialects[k];
    return 0;
}

#define FA(m) OPT_AT(struct fetch_args, m)

static const char *const dialect_words[] = {"cavage", "rfc9421", "none", NULL};

const struct opt fetch_opt_rows[] = {
    {"as", OPT_CUSTOM, "I[/A]", .set = set_as, .def = "1/0", .flags = OPT_F_DEF_QUIET,
     .help = "sign as actor A of instance I (default 1/0: the instance actor of instance 1, "
             "https://HOST/actor)"},
    {"dialect", OPT_CUSTOM, "D", .set = set_dialect, .words = dialect_words, .def = "cavage",
     .help = "cavage, rfc9421, or none (unsigned)"},
    {"accept", OPT_STRING, "TYPE", FA(accept), .def = WF_CT_ACTIVITY, .help = "Accept header"},
    {"resolve", OPT_STRINGS, "H:P:A", FA(resolve), .n_off = offsetof(struct fetch_args, n_resolve),
     .help = "connect to address A for host H, port P (as curl)"},
    {"connect-to", OPT_STRINGS, "H:P:H2:P2", FA(connect_to),
     .n_off = offsetof(struct fetch_args, n_connect_to),
     .help = "connect to H2:P2 for H:P (as curl; repeatable)"},
    {"insecure", OPT_FLAG, FA(insecure), .help = "do not verify the target's TLS certificate"},
    {"cacert", OPT_PATH, "FILE", FA(cacert), .help = "trust the CAs in FILE"},
    {"timeout", OPT_DURATION_MS, "S", FA(timeout_ms), .lo = 0.001, .hi = 3600,
     .bare = GRAM_BARE_SECONDS, .def = "10", .help = "whole request timeout"},
    {"include", OPT_FLAG, FA(include), .help = "print the status line and headers before the body"},
    {"discover", OPT_FLAG, FA(discover),
     .help = "PERSONA (acct:NAME@HOST or an actor URL) is resolved as `flood run` does "
             "(WebFinger, signed GETs of the actor and its outbox); prints acct, actor, inbox, "
             "sharedInbox, posts"},
    {"target-http", OPT_FLAG, FA(target_http),
     .help = "with --discover: WebFinger over plain http (lab targets)"},
    {0},
};

static const char fetch_usage[] =
    "usage: flood fetch [options] URL\n"
    "       flood fetch --discover [options] PERSONA\n"
    "GET URL signed as a crowd actor (authorized fetch) and print the answer: the body\n"
    "on stdout (JSON pretty-printed) for a 2xx status, else the status and the body on\n"
    "stderr. The target verifies the signature by fetching the actor's key from the\n"
    "crowd: run `flood serve` with the same --state and naming options meanwhile.\n";

static const char fetch_tail[] = "Exit codes: 0 a 2xx answer, 1 another status or a failure, 2 "
                                 "usage.\n";

/* Print the body: JSON pretty-printed, anything else as it came. */
static void print_body(FILE *f, const struct http_resp *r)
{
    json_error_t je;
    json_t *j = r->len ? json_loadb(r->body, r->len, 0, &je) : NULL;
    if (j && (json_is_object(j) || json_is_array(j))) {
        json_dumpf(j, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        fputc('\n', f);
    } else {
        fwrite(r->body, 1, r->len, f);
        if (r->len && r->body[r->len - 1] != '\n')
            fputc('\n', f);
    }
    json_decref(j);
}

/* --discover: resolve a persona and print what `flood run` would use of it. */
static int discover(const char *spec, const struct crowd *crowd, const struct fetch_args *a,
                    const struct http_opts *ho)
{
    struct target_opts to = {.target_http = a->target_http,
                             .http = *ho,
                             .dialect = a->dialect == HTTP_SIGN_NONE ? SIGN_CAVAGE : a->dialect};
    struct persona p;
    struct flood_err err = {0};
    if (target_discover(spec, crowd, &to, &p, &err) < 0) {
        fprintf(stderr, "flood: fetch: %s\n", err.msg);
        return 1;
    }
    json_t *posts = json_array();
    for (size_t i = 0; i < p.n_posts; i++)
        json_array_append_new(posts, json_string(p.posts[i]));
    json_t *j = json_pack("{s:s?,s:s,s:s,s:s?,s:o}", "acct", p.acct, "actor", p.actor, "inbox",
                          p.inbox, "sharedInbox", p.shared_inbox, "posts", posts);
    int rc = 1;
    if (j && json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0) {
        fputc('\n', stdout);
        rc = 0;
    } else {
        fprintf(stderr, "flood: fetch: cannot print the persona of '%s'\n", spec);
    }
    json_decref(j);
    persona_free(&p);
    return rc;
}

static void fetch_args_free(struct fetch_args *a)
{
    opt_strs_free(a->resolve, a->n_resolve);
    opt_strs_free(a->connect_to, a->n_connect_to);
}

int cmd_fetch(int argc, char **argv)
{
    struct fetch_args a = {0};
    struct crowd_opts co;
    crowd_opts_defaults(&co);
    co.quiet = 1;
    struct opt_spec spec = {.cmd = "fetch",
                            .mask = OPT_CMD_FETCH,
                            .sets = {{fetch_opt_rows, &a}, {crowd_opt_rows, &co}},
                            .n_sets = 2,
                            .usage = fetch_usage,
                            .tail = fetch_tail,
                            .operands = 1};
    struct flood_err err = {0};
    int rc = opt_defaults(&spec, &err) ? 2 : opt_parse(&spec, argc, argv);
    if (rc == 1)
        rc = -1; /* --help: exit 0 below */
    if (!rc && optind != argc - 1) {
        fprintf(stderr, "flood: fetch: %s (try flood fetch --help)\n",
                optind >= argc ? "a URL is needed" : "one URL only");
        rc = 2;
    }
    if (!rc && crowd_opts_check(&co, &err)) {
        fprintf(stderr, "flood: fetch: %s\n", err.msg);
        rc = 2;
    }
    if (!rc && co.proxy) { /* the egress proxy stands beside a crowd a target uses for long */
        fprintf(stderr, "flood: fetch: --proxy: only flood serve, run and capacity take it\n");
        rc = 2;
    }
    if (!rc && (a.instance > co.instances || a.actor > co.actors)) {
        fprintf(stderr, "flood: fetch: --as %d/%d: the crowd has %d instances of %d actors\n",
                a.instance, a.actor, co.instances, co.actors);
        rc = 2;
    }
    if (rc) {
        fetch_args_free(&a);
        return rc < 0 ? 0 : rc;
    }
    const char *url = argv[optind];

    struct crowd *crowd = crowd_new(&co, &err);
    if (!crowd) {
        fprintf(stderr, "flood: fetch: %s\n", err.msg);
        fetch_args_free(&a);
        return 1;
    }
    char key_id[WF_URL_MAX];
    crowd_key_id(crowd, a.instance, a.actor, key_id);
    struct http_signer s = {
        .dialect = a.dialect, .key = crowd_key(crowd, a.instance, a.actor), .key_id = key_id};
    struct http_opts ho = {
        .resolve = (const char *const *)a.resolve,
        .n_resolve = a.n_resolve,
        .connect_to = (const char *const *)a.connect_to,
        .n_connect_to = a.n_connect_to,
        .insecure = a.insecure,
        .cacert = a.cacert,
        .timeout_ms = a.timeout_ms,
    };
    if (a.discover) {
        rc = discover(url, crowd, &a, &ho);
        crowd_free(crowd);
        fetch_args_free(&a);
        return rc;
    }
    struct http_resp r;
    if (http_get(url, a.accept, &s, &ho, &r, &err) < 0) {
        fprintf(stderr, "flood: fetch: %s\n", err.msg);
        rc = 1;
    } else {
        int ok = r.status >= 200 && r.status <= 299;
        FILE *out = ok ? stdout : stderr;
        if (a.include)
            fprintf(stdout, "%s", r.headers);
        if (!ok)
            fprintf(stderr, "flood: fetch: HTTP %ld from '%s'\n", r.status, url);
        print_body(out, &r);
        rc = ok ? 0 : 1;
        http_resp_free(&r);
    }
    crowd_free(crowd);
    fetch_args_free(&a);
    return rc;
}
