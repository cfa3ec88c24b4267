/* flood/report/metrics.c: GET /metrics in the Prometheus text format, from a snapshot callback. */
#include <errno.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "flood/core/addr.h"
#include "flood/core/steal.h"
#include "flood/inbound/inbound.h"
#include "flood/measure/egress.h"
#include "flood/report/metrics.h"
#include "flood/measure/probes.h"

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct metrics {
    struct MHD_Daemon *mhd;
    struct metrics_source src;
    int port;
    char address[ADDR_TEXT_MAX]; /* "ADDR:PORT" as bound */
};

/* Histogram bucket bounds in seconds: 0.5 ms to a minute, the range a target's inbox
 * spans from idle to drowning. */
static const double le_s[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                              0.25,   0.5,   1,      2.5,   5,    10,    30,   60};
#define N_LE (sizeof(le_s) / sizeof(le_s[0]))

/* ---- rendering ----------------------------------------------------------------------- */

static void family(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value with \, " and newline escaped (the text format's rule). */
static void label_value(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '\\' || *s == '"')
            fputc('\\', f);
        if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
}

/* One histogram's _bucket, _sum and _count lines. A bucket counts the samples known to be
 * at most its bound: a histogram slot straddling the bound (at most 1/1000 of the value
 * wide) is left to the next bucket. label is "op=\"create\"," or "". */
static void hist_lines(FILE *f, const char *name, const char *label, const struct hist *h)
{
    uint64_t cum[N_LE] = {0};
    size_t pos = 0;
    uint64_t lo, hi, count;
    while (hist_next_bucket(h, &pos, &lo, &hi, &count))
        for (size_t i = 0; i < N_LE; i++)
            if ((double)hi <= le_s[i] * 1e6)
                cum[i] += count;
    for (size_t i = 0; i < N_LE; i++)
        fprintf(f, "%s_bucket{%sle=\"%g\"} %" PRIu64 "\n", name, label, le_s[i], cum[i]);
    fprintf(f, "%s_bucket{%sle=\"+Inf\"} %" PRIu64 "\n", name, label, hist_count(h));
    size_t ll = strlen(label);
    /* _sum and _count take the same labels, without the trailing comma */
    fprintf(f, "%s_sum%s%.*s%s %.6f\n", name, ll ? "{" : "", ll ? (int)ll - 1 : 0, label,
            ll ? "}" : "", (double)h->sum / 1e6);
    fprintf(f, "%s_count%s%.*s%s %" PRIu64 "\n", name, ll ? "{" : "", ll ? (int)ll - 1 : 0, label,
            ll ? "}" : "", hist_count(h));
}

static void per_op(FILE *f, const struct metrics_snapshot *s, const char *name, const char *type,
                   const char *help, size_t offset)
{
    family(f, name, type, help);
    for (int op = 0; op < OP__COUNT; op++) {
        const uint64_t *v = (const uint64_t *)((const char *)&s->op[op] + offset);
        fprintf(f, "%s{op=\"%s\"} %" PRIu64 "\n", name, op_name(op), *v);
    }
}

/* Every numeric member of a JSON object, as NAME{LABEL="key"} lines of a family of type. */
static void json_values(FILE *f, const json_t *o, const char *name, const char *type,
                        const char *label, const char *help)
{
    if (!json_is_object(o))
        return;
    family(f, name, type, help);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v)
    {
        if (!json_is_integer(v))
            continue;
        fprintf(f, "%s{%s=\"", name, label);
        label_value(f, k);
        fprintf(f, "\"} %" JSON_INTEGER_FORMAT "\n", json_integer_value(v));
    }
}

/* json_values of counters. */
static void json_counts(FILE *f, const json_t *o, const char *name, const char *label,
                        const char *help)
{
    json_values(f, o, name, "counter", label, help);
}

/* Per key of o (objects), the integer at field, as a family of type. */
static void json_field_values(FILE *f, const json_t *o, const char *field, const char *name,
                              const char *type, const char *label, const char *help)
{
    json_t *c = json_object();
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) json_object_set(c, k, json_object_get(v, field));
    json_values(f, c, name, type, label, help);
    json_decref(c);
}

static void json_field_counts(FILE *f, const json_t *o, const char *field, const char *name,
                              const char *label, const char *help)
{
    json_field_values(f, o, field, name, "counter", label, help);
}

static void json_field_gauges(FILE *f, const json_t *o, const char *field, const char *name,
                              const char *label, const char *help)
{
    json_field_values(f, o, field, name, "gauge", label, help);
}

