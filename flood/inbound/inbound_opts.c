/* flood/inbound/inbound_opts.c: the inbound side's options (--allow-host, --fault,
 * --log-deliveries, --no-verify, --resolve) as rows (core/opt.h), shared by every command
 * that runs a crowd. */
#include "flood/inbound/inbound_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- options ------------------------------------------------------------------------- */

static int set_allow_host(void *base, const struct opt *row, const char *arg,
                          struct flood_err *err);
static int set_fault(void *base, const struct opt *row, const char *arg, struct flood_err *err);
static int set_resolve(void *base, const struct opt *row, const char *arg, struct flood_err *err);
static int set_population(void *base, const struct opt *row, const char *arg,
                          struct flood_err *err);

#define IO(m) OPT_AT(struct inbound_opts, m)

const struct opt inbound_opt_rows[] = {
    OPT_HEAD("inbound (the crowd's inboxes):", 0),
    {"allow-host", OPT_CUSTOM, "HOST", .set = set_allow_host,
     .help = "fetch senders' keys from HOST (or HOST:PORT); repeatable. Keys on any other host "
             "are refused (401 host_not_allowed)"},
    {"fault", OPT_CUSTOM, "SPEC", .set = set_fault,
     .help = "inject a fault: INSTANCE:KEY=VAL[,KEY=VAL...], repeatable. INSTANCE: all, "
             "flood3, flood3.test or flood3-flood7. KEYs: delay=500ms|2s, jitter=100ms, "
             "status=503, retry-after=30, gone (410), reset, hang, share=20%, "
             "scope=SCOPE[+SCOPE...]: get, inbox, all, nodeinfo, or one kind of GET: "
             "webfinger, actor, key, note, media, link, emoji, avatar, collection "
             "(flood3:delay=2s,scope=media slows media only; NodeInfo stays healthy unless "
             "named); from=30s,until=90s: the fault starts and ends then, counted from the "
             "crowd's start"},
    {"log-deliveries", OPT_FLAG, IO(log_deliveries),
     .help = "one line per inbox delivery on stderr"},
    {"no-verify", OPT_FLAG, IO(no_verify),
     .help = "accept unsigned deliveries (counted as accepted_unverified)"},
    {"resolve", OPT_CUSTOM, "HOST:PORT:ADDR", .set = set_resolve,
     .help = "connect there for key fetches and Accepts (as curl does)"},
    {"population", OPT_CUSTOM, "SPEC", .set = set_population,
     .help = "instance classes, shares of the crowd's instances by a seeded shuffle: "
             "fast=85,slow=10:1s-4s,error=3[:429],hang=1,gone=1[,seed=N]; each class a fault "
             "on every request of its instances; sizes=zipf:S (actors per instance and who "
             "acts by Zipf's law, the total kept), acts=zipf:S|even"},
    {0},
};

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
    if (o->population)
        population_free(o->population);
    free(o->population);
    free(o);
}

struct population *inbound_opts_population(struct inbound_opts *o)
{
    return o ? o->population : NULL;
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

static int set_allow_host(void *base, const struct opt *row, const char *arg, struct flood_err *err)
{
    (void)row;
    if (!valid_host_arg(arg)) {
        flood_err_set(err, FLOOD_EINVAL, "--allow-host: bad host '%s'", arg);
        return -1;
    }
    inbound_opts_allow_host(base, arg);
    return 0;
}

static int set_fault(void *base, const struct opt *row, const char *arg, struct flood_err *err)
{
    (void)row;
    struct inbound_opts *o = base;
    struct fault_rule r;
    if (fault_parse(arg, &r, err) < 0)
        return -1;
    o->faults = flood_xrealloc(o->faults, (o->n_faults + 1) * sizeof(*o->faults));
    o->faults[o->n_faults++] = r;
    return 0;
}

int inbound_opts_add_resolve(struct inbound_opts *o, const char *arg, struct flood_err *err)
{
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

static int set_population(void *base, const struct opt *row, const char *arg, struct flood_err *err)
{
    (void)row;
    struct inbound_opts *o = base;
    if (!o->population)
        o->population = flood_xcalloc(1, sizeof(*o->population));
    return population_parse(arg, o->population, err);
}

static int set_resolve(void *base, const struct opt *row, const char *arg, struct flood_err *err)
{
    (void)row;
    return inbound_opts_add_resolve(base, arg, err);
}

const char *const *inbound_opts_resolve(const struct inbound_opts *o, size_t *n)
{
    *n = o ? o->n_resolve : 0;
    return o ? (const char *const *)o->resolve : NULL;
}

int inbound_opts_set(struct inbound_opts *o, const char *name, const char *arg,
                     struct flood_err *err)
{
    const struct opt *row = opt_find(inbound_opt_rows, name);
    if (!row) {
        flood_err_set(err, FLOOD_EINVAL, "inbound: no option --%s", name);
        return -1;
    }
    return opt_apply(row, o, arg, err);
}
