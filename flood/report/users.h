/* flood/report/users.h: a rate of inbound activities in the terms a server admin thinks in,
 * the active users whose inbound federation it is at the day's peak (--users-model).
 *
 * The model (docs/LOAD.md, "From a rate to users"): each active local user follows
 * `follows` accounts, a share `remote` of them on other servers; the server receives each
 * remote account's activities once, at its shared inbox, however many local users follow
 * it, so only a share `unique` of those follows are accounts no other local user follows
 * already. Each followed remote account sends `posts` (replies included), `boosts`, `likes`
 * and `edits` (edits, deletes, profile updates) a day to its followers' servers; each local
 * user writes `local_posts` a day, and each gets `replies_in`, `likes_in` and `boosts_in`
 * from other servers. So a user brings, a day:
 *   follows x remote x unique x (posts + boosts + edits) + local_posts x (likes_in +
 *   boosts_in + replies_in)
 * inbound activities (`likes` counts only towards what a user receives: a like reaches the
 * liked post's server alone), and the peak second is `peak` times the day's average.
 * Pure: no I/O. */
#ifndef FLOOD_USERS_H
#define FLOOD_USERS_H

#include <jansson.h>

#include "sign/err.h"

struct users_model {
    double follows, remote, unique;         /* per active user */
    double posts, boosts, edits;            /* per followed remote account, a day */
    double local_posts;                     /* per active user, a day */
    double likes_in, boosts_in, replies_in; /* per local post, from other servers */
    double peak;                            /* the busiest second over the day's mean */
};

/* The defaults (docs/LOAD.md says where each comes from and which are assumptions). */
void users_model_defaults(struct users_model *m);

/* Change the parts named in spec ("follows=150,remote=70%,peak=3"; shares as NN% or a
 * fraction): 0, or -1 and err naming the key and its forms. */
int users_model_parse(struct users_model *m, const char *spec, struct flood_err *err) FLOOD_WUR;

/* Inbound activities a user brings at the peak, per second. */
double users_per_user_rate(const struct users_model *m);

/* The active users whose peak inbound federation is `rate` activities a second. */
double users_for_rate(const struct users_model *m, double rate);

/* " ≈ the inbound federation of 9,000 active users at peak (model: follows=..., ...)"
 * into buf. */
void users_phrase(const struct users_model *m, double rate, char *buf, size_t size);

/* The model's parameters and the figure: {"users": N, "per_user_peak_per_s": x, "model":
 * {...}} (a new reference). */
json_t *users_json(const struct users_model *m, double rate);

#endif