static void egress_families(FILE *f, const json_t *e)
{
    json_t *out = json_pack(
        "{s:O, s:O, s:O, s:O, s:O}", "answered", json_object_get(e, "answered"), "failed",
        json_object_get(e, "failed"), "refused", json_object_get(e, "refused"), "malformed",
        json_object_get(e, "malformed"), "tunnelled", json_object_get(e, "connects"));
    json_counts(f, out, "flood_egress_requests_total", "outcome",
                "Requests the target made through the egress proxy, by how each ended.");
    json_decref(out);
    json_counts(f, json_object_get(e, "refused_by_reason"), "flood_egress_refused_total", "reason",
                "Requests the egress proxy refused (403), by reason.");
    json_field_counts(f, json_object_get(e, "refused_by_host"), "requests",
                      "flood_egress_refused_host_total", "host",
                      "Requests the egress proxy refused (403), by the host asked for.");
    json_counts(f, json_object_get(e, "malformed_by_reason"), "flood_egress_malformed_total",
                "reason", "Malformed input the egress proxy answered or closed, by reason.");
    json_counts(f, json_object_get(json_object_get(e, "tunnels"), "closed_by"),
                "flood_egress_tunnels_closed_total", "end", "CONNECT tunnels ended, by how.");
    const json_t *conn = json_object_get(e, "connections");
    family(f, "flood_egress_connections_total", "counter",
           "Connections the target opened to the egress proxy.");
    fprintf(f, "flood_egress_connections_total %" JSON_INTEGER_FORMAT "\n",
            json_integer_value(json_object_get(conn, "accepted")));
    family(f, "flood_egress_open_connections", "gauge",
           "Connections the target holds open to the egress proxy.");
    fprintf(f, "flood_egress_open_connections %" JSON_INTEGER_FORMAT "\n",
            json_integer_value(json_object_get(conn, "open")));
    const json_t *in = json_object_get(e, "instances");
    json_field_counts(f, in, "connects", "flood_egress_instance_connects_total", "instance",
                      "CONNECT tunnels the target opened, by crowd instance.");
    json_field_counts(f, in, "requests", "flood_egress_instance_requests_total", "instance",
                      "Plain (http://) requests relayed, by crowd instance.");
    json_field_counts(f, in, "connections", "flood_egress_instance_connections_total", "instance",
                      "Connections (tunnels, or plain ones switching to it) carrying each "
                      "crowd instance.");
    json_field_counts(f, in, "reused", "flood_egress_instance_reused_total", "instance",
                      "Plain requests relayed on a connection whose previous request was for "
                      "the same crowd instance.");
    json_field_gauges(f, in, "open", "flood_egress_instance_open_connections", "instance",
                      "Connections the target holds open to the egress proxy, by the crowd "
                      "instance they carry.");
}

/* The target's own queue (--target-queue): per source whether its last reading worked,
 * its readings and missing ones, and the last depth of each gauge while it works (a failed
 * reading leaves the gauges out: missing, never 0). */
static void tqueue_families(FILE *f, const json_t *sources)
{
    family(f, "flood_target_queue_up", "gauge",
           "Whether the last reading of each --target-queue source worked (1) or failed (0).");
    size_t i;
    const json_t *src;
    json_array_foreach(sources, i, src)
    {
        int up = json_integer_value(json_object_get(src, "readings")) > 0 &&
                 json_is_null(json_object_get(src, "last_failure"));
        fputs("flood_target_queue_up{source=\"", f);
        label_value(f, json_string_value(json_object_get(src, "source")));
        fprintf(f, "\"} %d\n", up);
    }
    static const char *const counts[][2] = {
        {"readings", "Readings taken of each --target-queue source."},
        {"missing", "Readings of each --target-queue source that failed."}};
    for (size_t c = 0; c < 2; c++) {
        char name[64];
        snprintf(name, sizeof(name), "flood_target_queue_%s_total", counts[c][0]);
        family(f, name, "counter", counts[c][1]);
        json_array_foreach(sources, i, src)
        {
            fprintf(f, "%s{source=\"", name);
            label_value(f, json_string_value(json_object_get(src, "source")));
            fprintf(f, "\"} %" JSON_INTEGER_FORMAT "\n",
                    json_integer_value(json_object_get(src, counts[c][0])));
        }
    }
    family(f, "flood_target_queue_jobs", "gauge",
           "The target's own queues at the last reading, by source, gauge (the queue and its "
           "state, e.g. inbox.waiting) and role (inbound, outbound, fetch, retry, scheduled, "
           "dead, active, other); absent while the source's readings fail.");
    json_array_foreach(sources, i, src)
    {
        if (json_integer_value(json_object_get(src, "readings")) <= 0 ||
            !json_is_null(json_object_get(src, "last_failure")))
            continue;
        const char *gauge;
        json_t *g;
        json_object_foreach(json_object_get(src, "gauges"), gauge, g)
        {
            fputs("flood_target_queue_jobs{source=\"", f);
            label_value(f, json_string_value(json_object_get(src, "source")));
            fputs("\",gauge=\"", f);
            label_value(f, gauge);
            fputs("\",role=\"", f);
            label_value(f, json_string_value(json_object_get(g, "role")));
            fprintf(f, "\"} %.17g\n", json_number_value(json_object_get(g, "last")));
        }
    }
}

