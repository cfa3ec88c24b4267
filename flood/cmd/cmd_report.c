/* flood/cmd/cmd_report.c: `flood report RUN_DIR...`, report.html for run folders. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "flood/cmd/cmd.h"
#include "flood/core/opt.h"
#include "flood/report/report.h"

static const char report_usage[] =
    "usage: flood report RUN_DIR...\n"
    "Write RUN_DIR/report.html from the run.json and .hgrm files that `flood run\n"
    "--out RUN_DIR` wrote: one self-contained page (inline SVG, no script, no\n"
    "network) with the offered and achieved rate, outcomes per second, latency over\n"
    "time, the percentile distribution, requests in flight, inbound deliveries and\n"
    "Follow-to-Accept latency, the faults in force, the conservation line and the\n"
    "configuration.\n";

static const char report_tail[] =
    "Exit codes: 0 every report written, 1 a run folder could not be read or its\n"
    "report written, 2 usage.\n";

/* flood report takes no option but --help. */
const struct opt report_opt_rows[] = {{0}};

int cmd_report(int argc, char **argv)
{
    struct opt_spec spec = {.cmd = "report",
                            .mask = OPT_CMD_REPORT,
                            .sets = {{report_opt_rows, NULL}},
                            .n_sets = 1,
                            .usage = report_usage,
                            .tail = report_tail,
                            .operands = -1};
    int prc = opt_parse(&spec, argc, argv);
    if (prc)
        return prc == 1 ? 0 : 2;
    if (optind >= argc) {
        fprintf(stderr, "flood: report: a run folder is needed\n");
        opt_help(&spec, stderr);
        return 2;
    }
    int rc = 0;
    for (int i = optind; i < argc; i++) {
        struct flood_err err = {0};
        if (report_write(argv[i], &err)) {
            fprintf(stderr, "flood: %s\n", err.msg);
            rc = 1;
        } else {
            printf("report: %s/report.html\n", argv[i]);
        }
    }
    return rc;
}
