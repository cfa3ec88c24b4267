/* flood/report/results_exact.c: what a run writes so that `flood merge` can add shards
 * together without loss: run.json's "exact" (every counter as recorded, the histograms in
 * hist_encode's text) and follows.tsv (each Follow sent and each answer received, on the
 * wall clock). */
#include "flood/report/results.h"

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
    hist_free(tmp);
    return rc;
}

int results_write_follows(const char *dir, struct probes *p, int64_t wall_minus_mono_ns,
                          struct flood_err *err)
{
    static const char kinds[] = {'F', 'A', 'R'};
    char path[1200];
    snprintf(path, sizeof(path), "%s/follows.tsv", dir);
    struct fs_tmp t;
    if (fs_tmp_open(&t, path, 0666, "results", err))
        return -1;
    size_t n = 0;
    struct probes_event *ev = probes_log_copy(p, &n);
    int64_t off_us = wall_minus_mono_ns / 1000;
    fprintf(t.f, "# kind seq wall_us (F: Follow sent, A: Accept received, R: Reject)\n");
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
