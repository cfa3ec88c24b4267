/* sign/sfv.c: RFC 8941 structured field values, the subset HTTP signatures need:
 * Dictionaries of Items and Inner Lists with Parameters (Signature-Input, Signature,
 * Content-Digest). Strict and bounded: no recursion, fixed maxima, no duplicate keys. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sign/internal.h"

#define SFV_STRING_MAX 4096
#define SFV_BYTES_MAX  2048

struct cur {
    const char *s;
    size_t i, n;
    struct flood_err *err;
};

static int fail(struct cur *c, const char *what)
{
    flood_err_set(c->err, FLOOD_EINVAL, "sign: structured field: %s at offset %zu", what, c->i);
    return -1;
}

static int peek(const struct cur *c)
{
    return c->i < c->n ? (unsigned char)c->s[c->i] : -1;
}

static int is_lcalpha(int ch)
{
    return ch >= 'a' && ch <= 'z';
}

static int is_alpha(int ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static int is_digit(int ch)
{
    return ch >= '0' && ch <= '9';
}

/* tchar from RFC 9110 section 5.6.2 */
static int is_tchar(int ch)
{
    return is_alpha(ch) || is_digit(ch) || (ch > 0 && strchr("!#$%&'*+-.^_`|~", ch) != NULL);
}

static void skip_sp(struct cur *c)
{
    while (peek(c) == ' ')
        c->i++;
}

static void skip_ows(struct cur *c)
{
    while (peek(c) == ' ' || peek(c) == '\t')
        c->i++;
}

static void bare_free(struct sfv_bare *v)
{
    free(v->text);
    free(v->bytes);
    v->text = NULL;
    v->bytes = NULL;
}

static void params_free(struct sfv_param *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        free(p[i].key);
        bare_free(&p[i].value);
    }
    free(p);
}

static void item_free(struct sfv_item *it)
{
    bare_free(&it->bare);
    params_free(it->params, it->n_params);
    it->params = NULL;
    it->n_params = 0;
}

/* RFC 8941 section 4.2.3.3 */
static int parse_key(struct cur *c, char **out)
{
    size_t start = c->i;
    int ch = peek(c);
    if (!is_lcalpha(ch) && ch != '*')
        return fail(c, "bad key");
    while (c->i < c->n) {
        ch = peek(c);
        if (!is_lcalpha(ch) && !is_digit(ch) && ch != '_' && ch != '-' && ch != '.' && ch != '*')
            break;
        c->i++;
    }
    if (c->i - start > 64)
        return fail(c, "key too long");
    *out = flood_xstrndup(c->s + start, c->i - start);
    return 0;
}

/* RFC 8941 section 4.2.4 */
static int parse_number(struct cur *c, struct sfv_bare *v)
{
    size_t start = c->i, int_digits = 0, frac_digits = 0;
    int neg = 0, dot = 0;
    long long x = 0;
    if (peek(c) == '-') {
        neg = 1;
        c->i++;
    }
    if (!is_digit(peek(c)))
        return fail(c, "bad number");
    while (c->i < c->n) {
        int ch = peek(c);
        if (is_digit(ch)) {
            if (dot)
                frac_digits++;
            else
                int_digits++;
            if (!dot)
                x = x * 10 + (ch - '0');
            c->i++;
        } else if (ch == '.' && !dot) {
            if (int_digits > 12)
                return fail(c, "decimal too long");
            dot = 1;
            c->i++;
        } else {
            break;
        }
        if ((!dot && int_digits > 15) || frac_digits > 3)
            return fail(c, "number too long");
    }
    if (dot) {
        if (frac_digits == 0)
            return fail(c, "decimal without fraction");
        v->type = SFV_DECIMAL;
        v->text = flood_xstrndup(c->s + start, c->i - start);
        return 0;
    }
    v->type = SFV_INTEGER;
    v->integer = neg ? -x : x;
    return 0;
}

/* RFC 8941 section 4.2.5 */
static int parse_string(struct cur *c, struct sfv_bare *v)
{
    struct sign_buf b;
    c->i++; /* the opening quote */
    sign_buf_init(&b, SFV_STRING_MAX);
    for (;;) {
        int ch = peek(c);
        if (ch < 0) {
            sign_buf_free(&b);
            return fail(c, "unterminated string");
        }
        c->i++;
        if (ch == '\\') {
            ch = peek(c);
            if (ch != '"' && ch != '\\') {
                sign_buf_free(&b);
                return fail(c, "bad escape in string");
            }
            c->i++;
        } else if (ch == '"') {
            break;
        } else if (ch < 0x20 || ch > 0x7e) {
            sign_buf_free(&b);
            return fail(c, "bad character in string");
        }
        {
            char cc = (char)ch;
            sign_buf_add(&b, &cc, 1);
        }
        if (b.overflow) {
            sign_buf_free(&b);
            return fail(c, "string too long");
        }
    }
    v->type = SFV_STRING;
    v->text = b.p;
    return 0;
}

