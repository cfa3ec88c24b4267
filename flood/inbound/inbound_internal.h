/* flood/inbound/inbound_internal.h: what inbound.c and inbound_opts.c share and nothing
 * else sees: the parsed inbound options. */
#ifndef FLOOD_INBOUND_INTERNAL_H
#define FLOOD_INBOUND_INTERNAL_H

#include <stddef.h>

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

#endif
