/* flood/report/results_fetches.c: the target's fetches and the crowd's answer counts in a
 * run's results (see results_fetches.h). */
#include "flood/report/results_fetches.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "flood/measure/fetches.h"

json_t *results_fetches_json(const struct stats *st, const struct results_info *ri)
{
    if (!ri->fetches)
        return NULL;
    struct stats_counts t;
    stats_totals(st, &t);
    const char *names[OP__COUNT];
    uint64_t sent[OP__COUNT];
    for (int i = 0; i < OP__COUNT; i++) {
        names[i] = op_name((enum op_kind)i);
        sent[i] = st->op[i].c.sent;
    }
    return fetches_json(ri->fetches, t.sent, names, sent, OP__COUNT);
}

int results_crowd_unreachable(const struct stats *st, const struct results_info *ri, char *reason,
                              size_t size)
{
    if (!ri->fetches)
        return 0;
    struct stats_counts t;
    stats_totals(st, &t);
    uint64_t ok = 0;
    for (int k = 0; k < OUT__COUNT; k++)
        if (stats_outcome_ok(k))
            ok += t.outcomes[k];
    if (!ok || fetches_count_all(ri->fetches))
        return 0;
    snprintf(reason, size,
             "the target answered %" PRIu64 " activities 2xx but fetched nothing from the crowd "
             "(no actor, key or any GET): check that it can reach the crowd's URLs "
             "(--public-port)",
             ok);
    return 1;
}

void results_fetches_line(FILE *f, const struct stats *st, const struct results_info *ri, int md)
{
    if (!ri->fetches)
        return;
    struct stats_counts t;
    stats_totals(st, &t);
    uint64_t all = fetches_count_all(ri->fetches), repeats = 0, urls = 0;
    fprintf(f, "%sfetches%s %" PRIu64, md ? "**" : "", md ? ":**" : ":", all);
    const char *sep = " (";
    for (int k = 0; k < FETCH__COUNT; k++) {
        uint64_t n = fetches_count(ri->fetches, k);
        if (n) {
            fprintf(f, "%s%s %" PRIu64, sep, fetch_kind_name(k), n);
            sep = ", ";
        }
    }
    if (all)
        fprintf(f, ")");
    /* the repeats: from the totals (the histograms are not needed here) */
    json_t *j = fetches_json(ri->fetches, t.sent, NULL, NULL, 0);
    json_t *tot = json_object_get(j, "total");
    repeats = (uint64_t)json_integer_value(json_object_get(tot, "repeat_requests"));
    urls = (uint64_t)json_integer_value(json_object_get(tot, "repeat_urls"));
    json_decref(j);
    fprintf(f, ", %.2f a send; repeats %" PRIu64 " of %" PRIu64 " URLs\n",
            t.sent ? (double)all / (double)t.sent : 0.0, repeats, urls);
}

static const char *const status_names[6] = {"other", "1xx", "2xx", "3xx", "4xx", "5xx"};

json_t *results_crowd_json(const struct server_stats *c)
{
    json_t *by = json_object();
    for (int k = 1; k < 6; k++)
        json_object_set_new(by, status_names[k], json_integer((json_int_t)c->by_status[k]));
    json_object_set_new(by, status_names[0], json_integer((json_int_t)c->by_status[0]));
    return json_pack("{s:I,s:o,s:I,s:I,s:I,s:I,s:I}", "requests", (json_int_t)c->requests,
                     "by_status", by, "bad_host", (json_int_t)c->bad_host, "too_large",
                     (json_int_t)c->too_large, "faults_injected", (json_int_t)c->faults, "tls_cut",
                     (json_int_t)c->unflushed, "hangs_closed", (json_int_t)c->hangs_closed);
}

static unsigned long long count_of(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) && json_integer_value(v) > 0
               ? (unsigned long long)json_integer_value(v)
               : 0;
}

void results_crowd_add(struct server_stats *c, json_t *crowd)
{
    if (!json_is_object(crowd))
        return;
    c->requests += count_of(crowd, "requests");
    json_t *by = json_object_get(crowd, "by_status");
    for (int k = 0; k < 6; k++)
        c->by_status[k] += count_of(by, status_names[k]);
    c->bad_host += count_of(crowd, "bad_host");
    c->too_large += count_of(crowd, "too_large");
    c->faults += count_of(crowd, "faults_injected");
    c->unflushed += count_of(crowd, "tls_cut");
    c->hangs_closed += count_of(crowd, "hangs_closed");
}

int results_crowd_warning(const struct server_stats *c, char *buf, size_t size)
{
    if (!c || !c->unflushed)
        return 0;
    snprintf(buf, size,
             "the crowd cut %llu TLS connections: an answer found its socket full for a second "
             "(the target was not reading its answers)",
             c->unflushed);
    return 1;
}

json_t *results_dns_json(const struct dns_stats *d)
{
    json_t *by = json_object();
    for (int r = 0; r < DNS__RESULTS; r++)
        json_object_set_new(by, dns_result_name(r), json_integer((json_int_t)d->by_result[r]));
    return json_pack("{s:I,s:I,s:o,s:I}", "udp", (json_int_t)d->udp, "tcp", (json_int_t)d->tcp,
                     "answers", by, "tcp_refused", (json_int_t)d->tcp_refused);
}

int results_dns_add(struct dns_stats *d, json_t *dns)
{
    if (!json_is_object(dns))
        return 0;
    d->udp += count_of(dns, "udp");
    d->tcp += count_of(dns, "tcp");
    for (int r = 0; r < DNS__RESULTS; r++)
        d->by_result[r] += count_of(json_object_get(dns, "answers"), dns_result_name(r));
    d->tcp_refused += count_of(dns, "tcp_refused");
    return 1;
}

void results_dns_line(FILE *f, const struct dns_stats *d, int md)
{
    fprintf(f, "%s %llu queries (udp %llu, tcp %llu):", md ? "**name server:**" : "name server:",
            d->udp + d->tcp, d->udp, d->tcp);
    for (int r = 0; r < DNS__RESULTS; r++)
        fprintf(f, "%s %s %llu", r ? "," : "", dns_result_name(r), d->by_result[r]);
    if (d->tcp_refused)
        fprintf(f, "; %llu TCP connections refused (too many open)", d->tcp_refused);
    fprintf(f, "\n");
}