/* RFC 8941 section 4.2.6 */
static int parse_token(struct cur *c, struct sfv_bare *v)
{
    size_t start = c->i;
    c->i++;
    while (c->i < c->n) {
        int ch = peek(c);
        if (!is_tchar(ch) && ch != ':' && ch != '/')
            break;
        c->i++;
    }
    if (c->i - start > SFV_STRING_MAX)
        return fail(c, "token too long");
    v->type = SFV_TOKEN;
    v->text = flood_xstrndup(c->s + start, c->i - start);
    return 0;
}

/* RFC 8941 section 4.2.7, padded base64 only */
static int parse_bytes(struct cur *c, struct sfv_bare *v)
{
    const char *end;
    size_t start = ++c->i, len;
    long n;
    end = memchr(c->s + start, ':', c->n - start);
    if (!end)
        return fail(c, "unterminated byte sequence");
    len = (size_t)(end - (c->s + start));
    if (len > (SFV_BYTES_MAX / 3 + 1) * 4)
        return fail(c, "byte sequence too long");
    v->bytes = flood_xmalloc(len / 4 * 3 + 1);
    n = sign_b64_decode(c->s + start, len, v->bytes, len / 4 * 3 + 1);
    if (n < 0) {
        free(v->bytes);
        v->bytes = NULL;
        return fail(c, "bad base64 in byte sequence");
    }
    v->type = SFV_BYTES;
    v->n_bytes = (size_t)n;
    c->i = start + len + 1;
    return 0;
}

static int parse_bare(struct cur *c, struct sfv_bare *v)
{
    int ch = peek(c);
    memset(v, 0, sizeof(*v));
    if (ch == '-' || is_digit(ch))
        return parse_number(c, v);
    if (ch == '"')
        return parse_string(c, v);
    if (ch == ':')
        return parse_bytes(c, v);
    if (ch == '?') {
        c->i++;
        ch = peek(c);
        if (ch != '0' && ch != '1')
            return fail(c, "bad boolean");
        c->i++;
        v->type = SFV_BOOLEAN;
        v->integer = ch == '1';
        return 0;
    }
    if (is_alpha(ch) || ch == '*')
        return parse_token(c, v);
    return fail(c, "bad item");
}

/* RFC 8941 section 4.2.3.2 */
static int parse_params(struct cur *c, struct sfv_param **out, size_t *n_out)
{
    struct sfv_param *p = NULL;
    size_t n = 0, i;
    while (peek(c) == ';') {
        char *key;
        c->i++;
        skip_sp(c);
        if (parse_key(c, &key) < 0)
            goto bad;
        for (i = 0; i < n; i++)
            if (strcmp(p[i].key, key) == 0) {
                free(key);
                fail(c, "duplicate parameter");
                goto bad;
            }
        if (n == SIGN_SFV_MAX_PARAMS) {
            free(key);
            fail(c, "too many parameters");
            goto bad;
        }
        if (!p)
            p = flood_xcalloc(SIGN_SFV_MAX_PARAMS, sizeof(*p));
        p[n].key = key;
        if (peek(c) == '=') {
            c->i++;
            if (parse_bare(c, &p[n].value) < 0) {
                n++;
                goto bad;
            }
        } else {
            p[n].value.type = SFV_BOOLEAN;
            p[n].value.integer = 1;
        }
        n++;
    }
    *out = p;
    *n_out = n;
    return 0;
bad:
    params_free(p, n);
    return -1;
}

static int parse_item(struct cur *c, struct sfv_item *it)
{
    memset(it, 0, sizeof(*it));
    if (parse_bare(c, &it->bare) < 0)
        return -1;
    if (parse_params(c, &it->params, &it->n_params) < 0) {
        item_free(it);
        return -1;
    }
    return 0;
}

/* RFC 8941 section 4.2.1.2 */
static int parse_inner(struct cur *c, struct sfv_member *m)
{
    c->i++; /* '(' */
    m->is_inner = 1;
    m->items = flood_xcalloc(SIGN_MAX_COVERED, sizeof(*m->items));
    for (;;) {
        int ch;
        skip_sp(c);
        if (peek(c) == ')') {
            c->i++;
            return parse_params(c, &m->params, &m->n_params);
        }
        if (m->n_items == SIGN_MAX_COVERED)
            return fail(c, "too many inner list items");
        if (parse_item(c, &m->items[m->n_items]) < 0)
            return -1;
        m->n_items++;
        ch = peek(c);
        if (ch != ' ' && ch != ')')
            return fail(c, "bad inner list");
    }
}

static void member_free(struct sfv_member *m)
{
    size_t i;
    free(m->key);
    if (m->is_inner) {
        for (i = 0; i < m->n_items; i++)
            item_free(&m->items[i]);
        free(m->items);
        params_free(m->params, m->n_params);
    } else {
        item_free(&m->item);
    }
}

