/* flood/measure/egress.c: the egress proxy's counts (egress.h). */
#include "flood/measure/egress.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sign/err.h"

struct egress_inst {
    atomic_ullong connects, requests, reused, uses, open, open_max;
};

struct egress_host {
    char host[EGRESS_HOST_LEN];
    uint64_t n, by[PROXY_REFUSE__COUNT];
};

struct egress {
    const struct wf_crowd *wf;
    char address[128];
    struct egress_inst *inst; /* [1..instances] */
    atomic_ullong accepted, closed, idle_closed, open, open_max;
    atomic_ullong requests, relayed, answered, answered_class[6], failed;
    atomic_ullong refused, refused_by[PROXY_REFUSE__COUNT], bad, bad_by[PROXY_BAD__COUNT];
    atomic_ullong bad_body, connects, tunnels_ended[5], bytes_up, bytes_down;
    pthread_mutex_t lock;
    struct egress_host hosts[EGRESS_HOSTS_MAX + 1]; /* the last: "(others)" */
    int n_hosts;
};

static const char *const tunnel_end_keys[5] = {"done", "half_close", "silent", "not_tls", "error"};

struct egress *egress_new(const struct wf_crowd *wf)
{
    struct egress *e = flood_xcalloc(1, sizeof(*e));
    e->wf = wf;
    e->inst = flood_xcalloc((size_t)wf->instances + 1, sizeof(*e->inst));
    pthread_mutex_init(&e->lock, NULL);
    snprintf(e->hosts[EGRESS_HOSTS_MAX].host, EGRESS_HOST_LEN, "(others)");
    return e;
}

void egress_free(struct egress *e)
{
    if (!e)
        return;
    pthread_mutex_destroy(&e->lock);
    free(e->inst);
    free(e);
}

void egress_set_address(struct egress *e, const char *addr)
{
    snprintf(e->address, sizeof(e->address), "%s", addr);
}

static void raise_max(atomic_ullong *max, unsigned long long v)
{
    unsigned long long m = atomic_load(max);
    while (v > m && !atomic_compare_exchange_weak(max, &m, v))
        ;
}

static struct egress_inst *inst_of(struct egress *e, int i)
{
    return i >= 1 && i <= e->wf->instances ? &e->inst[i] : NULL;
}

static void refused_host(struct egress *e, const struct proxy_event *ev)
{
    size_t n = ev->host_len < EGRESS_HOST_LEN - 1 ? ev->host_len : EGRESS_HOST_LEN - 1;
    pthread_mutex_lock(&e->lock);
    struct egress_host *h = NULL;
    for (int k = 0; k < e->n_hosts && !h; k++)
        if (strlen(e->hosts[k].host) == n && !strncasecmp(e->hosts[k].host, ev->host, n))
            h = &e->hosts[k];
    if (!h && e->n_hosts < EGRESS_HOSTS_MAX) {
        h = &e->hosts[e->n_hosts++];
        memcpy(h->host, ev->host, n);
        h->host[n] = '\0';
    }
    if (!h)
        h = &e->hosts[EGRESS_HOSTS_MAX];
    h->n++;
    h->by[ev->refuse]++;
    pthread_mutex_unlock(&e->lock);
}

