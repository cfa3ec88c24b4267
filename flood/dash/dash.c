/* flood/dash/dash.c: the dashboard's listener and its Server-Sent Events stream (see
 * dash.h). A thread per connection: a stream's reader blocks on the condition variable
 * until the next second is pushed, so an idle page costs a sleeping thread, and the sender
 * pays one copy of each second under a lock. */
#include "flood/dash/dash_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "flood/core/clock.h"
#include "flood/core/fsutil.h"
#include "flood/report/results.h"

#define BODY_MAX   4096 /* an API body */
#define STREAM_MAX 16   /* pages (streams) at once */

/* ---- the rows -------------------------------------------------------------------------- */

/* A row the file did not take or give back: counted, said once on stderr. */
static void row_lost(struct dash *d, const char *what, size_t t, int e)
{
    if (!d->rows_lost++)
        fprintf(stderr,
                "flood: dashboard: cannot %s row %zu of the rows' file (%s); such rows are "
                "served as {} (counted in /api/state's rows_lost)\n",
                what, t, e ? strerror(e) : "short");
}

/* Row n_rows appended: text (taken). Caller holds d->lock. */
static void add_row(struct dash *d, char *text)
{
    uint64_t at = d->n_rows ? d->row_end[d->n_rows - 1] : 0;
    size_t len = strlen(text), n = fs_pwrite_full(d->rows_fd, text, len, (off_t)at);
    free(text);
    if (n < len) { /* kept as an empty row: the next one is written over what got there */
        row_lost(d, "write", d->n_rows, errno);
        n = 0;
    }
    if (d->n_rows == d->cap_rows) {
        d->cap_rows = d->cap_rows ? d->cap_rows * 2 : 1024;
        d->row_end = flood_xrealloc(d->row_end, d->cap_rows * sizeof(*d->row_end));
    }
    d->row_end[d->n_rows++] = at + n;
}

/* Row t's text (a new string; "{}" for a row the file lost). Caller holds d->lock. */
static char *row_text(struct dash *d, size_t t)
{
    uint64_t from = t ? d->row_end[t - 1] : 0;
    size_t len = (size_t)(d->row_end[t] - from);
    if (!len)
        return flood_xstrdup("{}");
    char *text = flood_xmalloc(len + 1);
    if (fs_pread_full(d->rows_fd, text, len, (off_t)from) < len) {
        row_lost(d, "read", t, errno);
        free(text);
        return flood_xstrdup("{}");
    }
    text[len] = 0;
    return text;
}

/* ---- the stream ------------------------------------------------------------------------ */

struct stream {
    struct dash *d;
    size_t next_t;    /* the next row to send */
    uint64_t steer_n; /* changes sent */
    int hello_sent;
    char *buf; /* what is being written */
    size_t len, off;
    int end_sent;
    time_t last_write;
};

static void stream_put(struct stream *s, char *text)
{
    free(s->buf);
    s->buf = text;
    s->len = strlen(text);
    s->off = 0;
}

