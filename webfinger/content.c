/* webfinger/content.c: content profiles and the seeded drawing of a post (content.h).
 * The distributions: text length log-normal (most posts short, a long tail capped at
 * len_max); mentions and hashtags geometric; hashtags from a fixed vocabulary with Zipf
 * popularity (rank r drawn with weight 1/r^s, so trends form); visibility, content
 * warnings, languages, emoji, links and media by shares; media sizes log-normal. */
#include "webfinger/content.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const tags_base[] = {
    "fediverse",  "photography", "caturday",  "music",    "art",      "linux",   "news",
    "books",      "gaming",      "science",   "climate",  "food",     "travel",  "opensource",
    "politics",   "movies",      "coffee",    "nature",   "dogs",     "history", "space",
    "running",    "cycling",     "gardening", "retro",    "design",   "python",  "rust",
    "mastodon",   "birds",       "knitting",  "football", "poetry",   "anime",   "privacy",
    "selfhosted", "weather",     "tea",       "hiking",   "painting",
};
#define TAGS_BASE (sizeof(tags_base) / sizeof(tags_base[0]))

static const char *const emoji_names[WF_EMOJI_VOCAB] = {
    "blobcat",      "blobcatheart",  "ablobcatwave", "neocat",  "blobfox",  "flood",
    "party_parrot", "thinking_blob", "meow_coffee",  "blobhaj", "verified", "rainbow_flag",
    "catjam",       "blobowo",       "neofox_hug",   "doge",
};

static const char *const langs[WF_LANGS] = {"en", "de", "ja", "es", "fr", "pt", "nl", "it"};
static const double lang_share[WF_LANGS] = {0.55, 0.10, 0.08, 0.07, 0.06, 0.06, 0.04, 0.04};

static const char *const words[64] = {
    "the",     "a",       "fediverse", "today", "really", "people",  "server", "post",
    "think",   "about",   "new",       "just",  "more",   "good",    "time",   "like",
    "photo",   "morning", "coffee",    "train", "city",   "music",   "album",  "read",
    "book",    "weather", "rain",      "sun",   "walk",   "garden",  "code",   "bug",
    "release", "update",  "small",     "big",   "world",  "friends", "thread", "long",
    "short",   "night",   "weekend",   "work",  "home",   "cat",     "dog",    "bird",
    "river",   "sea",     "mountain",  "light", "quiet",  "loud",    "open",   "source",
    "free",    "share",   "learn",     "write", "draw",   "play",    "watch",  "listen",
};

void wf_content_tag(unsigned i, char out[WF_TAG_NAME_MAX])
{
    /* the first TAGS_BASE are words; the rest the same words numbered */
    i %= WF_TAG_VOCAB;
    if (i < TAGS_BASE)
        snprintf(out, WF_TAG_NAME_MAX, "%s", tags_base[i]);
    else
        snprintf(out, WF_TAG_NAME_MAX, "%s%u", tags_base[i % TAGS_BASE], (unsigned)(i / TAGS_BASE));
}

const char *wf_content_emoji(unsigned i)
{
    return emoji_names[i % WF_EMOJI_VOCAB];
}

const char *wf_content_lang(unsigned i)
{
    return langs[i % WF_LANGS];
}

void wf_content_profile_ready(struct wf_content_profile *p)
{
    double sum = 0;
    for (unsigned r = 0; r < WF_TAG_VOCAB; r++) {
        sum += 1.0 / pow((double)(r + 1), p->zipf_s);
        p->tag_cdf[r] = sum;
    }
    for (unsigned r = 0; r < WF_TAG_VOCAB; r++)
        p->tag_cdf[r] /= sum;
}

int wf_content_profile(const char *name, struct wf_content_profile *p, struct flood_err *err)
{
    memset(p, 0, sizeof(*p));
    *p = (struct wf_content_profile){
        .len_median = 120,
        .len_sigma = 1.0,
        .len_max = 5000,
        .mentions_min = 1,
        .mentions_max = 4,
        .tags_min = 0,
        .tags_max = 4,
        .zipf_s = 1.0,
        .vis = {60, 20, 15, 5},
        .cw = 0.08,
        .emoji = 0.10,
        .link = 0.15,
        .media = 0.20,
        .media_max = 4,
        .media_median = 300e3,
        .media_sigma = 1.0,
        .media_cap = 16ULL << 20,
    };
    if (!name || !strcmp(name, "plain")) {
        p->plain = 1;
    } else if (!strcmp(name, "heavy")) {
        p->len_median = 500;
        p->tags_max = 8;
        p->cw = 0.15;
        p->emoji = 0.30;
        p->link = 0.50;
        p->media = 0.60;
        p->media_median = 2e6;
        p->media_sigma = 1.2;
        p->media_cap = 40ULL << 20;
    } else if (strcmp(name, "default") != 0) {
        flood_err_set(err, FLOOD_EINVAL, "content: unknown profile '%.40s' (plain|default|heavy)",
                      name);
        return -1;
    }
    wf_content_profile_ready(p);
    return 0;
}

/* ---- drawing ----------------------------------------------------------------------------- */

static uint64_t mix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double unit(uint64_t *rng)
{
    return (double)(mix64(rng) >> 11) * (1.0 / 9007199254740992.0);
}

