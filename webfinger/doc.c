/* webfinger/doc.c: a rendered answer (status, content type, body) and its JSON form. */
#include "webfinger/wf.h"

#include <stdlib.h>
#include <string.h>

/* Used when jansson itself fails (out of memory, invalid UTF-8 in a caller's string). */
static const char render_failed[] = "{\"error\":\"webfinger: could not render the document\"}";

static void set_failed(struct wf_doc *out)
{
    out->status = 500;
    out->content_type = WF_CT_JSON;
    out->len = sizeof(render_failed) - 1;
    out->body = flood_xstrndup(render_failed, out->len);
}

/* JSON_PRESERVE_ORDER keeps keys in insertion order (jansson >= 2.8 always does), so a
 * document's bytes are stable across runs and builds. */
void wf_doc_json(int status, const char *content_type, const json_t *json, struct wf_doc *out)
{
    char *s = json ? json_dumps(json, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    if (!s) {
        set_failed(out);
        return;
    }
    out->status = status;
    out->content_type = content_type;
    out->body = s;
    out->len = strlen(s);
}

void wf_error(int status, const char *msg, struct wf_doc *out)
{
    json_t *j = json_pack("{s:s}", "error", msg ? msg : "");
    wf_doc_json(status, WF_CT_JSON, j, out);
    json_decref(j);
}

void wf_doc_free(struct wf_doc *d)
{
    if (!d)
        return;
    free(d->body);
    d->body = NULL;
    d->len = 0;
}

/* Build-and-render in one step for the document files: takes the reference. */
void wf_doc_json_steal(int status, const char *content_type, json_t *json, struct wf_doc *out)
{
    wf_doc_json(status, content_type, json, out);
    json_decref(json);
}
