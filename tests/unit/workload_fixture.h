/* tests/unit/workload_fixture.h: what test_workload.c and test_workload_actors.c share: a
 * crowd of N instances without keys, two target personas, JSON helpers. */
#ifndef FLOOD_TESTS_WORKLOAD_FIXTURE_H
#define FLOOD_TESTS_WORKLOAD_FIXTURE_H

#include <jansson.h>
#include <string.h>

#include "flood/crowd/crowd.h"
#include "flood/send/workload.h"
#include "webfinger/wf.h"

static inline struct crowd crowd_of(int instances, int actors, const char *scheme)
{
    struct crowd c;
    memset(&c, 0, sizeof(c));
    c.opts.instances = instances;
    c.opts.actors = actors;
    c.wf.instances = instances;
    c.wf.actors = actors;
    c.wf.domain_template = "flood%d.test";
    c.wf.scheme = scheme;
    c.wf.version = "0";
    return c;
}

static char *posts_a[] = {"https://target.test/users/alice/statuses/1",
                          "https://target.test/users/alice/statuses/2"};

static struct persona personas[2] = {
    {"acct:alice@target.test", "https://target.test/users/alice",
     "https://target.test/users/alice/inbox", "https://target.test/inbox", posts_a, 2},
    {NULL, "https://target.test/users/bob", "https://target.test/users/bob/inbox", NULL, NULL, 0},
};

static inline json_t *parse(const char *s)
{
    json_error_t e;
    return s ? json_loads(s, 0, &e) : NULL;
}

static inline const char *jstr(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* GET url through the object hook. */
static inline int hook_get(struct workload *w, struct crowd *c, const char *url, struct wf_doc *out)
{
    const char *host = strstr(url, "://") + 3;
    size_t hl = strcspn(host, "/");
    char h[256];
    snprintf(h, sizeof(h), "%.*s", (int)hl, host);
    struct server_req req;
    memset(&req, 0, sizeof(req));
    req.method = "GET";
    req.host = h;
    req.path = host + hl;
    memset(out, 0, sizeof(*out));
    if (wf_route(&c->wf, h, req.path, &req.route) != 0)
        return -1;
    return workload_object_hook(w, &req, out);
}

#endif
