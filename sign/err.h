/* sign/err.h: errors as data, and the one checked allocator.
 *
 * Fallible functions return 0 (or a pointer) on success and -1 (or NULL) on failure,
 * filling the caller's struct flood_err with a code and a one-line text that reads
 * "module: problem 'value'". Out of memory aborts through flood_xmalloc and friends;
 * bad input never reaches them as a size. */
#ifndef FLOOD_ERR_H
#define FLOOD_ERR_H

#include <stddef.h>

#define FLOOD_WUR __attribute__((warn_unused_result))

enum flood_err_code {
    FLOOD_OK = 0,
    FLOOD_EINVAL,  /* bad input: a caller's argument, a file, network bytes */
    FLOOD_ECRYPTO, /* OpenSSL refused */
    FLOOD_EIO,     /* a file or a socket */
    FLOOD_ELIMIT,  /* a size or count limit reached */
    FLOOD_ENOTFOUND,
};

struct flood_err {
    int code;
    char msg[256];
};

/* Fill err (when not NULL) with code and a printf-style message. Never fails. */
void flood_err_set(struct flood_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Append OpenSSL's queued error text (and clear the queue) to err->msg. */
void flood_err_openssl(struct flood_err *err);

/* Allocation that aborts with a message on failure; never returns NULL. Free with free(). */
void *flood_xmalloc(size_t n);
void *flood_xcalloc(size_t count, size_t size);
void *flood_xrealloc(void *p, size_t n);
char *flood_xstrdup(const char *s);
char *flood_xstrndup(const char *s, size_t n);
/* A new string from a printf format; free() it. */
char *flood_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