char *metrics_render(const struct metrics_snapshot *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        fprintf(stderr, "flood: out of memory (metrics)\n");
        abort();
    }
    family(f, "flood_info", "gauge", "flood's version (always 1).");
    fprintf(f, "flood_info{version=\"%s\"} 1\n", FLOOD_VERSION);
    if (s->have_steal) {
        family(f, "flood_host_steal_seconds_total", "counter",
               "Time the virtual machine's host took from the CPUs flood may run on while they "
               "had work (their steal time, summed), since the machine booted.");
        fprintf(f, "flood_host_steal_seconds_total %.2f\n", s->steal_s);
        family(f, "flood_host_steal_cpus", "gauge",
               "The CPUs flood may run on, whose steal time is summed.");
        fprintf(f, "flood_host_steal_cpus %d\n", s->steal_cpus);
    }
    if (s->have_sender) {
        per_op(f, s, "flood_scheduled_total", "counter",
               "Activities whose intended send time has come, by operation.",
               offsetof(struct stats_counts, scheduled));
        per_op(f, s, "flood_sent_total", "counter", "Requests sent, by operation.",
               offsetof(struct stats_counts, sent));
        per_op(f, s, "flood_shed_total", "counter",
               "Activities shed (never sent: --max-inflight reached), by operation.",
               offsetof(struct stats_counts, shed));
        per_op(f, s, "flood_completed_total", "counter",
               "Requests completed (answered or failed), by operation.",
               offsetof(struct stats_counts, completed));
        per_op(f, s, "flood_unfinished_requests", "gauge",
               "Requests sent and never completed (known at the run's end), by operation.",
               offsetof(struct stats_counts, unfinished));
        family(f, "flood_requests_total", "counter",
               "Completed requests by operation and outcome class (HTTP status class, "
               "timeout, or transport_KIND for a transport error).");
        for (int op = 0; op < OP__COUNT; op++)
            for (int k = 0; k < OUT__COUNT; k++)
                fprintf(f, "flood_requests_total{op=\"%s\",outcome=\"%s%s\"} %" PRIu64 "\n",
                        op_name(op), k >= OUT_FIRST_TRANSPORT ? "transport_" : "",
                        stats_outcome_name(k), s->op[op].outcomes[k]);
        family(f, "flood_in_flight_requests", "gauge", "Requests sent and not yet completed.");
        fprintf(f, "flood_in_flight_requests %" PRIu64 "\n", s->in_flight);
        family(f, "flood_latency_seconds", "histogram",
               "Latency from each request's intended send time (corrected for coordinated "
               "omission), by operation.");
        char label[64];
        for (int op = 0; op < OP__COUNT; op++) {
            snprintf(label, sizeof(label), "op=\"%s\",", op_name(op));
            hist_lines(f, "flood_latency_seconds", label, &s->latency[op]);
        }
        family(f, "flood_service_seconds", "histogram",
               "Latency from each request's actual send (service time), by operation.");
        for (int op = 0; op < OP__COUNT; op++) {
            snprintf(label, sizeof(label), "op=\"%s\",", op_name(op));
            hist_lines(f, "flood_service_seconds", label, &s->service[op]);
        }
    }
    if (s->inbound) {
        json_counts(f, json_object_get(s->inbound, "deliveries"), "flood_inbound_deliveries_total",
                    "type", "Deliveries to the crowd's inboxes, by activity type.");
        json_counts(f, json_object_get(s->inbound, "rejected"), "flood_inbound_rejected_total",
                    "reason", "Deliveries the crowd's inboxes refused, by reason.");
    }
    if (s->have_probes) {
        family(f, "flood_inbound_accepts_total", "counter",
               "Accepts received for the Follows the sender sent.");
        fprintf(f, "flood_inbound_accepts_total %" PRIu64 "\n", s->probe_accepts);
        family(f, "flood_follow_to_accept_seconds", "histogram",
               "From a Follow sent to its Accept received: the target's end-to-end "
               "processing latency.");
        hist_lines(f, "flood_follow_to_accept_seconds", "", &s->follow_to_accept);
    }
    if (s->have_fetches) {
        static const char *const names[] = {"flood_fetches_total", "flood_fetch_bytes_total",
                                            "flood_fetch_repeats_total"};
        static const char *const helps[] = {
            "GETs and HEADs the target made of the crowd, by kind.",
            "Body bytes the crowd sent for the target's fetches, by kind.",
            "Fetches of a URL the target had already fetched in this run, by kind."};
        const uint64_t *vals[] = {s->fetches, s->fetch_bytes, s->fetch_repeats};
        for (int m = 0; m < 3; m++) {
            family(f, names[m], "counter", helps[m]);
            for (int k = 0; k < FETCH__COUNT; k++)
                fprintf(f, "%s{kind=\"%s\"} %" PRIu64 "\n", names[m], fetch_kind_name(k),
                        vals[m][k]);
        }
    }
    if (s->have_dns) {
        family(f, "flood_dns_queries_total", "counter",
               "Messages the crowd's name server received, by transport and what it answered "
               "(malformed: dropped).");
        for (int t = 0; t < 2; t++)
            for (int r = 0; r < DNS__RESULTS; r++)
                fprintf(f, "flood_dns_queries_total{transport=\"%s\",result=\"%s\"} %" PRIu64 "\n",
                        t ? "tcp" : "udp", dns_result_name(r), s->dns[t][r]);
    }
    if (s->egress)
        egress_families(f, s->egress);
    if (s->tqueue)
        tqueue_families(f, s->tqueue);
    if (fclose(f)) {
        fprintf(stderr, "flood: out of memory (metrics)\n");
        abort();
    }
    return buf;
}

