/* flood/check/check_host.c: the runner's side of the server: the inbox hook that notes Accepts,
 * the objects the runner sent served at their ids, and the check crowd (one instance, two
 * actors whose keys the runner holds: user1 has an RSA key the rotation step replaces at
 * runtime, user2 an Ed25519 key offered as its single publicKey and as an FEP-521a
 * Multikey, INTEROP.md "RFC 9421"). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "flood/check/check_internal.h"
#include "flood/core/clock.h"

int check_host_init(struct check *c, struct flood_err *err)
{
    const struct crowd *cr = c->crowd;
    c->cdomain = flood_xstrdup(c->o.check_domain ? c->o.check_domain : "flood-check%d.test");
    c->cwf = (struct wf_crowd){.instances = 1,
                               .actors = 2,
                               .domain_template = c->cdomain,
                               .scheme = cr->wf.scheme,
                               .public_port = cr->wf.public_port,
                               .version = FLOOD_VERSION};
    if (wf_crowd_check(&c->cwf, err) < 0)
        return -1;
    char host[WF_HOST_MAX];
    wf_host(&c->cwf, 1, host);
    if (wf_instance_of_host(&cr->wf, host)) {
        flood_err_set(err, FLOOD_EINVAL, "check: --check-domain: '%s' is one of the crowd's", host);
        return -1;
    }
    c->rotor_key = sign_key_generate(SIGN_KEY_RSA, 2048, err);
    if (!c->rotor_key || !(c->rotor_pem = sign_key_public_pem(c->rotor_key, err)))
        return -1;
    c->ed_key = sign_key_generate(SIGN_KEY_ED25519, 0, err);
    if (!c->ed_key || !(c->ed_pem = sign_key_public_pem(c->ed_key, err)) ||
        !(c->ed_mb = sign_key_multibase(c->ed_key, err)))
        return -1;
    return 0;
}

void check_host_free(struct check *c)
{
    sign_key_free(c->rotor_key);
    sign_key_free(c->ed_key);
    sign_key_free(c->stranger);
    free(c->rotor_pem);
    free(c->ed_pem);
    free(c->ed_mb);
    free(c->cdomain);
    for (size_t i = 0; i < c->n_recv; i++) {
        free(c->recv[i].type);
        free(c->recv[i].object_id);
    }
    free(c->recv);
    for (size_t i = 0; i < c->n_obj; i++) {
        free(c->obj_url[i]);
        free(c->obj_body[i]);
    }
    free(c->obj_url);
    free(c->obj_body);
}

int check_rotate_key(struct check *c, struct sign_key *fresh, struct flood_err *err)
{
    char *pem = sign_key_public_pem(fresh, err);
    if (!pem)
        return -1;
    pthread_mutex_lock(&c->lock);
    struct sign_key *old = c->rotor_key;
    char *old_pem = c->rotor_pem;
    c->rotor_key = fresh;
    c->rotor_pem = pem;
    pthread_mutex_unlock(&c->lock);
    sign_key_free(old);
    free(old_pem);
    return 0;
}

void check_serve_object(struct check *c, const char *url, const char *body)
{
    pthread_mutex_lock(&c->lock);
    if (c->n_obj < CHECK_OBJ_MAX) {
        c->obj_url = flood_xrealloc(c->obj_url, (c->n_obj + 1) * sizeof(char *));
        c->obj_body = flood_xrealloc(c->obj_body, (c->n_obj + 1) * sizeof(char *));
        c->obj_url[c->n_obj] = flood_xstrdup(url);
        c->obj_body[c->n_obj] = flood_xstrdup(body);
        c->n_obj++;
    }
    pthread_mutex_unlock(&c->lock);
}

/* The object served at scheme://host/path, copied into out; 0 when there is none. */
static int find_object(struct check *c, const struct server_req *req, const char *scheme,
                       struct wf_doc *out)
{
    if (!req->host || strcmp(req->method, "GET"))
        return 0;
    char *url = flood_xasprintf("%s://%s%s", scheme, req->host, req->path);
    int status = 0;
    pthread_mutex_lock(&c->lock);
    for (size_t i = c->n_obj; i-- > 0;)
        if (!strcasecmp(c->obj_url[i], url)) {
            out->status = 200;
            out->content_type = WF_CT_ACTIVITY;
            out->body = flood_xstrdup(c->obj_body[i]);
            out->len = strlen(out->body);
            status = 200;
            break;
        }
    pthread_mutex_unlock(&c->lock);
    free(url);
    return status;
}

/* The object's id of an Accept/Reject: a string, or the embedded object's id. */
static void note_answer(struct check *c, const char *body, size_t len)
{
    json_t *doc = json_loadb(body, len, 0, NULL);
    if (!json_is_object(doc)) {
        json_decref(doc);
        return;
    }
    const char *type = json_string_value(json_object_get(doc, "type"));
    json_t *obj = json_object_get(doc, "object");
    const char *oid = json_is_string(obj) ? json_string_value(obj)
                                          : json_string_value(json_object_get(obj, "id"));
    if (type && oid && (!strcmp(type, "Accept") || !strcmp(type, "Reject"))) {
        pthread_mutex_lock(&c->lock);
        if (c->n_recv < CHECK_RECV_MAX) {
            c->recv = flood_xrealloc(c->recv, (c->n_recv + 1) * sizeof(*c->recv));
            c->recv[c->n_recv++] = (struct check_recv){.type = flood_xstrdup(type),
                                                       .object_id = flood_xstrdup(oid),
                                                       .mono_us = clock_mono_us()};
            pthread_cond_broadcast(&c->cond);
        }
        pthread_mutex_unlock(&c->lock);
    }
    json_decref(doc);
}

