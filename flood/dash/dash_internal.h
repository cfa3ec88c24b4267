/* flood/dash/dash_internal.h: the dashboard's state, shared by dash.c (the server, the
 * stream), dash_api.c (the JSON API) and dash_page.c (the page). */
#ifndef FLOOD_DASH_INTERNAL_H
#define FLOOD_DASH_INTERNAL_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdint.h>

#include "flood/core/addr.h"
#include "flood/dash/dash.h"

struct dash {
    struct MHD_Daemon *mhd;
    char address[ADDR_TEXT_MAX];
    char instance[40]; /* this listener's id: a page finding another one starts over */
    char *token, *title;
    struct steer *steer;   /* the run's, or NULL (flood serve) */
    struct steer *log;     /* where changes are logged: steer, or own_log */
    struct steer *own_log; /* flood serve: a log of the fault switches only */
    int crowd;             /* a crowd's rows (dash_opts.crowd) */
    struct inbound *in;
    int64_t mono0;

    pthread_mutex_t lock; /* everything below */
    pthread_cond_t cond;  /* a new row, the end, the stop */
    int rows_fd;          /* the rows' JSON texts one after another: an unnamed file */
    uint64_t *row_end;    /* row t's text is [row_end[t - 1] (0 for t = 0), row_end[t]) */
    size_t n_rows;        /* rows pushed so far (t = 0 .. n_rows - 1) */
    size_t cap_rows;      /* of row_end */
    uint64_t rows_lost;   /* rows the file did not take or give back (served as {}) */
    size_t pushed;        /* seconds of the stats already copied */
    int finished, stopping;
    char *report_path;
    struct tq_sampler *tqueue; /* --target-queue's readings, or NULL */
};

/* An answer: body (taken, freed by MHD), its content type. */
enum MHD_Result dash_answer(struct MHD_Connection *c, unsigned status, char *body,
                            const char *type);
/* A JSON answer {"error": msg} with status. */
enum MHD_Result dash_error(struct MHD_Connection *c, unsigned status, const char *msg);
/* The API: method and url with the body gathered (NUL-terminated). */
enum MHD_Result dash_api(struct dash *d, struct MHD_Connection *c, const char *method,
                         const char *url, const char *body, size_t len);
/* The page (a new string): the HTML with its inline CSS and script. */
char *dash_page(const struct dash *d);

#endif