/* ---- the daemon ---------------------------------------------------------------------- */

static struct metrics_snapshot *snapshot_new(void)
{
    struct metrics_snapshot *s = flood_xcalloc(1, sizeof(*s));
    for (int op = 0; op < OP__COUNT; op++) {
        hist_init(&s->latency[op]);
        hist_init(&s->service[op]);
    }
    hist_init(&s->follow_to_accept);
    return s;
}

static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, char *body,
                              const char *type)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    if (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type) == MHD_NO ||
        (status == MHD_HTTP_METHOD_NOT_ALLOWED &&
         MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD") == MHD_NO)) {
        MHD_destroy_response(r);
        return MHD_NO;
    }
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_size, void **req_cls)
{
    (void)version;
    (void)upload_data;
    struct metrics *m = cls;
    /* the first call only announces the request; answer on the second (bodies ignored) */
    if (*req_cls == NULL) {
        *req_cls = m;
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0;
        return MHD_YES;
    }
    if (strcmp(url, "/metrics") != 0)
        return answer(c, MHD_HTTP_NOT_FOUND, flood_xstrdup("not found: try /metrics\n"),
                      "text/plain; charset=utf-8");
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return answer(c, MHD_HTTP_METHOD_NOT_ALLOWED, flood_xstrdup("method not allowed\n"),
                      "text/plain; charset=utf-8");
    struct metrics_snapshot *s = snapshot_new();
    int rc = m->src.snapshot ? m->src.snapshot(m->src.ctx, s) : -1;
    s->have_steal = steal_now(&s->steal_s, &s->steal_cpus) == 0;
    char *body = rc == 0 ? metrics_render(s) : flood_xstrdup("no figures yet\n");
    json_decref(s->inbound);
    json_decref(s->egress);
    json_decref(s->tqueue);
    free(s);
    return answer(c, rc == 0 ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, body,
                  rc == 0 ? METRICS_CONTENT_TYPE : "text/plain; charset=utf-8");
}

