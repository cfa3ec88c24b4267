/* flood/measure/tqueue_redis.c: the queues a server keeps in Redis, read with hiredis.
 *
 * Sidekiq (Mastodon), as sidekiq's lib/sidekiq/client.rb writes them and lib/sidekiq/api.rb
 * reads them: the set "queues" names every queue, each queue is the list "queue:NAME"
 * (LPUSH on enqueue), and the sorted sets "retry", "schedule" and "dead" hold the jobs
 * waiting for a retry, scheduled for later and given up. Mastodon puts received activities
 * on "ingress" (app/workers/activitypub/processing_worker.rb), deliveries on "push", fetches
 * on "pull". REDIS_NAMESPACE (older Mastodon) prefixes every key with "NS:".
 *
 * BullMQ (Misskey, any BullMQ app), as bullmq's src/classes/queue-keys.ts names them: a
 * queue's keys are "PREFIX:NAME:TYPE" with the lists wait, paused, active and the sorted
 * sets delayed, prioritized, waiting-children, failed, and a hash "meta" made when the queue
 * is opened (src/classes/queue.ts). Misskey gives each queue the prefix
 * "REDISPREFIX:queue:NAME" (packages/backend/src/queue/const.ts), so its inbox queue's keys
 * are "REDISPREFIX:queue:inbox:inbox:wait" and so on: the queues are found by SCAN for
 * "*:meta" (under ?prefix=P when given), and named by their last part. */
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "flood/core/clock.h"
#include "flood/core/grammar.h"
#include "flood/measure/tqueue_int.h"

#define TQ_REDIS_QUEUES_MAX 32
#define TQ_REDIS_SCAN_MAX   200 /* SCAN rounds before discovery gives up (a huge keyspace) */
#define TQ_REDIS_REDISCOVER 10  /* seconds between looks for new BullMQ queues */

int tq_redis_parse(struct tq_source *s, const char *url, struct flood_err *err)
{
    const char *form = "redis://[:PASSWORD@]HOST:PORT/DB[?namespace=NS or ?prefix=P]";
    if (strncmp(url, "redis://", 8)) {
        flood_err_set(err, FLOOD_EINVAL, "--target-queue '%s': expected %s", s->spec, form);
        return -1;
    }
    const char *p = url + 8, *at = strchr(p, '@'), *q = strchr(p, '?');
    if (at && (!q || at < q)) {
        const char *colon = memchr(p, ':', (size_t)(at - p));
        /* "user:pass@" (Redis 6 ACL users are taken as the password's owner: AUTH pass) */
        s->password = colon ? flood_xstrndup(colon + 1, (size_t)(at - colon - 1))
                            : flood_xstrndup(p, (size_t)(at - p));
        p = at + 1;
    }
    size_t hl = strcspn(p, ":/?");
    if (hl == 0 || p[hl] != ':') {
        flood_err_set(err, FLOOD_EINVAL, "--target-queue '%s': expected %s", s->spec, form);
        return -1;
    }
    s->host = flood_xstrndup(p, hl);
    p += hl + 1;
    size_t pl = strcspn(p, "/?");
    uint64_t port = 0, db = 0;
    struct flood_err e2;
    if (gram_uint("port", p, pl, 1, 65535, &port, &e2)) {
        flood_err_set(err, FLOOD_EINVAL, "--target-queue '%s': bad port in %s", s->spec, form);
        return -1;
    }
    s->port = (int)port;
    p += pl;
    if (*p == '/') {
        size_t dl = strcspn(++p, "?");
        if (dl && gram_uint("db", p, dl, 0, 65535, &db, &e2)) {
            flood_err_set(err, FLOOD_EINVAL, "--target-queue '%s': bad database number", s->spec);
            return -1;
        }
        p += dl;
    }
    s->db = (int)db;
    if (*p == '?') {
        const char *key = s->kind == TQ_SIDEKIQ ? "namespace=" : "prefix=";
        if (strncmp(p + 1, key, strlen(key)) || !p[1 + strlen(key)]) {
            flood_err_set(err, FLOOD_EINVAL, "--target-queue '%s': the only query is ?%sVALUE",
                          s->spec, key);
            return -1;
        }
        s->prefix = flood_xstrdup(p + 1 + strlen(key));
    }
    return 0;
}

void tq_redis_close(struct tq_source *s)
{
    if (s->redis)
        redisFree(s->redis);
    s->redis = NULL;
}

/* A command's reply, or NULL with r failed and the connection dropped (the next read
 * reconnects). An error reply (WRONGTYPE, NOAUTH) fails r too. */
