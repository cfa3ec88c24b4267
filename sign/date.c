/* sign/date.c: IMF-fixdate (RFC 9110 section 5.6.7), in GMT, both ways. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sign/sign.h"

static const char DAYS[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
static const char MONTHS[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

void sign_http_date(time_t t, char out[32])
{
    /* one second's Date made once a thread: a signer dates thousands of requests in it */
    static _Thread_local time_t last_t = -1;
    static _Thread_local char last[32];
    if (t == last_t) {
        memcpy(out, last, 32);
        return;
    }
    struct tm tm;
    if (!gmtime_r(&t, &tm)) {
        memset(&tm, 0, sizeof(tm));
        tm.tm_mday = 1;
        tm.tm_year = 70;
        tm.tm_wday = 4;
    }
    /* Spelled out rather than strftime %a/%b so the locale cannot change it. */
    char tmp[128];
    size_t n;
    snprintf(tmp, sizeof(tmp), "%s, %02d %s %04d %02d:%02d:%02d GMT", DAYS[tm.tm_wday % 7],
             tm.tm_mday % 100, MONTHS[tm.tm_mon % 12], (tm.tm_year + 1900) % 10000,
             tm.tm_hour % 100, tm.tm_min % 100, tm.tm_sec % 100);
    n = strlen(tmp);
    if (n > 31)
        n = 31;
    memcpy(out, tmp, n);
    out[n] = '\0';
    memcpy(last, out, 32);
    last_t = t;
}

static int digits(const char *s, int n, int *out)
{
    int v = 0, i;
    for (i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

int sign_parse_http_date(const char *s, time_t *out)
{
    /* "Sun, 06 Nov 1994 08:49:37 GMT": exactly 29 characters. */
    struct tm tm;
    int wday = -1, mon = -1, i, day, year, hh, mm, ss;
    time_t t;
    if (!s || strlen(s) != 29 || s[3] != ',' || s[4] != ' ' || s[7] != ' ' || s[11] != ' ' ||
        s[16] != ' ' || s[19] != ':' || s[22] != ':' || s[25] != ' ' ||
        memcmp(s + 26, "GMT", 3) != 0)
        return -1;
    for (i = 0; i < 7; i++)
        if (memcmp(s, DAYS[i], 3) == 0)
            wday = i;
    for (i = 0; i < 12; i++)
        if (memcmp(s + 8, MONTHS[i], 3) == 0)
            mon = i;
    if (wday < 0 || mon < 0 || digits(s + 5, 2, &day) || digits(s + 12, 4, &year) ||
        digits(s + 17, 2, &hh) || digits(s + 20, 2, &mm) || digits(s + 23, 2, &ss))
        return -1;
    /* Second 60 (a leap second to RFC 5322) is refused: time_t has none, so it would be read
     * as the next minute's :00 and print back as another date. */
    if (day < 1 || day > 31 || year < 1970 || hh > 23 || mm > 59 || ss > 59)
        return -1;
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = year - 1900;
    tm.tm_mon = mon;
    tm.tm_mday = day;
    tm.tm_hour = hh;
    tm.tm_min = mm;
    tm.tm_sec = ss;
    t = timegm(&tm);
    if (t == (time_t)-1 || tm.tm_mday != day || tm.tm_mon != mon) /* 31 Feb and the like */
        return -1;
    if (tm.tm_wday != wday)
        return -1;
    *out = t;
    return 0;
}
