/* flood/measure/egress.h: what the target tried to reach through the egress proxy
 * (crowd/proxy.h, --proxy): requests relayed and answered, CONNECT tunnels, refusals by host
 * and by reason, malformed input by reason, and per instance the connections the target
 * held open and how it reused them. run.json's "egress", summary.md's egress line,
 * report.html's egress box and the flood_egress_* metrics all read egress_json.
 *
 * Threads: egress_record runs on the proxy's thread; every counter is an atomic, the table of
 * refused hosts takes a mutex (refusals are rare), so egress_json may run on any thread.
 * Memory: a row of counters per instance (calloc'd: pages never touched stay unmapped) and
 * EGRESS_HOSTS_MAX refused hosts; beyond, refusals count under "(others)". */
#ifndef FLOOD_EGRESS_H
#define FLOOD_EGRESS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "flood/crowd/proxy.h"
#include "webfinger/wf.h"

#define EGRESS_HOSTS_MAX 64
#define EGRESS_HOST_LEN  (WF_HOST_MAX + 8)

/* The totals, as egress_totals copies them. */
struct egress_totals {
    uint64_t accepted, closed, idle_closed, open_max; /* client connections */
    uint64_t requests;                                /* heads read, malformed ones included */
    uint64_t relayed, answered; /* absolute-form requests passed on, answers back whole */
    uint64_t answered_class[6]; /* [k]: kxx, [0] others */
    uint64_t failed;            /* relayed or CONNECT with no answer from the crowd */
    uint64_t refused, refused_by[PROXY_REFUSE__COUNT];
    uint64_t bad, bad_by[PROXY_BAD__COUNT]; /* bad_by[0]: heads that timed out (408) */
    uint64_t bad_body;                      /* chunked bodies that broke framing (closed) */
    uint64_t connects, tunnels_ended[5];    /* [enum proxy_tunnel_end] */
    uint64_t tunnel_bytes_up, tunnel_bytes_down;
};

struct egress;

/* A new table for crowd wf (borrowed: instance names for egress_json); egress_free. */
struct egress *egress_new(const struct wf_crowd *wf);
void egress_free(struct egress *e);
/* The proxy's address, for the record ("127.0.0.1:3128"; copied). */
void egress_set_address(struct egress *e, const char *addr);
/* Count one event: the proxy's hook (ctx is the struct egress). */
void egress_record(void *ctx, const struct proxy_event *ev);
/* The totals as they stand. */
void egress_totals(struct egress *e, struct egress_totals *out);
/* Conservation: requests = answered + failed + refused + bad + connects + in flight, and
 * connections and tunnels opened = closed + open. 0 when it holds, -1 when not; the line
 * into buf either way. in_flight_ok: the proxy has stopped, so nothing may be in flight. */
int egress_conservation(const struct egress_totals *t, int stopped, char *buf, size_t size);
/* run.json's "egress" (a new reference): totals, refusals by reason and by host, malformed
 * input by reason, tunnels, per instance (only those the target used) connections, open_max,
 * requests, reuse and CONNECTs, and the conservation line. */
json_t *egress_json(struct egress *e, int stopped);
/* summary.md's and the terminal's egress lines from egress_json's record (borrowed): the
 * totals; refusals by reason, plain requests reused and the five instances used most
 * (connections, most open at once, CONNECTs, reuse); the conservation line. */
void egress_line(FILE *f, const json_t *egress);

#endif
