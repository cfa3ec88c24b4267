/* flood/inbound/classify.c: the pure part of the crowd's inboxes: what a delivery is (its
 * type, actor, object and id, with limits on size and nesting) and the times it carries.
 * No I/O and no clock: the handler in inbound.c calls it with the body it received. */
#include "flood/inbound/inbound.h"

#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ---- pure parts ---------------------------------------------------------------------- */

/* The deepest nesting of arrays and objects in JSON text (strings skipped), stopping
 * early once past limit. */
static int json_depth(const char *s, size_t len, int limit)
{
    int depth = 0, max = 0, in_str = 0;
    for (size_t i = 0; i < len; i++) {
        char ch = s[i];
        if (in_str) {
            if (ch == '\\')
                i++;
            else if (ch == '"')
                in_str = 0;
        } else if (ch == '"') {
            in_str = 1;
        } else if (ch == '{' || ch == '[') {
            if (++depth > max && (max = depth) > limit)
                return max;
        } else if (ch == '}' || ch == ']') {
            depth--;
        }
    }
    return max;
}

static const char *str_of(const json_t *o, const char *name)
{
    const json_t *v = json_object_get(o, name);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* A type member: a string, or the first string of an array (AS2 allows several). */
static const char *type_of(const json_t *o)
{
    const json_t *t = json_object_get(o, "type");
    if (json_is_array(t))
        t = json_array_get(t, 0);
    return json_is_string(t) ? json_string_value(t) : NULL;
}

/* An id reference: a string, or an object's id. */
static const char *ref_of(const json_t *o, const char *name)
{
    const json_t *v = json_object_get(o, name);
    if (json_is_string(v))
        return json_string_value(v);
    if (json_is_object(v))
        return str_of(v, "id");
    return NULL;
}

void inbound_activity_clear(struct inbound_activity *a)
{
    json_decref(a->doc);
    memset(a, 0, sizeof(*a));
}

int inbound_classify(const char *body, size_t len, struct inbound_activity *out,
                     struct flood_err *err)
{
    memset(out, 0, sizeof(*out));
    if (json_depth(body, len, INBOUND_JSON_DEPTH_MAX) > INBOUND_JSON_DEPTH_MAX) {
        flood_err_set(err, FLOOD_EINVAL, "json: nested deeper than %d", INBOUND_JSON_DEPTH_MAX);
        return INBOUND_TOO_DEEP;
    }
    json_error_t je;
    json_t *doc = json_loadb(body, len, 0, &je);
    if (!doc) {
        flood_err_set(err, FLOOD_EINVAL, "json: %s at line %d column %d", je.text, je.line,
                      je.column);
        return INBOUND_BAD_JSON;
    }
    if (!json_is_object(doc)) {
        flood_err_set(err, FLOOD_EINVAL, "activity: not a JSON object");
        json_decref(doc);
        return INBOUND_NOT_ACTIVITY;
    }
    out->doc = doc;
    out->type = type_of(doc);
    out->actor = ref_of(doc, "actor");
    if (!out->type || !out->actor) {
        flood_err_set(err, FLOOD_EINVAL, "activity: no %s", out->type ? "actor" : "type");
        inbound_activity_clear(out);
        return INBOUND_NOT_ACTIVITY;
    }
    out->id = str_of(doc, "id");
    out->published = str_of(doc, "published");
    const json_t *obj = json_object_get(doc, "object");
    if (json_is_string(obj)) {
        out->object_id = json_string_value(obj);
    } else if (json_is_object(obj)) {
        out->object_id = str_of(obj, "id");
        out->object_type = type_of(obj);
        out->object_actor = ref_of(obj, "actor");
        out->object_object = ref_of(obj, "object");
        if (str_of(obj, "published"))
            out->published = str_of(obj, "published");
    }
    return INBOUND_ACTIVITY_OK;
}

static int digits(const char *s, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        *v = *v * 10 + (s[i] - '0');
    }
    return 0;
}

int inbound_parse_time(const char *s, int64_t *us)
{
    int y, mo, d, h, mi, sec;
    if (!s || strlen(s) < 19 || digits(s, 4, &y) || s[4] != '-' || digits(s + 5, 2, &mo) ||
        s[7] != '-' || digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
        digits(s + 11, 2, &h) || s[13] != ':' || digits(s + 14, 2, &mi) || s[16] != ':' ||
        digits(s + 17, 2, &sec))
        return -1;
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return -1;
    const char *p = s + 19;
    int64_t frac = 0, scale = 1000000;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return -1;
        while (isdigit((unsigned char)*p)) {
            if (scale > 1) {
                scale /= 10;
                frac += (*p - '0') * scale;
            }
            p++;
        }
    }
    long off = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int oh, om;
        if (digits(p + 1, 2, &oh) || p[3] != ':' || digits(p + 4, 2, &om) || oh > 23 || om > 59)
            return -1;
        off = (oh * 60L + om) * 60L * (*p == '+' ? 1 : -1);
        p += 6;
    } else {
        return -1;
    }
    if (*p)
        return -1;
    struct tm tm = {.tm_year = y - 1900,
                    .tm_mon = mo - 1,
                    .tm_mday = d,
                    .tm_hour = h,
                    .tm_min = mi,
                    .tm_sec = sec};
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return -1;
    *us = ((int64_t)t - off) * 1000000 + frac;
    return 0;
}
