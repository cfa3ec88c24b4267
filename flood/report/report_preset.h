/* flood/report/report_preset.h: report.html's first section for a run made with --preset:
 * the preset's name and file, what it reproduces, and its watched figures with their values
 * (run.json's "preset"). Internal to the report files. */
#ifndef FLOOD_REPORT_PRESET_H
#define FLOOD_REPORT_PRESET_H

#include <stdio.h>

#include "flood/report/report_run.h"

/* The section "Preset NAME" (id "preset") on f; nothing when run.json has no "preset". */
void report_preset_section(FILE *f, const struct report_run *r);

#endif
