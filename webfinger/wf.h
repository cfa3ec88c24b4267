/* webfinger/: every document a fake instance serves, as pure functions from the crowd's
 * description and a request to a document. No I/O, no clock, no global state.
 *
 * Naming: instance i (1..instances) is the host made from the domain template
 * ("flood%d.test" gives flood1.test); actor j (1..actors) of it is "user<j>"; the
 * instance actor is "/actor". URLs are SCHEME://HOST[:PUBLIC_PORT]/... */
#ifndef FLOOD_WF_H
#define FLOOD_WF_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "sign/err.h"

#define WF_HOST_MAX 256
#define WF_URL_MAX  512
#define WF_NAME_MAX 64

struct wf_crowd {
    int instances;               /* >= 1 */
    int actors;                  /* per instance, >= 1 */
    const char *domain_template; /* exactly one %d, e.g. "flood%d.test" */
    const char *scheme;          /* "http" or "https" */
    int public_port;             /* 0: no port in URLs */
    const char *version;         /* software.version in NodeInfo, e.g. FLOOD_VERSION */
};

/* Check a crowd description (template has exactly one %d and makes valid host names,
 * counts in range, scheme known). 0, or -1 and err naming the bad field.
 * Rules: instances and actors 1..1000000; the template only a-z 0-9 '-' '.' around one
 * %d (no other '%', no upper case, no trailing dot), every name it makes an RFC 1123 host
 * of at most 253 bytes whose last label is not all digits; scheme "http" or "https";
 * public_port 0..65535; version semver (Misskey parses it). */
int wf_crowd_check(const struct wf_crowd *c, struct flood_err *err) FLOOD_WUR;

/* Host name of instance i, without port, into out[WF_HOST_MAX]. */
void wf_host(const struct wf_crowd *c, int instance, char out[WF_HOST_MAX]);
/* SCHEME://HOST[:PORT] of instance i into out[WF_URL_MAX]. The port is left out when it
 * is 0 or the scheme's default (https 443, http 80): one origin, one spelling of each id. */
void wf_base_url(const struct wf_crowd *c, int instance, char out[WF_URL_MAX]);
/* Actor id URL (actor 0 is the instance actor "/actor"). */
void wf_actor_url(const struct wf_crowd *c, int instance, int actor, char out[WF_URL_MAX]);
/* The username of actor j ("user<j>") into out[WF_NAME_MAX]. */
void wf_actor_name(int actor, char out[WF_NAME_MAX]);
/* Instance index of a Host header value (with or without ":port"; case-insensitive),
 * or 0 when the host is not one of the crowd's. The number must be the template's digits
 * exactly (no leading zero, 1..instances); any port 1..65535 is accepted (the listener may
 * sit behind a redirect); one trailing dot ("flood1.test.") is tolerated. */
int wf_instance_of_host(const struct wf_crowd *c, const char *host);

/* Which ":port" suffix a host may carry. A Host header may name any port (the listener
 * can sit behind a proxy or a port redirect); a WebFinger acct: host only the public one. */
enum wf_port_rule {
    WF_PORT_ANY = 0, /* any port 1..65535 (digits only) or none */
    WF_PORT_PUBLIC,  /* none, or the public port (public_port, else 443/80 by scheme) */
};
/* wf_instance_of_host over len bytes (no NUL needed; an embedded NUL never matches) with
 * the given port rule. Instance index, or 0. */
int wf_instance_of_host_n(const struct wf_crowd *c, const char *host, size_t len,
                          enum wf_port_rule rule);
/* Actor index j of the username "user<j>" (len bytes, exact, lower case, no leading
 * zeros, 1..actors), or 0 when it names no actor. */
int wf_actor_of_name(const struct wf_crowd *c, const char *name, size_t len);

/* ---- routing ------------------------------------------------------------------------- */

enum wf_route_kind {
    WF_ROUTE_NONE = 0,     /* unknown path: 404 */
    WF_ROUTE_WEBFINGER,    /* /.well-known/webfinger */
    WF_ROUTE_HOST_META,    /* /.well-known/host-meta */
    WF_ROUTE_NODEINFO_WK,  /* /.well-known/nodeinfo */
    WF_ROUTE_NODEINFO_20,  /* /nodeinfo/2.0 */
    WF_ROUTE_NODEINFO_21,  /* /nodeinfo/2.1 */
    WF_ROUTE_ACTOR,        /* /users/NAME, or /actor (actor 0) */
    WF_ROUTE_INBOX,        /* /users/NAME/inbox, /actor/inbox */
    WF_ROUTE_OUTBOX,       /* /users/NAME/outbox, /actor/outbox */
    WF_ROUTE_FOLLOWERS,    /* /users/NAME/followers */
    WF_ROUTE_FOLLOWING,    /* /users/NAME/following */
    WF_ROUTE_SHARED_INBOX, /* /inbox */
    WF_ROUTE_NOTE,         /* /users/NAME/notes/SEQ */
    WF_ROUTE_ACTIVITY,     /* /users/NAME/activities/SEQ */
    WF_ROUTE_KEY,          /* /users/NAME/main-key, /actor/main-key: the key document */
    WF_ROUTE_MEDIA,        /* /media/ID-WxH-BYTES.png (webfinger/media.h) */
    WF_ROUTE_PAGE,         /* /pages/ID: a link page */
    WF_ROUTE_EMOJI,        /* /emoji/NAME.png */
    WF_ROUTE_AVATAR,       /* /users/NAME/avatar.png, /actor/avatar.png */
    WF_ROUTE_HEADER,       /* /users/NAME/header.png, /actor/header.png */
    WF_ROUTE_EMOJI_DOC,    /* /emoji/NAME: the Emoji object a tag's id names (page.h) */
};

