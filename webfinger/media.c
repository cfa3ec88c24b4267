#include "webfinger/media.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define PNG_STORED_BLOCK 65535u /* the largest stored deflate block */
#define PNG_PAD_MIN      12u    /* an empty chunk: length, type, CRC */

static uint64_t mix64(uint64_t z)
{
    z += UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

uint64_t wf_media_min_bytes(unsigned width, unsigned height)
{
    uint64_t raw = (uint64_t)height * (1 + 3 * (uint64_t)width); /* a filter byte a row */
    uint64_t blocks = raw ? (raw + PNG_STORED_BLOCK - 1) / PNG_STORED_BLOCK : 1;
    uint64_t zlib = 2 + raw + 5 * blocks + 4;
    return 8 + 25 + (12 + zlib) + 12; /* signature, IHDR, IDAT, IEND */
}

/* bytes as a PNG of m's dimensions can be: the minimum, or at least a padding chunk more */
static uint64_t padded(uint64_t min, uint64_t bytes)
{
    if (bytes <= min)
        return min;
    return bytes - min < PNG_PAD_MIN ? min + PNG_PAD_MIN : bytes;
}

void wf_media_fit(uint64_t id, uint64_t bytes, unsigned aspect_w, unsigned aspect_h,
                  struct wf_media *m)
{
    if (!aspect_w || !aspect_h)
        aspect_w = aspect_h = 1;
    if (bytes > WF_MEDIA_BYTES_MAX)
        bytes = WF_MEDIA_BYTES_MAX;
    /* about 3 bytes a pixel: start from the estimate, then step down until it fits */
    double px = bytes > 200 ? (double)(bytes - 200) / 3.0 : 1.0;
    double k = sqrt(px / ((double)aspect_w * aspect_h));
    double w = floor(k * aspect_w), h = floor(k * aspect_h);
    if (w > WF_MEDIA_DIM_MAX)
        w = WF_MEDIA_DIM_MAX;
    if (h > WF_MEDIA_DIM_MAX)
        h = WF_MEDIA_DIM_MAX;
    if (w < 1)
        w = 1;
    if (h < 1)
        h = 1;
    m->id = id;
    m->width = (unsigned)w;
    m->height = (unsigned)h;
    while (wf_media_min_bytes(m->width, m->height) > bytes && (m->width > 1 || m->height > 1)) {
        if (m->width > 1 && (uint64_t)m->width * aspect_h >= (uint64_t)m->height * aspect_w)
            m->width--;
        else if (m->height > 1)
            m->height--;
        else
            m->width--;
    }
    m->bytes = padded(wf_media_min_bytes(m->width, m->height), bytes);
}

void wf_media_url(const struct wf_crowd *c, int instance, const struct wf_media *m,
                  char out[WF_URL_MAX])
{
    char base[WF_URL_MAX];
    wf_base_url(c, instance, base);
    snprintf(out, WF_URL_MAX, "%.400s/media/%" PRIu64 "-%ux%u-%" PRIu64 ".png", base, m->id,
             m->width, m->height, m->bytes);
}

/* A decimal number without leading zeros from *p (at most end), advancing *p. */
static int number(const char **p, const char *end, uint64_t max, uint64_t *out)
{
    const char *s = *p;
    if (s >= end || *s < '0' || *s > '9' ||
        (*s == '0' && s + 1 < end && s[1] >= '0' && s[1] <= '9'))
        return -1;
    uint64_t v = 0;
    while (s < end && *s >= '0' && *s <= '9') {
        unsigned d = (unsigned)(*s - '0');
        if (v > (max - d) / 10)
            return -1;
        v = v * 10 + d;
        s++;
    }
    *p = s;
    *out = v;
    return 0;
}

int wf_media_parse(const char *name, size_t len, struct wf_media *m)
{
    const char *p = name, *end = name + len;
    uint64_t id, w, h, bytes;
    if (len < 4 || memcmp(end - 4, ".png", 4))
        return -1;
    end -= 4;
    if (number(&p, end, UINT64_MAX, &id) || p >= end || *p++ != '-' ||
        number(&p, end, WF_MEDIA_DIM_MAX, &w) || p >= end || *p++ != 'x' ||
        number(&p, end, WF_MEDIA_DIM_MAX, &h) || p >= end || *p++ != '-' ||
        number(&p, end, WF_MEDIA_BYTES_MAX, &bytes) || p != end || !w || !h)
        return -1;
    uint64_t min = wf_media_min_bytes((unsigned)w, (unsigned)h);
    if (bytes < min || (bytes > min && bytes - min < PNG_PAD_MIN))
        return -1;
    m->id = id;
    m->width = (unsigned)w;
    m->height = (unsigned)h;
    m->bytes = bytes;
    return 0;
}

void wf_media_rgb(uint64_t id, uint8_t rgb[3])
{
    uint64_t z = mix64(id);
    /* mid-tones: no image is black or white, so a preview shows something */
    rgb[0] = (uint8_t)(48 + (z & 0xff) % 160);
    rgb[1] = (uint8_t)(48 + ((z >> 8) & 0xff) % 160);
    rgb[2] = (uint8_t)(48 + ((z >> 16) & 0xff) % 160);
}

static const char b83[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~";

void wf_media_blurhash(uint64_t id, char out[WF_BLURHASH_MAX])
{
    /* BlurHash with one component (the average colour): size flag 0 (1 x 1), quantised
     * maximum AC 0, then the DC value as sRGB 0xRRGGBB in four base-83 digits. */
    uint8_t rgb[3];
    wf_media_rgb(id, rgb);
    uint32_t dc = (uint32_t)rgb[0] << 16 | (uint32_t)rgb[1] << 8 | rgb[2];
    out[0] = b83[0];
    out[1] = b83[0];
    for (int i = 3; i >= 0; i--) {
        out[2 + i] = b83[dc % 83];
        dc /= 83;
    }
    out[6] = '\0';
}

void wf_media_of_actor(int instance, int actor, int avatar, struct wf_media *m)
{
    uint64_t id = mix64(((uint64_t)(unsigned)instance << 32 | (unsigned)actor) ^
                        (avatar ? 0xa7a7a7a7u : 0x4e4e4e4eu));
    if (avatar)
        wf_media_fit(id, WF_AVATAR_BYTES, 1, 1, m);
    else
        wf_media_fit(id, WF_HEADER_BYTES, 3, 1, m);
}

void wf_avatar_url(const struct wf_crowd *c, int instance, int actor, int avatar,
                   char out[WF_URL_MAX])
{
    char a[WF_URL_MAX];
    wf_actor_url(c, instance, actor, a);
    snprintf(out, WF_URL_MAX, "%.400s/%s.png", a, avatar ? "avatar" : "header");
}

void wf_emoji_url(const struct wf_crowd *c, int instance, const char *name, char out[WF_URL_MAX])
{
    char base[WF_URL_MAX];
    wf_base_url(c, instance, base);
    snprintf(out, WF_URL_MAX, "%.400s/emoji/%.32s.png", base, name);
}

int wf_emoji_name_ok(const char *s, size_t len)
{
    if (len == 0 || len >= WF_EMOJI_NAME_MAX)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            return 0;
    return 1;
}

int wf_emoji_parse(const char *s, size_t len, char out[WF_EMOJI_NAME_MAX])
{
    if (len < 5 || memcmp(s + len - 4, ".png", 4) || !wf_emoji_name_ok(s, len - 4))
        return -1;
    memcpy(out, s, len - 4);
    out[len - 4] = '\0';
    return 0;
}

void wf_media_of_emoji(const char *name, struct wf_media *m)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
    m->id = mix64(h);
    m->width = m->height = WF_EMOJI_SIDE;
    m->bytes = wf_media_min_bytes(m->width, m->height);
}

void wf_page_url(const struct wf_crowd *c, int instance, uint64_t id, char out[WF_URL_MAX])
{
    char base[WF_URL_MAX];
    wf_base_url(c, instance, base);
    snprintf(out, WF_URL_MAX, "%.400s/pages/%" PRIu64, base, id);
}

void wf_media_of_page(uint64_t id, struct wf_media *m)
{
    wf_media_fit(mix64(id ^ 0x9a9e9a9eu), WF_PAGE_IMAGE_BYTES, 191, 100, m);
}
