/* flood/cmd/cmd_check.c: `flood check`, federation interop as a report card. Starts the crowd
 * in this process (as `flood serve` does), runs a scenario against one persona of the
 * target and prints one row a step. Exit 0 when no step failed, 1 when one did, 2 for a
 * usage error (a bad option, a scenario that does not parse). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flood/check/check.h"
#include "flood/check/check_card.h"
#include "flood/cmd/cli.h"
#include "flood/cmd/cmd.h"
#include "flood/crowd/crowd.h"
#include "flood/inbound/inbound.h"
#include "flood/crowd/server.h"
#include "flood/send/target.h"
#include "flood/core/url.h"

enum {
    CHK_OPT_HELP = 'h',
    CHK_OPT_PERSONA = 700,
    CHK_OPT_TOKEN_FILE,
    CHK_OPT_TARGET_HTTP,
    CHK_OPT_CONNECT_TO,
    CHK_OPT_INSECURE,
    CHK_OPT_CACERT,
    CHK_OPT_TIMEOUT,
    CHK_OPT_SCENARIO,
    CHK_OPT_JSON,
    CHK_OPT_SETTLE,
    CHK_OPT_CHECK_DOMAIN,
    CHK_OPT_VERBOSE,
    CHK_OPT_JUNIT,
    CHK_OPT_NAME,
};

static const struct option check_own_options[] = {
    {"help", no_argument, NULL, CHK_OPT_HELP},
    {"persona", required_argument, NULL, CHK_OPT_PERSONA},
    {"token-file", required_argument, NULL, CHK_OPT_TOKEN_FILE},
    {"target-http", no_argument, NULL, CHK_OPT_TARGET_HTTP},
    {"connect-to", required_argument, NULL, CHK_OPT_CONNECT_TO},
    {"insecure", no_argument, NULL, CHK_OPT_INSECURE},
    {"cacert", required_argument, NULL, CHK_OPT_CACERT},
    {"timeout", required_argument, NULL, CHK_OPT_TIMEOUT},
    {"scenario", required_argument, NULL, CHK_OPT_SCENARIO},
    {"json", no_argument, NULL, CHK_OPT_JSON},
    {"settle", required_argument, NULL, CHK_OPT_SETTLE},
    {"check-domain", required_argument, NULL, CHK_OPT_CHECK_DOMAIN},
    {"verbose", no_argument, NULL, CHK_OPT_VERBOSE},
    {"junit", required_argument, NULL, CHK_OPT_JUNIT},
    {"name", required_argument, NULL, CHK_OPT_NAME},
    {NULL, 0, NULL, 0},
};

static void check_usage(FILE *f)
{
    fprintf(f,
            "usage: flood check --persona acct:NAME@HOST|URL [options]\n"
            "Run an interop scenario against one account of a target server, with the crowd\n"
            "serving in this process, and print one row a step: pass, fail (expected, got),\n"
            "skip (why), deferred (a bad request answered 2xx with no visible effect) or\n"
            "unsupported (a signature dialect the target refuses). docs/INTEROP.md has the\n"
            "steps and the scenario language.\n\n"
            "  --persona P          acct:NAME@HOST (WebFinger) or the persona's actor URL\n"
            "  --token-file F       the persona's Mastodon API bearer token (api steps, and\n"
            "                       telling 'deferred' from 'processed'); without it they skip\n"
            "  --scenario FILE      the steps to run (default: the built-in default scenario,\n"
            "                       fixtures/scenarios/default.flood)\n"
            "  --json               the report as JSON on stdout instead of the table (the\n"
            "                       card that flood matrix puts side by side)\n"
            "  --junit FILE         also write the report as JUnit XML to FILE, for CI: a\n"
            "                       <failure> a failed step, <skipped> a skipped or\n"
            "                       unsupported one; deferred passes with a note\n"
            "  --name NAME          the target's name in the card, the matrix and JUnit\n"
            "                       (default: the persona)\n"
            "  --settle S           how long a refused-expected request answered 2xx is watched\n"
            "                       for an effect (default 3)\n"
            "  --target-http        WebFinger and NodeInfo over plain http (lab targets)\n"
            "  --resolve H:P:A      connect to address A for host H, port P (as curl; also used\n"
            "                       by the crowd's key fetches and Accepts)\n"
            "  --connect-to H:P:H2:P2  connect to H2:P2 for H:P (as curl; repeatable)\n"
            "  --insecure           do not verify the target's TLS certificate\n"
            "  --cacert FILE        trust the CAs in FILE\n"
            "  --timeout S          per-request timeout in seconds (default 10)\n"
            "  --check-domain T     host template of the check's own two actors (key rotation,\n"
            "                       Ed25519), default flood-check%%d.test: the target must reach\n"
            "                       flood-check1.test at the crowd's address\n"
            "  --verbose            progress lines on stderr\n"
            "  -h, --help           this help\n\n"
            "The crowd defaults to --instances 2 --actors 2 here. The persona's host is added\n"
            "to --allow-host. Exit codes: 0 no step failed, 1 a step failed (or the --junit\n"
            "FILE could not be written), 2 usage.\n\n");
    fputs(crowd_options_help, f);
    fputc('\n', f);
    fputs(inbound_options_help, f);
}

struct check_args {
    struct check_opts o;
    const char **resolve, **connect_to;
    size_t n_resolve, n_connect_to;
    const char *token_file, *scenario, *junit;
    int json;
};

static void push(const char ***list, size_t *n, const char *v)
{
    *list = flood_xrealloc(*list, (*n + 1) * sizeof(**list));
    (*list)[(*n)++] = v;
}

static int seconds(const char *name, const char *arg, long *ms)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (errno || end == arg || *end || !(v > 0) || v > 3600) {
        fprintf(stderr, "flood: check: %s: expected seconds in (0, 3600], got '%s'\n", name, arg);
        return -1;
    }
    *ms = (long)(v * 1000);
    if (*ms < 1)
        *ms = 1;
    return 0;
}

static int own_option(int id, const char *arg, struct check_args *a)
{
    switch (id) {
    case CHK_OPT_PERSONA:
        a->o.persona = arg;
        return 0;
    case CHK_OPT_TOKEN_FILE:
        a->token_file = arg;
        return 0;
    case CHK_OPT_TARGET_HTTP:
        a->o.target_http = 1;
        return 0;
    case CHK_OPT_CONNECT_TO:
        push(&a->connect_to, &a->n_connect_to, arg);
        return 0;
    case CHK_OPT_INSECURE:
        a->o.http.insecure = 1;
        return 0;
    case CHK_OPT_CACERT:
        a->o.http.cacert = arg;
        return 0;
    case CHK_OPT_TIMEOUT:
        return seconds("--timeout", arg, &a->o.http.timeout_ms);
    case CHK_OPT_SCENARIO:
        a->scenario = arg;
        return 0;
    case CHK_OPT_JSON:
        a->json = 1;
        return 0;
    case CHK_OPT_SETTLE:
        return seconds("--settle", arg, &a->o.settle_ms);
    case CHK_OPT_CHECK_DOMAIN:
        a->o.check_domain = arg;
        return 0;
    case CHK_OPT_VERBOSE:
        a->o.verbose = 1;
        return 0;
    case CHK_OPT_JUNIT:
        a->junit = arg;
        return 0;
    case CHK_OPT_NAME:
        a->o.name = arg;
        return 0;
    }
    return -1;
}

/* The token: the file's first line, trimmed. A new string, or NULL with a message. */
static char *read_token(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "flood: check: --token-file: cannot open '%s': %s\n", path,
                strerror(errno));
        return NULL;
    }
    char line[1024] = "";
    char *ok = fgets(line, sizeof(line), f);
    fclose(f);
    char *s = line;
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strcspn(s, "\r\n");
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    s[n] = '\0';
    if (!ok || n == 0 || strcspn(s, " \t") != n) {
        fprintf(stderr, "flood: check: --token-file: no token in '%s'\n", path);
        return NULL;
    }
    return flood_xstrdup(s);
}