static double normal(uint64_t *rng)
{
    double u = unit(rng), v = unit(rng);
    return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

/* k in [lo, hi] with P(k) proportional to q^(k-lo). */
static unsigned geometric(uint64_t *rng, unsigned lo, unsigned hi, double q)
{
    double total = 0, w = 1;
    for (unsigned k = lo; k <= hi; k++, w *= q)
        total += w;
    double r = unit(rng) * total;
    w = 1;
    for (unsigned k = lo; k < hi; k++, w *= q) {
        if (r < w)
            return k;
        r -= w;
    }
    return hi;
}

static unsigned pick(uint64_t *rng, const double *shares, unsigned n)
{
    double total = 0;
    for (unsigned i = 0; i < n; i++)
        total += shares[i];
    double r = unit(rng) * total;
    for (unsigned i = 0; i + 1 < n; i++) {
        if (r < shares[i])
            return i;
        r -= shares[i];
    }
    return n - 1;
}

static unsigned zipf_rank(const struct wf_content_profile *p, uint64_t *rng)
{
    double u = unit(rng);
    unsigned lo = 0, hi = WF_TAG_VOCAB - 1;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (p->tag_cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static void draw_tags(const struct wf_content_profile *p, uint64_t *rng, struct wf_post *o)
{
    unsigned want = geometric(rng, p->tags_min, p->tags_max, 0.5);
    for (unsigned tries = 0; o->n_tags < want && tries < 64; tries++) {
        unsigned t = zipf_rank(p, rng), dup = 0;
        for (unsigned i = 0; i < o->n_tags; i++)
            dup |= o->tag[i] == t;
        if (!dup)
            o->tag[o->n_tags++] = t;
    }
}

static void draw_media(const struct wf_content_profile *p, uint64_t *rng, struct wf_post *o)
{
    static const unsigned aspect[4][2] = {{4, 3}, {16, 9}, {1, 1}, {3, 4}};
    o->n_media = geometric(rng, 1, p->media_max ? p->media_max : 1, 0.35);
    for (unsigned i = 0; i < o->n_media; i++) {
        double b = exp(log(p->media_median) + p->media_sigma * normal(rng));
        if (b > (double)p->media_cap)
            b = (double)p->media_cap;
        const unsigned *a = aspect[mix64(rng) % 4];
        wf_media_fit(mix64(rng), (uint64_t)b, a[0], a[1], &o->media[i]);
    }
}

void wf_content_draw(const struct wf_content_profile *p, uint64_t seed, int crowd_instances,
                     int crowd_actors, int persona, struct wf_post *o)
{
    memset(o, 0, sizeof(*o));
    o->seed = seed;
    o->persona = persona;
    if (p->plain) {
        o->plain = 1;
        return;
    }
    uint64_t rng = seed ^ UINT64_C(0x636f6e74656e74);
    double len = exp(log(p->len_median) + p->len_sigma * normal(&rng));
    o->length = len < 1 ? 1 : len > p->len_max ? p->len_max : (unsigned)len;
    o->vis = (enum wf_vis)pick(&rng, p->vis, WF_VIS__COUNT);
    unsigned mentions = geometric(&rng, p->mentions_min, p->mentions_max, 0.3);
    if (persona && mentions == 0)
        mentions = 1; /* a post addressed to the persona mentions it */
    if (o->vis == WF_VIS_DIRECT && mentions == 0)
        o->vis = WF_VIS_FOLLOWERS; /* a direct post with nobody to address */
    unsigned others = persona ? mentions - 1 : mentions;
    for (unsigned i = 0; i < others && crowd_instances > 0 && crowd_actors > 0; i++) {
        o->mention[i].instance = 1 + (int)(mix64(&rng) % (uint64_t)crowd_instances);
        o->mention[i].actor = 1 + (int)(mix64(&rng) % (uint64_t)crowd_actors);
        o->n_mentions++;
    }
    draw_tags(p, &rng, o);
    o->cw = unit(&rng) < p->cw;
    o->lang = pick(&rng, lang_share, WF_LANGS);
    if (unit(&rng) < p->emoji) {
        o->n_emoji = 1 + (unsigned)(mix64(&rng) % WF_POST_EMOJI_MAX);
        for (unsigned i = 0; i < o->n_emoji; i++)
            o->emoji[i] = (unsigned)((mix64(&rng) >> 8) % WF_EMOJI_VOCAB);
    }
    if (unit(&rng) < p->link) {
        o->link = 1;
        o->page = mix64(&rng) >> 12;
    }
    if (unit(&rng) < p->media)
        draw_media(p, &rng, o);
}

size_t wf_content_words(const struct wf_post *post, char *out, size_t size)
{
    uint64_t rng = post->seed ^ UINT64_C(0x776f726473);
    size_t len = 0;
    if (size == 0)
        return 0;
    out[0] = '\0';
    while (len < post->length) {
        uint64_t r = mix64(&rng);
        for (int k = 0; k < 8 && len < post->length; k++, r >>= 8) {
            const char *w = words[r & 63];
            size_t n = strlen(w);
            if (len + n + 2 > size)
                return len;
            if (len)
                out[len++] = ' ';
            memcpy(out + len, w, n);
            len += n;
            out[len] = '\0';
        }
    }
    return len;
}
