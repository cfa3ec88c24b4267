/* flood/report/report_plot.c: inline SVG charts (lines, stacked areas, percentile curves). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "flood/core/html.h"
#include "flood/report/report_plot.h"

/* Chart geometry, in SVG user units (the svg scales to the page width). */
#define W       960.0
#define H       300.0
#define ML      70.0
#define MR      190.0
#define MT      14.0
#define MB      46.0
#define PW      (W - ML - MR)
#define PH      (H - MT - MB)
#define N_TICKS 5

/* Colour-blind friendly (Okabe-Ito), then a few more. */
static const char *const palette[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7",
                                      "#56B4E9", "#F0E442", "#000000", "#999999", "#8C564B"};

const char *plot_color(size_t i)
{
    return palette[i % (sizeof(palette) / sizeof(palette[0]))];
}

/* A round step (1, 2 or 5 times a power of ten) near range / N_TICKS. */
static double nice_step(double range)
{
    if (!(range > 0) || !isfinite(range))
        return 1;
    double raw = range / N_TICKS;
    double mag = pow(10, floor(log10(raw)));
    double f = raw / mag;
    double nf = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
    return nf * mag;
}

/* HdrHistogram's percentile axis: 0 at p = 0, 1 at 90%, 2 at 99%, 3 at 99.9% ... */
static double pct_x(double p)
{
    if (p < 0)
        p = 0;
    if (p >= 1)
        return INFINITY;
    return log10(1 / (1 - p));
}

struct frame {
    double x0, x1, y0, y1;
};

static double sx(const struct frame *fr, double x)
{
    return ML + (x - fr->x0) / (fr->x1 - fr->x0) * PW;
}

static double sy(const struct frame *fr, double y)
{
    double v = MT + PH - (y - fr->y0) / (fr->y1 - fr->y0) * PH;
    if (v < MT)
        v = MT;
    if (v > MT + PH)
        v = MT + PH;
    return v;
}

/* The largest finite percentile-axis x of a series (where its "max" point, p = 1, goes). */
static double pct_end(const struct plot_series *s)
{
    double end = 0;
    for (size_t i = 0; i < s->n; i++) {
        double x = pct_x(s->x[i]);
        if (isfinite(x) && x > end)
            end = x;
    }
    return end;
}

static double point_x(const struct plot *p, const struct plot_series *s, size_t i, double end)
{
    if (p->kind != PLOT_PERCENTILE)
        return s->x[i];
    double x = pct_x(s->x[i]);
    return isfinite(x) ? x : end;
}

/* The stacked total at point i (PLOT_STACKED: every series has the same x). */
static double stack_total(const struct plot *p, size_t i, size_t upto)
{
    double sum = 0;
    for (size_t k = 0; k < upto && k < p->ns; k++)
        if (i < p->series[k].n && isfinite(p->series[k].y[i]))
            sum += p->series[k].y[i];
    return sum;
}

static void compute_frame(const struct plot *p, struct frame *fr)
{
    double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
    for (size_t k = 0; k < p->ns; k++) {
        const struct plot_series *s = &p->series[k];
        double end = p->kind == PLOT_PERCENTILE ? pct_end(s) : 0;
        for (size_t i = 0; i < s->n; i++) {
            double x = point_x(p, s, i, end), y = s->y[i];
            if (!isfinite(x) || !isfinite(y))
                continue;
            if (x < xmin)
                xmin = x;
            if (p->kind == PLOT_STACKED)
                x += 1;
            if (x > xmax)
                xmax = x;
            if (p->kind == PLOT_STACKED)
                y = stack_total(p, i, p->ns);
            if (y > ymax)
                ymax = y;
        }
    }
    if (!isfinite(xmin) || !isfinite(xmax)) {
        xmin = 0;
        xmax = 1;
    }
    if (p->kind != PLOT_LINES || xmin > 0)
        xmin = 0;
    if (p->kind == PLOT_PERCENTILE || (p->kind == PLOT_LINES && xmin == 0))
        xmax = ceil(xmax) < 1 ? 1 : ceil(xmax);
    if (xmax <= xmin)
        xmax = xmin + 1;
    ymax *= 1.04; /* a little headroom: a line at the maximum stays off the frame */
    double ys = nice_step(ymax);
    fr->x0 = xmin;
    fr->x1 = xmax;
    fr->y0 = 0;
    fr->y1 = ymax > 0 ? ceil(ymax / ys) * ys : 1;
}

