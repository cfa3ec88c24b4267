/* flood/send/content_opt.c: --content-opt (see content_opt.h), each value read by the
 * grammar, each refusal naming the key and the forms. */
#include "flood/send/content_opt.h"

#include <stdio.h>
#include <string.h>

#include "flood/core/grammar.h"

const char content_opt_help[] =
    "length=MEDIAN, length-max=N (text characters, log-normal), mentions=A-B, hashtags=A-B,\n"
    "zipf=S (hashtag popularity), visibility=PUB/UNL/FOL/DIR (weights), cw=P%, emoji=P%,\n"
    "links=P%, media=P% (or a fraction: cw=0.08), media-count=N (1..4), media-size=BYTES\n"
    "(median; 300k, 2m, 2MiB), media-max=BYTES";

enum key {
    K_LENGTH,
    K_LENGTH_MAX,
    K_MENTIONS,
    K_HASHTAGS,
    K_ZIPF,
    K_VISIBILITY,
    K_CW,
    K_EMOJI,
    K_LINKS,
    K_MEDIA,
    K_MEDIA_COUNT,
    K_MEDIA_SIZE,
    K_MEDIA_MAX,
    K__COUNT
};

static const char *const key_names[K__COUNT] = {
    "length", "length-max", "mentions", "hashtags",    "zipf",       "visibility", "cw",
    "emoji",  "links",      "media",    "media-count", "media-size", "media-max",
};

/* "PUB/UNL/FOL/DIR": four weights, not all 0. */
static int visibility(const char *what, const char *s, size_t n, double vis[WF_VIS__COUNT],
                      struct flood_err *err)
{
    double w[WF_VIS__COUNT], total = 0;
    int k = 0, bad = 0;
    struct gram_list l;
    struct gram_item it;
    gram_list_init(&l, s, n, '/');
    while (!bad && gram_list_next(&l, &it)) {
        bad = k == WF_VIS__COUNT || gram_real(what, it.s, it.n, 0, 1e6, &w[k], err);
        if (!bad)
            total += w[k++];
    }
    if (bad || k != WF_VIS__COUNT || !(total > 0)) {
        flood_err_set(err, FLOOD_EINVAL,
                      "%s: expected four weights PUB/UNL/FOL/DIR, each a number from 0 to 1e6, "
                      "not all 0 (60/20/15/5), got '%.*s'",
                      what, (int)(n > 40 ? 40 : n), s);
        return -1;
    }
    memcpy(vis, w, sizeof(w));
    return 0;
}

/* One KEY=VALUE into p. */
static int one(struct wf_content_profile *p, int key, const char *v, size_t n,
               struct flood_err *err)
{
    char what[48];
    snprintf(what, sizeof(what), "--content-opt %s", key_names[key]);
    uint64_t u;
    double *share[] = {
        [K_CW] = &p->cw, [K_EMOJI] = &p->emoji, [K_LINKS] = &p->link, [K_MEDIA] = &p->media};
    switch ((enum key)key) {
    case K_LENGTH:
        return gram_real(what, v, n, 1, 100000, &p->len_median, err);
    case K_LENGTH_MAX:
        if (gram_uint(what, v, n, 1, 100000, &u, err))
            return -1;
        p->len_max = (unsigned)u;
        return 0;
    case K_MENTIONS:
    case K_HASHTAGS: {
        uint64_t a, b;
        if (gram_uint_range(what, v, n, 0,
                            key == K_MENTIONS ? WF_POST_MENTIONS_MAX : WF_POST_TAGS_MAX, &a, &b,
                            err))
            return -1;
        *(key == K_MENTIONS ? &p->mentions_min : &p->tags_min) = (unsigned)a;
        *(key == K_MENTIONS ? &p->mentions_max : &p->tags_max) = (unsigned)b;
        return 0;
    }
    case K_ZIPF:
        return gram_real(what, v, n, 0, 5, &p->zipf_s, err);
    case K_VISIBILITY:
        return visibility(what, v, n, p->vis, err);
    case K_CW:
    case K_EMOJI:
    case K_LINKS:
    case K_MEDIA:
        return gram_share(what, v, n, GRAM_SHARE_FRACTION, 0, 1, share[key], err);
    case K_MEDIA_COUNT:
        if (gram_uint(what, v, n, 1, WF_POST_MEDIA_MAX, &u, err))
            return -1;
        p->media_max = (unsigned)u;
        return 0;
    case K_MEDIA_SIZE:
        if (gram_size(what, v, n, 100, 1000000000, &u, err))
            return -1;
        p->media_median = (double)u;
        return 0;
    case K_MEDIA_MAX:
        return gram_size(what, v, n, 100, 1000000000, &p->media_cap, err);
    case K__COUNT:
        break;
    }
    return -1;
}

int content_opt_apply(struct wf_content_profile *p, const char *opts, struct flood_err *err)
{
    struct gram_list l;
    struct gram_item it;
    gram_list_init(&l, opts, GRAM_NUL, ',');
    while (gram_list_next(&l, &it)) {
        int key;
        if (!it.val) {
            flood_err_set(err, FLOOD_EINVAL,
                          "--content-opt: expected KEY=VALUE[,KEY=VALUE...] (media=50%%,"
                          "media-size=300k), got '%.*s'",
                          (int)(it.n > 40 ? 40 : it.n), it.s);
            return -1;
        }
        if (gram_keyword("--content-opt", it.key, it.key_n, key_names, K__COUNT, &key, err) ||
            one(p, key, it.val, it.val_n, err))
            return -1;
    }
    p->plain = 0;
    wf_content_profile_ready(p);
    return 0;
}
