/* flood/core/opt.c: the option table's parser, help, defaults and config record. */
#include "flood/core/opt.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --help's layout: the option at column 2, its text at HELP_COL, lines up to HELP_WIDTH. */
#define HELP_COL   23
#define HELP_WIDTH 92

int opt_takes(const struct opt *row, unsigned mask)
{
    return row->name && (!row->cmds || (row->cmds & mask));
}

static int row_end(const struct opt *row)
{
    return !row->name && !row->help;
}

const struct opt *opt_find(const struct opt *rows, const char *name)
{
    for (; rows && !row_end(rows); rows++)
        if (rows->name && !strcmp(rows->name, name))
            return rows;
    return NULL;
}

void opt_strs_add(char ***v, size_t *n, const char *s)
{
    *v = flood_xrealloc(*v, (*n + 1) * sizeof(**v));
    (*v)[(*n)++] = flood_xstrdup(s);
}

void opt_strs_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* Store whole number v in the integer of row->size bytes at p. */
static void put_uint(const struct opt *row, void *p, uint64_t v)
{
    switch (row->size) {
    case 1:
        *(uint8_t *)p = (uint8_t)v;
        break;
    case 2:
        *(uint16_t *)p = (uint16_t)v;
        break;
    case 4:
        *(uint32_t *)p = (uint32_t)v;
        break;
    default:
        *(uint64_t *)p = v;
        break;
    }
}

static uint64_t get_uint(const struct opt *row, const void *p)
{
    switch (row->size) {
    case 1:
        return *(const uint8_t *)p;
    case 2:
        return *(const uint16_t *)p;
    case 4:
        return *(const uint32_t *)p;
    default:
        return *(const uint64_t *)p;
    }
}

/* A bound as a whole number (2^64 and above: UINT64_MAX). */
static uint64_t u64_of(double d)
{
    return d >= 18446744073709551616.0 ? UINT64_MAX : d <= 0 ? 0 : (uint64_t)d;
}

static size_t n_words(const char *const *w)
{
    size_t n = 0;
    while (w && w[n])
        n++;
    return n;
}

/* Parse arg by the row's kind into the row's place in base. */
static int apply_kind(const struct opt *row, char *p, const char *arg, const char *what,
                      struct flood_err *err)
{
    uint64_t u;
    double d;
    long ms;
    int k;
    switch (row->kind) {
    case OPT_HEADING:
        break;
    case OPT_FLAG:
        *(int *)p = 1;
        return 0;
    case OPT_UINT:
        if (gram_uint(what, arg, GRAM_NUL, u64_of(row->lo), u64_of(row->hi), &u, err))
            return -1;
        put_uint(row, p, u);
        return 0;
    case OPT_PERCENT:
        if (gram_share(what, arg, GRAM_NUL, GRAM_SHARE_PERCENT, row->lo, row->hi, &d, err))
            return -1;
        if (fabs(d * 100 - round(d * 100)) > 1e-9) {
            flood_err_set(err, FLOOD_EINVAL, "%s: expected a whole percent from %g to %g, got '%s'",
                          what, row->lo * 100, row->hi * 100, arg);
            return -1;
        }
        put_uint(row, p, (uint64_t)llround(d * 100));
        return 0;
    case OPT_REAL:
        if (gram_real(what, arg, GRAM_NUL, row->lo, row->hi, &d, err))
            return -1;
        *(double *)p = d;
        return 0;
    case OPT_DURATION:
        if (gram_duration(what, arg, GRAM_NUL, row->bare, row->lo, row->hi, &d, err))
            return -1;
        *(double *)p = d;
        return 0;
    case OPT_DURATION_MS:
        if (gram_duration_ms(what, arg, GRAM_NUL, row->bare, lround(row->lo * 1000),
                             lround(row->hi * 1000), &ms, err))
            return -1;
        *(long *)p = ms;
        return 0;
    case OPT_SIZE:
        if (gram_size(what, arg, GRAM_NUL, u64_of(row->lo), u64_of(row->hi), &u, err))
            return -1;
        *(uint64_t *)p = u;
        return 0;
    case OPT_SHARE:
        if (gram_share(what, arg, GRAM_NUL, row->share_bare, row->lo, row->hi, &d, err))
            return -1;
        *(double *)p = d;
        return 0;
    case OPT_RATE:
        if (gram_rate(what, arg, GRAM_NUL, row->hi, &d, err))
            return -1;
        *(double *)p = d;
        return 0;
    case OPT_KEYWORD:
        if (gram_keyword(what, arg, GRAM_NUL, row->words, n_words(row->words), &k, err))
            return -1;
        *(int *)p = k;
        return 0;
    case OPT_PATH:
        if (access(arg, R_OK)) {
            flood_err_set(err, FLOOD_EINVAL, "%s: cannot read '%s': %s", what, arg,
                          strerror(errno));
            return -1;
        }
        /* fall through */
    case OPT_STRING:
        *(const char **)p = arg;
        return 0;
    case OPT_STRINGS:
        return 0; /* appended by opt_apply once the check passed */
    case OPT_CUSTOM:
        return 0;
    }
    flood_err_set(err, FLOOD_EINVAL, "%s: the option table has a row of no known kind", what);
    return -1;
}

