/* flood/cmd/run_opts.h: the options of `flood run` (and of the commands that run like it):
 * their rows (core/opt.h), the checks that need no network, and their record in run.json's
 * config. */
#ifndef FLOOD_RUN_OPTS_H
#define FLOOD_RUN_OPTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "flood/core/opt.h"
#include "flood/crowd/crowd.h"
#include "flood/inbound/inbound.h"
#include "flood/report/expect.h"
#include "flood/report/users.h"
#include "flood/send/presign.h"
#include "flood/send/replay.h"
#include "flood/send/sched.h"
#include "flood/send/sender.h"
#include "flood/send/signer.h"
#include "flood/send/workload.h"
#include "webfinger/content.h"

/* Everything flood run was told. Strings point into argv unless said; the lists are owned
 * (run_opts_free). */
struct run_opts {
    const char *cmd;         /* the command whose options these are, for messages ("run") */
    unsigned mask;           /* its OPT_CMD_* (OPT_CMD_RUN; flood capacity checks its steps' too) */
    struct inbound_opts *io; /* the inbound side's options, which keep --resolve */
    double rate, duration_s, lookahead_s;
    double quantum_s;    /* --dispatch-quantum */
    long accept_wait_ms; /* -1: as --grace */
    const char *stages;
    enum sched_arrival arrival;
    const char *mix_s;
    unsigned mix[OP__COUNT];
    const char *content_s, *content_opt_s; /* --content, --content-opt */
    struct wf_content_profile content;     /* settled from them */
    unsigned reply_depth, unseen_pct, undo_pct, rotate_pct;
    int refollow; /* --refollow: WORKLOAD_REFOLLOW_REPEAT or _UNDO_FIRST */
    uint64_t seed;
    int signers;
    const char *presign_s;       /* --presign T|all, as given (NULL: off) */
    double presign_window;       /* its window (PRESIGN_ALL or seconds) */
    uint64_t presign_memory;     /* --presign-memory */
    struct presign_plan presign; /* settled from the schedule (presign.window_s 0: off) */
    const char *sign_s;
    const char *bad_s;
    struct signer_opts so;
    struct sender_opts sndo;
    const char *source_ips;
    const char *out;
    const char *inbox;
    int personal_inbox, target_http, no_check, quiet;
    const char *metrics;
    double metrics_hold_s;
    const char *dashboard, *dashboard_token; /* --dashboard, --dashboard-token */
    double dashboard_hold_s;
    char **personas;
    size_t n_personas;
    char **like_objects;
    size_t n_like;
    struct users_model users; /* --users-model: the sent rate in active users */
    char **target_queue;      /* --target-queue specs, as given */
    size_t n_target_queue;
    json_t *inbound_args;
    const char *shard_s, *start_at_s; /* --shard K/N, --start-at T */
    uint64_t shard_k, shard_n;        /* shard_n 0: not sharded */
    int64_t start_at;                 /* unix seconds, 0: start now */
    const char *log_sends;            /* --log-sends FILE */
    struct expect *expect;            /* --expect, in order (owned) */
    size_t n_expect;
    json_t *preset_j; /* --preset: presets_json() (owned), or NULL */
    /* --replay FILE [--replay-speed X]: the pattern, its scaled times and per activity the
     * instance and operation for the workload (all owned, made by run_opts_settle) */
    const char *replay_path;
    double replay_speed;
    struct replay replay;
    int64_t *replay_t;
    uint16_t *pin_instance;
    int8_t *pin_op;
};

/* ro with every default in force (a new, empty persona list; free with run_opts_free). */
void run_opts_init(struct run_opts *ro);
void run_opts_free(struct run_opts *ro);
/* Parse argv (argv[0] = the command, named in messages) into ro, co and io (kept in ro->io:
 * --resolve lives there). 0, 1 after
 * --help (printed), 2 on a usage error (printed as "flood: CMD: ..."). */
int run_opts_parse(int argc, char **argv, struct run_opts *ro, struct crowd_opts *co,
                   struct inbound_opts *io);
/* The checks that need no network, and what follows from them: the schedule into sc, the
 * default mix, the crowd options, the results folder (outdir, when --out is not given).
 * 0, or -1 with the usage error printed. */
int run_opts_settle(struct run_opts *ro, struct crowd_opts *co, struct sched *sc, char *outdir,
                    size_t outdir_size);
/* run.json's "config": every option in force (a new reference). */
json_t *run_opts_config_json(const struct run_opts *ro, const struct crowd_opts *co,
                             const struct sched *sc);
/* flood run's own rows (its crowd and inbound options are the crowd's and inbound side's). */
extern const struct opt run_opt_rows[];

#endif
