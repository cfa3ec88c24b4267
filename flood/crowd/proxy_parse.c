/* flood/crowd/proxy_parse.c: the egress proxy's request and answer heads, authorities and
 * chunked framing, as pure functions (proxy_parse.h). */
#include "flood/crowd/proxy_parse.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static int is_tchar(unsigned char c)
{
    /* RFC 9110 5.6.2 token characters */
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static int is_hex(unsigned char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* The end of the head (just past CRLF CRLF) in buf[len], or 0. */
static size_t head_end(const char *buf, size_t len)
{
    const char *e = len >= 4 ? memmem(buf, len, "\r\n\r\n", 4) : NULL;
    return e ? (size_t)(e - buf) + 4 : 0;
}

static int same_ci(const char *a, size_t alen, const char *lit)
{
    size_t n = strlen(lit);
    return alen == n && strncasecmp(a, lit, n) == 0;
}

/* Does the comma-separated list v[n] hold token tok (case-insensitive)? */
static int list_has(const char *v, size_t n, const char *tok)
{
    size_t i = 0;
    while (i < n) {
        while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
            i++;
        size_t s = i;
        while (i < n && v[i] != ',')
            i++;
        size_t e = i;
        while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
            e--;
        if (e > s && same_ci(v + s, e - s, tok))
            return 1;
    }
    return 0;
}

/* Digits only, no overflow past 2^62. 0, or -1. */
static int parse_u64(const char *s, size_t n, uint64_t *out)
{
    if (n == 0 || n > 18)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return 0;
}

/* ---- authorities ----------------------------------------------------------------------- */

static int parse_ipv4(const char *s, size_t n)
{
    int parts = 0;
    size_t i = 0;
    while (i < n) {
        size_t st = i;
        unsigned v = 0;
        while (i < n && is_digit((unsigned char)s[i]) && i - st < 3)
            v = v * 10 + (unsigned)(s[i++] - '0');
        if (i == st || v > 255 || (i - st > 1 && s[st] == '0'))
            return 0;
        parts++;
        if (i == n)
            break;
        if (s[i] != '.' || parts == 4)
            return 0;
        i++;
        if (i == n)
            return 0;
    }
    return parts == 4;
}

int proxy_parse_authority(const char *s, size_t len, int need_port, struct proxy_authority *out)
{
    memset(out, 0, sizeof(*out));
    if (!s || len == 0 || len > WF_HOST_MAX + 8)
        return -1;
    size_t host_end;
    if (s[0] == '[') {
        const char *rb = memchr(s, ']', len);
        if (!rb || rb == s + 1)
            return -1;
        for (const char *p = s + 1; p < rb; p++)
            if (!is_hex((unsigned char)*p) && *p != ':' && *p != '.')
                return -1;
        out->host = s + 1;
        out->host_len = (size_t)(rb - s) - 1;
        out->kind = PROXY_HOST_IPV6;
        host_end = (size_t)(rb - s) + 1;
    } else {
        const char *colon = memchr(s, ':', len);
        host_end = colon ? (size_t)(colon - s) : len;
        if (host_end == 0 || host_end >= WF_HOST_MAX)
            return -1;
        for (size_t i = 0; i < host_end; i++) {
            unsigned char c = (unsigned char)s[i];
            if (!(is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' ||
                  c == '.' || c == '_'))
                return -1;
        }
        out->host = s;
        out->host_len = host_end;
        out->kind = parse_ipv4(s, host_end) ? PROXY_HOST_IPV4 : PROXY_HOST_NAME;
    }
    if (host_end == len)
        return need_port ? -1 : 0;
    if (s[host_end] != ':' || host_end + 1 == len || len - host_end - 1 > 5)
        return -1;
    uint64_t port;
    if (parse_u64(s + host_end + 1, len - host_end - 1, &port) || port == 0 || port > 65535)
        return -1;
    out->port = (int)port;
    return 0;
}

/* ---- the request line ------------------------------------------------------------------ */

/* Split an absolute-form target "scheme://authority[/path...]" into h. 0, or -1 (bad
 * authority). A target without "://" is not absolute. */
static int parse_absolute(const char *t, size_t n, struct proxy_head *h, enum proxy_bad *bad)
{
    const char *sep = n > 3 ? memmem(t, n, "://", 3) : NULL;
    if (!sep || sep == t) {
        *bad = PROXY_BAD_LINE;
        return -1;
    }
    size_t slen = (size_t)(sep - t);
    for (size_t i = 0; i < slen; i++) {
        unsigned char c = (unsigned char)t[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (i && (is_digit(c) || c == '+' || c == '-' || c == '.')))) {
            *bad = PROXY_BAD_LINE;
            return -1;
        }
    }
    if (same_ci(t, slen, "https"))
        h->https = 1;
    else if (!same_ci(t, slen, "http"))
        h->scheme_other = 1;
    const char *a = sep + 3, *end = t + n;
    const char *p = a;
    while (p < end && *p != '/' && *p != '?' && *p != '#')
        p++;
    if (memchr(a, '@', (size_t)(p - a)) || proxy_parse_authority(a, (size_t)(p - a), 0, &h->auth)) {
        *bad = PROXY_BAD_AUTHORITY; /* userinfo is refused too (RFC 9110 4.2.4) */
        return -1;
    }
    if (p < end && *p == '#') {
        *bad = PROXY_BAD_LINE;
        return -1;
    }
    if (p == end) {
        h->path = "/"; /* "http://h": the path is "/" (RFC 9112 3.2.1) */
        h->path_len = 1;
    } else { /* "/path..." or "?query" (proxy_rewrite puts the "/" before it) */
        h->path = p;
        h->path_len = (size_t)(end - p);
    }
    h->form = PROXY_FORM_ABSOLUTE;
    return 0;
}

static int parse_line(const char *buf, size_t n, struct proxy_head *h, enum proxy_bad *bad)
{
    *bad = PROXY_BAD_LINE;
    size_t i = 0;
    while (i < n && is_tchar((unsigned char)buf[i]))
        i++;
    if (i == 0 || i >= n || buf[i] != ' ')
        return -1;
    h->method = buf;
    h->method_len = i;
    size_t ts = ++i;
    while (i < n && (unsigned char)buf[i] > ' ' && buf[i] != 0x7f)
        i++;
    if (i == ts || i >= n || buf[i] != ' ')
        return -1;
    const char *t = buf + ts;
    size_t tn = i - ts;
    if (memchr(t, '#', tn))
        return -1; /* a fragment is never sent (RFC 9112 3.2) */
    const char *v = buf + i + 1;
    size_t vn = n - i - 1;
    if (vn != 8 || memcmp(v, "HTTP/1.", 7) != 0 || !is_digit((unsigned char)v[7])) {
        if (vn >= 5 && memcmp(v, "HTTP/", 5) == 0) {
            *bad = PROXY_BAD_VERSION;
            return -1;
        }
        return -1;
    }
    if (v[7] != '0' && v[7] != '1') {
        *bad = PROXY_BAD_VERSION;
        return -1;
    }
    h->minor = v[7] - '0';
    if (h->method_len == 7 && !memcmp(h->method, "CONNECT", 7)) {
        if (proxy_parse_authority(t, tn, 1, &h->auth)) {
            *bad = PROXY_BAD_AUTHORITY;
            return -1;
        }
        h->form = PROXY_FORM_AUTHORITY;
    } else if (t[0] == '/') {
        h->form = PROXY_FORM_ORIGIN;
        h->path = t;
        h->path_len = tn;
    } else if (tn == 1 && t[0] == '*') {
        h->form = PROXY_FORM_ASTERISK;
    } else if (parse_absolute(t, tn, h, bad)) {
        return -1;
    }
    *bad = PROXY_BAD_NONE;
    return 0;
}

/* ---- headers --------------------------------------------------------------------------- */

/* One header line buf[n] (no CRLF) into h. 0, or -1 and *bad. */
static int parse_header(const char *buf, size_t n, struct proxy_head *h, int *saw_cl, int *ka,
                        enum proxy_bad *bad)
{
    size_t i = 0;
    while (i < n && is_tchar((unsigned char)buf[i]))
        i++;
    if (i == 0 || i >= n || buf[i] != ':') {
        *bad = PROXY_BAD_HEADER;
        return -1;
    }
    const char *name = buf;
    size_t name_len = i++;
    while (i < n && (buf[i] == ' ' || buf[i] == '\t'))
        i++;
    const char *v = buf + i;
    size_t vn = n - i;
    while (vn && (v[vn - 1] == ' ' || v[vn - 1] == '\t'))
        vn--;
    for (size_t k = 0; k < vn; k++) {
        unsigned char c = (unsigned char)v[k];
        if ((c < ' ' && c != '\t') || c == 0x7f) {
            *bad = PROXY_BAD_HEADER;
            return -1;
        }
    }
    if (same_ci(name, name_len, "content-length")) {
        uint64_t cl;
        if (parse_u64(v, vn, &cl) || (*saw_cl && cl != h->content_length)) {
            *bad = PROXY_BAD_FRAMING;
            return -1;
        }
        *saw_cl = 1;
        h->content_length = cl;
    } else if (same_ci(name, name_len, "transfer-encoding")) {
        if (!same_ci(v, vn, "chunked") || h->body == PROXY_BODY_CHUNKED) {
            *bad = PROXY_BAD_FRAMING;
            return -1;
        }
        h->body = PROXY_BODY_CHUNKED;
    } else if (same_ci(name, name_len, "connection") ||
               same_ci(name, name_len, "proxy-connection")) {
        if (list_has(v, vn, "close"))
            h->close = 1;
        if (list_has(v, vn, "keep-alive"))
            *ka = 1;
    }
    return 0;
}

enum proxy_parse_rc proxy_parse_request(const char *buf, size_t len, struct proxy_head *out,
                                        enum proxy_bad *bad)
{
    memset(out, 0, sizeof(*out));
    *bad = PROXY_BAD_NONE;
    size_t scan = len > PROXY_HEAD_MAX ? PROXY_HEAD_MAX : len;
    size_t end = head_end(buf, scan);
    if (!end) {
        /* a request line already bad need not wait for the rest */
        const char *nl = memchr(buf, '\n', scan);
        if (nl) {
            size_t ln = (size_t)(nl - buf);
            if (ln == 0 || buf[ln - 1] != '\r' || parse_line(buf, ln - 1, out, bad)) {
                if (*bad == PROXY_BAD_NONE)
                    *bad = PROXY_BAD_LINE;
                return PROXY_PARSE_BAD;
            }
            memset(out, 0, sizeof(*out));
        }
        if (len >= PROXY_HEAD_MAX) {
            *bad = PROXY_BAD_TOO_LARGE;
            return PROXY_PARSE_BAD;
        }
        return PROXY_PARSE_MORE;
    }
    const char *line_end = memmem(buf, end, "\r\n", 2);
    if (parse_line(buf, (size_t)(line_end - buf), out, bad))
        return PROXY_PARSE_BAD;
    int saw_cl = 0, ka = 0;
    const char *p = line_end + 2, *stop = buf + end - 2;
    while (p < stop) {
        const char *e = memmem(p, (size_t)(stop - p) + 2, "\r\n", 2);
        size_t n = (size_t)(e - p);
        /* a bare CR or LF inside a line, or a folded line, is not a header */
        if (memchr(p, '\n', n) || memchr(p, '\r', n) || p[0] == ' ' || p[0] == '\t') {
            *bad = PROXY_BAD_HEADER;
            return PROXY_PARSE_BAD;
        }
        if (++out->n_headers > PROXY_HEADERS_MAX) {
            *bad = PROXY_BAD_TOO_LARGE;
            return PROXY_PARSE_BAD;
        }
        if (parse_header(p, n, out, &saw_cl, &ka, bad))
            return PROXY_PARSE_BAD;
        p = e + 2;
    }
    if (saw_cl && out->body == PROXY_BODY_CHUNKED) {
        *bad = PROXY_BAD_FRAMING;
        return PROXY_PARSE_BAD;
    }
    if (saw_cl && out->content_length > 0)
        out->body = PROXY_BODY_LENGTH;
    if (out->minor == 0 && !ka)
        out->close = 1;
    out->head_len = end;
    return PROXY_PARSE_OK;
}

/* ---- the decision ---------------------------------------------------------------------- */

int proxy_route(const struct proxy_head *h, const struct wf_crowd *c, int self_port,
                enum proxy_refuse *why)
{
    *why = PROXY_REFUSE_NONE;
    if (h->form == PROXY_FORM_ORIGIN || h->form == PROXY_FORM_ASTERISK) {
        *why = PROXY_REFUSE_ORIGIN;
        return 0;
    }
    const struct proxy_authority *a = &h->auth;
    int local = a->kind != PROXY_HOST_NAME || same_ci(a->host, a->host_len, "localhost");
    if (local && a->port == self_port) {
        *why = PROXY_REFUSE_SELF;
        return 0;
    }
    if (a->kind != PROXY_HOST_NAME) {
        *why = PROXY_REFUSE_ADDRESS;
        return 0;
    }
    if (h->form == PROXY_FORM_ABSOLUTE && (h->https || h->scheme_other)) {
        *why = PROXY_REFUSE_SCHEME;
        return 0;
    }
    int inst = wf_instance_of_host_n(c, a->host, a->host_len, WF_PORT_ANY);
    if (!inst)
        *why = PROXY_REFUSE_NOT_CROWD;
    return inst;
}

static const char *const bad_names[PROXY_BAD__COUNT][2] = {
    {"", ""},
    {"line", "malformed request line"},
    {"version", "HTTP version not supported"},
    {"header", "malformed header line"},
    {"too_large", "request head too large"},
    {"authority", "malformed authority"},
    {"framing", "unreadable or conflicting body framing"},
};

const char *proxy_bad_key(enum proxy_bad b)
{
    return (unsigned)b < PROXY_BAD__COUNT ? bad_names[b][0] : "?";
}

const char *proxy_bad_name(enum proxy_bad b)
{
    return (unsigned)b < PROXY_BAD__COUNT ? bad_names[b][1] : "?";
}

int proxy_bad_status(enum proxy_bad b)
{
    return b == PROXY_BAD_VERSION ? 505 : b == PROXY_BAD_TOO_LARGE ? 431 : 400;
}

static const char *const refuse_names[PROXY_REFUSE__COUNT][2] = {
    {"", ""},
    {"not_crowd", "not one of the crowd's names"},
    {"address", "an address, not a name"},
    {"self", "the proxy's own port"},
    {"origin", "not a proxy request (origin-form)"},
    {"scheme", "only http:// is relayed (https goes through CONNECT)"},
};

const char *proxy_refuse_key(enum proxy_refuse r)
{
    return (unsigned)r < PROXY_REFUSE__COUNT ? refuse_names[r][0] : "?";
}

const char *proxy_refuse_name(enum proxy_refuse r)
{
    return (unsigned)r < PROXY_REFUSE__COUNT ? refuse_names[r][1] : "?";
}

/* ---- origin-form ----------------------------------------------------------------------- */

static int put(char *out, size_t cap, size_t *at, const char *s, size_t n)
{
    if (*at + n > cap)
        return -1;
    memcpy(out + *at, s, n);
    *at += n;
    return 0;
}

size_t proxy_rewrite(const struct proxy_head *h, const char *buf, char *out, size_t cap)
{
    size_t at = 0;
    char ver[16] = "HTTP/1.0\r\n";
    ver[7] = (char)('0' + h->minor);
    const char *a = h->auth.host;
    size_t an = h->auth.host_len;
    char port[8] = "";
    size_t pn = 0;
    if (h->auth.port) {
        pn = (size_t)snprintf(port, sizeof(port), ":%d", h->auth.port);
    }
    if (put(out, cap, &at, h->method, h->method_len) || put(out, cap, &at, " ", 1) ||
        (h->path[0] == '?' && put(out, cap, &at, "/", 1)) ||
        put(out, cap, &at, h->path, h->path_len) || put(out, cap, &at, " ", 1) ||
        put(out, cap, &at, ver, 10) || put(out, cap, &at, "Host: ", 6) ||
        put(out, cap, &at, a, an) || put(out, cap, &at, port, pn) || put(out, cap, &at, "\r\n", 2))
        return 0;
    const char *p = memmem(buf, h->head_len, "\r\n", 2) + 2, *stop = buf + h->head_len - 2;
    while (p < stop) {
        const char *e = memmem(p, (size_t)(stop - p) + 2, "\r\n", 2);
        const char *colon = memchr(p, ':', (size_t)(e - p));
        size_t nn = (size_t)(colon - p);
        if (!same_ci(p, nn, "host") && !same_ci(p, nn, "proxy-connection") &&
            !same_ci(p, nn, "proxy-authorization") && put(out, cap, &at, p, (size_t)(e - p) + 2))
            return 0;
        p = e + 2;
    }
    if (put(out, cap, &at, "\r\n", 2))
        return 0;
    return at;
}

/* ---- answers --------------------------------------------------------------------------- */

enum proxy_parse_rc proxy_parse_response(const char *buf, size_t len, int head_req,
                                         struct proxy_resp *out)
{
    memset(out, 0, sizeof(*out));
    size_t end = head_end(buf, len > PROXY_HEAD_MAX ? PROXY_HEAD_MAX : len);
    if (!end)
        return len >= PROXY_HEAD_MAX ? PROXY_PARSE_BAD : PROXY_PARSE_MORE;
    if (end < 17 || memcmp(buf, "HTTP/1.", 7) || !is_digit((unsigned char)buf[7]) ||
        buf[8] != ' ' || !is_digit((unsigned char)buf[9]) || !is_digit((unsigned char)buf[10]) ||
        !is_digit((unsigned char)buf[11]) || (buf[12] != ' ' && buf[12] != '\r'))
        return PROXY_PARSE_BAD;
    out->status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
    if (out->status < 100)
        return PROXY_PARSE_BAD;
    int minor = buf[7] - '0', saw_cl = 0, ka = 0;
    const char *p = memmem(buf, end, "\r\n", 2) + 2, *stop = buf + end - 2;
    struct proxy_head h = {0};
    enum proxy_bad bad;
    while (p < stop) {
        const char *e = memmem(p, (size_t)(stop - p) + 2, "\r\n", 2);
        if (parse_header(p, (size_t)(e - p), &h, &saw_cl, &ka, &bad))
            return PROXY_PARSE_BAD;
        p = e + 2;
    }
    out->head_len = end;
    out->close = h.close || (minor == 0 && !ka);
    if (head_req || out->status < 200 || out->status == 204 || out->status == 304)
        out->body = PROXY_BODY_NONE;
    else if (h.body == PROXY_BODY_CHUNKED)
        out->body = saw_cl ? PROXY_BODY_CLOSE : PROXY_BODY_CHUNKED;
    else if (saw_cl) {
        out->body = h.content_length ? PROXY_BODY_LENGTH : PROXY_BODY_NONE;
        out->content_length = h.content_length;
    } else {
        out->body = PROXY_BODY_CLOSE;
        out->close = 1;
    }
    return PROXY_PARSE_OK;
}

/* ---- chunked --------------------------------------------------------------------------- */

enum {
    CK_SIZE = 0,
    CK_EXT,
    CK_SIZE_LF,
    CK_DATA,
    CK_DATA_CR,
    CK_DATA_LF,
    CK_TRAILER,
    CK_TRAILER_LF
};

#define CHUNK_LINE_MAX 4096

int proxy_chunked_feed(struct proxy_chunked *st, const char *buf, size_t len, size_t *used)
{
    size_t i = 0;
    while (i < len) {
        unsigned char c = (unsigned char)buf[i];
        switch (st->state) {
        case CK_SIZE:
            if (is_hex(c) && st->size_digits < 15) {
                unsigned d = is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10;
                st->left = st->left * 16 + d;
                st->size_digits++;
                i++;
            } else if (st->size_digits && (c == ';' || c == ' ' || c == '\t')) {
                st->state = CK_EXT;
                st->line = 0;
            } else if (st->size_digits && c == '\r') {
                st->state = CK_SIZE_LF;
                i++;
            } else {
                goto bad;
            }
            break;
        case CK_EXT:
            if (c == '\r') {
                st->state = CK_SIZE_LF;
            } else if ((c < ' ' && c != '\t') || ++st->line > CHUNK_LINE_MAX) {
                goto bad;
            }
            i++;
            break;
        case CK_SIZE_LF:
            if (c != '\n')
                goto bad;
            i++;
            st->size_digits = 0;
            st->line = 0;
            st->state = st->left ? CK_DATA : CK_TRAILER;
            break;
        case CK_DATA: {
            size_t n = len - i < st->left ? len - i : (size_t)st->left;
            i += n;
            st->left -= n;
            if (!st->left)
                st->state = CK_DATA_CR;
            break;
        }
        case CK_DATA_CR:
            if (c != '\r')
                goto bad;
            st->state = CK_DATA_LF;
            i++;
            break;
        case CK_DATA_LF:
            if (c != '\n')
                goto bad;
            st->state = CK_SIZE;
            i++;
            break;
        case CK_TRAILER:
            if (c == '\r') {
                st->state = CK_TRAILER_LF;
            } else if ((c < ' ' && c != '\t') || ++st->line > CHUNK_LINE_MAX) {
                goto bad;
            }
            i++;
            break;
        case CK_TRAILER_LF:
            if (c != '\n')
                goto bad;
            i++;
            if (st->line == 0) {
                *used = i;
                memset(st, 0, sizeof(*st));
                return 1;
            }
            st->line = 0;
            st->state = CK_TRAILER;
            break;
        default:
            goto bad;
        }
    }
    *used = i;
    return 0;
bad:
    *used = i;
    return -1;
}
