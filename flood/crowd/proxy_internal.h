/* flood/crowd/proxy_internal.h: the egress proxy's connection state, shared by proxy.c (the
 * listener, the loop, the sweep) and proxy_conn.c (a connection's state machine). */
#ifndef FLOOD_PROXY_INTERNAL_H
#define FLOOD_PROXY_INTERNAL_H

#include <pthread.h>
#include <sys/socket.h>

#include "flood/crowd/proxy.h"

#define BUF_CAP         (64 * 1024)
#define IN_CAP          (PROXY_HEAD_MAX + 16 * 1024)
#define PROXY_LINGER_MS 2000 /* what a client sends after a closing answer is read this long */
#define QUEUE_MAX       64   /* answers owed on one connection; reading stops while it is full */

enum mode { M_HEAD = 0, M_TUNNEL };

/* An answer owed to the client, in request order: the crowd's or one of the proxy's own. */
struct slot {
    char *local; /* the proxy's own answer (owned), or NULL: the crowd's */
    size_t local_len;
    int head_req; /* HEAD: the crowd's answer has no body */
    int close;    /* close the connection once this answer is out */
};

struct side {
    struct pconn *c;
    int fd;
    unsigned mask; /* the events registered */
};

struct pconn {
    struct proxy *p;
    struct side cl, up; /* up.fd -1: no upstream connection */
    enum mode mode;
    int connecting; /* upstream connect() in progress */
    char *in;       /* client bytes not yet parsed (HEAD) */
    size_t in_len;
    char *upb; /* bytes for the crowd */
    size_t up_len, up_off;
    char *uin; /* the crowd's bytes not yet walked (HEAD) */
    size_t uin_len;
    char *down; /* bytes for the client */
    size_t down_len, down_off;
    /* the request body being passed on */
    enum proxy_body req_body;
    uint64_t req_left;
    struct proxy_chunked req_ck;
    /* the answers owed, a ring */
    struct slot q[QUEUE_MAX];
    int q_first, q_n;
    /* the crowd's answer being walked */
    int resp_in_body;
    struct proxy_resp resp;
    uint64_t resp_left;
    struct proxy_chunked resp_ck;
    int cl_eof, up_eof, cl_shut, up_shut;
    int half_used;    /* a tunnel carried bytes one way after the other way's end */
    int64_t t_linger; /* when the write side was shut after a closing answer (0: not yet) */
    int closing;      /* no more reading: close once down is written */
    int no_more;      /* a bad head or a refused body: read nothing after it */
    int64_t t_head;   /* when the unfinished head's first byte came (0: none) */
    int64_t t_last;   /* the last byte from the client */
    int64_t t_tunnel; /* when the 200 went out; 0 once the first byte came */
    int instance;     /* the instance the last request or the tunnel was for */
    uint64_t requests, bytes_up, bytes_down;
    int dead;
    struct pconn *next, *prev, *next_dead;
};

struct proxy {
    const struct crowd *crowd;
    struct proxy_hooks hooks;
    int lfd, efd, wfd, port;
    char address[128];
    struct sockaddr_storage up_addr;
    socklen_t up_len;
    pthread_t thread;
    int started;
    struct pconn *conns, *dead;
    int n_conns;
};

/* The clock, milliseconds (CLOCK_MONOTONIC). */
int64_t pconn_now_ms(void);
/* Tell the hooks of an event. */
void pconn_emit(struct proxy *p, const struct proxy_event *ev);
void pconn_emit_kind(struct proxy *p, enum proxy_event_kind k, int instance);
/* Queue one of the proxy's own answers (close: the connection ends after it). */
void pconn_owe_local(struct pconn *c, int status, const char *reason, const char *text, int close);
/* After any event: move bytes, pick the events to wait for, close when done. */
void pconn_step(struct pconn *c);
/* Close c (reporting what it owed), unlink it and put it on the dead list. */
void pconn_close(struct pconn *c, int idle, enum proxy_tunnel_end end);
/* The client's or the crowd's socket is ready. */
void pconn_on_client(struct pconn *c, unsigned events);
void pconn_on_upstream(struct pconn *c, unsigned events);

#endif
