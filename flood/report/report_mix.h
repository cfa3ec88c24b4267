/* flood/report/report_mix.h: report.html's mix section: each kind asked and sent, what was
 * still sent in place of another and why, the refollows' answers (run.json's "mix"). */
#ifndef FLOOD_REPORT_MIX_H
#define FLOOD_REPORT_MIX_H

#include <stdio.h>

#include "flood/report/report_run.h"

/* The section "Mix: asked and sent" (id "mix") on f; nothing when run.json has no "mix". */
void report_mix_section(FILE *f, const struct report_run *r);

#endif
