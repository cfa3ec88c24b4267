/* flood/cmd/cmd_report.c: `flood report RUN_DIR...`, report.html for run folders. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "flood/cmd/cmd.h"
#include "flood/report/report.h"

static void report_usage(FILE *f)
{
    fprintf(f, "usage: flood report RUN_DIR...\n"
               "Write RUN_DIR/report.html from the run.json and .hgrm files that `flood run\n"
               "--out RUN_DIR` wrote: one self-contained page (inline SVG, no script, no\n"
               "network) with the offered and achieved rate, outcomes per second, latency over\n"
               "time, the percentile distribution, requests in flight, inbound deliveries and\n"
               "Follow-to-Accept latency, the faults in force, the conservation line and the\n"
               "configuration.\n\n"
               "  -h, --help           this help\n\n"
               "Exit codes: 0 every report written, 1 a run folder could not be read or its\n"
               "report written, 2 usage.\n");
}

int cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int id;
    optind = 1;
    opterr = 0;
    while ((id = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (id == 'h') {
            report_usage(stdout);
            return 0;
        }
        fprintf(stderr, "flood: report: unknown option '%s'\n", argv[optind - 1]);
        report_usage(stderr);
        return 2;
    }
    if (optind >= argc) {
        fprintf(stderr, "flood: report: a run folder is needed\n");
        report_usage(stderr);
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
