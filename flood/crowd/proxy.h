/* flood/crowd/proxy.h: the egress proxy (--proxy ADDR:PORT): the target's only way out.
 *
 * A listener of its own, on one thread with an epoll set, beside the crowd's server:
 *   - an absolute-form request for a crowd name ("GET http://flood7.test/users/user3") is
 *     relayed to the crowd's own listener over loopback in origin-form with Host set to the
 *     URL's authority, its answer relayed back unchanged (keep-alive, pipelined requests
 *     answered in order, bodies framed by Content-Length or chunked);
 *   - "CONNECT floodK.test:PORT" (any port) is answered 200 and tunnelled byte for byte into
 *     the crowd's listener (TLS or plain, whatever the crowd serves: one TLS stack, the
 *     instance taken from SNI and Host there as for any connection);
 *   - anything else (a name that is not the crowd's, an address, the proxy's own port, a
 *     request to the proxy itself) is answered 403 and reported, by host and by reason;
 *   - a malformed head gets its 400/431/505 and a close, a head not finished within
 *     PROXY_HEAD_WAIT_S a 408, a tunnel that sends nothing within PROXY_TLS_WAIT_S (or, the
 *     crowd serving TLS, whose first byte is no TLS handshake) is closed; each reported.
 * Every event reaches the rooms above through struct proxy_hooks (measure/egress.c counts
 * them), called on the proxy's thread. */
#ifndef FLOOD_PROXY_H
#define FLOOD_PROXY_H

#include <stddef.h>
#include <stdint.h>

#include "flood/crowd/crowd.h"
#include "flood/crowd/proxy_parse.h"

#define PROXY_HEAD_WAIT_S 10  /* a request head must be whole this long after its first byte */
#define PROXY_TLS_WAIT_S  10  /* a tunnel's first byte must come this long after the 200 */
#define PROXY_IDLE_S      120 /* a connection with nothing in flight is closed after this */
#define PROXY_CONN_MAX    20000

enum proxy_event_kind {
    PROXY_EV_ACCEPT = 0, /* a client connection opened */
    PROXY_EV_CLOSE,      /* a client connection closed (idle: by the idle timeout) */
    PROXY_EV_REQUEST,    /* a request head read (or rejected as malformed) */
    PROXY_EV_RELAYED,    /* an absolute-form request sent on to instance */
    PROXY_EV_ANSWERED,   /* a relayed request's answer went back whole (status) */
    PROXY_EV_FAILED,     /* a relayed request or CONNECT the crowd did not answer (502/cut) */
    PROXY_EV_REFUSED,    /* 403: host and refuse */
    PROXY_EV_BAD,        /* malformed: bad (PROXY_BAD_NONE: a head that timed out, 408) */
    PROXY_EV_CONNECT,    /* a tunnel opened to instance */
    PROXY_EV_TUNNEL_END, /* a tunnel closed: instance, bytes_up/down, reason */
    PROXY_EV_INSTANCE,   /* a connection now carries instance (prev: the one it carried) */
    PROXY_EV_BAD_BODY,   /* a relayed request's chunked body broke its framing: closed */
    PROXY_EV__COUNT
};

/* Why a tunnel ended. */
enum proxy_tunnel_end {
    PROXY_TUNNEL_DONE = 0, /* both sides closed */
    PROXY_TUNNEL_HALF,     /* one side ended first, the other still sent after it */
    PROXY_TUNNEL_SILENT,   /* no byte from the client within PROXY_TLS_WAIT_S */
    PROXY_TUNNEL_NOT_TLS,  /* the crowd serves TLS, the client's first byte is no handshake */
    PROXY_TUNNEL_ERROR,    /* a reset or the proxy stopping */
};

/* One event, borrowed for the hook's call. */
struct proxy_event {
    enum proxy_event_kind kind;
    int instance;      /* RELAYED, ANSWERED, CONNECT, TUNNEL_END, INSTANCE; else 0 */
    int prev;          /* INSTANCE: the instance before (0: none), CLOSE: the last one */
    int status;        /* ANSWERED: the crowd's status */
    int idle;          /* CLOSE: closed by the idle timeout */
    int reused;        /* RELAYED: the connection's previous request was for instance too */
    uint64_t requests; /* CLOSE: requests the connection carried */
    const char *host;  /* REFUSED: the authority as asked ("" for origin-form) */
    size_t host_len;
    enum proxy_refuse refuse;      /* REFUSED */
    enum proxy_bad bad;            /* BAD */
    enum proxy_tunnel_end end;     /* TUNNEL_END */
    uint64_t bytes_up, bytes_down; /* TUNNEL_END */
};

struct proxy_hooks {
    void *ctx;
    void (*event)(void *ctx, const struct proxy_event *ev);
};

struct proxy;

/* Listen on listen ("ADDR:PORT", port 0 picks one) and relay to the crowd's listener at
 * upstream ("ADDR:PORT" as server_address gives it; 0.0.0.0 and :: are reached on loopback).
 * crowd is borrowed (its names decide what is relayed) and must outlive the proxy; hooks
 * is copied. A new proxy (proxy_stop), or NULL and err ("proxy: cannot listen on ..."). */
struct proxy *proxy_start(const struct crowd *crowd, const char *listen, const char *upstream,
                          const struct proxy_hooks *hooks, struct flood_err *err) FLOOD_WUR;
/* The bound port and "ADDR:PORT". */
int proxy_port(const struct proxy *p);
const char *proxy_address(const struct proxy *p);
/* Stop: close every connection (a tunnel ends PROXY_TUNNEL_ERROR, a request still waiting
 * for its answer is FAILED), join the thread, free. p may be NULL. */
void proxy_stop(struct proxy *p);

#endif
