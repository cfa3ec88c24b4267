/* flood/measure/stats.c: outcome classes, per-operation counters and histograms, the series. */
#include "flood/measure/stats.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *op_name(enum op_kind op)
{
    static const char *const names[OP__COUNT] = {
        "create", "like",         "follow",   "undo", "announce",    "reply",        "update",
        "delete", "update-actor", "question", "vote", "emoji-react", "delete-actor", "refollow"};
    return (unsigned)op < OP__COUNT ? names[op] : "?";
}

static const char *const outcome_names[OUT__COUNT] = {
    "200",       "202",       "2xx_other", "401",     "403",   "408", "429", "503",
    "4xx_other", "5xx_other", "timeout",   "refused", "reset", "dns", "tls", "other",
};

const char *stats_outcome_name(int outcome)
{
    return outcome >= 0 && outcome < OUT__COUNT ? outcome_names[outcome] : "?";
}

int stats_outcome_ok(int outcome)
{
    return outcome == OUT_200 || outcome == OUT_202 || outcome == OUT_2XX_OTHER;
}

int stats_outcome_error(int outcome)
{
    return outcome >= OUT_TIMEOUT && outcome < OUT__COUNT;
}

static const char *const bad_names[BAD__COUNT] = {"none", "wrong_key", "stale_date", "digest"};

const char *stats_bad_name(int kind)
{
    return kind >= 0 && kind < BAD__COUNT ? bad_names[kind] : "?";
}

int stats_classify(int curl_code, long status, long os_errno)
{
    switch ((CURLcode)curl_code) {
    case CURLE_OK:
        break;
    case CURLE_OPERATION_TIMEDOUT:
        return OUT_TIMEOUT;
    case CURLE_COULDNT_CONNECT:
        if (os_errno == ECONNREFUSED)
            return OUT_REFUSED;
        if (os_errno == ECONNRESET)
            return OUT_RESET;
        if (os_errno == ETIMEDOUT)
            return OUT_TIMEOUT;
        return OUT_TRANSPORT;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return OUT_DNS;
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
        return OUT_RESET;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_USE_SSL_FAILED:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
        return OUT_TLS;
    default:
        return OUT_TRANSPORT;
    }
    return stats_classify_status(status);
}

int stats_classify_status(long status)
{
    if (status == 200)
        return OUT_200;
    if (status == 202)
        return OUT_202;
    if (status >= 200 && status < 300)
        return OUT_2XX_OTHER;
    switch (status) {
    case 401:
        return OUT_401;
    case 403:
        return OUT_403;
    case 408:
        return OUT_408;
    case 429:
        return OUT_429;
    case 503:
        return OUT_503;
    default:
        break;
    }
    if (status >= 400 && status < 500)
        return OUT_4XX_OTHER;
    if (status >= 500 && status < 600)
        return OUT_5XX_OTHER;
    return OUT_TRANSPORT; /* no status, 1xx or 3xx: not an answer flood can class */
}

struct stats *stats_new(void)
{
    struct stats *s = flood_xcalloc(1, sizeof(*s));
    for (int i = 0; i < OP__COUNT; i++) {
        hist_init(&s->op[i].latency);
        hist_init(&s->op[i].service);
        hist_init(&s->op[i].lag);
    }
    hist_init(&s->sec_latency);
    hist_init(&s->sec_service);
    hist_init(&s->sec_lag);
    s->sec_f2a = hist_new();
    s->late_us = STATS_LATE_US;
    return s;
}

void stats_free(struct stats *s)
{
    if (!s)
        return;
    free(s->series);
    hist_free(s->sec_f2a);
    free(s);
}

static struct stats_sec *sec_at(struct stats *s, int64_t ns)
{
    size_t i = ns > 0 ? (size_t)(ns / 1000000000) : 0;
    if (i >= s->cap_series) {
        size_t cap = s->cap_series ? s->cap_series : 64;
        while (cap <= i)
            cap *= 2;
        s->series = flood_xrealloc(s->series, cap * sizeof(*s->series));
        s->cap_series = cap;
    }
    if (i >= s->n_series) { /* zeroed as reached: a doubled series costs its seconds only */
        memset(s->series + s->n_series, 0, (i + 1 - s->n_series) * sizeof(*s->series));
        s->n_series = i + 1;
    }
    return &s->series[i];
}

static uint64_t us_of(int64_t ns)
{
    return ns > 0 ? (uint64_t)(ns / 1000) : 0;
}

void stats_shed(struct stats *s, enum op_kind op, int64_t intended_ns)
{
    s->op[op].c.scheduled++;
    s->op[op].c.shed++;
    struct stats_sec *sec = sec_at(s, intended_ns);
    sec->offered++;
    sec->shed++;
}