void egress_record(void *ctx, const struct proxy_event *ev)
{
    struct egress *e = ctx;
    struct egress_inst *in = inst_of(e, ev->instance);
    switch (ev->kind) {
    case PROXY_EV_ACCEPT:
        atomic_fetch_add(&e->accepted, 1);
        raise_max(&e->open_max, atomic_fetch_add(&e->open, 1) + 1);
        break;
    case PROXY_EV_CLOSE: {
        struct egress_inst *last = inst_of(e, ev->prev);
        if (last)
            atomic_fetch_sub(&last->open, 1);
        atomic_fetch_add(&e->closed, 1);
        atomic_fetch_sub(&e->open, 1);
        if (ev->idle)
            atomic_fetch_add(&e->idle_closed, 1);
        break;
    }
    case PROXY_EV_REQUEST:
        atomic_fetch_add(&e->requests, 1);
        break;
    case PROXY_EV_RELAYED:
        atomic_fetch_add(&e->relayed, 1);
        if (in) {
            atomic_fetch_add(&in->requests, 1);
            if (ev->reused)
                atomic_fetch_add(&in->reused, 1);
        }
        break;
    case PROXY_EV_ANSWERED: {
        int k = ev->status / 100;
        atomic_fetch_add(&e->answered, 1);
        atomic_fetch_add(&e->answered_class[k >= 1 && k <= 5 ? k : 0], 1);
        break;
    }
    case PROXY_EV_FAILED:
        atomic_fetch_add(&e->failed, 1);
        break;
    case PROXY_EV_REFUSED:
        atomic_fetch_add(&e->refused, 1);
        if ((unsigned)ev->refuse < PROXY_REFUSE__COUNT) {
            atomic_fetch_add(&e->refused_by[ev->refuse], 1);
            refused_host(e, ev);
        }
        break;
    case PROXY_EV_BAD:
        atomic_fetch_add(&e->bad, 1);
        if ((unsigned)ev->bad < PROXY_BAD__COUNT)
            atomic_fetch_add(&e->bad_by[ev->bad], 1);
        break;
    case PROXY_EV_BAD_BODY:
        atomic_fetch_add(&e->bad_body, 1);
        break;
    case PROXY_EV_CONNECT:
        atomic_fetch_add(&e->connects, 1);
        if (in)
            atomic_fetch_add(&in->connects, 1);
        break;
    case PROXY_EV_TUNNEL_END:
        if ((unsigned)ev->end < 5)
            atomic_fetch_add(&e->tunnels_ended[ev->end], 1);
        atomic_fetch_add(&e->bytes_up, ev->bytes_up);
        atomic_fetch_add(&e->bytes_down, ev->bytes_down);
        break;
    case PROXY_EV_INSTANCE: {
        struct egress_inst *prev = inst_of(e, ev->prev);
        if (prev)
            atomic_fetch_sub(&prev->open, 1);
        if (in) {
            atomic_fetch_add(&in->uses, 1);
            raise_max(&in->open_max, atomic_fetch_add(&in->open, 1) + 1);
        }
        break;
    }
    default:
        break;
    }
}

void egress_totals(struct egress *e, struct egress_totals *t)
{
    memset(t, 0, sizeof(*t));
    t->accepted = atomic_load(&e->accepted);
    t->closed = atomic_load(&e->closed);
    t->idle_closed = atomic_load(&e->idle_closed);
    t->open_max = atomic_load(&e->open_max);
    t->requests = atomic_load(&e->requests);
    t->relayed = atomic_load(&e->relayed);
    t->answered = atomic_load(&e->answered);
    for (int k = 0; k < 6; k++)
        t->answered_class[k] = atomic_load(&e->answered_class[k]);
    t->failed = atomic_load(&e->failed);
    t->refused = atomic_load(&e->refused);
    for (int k = 0; k < PROXY_REFUSE__COUNT; k++)
        t->refused_by[k] = atomic_load(&e->refused_by[k]);
    t->bad = atomic_load(&e->bad);
    for (int k = 0; k < PROXY_BAD__COUNT; k++)
        t->bad_by[k] = atomic_load(&e->bad_by[k]);
    t->bad_body = atomic_load(&e->bad_body);
    t->connects = atomic_load(&e->connects);
    for (int k = 0; k < 5; k++)
        t->tunnels_ended[k] = atomic_load(&e->tunnels_ended[k]);
    t->tunnel_bytes_up = atomic_load(&e->bytes_up);
    t->tunnel_bytes_down = atomic_load(&e->bytes_down);
}

static uint64_t tunnels_closed(const struct egress_totals *t)
{
    uint64_t n = 0;
    for (int k = 0; k < 5; k++)
        n += t->tunnels_ended[k];
    return n;
}

int egress_conservation(const struct egress_totals *t, int stopped, char *buf, size_t size)
{
    uint64_t done = t->answered + t->failed + t->refused + t->bad + t->connects;
    uint64_t in_flight = t->requests >= done ? t->requests - done : 0;
    uint64_t tclosed = tunnels_closed(t);
    int ok = t->requests >= done && t->relayed <= t->requests && t->closed <= t->accepted &&
             tclosed <= t->connects &&
             (!stopped || (in_flight == 0 && t->closed == t->accepted && tclosed == t->connects));
    snprintf(buf, size,
             "egress %s: requests %" PRIu64 " = answered %" PRIu64 " + failed %" PRIu64
             " + refused %" PRIu64 " + malformed %" PRIu64 " + tunnelled %" PRIu64
             " + in flight %" PRIu64 "; tunnels %" PRIu64 " = closed %" PRIu64 " + open %" PRIu64
             "; connections %" PRIu64 " = closed %" PRIu64 " + open %" PRIu64,
             ok ? "conserved" : "NOT conserved", t->requests, t->answered, t->failed, t->refused,
             t->bad, t->connects, in_flight, t->connects, tclosed,
             t->connects >= tclosed ? t->connects - tclosed : 0, t->accepted, t->closed,
             t->accepted >= t->closed ? t->accepted - t->closed : 0);
    return ok ? 0 : -1;
}