/* A setter's refusal names the option: "--NAME: " before a message that does not. */
static void name_option(const char *what, struct flood_err *err)
{
    size_t n = strlen(what);
    if (!strncmp(err->msg, what, n) && strchr(": ", err->msg[n]))
        return;
    char msg[sizeof(err->msg)];
    snprintf(msg, sizeof(msg), "%s", err->msg);
    int code = err->code ? err->code : FLOOD_EINVAL;
    /* "fault: unknown key" from the module of the same name reads "--fault: unknown key" */
    if (!strncmp(msg, what + 2, n - 2) && msg[n - 2] == ':')
        flood_err_set(err, code, "--%s", msg);
    else
        flood_err_set(err, code, "%s: %s", what, msg);
}

int opt_apply(const struct opt *row, void *base, const char *arg, struct flood_err *err)
{
    char what[80];
    snprintf(what, sizeof(what), "--%s", row->name);
    if (row->kind != OPT_FLAG && !arg) {
        flood_err_set(err, FLOOD_EINVAL, "%s: needs a value", what);
        return -1;
    }
    char *p = (char *)base + row->off;
    if (row->kind != OPT_CUSTOM && apply_kind(row, p, arg, what, err))
        return -1;
    if (row->set && row->set(base, row, arg, err)) {
        name_option(what, err);
        return -1;
    }
    if (row->kind == OPT_STRINGS)
        opt_strs_add((char ***)p, (size_t *)((char *)base + row->n_off), arg);
    return 0;
}

int opt_defaults(const struct opt_spec *spec, struct flood_err *err)
{
    for (size_t s = 0; s < spec->n_sets; s++)
        for (const struct opt *r = spec->sets[s].rows; r && !row_end(r); r++)
            if (r->def && opt_takes(r, spec->mask) && spec->sets[s].base &&
                opt_apply(r, spec->sets[s].base, r->def, err))
                return -1;
    return 0;
}

/* ---- the command line ------------------------------------------------------------------ */

/* The rows getopt_long sees: each option once, the earlier set's row winning. */
struct parse_rows {
    struct option *lo;
    const struct opt **row;
    size_t *set;
    size_t n;
};

static void collect(const struct opt_spec *spec, struct parse_rows *pr)
{
    size_t cap = 1;
    for (size_t s = 0; s < spec->n_sets; s++)
        for (const struct opt *r = spec->sets[s].rows; r && !row_end(r); r++)
            cap++;
    pr->lo = flood_xcalloc(cap + 1, sizeof(*pr->lo));
    pr->row = flood_xcalloc(cap, sizeof(*pr->row));
    pr->set = flood_xcalloc(cap, sizeof(*pr->set));
    pr->n = 0;
    pr->lo[pr->n++] = (struct option){"help", no_argument, NULL, 'h'};
    for (size_t s = 0; s < spec->n_sets; s++)
        for (const struct opt *r = spec->sets[s].rows; r && !row_end(r); r++) {
            if (!opt_takes(r, spec->mask))
                continue;
            size_t i;
            for (i = 1; i < pr->n && strcmp(pr->lo[i].name, r->name); i++)
                ;
            if (i < pr->n)
                continue; /* shadowed by an earlier set's row */
            pr->row[pr->n] = r;
            pr->set[pr->n] = s;
            pr->lo[pr->n] =
                (struct option){r->name, r->kind == OPT_FLAG ? no_argument : required_argument,
                                NULL, 1000 + (int)pr->n};
            pr->n++;
        }
}

int opt_parse(const struct opt_spec *spec, int argc, char **argv)
{
    struct parse_rows pr;
    collect(spec, &pr);
    int rc = 0, id;
    optind = 1;
    opterr = 0;
    while (!rc && (id = getopt_long(argc, argv, ":h", pr.lo, NULL)) != -1) {
        if (id == 'h') {
            opt_help(spec, stdout);
            rc = 1;
        } else if (id == '?' || id == ':') {
            fprintf(stderr, "flood: %s: %s '%s' (flood %s --help)\n", spec->cmd,
                    id == ':' ? "option needs a value" : "unknown option", argv[optind - 1],
                    spec->cmd);
            rc = 2;
        } else {
            size_t i = (size_t)(id - 1000);
            struct flood_err err = {0};
            if (opt_apply(pr.row[i], spec->sets[pr.set[i]].base, optarg, &err)) {
                fprintf(stderr, "flood: %s: %s\n", spec->cmd, err.msg);
                rc = 2;
            } else if (spec->seen) {
                int n_raw = optarg && optind >= 2 && optarg == argv[optind - 1] ? 2 : 1;
                spec->seen(spec->ctx, pr.set[i], pr.row[i], optarg, argv + optind - n_raw, n_raw);
            }
        }
    }
    free(pr.lo);
    free(pr.row);
    free(pr.set);
    if (!rc && spec->operands >= 0 && argc - optind > spec->operands) {
        fprintf(stderr, "flood: %s: unexpected argument '%s'\n", spec->cmd,
                argv[optind + spec->operands]);
        rc = 2;
    }
    return rc;
}

