/* webfinger/nodeinfo.c: NodeInfo discovery and the 2.0 and 2.1 documents
 * (nodeinfo.diaspora.software/protocol and schema/2.x). */
#include "webfinger/wf.h"

#include <stdlib.h>
#include <string.h>

#define NODEINFO_REL "http://nodeinfo.diaspora.software/ns/schema/"

/* Both schemas are linked, 2.1 last: GoToSocial takes the last schema/2* link, Misskey
 * prefers 2.1, older readers look for 2.0. */
void wf_nodeinfo_wellknown(const struct wf_crowd *c, int instance, struct wf_doc *out)
{
    char base[WF_URL_MAX];
    wf_base_url(c, instance, base);
    char *h20 = flood_xasprintf("%s/nodeinfo/2.0", base);
    char *h21 = flood_xasprintf("%s/nodeinfo/2.1", base);
    json_t *j = json_pack("{s:[{s:s, s:s}, {s:s, s:s}]}", "links", "rel", NODEINFO_REL "2.0",
                          "href", h20, "rel", NODEINFO_REL "2.1", "href", h21);
    free(h20);
    free(h21);
    wf_doc_json_steal(200, WF_CT_JSON, j, out);
}

/* Served as plain application/json for both versions: GoToSocial rejects the 2.1 profile
 * content type. software.repository and .homepage (2.1, optional) are left out. */
void wf_nodeinfo(const struct wf_crowd *c, int instance, const char *version, struct wf_doc *out)
{
    if (!version || (strcmp(version, "2.0") != 0 && strcmp(version, "2.1") != 0)) {
        wf_error(404, "webfinger: NodeInfo version must be 2.0 or 2.1", out);
        return;
    }
    char host[WF_HOST_MAX];
    wf_host(c, instance, host);
    json_int_t users = c->actors;
    json_t *j = json_pack("{s:s, s:{s:s, s:s}, s:[s], s:{s:[], s:[]}, s:b,"
                          " s:{s:{s:I, s:I, s:I}, s:i}, s:{s:s}}",
                          "version", version, "software", "name", "flood", "version",
                          c->version ? c->version : "0.0.0", "protocols", "activitypub", "services",
                          "inbound", "outbound", "openRegistrations", 0, "usage", "users", "total",
                          users, "activeMonth", users, "activeHalfyear", users, "localPosts", 0,
                          "metadata", "nodeName", host);
    wf_doc_json_steal(200, WF_CT_JSON, j, out);
}
