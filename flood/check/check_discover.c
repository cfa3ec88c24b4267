/* flood/check/check_discover.c: the discovery steps of `flood check`: WebFinger, the actor
 * (unsigned and signed GETs), NodeInfo. */
#include <stdlib.h>
#include <string.h>

#include "flood/check/check_internal.h"
#include "flood/send/target.h"

void check_step_webfinger(struct check *c, struct check_result *r)
{
    if (!c->user) {
        check_set(r, CHECK_SKIP, NULL, NULL, "the persona is an actor URL: no acct: to look up");
        return;
    }
    char *url = flood_xasprintf("%s://%s/.well-known/webfinger?resource=acct%%3A%s%%40%s",
                                c->o.target_http ? "http" : "https", c->host, c->user, c->host);
    struct http_resp h;
    struct flood_err e = {0};
    if (http_get(url, "application/jrd+json", NULL, &c->o.http, &h, &e) < 0) {
        check_set(r, CHECK_FAIL, "200 JRD", e.msg, NULL);
        free(url);
        return;
    }
    json_t *j = h.status == 200 ? json_loadb(h.body, h.len, 0, NULL) : NULL;
    char *self = j ? target_jrd_self(j) : NULL;
    const char *subject = json_string_value(json_object_get(j, "subject"));
    char got[300];
    if (h.status != 200) {
        snprintf(got, sizeof(got), "HTTP %ld", h.status);
        check_set(r, CHECK_FAIL, "200 JRD", got, NULL);
    } else if (!j) {
        check_set(r, CHECK_FAIL, "200 JRD", "a body that is not JSON", NULL);
    } else if (!subject) {
        check_set(r, CHECK_FAIL, "a subject", "none", NULL);
    } else if (!self) {
        check_set(r, CHECK_FAIL, "a rel=self link typed application/activity+json", "none", NULL);
    } else if (c->persona_ok && strcmp(self, c->persona.actor)) {
        snprintf(got, sizeof(got), "%.280s", self);
        check_set(r, CHECK_FAIL, c->persona.actor, got, NULL);
    } else {
        check_set(r, CHECK_PASS, NULL, NULL, "%s -> %s", subject, self);
    }
    free(self);
    json_decref(j);
    http_resp_free(&h);
    free(url);
}

void check_step_actor(struct check *c, struct check_result *r, int signed_get)
{
    const char *url = c->persona_ok ? c->persona.actor : (!c->user ? c->o.persona : NULL);
    if (!url) {
        check_set(r, CHECK_SKIP, NULL, NULL, "the persona was not discovered");
        return;
    }
    char kid[WF_URL_MAX];
    crowd_key_id(c->crowd, 1, 0, kid);
    struct http_signer s = {
        .dialect = SIGN_CAVAGE, .key = crowd_key(c->crowd, 1, 0), .key_id = kid};
    struct http_resp h;
    struct flood_err e = {0};
    if (http_get(url, "application/activity+json", signed_get ? &s : NULL, &c->o.http, &h, &e) <
        0) {
        check_set(r, CHECK_FAIL, "200 actor", e.msg, NULL);
        return;
    }
    if (!signed_get && (h.status == 401 || h.status == 403)) {
        check_set(r, CHECK_PASS, NULL, NULL,
                  "%ld: authorized fetch, unsigned GETs refused (the signed GET must work)",
                  h.status);
        http_resp_free(&h);
        return;
    }
    json_t *j = h.status == 200 ? json_loadb(h.body, h.len, 0, NULL) : NULL;
    const char *id = json_string_value(json_object_get(j, "id"));
    const char *type = json_string_value(json_object_get(j, "type"));
    json_t *pk = json_object_get(j, "publicKey");
    const char *pem = json_string_value(json_object_get(pk, "publicKeyPem"));
    char got[320];
    if (h.status != 200) {
        snprintf(got, sizeof(got), "HTTP %ld", h.status);
        check_set(r, CHECK_FAIL, "200", got, NULL);
    } else if (!j || !http_is_json_type(h.content_type)) {
        snprintf(got, sizeof(got), "%.200s", h.content_type ? h.content_type : "no type");
        check_set(r, CHECK_FAIL, "an ActivityPub JSON document", got, NULL);
    } else if (!id || strcmp(id, url)) {
        snprintf(got, sizeof(got), "%.300s", id ? id : "no id");
        check_set(r, CHECK_FAIL, url, got, "the id must equal the URL it is served at");
    } else if (!json_string_value(json_object_get(j, "inbox"))) {
        check_set(r, CHECK_FAIL, "an inbox", "none", NULL);
    } else if (!pem) {
        check_set(r, CHECK_FAIL, "publicKey.publicKeyPem", "none", NULL);
    } else {
        check_set(r, CHECK_PASS, NULL, NULL, "200 %s, %s", type ? type : "(no type)",
                  h.content_type ? h.content_type : "");
    }
    json_decref(j);
    http_resp_free(&h);
}