/* ---- --help ------------------------------------------------------------------------------ */

/* Print text's words from column col (a word already on the line unless fresh), wrapped
 * to HELP_WIDTH with the following lines at HELP_COL. */
static void wrap(FILE *f, const char *p, size_t col, int fresh)
{
    while (*p == ' ')
        p++;
    while (*p) {
        size_t w = strcspn(p, " ");
        if (!fresh && col + 1 + w > HELP_WIDTH) {
            fprintf(f, "\n%*s", HELP_COL, "");
            col = HELP_COL;
        } else if (!fresh) {
            fputc(' ', f);
            col++;
        }
        fwrite(p, 1, w, f);
        col += w;
        fresh = 0;
        p += w;
        while (*p == ' ')
            p++;
    }
    fputc('\n', f);
}

static void help_row(FILE *f, const struct opt *r)
{
    int n = fprintf(f, "  --%s%s%s", r->name, r->arg ? " " : "", r->arg ? r->arg : "");
    size_t col = n > 0 ? (size_t)n : 0;
    size_t pad = col + 2 > HELP_COL ? 2 : HELP_COL - col;
    fprintf(f, "%*s", (int)pad, "");
    const char *h = r->help ? r->help : "";
    size_t hn = strlen(h);
    char *text;
    if (!r->def || (r->flags & OPT_F_DEF_QUIET))
        text = flood_xstrdup(h);
    else if (hn && h[hn - 1] == ')') /* "(0.5 is half speed; default 1)" */
        text = flood_xasprintf("%.*s; default %s)", (int)(hn - 1), h, r->def);
    else
        text = flood_xasprintf("%s (default %s)", h, r->def);
    wrap(f, text, col + pad, 1);
    free(text);
}

void opt_help(const struct opt_spec *spec, FILE *f)
{
    fputs(spec->usage, f);
    const struct opt *pending = NULL; /* a heading waiting for its first row */
    int printed = 0;
    for (size_t s = 0; s < spec->n_sets; s++)
        for (const struct opt *r = spec->sets[s].rows; r && !row_end(r); r++) {
            if (r->kind == OPT_HEADING) {
                if (!r->cmds || (r->cmds & spec->mask))
                    pending = r;
                continue;
            }
            if (!opt_takes(r, spec->mask) || (r->flags & OPT_F_HIDDEN))
                continue;
            /* shadowed by an earlier set's row of the same name: listed there */
            int shadow = 0;
            for (size_t e = 0; e < s && !shadow; e++) {
                const struct opt *o = opt_find(spec->sets[e].rows, r->name);
                shadow = o && opt_takes(o, spec->mask);
            }
            if (shadow)
                continue;
            if (pending) {
                fprintf(f, "\n%s\n", pending->help);
                pending = NULL;
            } else if (!printed) {
                fputc('\n', f);
            }
            printed = 1;
            help_row(f, r);
        }
    fputs("  -h, --help           this help\n", f);
    if (spec->tail) {
        fputc('\n', f);
        fputs(spec->tail, f);
    }
}

/* ---- run.json's config ------------------------------------------------------------------ */

static json_t *record_kind(const struct opt *r, const void *base)
{
    const char *p = (const char *)base + r->off;
    switch (r->kind) {
    case OPT_FLAG:
        return json_boolean(*(const int *)p);
    case OPT_UINT:
    case OPT_PERCENT:
        /* an int may hold a sentinel below the range (-1: settled later) */
        if (r->size == sizeof(int32_t))
            return json_integer(*(const int32_t *)p);
        return json_integer((json_int_t)get_uint(r, p));
    case OPT_DURATION_MS:
        return json_integer(*(const long *)p);
    case OPT_SIZE:
        return json_integer((json_int_t) * (const uint64_t *)p);
    case OPT_REAL:
    case OPT_DURATION:
    case OPT_SHARE:
    case OPT_RATE:
        return json_real(*(const double *)p);
    case OPT_KEYWORD: {
        int k = *(const int *)p;
        return k >= 0 && (size_t)k < n_words(r->words) ? json_string(r->words[k]) : json_null();
    }
    case OPT_STRING:
    case OPT_PATH: {
        const char *s = *(const char *const *)p;
        if (!s && (r->flags & OPT_F_OMIT_NULL))
            return NULL;
        return s ? json_string(s) : r->flags & OPT_F_NO_JSON_NULL ? json_string("") : json_null();
    }
    case OPT_STRINGS: {
        char *const *v = *(char *const *const *)p;
        size_t n = *(const size_t *)((const char *)base + r->n_off);
        json_t *a = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append_new(a, json_string(v[i]));
        return a;
    }
    case OPT_HEADING:
    case OPT_CUSTOM:
        break;
    }
    return NULL;
}

void opt_record(const struct opt *rows, const void *base, unsigned mask, json_t *obj)
{
    for (const struct opt *r = rows; r && !row_end(r); r++) {
        if (!r->json || !opt_takes(r, mask))
            continue;
        json_t *v = r->record ? r->record(base, r) : record_kind(r, base);
        if (v)
            json_object_set_new(obj, r->json, v);
    }
}
