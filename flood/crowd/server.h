/* flood/crowd/server.h: the crowd's HTTP server (libmicrohttpd). One listener answers every
 * instance by its Host header; the glue only turns a request into a call of webfinger/
 * (documents) or of a hook (inbox deliveries, the sender's objects, faults) and the
 * answer into a response. Hooks run on the server's threads and must be thread-safe. */
#ifndef FLOOD_SERVER_H
#define FLOOD_SERVER_H

#include <stddef.h>

#include "flood/crowd/crowd.h"
#include "webfinger/wf.h"

#define SERVER_BODY_MAX (1024 * 1024) /* Mastodon's inbox limit too: 413 beyond */

/* A request as a hook sees it; everything is borrowed for the hook's call only. */
struct server_req {
    const char *method;
    const char *host;   /* Host header */
    const char *path;   /* without the query */
    const char *query;  /* raw query string without '?', or NULL */
    const char *remote; /* peer address as text */
    const char *body;   /* the whole body (POST), NUL-terminated, or NULL */
    size_t body_len;
    struct wf_route route;
    void *conn; /* for server_req_header */
};

/* A header of the request (case-insensitive name), or NULL. Borrowed. */
const char *server_req_header(const struct server_req *req, const char *name);
/* Every header of the request into hdrs[max] as name/value pairs; returns the count
 * (at most max). Borrowed. Used to verify signatures over any declared header list. */
struct sign_header;
size_t server_req_headers(const struct server_req *req, struct sign_header *hdrs, size_t max);

/* What a fault hook asks the server to do with a request before answering. */
struct server_fault {
    long delay_ms;    /* answer after this long (the connection suspended meanwhile) */
    int status;       /* answer this status instead (with retry_after when > 0) */
    long retry_after; /* seconds, 0 for none */
    int reset;        /* close the connection at once (RST) */
    int hang;         /* never answer; the client times out */
};

/* A GET or HEAD the crowd answered on one of its hosts, as the served hook sees it at
 * the request's end. Borrowed for the call. */
struct server_served {
    const char *url;              /* the Host header and the path, e.g. "flood1.test/users/user1" */
    const struct wf_route *route; /* kind WF_ROUTE_NONE for an unknown path (404) */
    int status;                   /* the status answered */
    uint64_t bytes;               /* body bytes sent (0 for HEAD; a stream counts what went out) */
    uint64_t serve_us;            /* from the request's first byte to its end, microseconds */
    int complete;                 /* the answer went out whole */
};

/* Hooks: each returns 0 for "not mine" (the server answers by default) or an HTTP status
 * with out filled (body owned by out). ctx is passed back. Any may be NULL. */
struct server_hooks {
    void *ctx;
    /* POST to a personal or the shared inbox; default: 202. */
    int (*inbox)(void *ctx, const struct server_req *req, struct wf_doc *out);
    /* GET of WF_ROUTE_NOTE / WF_ROUTE_ACTIVITY / WF_ROUTE_OUTBOX; default: 404 (outbox empty). */
    int (*object)(void *ctx, const struct server_req *req, struct wf_doc *out);
    /* GET of WF_ROUTE_ACTOR / WF_ROUTE_KEY of an actor whose document changed during the
     * run (an Update(Person): new name, icon, perhaps a rotated key); 0 serves the crowd's
     * own (pre-rendered) document. */
    int (*actor)(void *ctx, const struct server_req *req, struct wf_doc *out);
    /* Called first for every request; fills *fault and returns 1 to inject one. */
    int (*fault)(void *ctx, const struct server_req *req, struct server_fault *fault);
    /* Extra routes outside the crowd's hosts (e.g. a metrics page); 0 when not handled. */
    int (*other)(void *ctx, const struct server_req *req, struct wf_doc *out);
    /* Called once at the end of every GET or HEAD answered on a crowd host (not inbox
     * POSTs, not the other hook's pages), from a server thread: fetch accounting. */
    void (*served)(void *ctx, const struct server_served *f);
    /* An inbox POST to instance began (delta 1, at its first byte) or ended (-1, at its
     * completion): the sender's concurrent requests per instance. */
    void (*inbox_flight)(void *ctx, int instance, int delta);
};

struct server_stats {
    unsigned long long requests, by_status[6]; /* [k] = kxx, [0] others */
    unsigned long long bad_host, too_large, faults;
    unsigned long long unflushed;    /* TLS answers that could not leave: their connection cut */
    unsigned long long hangs_closed; /* hung connections let go once their peer had closed */
};

struct server;

/* Listen on crowd->opts.listen and serve in the server's own threads. A new server (stop
 * with server_stop), or NULL and err ("server: cannot listen on '...': ..."). */
struct server *server_start(struct crowd *crowd, const struct server_hooks *hooks,
                            struct flood_err *err) FLOOD_WUR;
/* The bound port (useful with port 0) and the address as "ADDR:PORT". */
int server_port(const struct server *s);
const char *server_address(const struct server *s);
void server_get_stats(struct server *s, struct server_stats *out);
/* The crowd's name server started with the listener (--dns; dns.h), or NULL. Borrowed. */
struct dns;
struct dns *server_dns(const struct server *s);
/* Stop listening, finish the requests in flight and free the server. */
void server_stop(struct server *s);

#endif
