/* flood/cmd/cmd_check.c: `flood check`, federation interop as a report card. Starts the crowd
 * in this process (as `flood serve` does), runs a scenario against one persona of the
 * target and prints one row a step. Exit 0 when no step failed, 1 when one did, 2 for a
 * usage error (a bad option, a scenario that does not parse). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flood/check/check.h"
#include "flood/check/check_card.h"
#include "flood/core/opt.h"
#include "flood/cmd/cmd.h"
#include "flood/crowd/crowd.h"
#include "flood/inbound/inbound.h"
#include "flood/crowd/server.h"
#include "flood/send/target.h"
#include "flood/core/url.h"

struct check_args {
    struct check_opts o;
    char **connect_to;
    size_t n_connect_to;
    const char *token_file, *scenario, *junit;
    int json;
};

#define CA(m) OPT_AT(struct check_args, m)

const struct opt check_opt_rows[] = {
    {"persona", OPT_STRING, "P", CA(o.persona),
     .help = "acct:NAME@HOST (WebFinger) or the persona's actor URL"},
    {"token-file", OPT_PATH, "F", CA(token_file),
     .help = "the persona's Mastodon API bearer token (api steps, and telling 'deferred' from "
             "'processed'); without it they skip"},
    {"scenario", OPT_STRING, "FILE", CA(scenario),
     .help = "the steps to run (default: the built-in default scenario, "
             "fixtures/scenarios/default.flood)"},
    {"json", OPT_FLAG, CA(json),
     .help = "the report as JSON on stdout instead of the table (the card that flood matrix "
             "puts side by side)"},
    {"junit", OPT_STRING, "FILE", CA(junit),
     .help = "also write the report as JUnit XML to FILE, for CI: a <failure> a failed step, "
             "<skipped> a skipped or unsupported one; deferred passes with a note"},
    {"name", OPT_STRING, "NAME", CA(o.name),
     .help = "the target's name in the card, the matrix and JUnit (default: the persona)"},
    {"settle", OPT_DURATION_MS, "S", CA(o.settle_ms), .lo = 0.001, .hi = 3600,
     .bare = GRAM_BARE_SECONDS, .def = "3",
     .help = "how long a refused-expected request answered 2xx is watched for an effect"},
    {"target-http", OPT_FLAG, CA(o.target_http),
     .help = "WebFinger and NodeInfo over plain http (lab targets)"},
    {"connect-to", OPT_STRINGS, "H:P:H2:P2", CA(connect_to),
     .n_off = offsetof(struct check_args, n_connect_to),
     .help = "connect to H2:P2 for H:P (as curl; repeatable)"},
    {"insecure", OPT_FLAG, CA(o.http.insecure),
     .help = "do not verify the target's TLS certificate"},
    {"cacert", OPT_PATH, "FILE", CA(o.http.cacert), .help = "trust the CAs in FILE"},
    {"timeout", OPT_DURATION_MS, "S", CA(o.http.timeout_ms), .lo = 0.001, .hi = 3600,
     .bare = GRAM_BARE_SECONDS, .def = "10", .help = "per-request timeout"},
    {"check-domain", OPT_STRING, "T", CA(o.check_domain), .def = "flood-check%d.test",
     .help = "host template of the check's own two actors (key rotation, Ed25519): the target "
             "must reach flood-check1.test at the crowd's address"},
    {"verbose", OPT_FLAG, CA(o.verbose), .help = "progress lines on stderr"},
    {0},
};

static const char check_usage[] =
    "usage: flood check --persona acct:NAME@HOST|URL [options]\n"
    "Run an interop scenario against one account of a target server, with the crowd\n"
    "serving in this process, and print one row a step: pass, fail (expected, got),\n"
    "skip (why), deferred (a bad request answered 2xx with no visible effect) or\n"
    "unsupported (a signature dialect the target refuses). docs/INTEROP.md has the\n"
    "steps and the scenario language.\n";

static const char check_tail[] =
    "The crowd defaults to --instances 2 --actors 2 here. The persona's host is added\n"
    "to --allow-host; --resolve serves flood's own requests too. Exit codes: 0 no step\n"
    "failed, 1 a step failed (or the --junit FILE could not be written), 2 usage.\n";

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

/* What cmd_check reads before anything runs: the options, the token, the scenario. */
struct check_setup {
    struct check_args a;
    struct crowd_opts co;
    struct inbound_opts *io;
    struct scenario sc;
    char *token;
};