struct metrics *metrics_start(const char *addr_port, const struct metrics_source *src,
                              struct flood_err *err)
{
    struct sockaddr_storage ss;
    socklen_t sslen;
    if (addr_parse(addr_port, "metrics", ADDR_HOST_OPTIONAL, &ss, &sslen, err))
        return NULL;
    struct metrics *m = flood_xcalloc(1, sizeof(*m));
    m->src = *src;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL;
    if (ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    errno = 0;
    m->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, m, MHD_OPTION_SOCK_ADDR,
                              (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT, 64u,
                              MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
    if (!m->mhd) {
        flood_err_set(err, FLOOD_EIO, "metrics: cannot listen on '%s': %s", addr_port,
                      errno ? strerror(errno) : "libmicrohttpd refused");
        free(m);
        return NULL;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(m->mhd, MHD_DAEMON_INFO_LISTEN_FD);
    if (!di || addr_bound(di->listen_fd, m->address, &m->port) < 0) {
        flood_err_set(err, FLOOD_EIO, "metrics: cannot read the bound address of '%s'", addr_port);
        MHD_stop_daemon(m->mhd);
        free(m);
        return NULL;
    }
    return m;
}

const char *metrics_address(const struct metrics *m)
{
    return m->address;
}

int metrics_check_addr(const char *addr_port, struct flood_err *err)
{
    struct sockaddr_storage ss;
    socklen_t len;
    return addr_parse(addr_port, "metrics", ADDR_HOST_OPTIONAL, &ss, &len, err);
}

int metrics_port(const struct metrics *m)
{
    return m->port;
}

void metrics_stop(struct metrics *m)
{
    if (!m)
        return;
    MHD_stop_daemon(m->mhd);
    free(m);
}

/* ---- publishing ---------------------------------------------------------------------- */

struct metrics_pub {
    pthread_mutex_t lock;
    int published;
    struct metrics_snapshot *copy; /* the writer's last publication */
    struct inbound *in;
    struct probes *pr;
    struct fetches *fetches;
    struct dns *dns;
    struct egress *egress;
    struct tq_sampler *tqueue;
};

struct metrics_pub *metrics_pub_new(struct inbound *in, struct probes *pr)
{
    struct metrics_pub *p = flood_xcalloc(1, sizeof(*p));
    pthread_mutex_init(&p->lock, NULL);
    p->copy = snapshot_new();
    p->in = in;
    p->pr = pr;
    return p;
}

void metrics_pub_free(struct metrics_pub *p)
{
    if (!p)
        return;
    pthread_mutex_destroy(&p->lock);
    free(p->copy);
    free(p);
}

void metrics_pub_set_fetches(struct metrics_pub *p, struct fetches *f)
{
    p->fetches = f;
}

void metrics_pub_set_dns(struct metrics_pub *p, struct dns *d)
{
    p->dns = d;
}

void metrics_pub_set_egress(struct metrics_pub *p, struct egress *e)
{
    p->egress = e;
}

void metrics_pub_set_tqueue(struct metrics_pub *p, struct tq_sampler *sm)
{
    pthread_mutex_lock(&p->lock);
    p->tqueue = sm;
    pthread_mutex_unlock(&p->lock);
}

void metrics_pub_stats(struct metrics_pub *p, const struct stats *st, uint64_t in_flight)
{
    pthread_mutex_lock(&p->lock);
    for (int op = 0; op < OP__COUNT; op++) {
        p->copy->op[op] = st->op[op].c;
        p->copy->latency[op] = st->op[op].latency;
        p->copy->service[op] = st->op[op].service;
    }
    p->copy->in_flight = in_flight;
    p->copy->have_sender = 1;
    p->published = 1;
    pthread_mutex_unlock(&p->lock);
}

int metrics_pub_snapshot(void *ctx, struct metrics_snapshot *snap)
{
    struct metrics_pub *p = ctx;
    pthread_mutex_lock(&p->lock);
    int have = p->published;
    if (have) {
        for (int op = 0; op < OP__COUNT; op++) {
            snap->op[op] = p->copy->op[op];
            snap->latency[op] = p->copy->latency[op];
            snap->service[op] = p->copy->service[op];
        }
        snap->in_flight = p->copy->in_flight;
        snap->have_sender = 1;
    }
    struct tq_sampler *tq = p->tqueue;
    pthread_mutex_unlock(&p->lock);
    if (tq)
        snap->tqueue = tq_sampler_json(tq);
    if (p->in)
        snap->inbound = inbound_json(p->in);
    if (p->pr) {
        struct probes_totals t;
        probes_snapshot(p->pr, &t, &snap->follow_to_accept);
        snap->probe_accepts = t.accepted;
        snap->have_probes = 1;
    }
    if (p->fetches) {
        for (int k = 0; k < FETCH__COUNT; k++) {
            struct fetches_kind *fk = flood_xmalloc(sizeof(*fk));
            fetches_kind_get(p->fetches, k, fk);
            snap->fetches[k] = fk->requests;
            snap->fetch_bytes[k] = fk->bytes;
            snap->fetch_repeats[k] = fk->repeat_requests;
            free(fk);
        }
        snap->have_fetches = 1;
    }
    if (p->dns) {
        dns_get_split(p->dns, snap->dns);
        snap->have_dns = 1;
    }
    if (p->egress)
        snap->egress = egress_json(p->egress, 0);
    return have || p->in || p->pr || p->fetches || p->dns || tq ? 0 : -1;
}
