/* flood/cmd/cli.h: the command line shared by the commands that run a crowd (serve, actors,
 * run, check, fetch): the command's own options, the crowd's (ids 1000+) and the inbound
 * side's (ids 2000+) in one getopt_long pass, with one way of reporting mistakes. */
#ifndef FLOOD_CLI_H
#define FLOOD_CLI_H

#include <getopt.h>
#include <stdio.h>

#include "flood/crowd/crowd.h"
#include "flood/inbound/inbound.h"

struct cli_spec {
    const char *cmd;          /* "run": messages read "flood: run: ..." */
    const struct option *own; /* the command's own options (ids below 1000), zero-terminated */
    /* Apply one of the command's own options. 0, or -1 after printing why. */
    int (*own_cb)(void *ctx, int id, const char *arg);
    void *ctx;
    struct crowd_opts *crowd;     /* NULL: the command takes no crowd options */
    struct inbound_opts *inbound; /* NULL: no inbound options */
    /* Optional: told of every inbound option applied (its long name and argument). */
    void (*on_inbound)(void *ctx, int id, const char *name, const char *arg);
    void (*usage)(FILE *f);
    int operands; /* how many operands may follow the options (0 or more) */
};

/* Parse argv (argv[0] is the command's name). Returns 0 with optind at the first operand,
 * 1 after --help (usage printed on stdout), or 2 after a usage error (printed on stderr as
 * "flood: CMD: ..."). */
int cli_parse(const struct cli_spec *spec, int argc, char **argv);

#endif