static redisReply *cmd(struct tq_source *s, struct tq_reading *r, int argc, const char **argv)
{
    redisContext *c = s->redis;
    redisReply *rep = redisCommandArgv(c, argc, argv, NULL);
    if (!rep) {
        tq_fail(r, "%s: redis %s:%d: %s", tq_source_kind(s), s->host, s->port,
                c->errstr[0] ? c->errstr : "no answer");
        tq_redis_close(s);
        return NULL;
    }
    if (rep->type == REDIS_REPLY_ERROR) {
        tq_fail(r, "%s: redis %s %s: %.120s", tq_source_kind(s), argv[0], argc > 1 ? argv[1] : "",
                rep->str);
        freeReplyObject(rep);
        return NULL;
    }
    return rep;
}

/* An integer answer (LLEN, ZCARD): 0 and *v, or -1 with r failed. */
static int count(struct tq_source *s, struct tq_reading *r, const char *op, const char *key,
                 long long *v)
{
    const char *argv[] = {op, key};
    redisReply *rep = cmd(s, r, 2, argv);
    if (!rep)
        return -1;
    int ok = rep->type == REDIS_REPLY_INTEGER;
    if (ok)
        *v = rep->integer;
    else
        tq_fail(r, "%s: redis %s %s: not an integer answer", tq_source_kind(s), op, key);
    freeReplyObject(rep);
    return ok ? 0 : -1;
}

static int connect_redis(struct tq_source *s, struct tq_reading *r)
{
    if (s->redis)
        return 0;
    struct timeval tv = {.tv_sec = TQ_TIMEOUT_MS / 1000, .tv_usec = (TQ_TIMEOUT_MS % 1000) * 1000};
    redisContext *c = redisConnectWithTimeout(s->host, s->port, tv);
    if (!c || c->err) {
        tq_fail(r, "%s: redis %s:%d: %s", tq_source_kind(s), s->host, s->port,
                c ? c->errstr : "cannot connect");
        if (c)
            redisFree(c);
        return -1;
    }
    redisSetTimeout(c, tv);
    s->redis = c;
    redisReply *rep;
    if (s->password) {
        const char *argv[] = {"AUTH", s->password};
        if (!(rep = cmd(s, r, 2, argv)))
            return tq_redis_close(s), -1;
        freeReplyObject(rep);
    }
    if (s->db) {
        char db[16];
        snprintf(db, sizeof(db), "%d", s->db);
        const char *argv[] = {"SELECT", db};
        if (!(rep = cmd(s, r, 2, argv)))
            return tq_redis_close(s), -1;
        freeReplyObject(rep);
    }
    return 0;
}

/* Mastodon's queues by what they hold (config/sidekiq.yml's queue list). */
static enum tq_role sidekiq_role(const char *queue)
{
    if (!strcmp(queue, "ingress"))
        return TQ_INBOUND;
    if (!strcmp(queue, "push"))
        return TQ_OUTBOUND;
    if (!strcmp(queue, "pull"))
        return TQ_FETCH;
    return TQ_OTHER;
}

static void sidekiq_read(struct tq_source *s, struct tq_reading *r)
{
    char key[TQ_NAME_MAX + 80];
    const char *ns = s->prefix ? s->prefix : "", *sep = s->prefix ? ":" : "";
    snprintf(key, sizeof(key), "%s%squeues", ns, sep);
    const char *argv[] = {"SMEMBERS", key};
    redisReply *rep = cmd(s, r, 2, argv);
    if (!rep)
        return;
    if (rep->type != REDIS_REPLY_ARRAY) {
        freeReplyObject(rep);
        tq_fail(r, "sidekiq: redis SMEMBERS %s: not a set", key);
        return;
    }
    for (size_t i = 0; i < rep->elements && i < TQ_REDIS_QUEUES_MAX; i++) {
        const redisReply *e = rep->element[i];
        if (e->type != REDIS_REPLY_STRING || e->len >= TQ_NAME_MAX)
            continue;
        long long n;
        snprintf(key, sizeof(key), "%s%squeue:%s", ns, sep, e->str);
        if (count(s, r, "LLEN", key, &n))
            break;
        tq_add(r, e->str, (double)n, sidekiq_role(e->str));
    }
    freeReplyObject(rep);
    static const struct {
        const char *set;
        enum tq_role role;
    } sets[] = {{"retry", TQ_RETRY}, {"schedule", TQ_SCHEDULED}, {"dead", TQ_DEAD}};
    for (size_t i = 0; r->ok && i < sizeof(sets) / sizeof(sets[0]); i++) {
        long long n;
        snprintf(key, sizeof(key), "%s%s%s", ns, sep, sets[i].set);
        if (count(s, r, "ZCARD", key, &n) == 0)
            tq_add(r, sets[i].set, (double)n, sets[i].role);
    }
}

