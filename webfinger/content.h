/* webfinger/content.h: what a post carries, drawn from a content profile with a seeded
 * generator (pure: the same profile and seed give the same post, so the crowd rebuilds a
 * post at its id). A post here is numbers (lengths, indexes, sizes); the activity writers
 * turn it into HTML, tags and attachments (activity_build.c).
 *
 * Profiles (--content): "plain" is the one-mention short note flood always sent (byte for
 * byte); "default" a realistic mix; "heavy" more and bigger media, more links, longer text.
 * Each part can be changed with "--content-opt KEY=VALUE,..." (content_opt_apply in
 * flood/send/content_opt.c, which reads the values with flood's grammar). */
#ifndef FLOOD_WF_CONTENT_H
#define FLOOD_WF_CONTENT_H

#include <stddef.h>
#include <stdint.h>

#include "sign/err.h"
#include "webfinger/media.h"

#define WF_POST_MENTIONS_MAX 4
#define WF_POST_TAGS_MAX     8
#define WF_POST_EMOJI_MAX    3
#define WF_POST_MEDIA_MAX    4
#define WF_TAG_VOCAB         128 /* hashtags to draw from, by Zipf-like popularity */
#define WF_EMOJI_VOCAB       16
#define WF_LANGS             8

enum wf_vis { WF_VIS_PUBLIC = 0, WF_VIS_UNLISTED, WF_VIS_FOLLOWERS, WF_VIS_DIRECT, WF_VIS__COUNT };

struct wf_content_profile {
    int plain;                           /* the historical one-mention note: nothing below used */
    double len_median, len_sigma;        /* text characters: log-normal */
    unsigned len_max;                    /* cap of the long tail */
    unsigned mentions_min, mentions_max; /* Mention tags (the persona first), P(k) ~ 0.3^k */
    unsigned tags_min, tags_max;         /* hashtags per post, P(k) ~ 0.5^k */
    double zipf_s;                       /* popularity exponent of the hashtag vocabulary */
    double vis[WF_VIS__COUNT];           /* shares of public, unlisted, followers-only, direct */
    double cw, emoji, link, media;       /* shares of posts with a content warning, custom emoji,
                                            a link to a crowd page, media attachments */
    unsigned media_max;                  /* attachments of a post with media: 1..media_max */
    double media_median, media_sigma;    /* bytes of one attachment: log-normal */
    uint64_t media_cap;                  /* and its largest size */
    double tag_cdf[WF_TAG_VOCAB];        /* filled by wf_content_profile_ready */
};

struct wf_post_mention {
    int instance, actor; /* a crowd account mentioned besides the persona */
};

struct wf_post {
    int plain;
    uint64_t seed;   /* the words, the page and media ids */
    unsigned length; /* characters of running text */
    enum wf_vis vis;
    int persona;         /* the persona is mentioned (first) */
    unsigned n_mentions; /* crowd accounts mentioned besides it */
    struct wf_post_mention mention[WF_POST_MENTIONS_MAX];
    unsigned n_tags, tag[WF_POST_TAGS_MAX]; /* vocabulary indexes, distinct */
    int cw;
    unsigned lang; /* index into the language table */
    unsigned n_emoji, emoji[WF_POST_EMOJI_MAX];
    int link; /* a link to crowd page `page` of the author's instance */
    uint64_t page;
    unsigned n_media;
    struct wf_media media[WF_POST_MEDIA_MAX];
};

/* A named profile ("plain", "default", "heavy") into p, ready to draw from. 0, or -1 and
 * err for another name. */
int wf_content_profile(const char *name, struct wf_content_profile *p,
                       struct flood_err *err) FLOOD_WUR;
/* Recompute what depends on the shares (the hashtag CDF). */
void wf_content_profile_ready(struct wf_content_profile *p);

/* Draw post from the profile with seed (pure). crowd_instances/actors bound the other
 * mentions; persona says whether the post is addressed to a persona (then mentioned
 * first, and a post with no mention at all gets it anyway). */
void wf_content_draw(const struct wf_content_profile *p, uint64_t seed, int crowd_instances,
                     int crowd_actors, int persona, struct wf_post *post);

/* The vocabulary. */
#define WF_TAG_NAME_MAX 24
void wf_content_tag(unsigned i, char out[WF_TAG_NAME_MAX]); /* "fediverse", ... (a-z0-9) */
const char *wf_content_emoji(unsigned i);                   /* "blobcat", ... (a-z0-9_) */
const char *wf_content_lang(unsigned i);                    /* "en", "de", ... */
/* The running text of post into out (at most size-1 bytes, NUL-terminated): words from a
 * fixed list, HTML-safe (a-z and spaces). Returns its length. */
size_t wf_content_words(const struct wf_post *post, char *out, size_t size);

#endif
