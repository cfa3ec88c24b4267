/* flood/check/check_util.c: the small helpers every step file of `flood check` shares (a
 * result's fields, an answer's one-line text, sleeping, origins). It calls no step and no
 * runner: check.c (the runner) calls the step files, and they all call down to this file,
 * check_net.c and check_host.c. */
#include "flood/check/check_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "flood/core/url.h"

void check_set(struct check_result *r, enum check_outcome o, const char *expected, const char *got,
               const char *fmt, ...)
{
    r->outcome = o;
    free(r->expected);
    free(r->got);
    free(r->detail);
    r->expected = expected ? flood_xstrdup(expected) : NULL;
    r->got = got ? flood_xstrdup(got) : NULL;
    r->detail = NULL;
    if (fmt) {
        char buf[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        r->detail = flood_xstrdup(buf);
    }
}

/* "401 <first 80 bytes of the body, one line>" */
char *check_answer_text(const struct check_http *h)
{
    char snip[96] = "";
    size_t o = 0;
    for (size_t i = 0; h->body && i < h->len && o < 80; i++)
        snip[o++] = (h->body[i] == '\n' || h->body[i] == '\r' || h->body[i] == '\t') ? ' '
                    : (unsigned char)h->body[i] < 0x20                               ? '?'
                                                                                     : h->body[i];
    snip[o] = '\0';
    return flood_xasprintf("%ld%s%s", h->status, o ? " " : "", snip);
}

int check_is_2xx(long s)
{
    return s >= 200 && s < 300;
}

void check_sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0)
        ;
}

/* scheme://authority of an http(s) URL, new string, or NULL */
char *check_origin_of(const char *url)
{
    struct url_parts u;
    struct flood_err err;
    return url && url_split(url, &u, &err) == 0 ? flood_xstrdup(u.origin) : NULL;
}