static void fmt_tick(char *buf, size_t size, double v)
{
    if (fabs(v) >= 1e6)
        snprintf(buf, size, "%.3gM", v / 1e6);
    else if (fabs(v) >= 1e4)
        snprintf(buf, size, "%.3gk", v / 1e3);
    else
        snprintf(buf, size, "%.6g", v);
}

static void axes(FILE *f, const struct plot *p, const struct frame *fr)
{
    char t[32];
    /* y grid and ticks */
    double ys = nice_step(fr->y1 - fr->y0);
    for (double y = fr->y0; y <= fr->y1 + ys / 1e6; y += ys) {
        double py = sy(fr, y);
        fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", ML, py,
                ML + PW, py);
        fmt_tick(t, sizeof(t), y);
        fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                ML - 6, py + 4, t);
    }
    /* x ticks */
    if (p->kind == PLOT_PERCENTILE) {
        for (int k = 0; k <= (int)fr->x1; k++) {
            double px = sx(fr, k);
            if (k == 0)
                snprintf(t, sizeof(t), "0%%");
            else
                snprintf(t, sizeof(t), "%.*f%%", k > 2 ? k - 2 : 0, 100 - 100 / pow(10, k));
            fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", px,
                    MT, px, MT + PH);
            fprintf(f,
                    "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                    px, MT + PH + 16, t);
        }
    } else {
        double xs = nice_step(fr->x1 - fr->x0);
        if (p->kind == PLOT_STACKED && xs < 1)
            xs = 1;
        for (double x = ceil(fr->x0 / xs) * xs; x <= fr->x1 + xs / 1e6; x += xs) {
            double px = sx(fr, x);
            fmt_tick(t, sizeof(t), x);
            fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", px,
                    MT + PH, px, MT + PH + 4);
            fprintf(f,
                    "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                    px, MT + PH + 16, t);
        }
    }
    fprintf(f,
            "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n"
            "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
            ML, MT, PW, PH, ML + PW / 2, H - 8);
    html_escape(f, p->xlabel);
    fprintf(f,
            "</text>\n<text class=\"label\" transform=\"translate(16 %.1f) rotate(-90)\" "
            "text-anchor=\"middle\">",
            MT + PH / 2);
    html_escape(f, p->ylabel);
    fputs("</text>\n", f);
}

static double series_sum(const struct plot_series *s)
{
    double sum = 0;
    for (size_t i = 0; i < s->n; i++)
        if (isfinite(s->y[i]))
            sum += s->y[i];
    return sum;
}

static void series_open(FILE *f, const struct plot_series *s)
{
    fputs("<g class=\"series\" data-series=\"", f);
    html_escape(f, s->name);
    fprintf(f, "\" data-points=\"%zu\" data-sum=\"%.17g\"><title>", s->n, series_sum(s));
    html_escape(f, s->name);
    fputs("</title>", f);
}

static void draw_line(FILE *f, const struct plot *p, const struct frame *fr,
                      const struct plot_series *s)
{
    series_open(f, s);
    double end = p->kind == PLOT_PERCENTILE ? pct_end(s) : 0;
    size_t drawn = 0, run = 0;
    for (size_t i = 0; i < s->n; i++) {
        double x = point_x(p, s, i, end), y = s->y[i];
        if (!isfinite(x) || !isfinite(y)) {
            run = 0; /* a gap (a second with no figure): the line breaks */
            continue;
        }
        if (drawn == 0)
            fputs("<path d=\"", f);
        fprintf(f, "%s%.1f,%.1f", run == 0 ? (drawn ? " M" : "M") : " L", sx(fr, x), sy(fr, y));
        drawn++;
        run++;
    }
    if (drawn)
        fprintf(f, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\"%s/>", s->color,
                s->dashed ? " stroke-dasharray=\"6 3\"" : "");
    /* points standing alone draw no line: mark them */
    for (size_t i = 0; i < s->n; i++) {
        double x = point_x(p, s, i, end), y = s->y[i];
        int prev = i > 0 && isfinite(s->y[i - 1]) && isfinite(point_x(p, s, i - 1, end));
        int next = i + 1 < s->n && isfinite(s->y[i + 1]) && isfinite(point_x(p, s, i + 1, end));
        if (isfinite(x) && isfinite(y) && !prev && !next)
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>", sx(fr, x),
                    sy(fr, y), s->color);
    }
    fputs("</g>\n", f);
}

