/* webfinger/sput.h: appending to a fixed buffer without printf: the URLs and ids every
 * activity carries, and the sender's request heads, are made per request on the hot path,
 * where snprintf's format parsing was a third of building a body. What does not fit is cut, as
 * snprintf cuts it, and the buffer stays NUL-terminated. */
#ifndef WF_SPUT_H
#define WF_SPUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* out[*n..cap) += s[0..len) */
static inline void wf_sput(char *out, size_t cap, size_t *n, const char *s, size_t len)
{
    if (*n + 1 >= cap) {
        if (cap)
            out[cap - 1] = '\0';
        return;
    }
    if (len > cap - 1 - *n)
        len = cap - 1 - *n;
    memcpy(out + *n, s, len);
    *n += len;
    out[*n] = '\0';
}

static inline void wf_sput_str(char *out, size_t cap, size_t *n, const char *s)
{
    wf_sput(out, cap, n, s, strlen(s));
}

/* v in decimal */
static inline void wf_sput_u(char *out, size_t cap, size_t *n, uint64_t v)
{
    char d[20];
    size_t k = sizeof(d);
    do {
        d[--k] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    wf_sput(out, cap, n, d + k, sizeof(d) - k);
}

/* v in decimal, negative with a '-' */
static inline void wf_sput_i(char *out, size_t cap, size_t *n, int64_t v)
{
    if (v < 0) {
        wf_sput(out, cap, n, "-", 1);
        wf_sput_u(out, cap, n, (uint64_t)0 - (uint64_t)v);
    } else {
        wf_sput_u(out, cap, n, (uint64_t)v);
    }
}

#endif
