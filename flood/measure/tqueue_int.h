/* flood/measure/tqueue_int.h: what the target-queue adapters share (not for other rooms). */
#ifndef FLOOD_TQUEUE_INT_H
#define FLOOD_TQUEUE_INT_H

#include "flood/measure/tqueue.h"

enum tq_kind { TQ_SIDEKIQ, TQ_BULLMQ, TQ_FEDIFY, TQ_PROMETHEUS, TQ_JSON, TQ_CMD };

#define TQ_TIMEOUT_MS 2000
#define TQ_BODY_MAX   (4 << 20) /* a stats or metrics document over 4 MiB is refused */

struct tq_source {
    enum tq_kind kind;
    char *spec;
    /* redis: host, port, db, password, the key namespace or prefix */
    char *host, *password, *prefix;
    int port, db;
    void *redis;   /* redisContext, connected on first read */
    char **queues; /* bullmq: each queue's key base ("P:name"), found by SCAN */
    size_t n_queues;
    int64_t discovered_ns; /* bullmq: when the queues were last looked for */
    /* http: the URL, and after '#': the metric and labels, or the JSON path */
    char *url, *metric, *labels, *path;
    /* fedify: the signature histogram's last count and sum, for the mean of each second */
    double sig_count, sig_sum;
    int sig_have;
};

/* Add a gauge to r (ignored past TQ_GAUGES_MAX). */
void tq_add(struct tq_reading *r, const char *name, double value, enum tq_role role);

/* Mark r failed with a printf-style reason. */
void tq_fail(struct tq_reading *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* redis://[:PASS@]HOST:PORT/DB[?namespace=NS|?prefix=P] into s. 0, or -1 and err. */
int tq_redis_parse(struct tq_source *s, const char *url, struct flood_err *err);
void tq_redis_read(struct tq_source *s, struct tq_reading *r);
void tq_redis_close(struct tq_source *s);

/* fedify, prometheus, json, cmd */
void tq_http_read(struct tq_source *s, struct tq_reading *r);

#endif
