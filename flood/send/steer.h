/* flood/send/steer.h: steering a run while it sends (flood run --dashboard): a small queue
 * of commands from any thread (the dashboard's) to the sender's event loop, which alone
 * changes the schedule, and the log of every change applied, with its time, for run.json
 * and the charts. Commands wake the loop through an eventfd; the poster may wait until its
 * command was applied. The state the loop publishes (rate, paused, sending) is read under
 * the same lock. Nothing here touches the schedule itself (sender_steer.c does, on the
 * loop's thread). */
#ifndef FLOOD_STEER_H
#define FLOOD_STEER_H

#include <stddef.h>
#include <stdint.h>

#define STEER_QUEUE_MAX 64
#define STEER_LOG_MAX   4096 /* changes recorded at most; later ones are counted, not kept */
#define STEER_TEXT_MAX  600

enum steer_kind { STEER_RATE = 0, STEER_PAUSE, STEER_RESUME, STEER_STOP, STEER_FAULT };

/* One command, and once applied one change of the log. */
struct steer_change {
    double t_s; /* seconds from the run's start (set when applied) */
    enum steer_kind kind;
    double rate, ramp_s;       /* STEER_RATE */
    int on;                    /* STEER_FAULT: switched on (1) or off (0) */
    char text[STEER_TEXT_MAX]; /* STEER_FAULT: the rule "SEL:SPEC" */
};

/* "rate", "pause", "resume", "stop", "fault" */
const char *steer_kind_name(enum steer_kind k);

/* What the loop last published. */
struct steer_state {
    int sending;  /* the loop runs the schedule (0 before and after) */
    int finished; /* the sending is over */
    int paused;
    double rate; /* per second, in force now */
    double t_s;  /* when published */
};

struct steer;

/* A new steering channel (never NULL; aborts when no eventfd can be made). steer_free. */
struct steer *steer_new(void);
void steer_free(struct steer *st);

/* Any thread: queue cmd for the loop. Returns its ticket (> 0), or 0 when the queue is
 * full or the loop is not sending (nothing would apply it). */
uint64_t steer_post(struct steer *st, const struct steer_change *cmd);
/* Wait up to timeout_ms until the ticket's command was applied: 1, else 0. */
int steer_wait(struct steer *st, uint64_t ticket, long timeout_ms);

/* The loop's side: the fd its event watches; take up to max commands (returns how many,
 * *last the last one's ticket); mark tickets up to last applied. */
int steer_fd(const struct steer *st);
size_t steer_take(struct steer *st, struct steer_change *out, size_t max, uint64_t *last);
void steer_applied(struct steer *st, uint64_t last);
void steer_publish(struct steer *st, const struct steer_state *s);
void steer_state(struct steer *st, struct steer_state *out);

/* Append a change to the log (any thread). */
void steer_record(struct steer *st, const struct steer_change *c);
/* A copy of the log, in time order (a new array the caller frees; NULL when empty). */
struct steer_change *steer_log(struct steer *st, size_t *n);
/* Changes recorded so far (the log's length, dropped ones included). */
uint64_t steer_count(struct steer *st);

/* The replay: set by the loop at the end: the steered curve as --stages (empty when the
 * run was not steered), and where it starts (0 unless its first stages were dropped). */
void steer_set_stages(struct steer *st, const char *stages, double from_s);
/* Copy the replay's stages into buf (empty when none); returns from_s. */
double steer_stages(struct steer *st, char *buf, size_t size);

#endif