/* The next event, or NULL when there is nothing new. Caller holds d->lock. */
static char *next_event(struct stream *s)
{
    struct dash *d = s->d;
    if (!s->hello_sent) { /* first: which dashboard this is (a new one: the page starts over) */
        s->hello_sent = 1;
        json_t *o = json_pack("{s:s, s:s, s:b}", "instance", d->instance, "title", d->title,
                              "crowd", d->crowd);
        char *j = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        char *ev = flood_xasprintf("event: hello\ndata: %s\n\n", j ? j : "{}");
        free(j);
        return ev;
    }
    if (s->next_t < d->n_rows) {
        size_t t = s->next_t++;
        char *row = row_text(d, t);
        char *ev = flood_xasprintf("id: %zu\nevent: row\ndata: %s\n\n", t, row);
        free(row);
        return ev;
    }
    if (steer_count(d->log) > s->steer_n) {
        s->steer_n = steer_count(d->log);
        json_t *a = results_steering_json(d->log);
        char *j = json_dumps(a, JSON_COMPACT);
        json_decref(a);
        char *ev = flood_xasprintf("event: steering\ndata: %s\n\n", j ? j : "[]");
        free(j);
        return ev;
    }
    if (d->finished && !s->end_sent) {
        s->end_sent = 1;
        json_t *o = json_pack("{s:s, s:I}", "report", d->report_path ? d->report_path : "",
                              "seconds", (json_int_t)d->n_rows);
        char *j = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        char *ev = flood_xasprintf("event: end\ndata: %s\n\n", j ? j : "{}");
        free(j);
        return ev;
    }
    return NULL;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
    (void)pos;
    struct stream *s = cls;
    struct dash *d = s->d;
    if (s->off == s->len) {
        pthread_mutex_lock(&d->lock);
        char *ev;
        while (!(ev = next_event(s)) && !d->stopping && !(s->end_sent && d->finished)) {
            struct timespec ts = clock_mono_after(1000);
            pthread_cond_timedwait(&d->cond, &d->lock, &ts);
            if (time(NULL) - s->last_write >= 15)
                break; /* a comment keeps proxies and the browser's stream alive */
        }
        pthread_mutex_unlock(&d->lock);
        if (!ev && (d->stopping || s->end_sent))
            return MHD_CONTENT_READER_END_OF_STREAM;
        stream_put(s, ev ? ev : flood_xstrdup(": keep-alive\n\n"));
        s->last_write = time(NULL);
    }
    size_t n = s->len - s->off < max ? s->len - s->off : max;
    memcpy(out, s->buf + s->off, n);
    s->off += n;
    return (ssize_t)n;
}

static void stream_free(void *cls)
{
    struct stream *s = cls;
    free(s->buf);
    free(s);
}

static enum MHD_Result stream_start(struct dash *d, struct MHD_Connection *c)
{
    struct stream *s = flood_xcalloc(1, sizeof(*s));
    s->d = d;
    s->last_write = time(NULL);
    /* a reconnecting page says where it was: the EventSource's Last-Event-ID, or ?from=;
     * with ?inst= another dashboard's (the last step of flood capacity), it starts at 0 */
    const char *last = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Last-Event-ID");
    const char *from = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "from");
    const char *inst = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "inst");
    if (inst && strcmp(inst, d->instance))
        s->next_t = 0;
    else if (from)
        s->next_t = strtoull(from, NULL, 10);
    else if (last)
        s->next_t = strtoull(last, NULL, 10) + 1;
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_read, s, stream_free);
    if (!r) {
        stream_free(s);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

/* ---- requests ---------------------------------------------------------------------------- */

static int loopback(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!ci || !ci->client_addr)
        return 0;
    const struct sockaddr *sa = ci->client_addr;
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(a))
            return 1;
        return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
    }
    return 0;
}

/* 0 when the client may be served; else the status to refuse with, msg set. */
static unsigned access_of(struct dash *d, struct MHD_Connection *c, const char **msg)
{
    if (!d->token) {
        *msg = "dashboard: only loopback clients without --dashboard-token";
        return loopback(c) ? 0 : MHD_HTTP_FORBIDDEN;
    }
    const char *q = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if ((q && !strcmp(q, d->token)) || (h && !strncmp(h, "Bearer ", 7) && !strcmp(h + 7, d->token)))
        return 0;
    *msg = "dashboard: a token is required (Authorization: Bearer TOKEN or ?token=TOKEN)";
    return MHD_HTTP_UNAUTHORIZED;
}

struct body {
    char buf[BODY_MAX + 1];
    size_t len;
    int too_big;
};

