/* webfinger/accept.c: does an Accept header (RFC 9110 12.5.1) ask for ActivityPub JSON?
 *
 * Each of the three types flood serves (activity+json, ld+json with any profile, json)
 * takes the quality of the most specific media range matching it: its exact type, else the
 * "application" wildcard, else the any-type wildcard. The answer is yes when one of them
 * ends with q > 0. A range that does not parse is skipped, as a lenient server would. */
#include "webfinger/wf.h"

#include <string.h>

enum { N_SERVED = 3 };
static const char *const served[N_SERVED] = {"activity+json", "ld+json", "json"};

static char lower(char ch)
{
    return (ch >= 'A' && ch <= 'Z') ? (char)(ch - 'A' + 'a') : ch;
}

static int is_ows(char ch)
{
    return ch == ' ' || ch == '\t';
}

/* RFC 9110 5.6.2 tchar. */
static int is_tchar(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           (ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL);
}

static size_t token(const char *p)
{
    size_t n = 0;
    while (is_tchar(p[n]))
        n++;
    return n;
}

static int eq_ci(const char *s, size_t len, const char *lit)
{
    if (strlen(lit) != len)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (lower(s[i]) != lit[i])
            return 0;
    return 1;
}

/* RFC 9110 12.4.2 qvalue, in thousandths: "0" ["." 0*3DIGIT] / "1" ["." 0*3"0"]. */
static int parse_q(const char *s, size_t len)
{
    if (len == 0 || (s[0] != '0' && s[0] != '1'))
        return -1;
    int q = (s[0] - '0') * 1000;
    if (len == 1)
        return q;
    if (s[1] != '.' || len > 5)
        return -1;
    int scale = 100;
    for (size_t i = 2; i < len; i++, scale /= 10) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        q += (s[i] - '0') * scale;
    }
    return q <= 1000 ? q : -1;
}

/* Skip to just past the next comma outside a quoted string (or to the end). */
static const char *next_range(const char *p)
{
    int quoted = 0;
    for (; *p; p++) {
        if (quoted && *p == '\\' && p[1])
            p++;
        else if (*p == '"')
            quoted = !quoted;
        else if (!quoted && *p == ',')
            return p + 1;
    }
    return p;
}

/* Parse one media range at p. 0 with type, subtype and q filled, or -1. *end is where
 * the range stops (at a comma or the end) when it parses. */
static int parse_range(const char *p, const char **type, size_t *type_len, const char **sub,
                       size_t *sub_len, int *q, const char **end)
{
    *type = p;
    *type_len = token(p);
    p += *type_len;
    if (*type_len == 0 || *p++ != '/')
        return -1;
    *sub = p;
    *sub_len = token(p);
    p += *sub_len;
    if (*sub_len == 0)
        return -1;
    *q = 1000;
    for (;;) {
        while (is_ows(*p))
            p++;
        if (*p != ';')
            break;
        p++;
        while (is_ows(*p))
            p++;
        const char *name = p;
        size_t name_len = token(p);
        p += name_len;
        if (name_len == 0 || *p++ != '=')
            return -1;
        const char *value = p;
        size_t value_len;
        if (*p == '"') {
            for (p++; *p && *p != '"'; p++)
                if (*p == '\\' && p[1])
                    p++;
            if (*p++ != '"')
                return -1;
            value_len = (size_t)(p - value);
        } else {
            value_len = token(p);
            p += value_len;
            if (value_len == 0)
                return -1;
        }
        if (eq_ci(name, name_len, "q") && (*q = parse_q(value, value_len)) < 0)
            return -1;
    }
    if (*p != ',' && *p != '\0')
        return -1;
    *end = p;
    return 0;
}

int wf_accepts_activity_json(const char *accept)
{
    if (!accept)
        return 1;
    int spec[N_SERVED] = {-1, -1, -1}, qual[N_SERVED] = {0, 0, 0};
    int any = 0;
    const char *p = accept;
    while (*p) {
        while (is_ows(*p) || *p == ',')
            p++;
        if (!*p)
            break;
        any = 1;
        const char *type, *sub, *end;
        size_t type_len, sub_len;
        int q;
        if (parse_range(p, &type, &type_len, &sub, &sub_len, &q, &end) < 0) {
            p = next_range(p);
            continue;
        }
        p = end;
        int s = 0;
        if (eq_ci(type, type_len, "*") && eq_ci(sub, sub_len, "*"))
            s = 1;
        else if (eq_ci(type, type_len, "application") && eq_ci(sub, sub_len, "*"))
            s = 2;
        else if (!eq_ci(type, type_len, "application"))
            continue;
        for (int i = 0; i < N_SERVED; i++) {
            if (s == 0 && !eq_ci(sub, sub_len, served[i]))
                continue;
            int si = s ? s : 3;
            if (si > spec[i] || (si == spec[i] && q > qual[i])) {
                spec[i] = si;
                qual[i] = q;
            }
        }
    }
    if (!any)
        return 1; /* an empty Accept asks for nothing in particular */
    for (int i = 0; i < N_SERVED; i++)
        if (spec[i] >= 0 && qual[i] > 0)
            return 1;
    return 0;
}