int check_wait_answer(struct check *c, const char *follow_id, uint64_t deadline_us, uint64_t *at_us)
{
    int found = 0;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        for (size_t i = 0; i < c->n_recv && !found; i++)
            if (!strcmp(c->recv[i].object_id, follow_id)) {
                found = strcmp(c->recv[i].type, "Accept") ? 2 : 1;
                *at_us = c->recv[i].mono_us;
            }
        uint64_t now = clock_mono_us();
        if (found || now >= deadline_us)
            break;
        /* the condition variable runs on CLOCK_REALTIME: wait in short slices */
        uint64_t slice = deadline_us - now < 100000 ? deadline_us - now : 100000;
        struct timespec ts = clock_wall_after_us((int64_t)slice);
        pthread_cond_timedwait(&c->cond, &c->lock, &ts);
    }
    pthread_mutex_unlock(&c->lock);
    return found;
}

int check_inbox_hook(void *ctx, const struct server_req *req, struct wf_doc *out)
{
    struct check *c = ctx;
    int status = c->inbound ? inbound_inbox_hook(c->inbound, req, out) : 202;
    if (status >= 200 && status < 300 && req->body)
        note_answer(c, req->body, req->body_len);
    return status;
}

int check_object_hook(void *ctx, const struct server_req *req, struct wf_doc *out)
{
    struct check *c = ctx;
    return find_object(c, req, c->crowd->wf.scheme, out);
}

int check_fault_hook(void *ctx, const struct server_req *req, struct server_fault *fault)
{
    struct check *c = ctx;
    return c->inbound ? inbound_fault_hook(c->inbound, req, fault) : 0;
}

/* The value of name= in a raw query, percent-decoded into out; -1 when absent or bad. */
static int query_param(const char *q, const char *name, char *out, size_t size)
{
    size_t nl = strlen(name);
    for (const char *p = q; p && *p;) {
        size_t len = strcspn(p, "&");
        if (len > nl && !strncmp(p, name, nl) && p[nl] == '=') {
            size_t o = 0;
            for (size_t i = nl + 1; i < len; i++) {
                if (o + 1 >= size)
                    return -1;
                char ch = p[i];
                if (ch == '%' && i + 2 < len + 1 && isxdigit((unsigned char)p[i + 1]) &&
                    isxdigit((unsigned char)p[i + 2])) {
                    char hex[3] = {p[i + 1], p[i + 2], 0};
                    ch = (char)strtol(hex, NULL, 16);
                    i += 2;
                } else if (ch == '+') {
                    ch = ' ';
                }
                if (ch == '\0')
                    return -1;
                out[o++] = ch;
            }
            out[o] = '\0';
            return 0;
        }
        p += len;
        if (*p)
            p++;
    }
    return -1;
}

int check_other_hook(void *ctx, const struct server_req *req, struct wf_doc *out)
{
    struct check *c = ctx;
    struct wf_route rt;
    if (!req->host || wf_route(&c->cwf, req->host, req->path, &rt) != 0)
        return 0;
    switch (rt.kind) {
    case WF_ROUTE_WEBFINGER: {
        char res[WF_URL_MAX];
        wf_webfinger(&c->cwf, 1,
                     query_param(req->query, "resource", res, sizeof(res)) == 0 ? res : NULL, out);
        return out->status;
    }
    case WF_ROUTE_ACTOR: {
        if (rt.actor == CHECK_ACTOR_ROTOR) {
            pthread_mutex_lock(&c->lock);
            struct wf_key_info k = {.public_pem = c->rotor_pem};
            wf_actor(&c->cwf, 1, rt.actor, &k, out);
            pthread_mutex_unlock(&c->lock);
        } else if (rt.actor == CHECK_ACTOR_ED) {
            /* Fedify looks up keys in publicKey only; Misskey rejects an array: the Ed25519
             * key is the single publicKey, and the FEP-521a Multikey too */
            struct wf_key_info k = {.public_pem = c->ed_pem, .ed25519_multibase = c->ed_mb};
            wf_actor(&c->cwf, 1, rt.actor, &k, out);
        } else {
            wf_actor(&c->cwf, 1, rt.actor, NULL, out);
        }
        return out->status;
    }
    case WF_ROUTE_INBOX:
    case WF_ROUTE_SHARED_INBOX:
        if (strcmp(req->method, "POST"))
            return 0;
        /* nothing is asked of the check actors: deliveries are taken and dropped */
        out->status = 202;
        return 202;
    case WF_ROUTE_NOTE:
    case WF_ROUTE_ACTIVITY:
        return find_object(c, req, c->cwf.scheme, out);
    case WF_ROUTE_OUTBOX:
    case WF_ROUTE_FOLLOWERS:
    case WF_ROUTE_FOLLOWING:
        wf_collection(&c->cwf, 1, rt.actor, rt.kind, NULL, 0, 0, out);
        return out->status;
    default:
        return 0;
    }
}
