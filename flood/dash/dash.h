/* flood/dash/dash.h: the live dashboard (flood run --dashboard ADDR:PORT): a listener of its
 * own (libmicrohttpd, a thread per connection, loopback by default) serving one page with
 * the charts of report.html drawn from a Server-Sent Events stream of the per-second series
 * (the rows run.json's "series" gets, results_series_row), and a small JSON API that steers
 * the run: GET /api/state, POST /api/rate {"rate": R, "ramp_s": S}, /api/pause,
 * /api/resume, /api/stop, /api/fault {"instance": "flood3", "spec": "delay=2s", "on": true}.
 * Without a token only loopback clients are served; with one, every request must carry it
 * (Authorization: Bearer TOKEN, or ?token=TOKEN).
 *
 * Threads: the sender's event loop owns the stats; once a second it hands the dashboard a
 * copy of each second it closed (dash_push) into a bounded ring under the dashboard's lock;
 * stream readers wait on a condition variable. Steering goes to the loop through send/'s
 * steer queue (only the loop changes the schedule); faults are switched on the inbound
 * side's atomic switches directly.
 *
 * The room flood/dash/: the dashboard's server (dash.c), its API (dash_api.c) and its page
 * (dash_page.c). It calls report/ (the series rows, the colours), inbound/ (faults),
 * send/ (steering), measure/, core/ and sign/; only the commands call it. */
#ifndef FLOOD_DASH_H
#define FLOOD_DASH_H

#include <stdint.h>

#include "flood/inbound/inbound.h"
#include "flood/measure/stats.h"
#include "flood/send/steer.h"
#include "sign/err.h"

#define DASH_RING 4096 /* seconds kept for (re)connecting pages; older ones are dropped */

struct dash_opts {
    const char *addr;    /* "127.0.0.1:8090", "[::1]:0" */
    const char *token;   /* --dashboard-token, or NULL */
    const char *title;   /* shown on the page (borrowed, copied) */
    struct steer *steer; /* borrowed, may be NULL (no rate controls: flood serve) */
    struct inbound *in;  /* borrowed, may be NULL (no fault switches) */
};

struct dash;

/* Listen and serve. NULL and err ("dashboard: cannot listen on 'x': ..."). */
struct dash *dash_start(const struct dash_opts *o, struct flood_err *err) FLOOD_WUR;
/* Check an ADDR:PORT without listening. 0 or -1 and err. */
int dash_check_addr(const char *addr, struct flood_err *err) FLOOD_WUR;
/* "127.0.0.1:8090" as bound (port 0 resolved). */
const char *dash_address(const struct dash *d);
/* The run's time 0 (CLOCK_MONOTONIC ns): fault switches are recorded against it. */
void dash_set_start(struct dash *d, int64_t mono0_ns);
/* The owner of st (its one writer): copy the seconds st closed since the last call. */
void dash_push(struct dash *d, const struct stats *st);
/* Rows of a crowd without a sender (flood serve): one second's figures as a JSON object
 * (a new reference; stolen). */
void dash_push_json(struct dash *d, json_t *row);
/* The run is over: the page says so and links to report_path (served at /report.html). */
void dash_finish(struct dash *d, const char *report_path);
/* Stop the listener (streams end) and free. NULL is fine. */
void dash_stop(struct dash *d);

#endif
