/* flood/measure/tqueue.c: target-queue sources parsed, and the sampler thread that reads
 * them once a second (the model in tqueue.h). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flood/core/clock.h"
#include "flood/measure/tqueue_int.h"

static const char *const role_names[TQ__ROLES] = {
    "inbound", "outbound", "fetch", "retry", "scheduled", "dead", "active", "other",
};

const char *tq_role_name(enum tq_role r)
{
    return (unsigned)r < TQ__ROLES ? role_names[r] : "other";
}

double tq_reading_sum(const struct tq_reading *r, enum tq_role role, int *have)
{
    double sum = 0;
    int any = 0;
    for (size_t i = 0; r->ok && i < r->n; i++)
        if (r->g[i].role == role) {
            sum += r->g[i].value;
            any = 1;
        }
    if (have)
        *have = any;
    return sum;
}

/* URL#FRAGMENT into s->url and the part after '#' (NULL when there is none). */
static char *split_fragment(struct tq_source *s, const char *rest)
{
    const char *hash = strchr(rest, '#');
    s->url = hash ? flood_xstrndup(rest, (size_t)(hash - rest)) : flood_xstrdup(rest);
    return hash ? flood_xstrdup(hash + 1) : NULL;
}

static int parse_http(struct tq_source *s, const char *rest, struct flood_err *err)
{
    char *frag = split_fragment(s, rest);
    if (strncmp(s->url, "http://", 7) && strncmp(s->url, "https://", 8)) {
        free(frag);
        flood_err_set(err, FLOOD_EINVAL, "--target-queue '%s': expected an http(s) URL", s->spec);
        return -1;
    }
    if (s->kind == TQ_FEDIFY) {
        free(frag);
        return 0;
    }
    if (!frag || !*frag) {
        free(frag);
        flood_err_set(err, FLOOD_EINVAL, "--target-queue '%s': expected URL#%s", s->spec,
                      s->kind == TQ_JSON ? "PATH (e.g. #queue.depth)"
                                         : "METRIC{LABELS} (e.g. #jobs_waiting{queue=\"inbox\"})");
        return -1;
    }
    if (s->kind == TQ_JSON) {
        s->path = frag;
        return 0;
    }
    char *brace = strchr(frag, '{');
    size_t fl = strlen(frag);
    if (brace && frag[fl - 1] != '}') {
        free(frag);
        flood_err_set(err, FLOOD_EINVAL, "--target-queue '%s': labels must end with '}'", s->spec);
        return -1;
    }
    s->metric = brace ? flood_xstrndup(frag, (size_t)(brace - frag)) : flood_xstrdup(frag);
    s->labels = flood_xstrdup(brace ? brace : "");
    free(frag);
    return 0;
}

struct tq_source *tq_source_new(const char *spec, struct flood_err *err)
{
    static const struct {
        const char *prefix;
        enum tq_kind kind;
    } kinds[] = {{"sidekiq:", TQ_SIDEKIQ},       {"bullmq:", TQ_BULLMQ}, {"fedify:", TQ_FEDIFY},
                 {"prometheus:", TQ_PROMETHEUS}, {"json:", TQ_JSON},     {"cmd:", TQ_CMD}};
    for (size_t i = 0; spec && i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        size_t pl = strlen(kinds[i].prefix);
        if (strncmp(spec, kinds[i].prefix, pl))
            continue;
        struct tq_source *s = flood_xcalloc(1, sizeof(*s));
        s->kind = kinds[i].kind;
        s->spec = flood_xstrdup(spec);
        const char *rest = spec + pl;
        int rc = 0;
        if (s->kind == TQ_SIDEKIQ || s->kind == TQ_BULLMQ)
            rc = tq_redis_parse(s, rest, err);
        else if (s->kind == TQ_CMD) {
            if (!*rest) {
                flood_err_set(err, FLOOD_EINVAL, "--target-queue '%s': expected cmd:COMMAND", spec);
                rc = -1;
            }
            s->path = flood_xstrdup(rest);
        } else
            rc = parse_http(s, rest, err);
        if (rc) {
            tq_source_free(s);
            return NULL;
        }
        return s;
    }
    flood_err_set(err, FLOOD_EINVAL,
                  "--target-queue: expected sidekiq:redis://HOST:PORT/DB, "
                  "bullmq:redis://HOST:PORT/DB[?prefix=P], fedify:URL, "
                  "prometheus:URL#METRIC{LABELS}, json:URL#PATH or cmd:COMMAND, got '%.80s'",
                  spec ? spec : "");
    return NULL;
}

void tq_source_free(struct tq_source *s)
{
    if (!s)
        return;
    tq_redis_close(s);
    for (size_t i = 0; i < s->n_queues; i++)
        free(s->queues[i]);
    free(s->queues);
    free(s->spec);
    free(s->host);
    free(s->password);
    free(s->prefix);
    free(s->url);
    free(s->metric);
    free(s->labels);
    free(s->path);
    free(s);
}

