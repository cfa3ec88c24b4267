/* flood/report/users.c: a rate as the active users whose inbound federation it is (the
 * model in users.h). */
#include "flood/report/users.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "flood/core/grammar.h"

void users_model_defaults(struct users_model *m)
{
    /* Each an assumption where docs/LOAD.md does not name a source: a starting point to be
     * replaced by a server's own figures (its admin dashboard, or its database). */
    *m = (struct users_model){
        .follows = 150,
        .remote = 0.8,
        .unique = 0.5,
        .posts = 2,
        .boosts = 1,
        .edits = 0.2,
        .local_posts = 1,
        .likes_in = 3,
        .boosts_in = 1,
        .replies_in = 0.5,
        .peak = 2,
    };
}

enum kind { COUNT, SHARE, FACTOR };

static const struct {
    const char *key;
    size_t off;
    enum kind kind;
} keys[] = {
    {"follows", offsetof(struct users_model, follows), COUNT},
    {"remote", offsetof(struct users_model, remote), SHARE},
    {"unique", offsetof(struct users_model, unique), SHARE},
    {"posts", offsetof(struct users_model, posts), COUNT},
    {"boosts", offsetof(struct users_model, boosts), COUNT},
    {"edits", offsetof(struct users_model, edits), COUNT},
    {"local-posts", offsetof(struct users_model, local_posts), COUNT},
    {"likes-in", offsetof(struct users_model, likes_in), COUNT},
    {"boosts-in", offsetof(struct users_model, boosts_in), COUNT},
    {"replies-in", offsetof(struct users_model, replies_in), COUNT},
    {"peak", offsetof(struct users_model, peak), FACTOR},
};

int users_model_parse(struct users_model *m, const char *spec, struct flood_err *err)
{
    struct users_model t = *m;
    struct gram_list l;
    struct gram_item it;
    gram_list_init(&l, spec, GRAM_NUL, ',');
    while (gram_list_next(&l, &it)) {
        size_t k = 0;
        while (k < sizeof(keys) / sizeof(keys[0]) && !gram_eq(it.key, it.key_n, keys[k].key))
            k++;
        if (k == sizeof(keys) / sizeof(keys[0]) || !it.val) {
            flood_err_set(err, FLOOD_EINVAL,
                          "--users-model: expected KEY=VALUE with KEY one of follows, remote, "
                          "unique, posts, boosts, edits, local-posts, likes-in, boosts-in, "
                          "replies-in, peak, got '%.*s'",
                          (int)(it.n > 60 ? 60 : it.n), it.s);
            return -1;
        }
        char what[48];
        snprintf(what, sizeof(what), "--users-model %s", keys[k].key);
        double *v = (double *)((char *)&t + keys[k].off);
        int rc = keys[k].kind == SHARE
                     ? gram_share(what, it.val, it.val_n, GRAM_SHARE_FRACTION, 0, 1, v, err)
                 : keys[k].kind == FACTOR ? gram_real(what, it.val, it.val_n, 1, 100, v, err)
                                          : gram_real(what, it.val, it.val_n, 0, 1e6, v, err);
        if (rc)
            return -1;
    }
    if (users_per_user_rate(&t) <= 0) {
        flood_err_set(err, FLOOD_EINVAL, "--users-model: '%s' gives a user no inbound activity",
                      spec);
        return -1;
    }
    *m = t;
    return 0;
}

double users_per_user_rate(const struct users_model *m)
{
    double followed = m->follows * m->remote * m->unique * (m->posts + m->boosts + m->edits);
    double received = m->local_posts * (m->likes_in + m->boosts_in + m->replies_in);
    return (followed + received) / 86400.0 * m->peak;
}

double users_for_rate(const struct users_model *m, double rate)
{
    double per = users_per_user_rate(m);
    return per > 0 && rate > 0 ? rate / per : 0;
}

/* n to two significant figures, with thousands separators: "9,000", "46,000", "220". */
static void people(double n, char *buf, size_t size)
{
    if (n < 1) {
        snprintf(buf, size, "%.2g", n);
        return;
    }
    double mag = pow(10, floor(log10(n)) - 1);
    unsigned long long v = (unsigned long long)(round(n / mag) * mag + 0.5);
    char digits[32];
    snprintf(digits, sizeof(digits), "%llu", v);
    size_t len = strlen(digits), o = 0;
    for (size_t i = 0; i < len && o + 2 < size; i++) {
        if (i && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
}

void users_phrase(const struct users_model *m, double rate, char *buf, size_t size)
{
    char n[32];
    people(users_for_rate(m, rate), n, sizeof(n));
    snprintf(buf, size,
             " ≈ the inbound federation of %s active users at peak (model: follows=%g, "
             "remote=%g%%, unique=%g%%, posts=%g, boosts=%g, edits=%g, local-posts=%g, "
             "likes-in=%g, boosts-in=%g, replies-in=%g, peak=%g: %.3g activities a second a "
             "user at peak)",
             n, m->follows, m->remote * 100, m->unique * 100, m->posts, m->boosts, m->edits,
             m->local_posts, m->likes_in, m->boosts_in, m->replies_in, m->peak,
             users_per_user_rate(m));
}

json_t *users_json(const struct users_model *m, double rate)
{
    json_t *model = json_object();
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
        json_object_set_new(model, keys[k].key,
                            json_real(*(const double *)((const char *)m + keys[k].off)));
    return json_pack("{s:f, s:f, s:f, s:o}", "rate_per_s", rate, "users",
                     floor(users_for_rate(m, rate)), "per_user_peak_per_s", users_per_user_rate(m),
                     "model", model);
}
