/* sign/util.c: base64, a capped growing string, header lookup and small message helpers. */
#include <ctype.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sign/internal.h"

size_t sign_b64_encode(const unsigned char *in, size_t len, char *out)
{
    /* EVP_EncodeBlock takes an int length: whole 3-byte groups a chunk, so the pieces join
     * into one encoding with padding only at the end */
    const size_t chunk = (size_t)3 << 20;
    size_t k = 0;
    out[0] = '\0';
    while (len > 0) {
        size_t n = len < chunk ? len : chunk;
        k += (size_t)EVP_EncodeBlock((unsigned char *)out + k, in, (int)n);
        in += n;
        len -= n;
    }
    return k;
}

/* Decoding stays hand-written: EVP_DecodeBlock ignores surrounding whitespace, does not say
 * how much padding it met (its length counts the pad bytes as zeros) and accepts
 * non-canonical trailing bits ("QR==" for "A"), while a signature or digest value must have
 * exactly one encoding (RFC 4648 section 3.5) so that two spellings cannot both verify. */
static int b64_val(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

long sign_b64_decode(const char *in, size_t len, unsigned char *out, size_t out_max)
{
    size_t i, k = 0;
    if (len % 4 != 0)
        return -1;
    for (i = 0; i < len; i += 4) {
        int a = b64_val(in[i]), b = b64_val(in[i + 1]), c, d;
        int last = i + 4 == len;
        if (a < 0 || b < 0)
            return -1;
        if (last && in[i + 2] == '=' && in[i + 3] == '=') {
            if (b & 15) /* non-canonical trailing bits */
                return -1;
            if (k + 1 > out_max)
                return -1;
            out[k++] = (unsigned char)(a << 2 | b >> 4);
            break;
        }
        c = b64_val(in[i + 2]);
        if (c < 0)
            return -1;
        if (last && in[i + 3] == '=') {
            if (c & 3)
                return -1;
            if (k + 2 > out_max)
                return -1;
            out[k++] = (unsigned char)(a << 2 | b >> 4);
            out[k++] = (unsigned char)((b & 15) << 4 | c >> 2);
            break;
        }
        d = b64_val(in[i + 3]);
        if (d < 0 || k + 3 > out_max)
            return -1;
        out[k++] = (unsigned char)(a << 2 | b >> 4);
        out[k++] = (unsigned char)((b & 15) << 4 | c >> 2);
        out[k++] = (unsigned char)((c & 3) << 6 | d);
    }
    return (long)k;
}

void sign_buf_init(struct sign_buf *b, size_t max)
{
    b->cap = 256;
    b->p = flood_xmalloc(b->cap);
    b->p[0] = '\0';
    b->len = 0;
    b->max = max;
    b->overflow = 0;
}

void sign_buf_add(struct sign_buf *b, const char *s, size_t n)
{
    if (b->overflow)
        return;
    if (n > b->max || b->len + n > b->max) {
        b->overflow = 1;
        return;
    }
    if (b->len + n + 1 > b->cap) {
        while (b->len + n + 1 > b->cap)
            b->cap *= 2;
        b->p = flood_xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void sign_buf_str(struct sign_buf *b, const char *s)
{
    sign_buf_add(b, s, strlen(s));
}

void sign_buf_free(struct sign_buf *b)
{
    free(b->p);
    b->p = NULL;
}

char *sign_msg_header(const struct sign_msg *msg, const char *name, int *too_long)
{
    struct sign_buf b;
    size_t i, found = 0;
    *too_long = 0;
    for (i = 0; i < msg->n_headers; i++) {
        const char *v, *e;
        if (!msg->headers[i].name || strcasecmp(msg->headers[i].name, name) != 0)
            continue;
        v = msg->headers[i].value ? msg->headers[i].value : "";
        /* Bound the scan itself: a hostile 1 MB value costs no more than the cap. */
        e = memchr(v, '\0', SIGN_HEADER_VALUE_MAX + 1);
        if (!e) {
            if (found)
                sign_buf_free(&b);
            *too_long = 1;
            return NULL;
        }
        while (*v == ' ' || *v == '\t')
            v++;
        while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        if (!found++)
            sign_buf_init(&b, SIGN_HEADER_VALUE_MAX);
        else
            sign_buf_add(&b, ", ", 2);
        sign_buf_add(&b, v, (size_t)(e - v));
    }
    if (!found)
        return NULL;
    if (b.overflow) {
        sign_buf_free(&b);
        *too_long = 1;
        return NULL;
    }
    return b.p;
}

size_t sign_msg_header_count(const struct sign_msg *msg, const char *name)
{
    size_t i, n = 0;
    for (i = 0; i < msg->n_headers; i++)
        if (msg->headers[i].name && strcasecmp(msg->headers[i].name, name) == 0)
            n++;
    return n;
}

int sign_method_is(const struct sign_msg *msg, const char *m)
{
    return msg->method && strcasecmp(msg->method, m) == 0;
}

int sign_msg_has_body(const struct sign_msg *msg)
{
    return msg->body_len > 0 || sign_method_is(msg, "POST") || sign_method_is(msg, "PUT") ||
           sign_method_is(msg, "PATCH");
}

void sign_out_add(struct sign_out *out, const char *name, const char *value)
{
    if (out->n < SIGN_MAX_OUT)
        out->lines[out->n++] = flood_xasprintf("%s: %s", name, value);
}

void sign_out_free(struct sign_out *out)
{
    size_t i;
    if (!out)
        return;
    for (i = 0; i < out->n; i++)
        free(out->lines[i]);
    out->n = 0;
}

const char *sign_verdict_name(int verdict)
{
    static const char *const names[] = {"ok",     "missing", "syntax",   "algorithm", "not_covered",
                                        "digest", "date",    "mismatch", "key"};
    if (verdict < 0 || verdict >= (int)(sizeof(names) / sizeof(names[0])))
        return "unknown";
    return names[verdict];
}