void stats_sent(struct stats *s, enum op_kind op, int64_t intended_ns, int64_t start_ns)
{
    struct stats_op *o = &s->op[op];
    o->c.scheduled++;
    o->c.sent++;
    sec_at(s, intended_ns)->offered++;
    uint64_t lag = us_of(start_ns - intended_ns);
    hist_record(&o->lag, lag);
    struct stats_sec *sec = sec_at(s, start_ns);
    sec->sent++;
    if (lag > s->late_us) {
        s->late_sends++;
        sec->late++;
    }
    if ((size_t)(start_ns / 1000000000) == s->cur_sec)
        hist_record(&s->sec_lag, lag);
}

void stats_done(struct stats *s, enum op_kind op, int outcome, int retry_after, int bad,
                int64_t intended_ns, int64_t start_ns, int64_t done_ns)
{
    struct stats_op *o = &s->op[op];
    if (outcome < 0 || outcome >= OUT__COUNT)
        outcome = OUT_TRANSPORT;
    o->c.completed++;
    o->c.outcomes[outcome]++;
    if (retry_after)
        o->c.retry_after[outcome]++;
    if (bad > BAD_NONE && bad < BAD__COUNT && stats_outcome_ok(outcome))
        o->c.bad_accepted[bad]++;
    uint64_t lat = us_of(done_ns - intended_ns);
    hist_record(&o->latency, lat);
    hist_record(&o->service, us_of(done_ns - start_ns));
    struct stats_sec *sec = sec_at(s, done_ns);
    sec->completed++;
    sec->outcomes[outcome]++;
    if ((size_t)(done_ns / 1000000000) == s->cur_sec) {
        hist_record(&s->sec_latency, lat);
        hist_record(&s->sec_service, us_of(done_ns - start_ns));
    }
}

void stats_set_probes(struct stats *s, struct probes *p)
{
    s->probes = p;
}

void stats_set_inbound(struct stats *s, uint64_t (*count)(void *ctx), void *ctx)
{
    s->inbound_count = count;
    s->inbound_ctx = ctx;
    s->inbound_prev = count ? count(ctx) : 0;
}

void stats_set_steal(struct stats *s, double (*steal)(void *ctx), void *ctx)
{
    s->steal = steal;
    s->steal_ctx = ctx;
    s->steal_prev = steal ? steal(ctx) : -1;
}

void stats_set_fetches(struct stats *s, uint64_t (*count)(void *ctx, int kind), void *ctx)
{
    s->fetch_count = count;
    s->fetch_ctx = ctx;
    for (int k = 0; k < FETCH__COUNT; k++)
        s->fetch_prev[k] = count ? count(ctx, k) : 0;
}

static double ms_at(const struct hist *h, double pct)
{
    return hist_value_at_percentile(h, pct) / 1000.0;
}

void stats_tick(struct stats *s, int64_t now_ns, uint64_t in_flight)
{
    size_t now_sec = now_ns > 0 ? (size_t)(now_ns / 1000000000) : 0;
    while (s->cur_sec < now_sec) {
        struct stats_sec *sec = sec_at(s, (int64_t)s->cur_sec * 1000000000);
        sec->p50_ms = ms_at(&s->sec_latency, 50);
        sec->p99_ms = ms_at(&s->sec_latency, 99);
        sec->max_ms = hist_max(&s->sec_latency) / 1000.0;
        sec->service_p50_ms = ms_at(&s->sec_service, 50);
        sec->service_p99_ms = ms_at(&s->sec_service, 99);
        sec->lag_p99_ms = ms_at(&s->sec_lag, 99);
        if (s->probes) {
            struct probes_second ps;
            probes_take_second(s->probes, &s->sec_f2a, &ps);
            sec->accepts = ps.accepted;
            sec->rejects = ps.rejected;
            sec->f2a_p50_ms = ms_at(s->sec_f2a, 50);
            sec->f2a_p99_ms = ms_at(s->sec_f2a, 99);
            hist_reset(s->sec_f2a);
        }
        if (s->inbound_count) {
            uint64_t now_count = s->inbound_count(s->inbound_ctx);
            sec->deliveries = now_count - s->inbound_prev;
            s->inbound_prev = now_count;
        }
        for (int k = 0; s->fetch_count && k < FETCH__COUNT; k++) {
            uint64_t now_count = s->fetch_count(s->fetch_ctx, k);
            sec->fetches[k] = now_count - s->fetch_prev[k];
            s->fetch_prev[k] = now_count;
        }
        if (s->steal) {
            double now_steal = s->steal(s->steal_ctx);
            if (now_steal >= 0 && s->steal_prev >= 0 && now_steal >= s->steal_prev)
                sec->steal_ms = (now_steal - s->steal_prev) * 1000;
            s->steal_prev = now_steal;
        }
        sec->in_flight = in_flight;
        sec->closed = 1;
        if (s->closed) {
            struct stats_closed c = {.sec = s->cur_sec,
                                     .row = sec,
                                     .latency = &s->sec_latency,
                                     .service = &s->sec_service,
                                     .lag = &s->sec_lag,
                                     .from = s};
            s->closed(s->closed_ctx, &c);
        }
        hist_reset(&s->sec_latency);
        hist_reset(&s->sec_service);
        hist_reset(&s->sec_lag);
        s->cur_sec++;
    }
}