void tq_source_read(struct tq_source *s, struct tq_reading *r)
{
    memset(r, 0, sizeof(*r));
    r->ok = 1;
    if (s->kind == TQ_SIDEKIQ || s->kind == TQ_BULLMQ)
        tq_redis_read(s, r);
    else
        tq_http_read(s, r);
}

/* ---- the sampler ------------------------------------------------------------------------ */

/* One second's reading of one source. */
struct tq_slot {
    int64_t t; /* the second, from t0; -1 for none yet */
    struct tq_reading r;
};

/* What the run keeps of each gauge of a source: its role, last and largest value. */
struct tq_track {
    char name[TQ_NAME_MAX];
    enum tq_role role;
    double last, max;
};

struct tq_sampler;

struct tq_src_state {
    struct tq_sampler *sm;
    struct tq_source *src;
    char label[32];        /* "sidekiq", "sidekiq#2" */
    struct tq_slot *slots; /* one a second, grown as the run goes */
    size_t n_slots;
    uint64_t readings, missing;
    char first_why[200], last_why[200];
    struct tq_track track[TQ_GAUGES_MAX];
    size_t n_track;
    double inbound; /* the last reading's inbound sum */
    int inbound_have;
    pthread_t thread;
    int started;
};

/* Each source on a thread of its own, so a source that times out leaves the others'
 * seconds whole; the readings are kept under one lock. */
struct tq_sampler {
    const char *cmd;
    int quiet;
    int64_t t0;
    struct tq_src_state src[TQ_SOURCES_MAX];
    size_t n;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int stop, running;
};

static void track(struct tq_src_state *st, const struct tq_reading *r)
{
    for (size_t i = 0; i < r->n; i++) {
        struct tq_track *t = NULL;
        for (size_t k = 0; k < st->n_track && !t; k++)
            if (!strcmp(st->track[k].name, r->g[i].name))
                t = &st->track[k];
        if (!t && st->n_track < TQ_GAUGES_MAX) {
            t = &st->track[st->n_track++];
            snprintf(t->name, sizeof(t->name), "%s", r->g[i].name);
            t->role = r->g[i].role;
            t->max = r->g[i].value;
        }
        if (t) {
            t->last = r->g[i].value;
            if (r->g[i].value > t->max)
                t->max = r->g[i].value;
        }
    }
}

/* Keep a reading as second t's (the last one taken in a second wins). Under the lock. */
static void keep(struct tq_sampler *sm, struct tq_src_state *st, int64_t t,
                 const struct tq_reading *r)
{
    if (t < 0)
        t = 0;
    if ((size_t)t >= st->n_slots) {
        size_t n = (size_t)t + 64;
        st->slots = flood_xrealloc(st->slots, n * sizeof(*st->slots));
        for (size_t i = st->n_slots; i < n; i++)
            st->slots[i].t = -1;
        st->n_slots = n;
    }
    st->slots[t].t = t;
    st->slots[t].r = *r;
    st->readings++;
    if (!r->ok) {
        st->missing++;
        int changed = strcmp(st->last_why, r->why) != 0;
        if (!st->first_why[0])
            snprintf(st->first_why, sizeof(st->first_why), "%s", r->why);
        snprintf(st->last_why, sizeof(st->last_why), "%s", r->why);
        if (changed && !sm->quiet)
            fprintf(stderr, "flood: %s: --target-queue %s: %s (its samples are missing)\n", sm->cmd,
                    st->src->spec, r->why);
    } else {
        st->last_why[0] = '\0';
        track(st, r);
    }
}

/* Sleep until the monotonic time `at` or a stop, under the lock. 1 when stopping. */
static int wait_until(struct tq_sampler *sm, int64_t at)
{
    while (!sm->stop) {
        int64_t left = at - clock_mono_ns();
        if (left <= 0)
            return 0;
        struct timespec until = clock_wall_after_us(left / 1000 + 1);
        pthread_cond_timedwait(&sm->wake, &sm->lock, &until);
    }
    return 1;
}

/* One source: a reading at each whole second from t0 (and one at once); a reading that
 * takes past the next second's start leaves that second to the next reading. */
static void *sampler_main(void *arg)
{
    struct tq_src_state *st = arg;
    struct tq_sampler *sm = st->sm;
    struct tq_reading *r = flood_xmalloc(sizeof(*r));
    pthread_mutex_lock(&sm->lock);
    while (!sm->stop) {
        pthread_mutex_unlock(&sm->lock);
        tq_source_read(st->src, r);
        int64_t now = clock_mono_ns(), t = (now - sm->t0) / 1000000000;
        pthread_mutex_lock(&sm->lock);
        keep(sm, st, t, r);
        st->inbound = tq_reading_sum(r, TQ_INBOUND, &st->inbound_have); /* none when failed */
        /* the next whole second from t0 (before the start: the start itself) */
        int64_t next = now < sm->t0 ? sm->t0 : sm->t0 + (t + 1) * 1000000000;
        if (wait_until(sm, next))
            break;
    }
    pthread_mutex_unlock(&sm->lock);
    free(r);
    return NULL;
}

