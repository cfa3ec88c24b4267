/* flood/report/report_plot.h: inline SVG charts for the HTML reports (report.html and the
 * `flood compare --html` overlay). Pure output: a chart description in, SVG text out on a
 * stream. No scripts, no external references: the SVG stands alone inside the page.
 *
 * Every drawn series is one element carrying class="series", data-series="NAME" and
 * data-points="N" (its number of data points), so a test (or a reader's devtools) can see
 * which series were drawn and with how much data. */
#ifndef FLOOD_REPORT_PLOT_H
#define FLOOD_REPORT_PLOT_H

#include <stddef.h>
#include <stdio.h>

enum plot_kind {
    PLOT_LINES,      /* y against x, one polyline per series */
    PLOT_STACKED,    /* x is a second index: series stacked as areas, one second wide */
    PLOT_PERCENTILE, /* x is a percentile fraction 0..1 on HdrHistogram's 1/(1-p) log axis */
};

struct plot_series {
    const char *name;  /* legend text and data-series (borrowed) */
    const char *color; /* a CSS colour (borrowed) */
    const double *x;   /* borrowed, n values */
    const double *y;   /* borrowed, n values */
    size_t n;
    int dashed; /* draw dashed (a secondary figure, e.g. service time) */
};

/* A labelled vertical line: a steering change at x (drawn as class="mark" with
 * data-kind="KIND"). */
struct plot_mark {
    double x;
    const char *kind;  /* borrowed */
    const char *label; /* borrowed */
};

struct plot {
    const char *id;     /* the svg element's id (borrowed) */
    const char *title;  /* shown above the chart (borrowed) */
    const char *xlabel; /* (borrowed) */
    const char *ylabel; /* (borrowed) */
    enum plot_kind kind;
    const struct plot_series *series; /* borrowed, ns entries */
    size_t ns;
    const struct plot_mark *marks; /* vertical lines on the x axis (time charts), borrowed */
    size_t n_marks;
};

/* The colours charts use, in order, for a caller that numbers its series. */
const char *plot_color(size_t i);

/* Write p as one <figure> holding an <svg> on f. Empty series are listed in the legend
 * (marked "no data") and drawn as nothing. Non-finite values are skipped. */
void plot_svg(FILE *f, const struct plot *p);

#endif
