/* flood/send/hclient_parse.c: the HTTP/1.x answer parser of the sender's client (see
 * hclient.h): Debian's packaged http-parser (2.9) does the syntax; this file keeps what
 * the client needs of an answer: the final status, whether Retry-After came (matched case
 * insensitively across however the header's name was split between reads, RFC 9110
 * section 5.1), and whether the connection may be reused. 1xx answers are read and
 * skipped (RFC 9110 section 15.2); the body is never kept. */
#include "flood/send/hclient.h"
#include "flood/send/hclient_parse.h"

#include <stdlib.h>
#include <string.h>

static const char RETRY_AFTER[] = "retry-after";
#define RETRY_AFTER_LEN (sizeof(RETRY_AFTER) - 1)

static int on_begin(http_parser *hp)
{
    struct hc_parse *p = hp->data;
    p->status_cur = 0;
    p->ra_cur = 0;
    p->match = 0;
    p->in_value = 0;
    return 0;
}

/* A header's name may come in pieces: the match goes on until a value starts. */
static int on_field(http_parser *hp, const char *at, size_t len)
{
    struct hc_parse *p = hp->data;
    if (p->in_value) {
        p->in_value = 0;
        p->match = 0;
    }
    if (p->match < 0)
        return 0;
    if ((size_t)p->match + len > RETRY_AFTER_LEN) {
        p->match = -1;
        return 0;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)at[i];
        if (ch >= 'A' && ch <= 'Z')
            ch = (unsigned char)(ch - 'A' + 'a');
        if (ch != (unsigned char)RETRY_AFTER[p->match + (int)i]) {
            p->match = -1;
            return 0;
        }
    }
    p->match += (int)len;
    return 0;
}

static int on_value(http_parser *hp, const char *at, size_t len)
{
    (void)at;
    (void)len;
    struct hc_parse *p = hp->data;
    if (!p->in_value) {
        p->in_value = 1;
        if (p->match == (int)RETRY_AFTER_LEN)
            p->ra_cur = 1;
    }
    return 0;
}

static int on_headers_complete(http_parser *hp)
{
    struct hc_parse *p = hp->data;
    /* "HTTP/2.0 200" parses, but is not an answer this client can read */
    if (hp->http_major != 1)
        return -1;
    /* 101 Switching Protocols to a POST that asked for no upgrade: nothing after it is
     * HTTP/1.1 any more */
    if (hp->status_code == 101)
        return -1;
    if (!p->in_value && p->match == (int)RETRY_AFTER_LEN)
        p->ra_cur = 1; /* "Retry-After:" with an empty value, the last header */
    p->status_cur = hp->status_code;
    return 0;
}

static int on_message_complete(http_parser *hp)
{
    struct hc_parse *p = hp->data;
    if (p->status_cur < 200)
        return 0; /* 100 Continue, 103 Early Hints: the final answer follows */
    p->finals++;
    p->last_status = p->status_cur;
    p->last_ra = p->ra_cur;
    p->last_keep = http_should_keep_alive(hp);
    http_parser_pause(hp, 1); /* hand the final answer to the caller at once */
    return 0;
}

static const http_parser_settings settings = {
    .on_message_begin = on_begin,
    .on_header_field = on_field,
    .on_header_value = on_value,
    .on_headers_complete = on_headers_complete,
    .on_message_complete = on_message_complete,
};

void hc_parse_init(struct hc_parse *p)
{
    memset(p, 0, sizeof(*p));
    http_parser_init(&p->hp, HTTP_RESPONSE);
    p->hp.data = p;
}

int hc_parse_run(struct hc_parse *p, const char *buf, size_t len, size_t *used)
{
    *used = 0;
    if (p->failed)
        return -1;
    size_t n = http_parser_execute(&p->hp, &settings, buf, len);
    enum http_errno e = HTTP_PARSER_ERRNO(&p->hp);
    if (e == HPE_PAUSED) {
        http_parser_pause(&p->hp, 0);
        *used = n;
        return 1;
    }
    if (e != HPE_OK || n != len) {
        p->failed = 1;
        return -1;
    }
    *used = n;
    return 0;
}

int hc_parse_run_eof(struct hc_parse *p)
{
    if (p->failed)
        return -1;
    http_parser_execute(&p->hp, &settings, NULL, 0);
    enum http_errno e = HTTP_PARSER_ERRNO(&p->hp);
    if (e == HPE_PAUSED) {
        http_parser_pause(&p->hp, 0);
        p->last_keep = 0;
        return 1;
    }
    if (e != HPE_OK) {
        p->failed = 1;
        return -1;
    }
    return 0;
}

/* ---- the stand-alone parser (fuzzer, tests) ------------------------------------------ */

struct hc_parse *hc_parse_new(void)
{
    struct hc_parse *p = flood_xmalloc(sizeof(*p));
    hc_parse_init(p);
    return p;
}

int hc_parse_feed(struct hc_parse *p, const char *buf, size_t len)
{
    while (len > 0) {
        size_t used;
        int r = hc_parse_run(p, buf, len, &used);
        if (r < 0)
            return -1;
        if (r == 0 || used == 0)
            break;
        buf += used;
        len -= used;
    }
    return p->finals;
}

int hc_parse_eof(struct hc_parse *p)
{
    return hc_parse_run_eof(p) < 0 ? -1 : p->finals;
}

int hc_parse_last_status(const struct hc_parse *p)
{
    return p->last_status;
}

int hc_parse_retry_after(const struct hc_parse *p)
{
    return p->last_ra;
}

void hc_parse_free(struct hc_parse *p)
{
    free(p);
}
