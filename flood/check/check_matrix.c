/* flood/check/check_matrix.c: several cards of `flood check --json` side by side, the steps
 * down and the targets across, as Markdown (for a pull request or a wiki) and as one
 * self-contained HTML page (cells coloured by result, the detail on hover). */
#include <stdlib.h>
#include <string.h>

#include "flood/core/html.h"
#include "flood/check/check_card.h"

#define esc html_escape_xml

static const char *const results[] = {"pass", "fail", "skip", "deferred", "unsupported"};
#define N_RESULTS (sizeof(results) / sizeof(results[0]))

struct matrix_col {
    json_t *card; /* owned reference */
    char *file;   /* owned */
    char *label;  /* owned: what the column is called */
};

struct matrix_row {
    const char *step;          /* borrowed from the card that brought it */
    size_t occ;                /* its occurrence in that scenario (0: the first) */
    int idx[CHECK_MATRIX_MAX]; /* the step's index in each column's steps, -1: absent */
};

struct check_matrix {
    struct matrix_col cols[CHECK_MATRIX_MAX];
    size_t n_cols;
    struct matrix_row *rows;
    size_t n_rows;
};

static const char *jstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

struct check_matrix *check_matrix_new(void)
{
    return flood_xcalloc(1, sizeof(struct check_matrix));
}