void stats_set_closed(struct stats *s, void (*fn)(void *ctx, const struct stats_closed *c),
                      void *ctx)
{
    s->closed = fn;
    s->closed_ctx = ctx;
}

void stats_sec_add_counts(struct stats_sec *dst, const struct stats_sec *src)
{
    dst->offered += src->offered;
    dst->sent += src->sent;
    dst->shed += src->shed;
    dst->completed += src->completed;
    dst->late += src->late;
    for (int k = 0; k < OUT__COUNT; k++)
        dst->outcomes[k] += src->outcomes[k];
}

void stats_sec_zero_counts(struct stats_sec *sec)
{
    sec->offered = sec->sent = sec->shed = sec->completed = sec->late = 0;
    memset(sec->outcomes, 0, sizeof(sec->outcomes));
}

void stats_counts_add(struct stats_counts *dst, const struct stats_counts *src)
{
    dst->scheduled += src->scheduled;
    dst->sent += src->sent;
    dst->shed += src->shed;
    dst->completed += src->completed;
    dst->unfinished += src->unfinished;
    dst->second_knocks += src->second_knocks;
    for (int k = 0; k < OUT__COUNT; k++) {
        dst->outcomes[k] += src->outcomes[k];
        dst->retry_after[k] += src->retry_after[k];
    }
    for (int k = 0; k < BAD__COUNT; k++) {
        dst->bad_sent[k] += src->bad_sent[k];
        dst->bad_accepted[k] += src->bad_accepted[k];
    }
}

void stats_add(struct stats *dst, const struct stats *src)
{
    for (int i = 0; i < OP__COUNT; i++) {
        stats_counts_add(&dst->op[i].c, &src->op[i].c);
        hist_merge(&dst->op[i].latency, &src->op[i].latency);
        hist_merge(&dst->op[i].service, &src->op[i].service);
        hist_merge(&dst->op[i].lag, &src->op[i].lag);
    }
    dst->late_sends += src->late_sends;
    if (src->late_us > dst->late_us)
        dst->late_us = src->late_us; /* the loops' is the same: the run's quantum */
    dst->not_ready += src->not_ready;
    for (size_t i = 0; i < src->n_series; i++)
        stats_sec_add_counts(sec_at(dst, (int64_t)i * 1000000000), &src->series[i]);
}

void stats_unfinished(struct stats *s, enum op_kind op, uint64_t n)
{
    s->op[op].c.unfinished += n;
}

void stats_totals(const struct stats *s, struct stats_counts *out)
{
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < OP__COUNT; i++)
        stats_counts_add(out, &s->op[i].c);
}

void stats_merge_hists(const struct stats *s, struct hist *latency, struct hist *service,
                       struct hist *lag)
{
    for (int i = 0; i < OP__COUNT; i++) {
        if (latency)
            hist_merge(latency, &s->op[i].latency);
        if (service)
            hist_merge(service, &s->op[i].service);
        if (lag)
            hist_merge(lag, &s->op[i].lag);
    }
}

int stats_conservation(const struct stats *s, char *buf, size_t size)
{
    struct stats_counts t;
    stats_totals(s, &t);
    int ok = t.scheduled == t.sent + t.shed && t.sent == t.completed + t.unfinished;
    for (int i = 0; i < OP__COUNT; i++) {
        const struct stats_counts *c = &s->op[i].c;
        uint64_t sum = 0;
        for (int k = 0; k < OUT__COUNT; k++)
            sum += c->outcomes[k];
        if (sum != c->completed || c->scheduled != c->sent + c->shed ||
            c->sent != c->completed + c->unfinished)
            ok = 0;
    }
    snprintf(buf, size,
             "conservation: scheduled %" PRIu64 " = sent %" PRIu64 " + shed %" PRIu64
             "; sent %" PRIu64 " = completed %" PRIu64 " + unfinished %" PRIu64 ": %s",
             t.scheduled, t.sent, t.shed, t.sent, t.completed, t.unfinished,
             ok ? "ok" : "VIOLATED");
    return ok ? 0 : -1;
}
