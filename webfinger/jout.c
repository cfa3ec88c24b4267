/* webfinger/jout.c: the JSON writer of jout.h. The text backend escapes exactly as
 * jansson's compact dump does: '"' and '\\', the short forms \b \f \n \r \t, \u00XX for
 * the other control bytes, no slash escaping, valid UTF-8 copied as it is. */
#include "webfinger/jout.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sign/err.h"
#include "webfinger/sput.h"

void wf_jo_init(struct wf_jo *j, int tree, size_t size_hint)
{
    memset(j, 0, sizeof(*j));
    j->tree = tree;
    j->first[0] = 1;
    if (!tree) {
        j->cap = size_hint < 256 ? 256 : size_hint;
        j->p = flood_xmalloc(j->cap);
        j->p[0] = '\0';
    }
}

static void need(struct wf_jo *j, size_t n)
{
    if (j->len + n + 1 <= j->cap)
        return;
    size_t cap = j->cap;
    while (j->len + n + 1 > cap)
        cap *= 2;
    j->p = flood_xrealloc(j->p, cap);
    j->cap = cap;
}

static void raw(struct wf_jo *j, const char *s, size_t n)
{
    need(j, n);
    memcpy(j->p + j->len, s, n);
    j->len += n;
    j->p[j->len] = '\0';
}

size_t wf_utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned cp;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/* Bytes copied as they are: printable ASCII but '"' and '\\'. */
static int plain_byte(unsigned c)
{
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/* Bytes of s[0..n) before the first that is not plain_byte, eight at a time: a word has
 * such a byte when one of its bytes has the high bit, is below 0x20, or equals '"' or
 * '\\' (the "has a zero byte" test of each, on the word xored with the byte repeated). */
static size_t plain_run(const unsigned char *s, size_t n)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, s + i, 8);
        uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
        uint64_t bad = x | ((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((b - ones) & ~b);
        if (bad & highs)
            break;
    }
    while (i < n && plain_byte(s[i]))
        i++;
    return i;
}

/* A JSON string of n bytes. -1 when it is not UTF-8 (or holds a NUL). */
static int text_str(struct wf_jo *j, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s, *end = u + n;
    size_t fast = plain_run(u, n);
    need(j, fast + 2);
    j->p[j->len++] = '"';
    memcpy(j->p + j->len, s, fast);
    j->len += fast;
    j->p[j->len] = '\0';
    u += fast;
    while (u < end) {
        const unsigned char *run = u;
        u += plain_run(u, (size_t)(end - u));
        if (u > run) {
            raw(j, (const char *)run, (size_t)(u - run));
            continue;
        }
        if (*u == 0)
            return -1;
        size_t k = u + 4 <= end || *u < 0x80 ? wf_utf8_len(u) : 0;
        if (k == 0 && *u >= 0x80) {
            /* near the end: check against a padded copy */
            unsigned char tmp[5] = {0};
            memcpy(tmp, u, (size_t)(end - u) < 4 ? (size_t)(end - u) : 4);
            k = wf_utf8_len(tmp);
            if (k == 0 || u + k > end)
                return -1;
        }
        if (k > 1) {
            raw(j, (const char *)u, k);
            u += k;
            continue;
        }
        char esc[8];
        switch (*u) {
        case '"':
            memcpy(esc, "\\\"", 3);
            break;
        case '\\':
            memcpy(esc, "\\\\", 3);
            break;
        case '\b':
            memcpy(esc, "\\b", 3);
            break;
        case '\f':
            memcpy(esc, "\\f", 3);
            break;
        case '\n':
            memcpy(esc, "\\n", 3);
            break;
        case '\r':
            memcpy(esc, "\\r", 3);
            break;
        case '\t':
            memcpy(esc, "\\t", 3);
            break;
        default:
            snprintf(esc, sizeof(esc), "\\u%04X", *u);
        }
        raw(j, esc, strlen(esc));
        u++;
    }
    raw(j, "\"", 1);
    return 0;
}

/* Text: the comma and "key": before a value. */
static void text_key(struct wf_jo *j, const char *key)
{
    size_t k = key ? strlen(key) : 0;
    need(j, k + 4); /* ,"key": */
    char *w = j->p + j->len;
    if (!j->first[j->depth])
        *w++ = ',';
    j->first[j->depth] = 0;
    if (key) {
        *w++ = '"';
        memcpy(w, key, k);
        w += k;
        *w++ = '"';
        *w++ = ':';
    }
    *w = '\0';
    j->len = (size_t)(w - j->p);
}