/* Every crowd actor a step names must exist. 0, or -1 with a message. */
static int check_actors(const struct scenario *s, const struct crowd_opts *co)
{
    for (size_t i = 0; i < s->n; i++) {
        const struct scenario_step *st = &s->steps[i];
        if (st->instance > co->instances || st->actor > co->actors || st->actor < 1) {
            fprintf(stderr,
                    "flood: check: %s:%d: actor %d/%d is not in the crowd (--instances %d "
                    "--actors %d)\n",
                    s->file, st->line, st->instance, st->actor, co->instances, co->actors);
            return -1;
        }
    }
    return 0;
}

static int check_own(void *ctx, int id, const char *arg)
{
    return own_option(id, arg, ctx);
}

/* --resolve serves the crowd's inbound side and flood's own requests alike. */
static void check_on_inbound(void *ctx, int id, const char *name, const char *arg)
{
    (void)name;
    struct check_args *a = ctx;
    if (id == INBOUND_OPT_RESOLVE)
        push(&a->resolve, &a->n_resolve, arg);
}

int cmd_check(int argc, char **argv)
{
    struct check_args a = {.o = {.settle_ms = 3000}};
    struct crowd_opts co;
    crowd_opts_defaults(&co);
    co.instances = 2;
    co.actors = 2;
    co.listen = "127.0.0.1:0";
    co.quiet = 1;
    struct inbound_opts *io = inbound_opts_new();
    struct cli_spec spec = {.cmd = "check",
                            .own = check_own_options,
                            .own_cb = check_own,
                            .ctx = &a,
                            .crowd = &co,
                            .inbound = io,
                            .on_inbound = check_on_inbound,
                            .usage = check_usage};
    struct flood_err err = {0};
    int rc = cli_parse(&spec, argc, argv);
    if (rc == 1)
        rc = -1; /* --help: exit 0 below */
    if (!rc && !a.o.persona) {
        fprintf(stderr, "flood: check: --persona is required (flood check --help)\n");
        rc = 2;
    }
    if (!rc) {
        char *user = NULL, *host = NULL;
        if (target_parse_spec(a.o.persona, &user, &host, &err) < 0) {
            fprintf(stderr, "flood: check: --persona: %s\n", err.msg);
            rc = 2;
        }
        free(user);
        free(host);
    }
    if (!rc && co.key_type != SIGN_KEY_RSA) {
        /* every server verifies draft-cavage with RSA keys; the Ed25519 dialect step signs
         * as the check's own Ed25519 actor */
        fprintf(stderr, "flood: check: --key-type: the crowd's actors must have RSA keys here "
                        "(the rfc9421-ed25519 step has an Ed25519 actor of its own)\n");
        rc = 2;
    }
    if (!rc && crowd_opts_check(&co, &err)) {
        fprintf(stderr, "flood: check: %s\n", err.msg);
        rc = 2;
    }
    if (!rc && co.proxy) { /* the egress proxy stands beside a crowd a target uses for long */
        fprintf(stderr, "flood: check: --proxy: only flood serve, run and capacity take it\n");
        rc = 2;
    }
    char *token = NULL;
    if (!rc && a.token_file && !(token = read_token(a.token_file)))
        rc = 2;
    struct scenario sc = {0};
    if (!rc) {
        int prc = a.scenario ? scenario_load(a.scenario, &sc, &err)
                             : scenario_parse(scenario_default_text, "default.flood", &sc, &err);
        if (prc < 0) {
            fprintf(stderr, "flood: check: %s\n", err.msg);
            rc = 2;
        } else if (check_actors(&sc, &co) < 0) {
            rc = 2;
        }
    }
    if (rc) {
        scenario_free(&sc);
        free(token);
        free(a.resolve);
        free(a.connect_to);
        inbound_opts_free(io);
        return rc < 0 ? 0 : rc;
    }
    a.o.token = token;
    a.o.http.resolve = a.resolve;
    a.o.http.n_resolve = a.n_resolve;
    a.o.http.connect_to = a.connect_to;
    a.o.http.n_connect_to = a.n_connect_to;
    signal(SIGPIPE, SIG_IGN);

    struct crowd *crowd = NULL;
    struct check *chk = NULL;
    struct inbound *in = NULL;
    struct server *srv = NULL;
    rc = 1;
    crowd = crowd_new(&co, &err);
    if (!crowd)
        goto fail;
    chk = check_new(crowd, &a.o, &err);
    if (!chk)
        goto fail;
    /* the crowd fetches keys only from the persona's host (INTEROP.md, inbound) */
    if (check_persona_host(chk)) {
        inbound_opts_allow_host(io, check_persona_host(chk));
    } else {
        struct url_parts u; /* a persona given as an actor URL (not @user@host) */
        struct flood_err ue;
        if (url_split(a.o.persona, &u, &ue) == 0)
            inbound_opts_allow_host(io, u.host);
    }
    in = inbound_new(crowd, io, NULL, &err);
    if (!in)
        goto fail;
    check_set_inbound(chk, in);
    struct server_hooks hooks = {.ctx = chk,
                                 .inbox = check_inbox_hook,
                                 .object = check_object_hook,
                                 .fault = check_fault_hook,
                                 .other = check_other_hook};
    srv = server_start(crowd, &hooks, &err);
    if (!srv)
        goto fail;
    if (a.o.verbose)
        fprintf(stderr, "check: crowd listening on %s://%s\n", crowd->wf.scheme,
                server_address(srv));

    struct check_report rep;
    check_run(chk, &sc, &rep);
    json_t *card = check_report_json(chk, &sc, &rep);
    int junit_bad = 0;
    if (a.junit && check_junit_write(a.junit, card, &err) < 0) {
        fprintf(stderr, "flood: check: --junit: %s\n", err.msg);
        junit_bad = 1;
    }
    if (a.json) {
        if (!card || json_dumpf(card, stdout,
                                JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12)) < 0)
            fprintf(stderr, "flood: check: cannot write the JSON report\n");
        fputc('\n', stdout);
    } else {
        printf("flood check: %s against %s\n", sc.file, a.o.persona);
        if (!check_persona_ok(chk))
            printf("persona not discovered: %s\n", check_persona_error(chk));
        check_print_table(stdout, &rep);
    }
    fflush(stdout);
    /* a persona that cannot be discovered fails the check even when every step skipped */
    rc = rep.counts[CHECK_FAIL] || !check_persona_ok(chk) || junit_bad ? 1 : 0;
    json_decref(card);
    check_report_free(&rep);
    server_stop(srv);
    inbound_free(in, 1000);
    check_free(chk);
    crowd_free(crowd);
    goto done;
fail:
    fprintf(stderr, "flood: check: %s\n", err.msg);
    server_stop(srv);
    if (in)
        inbound_free(in, 0);
    check_free(chk);
    crowd_free(crowd);
done:
    scenario_free(&sc);
    free(token);
    free(a.resolve);
    free(a.connect_to);
    inbound_opts_free(io);
    return rc;
}