static json_t *jint(uint64_t v)
{
    return json_integer((json_int_t)v);
}

static json_t *instances_json(struct egress *e)
{
    json_t *o = json_object();
    for (int i = 1; i <= e->wf->instances; i++) {
        struct egress_inst *in = &e->inst[i];
        uint64_t uses = atomic_load(&in->uses), connects = atomic_load(&in->connects);
        if (!uses && !connects)
            continue;
        char host[WF_HOST_MAX];
        wf_host(e->wf, i, host);
        json_object_set_new(o, host,
                            json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "connections", jint(uses),
                                      "open", jint(atomic_load(&in->open)), "open_max",
                                      jint(atomic_load(&in->open_max)), "requests",
                                      jint(atomic_load(&in->requests)), "reused",
                                      jint(atomic_load(&in->reused)), "connects", jint(connects)));
    }
    return o;
}

json_t *egress_json(struct egress *e, int stopped)
{
    struct egress_totals t;
    egress_totals(e, &t);
    json_t *o = json_object();
    json_object_set_new(o, "proxy", json_string(e->address));
    json_object_set_new(o, "requests", jint(t.requests));
    json_object_set_new(o, "relayed", jint(t.relayed));
    json_object_set_new(o, "answered", jint(t.answered));
    json_t *cls = json_object();
    static const char *const cn[6] = {"other", "1xx", "2xx", "3xx", "4xx", "5xx"};
    for (int k = 0; k < 6; k++)
        if (t.answered_class[k])
            json_object_set_new(cls, cn[k], jint(t.answered_class[k]));
    json_object_set_new(o, "answered_by_class", cls);
    json_object_set_new(o, "failed", jint(t.failed));
    json_object_set_new(o, "connects", jint(t.connects));
    json_object_set_new(o, "refused", jint(t.refused));
    json_t *rr = json_object();
    for (int k = 1; k < PROXY_REFUSE__COUNT; k++)
        json_object_set_new(rr, proxy_refuse_key(k), jint(t.refused_by[k]));
    json_object_set_new(o, "refused_by_reason", rr);
    json_t *rh = json_object();
    pthread_mutex_lock(&e->lock);
    for (int k = 0; k <= EGRESS_HOSTS_MAX; k++) {
        const struct egress_host *h = &e->hosts[k];
        if (!h->n || (k >= e->n_hosts && k < EGRESS_HOSTS_MAX))
            continue;
        json_t *by = json_object();
        for (int r = 1; r < PROXY_REFUSE__COUNT; r++)
            if (h->by[r])
                json_object_set_new(by, proxy_refuse_key(r), jint(h->by[r]));
        json_object_set_new(rh, h->host[0] ? h->host : "(none)",
                            json_pack("{s:o, s:o}", "requests", jint(h->n), "by_reason", by));
    }
    pthread_mutex_unlock(&e->lock);
    json_object_set_new(o, "refused_by_host", rh);
    json_object_set_new(o, "malformed", jint(t.bad));
    json_t *br = json_object();
    json_object_set_new(br, "timeout", jint(t.bad_by[0]));
    for (int k = 1; k < PROXY_BAD__COUNT; k++)
        json_object_set_new(br, proxy_bad_key(k), jint(t.bad_by[k]));
    json_object_set_new(br, "body", jint(t.bad_body));
    json_object_set_new(o, "malformed_by_reason", br);
    uint64_t tclosed = tunnels_closed(&t);
    json_t *tu = json_object();
    json_object_set_new(tu, "opened", jint(t.connects));
    json_object_set_new(tu, "open", jint(t.connects >= tclosed ? t.connects - tclosed : 0));
    json_t *te = json_object();
    for (int k = 0; k < 5; k++)
        json_object_set_new(te, tunnel_end_keys[k], jint(t.tunnels_ended[k]));
    json_object_set_new(tu, "closed_by", te);
    json_object_set_new(tu, "bytes_up", jint(t.tunnel_bytes_up));
    json_object_set_new(tu, "bytes_down", jint(t.tunnel_bytes_down));
    json_object_set_new(o, "tunnels", tu);
    json_object_set_new(o, "connections",
                        json_pack("{s:o, s:o, s:o, s:o, s:o}", "accepted", jint(t.accepted),
                                  "closed", jint(t.closed), "idle_closed", jint(t.idle_closed),
                                  "open", jint(t.accepted - t.closed), "open_max",
                                  jint(t.open_max)));
    json_object_set_new(o, "instances", instances_json(e));
    char line[512];
    int ok = egress_conservation(&t, stopped, line, sizeof(line)) == 0;
    json_object_set_new(o, "conservation", json_pack("{s:b, s:s}", "ok", ok, "line", line));
    return o;
}

