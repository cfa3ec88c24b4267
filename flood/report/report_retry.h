/* flood/report/report_retry.h: the target's retry curve (run.json inbound.retry_curve) and
 * fan-out (inbound.fan_out), as lines of summary.md and as a section of report.html. Reads
 * run.json only; nothing when the run has neither. */
#ifndef FLOOD_REPORT_RETRY_H
#define FLOOD_REPORT_RETRY_H

#include <jansson.h>
#include <stdio.h>

/* summary.md's lines for run.json's "inbound" object (may be NULL). */
void report_retry_summary(FILE *f, const json_t *inbound);

/* report.html's section "Retries and fan-out" for run.json's root. */
void report_retry_section(FILE *f, const json_t *root);

#endif