/* Tree: put v (stolen) into the current container, or make it the root. */
static void tree_put(struct wf_jo *j, const char *key, json_t *v)
{
    if (!v || j->bad) {
        json_decref(v);
        j->bad = 1;
        return;
    }
    if (j->depth == 0) {
        if (j->root)
            json_decref(j->root);
        j->root = v;
        return;
    }
    json_t *top = j->stack[j->depth - 1];
    int rc = json_is_object(top) ? json_object_set_new(top, key ? key : "", v)
                                 : json_array_append_new(top, v);
    if (rc)
        j->bad = 1;
}

static void open(struct wf_jo *j, const char *key, int obj)
{
    if (j->depth >= WF_JO_DEPTH - 1) {
        j->bad = 1;
        return;
    }
    if (j->tree) {
        json_t *v = obj ? json_object() : json_array();
        tree_put(j, key, v); /* v stays borrowed from its parent; on failure nothing uses it */
        j->stack[j->depth++] = j->bad ? NULL : v;
        return;
    }
    text_key(j, key);
    raw(j, obj ? "{" : "[", 1);
    j->first[++j->depth] = 1;
    j->obj[j->depth] = (char)obj;
}

void wf_jo_obj(struct wf_jo *j, const char *key)
{
    open(j, key, 1);
}

void wf_jo_arr(struct wf_jo *j, const char *key)
{
    open(j, key, 0);
}

void wf_jo_end(struct wf_jo *j)
{
    if (j->depth == 0) {
        j->bad = 1;
        return;
    }
    if (j->tree) {
        j->depth--;
        return;
    }
    raw(j, j->obj[j->depth] ? "}" : "]", 1);
    j->depth--;
}

void wf_jo_strn(struct wf_jo *j, const char *key, const char *v, size_t n)
{
    if (j->tree) {
        tree_put(j, key, json_stringn(v, n));
        return;
    }
    text_key(j, key);
    size_t off = j->len;
    if (text_str(j, v, n) < 0) {
        j->bad = 1;
        return;
    }
    j->last_src = v;
    j->last_n = n;
    j->last_off = off;
    j->last_len = j->len - off;
}

void wf_jo_strn_again(struct wf_jo *j, const char *key, const char *v, size_t n)
{
    if (j->tree || j->bad || !v || v != j->last_src || n != j->last_n) {
        wf_jo_strn(j, key, v, n);
        return;
    }
    text_key(j, key);
    need(j, j->last_len);
    memcpy(j->p + j->len, j->p + j->last_off, j->last_len);
    j->len += j->last_len;
    j->p[j->len] = '\0';
}

void wf_jo_str(struct wf_jo *j, const char *key, const char *v)
{
    if (!v) {
        j->bad = 1;
        return;
    }
    wf_jo_strn(j, key, v, strlen(v));
}

void wf_jo_int(struct wf_jo *j, const char *key, int64_t v)
{
    if (j->tree) {
        tree_put(j, key, json_integer((json_int_t)v));
        return;
    }
    char b[24];
    size_t n = 0;
    text_key(j, key);
    wf_sput_i(b, sizeof(b), &n, v);
    raw(j, b, n);
}

void wf_jo_bool(struct wf_jo *j, const char *key, int v)
{
    if (j->tree) {
        tree_put(j, key, json_boolean(v));
        return;
    }
    text_key(j, key);
    raw(j, v ? "true" : "false", v ? 4 : 5);
}

void wf_jo_drop(struct wf_jo *j)
{
    json_decref(j->root);
    free(j->p);
    j->root = NULL;
    j->p = NULL;
}

json_t *wf_jo_tree(struct wf_jo *j)
{
    json_t *r = j->root;
    j->root = NULL;
    if (j->bad || j->depth != 0) {
        json_decref(r);
        r = NULL;
    }
    wf_jo_drop(j);
    return r;
}

char *wf_jo_text(struct wf_jo *j, size_t *len)
{
    char *p = j->p;
    j->p = NULL;
    if (j->bad || j->depth != 0) {
        free(p);
        p = NULL;
    } else if (len) {
        *len = j->len;
    }
    wf_jo_drop(j);
    return p;
}
