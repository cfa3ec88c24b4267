/* flood/send/replay.h: the shape of a real inbox's traffic, for `flood run --replay FILE`:
 * when each delivery came, from which origin, and (where the file says) of which activity
 * type. Nothing else is kept: no body, no path, no address, no identity from the file ever
 * reaches the wire; the sender builds its own activities at those times, from crowd actors.
 *
 * Two formats, told apart line by line:
 *   - a web server's access log in the combined (or common) log format:
 *       ADDR IDENT USER [10/Oct/2024:13:55:36 +0000] "POST /inbox HTTP/1.1" 202 0 "REF" "UA"
 *     Only POSTs to an inbox path (the path's last segment "inbox", e.g. /inbox,
 *     /users/alice/inbox) are taken; other requests are skipped and counted. The origin is
 *     the host of the "+https://HOST/" in the User-Agent (Mastodon, Misskey, GoToSocial,
 *     Akkoma and Lemmy put their instance's URL there), else the client address. An access
 *     log has no activity type: those deliveries follow --mix.
 *   - a CSV `time,origin,type` (a header line starting with "time" is skipped): time in
 *     seconds (a decimal number, e.g. Unix time with a fraction) or ISO-8601 UTC
 *     (2024-10-10T13:55:36.250Z); origin a host or a URL (its host is taken); type an
 *     ActivityStreams type (Create, Like, Follow, Undo, Announce, Update, Delete,
 *     EmojiReact) or a --mix name (reply, vote, update-actor, ...), or empty (the mix).
 *     Other types follow the mix and are counted as untyped.
 * Blank lines and lines starting with '#' are skipped. A malformed line fails the whole
 * file with "FILE:LINE: what is wrong".
 *
 * Times. Events are sorted by time (stably) and measured from the first. When every time in
 * the file is a whole second (an access log's resolution), the n events of one second are
 * spread evenly over it (k/n), so the per-second counts are kept and no second is one burst.
 *
 * Origins. Numbered by how many events each sent, busiest first (ties by first appearance):
 * origin rank r goes to crowd instance r + 1 while r < instances; the rest share instances
 * by a hash of their name, so the mapping is the same on every run of the same file.
 *
 * Pure: no clock, no network; the file is read whole by replay_load. */
#ifndef FLOOD_REPLAY_H
#define FLOOD_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "sign/err.h"

#define REPLAY_LINE_MAX   8192
#define REPLAY_EVENTS_MAX 50000000u
#define REPLAY_ORIGIN_MAX 255

struct replay_event {
    int64_t t_ns;    /* from the first event */
    uint32_t origin; /* rank: 0 is the busiest origin */
    int8_t op;       /* an enum op_kind, or -1: the mix decides */
};

struct replay {
    struct replay_event *ev; /* sorted by time */
    size_t n;
    char **origins; /* by rank */
    uint64_t *origin_events;
    size_t n_origins;
    uint64_t skipped;  /* access-log lines that are not inbox POSTs */
    uint64_t untyped;  /* CSV rows with a type that is no --mix name (sent by the mix) */
    int whole_seconds; /* every time was a whole second: events spread within seconds */
    int access_log;    /* at least one access-log line */
    double duration_s; /* last event's time, plus one second when whole_seconds */
};

/* Parse text (len bytes; need not be NUL-terminated) named file (for messages) into out
 * (replay_free). 0, or -1 and err "replay: FILE:LINE: ..." (also when nothing is left to
 * replay). */
int replay_parse(const char *text, size_t len, const char *file, struct replay *out,
                 struct flood_err *err) FLOOD_WUR;
/* Read and parse a file. 0, or -1 and err. */
int replay_load(const char *path, struct replay *out, struct flood_err *err) FLOOD_WUR;
void replay_free(struct replay *r);

/* The crowd instance (1..instances) of origin rank r. */
int replay_instance(const struct replay *r, uint32_t rank, int instances);

/* The intended times of the events, scaled: t / speed (speed > 0), a new array of r->n
 * (free()). */
int64_t *replay_times(const struct replay *r, double speed);

/* The most events in any one second of the scaled replay (the peak rate per second). */
double replay_peak_rate(const struct replay *r, double speed);

#endif
