/* flood/cmd/cmd_fetch.c: `flood fetch URL`, a signed GET as a crowd actor. The tool to reach
 * for when a target answers 401 to unsigned fetches (Mastodon's authorized fetch,
 * GoToSocial). The target checks the signature by fetching the signing actor's key from
 * the crowd, so `flood serve` with the same --state (and naming options) must be running
 * and reachable from the target under the crowd's host names. */
#include "flood/cmd/cli.h"
#include "flood/cmd/cmd_fetch.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flood/crowd/crowd.h"
#include "flood/core/http.h"
#include "flood/send/target.h"

enum {
    FETCH_OPT_HELP = 'h',
    FETCH_OPT_AS = 600,
    FETCH_OPT_RESOLVE,
    FETCH_OPT_CONNECT_TO,
    FETCH_OPT_INSECURE,
    FETCH_OPT_CACERT,
    FETCH_OPT_ACCEPT,
    FETCH_OPT_DIALECT,
    FETCH_OPT_INCLUDE,
    FETCH_OPT_TIMEOUT,
    FETCH_OPT_DISCOVER,
    FETCH_OPT_TARGET_HTTP,
};

static const struct option fetch_own_options[] = {
    {"help", no_argument, NULL, FETCH_OPT_HELP},
    {"as", required_argument, NULL, FETCH_OPT_AS},
    {"resolve", required_argument, NULL, FETCH_OPT_RESOLVE},
    {"connect-to", required_argument, NULL, FETCH_OPT_CONNECT_TO},
    {"insecure", no_argument, NULL, FETCH_OPT_INSECURE},
    {"cacert", required_argument, NULL, FETCH_OPT_CACERT},
    {"accept", required_argument, NULL, FETCH_OPT_ACCEPT},
    {"dialect", required_argument, NULL, FETCH_OPT_DIALECT},
    {"include", no_argument, NULL, FETCH_OPT_INCLUDE},
    {"timeout", required_argument, NULL, FETCH_OPT_TIMEOUT},
    {"discover", no_argument, NULL, FETCH_OPT_DISCOVER},
    {"target-http", no_argument, NULL, FETCH_OPT_TARGET_HTTP},
    {NULL, 0, NULL, 0},
};

static void fetch_usage(FILE *f)
{
    fprintf(f, "usage: flood fetch [options] URL\n"
               "       flood fetch --discover [options] PERSONA\n"
               "GET URL signed as a crowd actor (authorized fetch) and print the answer: the body\n"
               "on stdout (JSON pretty-printed) for a 2xx status, else the status and the body on\n"
               "stderr. The target verifies the signature by fetching the actor's key from the\n"
               "crowd: run `flood serve` with the same --state and naming options meanwhile.\n\n"
               "  --as I[/A]           sign as actor A of instance I (default 1/0: the instance\n"
               "                       actor of instance 1, https://HOST/actor)\n"
               "  --dialect D          cavage (default), rfc9421, or none (unsigned)\n"
               "  --accept TYPE        Accept header (default application/activity+json)\n"
               "  --resolve H:P:A      connect to address A for host H, port P (as curl)\n"
               "  --connect-to H:P:H2:P2  connect to H2:P2 for H:P (as curl; repeatable)\n"
               "  --insecure           do not verify the target's TLS certificate\n"
               "  --cacert FILE        trust the CAs in FILE\n"
               "  --timeout S          whole request timeout in seconds (default 10)\n"
               "  --include            print the status line and headers before the body\n"
               "  --discover           PERSONA (acct:NAME@HOST or an actor URL) is resolved as\n"
               "                       `flood run` does (WebFinger, signed GETs of the actor and\n"
               "                       its outbox); prints acct, actor, inbox, sharedInbox, posts\n"
               "  --target-http        with --discover: WebFinger over plain http (lab targets)\n"
               "  -h, --help           this help\n\n"
               "Exit codes: 0 a 2xx answer, 1 another status or a failure, 2 usage.\n\n");
    fputs(crowd_options_help, f);
}

struct fetch_args {
    int instance, actor;
    const char **resolve, **connect_to;
    size_t n_resolve, n_connect_to;
    int insecure, include, dialect, discover, target_http;
    const char *cacert, *accept;
    long timeout_ms;
};

static void push(const char ***list, size_t *n, const char *v)
{
    *list = flood_xrealloc(*list, (*n + 1) * sizeof(**list));
    (*list)[(*n)++] = v;
}

