/* flood/inbound/inbound_opts.c: the inbound side's options (--allow-host, --fault,
 * --log-deliveries, --no-verify, --resolve), shared by every command that runs a crowd. */
#include "flood/inbound/inbound_internal.h"

#include <ctype.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* ---- options ------------------------------------------------------------------------- */

const struct option inbound_options[] = {
    {"allow-host", required_argument, NULL, INBOUND_OPT_ALLOW_HOST},
    {"fault", required_argument, NULL, INBOUND_OPT_FAULT},
    {"log-deliveries", no_argument, NULL, INBOUND_OPT_LOG_DELIVERIES},
    {"no-verify", no_argument, NULL, INBOUND_OPT_NO_VERIFY},
    {"resolve", required_argument, NULL, INBOUND_OPT_RESOLVE},
    {"population", required_argument, NULL, INBOUND_OPT_POPULATION},
    {NULL, 0, NULL, 0},
};

const char inbound_options_help[] =
    "inbound (the crowd's inboxes):\n"
    "  --allow-host HOST      fetch senders' keys from HOST (or HOST:PORT); repeatable.\n"
    "                         Keys on any other host are refused (401 host_not_allowed)\n"
    "  --fault SPEC           inject a fault: INSTANCE:KEY=VAL[,KEY=VAL...], repeatable.\n"
    "                         INSTANCE: all, flood3, flood3.test or flood3-flood7. KEYs:\n"
    "                         delay=500ms|2s, jitter=100ms, status=503, retry-after=30,\n"
    "                         gone (410), reset, hang, share=20%, scope=SCOPE[+SCOPE...]:\n"
    "                         get, inbox, all, nodeinfo, or one kind of GET: webfinger,\n"
    "                         actor, key, note, media, link, emoji, avatar, collection\n"
    "                         (flood3:delay=2s,scope=media slows media only; NodeInfo\n"
    "                         stays healthy unless named); from=30s,until=90s: the fault\n"
    "                         starts and ends then, counted from the crowd's start\n"
    "  --log-deliveries       one line per inbox delivery on stderr\n"
    "  --no-verify            accept unsigned deliveries (counted as accepted_unverified)\n"
    "  --resolve HOST:PORT:ADDR  connect there for key fetches and Accepts (as curl does)\n"
    "  --population SPEC      instance classes, shares of the crowd's instances by a seeded\n"
    "                         shuffle: fast=85,slow=10:1s-4s,error=3[:429],hang=1,gone=1\n"
    "                         [,seed=N]; each class a fault on every request of its instances\n";

struct inbound_opts *inbound_opts_new(void)
{
    return flood_xcalloc(1, sizeof(struct inbound_opts));
}

void inbound_opts_free(struct inbound_opts *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->n_allow; i++)
        free(o->allow[i]);
    for (size_t i = 0; i < o->n_resolve; i++)
        free(o->resolve[i]);
    free(o->allow);
    free(o->resolve);
    free(o->faults);
    free(o->population);
    free(o);
}

static void push(char ***list, size_t *n, const char *s)
{
    *list = flood_xrealloc(*list, (*n + 1) * sizeof(**list));
    (*list)[(*n)++] = flood_xstrdup(s);
}

void inbound_opts_allow_host(struct inbound_opts *o, const char *host)
{
    push(&o->allow, &o->n_allow, host);
}

static int valid_host_arg(const char *s)
{
    if (!*s || strlen(s) >= WF_HOST_MAX)
        return 0;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr(".-_:[]", *p))
            return 0;
    return 1;
}

int inbound_opts_set(struct inbound_opts *o, int id, const char *arg, struct flood_err *err)
{
    switch (id) {
    case INBOUND_OPT_ALLOW_HOST:
        if (!arg || !valid_host_arg(arg)) {
            flood_err_set(err, FLOOD_EINVAL, "--allow-host: bad host '%s'", arg ? arg : "");
            return -1;
        }
        inbound_opts_allow_host(o, arg);
        return 0;
    case INBOUND_OPT_FAULT: {
        struct fault_rule r;
        if (!arg || fault_parse(arg, &r, err) < 0)
            return -1;
        o->faults = flood_xrealloc(o->faults, (o->n_faults + 1) * sizeof(*o->faults));
        o->faults[o->n_faults++] = r;
        return 0;
    }
    case INBOUND_OPT_POPULATION:
        if (!o->population)
            o->population = flood_xcalloc(1, sizeof(*o->population));
        return arg ? population_parse(arg, o->population, err) : -1;
    case INBOUND_OPT_LOG_DELIVERIES:
        o->log_deliveries = 1;
        return 0;
    case INBOUND_OPT_NO_VERIFY:
        o->no_verify = 1;
        return 0;
    case INBOUND_OPT_RESOLVE: {
        /* HOST:PORT:ADDR, the address possibly an IPv6 one in brackets */
        const char *c1 = arg ? strchr(arg, ':') : NULL;
        const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        int ok = c1 && c2 && c1 > arg && c2 > c1 + 1 && c2[1] && c2 - c1 - 1 <= 5;
        for (const char *p = c1 ? c1 + 1 : NULL; ok && p < c2; p++)
            ok = isdigit((unsigned char)*p);
        if (!ok) {
            flood_err_set(err, FLOOD_EINVAL, "--resolve: expected HOST:PORT:ADDR, got '%s'",
                          arg ? arg : "");
            return -1;
        }
        push(&o->resolve, &o->n_resolve, arg);
        return 0;
    }
    default:
        flood_err_set(err, FLOOD_EINVAL, "inbound: unknown option id %d", id);
        return -1;
    }
}
