/* flood/inbound/inbound_internal.h: what inbound.c, inbound_fault.c and inbound_opts.c share
 * and nothing else sees: the parsed inbound options and the inbound side's state. */
#ifndef FLOOD_INBOUND_INTERNAL_H
#define FLOOD_INBOUND_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "flood/crowd/fault.h"
#include "flood/crowd/population.h"
#include "flood/inbound/inbound.h"

struct inbound_opts {
    char **allow;
    size_t n_allow;
    struct fault_rule *faults;
    size_t n_faults;
    char **resolve;
    size_t n_resolve;
    int log_deliveries, no_verify;
    struct population *population; /* --population, NULL without */
};

#define INBOUND_N_TYPES 15 /* the activity types counted by name (inbound.c's type_names) */

/* Why an inbox POST was refused (inbound.c's reason_names). */
enum reason {
    R_MISSING,
    R_SYNTAX,
    R_ALGORITHM,
    R_NOT_COVERED,
    R_DIGEST,
    R_DATE,
    R_MISMATCH,
    R_KEY,
    R_KEY_FETCH,
    R_HOST_NOT_ALLOWED,
    R_ACTOR_MISMATCH,
    R_BAD_JSON,
    R_TOO_DEEP,
    R_NOT_ACTIVITY,
    R_CONTENT_TYPE,
    R_EMPTY_BODY,
    R__COUNT
};

struct dupset {
    uint64_t *slots[2]; /* [cur], [old] */
    size_t count;       /* in the current generation */
    int cur;
};

/* The inbound side: the crowd's inboxes, their faults and their counts (inbound_new). */
struct inbound {
    struct crowd *crowd;
    struct probes *probes;
    _Atomic(struct workload *) workload;
    struct keycache *kc;
    struct deliver *dl;
    struct fault_rule *faults; /* the --fault rules, then rules switched on at run time */
    size_t n_cli_faults;       /* how many came from --fault */
    _Atomic size_t n_faults;   /* published after the rule is written (inbound_fault_switch) */
    _Atomic unsigned char *fault_on; /* per rule: 0 switched off */
    int log_deliveries, no_verify;
    uint64_t t0_us;            /* the crowd's start: the faults' from= and until= count from it */
    struct attempts *attempts; /* inbox POSTs to faulted instances: the retry curve */
    struct population pop;     /* --population (pop.class_of NULL without) */
    struct fanout *fanout;     /* each Create's deliveries: the target's fan-out */

    _Atomic uint64_t deliveries[INBOUND_N_TYPES + 1], rejected[R__COUNT];
    _Atomic uint64_t accepted, accepted_unverified, accepts, rejects, follows_received, unfollows,
        duplicates, accept_no_inbox, answers_unknown;
    _Atomic uint64_t faulted_delay, faulted_status, faulted_reset, faulted_hang;
    _Atomic int inboxes_closed;           /* inbound_close_inboxes: the run is over */
    _Atomic uint64_t refused_after_close; /* inbox POSTs cut after it */

    pthread_mutex_t lock; /* the histogram, the duplicate set, the live line */
    struct hist *lag;
    struct hist *lag_split[2]; /* [0] instances without an inbox fault, [1] with one */
    struct dupset dups;
    uint64_t live_last_total, live_last_us;
};

/* 1 when a --fault rule or the instance's class covers the inbox POSTs of instance inst
 * (delivery lag is split by it: deliveries to healthy instances against faulted ones). */
int inbound_inbox_faulted(struct inbound *in, int inst);

/* When the windowed inbox faults end (the latest until=, ms from the crowd's start), 0 when
 * none does. */
int64_t inbound_faults_end_ms(struct inbound *in);

#endif
