/* webfinger/media.h: what the crowd serves besides ActivityPub documents, as pure functions
 * of a URL: media attachments (real, decodable PNG images of a set size), link pages with
 * OpenGraph tags (what a server crawls for a preview card), custom emoji images, and each
 * actor's avatar and header. Nothing is stored: every URL carries what is needed to make
 * its bytes again, so a post built on one shard is served by any crowd with the same
 * description.
 *
 * URL forms (BASE = wf_base_url of the instance):
 *   BASE/media/ID-WxH-BYTES.png   an image W x H, exactly BYTES long (BYTES at least
 *                                 wf_media_min_bytes(W, H)); its colour comes from ID
 *   BASE/pages/ID                 an HTML page with og:title, og:description, og:image (a
 *                                 media URL of the same instance) and og:url
 *   BASE/emoji/NAME.png           custom emoji NAME (a-z 0-9 _, at most 32), 64 x 64
 *   BASE/emoji/NAME               its Emoji object (the id of a post's Emoji tag; page.h)
 *   BASE/users/NAME/avatar.png    the actor's avatar, square, about 120 KB
 *   BASE/users/NAME/header.png    the actor's header, 3:1, about 300 KB
 * The images are PNG, 8-bit RGB, one colour, with stored (uncompressed) deflate blocks, so
 * their size follows their dimensions; a private ancillary chunk ("flPd", which decoders
 * skip) pads them to BYTES exactly. */
#ifndef FLOOD_WF_MEDIA_H
#define FLOOD_WF_MEDIA_H

#include <stddef.h>
#include <stdint.h>

#include "webfinger/wf.h"

#define WF_MEDIA_DIM_MAX    16384                   /* pixels, each side */
#define WF_MEDIA_BYTES_MAX  (1024ULL * 1024 * 1024) /* 1 GiB */
#define WF_BLURHASH_MAX     32
#define WF_EMOJI_NAME_MAX   33 /* 32 and the NUL */
#define WF_AVATAR_BYTES     (120 * 1000)
#define WF_HEADER_BYTES     (300 * 1000)
#define WF_PAGE_IMAGE_BYTES (60 * 1000)
#define WF_EMOJI_SIDE       64

/* struct wf_media (one image: what its URL says) is in webfinger/wf.h, for routes. */

/* The smallest PNG of w x h this module makes (no padding chunk). */
uint64_t wf_media_min_bytes(unsigned width, unsigned height);
/* An image of about `bytes` bytes with the aspect ratio aspect_w:aspect_h: the largest
 * dimensions whose smallest PNG fits in bytes (at least 1 x 1), and bytes raised to that
 * minimum when it was below. Fills m (id given). */
void wf_media_fit(uint64_t id, uint64_t bytes, unsigned aspect_w, unsigned aspect_h,
                  struct wf_media *m);
/* BASE/media/ID-WxH-BYTES.png of instance into out[WF_URL_MAX]. */
void wf_media_url(const struct wf_crowd *c, int instance, const struct wf_media *m,
                  char out[WF_URL_MAX]);
/* Parse "ID-WxH-BYTES.png" (the part after "/media/", len bytes): 0 and m filled, or -1
 * for anything else (no leading zeros, numbers in range, BYTES the minimum or at least a
 * padding chunk, 12 bytes, more: what wf_media_fit makes). */
int wf_media_parse(const char *name, size_t len, struct wf_media *m);
/* The image's one colour, from its id. */
void wf_media_rgb(uint64_t id, uint8_t rgb[3]);
/* The BlurHash (1 x 1 components: the image's colour) into out[WF_BLURHASH_MAX]. */
void wf_media_blurhash(uint64_t id, char out[WF_BLURHASH_MAX]);

/* The avatar (avatar = 1) or header (0) image of an actor: ids of their own, sizes fixed
 * (WF_AVATAR_BYTES square, WF_HEADER_BYTES at 3:1). */
void wf_media_of_actor(int instance, int actor, int avatar, struct wf_media *m);
/* BASE/users/NAME/avatar.png or .../header.png into out[WF_URL_MAX]. */
void wf_avatar_url(const struct wf_crowd *c, int instance, int actor, int avatar,
                   char out[WF_URL_MAX]);

/* Custom emoji: BASE/emoji/NAME.png into out[WF_URL_MAX] (name checked by the caller). */
void wf_emoji_url(const struct wf_crowd *c, int instance, const char *name, char out[WF_URL_MAX]);
/* 1 when s (len bytes) is an emoji name: a-z 0-9 _, 1 to 32 of them. */
int wf_emoji_name_ok(const char *s, size_t len);
/* Parse "NAME.png" (len bytes): 0 and name copied into out, or -1. */
int wf_emoji_parse(const char *s, size_t len, char out[WF_EMOJI_NAME_MAX]);
/* The emoji's image (64 x 64, its id from its name). */
void wf_media_of_emoji(const char *name, struct wf_media *m);

/* Link pages: BASE/pages/ID into out[WF_URL_MAX]. */
void wf_page_url(const struct wf_crowd *c, int instance, uint64_t id, char out[WF_URL_MAX]);
/* The og:image of page id (OpenGraph's 1.91:1, about WF_PAGE_IMAGE_BYTES). */
void wf_media_of_page(uint64_t id, struct wf_media *m);

#endif