void sfv_dict_free(struct sfv_dict *d)
{
    size_t i;
    if (!d->members)
        return;
    for (i = 0; i < d->n; i++)
        member_free(&d->members[i]);
    free(d->members);
    d->members = NULL;
    d->n = 0;
}

/* RFC 8941 section 4.2.2 */
int sfv_parse_dict(const char *s, size_t len, struct sfv_dict *out, struct flood_err *err)
{
    struct cur c = {s, 0, len, err};
    size_t i;
    memset(out, 0, sizeof(*out));
    if (len > SIGN_HEADER_VALUE_MAX) {
        flood_err_set(err, FLOOD_ELIMIT, "sign: structured field longer than %d bytes",
                      SIGN_HEADER_VALUE_MAX);
        return -1;
    }
    out->members = flood_xcalloc(SIGN_SFV_MAX_MEMBERS, sizeof(*out->members));
    skip_sp(&c);
    if (c.i == c.n) {
        fail(&c, "empty dictionary");
        goto bad;
    }
    while (c.i < c.n) {
        struct sfv_member *m;
        char *key;
        if (parse_key(&c, &key) < 0)
            goto bad;
        for (i = 0; i < out->n; i++)
            if (strcmp(out->members[i].key, key) == 0) {
                free(key);
                fail(&c, "duplicate dictionary key");
                goto bad;
            }
        if (out->n == SIGN_SFV_MAX_MEMBERS) {
            free(key);
            fail(&c, "too many dictionary members");
            goto bad;
        }
        m = &out->members[out->n++];
        m->key = key;
        if (peek(&c) == '=') {
            c.i++;
            if (peek(&c) == '(') {
                if (parse_inner(&c, m) < 0)
                    goto bad;
            } else if (parse_item(&c, &m->item) < 0) {
                goto bad;
            }
        } else {
            m->item.bare.type = SFV_BOOLEAN;
            m->item.bare.integer = 1;
            if (parse_params(&c, &m->item.params, &m->item.n_params) < 0)
                goto bad;
        }
        skip_ows(&c);
        if (c.i == c.n)
            return 0;
        if (peek(&c) != ',') {
            fail(&c, "expected ','");
            goto bad;
        }
        c.i++;
        skip_ows(&c);
        if (c.i == c.n) {
            fail(&c, "trailing comma");
            goto bad;
        }
    }
    return 0;
bad:
    sfv_dict_free(out);
    return -1;
}

const struct sfv_member *sfv_dict_get(const struct sfv_dict *d, const char *key)
{
    size_t i;
    for (i = 0; i < d->n; i++)
        if (strcmp(d->members[i].key, key) == 0)
            return &d->members[i];
    return NULL;
}

const struct sfv_bare *sfv_params_get(const struct sfv_param *p, size_t n, const char *key)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (strcmp(p[i].key, key) == 0)
            return &p[i].value;
    return NULL;
}

/* ---- serialisation, RFC 8941 section 4.1 -------------------------------------------- */

void sfv_serialize_bare(struct sign_buf *b, const struct sfv_bare *v)
{
    char num[32];
    const char *s;
    switch (v->type) {
    case SFV_INTEGER:
        snprintf(num, sizeof(num), "%lld", v->integer);
        sign_buf_str(b, num);
        break;
    case SFV_DECIMAL:
    case SFV_TOKEN:
        sign_buf_str(b, v->text);
        break;
    case SFV_STRING:
        sign_buf_add(b, "\"", 1);
        for (s = v->text; *s; s++) {
            if (*s == '"' || *s == '\\')
                sign_buf_add(b, "\\", 1);
            sign_buf_add(b, s, 1);
        }
        sign_buf_add(b, "\"", 1);
        break;
    case SFV_BYTES: {
        char *enc = flood_xmalloc(v->n_bytes / 3 * 4 + 8);
        sign_b64_encode(v->bytes, v->n_bytes, enc);
        sign_buf_add(b, ":", 1);
        sign_buf_str(b, enc);
        sign_buf_add(b, ":", 1);
        free(enc);
        break;
    }
    case SFV_BOOLEAN:
        sign_buf_str(b, v->integer ? "?1" : "?0");
        break;
    }
}

void sfv_serialize_params(struct sign_buf *b, const struct sfv_param *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        sign_buf_add(b, ";", 1);
        sign_buf_str(b, p[i].key);
        if (p[i].value.type == SFV_BOOLEAN && p[i].value.integer)
            continue;
        sign_buf_add(b, "=", 1);
        sfv_serialize_bare(b, &p[i].value);
    }
}

void sfv_serialize_inner(struct sign_buf *b, const struct sfv_member *m)
{
    size_t i;
    sign_buf_add(b, "(", 1);
    for (i = 0; i < m->n_items; i++) {
        if (i)
            sign_buf_add(b, " ", 1);
        sfv_serialize_bare(b, &m->items[i].bare);
        sfv_serialize_params(b, m->items[i].params, m->items[i].n_params);
    }
    sign_buf_add(b, ")", 1);
    sfv_serialize_params(b, m->params, m->n_params);
}