static int parse_as(const char *s, struct fetch_args *a)
{
    char *end;
    long i = strtol(s, &end, 10), j = 0;
    if (end == s || i < 1 || i > 1000000)
        return -1;
    if (*end == '/') {
        const char *p = end + 1;
        j = strtol(p, &end, 10);
        if (end == p || j < 0 || j > 1000000)
            return -1;
    }
    if (*end)
        return -1;
    a->instance = (int)i;
    a->actor = (int)j;
    return 0;
}

static int own_option(int id, const char *arg, struct fetch_args *a)
{
    char *end;
    switch (id) {
    case FETCH_OPT_AS:
        if (parse_as(arg, a) == 0)
            return 0;
        fprintf(stderr, "flood: fetch: --as: expected INSTANCE[/ACTOR], got '%s'\n", arg);
        return -1;
    case FETCH_OPT_RESOLVE:
        push(&a->resolve, &a->n_resolve, arg);
        return 0;
    case FETCH_OPT_CONNECT_TO:
        push(&a->connect_to, &a->n_connect_to, arg);
        return 0;
    case FETCH_OPT_INSECURE:
        a->insecure = 1;
        return 0;
    case FETCH_OPT_CACERT:
        a->cacert = arg;
        return 0;
    case FETCH_OPT_ACCEPT:
        a->accept = arg;
        return 0;
    case FETCH_OPT_INCLUDE:
        a->include = 1;
        return 0;
    case FETCH_OPT_DISCOVER:
        a->discover = 1;
        return 0;
    case FETCH_OPT_TARGET_HTTP:
        a->target_http = 1;
        return 0;
    case FETCH_OPT_DIALECT:
        if (!strcmp(arg, "cavage"))
            a->dialect = SIGN_CAVAGE;
        else if (!strcmp(arg, "rfc9421"))
            a->dialect = SIGN_RFC9421;
        else if (!strcmp(arg, "none"))
            a->dialect = HTTP_SIGN_NONE;
        else {
            fprintf(stderr, "flood: fetch: --dialect: expected cavage|rfc9421|none, got '%s'\n",
                    arg);
            return -1;
        }
        return 0;
    case FETCH_OPT_TIMEOUT: {
        double t = strtod(arg, &end);
        if (end == arg || *end || !(t > 0 && t <= 3600)) {
            fprintf(stderr, "flood: fetch: --timeout: expected seconds in (0, 3600], got '%s'\n",
                    arg);
            return -1;
        }
        a->timeout_ms = (long)(t * 1000);
        if (a->timeout_ms < 1)
            a->timeout_ms = 1;
        return 0;
    }
    }
    return -1;
}

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

static int fetch_own(void *ctx, int id, const char *arg)
{
    return own_option(id, arg, ctx) < 0 ? -1 : 0;
}

int cmd_fetch(int argc, char **argv)
{
    struct fetch_args a = {
        .instance = 1, .actor = 0, .dialect = SIGN_CAVAGE, .accept = WF_CT_ACTIVITY};
    struct crowd_opts co;
    crowd_opts_defaults(&co);
    co.quiet = 1;
    struct cli_spec spec = {.cmd = "fetch",
                            .own = fetch_own_options,
                            .own_cb = fetch_own,
                            .ctx = &a,
                            .crowd = &co,
                            .usage = fetch_usage,
                            .operands = 1};
    struct flood_err err = {0};
    int rc = cli_parse(&spec, argc, argv);
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
        free(a.resolve);
        free(a.connect_to);
        return rc < 0 ? 0 : rc;
    }
    const char *url = argv[optind];

    struct crowd *crowd = crowd_new(&co, &err);
    if (!crowd) {
        fprintf(stderr, "flood: fetch: %s\n", err.msg);
        free(a.resolve);
        free(a.connect_to);
        return 1;
    }
    char key_id[WF_URL_MAX];
    crowd_key_id(crowd, a.instance, a.actor, key_id);
    struct http_signer s = {
        .dialect = a.dialect, .key = crowd_key(crowd, a.instance, a.actor), .key_id = key_id};
    struct http_opts ho = {
        .resolve = a.resolve,
        .n_resolve = a.n_resolve,
        .connect_to = a.connect_to,
        .n_connect_to = a.n_connect_to,
        .insecure = a.insecure,
        .cacert = a.cacert,
        .timeout_ms = a.timeout_ms,
    };
    if (a.discover) {
        rc = discover(url, crowd, &a, &ho);
        crowd_free(crowd);
        free(a.resolve);
        free(a.connect_to);
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
    free(a.resolve);
    free(a.connect_to);
    return rc;
}