static uint64_t num(const json_t *o, const char *k)
{
    return (uint64_t)json_integer_value(json_object_get(o, k));
}

/* The line under egress_line's: refusals by reason, plain requests reused, and the five
 * instances the target used most (connections, most open at once, CONNECTs, reuse).
 * Nothing when the target asked for nothing. */
static void egress_detail_line(FILE *f, const json_t *eg)
{
    if (!num(eg, "requests"))
        return;
    fputs("egress detail: refused by reason", f);
    const char *k, *sep = " ";
    json_t *v;
    json_object_foreach((json_t *)json_object_get(eg, "refused_by_reason"), k, v)
    {
        if (json_integer_value(v) > 0) {
            fprintf(f, "%s%s %" JSON_INTEGER_FORMAT, sep, k, json_integer_value(v));
            sep = ", ";
        }
    }
    if (*sep == ' ')
        fputs(" none", f);
    const json_t *in = json_object_get(eg, "instances");
    uint64_t reused = 0, requests = 0;
    json_object_foreach((json_t *)in, k, v)
    {
        reused += num(v, "reused");
        requests += num(v, "requests");
    }
    fprintf(f,
            "; plain requests %" PRIu64 ", %" PRIu64
            " on a connection already carrying their instance",
            requests, reused);
    const char *shown[5];
    size_t n_shown = 0;
    while (n_shown < 5) {
        const char *best = NULL;
        uint64_t best_n = 0;
        json_object_foreach((json_t *)in, k, v)
        {
            int seen = 0;
            for (size_t j = 0; j < n_shown; j++)
                seen |= shown[j] == k;
            uint64_t c = num(v, "connections");
            if (!seen && (!best || c > best_n)) {
                best = k;
                best_n = c;
            }
        }
        if (!best)
            break;
        const json_t *b = json_object_get(in, best);
        fprintf(f,
                "%s%s %" PRIu64 " connections (most open %" PRIu64 ", CONNECT %" PRIu64
                ", reused %" PRIu64 ")",
                n_shown ? ", " : "; most used: ", best, best_n, num(b, "open_max"),
                num(b, "connects"), num(b, "reused"));
        shown[n_shown++] = best;
    }
    fputc('\n', f);
}

void egress_line(FILE *f, const json_t *eg)
{
    fprintf(f,
            "egress: proxy %s: %" PRIu64 " requests: relayed %" PRIu64 " (answered %" PRIu64
            ", failed %" PRIu64 "), CONNECT %" PRIu64 ", refused %" PRIu64,
            json_string_value(json_object_get(eg, "proxy")), num(eg, "requests"),
            num(eg, "relayed"), num(eg, "answered"), num(eg, "failed"), num(eg, "connects"),
            num(eg, "refused"));
    const json_t *hosts = json_object_get(eg, "refused_by_host");
    const char *k;
    json_t *v;
    const char *sep = " (";
    int shown = 0;
    json_object_foreach((json_t *)hosts, k, v)
    {
        if (shown++ == 5) {
            fprintf(f, ", ...");
            break;
        }
        fprintf(f, "%s%s %" PRIu64, sep, k, num(v, "requests"));
        sep = ", ";
    }
    fprintf(f,
            "%s, malformed %" PRIu64 "; %zu instances used, connections %" PRIu64
            " (most open at once %" PRIu64 ")\n",
            shown ? ")" : "", num(eg, "malformed"),
            json_object_size(json_object_get(eg, "instances")),
            num(json_object_get(eg, "connections"), "accepted"),
            num(json_object_get(eg, "connections"), "open_max"));
    egress_detail_line(f, eg);
    fprintf(f, "%s\n",
            json_string_value(json_object_get(json_object_get(eg, "conservation"), "line")));
}