/* Look for BullMQ queues: every "*:meta" hash (under the prefix). */
static void bullmq_discover(struct tq_source *s, struct tq_reading *r)
{
    char match[200];
    snprintf(match, sizeof(match), "%s%s*:meta", s->prefix ? s->prefix : "", s->prefix ? ":" : "");
    char cursor[32] = "0";
    for (int round = 0; round < TQ_REDIS_SCAN_MAX; round++) {
        const char *argv[] = {"SCAN", cursor, "MATCH", match, "COUNT", "1000"};
        redisReply *rep = cmd(s, r, 6, argv);
        if (!rep)
            return;
        if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
            rep->element[0]->type != REDIS_REPLY_STRING ||
            rep->element[1]->type != REDIS_REPLY_ARRAY) {
            freeReplyObject(rep);
            tq_fail(r, "bullmq: redis SCAN: an answer of another shape");
            return;
        }
        snprintf(cursor, sizeof(cursor), "%s", rep->element[0]->str);
        const redisReply *keys = rep->element[1];
        for (size_t i = 0; i < keys->elements; i++) {
            const redisReply *k = keys->element[i];
            if (k->type != REDIS_REPLY_STRING || k->len < 6 || k->len > 150)
                continue;
            char *base = flood_xstrndup(k->str, k->len - 5); /* less ":meta" */
            int known = 0;
            for (size_t q = 0; q < s->n_queues && !known; q++)
                known = !strcmp(s->queues[q], base);
            if (known || s->n_queues >= TQ_REDIS_QUEUES_MAX || !strrchr(base, ':')) {
                free(base);
                continue;
            }
            s->queues = flood_xrealloc(s->queues, (s->n_queues + 1) * sizeof(*s->queues));
            s->queues[s->n_queues++] = base;
        }
        freeReplyObject(rep);
        if (!strcmp(cursor, "0"))
            break;
    }
    s->discovered_ns = clock_mono_ns();
}

static enum tq_role bullmq_role(const char *queue)
{
    /* Misskey's queue names (packages/backend/src/queue/const.ts) */
    if (!strcmp(queue, "inbox"))
        return TQ_INBOUND;
    if (!strcmp(queue, "deliver"))
        return TQ_OUTBOUND;
    return TQ_OTHER;
}

static void bullmq_read(struct tq_source *s, struct tq_reading *r)
{
    if (!s->discovered_ns ||
        clock_mono_ns() - s->discovered_ns > TQ_REDIS_REDISCOVER * 1000000000LL)
        bullmq_discover(s, r);
    if (!r->ok)
        return;
    if (!s->n_queues) {
        tq_fail(r, "bullmq: no queue found (no key matches '%s%s*:meta')",
                s->prefix ? s->prefix : "", s->prefix ? ":" : "");
        return;
    }
    static const struct {
        const char *type, *op, *gauge; /* gauge NULL: added into "waiting" */
        enum tq_role role;
    } parts[] = {
        {"wait", "LLEN", NULL, TQ_OTHER},         {"paused", "LLEN", NULL, TQ_OTHER},
        {"prioritized", "ZCARD", NULL, TQ_OTHER}, {"waiting-children", "ZCARD", NULL, TQ_OTHER},
        {"active", "LLEN", "active", TQ_ACTIVE},  {"delayed", "ZCARD", "delayed", TQ_SCHEDULED},
        {"failed", "ZCARD", "failed", TQ_DEAD},
    };
    for (size_t q = 0; q < s->n_queues && r->ok; q++) {
        const char *name = strrchr(s->queues[q], ':') + 1;
        long long waiting = 0;
        for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]) && r->ok; i++) {
            char key[200], gauge[TQ_NAME_MAX];
            long long n;
            snprintf(key, sizeof(key), "%s:%s", s->queues[q], parts[i].type);
            if (count(s, r, parts[i].op, key, &n))
                break;
            if (!parts[i].gauge) {
                waiting += n;
                continue;
            }
            snprintf(gauge, sizeof(gauge), "%.40s.%s", name, parts[i].gauge);
            tq_add(r, gauge, (double)n, parts[i].role);
        }
        if (r->ok) {
            char gauge[TQ_NAME_MAX];
            snprintf(gauge, sizeof(gauge), "%.40s.waiting", name);
            enum tq_role role = bullmq_role(name);
            tq_add(r, gauge, (double)waiting, role == TQ_OTHER ? TQ_OTHER : role);
        }
    }
}

void tq_redis_read(struct tq_source *s, struct tq_reading *r)
{
    if (connect_redis(s, r))
        return;
    if (s->kind == TQ_SIDEKIQ)
        sidekiq_read(s, r);
    else
        bullmq_read(s, r);
}
