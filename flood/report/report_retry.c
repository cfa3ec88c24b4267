/* flood/report/report_retry.c: the retry curve and the fan-out in summary.md and
 * report.html (see report_retry.h). */
#include "flood/report/report_retry.h"

/* The number at a.b[.c] of o, or -1 when there is none. */
static double num(const json_t *o, const char *a, const char *b, const char *c)
{
    const json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    if (c)
        v = json_object_get(v, c);
    return json_is_number(v) ? json_number_value(v) : -1;
}

/* flood merge's records (merge_parts.h) keep what does not add up per shard */
static size_t shards_of(const json_t *o)
{
    return json_array_size(json_object_get(o, "per_shard"));
}

/* The merged records' lines: what was summed, and where the rest is. */
static void merged_summary(FILE *f, const json_t *rc, const json_t *fo)
{
    if (rc && num(rc, "attempts", NULL, NULL) > 0)
        fprintf(f,
                "\nretry curve, %zu shards merged: %.0f attempts at faulted inboxes (passed %.0f, "
                "refused %.0f, hung %.0f, reset %.0f); per delivery each shard's "
                "(run.json inbound.retry_curve.per_shard)\n",
                shards_of(rc), num(rc, "attempts", NULL, NULL), num(rc, "answered", "passed", NULL),
                num(rc, "answered", "status", NULL), num(rc, "answered", "hang", NULL),
                num(rc, "answered", "reset", NULL));
    if (fo)
        fprintf(f,
                "\nfan-out, %zu shards merged: %.0f deliveries, within 10 s %.1f%%, within 60 s "
                "%.1f%%; per post and per instance each shard's (run.json "
                "inbound.fan_out.per_shard)\n",
                shards_of(fo), num(fo, "deliveries", NULL, NULL),
                num(fo, "within_10s", NULL, NULL) * 100, num(fo, "within_60s", NULL, NULL) * 100);
}

void report_retry_summary(FILE *f, const json_t *inbound)
{
    const json_t *rc = json_object_get(inbound, "retry_curve");
    const json_t *fo = json_object_get(inbound, "fan_out");
    if (shards_of(rc) || shards_of(fo)) {
        merged_summary(f, rc, fo);
        return;
    }
    if (rc && num(rc, "attempts", NULL, NULL) > 0)
        fprintf(f,
                "\nretry curve: %.0f attempts at faulted inboxes, %.0f deliveries (%.2f attempts "
                "each), Retry-After given %.0f, honoured %.0f, early %.0f; after the recovery "
                "%.0f arrived (p99 %.0f ms), herd peak %.0f/s; never arrived %.0f\n",
                num(rc, "attempts", NULL, NULL), num(rc, "deliveries", NULL, NULL),
                num(rc, "mean_attempts", NULL, NULL), num(rc, "retry_after", "given", NULL),
                num(rc, "retry_after", "honoured", NULL), num(rc, "retry_after", "early", NULL),
                num(rc, "recovery", "recovered", NULL), num(rc, "recovery", "p99_ms", NULL),
                num(rc, "recovery", "herd_peak_per_s", NULL), num(rc, "never_arrived", NULL, NULL));
    const json_t *sz = json_object_get(json_object_get(inbound, "population"), "sizes");
    if (sz)
        fprintf(f,
                "\npopulation: %.0f actors on %.0f instances (sizes %s, acts %s): the biggest "
                "instance %.0f actors (instance %.0f), the median %.0f, half the actors on %.0f "
                "instances; the top 10%% of the actors sent %.1f%% of the activity\n",
                num(sz, "actors", NULL, NULL),
                num(json_object_get(inbound, "population"), "instances", NULL, NULL),
                json_string_value(json_object_get(sz, "sizes")),
                json_string_value(json_object_get(sz, "acts")), num(sz, "biggest", NULL, NULL),
                num(sz, "biggest_instance", NULL, NULL), num(sz, "median", NULL, NULL),
                num(sz, "instances_holding_half", NULL, NULL),
                num(sz, "top10_drawn_share", NULL, NULL) * 100);
    if (fo)
        fprintf(f,
                "\nfan-out: %.0f posts, %.0f deliveries (%.0f to %.0f a post), first delivery "
                "p50 %.0f ms, last p50 %.0f ms p99 %.0f ms, within 10 s %.1f%%, within 60 s "
                "%.1f%%, connections per instance at most %.0f\n",
                num(fo, "posts", NULL, NULL), num(fo, "deliveries", NULL, NULL),
                num(fo, "per_post", "min", NULL), num(fo, "per_post", "max", NULL),
                num(fo, "first_ms", "p50", NULL), num(fo, "last_ms", "p50", NULL),
                num(fo, "last_ms", "p99", NULL), num(fo, "within_10s", NULL, NULL) * 100,
                num(fo, "within_60s", NULL, NULL) * 100,
                num(fo, "concurrent_per_instance", "max", NULL));
}

