/* flood/send/hclient_parse.h: the answer parser's state, shared by hclient.c (which embeds
 * one in each connection, so reading an answer allocates nothing) and hclient_parse.c.
 * Internal to the client: the public face is hc_parse_* in hclient.h. */
#ifndef FLOOD_HCLIENT_PARSE_H
#define FLOOD_HCLIENT_PARSE_H

#include <http_parser.h>
#include <stddef.h>

struct hc_parse {
    http_parser hp;
    int failed;      /* the bytes were not HTTP/1.x: every later feed fails */
    int finals;      /* final answers completed */
    int status_cur;  /* the answer being read */
    int ra_cur;      /* it carried Retry-After */
    int match;       /* characters of "retry-after" matched by the field so far, -1: not it */
    int in_value;    /* the last header callback was a value */
    int last_status; /* the last final answer */
    int last_ra;
    int last_keep; /* the connection may carry another request after it */
};

/* Ready p for a new answer stream (a new request on a connection). */
void hc_parse_init(struct hc_parse *p);
/* Parse up to the end of the next final answer (1xx answers are skipped). *used: bytes
 * consumed. Returns 1 when a final answer ended (at buf + *used: later bytes are not its),
 * 0 when all of buf was consumed and more is needed, -1 when the bytes are not HTTP/1.x. */
int hc_parse_run(struct hc_parse *p, const char *buf, size_t len, size_t *used);
/* The peer closed: 1 when that ended a final answer (a close-delimited body), 0 when no
 * answer was under way, -1 when one was cut short. */
int hc_parse_run_eof(struct hc_parse *p);

#endif