void check_step_nodeinfo(struct check *c, struct check_result *r)
{
    char *base = c->user ? flood_xasprintf("%s://%s", c->o.target_http ? "http" : "https", c->host)
                         : (c->origin ? flood_xstrdup(c->origin) : check_origin_of(c->o.persona));
    char *url = flood_xasprintf("%s/.well-known/nodeinfo", base);
    free(base);
    struct http_resp h = {0}, h2 = {0};
    struct flood_err e = {0};
    json_t *j = NULL, *ni = NULL;
    char got[320];
    if (http_get(url, "application/json", NULL, &c->o.http, &h, &e) < 0) {
        check_set(r, CHECK_FAIL, "200 NodeInfo links", e.msg, NULL);
        goto out;
    }
    j = h.status == 200 ? json_loadb(h.body, h.len, 0, NULL) : NULL;
    const char *href = NULL;
    size_t i;
    json_t *l;
    json_array_foreach(json_object_get(j, "links"), i, l)
    {
        const char *rel = json_string_value(json_object_get(l, "rel"));
        const char *hr = json_string_value(json_object_get(l, "href"));
        /* GoToSocial takes the last schema/2.x link; so do we */
        if (rel && hr && !strncmp(rel, "http://nodeinfo.diaspora.software/ns/schema/2.", 46))
            href = hr;
    }
    if (!href) {
        snprintf(got, sizeof(got), "HTTP %ld, %s", h.status, j ? "no schema/2.x link" : "no JSON");
        check_set(r, CHECK_FAIL, "200 with a schema/2.x link", got, NULL);
        goto out;
    }
    if (http_get(href, "application/json", NULL, &c->o.http, &h2, &e) < 0) {
        check_set(r, CHECK_FAIL, "200 NodeInfo", e.msg, NULL);
        goto out;
    }
    ni = h2.status == 200 ? json_loadb(h2.body, h2.len, 0, NULL) : NULL;
    const char *ver = json_string_value(json_object_get(ni, "version"));
    json_t *sw = json_object_get(ni, "software");
    const char *name = json_string_value(json_object_get(sw, "name"));
    const char *swv = json_string_value(json_object_get(sw, "version"));
    int ap = 0;
    json_t *p;
    json_array_foreach(json_object_get(ni, "protocols"), i, p)
    {
        if (json_is_string(p) && !strcmp(json_string_value(p), "activitypub"))
            ap = 1;
    }
    int name_ok =
        name && *name && strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-") == strlen(name);
    if (!ni) {
        snprintf(got, sizeof(got), "HTTP %ld from %.250s", h2.status, href);
        check_set(r, CHECK_FAIL, "200 NodeInfo JSON", got, NULL);
    } else if (!ver || !name_ok || !swv) {
        snprintf(got, sizeof(got), "version %s, software.name %s, software.version %s",
                 ver ? ver : "none", name ? name : "none", swv ? swv : "none");
        check_set(r, CHECK_FAIL, "version, software.name ^[a-z0-9-]+$, software.version", got,
                  NULL);
    } else if (!ap) {
        check_set(r, CHECK_FAIL, "protocols holding activitypub", "no activitypub", NULL);
    } else {
        check_set(r, CHECK_PASS, NULL, NULL, "NodeInfo %s: %s %s", ver, name, swv);
    }
out:
    json_decref(j);
    json_decref(ni);
    http_resp_free(&h);
    http_resp_free(&h2);
    free(url);
}
