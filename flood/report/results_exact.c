/* flood/report/results_exact.c: what a run writes so that `flood merge` can add shards
 * together without loss: run.json's "exact" (every counter as recorded, the histograms in
 * hist_encode's text, the target's fetches by kind), follows.tsv (each Follow sent and each
 * answer received, on the wall clock) and fetches.tsv (each URL the target fetched, and
 * how many times). */
#include "flood/report/results.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "flood/core/fsutil.h"

static json_t *u64_array(const uint64_t *v, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, json_integer((json_int_t)v[i]));
    return a;
}

static json_t *hist_text(const struct hist *h)
{
    char *t = hist_encode(h);
    json_t *s = json_string(t);
    free(t);
    return s;
}

json_t *results_exact_json(const struct stats *st)
{
    json_t *ops = json_object();
    for (int i = 0; i < OP__COUNT; i++) {
        const struct stats_op *o = &st->op[i];
        const struct stats_counts *c = &o->c;
        json_t *j = json_object();
        json_object_set_new(j, "scheduled", json_integer((json_int_t)c->scheduled));
        json_object_set_new(j, "sent", json_integer((json_int_t)c->sent));
        json_object_set_new(j, "shed", json_integer((json_int_t)c->shed));
        json_object_set_new(j, "completed", json_integer((json_int_t)c->completed));
        json_object_set_new(j, "unfinished", json_integer((json_int_t)c->unfinished));
        json_object_set_new(j, "second_knocks", json_integer((json_int_t)c->second_knocks));
        json_object_set_new(j, "outcomes", u64_array(c->outcomes, OUT__COUNT));
        json_object_set_new(j, "retry_after", u64_array(c->retry_after, OUT__COUNT));
        json_object_set_new(j, "bad_sent", u64_array(c->bad_sent, BAD__COUNT));
        json_object_set_new(j, "bad_accepted", u64_array(c->bad_accepted, BAD__COUNT));
        json_object_set_new(j, "latency", hist_text(&o->latency));
        json_object_set_new(j, "service", hist_text(&o->service));
        json_object_set_new(j, "lag", hist_text(&o->lag));
        json_object_set_new(ops, op_name((enum op_kind)i), j);
    }
    json_t *e = json_object();
    json_object_set_new(e, "ops", ops);
    json_object_set_new(e, "late_sends", json_integer((json_int_t)st->late_sends));
    json_object_set_new(e, "late_us", json_integer((json_int_t)st->late_us));
    json_object_set_new(e, "not_ready", json_integer((json_int_t)st->not_ready));
    return e;
}

static int get_u64(json_t *o, const char *k, uint64_t *out)
{
    json_t *v = json_object_get(o, k);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return -1;
    *out += (uint64_t)json_integer_value(v);
    return 0;
}

static int add_array(json_t *o, const char *k, uint64_t *v, int n)
{
    json_t *a = json_object_get(o, k);
    if (!json_is_array(a) || json_array_size(a) != (size_t)n)
        return -1;
    for (int i = 0; i < n; i++) {
        json_t *x = json_array_get(a, (size_t)i);
        if (!json_is_integer(x) || json_integer_value(x) < 0)
            return -1;
        v[i] += (uint64_t)json_integer_value(x);
    }
    return 0;
}

static int add_hist(json_t *o, const char *k, struct hist *dst, struct hist *tmp,
                    struct flood_err *err)
{
    const char *t = json_string_value(json_object_get(o, k));
    if (!t) {
        flood_err_set(err, FLOOD_EINVAL, "no histogram '%s'", k);
        return -1;
    }
    if (hist_decode(tmp, t, err))
        return -1;
    hist_merge(dst, tmp);
    return 0;
}

