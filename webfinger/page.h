/* webfinger/page.h: the link pages of webfinger/media.h (BASE/pages/ID), rendered: what a
 * server crawls for a preview card; and the custom emoji's Emoji objects. Pure: the page is a
 * function of the crowd, the instance and the id. */
#ifndef FLOOD_WF_PAGE_H
#define FLOOD_WF_PAGE_H

#include <stdint.h>

#include "webfinger/wf.h"

#define WF_CT_HTML "text/html; charset=utf-8"

/* Page id of instance (1..instances) as HTML: <title>, og:title, og:description,
 * og:type article, og:url (the page's own URL), og:image (wf_media_of_page, on the same
 * instance) with its width and height, og:site_name and twitter:card. 200 text/html, or
 * 404 for an instance out of range. out->body is new (wf_doc_free). */
void wf_page(const struct wf_crowd *c, int instance, uint64_t id, struct wf_doc *out);

/* The Emoji object of custom emoji name (wf_emoji_name_ok) on instance, as Mastodon serves
 * one at its id: id BASE/emoji/NAME, type Emoji, name ":NAME:", icon an Image whose url is
 * wf_emoji_url. 200 application/activity+json, or 404 for an instance out of range or a
 * bad name. out->body is new (wf_doc_free). */
void wf_emoji_doc(const struct wf_crowd *c, int instance, const char *name, struct wf_doc *out);

#endif
