/* flood/cmd/cmd_merge.c: `flood merge OUT DIR...`: the shards' results as one run's
 * (flood/report/merge.c; docs/SHARDS.md). */
#include <stdio.h>
#include <string.h>

#include "flood/cmd/cmd.h"
#include "flood/report/merge.h"

static const char merge_help[] =
    "usage: flood merge OUT DIR...\n"
    "Merge the result folders of the shards of one run (flood run --shard K/N --start-at T)\n"
    "into OUT: run.json, the .hgrm files, summary.md and report.html of the whole run.\n"
    "Counters are summed, histograms merged exactly, the per-second series aligned on\n"
    "wall-clock seconds, Follows and Accepts joined across shards (an Accept may reach\n"
    "another shard than its Follow), conservation checked across shards. Refused: a folder\n"
    "without run.json or its shard record, one from another run, a shard twice or missing.\n"
    "Exit codes: 0 merged, 1 refused or not conserved, 2 usage.\n";

int cmd_merge(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(merge_help, stdout);
        return 0;
    }
    for (int i = 1; i < argc; i++)
        if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "flood: merge: unknown option '%s' (flood merge --help)\n", argv[i]);
            return 2;
        }
    if (argc < 3) {
        fputs(merge_help, stderr);
        return 2;
    }
    struct flood_err err = {0};
    if (merge_run(argv[1], argv + 2, (size_t)(argc - 2), stdout, &err)) {
        fprintf(stderr, "flood: %s\n", err.msg);
        return 1;
    }
    printf("results: %s\n", argv[1]);
    return 0;
}
