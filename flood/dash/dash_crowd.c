/* flood/dash/dash_crowd.c: the rows of a crowd without a sender (flood serve --dashboard):
 * once a second the differences of the crowd's running totals (inbound_json's deliveries,
 * rejections, Accepts sent and faulted answers; the fetch accounting by kind; the server's
 * requests by status) and the fault rules in force. */
#include <stdlib.h>
#include <string.h>

#include "flood/dash/dash.h"

struct dash_crowd {
    struct inbound *in;
    struct fetches *fetches;
    struct server *srv;
    json_t *prev; /* the totals of the last row ({} before the first) */
    struct fetches_kind *fk;
    char (*specs)[FAULT_SPEC_MAX];
};

#define FAULTS_SHOWN 64

struct dash_crowd *dash_crowd_new(struct inbound *in, struct fetches *f, struct server *srv)
{
    struct dash_crowd *c = flood_xcalloc(1, sizeof(*c));
    c->in = in;
    c->fetches = f;
    c->srv = srv;
    c->prev = json_object();
    c->fk = flood_xmalloc(sizeof(*c->fk)); /* a hist: too big for a stack */
    c->specs = flood_xcalloc(FAULTS_SHOWN, FAULT_SPEC_MAX);
    return c;
}

void dash_crowd_free(struct dash_crowd *c)
{
    if (!c)
        return;
    json_decref(c->prev);
    free(c->fk);
    free(c->specs);
    free(c);
}

static json_int_t num(const json_t *o, const char *k)
{
    return (json_int_t)json_number_value(json_object_get(o, k));
}

/* Into row[name]: {KEY: now - before} of every key whose difference is not 0, and "total";
 * now[KEY] replaces before[KEY] for the next row. */
static void diff_object(json_t *row, const char *name, json_t *prev, const json_t *now)
{
    json_t *out = json_object();
    json_t *was = json_object_get(prev, name);
    if (!was) {
        was = json_object();
        json_object_set_new(prev, name, was);
    }
    json_int_t all = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)now, k, v)
    {
        json_int_t d = (json_int_t)json_number_value(v) - num(was, k);
        if (d)
            json_object_set_new(out, k, json_integer(d));
        all += d;
        json_object_set_new(was, k, json_integer((json_int_t)json_number_value(v)));
    }
    json_object_set_new(out, "total", json_integer(all));
    json_object_set_new(row, name, out);
}

/* row[name] = now - prev[name]; prev[name] = now. */
static void diff_count(json_t *row, const char *name, json_t *prev, json_int_t now)
{
    json_object_set_new(row, name, json_integer(now - num(prev, name)));
    json_object_set_new(prev, name, json_integer(now));
}

json_t *dash_crowd_row(struct dash_crowd *c, size_t t)
{
    json_t *row = json_object();
    json_object_set_new(row, "kind", json_string("crowd"));
    json_object_set_new(row, "t", json_integer((json_int_t)t));
    json_t *ib = c->in ? inbound_json(c->in) : json_object();
    json_t *now = json_object();

    diff_object(row, "deliveries", c->prev, json_object_get(ib, "deliveries"));
    json_int_t rejected = 0;
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(ib, "rejected"), k, v) rejected += json_integer_value(v);
    diff_count(row, "rejected", c->prev, rejected);
    json_t *as = json_object_get(ib, "accepts_sent");
    diff_count(row, "accepts_sent", c->prev, num(as, "ok"));
    diff_count(row, "accepts_failed", c->prev, num(as, "failed"));
    diff_object(row, "faulted", c->prev, json_object_get(ib, "faulted"));

    json_t *fc = json_object(), *fb = json_object();
    for (int kind = 0; c->fetches && kind < FETCH__COUNT; kind++) {
        fetches_kind_get(c->fetches, kind, c->fk);
        json_object_set_new(fc, fetch_kind_name(kind), json_integer((json_int_t)c->fk->requests));
        json_object_set_new(fb, fetch_kind_name(kind), json_integer((json_int_t)c->fk->bytes));
    }
    diff_object(row, "fetches", c->prev, fc);
    diff_object(row, "fetch_bytes", c->prev, fb);

    struct server_stats st = {0};
    if (c->srv)
        server_get_stats(c->srv, &st);
    json_object_set_new(now, "2xx", json_integer((json_int_t)st.by_status[2]));
    json_object_set_new(now, "3xx", json_integer((json_int_t)st.by_status[3]));
    json_object_set_new(now, "4xx", json_integer((json_int_t)st.by_status[4]));
    json_object_set_new(now, "5xx", json_integer((json_int_t)st.by_status[5]));
    json_object_set_new(now, "other", json_integer((json_int_t)st.by_status[0]));
    diff_object(row, "status", c->prev, now);
    diff_count(row, "requests", c->prev, (json_int_t)st.requests);

    json_t *faults = json_array();
    int on[FAULTS_SHOWN];
    size_t n = c->in ? inbound_faults(c->in, c->specs, on, FAULTS_SHOWN) : 0;
    for (size_t i = 0; i < n; i++)
        if (on[i])
            json_array_append_new(faults, json_string(c->specs[i]));
    json_object_set_new(row, "faults", faults);

    json_decref(fc);
    json_decref(fb);
    json_decref(now);
    json_decref(ib);
    return row;
}
