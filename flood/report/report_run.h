/* flood/report/report_run.h: a run folder read for the reports (report.c): run.json checked to be
 * a flood run, its per-second series as columns of doubles, and its percentile curves from
 * the .hgrm files (or run.json's percentiles when a file is missing). Internal to the
 * report files. */
#ifndef FLOOD_REPORT_RUN_H
#define FLOOD_REPORT_RUN_H

#include <jansson.h>
#include <stddef.h>

#include "sign/err.h"

/* A curve (percentile fraction, value in ms), from an .hgrm file or run.json. */
struct report_curve {
    double *p, *v;
    size_t n;
};

/* The per-second columns of run.json's series, NAN where an entry lacks the key. */
struct report_cols {
    size_t n;
    double *tmid, *tend; /* the middle and the end of each second, for lines */
    double *t, *offered, *sent, *completed, *ok, *auth, *r429, *r503, *other, *shed;
    double *p50, *p99, *max, *svc_p50, *svc_p99, *lag_p99, *in_flight;
    double *steal; /* the host's steal of flood's CPUs each second, ms */
};

struct report_run {
    char *dir;
    json_t *root; /* owned */
    struct report_cols c;
    struct report_curve latency, service, lag, f2a;
};

/* o[key] as a number (integer or real), NAN when missing or not a number. */
double report_jnum(const json_t *o, const char *key);
/* o[key] as a string (borrowed), NULL when missing or not a string. */
const char *report_jstr(const json_t *o, const char *key);
/* 1 when any entry of the series array has key. */
int report_has_key(const json_t *series, const char *key);

/* Read run_dir into r (everything owned by r: report_run_free). 0, or -1 and err as
 * report_load_run. */
int report_run_load(struct report_run *r, const char *dir, struct flood_err *err) FLOOD_WUR;
void report_run_free(struct report_run *r);

#endif