static void draw_stack_layer(FILE *f, const struct plot *p, const struct frame *fr, size_t k)
{
    const struct plot_series *s = &p->series[k];
    series_open(f, s);
    if (s->n) {
        fputs("<path d=\"M", f);
        for (size_t i = 0; i < s->n; i++) {
            double top = stack_total(p, i, k + 1);
            fprintf(f, "%s%.1f,%.1f L%.1f,%.1f", i ? " L" : "", sx(fr, s->x[i]), sy(fr, top),
                    sx(fr, s->x[i] + 1), sy(fr, top));
        }
        for (size_t i = s->n; i-- > 0;) {
            double bottom = stack_total(p, i, k);
            fprintf(f, " L%.1f,%.1f L%.1f,%.1f", sx(fr, s->x[i] + 1), sy(fr, bottom),
                    sx(fr, s->x[i]), sy(fr, bottom));
        }
        fprintf(f, " Z\" fill=\"%s\" fill-opacity=\"0.85\" stroke=\"none\"/>", s->color);
    }
    fputs("</g>\n", f);
}

static void legend(FILE *f, const struct plot *p)
{
    double x = ML + PW + 14, y = MT + 8;
    /* stacked areas read bottom-up: list them top-down as drawn */
    for (size_t j = 0; j < p->ns; j++) {
        size_t k = p->kind == PLOT_STACKED ? p->ns - 1 - j : j;
        const struct plot_series *s = &p->series[k];
        int empty = s->n == 0;
        if (p->kind == PLOT_STACKED)
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"%s\"/>", x,
                    y - 4, s->color);
        else
            fprintf(f,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                    "stroke-width=\"2.5\"%s/>",
                    x, y + 1, x + 14, y + 1, s->color,
                    s->dashed ? " stroke-dasharray=\"4 2\"" : "");
        fprintf(f, "<text class=\"legend%s\" x=\"%.1f\" y=\"%.1f\">", empty ? " empty" : "", x + 20,
                y + 5);
        html_escape(f, s->name);
        if (empty)
            fputs(" (no data)", f);
        fputs("</text>\n", f);
        y += 18;
    }
}

void plot_svg(FILE *f, const struct plot *p)
{
    struct frame fr;
    compute_frame(p, &fr);
    fputs("<figure class=\"chart\"><figcaption>", f);
    html_escape(f, p->title);
    fputs("</figcaption>\n<svg id=\"", f);
    html_escape(f, p->id);
    fprintf(f, "\" class=\"plot %s\" viewBox=\"0 0 %.0f %.0f\" role=\"img\"><title>",
            p->kind == PLOT_STACKED      ? "stacked"
            : p->kind == PLOT_PERCENTILE ? "percentile"
                                         : "lines",
            W, H);
    html_escape(f, p->title);
    fputs("</title>\n", f);
    axes(f, p, &fr);
    for (size_t k = 0; k < p->ns; k++) {
        if (p->kind == PLOT_STACKED)
            draw_stack_layer(f, p, &fr, k);
        else
            draw_line(f, p, &fr, &p->series[k]);
    }
    for (size_t i = 0; p->kind != PLOT_PERCENTILE && i < p->n_marks; i++) {
        const struct plot_mark *m = &p->marks[i];
        if (!isfinite(m->x) || m->x < fr.x0 || m->x > fr.x1)
            continue;
        double x = sx(&fr, m->x);
        fputs("<line class=\"mark\" data-kind=\"", f);
        html_escape(f, m->kind);
        fprintf(f,
                "\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#555\" "
                "stroke-dasharray=\"3 3\"/><text x=\"%.1f\" y=\"%.1f\">",
                x, x, MT, MT + PH, x + 3, MT + 10 + (double)(i % 3) * 11);
        html_escape(f, m->label);
        fputs("</text>\n", f);
    }
    legend(f, p);
    fputs("</svg></figure>\n", f);
}
