/* flood/report/report_tqueue.h: report.html's part about the target's own queue
 * (--target-queue): each source's gauges charted per second (a missing reading is a gap,
 * never a zero), and a table of the sources: readings, missing ones and why, each gauge's
 * role, last and largest value. Reads run.json only. */
#ifndef FLOOD_REPORT_TQUEUE_H
#define FLOOD_REPORT_TQUEUE_H

#include <stdio.h>

#include "flood/report/report_run.h"

/* The section "The target's queue" (nothing when run.json has no "target_queue"). */
void report_tqueue_section(FILE *f, const struct report_run *r);

#endif