static void row(FILE *f, const char *what, double v, const char *unit)
{
    if (v >= 0)
        fprintf(f, "<tr><td>%s</td><td>%.0f%s</td></tr>\n", what, v, unit);
}

void report_retry_section(FILE *f, const json_t *root)
{
    const json_t *in = json_object_get(root, "inbound");
    const json_t *rc = json_object_get(in, "retry_curve"), *fo = json_object_get(in, "fan_out");
    if (!(rc && num(rc, "attempts", NULL, NULL) > 0) && !fo)
        return;
    fputs("<h2 id=\"retries\">Retries and fan-out</h2>\n<table>\n", f);
    if (rc && num(rc, "attempts", NULL, NULL) > 0) {
        row(f, "attempts at faulted inboxes", num(rc, "attempts", NULL, NULL), "");
        row(f, "deliveries", num(rc, "deliveries", NULL, NULL), "");
        if (num(rc, "mean_attempts", NULL, NULL) >= 0)
            fprintf(f, "<tr><td>attempts a delivery, mean</td><td>%.2f</td></tr>\n",
                    num(rc, "mean_attempts", NULL, NULL));
        row(f, "gap between attempts, p50", num(rc, "gap_ms", "p50", NULL), " ms");
        row(f, "retries after a Retry-After", num(rc, "retry_after", "given", NULL), "");
        row(f, "&hellip; of them early", num(rc, "retry_after", "early", NULL), "");
        row(f, "arrived after the recovery", num(rc, "recovery", "recovered", NULL), "");
        row(f, "&hellip; p99 after it", num(rc, "recovery", "p99_ms", NULL), " ms");
        row(f, "recovery herd, peak", num(rc, "recovery", "herd_peak_per_s", NULL), "/s");
        row(f, "never arrived", num(rc, "never_arrived", NULL, NULL), "");
        if (shards_of(rc))
            fprintf(f,
                    "<tr><td>per delivery (attempts, gaps, recovery)</td><td>each of the %zu "
                    "shards' own: run.json <code>inbound.retry_curve.per_shard</code></td></tr>\n",
                    shards_of(rc));
    }
    if (fo) {
        row(f, "posts fanned out", num(fo, "posts", NULL, NULL), "");
        row(f, "their deliveries", num(fo, "deliveries", NULL, NULL), "");
        row(f, "first delivery, p50", num(fo, "first_ms", "p50", NULL), " ms");
        row(f, "last delivery, p50", num(fo, "last_ms", "p50", NULL), " ms");
        row(f, "last delivery, p99", num(fo, "last_ms", "p99", NULL), " ms");
        row(f, "delivered within 10 s", num(fo, "within_10s", NULL, NULL) * 100, "%");
        row(f, "delivered within 60 s", num(fo, "within_60s", NULL, NULL) * 100, "%");
        row(f, "connections to one instance, most", num(fo, "concurrent_per_instance", "max", NULL),
            "");
        if (shards_of(fo))
            fprintf(f,
                    "<tr><td>per post and per instance</td><td>each of the %zu shards' own: "
                    "run.json <code>inbound.fan_out.per_shard</code></td></tr>\n",
                    shards_of(fo));
    }
    fputs("</table>\n", f);
}