struct tq_sampler *tq_sampler_start(const char *cmd, const char *const *specs, size_t n,
                                    int64_t t0_mono_ns, int quiet, struct flood_err *err)
{
    if (n > TQ_SOURCES_MAX) {
        flood_err_set(err, FLOOD_ELIMIT, "--target-queue: at most %d sources", TQ_SOURCES_MAX);
        return NULL;
    }
    struct tq_sampler *sm = flood_xcalloc(1, sizeof(*sm));
    sm->cmd = cmd;
    sm->quiet = quiet;
    sm->t0 = t0_mono_ns;
    pthread_mutex_init(&sm->lock, NULL);
    pthread_cond_init(&sm->wake, NULL);
    for (size_t i = 0; i < n; i++) {
        struct tq_src_state *st = &sm->src[sm->n];
        if (!(st->src = tq_source_new(specs[i], err))) {
            tq_sampler_free(sm);
            return NULL;
        }
        int same = 0;
        for (size_t k = 0; k < sm->n; k++)
            same += sm->src[k].src->kind == st->src->kind;
        if (same)
            snprintf(st->label, sizeof(st->label), "%s#%d", tq_source_kind(st->src), same + 1);
        else
            snprintf(st->label, sizeof(st->label), "%s", tq_source_kind(st->src));
        sm->n++;
    }
    sm->running = 1;
    for (size_t i = 0; i < sm->n; i++) {
        sm->src[i].sm = sm;
        if (pthread_create(&sm->src[i].thread, NULL, sampler_main, &sm->src[i])) {
            flood_err_set(err, FLOOD_EIO, "--target-queue: cannot start a sampler thread");
            tq_sampler_free(sm);
            return NULL;
        }
        sm->src[i].started = 1;
    }
    return sm;
}

void tq_sampler_stop(struct tq_sampler *sm)
{
    if (!sm || !sm->running)
        return;
    pthread_mutex_lock(&sm->lock);
    sm->stop = 1;
    pthread_cond_broadcast(&sm->wake);
    pthread_mutex_unlock(&sm->lock);
    for (size_t i = 0; i < sm->n; i++)
        if (sm->src[i].started)
            pthread_join(sm->src[i].thread, NULL);
    sm->running = 0;
}

void tq_sampler_free(struct tq_sampler *sm)
{
    if (!sm)
        return;
    tq_sampler_stop(sm);
    for (size_t i = 0; i < sm->n; i++) {
        tq_source_free(sm->src[i].src);
        free(sm->src[i].slots);
    }
    pthread_mutex_destroy(&sm->lock);
    pthread_cond_destroy(&sm->wake);
    free(sm);
}

static json_t *reading_json(const struct tq_reading *r)
{
    if (!r->ok)
        return json_null();
    json_t *o = json_object();
    for (size_t i = 0; i < r->n; i++)
        json_object_set_new(o, r->g[i].name, json_real(r->g[i].value));
    return o;
}

json_t *tq_sampler_second(struct tq_sampler *sm, int64_t t)
{
    if (!sm || t < 0)
        return NULL;
    json_t *o = NULL;
    pthread_mutex_lock(&sm->lock);
    for (size_t i = 0; i < sm->n; i++) {
        const struct tq_src_state *st = &sm->src[i];
        if ((size_t)t >= st->n_slots || st->slots[t].t != t)
            continue;
        if (!o)
            o = json_object();
        json_object_set_new(o, st->label, reading_json(&st->slots[t].r));
    }
    pthread_mutex_unlock(&sm->lock);
    return o;
}

int tq_sampler_inbound(struct tq_sampler *sm, double *depth)
{
    if (!sm)
        return -1;
    double sum = 0;
    int have = 0;
    pthread_mutex_lock(&sm->lock);
    for (size_t i = 0; i < sm->n; i++)
        if (sm->src[i].inbound_have) {
            sum += sm->src[i].inbound;
            have = 1;
        }
    pthread_mutex_unlock(&sm->lock);
    if (have)
        *depth = sum;
    return have ? 0 : -1;
}

json_t *tq_sampler_json(struct tq_sampler *sm)
{
    json_t *a = json_array();
    if (!sm)
        return a;
    pthread_mutex_lock(&sm->lock);
    for (size_t i = 0; i < sm->n; i++) {
        const struct tq_src_state *st = &sm->src[i];
        json_t *g = json_object();
        for (size_t k = 0; k < st->n_track; k++)
            json_object_set_new(g, st->track[k].name,
                                json_pack("{s:s, s:f, s:f}", "role",
                                          tq_role_name(st->track[k].role), "last",
                                          st->track[k].last, "max", st->track[k].max));
        json_array_append_new(
            a,
            json_pack("{s:s, s:s, s:s, s:I, s:I, s:o, s:o, s:o}", "source", st->label, "kind",
                      tq_source_kind(st->src), "spec", st->src->spec, "readings",
                      (json_int_t)st->readings, "missing", (json_int_t)st->missing, "first_failure",
                      st->first_why[0] ? json_string(st->first_why) : json_null(), "last_failure",
                      st->last_why[0] ? json_string(st->last_why) : json_null(), "gauges", g));
    }
    pthread_mutex_unlock(&sm->lock);
    return a;
}
