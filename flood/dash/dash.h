/* flood/dash/dash.h: the live dashboard (flood run --dashboard ADDR:PORT): a listener of its
 * own (libmicrohttpd, a thread per connection, loopback by default) serving one page with
 * the charts of report.html drawn from a Server-Sent Events stream of the per-second series
 * (the rows run.json's "series" gets, results_series_row), and a small JSON API that steers
 * the run: GET /api/state, POST /api/rate {"rate": R, "ramp_s": S}, /api/pause,
 * /api/resume, /api/stop, /api/fault {"instance": "flood3", "spec": "delay=2s", "on": true}.
 * The stream's first event, "hello", names this listener ({"instance", "title", "crowd"}):
 * flood capacity's steps bind the same address in turn, and a page that finds another
 * instance there (its /events?inst=ID, or /api/state's "instance") starts over from the
 * new run's second 0. Without a token only loopback clients are served; with one, every request
 * must carry it (Authorization: Bearer TOKEN, or ?token=TOKEN).
 *
 * Threads: the sender's event loop owns the stats; once a second it hands the dashboard
 * each second it closed (dash_push) as JSON text, appended under the dashboard's lock to
 * an unnamed file in dash_opts.rows_dir (the run's state folder), so that a page opened
 * late gets the whole run and an hour's rows cost the resident set 8 bytes a second (their
 * end offsets), not the half kilobyte of their text; stream readers wait on a condition
 * variable and read the rows back from the file. Steering goes to the loop through send/'s
 * steer queue (only the loop changes the schedule); faults are switched on the inbound
 * side's atomic switches directly.
 *
 * flood serve --dashboard has no sender: its rows are the crowd's (dash_crowd.c), pushed
 * by the command once a second; the page hides the rate controls and keeps the fault
 * switches, whose changes the dashboard logs itself (marks on the charts).
 *
 * The room flood/dash/: the dashboard's server (dash.c), its API (dash_api.c), its page
 * (dash_page.c) and a crowd's rows (dash_crowd.c). It calls report/ (the series rows, the
 * colours), inbound/ (faults, deliveries), send/ (steering), measure/ (fetches, the
 * target's queue), crowd/
 * (the server's counts), core/ and sign/; only the commands call it. */
#ifndef FLOOD_DASH_H
#define FLOOD_DASH_H

#include <stdint.h>

#include "flood/crowd/server.h"
#include "flood/inbound/inbound.h"
#include "flood/measure/fetches.h"
#include "flood/measure/stats.h"
#include "flood/measure/tqueue.h"
#include "flood/send/steer.h"
#include "sign/err.h"

struct dash_opts {
    const char *addr;     /* "127.0.0.1:8090", "[::1]:0" */
    const char *token;    /* --dashboard-token, or NULL */
    const char *title;    /* shown on the page (borrowed, copied) */
    struct steer *steer;  /* borrowed, may be NULL (no rate controls: flood serve) */
    struct inbound *in;   /* borrowed, may be NULL (no fault switches) */
    int crowd;            /* the rows are a crowd's (flood serve: dash_crowd_row), not a run's */
    const char *rows_dir; /* where the rows' file is made (NULL: $TMPDIR, else /tmp) */
};

struct dash;

/* Listen and serve. NULL and err ("dashboard: cannot listen on 'x': ...", "dashboard:
 * cannot make the rows' file in 'DIR': ..."). */
struct dash *dash_start(const struct dash_opts *o, struct flood_err *err) FLOOD_WUR;
/* Check an ADDR:PORT without listening. 0 or -1 and err. */
int dash_check_addr(const char *addr, struct flood_err *err) FLOOD_WUR;
/* "127.0.0.1:8090" as bound (port 0 resolved). */
const char *dash_address(const struct dash *d);
/* The run's time 0 (CLOCK_MONOTONIC ns): fault switches are recorded against it. */
void dash_set_start(struct dash *d, int64_t mono0_ns);
/* The target's own queue (--target-queue), read once a second from the same time 0 as the
 * rows (borrowed, may be NULL; it must outlive the dashboard or be unset first): each row
 * pushed from now on carries that second's readings as "target_queue" ({SOURCE: {GAUGE:
 * depth} or null when the reading failed}, null when none was taken), as run.json's series
 * does, and /api/state the sources' record (tq_sampler_json). */
void dash_set_tqueue(struct dash *d, struct tq_sampler *sm);
/* The owner of st (its one writer): copy the seconds st closed since the last call. */
void dash_push(struct dash *d, const struct stats *st);
/* Rows of a crowd without a sender (flood serve): one second's figures as a JSON object
 * (a new reference; stolen), with the target's queue of its second "t" added when a
 * sampler is set. */
void dash_push_json(struct dash *d, json_t *row);
/* A crowd's rows (flood serve --dashboard): its running totals (all borrowed, any may be
 * NULL), differenced once a second by dash_crowd_row into {"kind": "crowd", "t",
 * "deliveries": {TYPE: n, "total"}, "rejected", "accepts_sent", "accepts_failed",
 * "faulted": {delay, status, reset, hang, total}, "fetches": {KIND: n, "total"},
 * "fetch_bytes": {KIND: bytes, "total"}, "status": {2xx, 3xx, 4xx, 5xx, other, total},
 * "requests", "faults": [rules in force]}: a new reference, for dash_push_json. */
struct dash_crowd;
struct dash_crowd *dash_crowd_new(struct inbound *in, struct fetches *f, struct server *srv);
json_t *dash_crowd_row(struct dash_crowd *c, size_t t);
void dash_crowd_free(struct dash_crowd *c);
/* The run is over: the page says so and links to report_path (served at /report.html;
 * NULL: no report, the crowd stopped). */
void dash_finish(struct dash *d, const char *report_path);
/* Stop the listener (streams end) and free. NULL is fine. */
void dash_stop(struct dash *d);

#endif
