/* flood/measure/fanout.h: the target's fan-out, measured at the last follower. Each Create
 * the crowd's inboxes accept is one delivery of a post (its activity id names the post);
 * per post the lag of its first and last delivery (arrival minus the object's published),
 * over all of them the deliveries' lag by instance class (--population), the share that
 * arrived within 10 s and within 60 s, and the most inbox POSTs one instance had in flight
 * at once (the target's concurrent connections to it). Thread-safe. */
#ifndef FLOOD_FANOUT_H
#define FLOOD_FANOUT_H

#include <jansson.h>
#include <stdint.h>

#define FANOUT_POSTS_MAX 65536 /* posts followed (more are counted, not timed) */
#define FANOUT_CLASSES   5     /* the instance classes (population.h's POP__COUNT) */

struct fanout;

/* A record for a crowd of `instances` instances. Never NULL. */
struct fanout *fanout_new(int instances);
void fanout_free(struct fanout *f);

/* One delivery of post `id` (the Create's id) published at pub_us arriving at now_us (wall
 * clock, microseconds) on an instance of class cls (0..FANOUT_CLASSES-1). */
void fanout_add(struct fanout *f, const char *id, int64_t pub_us, int64_t now_us, int cls);

/* An inbox POST to instance i began (delta 1) or ended (-1): in flight now, and its peak. */
void fanout_inflight(struct fanout *f, int instance, int delta);

/* run.json's "fan_out" (a new reference, NULL when no post was seen): posts, deliveries,
 * per post deliveries (min, max), first_ms, last_ms and spread_ms (last minus first) (p50,
 * p99, max over posts),
 * within_10s and within_60s (shares of deliveries), lag_ms_by_class (p50, p99, count), and
 * concurrent_per_instance (the highest peak, the mean peak over instances that had one), and
 * exact.lag_us_by_class (each class's lag histogram in hist_encode text, for flood merge). */
json_t *fanout_json(struct fanout *f, const char *const *class_names);

#endif
