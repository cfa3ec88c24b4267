/* flood/cmd/cli.c: one getopt_long pass over a command's own, the crowd's and the inbound
 * side's options. */
#include "flood/cmd/cli.h"

#include <stdlib.h>

static const char *name_of(const struct option *opts, int id)
{
    for (; opts && opts->name; opts++)
        if (opts->val == id)
            return opts->name;
    return "?";
}

int cli_parse(const struct cli_spec *spec, int argc, char **argv)
{
    /* The command's own entries come first, so one of them shadows a crowd or inbound
     * option of the same name (flood run's --resolve, which it passes on itself). */
    struct option *tmp = crowd_merge_options(spec->own, spec->crowd ? crowd_options : NULL);
    struct option *all = crowd_merge_options(tmp, spec->inbound ? inbound_options : NULL);
    free(tmp);
    struct flood_err err = {0};
    int rc = 0, id;
    optind = 1;
    opterr = 0;
    while (!rc && (id = getopt_long(argc, argv, ":h", all, NULL)) != -1) {
        if (id == 'h') {
            spec->usage(stdout);
            rc = 1;
        } else if (id == '?' || id == ':') {
            fprintf(stderr, "flood: %s: %s '%s' (flood %s --help)\n", spec->cmd,
                    id == ':' ? "option needs a value" : "unknown option", argv[optind - 1],
                    spec->cmd);
            rc = 2;
        } else if (id >= 2000) {
            if (inbound_opts_set(spec->inbound, id, optarg, &err)) {
                fprintf(stderr, "flood: %s: %s\n", spec->cmd, err.msg);
                rc = 2;
            } else if (spec->on_inbound) {
                spec->on_inbound(spec->ctx, id, name_of(inbound_options, id), optarg);
            }
        } else if (id >= 1000) {
            if (crowd_opts_set(spec->crowd, id, optarg, &err)) {
                fprintf(stderr, "flood: %s: %s\n", spec->cmd, err.msg);
                rc = 2;
            }
        } else if (spec->own_cb(spec->ctx, id, optarg)) {
            rc = 2;
        }
    }
    free(all);
    if (!rc && argc - optind > spec->operands) {
        fprintf(stderr, "flood: %s: unexpected argument '%s'\n", spec->cmd,
                argv[optind + spec->operands]);
        rc = 2;
    }
    return rc;
}
