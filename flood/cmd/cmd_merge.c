/* flood/cmd/cmd_merge.c: `flood merge OUT DIR...`: the shards' results as one run's
 * (flood/report/merge.c; docs/SHARDS.md). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "flood/cmd/cmd.h"
#include "flood/core/opt.h"
#include "flood/report/merge.h"

static const char merge_usage[] =
    "usage: flood merge OUT DIR...\n"
    "Merge the result folders of the shards of one run (flood run --shard K/N --start-at T)\n"
    "into OUT: run.json, the .hgrm files, summary.md and report.html of the whole run.\n"
    "Counters are summed, histograms merged exactly, the per-second series aligned on\n"
    "wall-clock seconds, Follows and Accepts joined across shards (an Accept may reach\n"
    "another shard than its Follow), conservation checked across shards. Refused: a folder\n"
    "without run.json or its shard record, one from another run, a shard twice or missing.\n";

static const char merge_tail[] = "Exit codes: 0 merged, 1 refused or not conserved, 2 usage.\n";

/* flood merge takes no option but --help. */
const struct opt merge_opt_rows[] = {{0}};

int cmd_merge(int argc, char **argv)
{
    struct opt_spec spec = {.cmd = "merge",
                            .mask = OPT_CMD_MERGE,
                            .sets = {{merge_opt_rows, NULL}},
                            .n_sets = 1,
                            .usage = merge_usage,
                            .tail = merge_tail,
                            .operands = -1};
    int rc = opt_parse(&spec, argc, argv);
    if (rc)
        return rc == 1 ? 0 : 2;
    if (argc - optind < 2) {
        opt_help(&spec, stderr);
        return 2;
    }
    struct flood_err err = {0};
    if (merge_run(argv[optind], argv + optind + 1, (size_t)(argc - optind - 1), stdout, &err)) {
        fprintf(stderr, "flood: %s\n", err.msg);
        return 1;
    }
    printf("results: %s\n", argv[optind]);
    return 0;
}
