/* webfinger/page.c: link pages with OpenGraph tags (https://ogp.me/), as Mastodon's
 * FetchLinkCardService and Misskey's summaly read them. Every string is made here from
 * fixed words and our own URLs, so nothing needs HTML escaping. */
#include "webfinger/page.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webfinger/media.h"

#define PAGE_MAX 4096

static const char *const adjectives[] = {"quiet",     "busy",  "slow",    "bright", "open",
                                         "federated", "small", "curious", "local",  "remote"};
static const char *const nouns[] = {"inbox",   "timeline", "instance", "relay",   "garden",
                                    "harbour", "server",   "network",  "village", "library"};
static const char *const verbs[] = {"grows",   "listens", "waits", "answers", "wanders",
                                    "returns", "fetches", "keeps", "shares",  "opens"};

static uint64_t mix(uint64_t z)
{
    z += UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

#define PICK(list, z) ((list)[(z) % (sizeof(list) / sizeof((list)[0]))])

void wf_page(const struct wf_crowd *c, int instance, uint64_t id, struct wf_doc *out)
{
    if (instance < 1 || instance > c->instances) {
        wf_error(404, "page: no such instance", out);
        return;
    }
    char host[WF_HOST_MAX], url[WF_URL_MAX], image[WF_URL_MAX], title[128], desc[256];
    wf_host(c, instance, host);
    wf_page_url(c, instance, id, url);
    struct wf_media m;
    wf_media_of_page(id, &m);
    wf_media_url(c, instance, &m, image);
    uint64_t z = mix(id);
    snprintf(title, sizeof(title), "The %s %s %s (page %" PRIu64 ")", PICK(adjectives, z),
             PICK(nouns, z >> 8), PICK(verbs, z >> 16), id);
    snprintf(desc, sizeof(desc),
             "A %s %s, a %s %s and what %s: a flood test page that a server fetches for "
             "its link preview.",
             PICK(adjectives, z >> 24), PICK(nouns, z >> 32), PICK(adjectives, z >> 40),
             PICK(nouns, z >> 48), PICK(verbs, z >> 56));
    char *body = flood_xmalloc(PAGE_MAX);
    int n = snprintf(body, PAGE_MAX,
                     "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<title>%s</title>\n"
                     "<meta name=\"description\" content=\"%s\">\n"
                     "<meta property=\"og:title\" content=\"%s\">\n"
                     "<meta property=\"og:description\" content=\"%s\">\n"
                     "<meta property=\"og:type\" content=\"article\">\n"
                     "<meta property=\"og:url\" content=\"%s\">\n"
                     "<meta property=\"og:site_name\" content=\"%s\">\n"
                     "<meta property=\"og:image\" content=\"%s\">\n"
                     "<meta property=\"og:image:type\" content=\"image/png\">\n"
                     "<meta property=\"og:image:width\" content=\"%u\">\n"
                     "<meta property=\"og:image:height\" content=\"%u\">\n"
                     "<meta name=\"twitter:card\" content=\"summary_large_image\">\n"
                     "<link rel=\"canonical\" href=\"%s\">\n"
                     "</head>\n<body>\n<article>\n<h1>%s</h1>\n<p>%s</p>\n"
                     "<img src=\"%s\" width=\"%u\" height=\"%u\" alt=\"\">\n"
                     "</article>\n</body>\n</html>\n",
                     title, desc, title, desc, url, host, image, m.width, m.height, url, title,
                     desc, image, m.width, m.height);
    if (n < 0 || n >= PAGE_MAX) {
        free(body);
        wf_error(500, "page: too long", out);
        return;
    }
    out->status = 200;
    out->content_type = WF_CT_HTML;
    out->body = body;
    out->len = (size_t)n;
}

void wf_emoji_doc(const struct wf_crowd *c, int instance, const char *name, struct wf_doc *out)
{
    if (instance < 1 || instance > c->instances || !name || !wf_emoji_name_ok(name, strlen(name))) {
        wf_error(404, "emoji: no such emoji", out);
        return;
    }
    char base[WF_URL_MAX], icon[WF_URL_MAX];
    wf_base_url(c, instance, base);
    wf_emoji_url(c, instance, name, icon);
    /* the name is a-z 0-9 _ and the URLs are ours: nothing to escape */
    char *body = flood_xasprintf(
        "{\"@context\":[\"https://www.w3.org/ns/activitystreams\",{\"toot\":\"http://"
        "joinmastodon.org/ns#\","
        "\"Emoji\":\"toot:Emoji\"}],\"id\":\"%s/emoji/%s\",\"type\":\"Emoji\","
        "\"name\":\":%s:\",\"icon\":{\"type\":\"Image\",\"mediaType\":\"image/png\","
        "\"url\":\"%s\"}}",
        base, name, name, icon);
    out->status = 200;
    out->content_type = WF_CT_ACTIVITY;
    out->body = body;
    out->len = strlen(body);
}