void check_matrix_free(struct check_matrix *m)
{
    if (!m)
        return;
    for (size_t c = 0; c < m->n_cols; c++) {
        json_decref(m->cols[c].card);
        free(m->cols[c].file);
        free(m->cols[c].label);
    }
    free(m->rows);
    free(m);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Column labels: the target; two cards of the same target are told apart by file name. */
static void relabel(struct check_matrix *m)
{
    for (size_t c = 0; c < m->n_cols; c++) {
        const char *t = check_card_target(m->cols[c].card);
        int dup = 0;
        for (size_t d = 0; t && d < m->n_cols; d++) {
            const char *u = check_card_target(m->cols[d].card);
            dup |= d != c && u && !strcmp(t, u);
        }
        free(m->cols[c].label);
        if (!t)
            m->cols[c].label = flood_xstrdup(base_name(m->cols[c].file));
        else if (dup)
            m->cols[c].label = flood_xasprintf("%s (%s)", t, base_name(m->cols[c].file));
        else
            m->cols[c].label = flood_xstrdup(t);
    }
}

int check_matrix_add(struct check_matrix *m, const json_t *card, const char *file,
                     struct flood_err *err)
{
    if (m->n_cols == CHECK_MATRIX_MAX) {
        flood_err_set(err, FLOOD_ELIMIT, "at most %d cards in one matrix", CHECK_MATRIX_MAX);
        return -1;
    }
    if (check_card_valid(card, err) < 0)
        return -1;
    size_t c = m->n_cols++;
    m->cols[c].card = json_incref((json_t *)card);
    m->cols[c].file = flood_xstrdup(file);
    for (size_t r = 0; r < m->n_rows; r++)
        m->rows[r].idx[c] = -1;
    const json_t *steps = json_object_get(card, "steps");
    size_t pos = 0; /* where the next new row goes: after the last row this card filled */
    for (size_t i = 0; i < json_array_size(steps); i++) {
        const char *step = jstr(json_array_get(steps, i), "step");
        size_t occ = 0;
        for (size_t j = 0; j < i; j++)
            occ += !strcmp(step, jstr(json_array_get(steps, j), "step"));
        size_t r = 0;
        while (r < m->n_rows && (m->rows[r].occ != occ || strcmp(m->rows[r].step, step)))
            r++;
        if (r == m->n_rows) {
            m->rows = flood_xrealloc(m->rows, (m->n_rows + 1) * sizeof(*m->rows));
            r = pos;
            memmove(&m->rows[r + 1], &m->rows[r], (m->n_rows - r) * sizeof(*m->rows));
            m->n_rows++;
            m->rows[r].step = step;
            m->rows[r].occ = occ;
            for (size_t k = 0; k < CHECK_MATRIX_MAX; k++)
                m->rows[r].idx[k] = -1;
        }
        m->rows[r].idx[c] = (int)i;
        if (r + 1 > pos)
            pos = r + 1;
    }
    relabel(m);
    return 0;
}

static const json_t *cell(const struct check_matrix *m, size_t r, size_t c)
{
    int i = m->rows[r].idx[c];
    return i < 0 ? NULL : json_array_get(json_object_get(m->cols[c].card, "steps"), (size_t)i);
}

/* Whether the results of row r are not all the same (a step missing counts as a result). */
static int differs(const struct check_matrix *m, size_t r)
{
    const json_t *a = cell(m, r, 0);
    for (size_t c = 1; c < m->n_cols; c++) {
        const json_t *b = cell(m, r, c);
        if (!a != !b || (a && strcmp(jstr(a, "result"), jstr(b, "result"))))
            return 1;
    }
    return 0;
}

/* The detail of a result as one line: "expected E, got G; detail (line N, M ms)". A new
 * string. */
static char *detail(const json_t *st)
{
    const char *e = jstr(st, "expected"), *g = jstr(st, "got"), *d = jstr(st, "detail");
    char *s =
        flood_xasprintf("%s%s%s%s%s%s%s (line %d, %.0f ms)", e ? "expected " : "", e ? e : "",
                        e && g ? ", " : "", g ? "got " : "", g ? g : "", d && (e || g) ? "; " : "",
                        d ? d : "", (int)json_integer_value(json_object_get(st, "line")),
                        json_number_value(json_object_get(st, "ms")));
    for (char *p = s; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    return s;
}

static void counts(const json_t *card, size_t n[N_RESULTS])
{
    memset(n, 0, N_RESULTS * sizeof(n[0]));
    size_t i;
    const json_t *st;
    json_array_foreach(json_object_get(card, "steps"), i, st)
    {
        for (size_t k = 0; k < N_RESULTS; k++)
            n[k] += !strcmp(jstr(st, "result"), results[k]);
    }
}

/* ---- Markdown ------------------------------------------------------------------------- */

/* Text in a table cell: a '|' would split it. */
static void md(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|' || *s == '\\' || *s == '`' || *s == '*' || *s == '_')
            fputc('\\', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
}

void check_matrix_markdown(FILE *f, const void *arg)
{
    const struct check_matrix *m = arg;
    fputs("# flood check matrix\n\n", f);
    for (size_t c = 0; c < m->n_cols; c++) {
        const json_t *k = m->cols[c].card;
        fputs("- ", f);
        md(f, m->cols[c].label);
        fputs(": ", f);
        md(f, jstr(json_object_get(k, "persona"), "spec"));
        fputs(", scenario ", f);
        md(f, jstr(k, "scenario") ? jstr(k, "scenario") : "?");
        fputs(", flood ", f);
        md(f, jstr(k, "flood_version") ? jstr(k, "flood_version") : "?");
        fputs(" (", f);
        md(f, m->cols[c].file);
        fputs(")\n", f);
    }
    fputs("\n| step |", f);
    for (size_t c = 0; c < m->n_cols; c++) {
        fputc(' ', f);
        md(f, m->cols[c].label);
        fputs(" |", f);
    }
    fputs("\n|---|", f);
    for (size_t c = 0; c < m->n_cols; c++)
        fputs("---|", f);
    fputc('\n', f);
    for (size_t r = 0; r < m->n_rows; r++) {
        fputs(differs(m, r) ? "| ≠ " : "| ", f);
        md(f, m->rows[r].step);
        fputs(" |", f);
        for (size_t c = 0; c < m->n_cols; c++) {
            const json_t *st = cell(m, r, c);
            const char *res = st ? jstr(st, "result") : "-";
            fprintf(f, strcmp(res, "fail") ? " %s |" : " **%s** |", res);
        }
        fputc('\n', f);
    }
    fputs("| **summary** |", f);
    for (size_t c = 0; c < m->n_cols; c++) {
        size_t n[N_RESULTS];
        counts(m->cols[c].card, n);
        for (size_t k = 0; k < N_RESULTS; k++)
            fprintf(f, "%s%zu %s", k ? ", " : " ", n[k], results[k]);
        fputs(" |", f);
    }
    fputs("\n\n≠: the results differ across targets; -: the step is not in that card.\n", f);
    int head = 0;
    for (size_t r = 0; r < m->n_rows; r++)
        for (size_t c = 0; c < m->n_cols; c++) {
            const json_t *st = cell(m, r, c);
            if (!st || !strcmp(jstr(st, "result"), "pass"))
                continue;
            if (!head++)
                fputs("\n## Details (every result but pass)\n\n", f);
            char *d = detail(st);
            fputs("- ", f);
            md(f, m->rows[r].step);
            fputs(", ", f);
            md(f, m->cols[c].label);
            fprintf(f, ": %s: ", jstr(st, "result"));
            md(f, d);
            fputc('\n', f);
            free(d);
        }
}

/* ---- HTML ----------------------------------------------------------------------------- */

static const char css[] =
    "<style>\n"
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;"
    "max-width:1200px;padding:16px 24px;color:#1b1b1b;background:#fff}\n"
    "h1{font-size:22px;margin:8px 0 8px}.note{color:#555;font-size:13px}\n"
    "table{border-collapse:collapse;margin:6px 0 10px;display:block;max-width:100%;"
    "overflow-x:auto}\n"
    "th,td{border:1px solid #ccc;padding:3px 8px;text-align:center}th{background:#f4f4f4}\n"
    "td.k,th.k{text-align:left;font-family:ui-monospace,monospace;font-size:13px}\n"
    "tr.differs td.k{font-weight:700}tr.differs td.k::before{content:'\\2260  '}\n"
    "td.pass{background:#d9f2df;color:#11703a}td.fail{background:#f9d3d7;color:#9b0019;"
    "font-weight:700}\n"
    "td.skip{background:#ececec;color:#555}td.deferred{background:#fff0c2;color:#7a5200}\n"
    "td.unsupported{background:#dde7f7;color:#21457a}td.none{color:#999}\n"
    "td[title]{cursor:help}tr.sum td{font-size:12px;background:#fafafa}\n"
    "</style>\n";

void check_matrix_html(FILE *f, const void *arg)
{
    const struct check_matrix *m = arg;
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<link rel=\"icon\" href=\"data:,\">\n<title>flood check matrix</title>\n",
          f);
    fputs(css, f);
    fputs("</head><body>\n<h1>flood check matrix</h1>\n<p class=\"note\">One row a step, one "
          "column a target. Hover a cell for what was expected and what came back; a bold "
          "step's results differ across targets; - is a step not in that card.</p>\n"
          "<table>\n<tr><th class=\"k\">step</th>",
          f);
    for (size_t c = 0; c < m->n_cols; c++) {
        const json_t *k = m->cols[c].card;
        fputs("<th title=\"", f);
        esc(f, jstr(json_object_get(k, "persona"), "spec"));
        fputs(", scenario ", f);
        esc(f, jstr(k, "scenario"));
        fputs(", flood ", f);
        esc(f, jstr(k, "flood_version"));
        fputs(", ", f);
        esc(f, m->cols[c].file);
        fputs("\">", f);
        esc(f, m->cols[c].label);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (size_t r = 0; r < m->n_rows; r++) {
        fprintf(f, "<tr%s><td class=\"k\">", differs(m, r) ? " class=\"differs\"" : "");
        esc(f, m->rows[r].step);
        fputs("</td>", f);
        for (size_t c = 0; c < m->n_cols; c++) {
            const json_t *st = cell(m, r, c);
            if (!st) {
                fputs("<td class=\"none\" title=\"not in this card's scenario\">-</td>", f);
                continue;
            }
            const char *res = jstr(st, "result");
            char *d = detail(st);
            fprintf(f, "<td class=\"%s\" title=\"", res);
            esc(f, d);
            fprintf(f, "\">%s</td>", res);
            free(d);
        }
        fputs("</tr>\n", f);
    }
    fputs("<tr class=\"sum\"><td class=\"k\">summary</td>", f);
    for (size_t c = 0; c < m->n_cols; c++) {
        size_t n[N_RESULTS];
        counts(m->cols[c].card, n);
        fputs("<td>", f);
        for (size_t k = 0; k < N_RESULTS; k++)
            fprintf(f, "%s%zu %s", k ? "<br>" : "", n[k], results[k]);
        fputs("</td>", f);
    }
    fputs("</tr>\n</table>\n<p class=\"note\">Colours: <span style=\"color:#11703a\">pass"
          "</span>, <span style=\"color:#9b0019\">fail</span>, skip (grey), deferred (amber: a "
          "bad request answered 2xx with no effect seen), unsupported (blue: a signature "
          "dialect the target does not take). docs/INTEROP.md says what each step checks."
          "</p>\n</body></html>\n",
          f);
}