/* One image: what its URL says (the URL forms are in webfinger/media.h). */
struct wf_media {
    uint64_t id;
    unsigned width, height; /* 1..WF_MEDIA_DIM_MAX */
    uint64_t bytes;         /* wf_media_min_bytes(width, height)..WF_MEDIA_BYTES_MAX */
};

struct wf_route {
    enum wf_route_kind kind;
    int instance;          /* 1..instances */
    int actor;             /* 0 = instance actor, 1..actors; -1 when the route has none */
    uint64_t seq;          /* NOTE and ACTIVITY; the page id of PAGE */
    struct wf_media media; /* MEDIA, EMOJI, AVATAR, HEADER: the image to serve */
};

/* Route a request for host (Host header value) and path (without query). Returns the
 * HTTP status to answer when the request is not routable: 0 when routed (out filled),
 * 421 for a host that is not the crowd's, 404 for an unknown path or actor. */
int wf_route(const struct wf_crowd *c, const char *host, const char *path, struct wf_route *out);
/* Route a path (len bytes) of a known instance: 0 and out filled, or 404. */
int wf_route_path(const struct wf_crowd *c, int instance, const char *path, size_t len,
                  struct wf_route *out);

/* ---- documents ----------------------------------------------------------------------- */

/* Key material an actor document shows. */
struct wf_key_info {
    const char *public_pem;        /* SPKI PEM of the key named "#main-key" */
    const char *ed25519_multibase; /* optional FEP-521a assertionMethod, or NULL */
};

/* A rendered answer. body is a new string (free()) or NULL when status says there is
 * none; content_type is static. */
struct wf_doc {
    int status;
    const char *content_type;
    char *body;
    size_t len;
};

/* WebFinger for instance i and the raw "resource" query value (already URL-decoded;
 * NULL when absent): acct:NAME@HOST or an actor URL. 200 JRD (application/jrd+json),
 * 400 with a one-line reason for a missing or malformed resource, 404 for an unknown
 * account or another host. Rules: at most 512 bytes, printable ASCII without spaces;
 * "acct:" (any case) then NAME@HOST, NAME matching Mastodon's [a-z0-9_]+([.-]+[a-z0-9_]+)*
 * (any case, at most 128), HOST this instance's with no port or the public one (any case,
 * trailing dot tolerated); or an actor id exactly (scheme, host and port as served).
 * acct:HOST@HOST is the instance actor (/actor), as on Mastodon. The JRD's subject has no
 * port (Mastodon drops it); its links and alias carry the actor id. */
void wf_webfinger(const struct wf_crowd *c, int instance, const char *resource, struct wf_doc *out);
/* wf_webfinger over len bytes of resource, so a decoded value holding a NUL (%00) is
 * refused with 400 instead of being cut short (MHD_lookup_connection_value_n gives len). */
void wf_webfinger_n(const struct wf_crowd *c, int instance, const char *resource, size_t len,
                    struct wf_doc *out);
void wf_host_meta(const struct wf_crowd *c, int instance, struct wf_doc *out);
void wf_nodeinfo_wellknown(const struct wf_crowd *c, int instance, struct wf_doc *out);
/* version "2.0" or "2.1"; users = actors of the instance. */
void wf_nodeinfo(const struct wf_crowd *c, int instance, const char *version, struct wf_doc *out);
/* Person (actor >= 1) or Application (actor 0) document. application/activity+json.
 * key is borrowed; a NULL key (or public_pem) leaves publicKey out. 404 for an actor or
 * instance out of range. Costs a few microseconds: fine to render on every GET. */
void wf_actor(const struct wf_crowd *c, int instance, int actor, const struct wf_key_info *key,
              struct wf_doc *out);
/* The standalone key document of actor (served at ACTOR/main-key; the keyId flood signs
 * with stays ACTOR#main-key): {"@context", "id", "type": "Key", "owner", "publicKeyPem"}.
 * key is borrowed; 404 without a key or for an actor out of range. */
void wf_key_doc(const struct wf_crowd *c, int instance, int actor, const struct wf_key_info *key,
                struct wf_doc *out);
/* An OrderedCollection (kind is WF_ROUTE_OUTBOX, _FOLLOWERS or _FOLLOWING) of actor, with
 * the given item ids (borrowed) inline as orderedItems; total may exceed n_items. */
void wf_collection(const struct wf_crowd *c, int instance, int actor, enum wf_route_kind kind,
                   const char *const *items, size_t n_items, size_t total, struct wf_doc *out);
/* A JSON error document {"error": msg} with status. */
void wf_error(int status, const char *msg, struct wf_doc *out);
void wf_doc_free(struct wf_doc *d);

/* Serialize a JSON value compactly into out (body owned by out); json is borrowed. */
void wf_doc_json(int status, const char *content_type, const json_t *json, struct wf_doc *out);
/* The same, taking the reference to json (decref'd). A NULL json (a failed json_pack)
 * gives a 500 document, so callers can pass json_pack's result straight in. */
void wf_doc_json_steal(int status, const char *content_type, json_t *json, struct wf_doc *out);

#define WF_CT_ACTIVITY "application/activity+json"
#define WF_CT_JRD      "application/jrd+json"
#define WF_CT_JSON     "application/json"
#define WF_CT_XRD      "application/xrd+xml"

/* Whether an Accept header asks for ActivityPub JSON (activity+json, ld+json with or
 * without profile, or json); NULL/empty counts as yes. */
int wf_accepts_activity_json(const char *accept);

#endif
