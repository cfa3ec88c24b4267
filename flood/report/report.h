/* flood/report/report.h: report.html, one self-contained page (inline CSS and SVG, no script, no
 * network) drawn from a run folder's run.json and .hgrm files, and the overlay page of
 * `flood compare --html`. */
#ifndef FLOOD_REPORT_H
#define FLOOD_REPORT_H

#include <jansson.h>
#include <stdio.h>
#include <stddef.h>

#include "sign/err.h"

/* Read RUN_DIR/run.json (and the .hgrm files beside it when present) and write
 * RUN_DIR/report.html (through a temporary file renamed into place). Returns 0, or -1 and
 * err: FLOOD_EIO when a file cannot be read or written, FLOOD_EINVAL when run.json is not
 * JSON or not a flood run (no "totals" or "series"). */
int report_write(const char *run_dir, struct flood_err *err) FLOOD_WUR;

/* Write to out_file one page overlaying the runs in run_dirs (n of them, n >= 1): their
 * latency percentile curves, achieved rate and p99 per second, and the summary table.
 * Returns 0, or -1 and err as report_write. */
int report_compare_write(const char *out_file, char *const *run_dirs, size_t n,
                         struct flood_err *err) FLOOD_WUR;

/* RUN_DIR/run.json parsed and checked to be a flood run (an object with "totals" and
 * "series"): a new reference (json_decref), or NULL and err. */
/* The head of a report page (doctype, title, the reports' stylesheet, no network) up to
 * and with <body>, on f. */
void report_page_head(FILE *f, const char *title);

json_t *report_load_run(const char *run_dir, struct flood_err *err) FLOOD_WUR;

#endif
