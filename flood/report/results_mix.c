/* flood/report/results_mix.c: the mix in a run's results (see results_mix.h). */
#include "flood/report/results_mix.h"

#include <math.h>

void results_mix_lines(FILE *f, const json_t *mix)
{
    const json_t *kinds = json_object_get(mix, "kinds");
    if (!json_is_object(kinds))
        return;
    fprintf(f, "mix (asked/sent):");
    const char *k;
    const json_t *v;
    int first = 1;
    json_object_foreach((json_t *)kinds, k, v)
    {
        fprintf(f, "%s %s %.1f%%/%.1f%%", first ? "" : ",", k,
                json_number_value(json_object_get(v, "asked_pct")),
                json_number_value(json_object_get(v, "sent_pct")));
        first = 0;
    }
    fprintf(f, "\n");
    const json_t *r = json_object_get(mix, "refollows");
    if (r)
        fprintf(f,
                "refollows (Follows from actors already following): %" JSON_INTEGER_FORMAT
                " sent, %" JSON_INTEGER_FORMAT " accepted again, %" JSON_INTEGER_FORMAT
                " rejected, %" JSON_INTEGER_FORMAT " unanswered\n",
                json_integer_value(json_object_get(r, "sent")),
                json_integer_value(json_object_get(r, "accepted")),
                json_integer_value(json_object_get(r, "rejected")),
                json_integer_value(json_object_get(r, "unanswered")));
}

void results_mix_warnings(const json_t *mix, json_t *warnings)
{
    char buf[512];
    size_t i;
    const json_t *s;
    json_array_foreach(json_object_get(mix, "substituted"), i, s)
    {
        snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT " %s asked were sent as %s: %s",
                 json_integer_value(json_object_get(s, "count")),
                 json_string_value(json_object_get(s, "asked")),
                 json_string_value(json_object_get(s, "sent_as")),
                 json_string_value(json_object_get(s, "why")));
        json_array_append_new(warnings, json_string(buf));
    }
    /* over 1,000 activities a kind is sent within a point of its share unless substituted */
    if (json_integer_value(json_object_get(mix, "activities")) < 1000)
        return;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)json_object_get(mix, "kinds"), k, v)
    {
        double asked = json_number_value(json_object_get(v, "asked_pct")),
               sent = json_number_value(json_object_get(v, "sent_pct"));
        if (fabs(asked - sent) > 1.0) {
            snprintf(buf, sizeof(buf), "%s sent at %.1f%% where %.1f%% was asked", k, sent, asked);
            json_array_append_new(warnings, json_string(buf));
        }
    }
}

static void add_int(json_t *to, const json_t *from, const char *k)
{
    json_object_set_new(to, k,
                        json_integer(json_integer_value(json_object_get(to, k)) +
                                     json_integer_value(json_object_get(from, k))));
}

void results_mix_add(json_t *acc, const json_t *mix)
{
    if (!json_is_object(mix))
        return;
    add_int(acc, mix, "activities");
    json_t *kinds = json_object_get(acc, "kinds");
    if (!kinds) {
        kinds = json_object();
        json_object_set_new(acc, "kinds", kinds);
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)json_object_get(mix, "kinds"), k, v)
    {
        json_t *a = json_object_get(kinds, k);
        if (!a) {
            a = json_object();
            json_object_set_new(a, "asked_pct",
                                json_real(json_number_value(json_object_get(v, "asked_pct"))));
            json_object_set_new(kinds, k, a);
        }
        add_int(a, v, "sent");
        add_int(a, v, "drawn");
    }
    json_t *subs = json_object_get(acc, "substituted");
    if (!subs) {
        subs = json_array();
        json_object_set_new(acc, "substituted", subs);
    }
    size_t i, j;
    json_t *s, *t;
    json_array_foreach(json_object_get(mix, "substituted"), i, s)
    {
        int found = 0;
        json_array_foreach(subs, j, t)
        {
            if (json_equal(json_object_get(t, "asked"), json_object_get(s, "asked")) &&
                json_equal(json_object_get(t, "sent_as"), json_object_get(s, "sent_as"))) {
                add_int(t, s, "count");
                found = 1;
            }
        }
        if (!found)
            json_array_append_new(subs, json_deep_copy(s));
    }
    const json_t *rf = json_object_get(mix, "refollows");
    if (rf) {
        json_t *a = json_object_get(acc, "refollows");
        if (!a) {
            a = json_object();
            json_object_set_new(acc, "refollows", a);
        }
        add_int(a, rf, "sent");
        add_int(a, rf, "accepted");
        add_int(a, rf, "rejected");
        add_int(a, rf, "unanswered");
    }
    /* the shares of the whole: each kind's sent over every shard's activities */
    json_int_t n = json_integer_value(json_object_get(acc, "activities"));
    json_object_foreach(kinds, k, v)
    {
        json_int_t sent = json_integer_value(json_object_get(v, "sent"));
        json_object_set_new(v, "sent_pct",
                            json_real(n ? (double)(int64_t)(sent * 10000 / n) / 100 : 0));
    }
}
