#include "sign/err.h"

#include <openssl/err.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void flood_err_set(struct flood_err *err, int code, const char *fmt, ...)
{
    if (!err)
        return;
    va_list ap;
    va_start(ap, fmt);
    err->code = code;
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
}

void flood_err_openssl(struct flood_err *err)
{
    unsigned long e = ERR_get_error();
    if (err && e) {
        size_t len = strlen(err->msg);
        if (len + 3 < sizeof(err->msg)) {
            memcpy(err->msg + len, " (", 3);
            ERR_error_string_n(e, err->msg + len + 2, sizeof(err->msg) - len - 3);
            len = strlen(err->msg);
            if (len + 1 < sizeof(err->msg)) {
                err->msg[len] = ')';
                err->msg[len + 1] = '\0';
            }
        }
    }
    ERR_clear_error();
}

static void *oom(size_t n)
{
    fprintf(stderr, "flood: out of memory (%zu bytes)\n", n);
    abort();
}

void *flood_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    return p ? p : oom(n);
}

void *flood_xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    return p ? p : oom(count * size);
}

void *flood_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    return q ? q : oom(n);
}

char *flood_xstrdup(const char *s)
{
    return flood_xstrndup(s, strlen(s));
}

char *flood_xstrndup(const char *s, size_t n)
{
    char *p = flood_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *flood_xasprintf(const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    char *p = flood_xmalloc((size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}