static enum MHD_Result serve_report(struct dash *d, struct MHD_Connection *c)
{
    pthread_mutex_lock(&d->lock);
    char *path = d->report_path ? flood_xstrdup(d->report_path) : NULL;
    pthread_mutex_unlock(&d->lock);
    FILE *f = path ? fopen(path, "rb") : NULL;
    free(path);
    if (!f)
        return dash_error(c, MHD_HTTP_NOT_FOUND, "dashboard: no report yet (the run goes on)");
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    char chunk[65536];
    size_t n;
    while (m && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        fwrite(chunk, 1, n, m);
    fclose(f);
    if (!m)
        return dash_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "dashboard: out of memory");
    fclose(m);
    return dash_answer(c, MHD_HTTP_OK, text, "text/html; charset=utf-8");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    (void)version;
    struct dash *d = cls;
    if (!*con_cls) {
        const char *msg;
        unsigned refuse = access_of(d, c, &msg);
        if (refuse)
            return dash_error(c, refuse, msg);
        *con_cls = flood_xcalloc(1, sizeof(struct body));
        return MHD_YES;
    }
    struct body *b = *con_cls;
    if (*upload_size) { /* gather the body, at most BODY_MAX */
        if (b->len + *upload_size > BODY_MAX)
            b->too_big = 1;
        else {
            memcpy(b->buf + b->len, upload, *upload_size);
            b->len += *upload_size;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (b->too_big)
        return dash_error(c, 413, "dashboard: body over 4096 bytes");
    b->buf[b->len] = 0;
    int get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    if (get && !strcmp(url, "/"))
        return dash_answer(c, MHD_HTTP_OK, dash_page(d), "text/html; charset=utf-8");
    if (get && !strcmp(url, "/events"))
        return stream_start(d, c);
    if (get && !strcmp(url, "/report.html"))
        return serve_report(d, c);
    if (!strncmp(url, "/api/", 5))
        return dash_api(d, c, method, url, b->buf, b->len);
    return dash_error(c, MHD_HTTP_NOT_FOUND, "dashboard: not found (try /)");
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
                    enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    free(*con_cls);
    *con_cls = NULL;
}

/* ---- life ------------------------------------------------------------------------------ */

int dash_check_addr(const char *addr, struct flood_err *err)
{
    struct sockaddr_storage ss;
    return addr_parse(addr, "dashboard", 0, &ss, NULL, err);
}

struct dash *dash_start(const struct dash_opts *o, struct flood_err *err)
{
    struct sockaddr_storage ss;
    if (addr_parse(o->addr, "dashboard", 0, &ss, NULL, err))
        return NULL;
    struct dash *d = flood_xcalloc(1, sizeof(*d));
    const char *dir = o->rows_dir && o->rows_dir[0] ? o->rows_dir : getenv("TMPDIR");
    if (!dir || !dir[0])
        dir = "/tmp";
    d->rows_fd = fs_unnamed_file(dir, "dash-rows");
    if (d->rows_fd < 0) {
        flood_err_set(err, FLOOD_EIO, "dashboard: cannot make the rows' file in '%s': %s", dir,
                      strerror(errno));
        free(d);
        return NULL;
    }
    d->token = o->token && o->token[0] ? flood_xstrdup(o->token) : NULL;
    d->title = flood_xstrdup(o->title ? o->title : "flood");
    snprintf(d->instance, sizeof(d->instance), "%lx-%llx", (unsigned long)getpid(),
             (unsigned long long)clock_wall_ns());
    d->steer = o->steer;
    d->own_log = o->steer ? NULL : steer_new();
    d->log = o->steer ? o->steer : d->own_log;
    d->crowd = o->crowd;
    d->in = o->in;
    pthread_mutex_init(&d->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&d->cond, &ca);
    pthread_condattr_destroy(&ca);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION;
    if (ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    errno = 0;
    d->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, d, MHD_OPTION_SOCK_ADDR,
                              (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT,
                              (unsigned)(STREAM_MAX + 16), MHD_OPTION_NOTIFY_COMPLETED, on_done, d,
                              MHD_OPTION_END);
    if (!d->mhd) {
        flood_err_set(err, FLOOD_EIO, "dashboard: cannot listen on '%s': %s", o->addr,
                      errno ? strerror(errno) : "libmicrohttpd refused");
        dash_stop(d);
        return NULL;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(d->mhd, MHD_DAEMON_INFO_LISTEN_FD);
    if (!di || addr_bound(di->listen_fd, d->address, NULL) < 0) {
        flood_err_set(err, FLOOD_EIO, "dashboard: cannot read the bound address");
        dash_stop(d);
        return NULL;
    }
    return d;
}

const char *dash_address(const struct dash *d)
{
    return d->address;
}

void dash_set_start(struct dash *d, int64_t mono0_ns)
{
    pthread_mutex_lock(&d->lock);
    d->mono0 = mono0_ns;
    pthread_mutex_unlock(&d->lock);
}

void dash_set_tqueue(struct dash *d, struct tq_sampler *sm)
{
    if (!d)
        return;
    pthread_mutex_lock(&d->lock);
    d->tqueue = sm;
    pthread_mutex_unlock(&d->lock);
}

static struct tq_sampler *tqueue_of(struct dash *d)
{
    pthread_mutex_lock(&d->lock);
    struct tq_sampler *sm = d->tqueue;
    pthread_mutex_unlock(&d->lock);
    return sm;
}

/* Second t's readings of the target's queue into row (null when none was taken: a gap on
 * the page, never a zero). */
static void add_tqueue(json_t *row, struct tq_sampler *sm, int64_t t)
{
    if (!sm || !row)
        return;
    json_t *q = tq_sampler_second(sm, t);
    json_object_set_new(row, "target_queue", q ? q : json_null());
}

void dash_push(struct dash *d, const struct stats *st)
{
    if (!d)
        return;
    size_t n = st->n_series;
    while (n > 0 && !st->series[n - 1].closed)
        n--;
    if (n <= d->pushed) /* d->pushed: written by this thread only */
        return;
    size_t from = d->pushed;
    struct tq_sampler *sm = tqueue_of(d);
    char **texts = flood_xcalloc(n - from, sizeof(char *));
    for (size_t i = from; i < n; i++) {
        json_t *row = results_series_row(&st->series[i], i, st->probes != NULL,
                                         st->inbound_count != NULL, st->fetch_count != NULL);
        add_tqueue(row, sm, (int64_t)i);
        texts[i - from] = json_dumps(row, JSON_COMPACT);
        json_decref(row);
    }
    pthread_mutex_lock(&d->lock);
    for (size_t i = from; i < n; i++)
        add_row(d, texts[i - from] ? texts[i - from] : flood_xstrdup("{}"));
    d->pushed = n;
    pthread_cond_broadcast(&d->cond);
    pthread_mutex_unlock(&d->lock);
    free(texts);
}

void dash_push_json(struct dash *d, json_t *row)
{
    const json_t *t = json_object_get(row, "t");
    if (json_is_integer(t))
        add_tqueue(row, tqueue_of(d), (int64_t)json_integer_value(t));
    char *text = json_dumps(row, JSON_COMPACT);
    json_decref(row);
    pthread_mutex_lock(&d->lock);
    add_row(d, text ? text : flood_xstrdup("{}"));
    pthread_cond_broadcast(&d->cond);
    pthread_mutex_unlock(&d->lock);
}

void dash_finish(struct dash *d, const char *report_path)
{
    if (!d)
        return;
    pthread_mutex_lock(&d->lock);
    free(d->report_path);
    d->report_path = report_path ? flood_xstrdup(report_path) : NULL;
    d->finished = 1;
    pthread_cond_broadcast(&d->cond);
    pthread_mutex_unlock(&d->lock);
}

void dash_stop(struct dash *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&d->lock);
    d->stopping = 1;
    pthread_cond_broadcast(&d->cond);
    pthread_mutex_unlock(&d->lock);
    if (d->mhd)
        MHD_stop_daemon(d->mhd);
    close(d->rows_fd);
    free(d->row_end);
    pthread_mutex_destroy(&d->lock);
    pthread_cond_destroy(&d->cond);
    free(d->report_path);
    steer_free(d->own_log);
    free(d->token);
    free(d->title);
    free(d);
}
