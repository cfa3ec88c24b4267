/* flood/cmd/cmd_options.c: `flood options`, every command's options as its rows declare them:
 * the list the man page and README.md are checked against (tests/integration/options.sh).
 * Not listed by flood --help: a tool for the docs, not for runs. */
#include <stdio.h>
#include <string.h>

#include "flood/cmd/cmd.h"
#include "flood/cmd/run_opts.h"
#include "flood/core/opt.h"

/* One set of rows of a command, and what the listing calls it. */
struct cmd_set {
    const char *what; /* "own", "run" (flood run's, passed on), "crowd", "inbound" */
    const struct opt *rows;
};

static const struct cmd_rows {
    const char *name;
    unsigned mask;
    struct cmd_set sets[4];
} cmd_rows[] = {
    {"serve",
     OPT_CMD_SERVE,
     {{"own", serve_opt_rows}, {"crowd", crowd_opt_rows}, {"inbound", inbound_opt_rows}}},
    {"actors", OPT_CMD_ACTORS, {{"crowd", crowd_opt_rows}}},
    {"run",
     OPT_CMD_RUN,
     {{"own", run_opt_rows}, {"crowd", crowd_opt_rows}, {"inbound", inbound_opt_rows}}},
    {"capacity",
     OPT_CMD_CAPACITY,
     {{"own", capacity_opt_rows},
      {"run", run_opt_rows},
      {"crowd", crowd_opt_rows},
      {"inbound", inbound_opt_rows}}},
    {"sign", OPT_CMD_SIGN, {{"own", sign_opt_rows}}},
    {"verify", OPT_CMD_VERIFY, {{"own", verify_opt_rows}}},
    {"fetch", OPT_CMD_FETCH, {{"own", fetch_opt_rows}, {"crowd", crowd_opt_rows}}},
    {"check",
     OPT_CMD_CHECK,
     {{"own", check_opt_rows}, {"crowd", crowd_opt_rows}, {"inbound", inbound_opt_rows}}},
    {"report", OPT_CMD_REPORT, {{"own", report_opt_rows}}},
    {"compare", OPT_CMD_COMPARE, {{"own", compare_opt_rows}}},
    {"merge", OPT_CMD_MERGE, {{"own", merge_opt_rows}}},
    {"matrix", OPT_CMD_MATRIX, {{"own", matrix_opt_rows}}},
    {"presets", OPT_CMD_PRESETS, {{"own", presets_opt_rows}}},
};

static const char options_help[] =
    "usage: flood options\n"
    "Every option of every command as its table declares it, one a line: COMMAND SET\n"
    "--NAME [ARG], then a tab and the default when the row has one; SET being own, run\n"
    "(flood run's, passed on by flood capacity), crowd or inbound. Options a command takes\n"
    "but --help does not list are left out; so are those a set shadows with a row of the\n"
    "same name.\n";

int cmd_options(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        fputs(options_help, strcmp(argv[1], "--help") && strcmp(argv[1], "-h") ? stderr : stdout);
        return strcmp(argv[1], "--help") && strcmp(argv[1], "-h") ? 2 : 0;
    }
    for (size_t c = 0; c < sizeof(cmd_rows) / sizeof(cmd_rows[0]); c++) {
        const struct cmd_rows *co = &cmd_rows[c];
        for (size_t s = 0; s < 4 && co->sets[s].rows; s++)
            for (const struct opt *r = co->sets[s].rows; r->name || r->help; r++) {
                if (!opt_takes(r, co->mask) || (r->flags & OPT_F_HIDDEN))
                    continue;
                int shadow = 0; /* an earlier set's row of the same name wins */
                for (size_t e = 0; e < s && !shadow; e++) {
                    const struct opt *o = opt_find(co->sets[e].rows, r->name);
                    shadow = o && opt_takes(o, co->mask);
                }
                if (!shadow)
                    printf("%s %s --%s%s%s%s%s\n", co->name, co->sets[s].what, r->name,
                           r->arg ? " " : "", r->arg ? r->arg : "", r->def ? "\t" : "",
                           r->def ? r->def : "");
            }
    }
    return fflush(stdout) ? 1 : 0;
}
