/* tests/check.h: the unit tests' tiny check header.
 * Each CHECK prints "ok N - what" or "not ok N - what (file:line)"; check_done() prints
 * "N passed, N failed" and returns the exit code for main. scripts/check.sh counts the lines. */
#ifndef FLOOD_CHECK_H
#define FLOOD_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_passed_, check_failed_;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        int check_ok_ = !!(cond);                                                                  \
        printf("%s %d - ", check_ok_ ? "ok" : "not ok", check_passed_ + check_failed_ + 1);        \
        printf(__VA_ARGS__);                                                                       \
        if (!check_ok_)                                                                            \
            printf(" (%s:%d: %s)", __FILE__, __LINE__, #cond);                                     \
        printf("\n");                                                                              \
        if (check_ok_)                                                                             \
            check_passed_++;                                                                       \
        else                                                                                       \
            check_failed_++;                                                                       \
    } while (0)

/* Compare two strings, printing both when they differ. */
#define CHECK_STR(got, want, ...)                                                                  \
    do {                                                                                           \
        const char *g_ = (got), *w_ = (want);                                                      \
        int same_ = g_ && w_ && strcmp(g_, w_) == 0;                                               \
        CHECK(same_, __VA_ARGS__);                                                                 \
        if (!same_)                                                                                \
            printf("#   got:  %s\n#   want: %s\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)");        \
    } while (0)

static inline int check_done(void)
{
    printf("%d passed, %d failed\n", check_passed_, check_failed_);
    return check_failed_ ? 1 : 0;
}

#endif
