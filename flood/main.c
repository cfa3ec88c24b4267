/* flood: a fake fediverse in one process. main() only dispatches to a command. */
#include <malloc.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "flood/cmd/cmd.h"

struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *what;
};

static const struct command commands[] = {
    {"serve", cmd_serve, "answer as the crowd of fake instances"},
    {"actors", cmd_actors, "print every crowd actor as acct:NAME@HOST"},
    {"run", cmd_run, "the crowd plus the sender: flood a target's inbox and measure it"},
    {"capacity", cmd_capacity, "the highest rate a target sustains: steps, then a verdict"},
    {"sign", cmd_sign, "print the headers that sign a request"},
    {"verify", cmd_verify, "verify a signed request"},
    {"fetch", cmd_fetch, "a signed GET as a crowd actor (authorized fetch)"},
    {"check", cmd_check, "federation interop checks against a target"},
    {"report", cmd_report, "write report.html for a run folder"},
    {"compare", cmd_compare, "compare several runs"},
    {"merge", cmd_merge, "merge the shards of one run (flood run --shard) into one result"},
    {"matrix", cmd_matrix, "flood check cards of several targets side by side"},
    {"presets", cmd_presets, "list the presets: known backpressure bug shapes to run"},
    {"options", cmd_options, NULL}, /* not listed: every option's row, for the docs' test */
};

static void usage(FILE *f)
{
    fprintf(f, "usage: flood COMMAND [options]   (flood COMMAND --help for its options)\n\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (commands[i].what)
            fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].what);
    fprintf(f, "\nflood --version prints the version. Exit codes: 0 ok, 1 failure, 2 usage, 3 a "
               "threshold\n"
               "(--expect) failed.\n");
}

int main(int argc, char **argv)
{
    /* Bodies are made on the signer threads and freed on the event loops: with glibc's
     * defaults a thread's heap grows and is trimmed back every few hundred requests, an
     * mprotect each time (strace -c: 2,335 for 6,000 requests). Grow in 16 MB steps and
     * keep what was grown. */
    mallopt(M_TOP_PAD, 16 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("flood %s\n", FLOOD_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "flood: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
