/* webfinger/collection.c: an actor's outbox, followers and following. */
#include "webfinger/wf.h"

#include <stdio.h>

void wf_collection(const struct wf_crowd *c, int instance, int actor, enum wf_route_kind kind,
                   const char *const *items, size_t n_items, size_t total, struct wf_doc *out)
{
    const char *leaf = kind == WF_ROUTE_OUTBOX      ? "outbox"
                       : kind == WF_ROUTE_FOLLOWERS ? "followers"
                       : kind == WF_ROUTE_FOLLOWING ? "following"
                                                    : NULL;
    if (!leaf) {
        wf_error(500, "webfinger: not a collection route", out);
        return;
    }
    if (instance < 1 || instance > c->instances || actor < 0 || actor > c->actors) {
        wf_error(404, "webfinger: no such actor", out);
        return;
    }
    char actor_id[WF_URL_MAX], id[WF_URL_MAX + 16];
    wf_actor_url(c, instance, actor, actor_id);
    snprintf(id, sizeof(id), "%s/%s", actor_id, leaf);
    json_t *list = json_array();
    int bad = !list;
    /* An item that is not a UTF-8 string (NULL, or bytes a remote sent) is left out
     * rather than failing the whole collection; totalItems still counts it. */
    for (size_t i = 0; !bad && i < n_items; i++) {
        json_t *s = items[i] ? json_string(items[i]) : NULL;
        if (s && json_array_append_new(list, s) < 0)
            bad = 1;
    }
    /* A total below the items given would be a lie the reader can see. */
    json_int_t n = (json_int_t)(total > n_items ? total : n_items);
    json_t *j = bad ? NULL
                    : json_pack("{s:s, s:s, s:s, s:I, s:O}", "@context",
                                "https://www.w3.org/ns/activitystreams", "id", id, "type",
                                "OrderedCollection", "totalItems", n, "orderedItems", list);
    json_decref(list);
    wf_doc_json_steal(200, WF_CT_ACTIVITY, j, out);
}
