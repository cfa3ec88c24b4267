/* flood/report/report_fetches.h: report.html's part about what the target fetched back
 * from the crowd: a red box when it fetched nothing (run.json's crowd_unreachable), a
 * chart of fetches per second by kind beside the sends, and a table of each kind's
 * figures, amplification and the top repeated URLs. Reads run.json only. */
#ifndef FLOOD_REPORT_FETCHES_H
#define FLOOD_REPORT_FETCHES_H

#include <stdio.h>

#include "flood/report/report_run.h"

/* The red box of a run flagged crowd_unreachable; nothing otherwise. */
void report_unreachable_box(FILE *f, const struct report_run *r);
/* The section "What the target fetched" (nothing when run.json has no "fetches"). */
void report_fetches_section(FILE *f, const struct report_run *r);
/* The section "Egress" (--proxy): what the target asked the proxy for, what was refused by
 * host and by reason, malformed input, the busiest instances, the conservation line
 * (nothing when run.json has no "egress"). */
void report_egress_section(FILE *f, const struct report_run *r);

#endif