int results_exact_add(struct stats *st, json_t *exact, struct flood_err *err)
{
    json_t *ops = json_object_get(exact, "ops");
    if (!json_is_object(ops)) {
        flood_err_set(err, FLOOD_EINVAL, "no \"exact\".ops (written by an older flood?)");
        return -1;
    }
    struct hist *tmp = hist_new();
    int rc = 0;
    for (int i = 0; i < OP__COUNT && !rc; i++) {
        json_t *j = json_object_get(ops, op_name((enum op_kind)i));
        struct stats_op *o = &st->op[i];
        struct stats_counts *c = &o->c;
        if (!json_is_object(j) || get_u64(j, "scheduled", &c->scheduled) ||
            get_u64(j, "sent", &c->sent) || get_u64(j, "shed", &c->shed) ||
            get_u64(j, "completed", &c->completed) || get_u64(j, "unfinished", &c->unfinished) ||
            get_u64(j, "second_knocks", &c->second_knocks) ||
            add_array(j, "outcomes", c->outcomes, OUT__COUNT) ||
            add_array(j, "retry_after", c->retry_after, OUT__COUNT) ||
            add_array(j, "bad_sent", c->bad_sent, BAD__COUNT) ||
            add_array(j, "bad_accepted", c->bad_accepted, BAD__COUNT)) {
            flood_err_set(err, FLOOD_EINVAL, "\"exact\".ops.%s: missing or bad counts",
                          op_name((enum op_kind)i));
            rc = -1;
        } else if (add_hist(j, "latency", &o->latency, tmp, err) ||
                   add_hist(j, "service", &o->service, tmp, err) ||
                   add_hist(j, "lag", &o->lag, tmp, err))
            rc = -1;
    }
    if (!rc && (get_u64(exact, "late_sends", &st->late_sends) ||
                get_u64(exact, "not_ready", &st->not_ready))) {
        flood_err_set(err, FLOOD_EINVAL, "\"exact\": no late_sends/not_ready");
        rc = -1;
    }
    /* the lateness a late send is over, the largest of the parts' (runs that did not write
     * it: STATS_LATE_US) */
    uint64_t late_us = 0;
    if (!rc && json_object_get(exact, "late_us")) {
        if (get_u64(exact, "late_us", &late_us)) {
            flood_err_set(err, FLOOD_EINVAL, "\"exact\": late_us is not a count");
            rc = -1;
        } else if (late_us > st->late_us) {
            st->late_us = late_us;
        }
    }
    hist_free(tmp);
    return rc;
}

int results_write_follows(const char *dir, struct probes *p, int64_t wall_minus_mono_ns,
                          struct flood_err *err)
{
    static const char kinds[] = {'F', 'A', 'R', 'X'};
    char path[1200];
    snprintf(path, sizeof(path), "%s/follows.tsv", dir);
    struct fs_tmp t;
    if (fs_tmp_open(&t, path, 0666, "results", err))
        return -1;
    size_t n = 0;
    struct probes_event *ev = probes_log_copy(p, &n);
    int64_t off_us = wall_minus_mono_ns / 1000;
    fprintf(t.f, "# kind seq wall_us (F: Follow sent, A: Accept received, R: Reject, X: the "
                 "Follow's POST refused)\n");
    for (size_t i = 0; i < n; i++)
        fprintf(t.f, "%c\t%" PRIu64 "\t%" PRId64 "\n", kinds[ev[i].kind], ev[i].seq,
                (int64_t)ev[i].us + off_us);
    free(ev);
    if (ferror(t.f)) {
        flood_err_set(err, FLOOD_EIO, "results: cannot write '%s'", path);
        fs_tmp_abort(&t);
        return -1;
    }
    return fs_tmp_commit(&t, FS_REPLACE, 0, err);
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

int results_fetches_add(struct fetches *f, json_t *exact, struct flood_err *err)
{
    json_t *kinds = json_object_get(exact, "kinds");
    uint64_t untracked = 0;
    if (!json_is_object(kinds) || get_u64(exact, "untracked", &untracked)) {
        flood_err_set(err, FLOOD_EINVAL, "\"exact\".fetches: no kinds or untracked count");
        return -1;
    }
    struct hist *h = hist_new();
    int rc = 0;
    for (int i = 0; i < FETCH__COUNT && !rc; i++) {
        json_t *k = json_object_get(kinds, fetch_kind_name(i));
        uint64_t requests = 0, bytes = 0;
        const char *serve = json_string_value(json_object_get(k, "serve"));
        if (!json_is_object(k) || get_u64(k, "requests", &requests) ||
            get_u64(k, "bytes", &bytes) || !serve) {
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
