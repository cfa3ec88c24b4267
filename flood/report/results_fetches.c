/* flood/report/results_fetches.c: the target's fetches and the crowd's answer counts in a
 * run's results, and what flood merge adds them up from (see results_fetches.h). */
#include "flood/report/results_fetches.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "flood/core/fsutil.h"
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

json_t *results_fetches_exact(struct fetches *f)
{
    if (!f)
        return NULL;
    json_t *kinds = json_object();
    struct fetches_kind *k = flood_xmalloc(sizeof(*k)); /* a hist: too big for a stack */
    for (int i = 0; i < FETCH__COUNT; i++) {
        fetches_kind_get(f, i, k);
        char *serve = hist_encode(&k->serve);
        json_object_set_new(kinds, fetch_kind_name(i),
                            json_pack("{s:I,s:I,s:s}", "requests", (json_int_t)k->requests, "bytes",
                                      (json_int_t)k->bytes, "serve", serve));
        free(serve);
    }
    free(k);
    return json_pack("{s:o,s:I}", "kinds", kinds, "untracked", (json_int_t)fetches_untracked(f));
}

static int get_count(json_t *o, const char *k, uint64_t *out)
{
    json_t *v = json_object_get(o, k);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return -1;
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

int results_fetches_add(struct fetches *f, json_t *exact, struct flood_err *err)
{
    json_t *kinds = json_object_get(exact, "kinds");
    uint64_t untracked = 0;
    if (!json_is_object(kinds) || get_count(exact, "untracked", &untracked)) {
        flood_err_set(err, FLOOD_EINVAL, "\"exact\".fetches: no kinds or untracked count");
        return -1;
    }
    struct hist *h = hist_new();
    int rc = 0;
    for (int i = 0; i < FETCH__COUNT && !rc; i++) {
        json_t *k = json_object_get(kinds, fetch_kind_name(i));
        uint64_t requests = 0, bytes = 0;
        const char *serve = json_string_value(json_object_get(k, "serve"));
        if (!json_is_object(k) || get_count(k, "requests", &requests) ||
            get_count(k, "bytes", &bytes) || !serve) {
            flood_err_set(err, FLOOD_EINVAL, "\"exact\".fetches.kinds.%s: missing or bad",
                          fetch_kind_name(i));
            rc = -1;
        } else if (hist_decode(h, serve, err)) {
            rc = -1;
        } else if (hist_count(h) != requests) {
            flood_err_set(err, FLOOD_EINVAL,
                          "\"exact\".fetches.kinds.%s: %" PRIu64 " requests but %" PRIu64
                          " serving times",
                          fetch_kind_name(i), requests, hist_count(h));
            rc = -1;
        } else {
            fetches_add_kind(f, i, requests, bytes, h);
        }
    }
    if (!rc)
        fetches_add_untracked(f, untracked);
    hist_free(h);
    return rc;
}

int results_write_fetch_urls(const char *dir, struct fetches *f, struct flood_err *err)
{
    char path[1200];
    snprintf(path, sizeof(path), "%s/fetches.tsv", dir);
    struct fs_tmp t;
    if (fs_tmp_open(&t, path, 0666, "results", err))
        return -1;
    fprintf(t.f, "# key count (each URL the target fetched from the crowd; the key's first "
                 "hex digit is its kind)\n");
    if (fetches_write_urls(f, t.f)) {
        flood_err_set(err, FLOOD_EIO, "results: cannot write '%s'", path);
        fs_tmp_abort(&t);
        return -1;
    }
    return fs_tmp_commit(&t, FS_REPLACE, 0, err);
}

int results_fetch_urls_add(struct fetches *f, const char *dir, struct flood_err *err)
{
    char path[1200];
    snprintf(path, sizeof(path), "%s/fetches.tsv", dir);
    FILE *in = fopen(path, "r");
    if (!in) {
        flood_err_set(err, FLOOD_EIO, "cannot read '%s': %s", path, strerror(errno));
        return -1;
    }
    char line[128];
    int rc = 0;
    for (size_t no = 1; !rc && fgets(line, sizeof(line), in); no++) {
        if (line[0] == '#')
            continue;
        char *end;
        errno = 0;
        uint64_t key = strtoull(line, &end, 16);
        int ok = isxdigit((unsigned char)line[0]) && !errno && end == line + 16 && *end == '\t' &&
                 isdigit((unsigned char)end[1]);
        uint64_t count = ok ? strtoull(end + 1, &end, 10) : 0;
        ok = ok && !errno && *end == '\n';
        if (!ok || fetches_add_url(f, key, count) < 0) {
            flood_err_set(err, FLOOD_EINVAL, "'%s' line %zu: not a URL's key and count", path, no);
            rc = -1;
        }
    }
    if (!rc && ferror(in)) {
        flood_err_set(err, FLOOD_EIO, "cannot read '%s'", path);
        rc = -1;
    }
    fclose(in);
    return rc;
}

static const char *const status_names[6] = {"other", "1xx", "2xx", "3xx", "4xx", "5xx"};

json_t *results_crowd_json(const struct server_stats *c)
{
    json_t *by = json_object();
    for (int k = 1; k <= 6; k++) /* 1xx..5xx, then the others */
        json_object_set_new(by, status_names[k % 6], json_integer((json_int_t)c->by_status[k % 6]));
    return json_pack("{s:I,s:o,s:I,s:I,s:I,s:I}", "requests", (json_int_t)c->requests, "by_status",
                     by, "bad_host", (json_int_t)c->bad_host, "too_large", (json_int_t)c->too_large,
                     "faults_injected", (json_int_t)c->faults, "tls_cut", (json_int_t)c->unflushed);
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