/* The checks that need no network. 0, or 2 with the usage error printed. */
static int check_validate(struct check_setup *cs)
{
    struct check_args *a = &cs->a;
    struct flood_err err = {0};
    if (!a->o.persona) {
        fprintf(stderr, "flood: check: --persona is required (flood check --help)\n");
        return 2;
    }
    char *user = NULL, *host = NULL;
    int bad = target_parse_spec(a->o.persona, &user, &host, &err) < 0;
    free(user);
    free(host);
    if (bad) {
        fprintf(stderr, "flood: check: --persona: %s\n", err.msg);
        return 2;
    }
    if (cs->co.key_type != SIGN_KEY_RSA) {
        /* every server verifies draft-cavage with RSA keys; the Ed25519 dialect step signs
         * as the check's own Ed25519 actor */
        fprintf(stderr, "flood: check: --key-type: the crowd's actors must have RSA keys here "
                        "(the rfc9421-ed25519 step has an Ed25519 actor of its own)\n");
        return 2;
    }
    if (crowd_opts_check(&cs->co, &err)) {
        fprintf(stderr, "flood: check: %s\n", err.msg);
        return 2;
    }
    if (a->token_file && !(cs->token = read_token(a->token_file)))
        return 2;
    int prc = a->scenario ? scenario_load(a->scenario, &cs->sc, &err)
                          : scenario_parse(scenario_default_text, "default.flood", &cs->sc, &err);
    if (prc < 0) {
        fprintf(stderr, "flood: check: %s\n", err.msg);
        return 2;
    }
    return check_actors(&cs->sc, &cs->co) < 0 ? 2 : 0;
}

/* Parse and check argv into cs. 0, 1 after --help, 2 on a usage error (printed). */
static int check_parse(struct check_setup *cs, int argc, char **argv)
{
    crowd_opts_defaults(&cs->co);
    cs->co.instances = 2;
    cs->co.actors = 2;
    cs->co.listen = "127.0.0.1:0";
    cs->co.quiet = 1;
    cs->io = inbound_opts_new();
    struct opt_spec spec = {
        .cmd = "check",
        .mask = OPT_CMD_CHECK,
        .sets = {{check_opt_rows, &cs->a}, {crowd_opt_rows, &cs->co}, {inbound_opt_rows, cs->io}},
        .n_sets = 3,
        .usage = check_usage,
        .tail = check_tail};
    struct flood_err err = {0};
    struct opt_spec own = {.sets = {{check_opt_rows, &cs->a}}, .n_sets = 1};
    if (opt_defaults(&own, &err)) {
        fprintf(stderr, "flood: check: %s\n", err.msg);
        return 2;
    }
    int rc = opt_parse(&spec, argc, argv);
    return rc ? rc : check_validate(cs);
}

/* The crowd, the inbound side and the server, then the scenario: the card printed. Returns
 * the exit code. */
static int check_exec(struct check_setup *cs)
{
    struct check_args *a = &cs->a;
    struct flood_err err = {0};
    a->o.token = cs->token;
    /* --resolve serves the crowd's inbound side and flood's own requests alike */
    a->o.http.resolve = inbound_opts_resolve(cs->io, &a->o.http.n_resolve);
    a->o.http.connect_to = (const char *const *)a->connect_to;
    a->o.http.n_connect_to = a->n_connect_to;
    signal(SIGPIPE, SIG_IGN);

    struct check *chk = NULL;
    struct inbound *in = NULL;
    struct server *srv = NULL;
    int rc = 1;
    struct crowd *crowd = crowd_new(&cs->co, &err);
    if (!crowd)
        goto fail;
    chk = check_new(crowd, &a->o, &err);
    if (!chk)
        goto fail;
    /* the crowd fetches keys only from the persona's host (INTEROP.md, inbound) */
    if (check_persona_host(chk)) {
        inbound_opts_allow_host(cs->io, check_persona_host(chk));
    } else {
        struct url_parts u; /* a persona given as an actor URL (not @user@host) */
        struct flood_err ue;
        if (url_split(a->o.persona, &u, &ue) == 0)
            inbound_opts_allow_host(cs->io, u.host);
    }
    in = inbound_new(crowd, cs->io, NULL, &err);
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
    if (a->o.verbose)
        fprintf(stderr, "check: crowd listening on %s://%s\n", crowd->wf.scheme,
                server_address(srv));

    struct check_report rep;
    check_run(chk, &cs->sc, &rep);
    json_t *card = check_report_json(chk, &cs->sc, &rep);
    int junit_bad = 0;
    if (a->junit && check_junit_write(a->junit, card, &err) < 0) {
        fprintf(stderr, "flood: check: --junit: %s\n", err.msg);
        junit_bad = 1;
    }
    if (a->json) {
        if (!card || json_dumpf(card, stdout,
                                JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12)) < 0)
            fprintf(stderr, "flood: check: cannot write the JSON report\n");
        fputc('\n', stdout);
    } else {
        printf("flood check: %s against %s\n", cs->sc.file, a->o.persona);
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
    return rc;
fail:
    fprintf(stderr, "flood: check: %s\n", err.msg);
    server_stop(srv);
    if (in)
        inbound_free(in, 0);
    check_free(chk);
    crowd_free(crowd);
    return rc;
}

int cmd_check(int argc, char **argv)
{
    struct check_setup cs = {0};
    int rc = check_parse(&cs, argc, argv);
    if (rc == 0)
        rc = check_exec(&cs);
    else if (rc == 1)
        rc = 0; /* --help */
    scenario_free(&cs.sc);
    free(cs.token);
    opt_strs_free(cs.a.connect_to, cs.a.n_connect_to);
    inbound_opts_free(cs.io);
    return rc;
}
