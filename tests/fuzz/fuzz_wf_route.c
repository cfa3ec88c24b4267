/* tests/fuzz/fuzz_wf_route.c: libFuzzer harness for what webfinger/ reads off the network:
 * the Host header, the request path, WebFinger's resource and the Accept header, plus the
 * domain template of wf_crowd_check.
 *
 * Input: lines "HOST\nPATH\nRESOURCE\nACCEPT\nTEMPLATE" (missing lines are empty; the
 * resource keeps embedded NULs, the others stop at one as C strings from libmicrohttpd
 * do). The host line's length picks one of three crowds (https, https:8443, http).
 * Beyond "no crash, no leak", it checks invariants and aborts when one breaks:
 * a routed request names an instance and actor in range and its path is the one the
 * naming functions build; a WebFinger 200 points at an actor URL of the instance asked;
 * every answer is a complete document. */
#include "webfinger/wf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct wf_crowd crowds[3] = {
    {20, 10, "flood%d.test", "https", 0, "0.1.0"},
    {20, 10, "flood%d.test", "https", 8443, "0.1.0"},
    {1000, 1000000, "n-%d.lab.example", "http", 0, "1.0.0"},
};

#define REQUIRE(cond)                                                                              \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__);          \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Field i of the input as a new NUL-terminated string; *len its length before any NUL. */
static char *field(const uint8_t *data, size_t size, int index, size_t *len)
{
    size_t start = 0;
    for (int i = 0; i < index; i++) {
        const uint8_t *nl = start < size ? memchr(data + start, '\n', size - start) : NULL;
        if (!nl) {
            start = size;
            break;
        }
        start = (size_t)(nl - data) + 1;
    }
    const uint8_t *nl = start < size ? memchr(data + start, '\n', size - start) : NULL;
    size_t n = nl ? (size_t)(nl - data) - start : size - start;
    char *s = malloc(n + 1);
    if (!s)
        abort();
    if (n)
        memcpy(s, data + start, n);
    s[n] = '\0';
    *len = n;
    return s;
}

static void check_doc(const struct wf_doc *d)
{
    REQUIRE(d->body != NULL && d->content_type != NULL);
    REQUIRE(strlen(d->body) == d->len);
}

/* Render whatever a routed request names: every one must give a document. */
static void render_route(const struct wf_crowd *c, const struct wf_route *r)
{
    struct wf_doc d = {0};
    struct wf_key_info key = {"-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC "
                              "KEY-----\n",
                              "z6MkfuzzTestKey"};
    switch (r->kind) {
    case WF_ROUTE_HOST_META:
        wf_host_meta(c, r->instance, &d);
        break;
    case WF_ROUTE_NODEINFO_WK:
        wf_nodeinfo_wellknown(c, r->instance, &d);
        break;
    case WF_ROUTE_NODEINFO_20:
    case WF_ROUTE_NODEINFO_21:
        wf_nodeinfo(c, r->instance, r->kind == WF_ROUTE_NODEINFO_20 ? "2.0" : "2.1", &d);
        break;
    case WF_ROUTE_ACTOR:
        wf_actor(c, r->instance, r->actor, &key, &d);
        break;
    case WF_ROUTE_OUTBOX:
    case WF_ROUTE_FOLLOWERS:
    case WF_ROUTE_FOLLOWING:
        wf_collection(c, r->instance, r->actor, r->kind, NULL, 0, 0, &d);
        break;
    default:
        return;
    }
    check_doc(&d);
    REQUIRE(d.status == 200);
    json_t *j = strcmp(d.content_type, WF_CT_XRD) ? json_loads(d.body, 0, NULL) : NULL;
    REQUIRE(j || strcmp(d.content_type, WF_CT_XRD) == 0);
    json_decref(j);
    wf_doc_free(&d);
}

static void fuzz_route(const struct wf_crowd *c, const char *host, const char *path)
{
    struct wf_route r;
    int st = wf_route(c, host, path, &r);
    REQUIRE(st == 0 || st == 404 || st == 421);
    if (st == 421) {
        REQUIRE(wf_instance_of_host(c, host) == 0);
        return;
    }
    REQUIRE(r.instance >= 1 && r.instance <= c->instances);
    if (st != 0) {
        REQUIRE(r.kind == WF_ROUTE_NONE);
        return;
    }
    REQUIRE(r.actor >= -1 && r.actor <= c->actors);
    /* The path is exactly what the naming functions build for this route. */
    char base[WF_URL_MAX], url[WF_URL_MAX];
    wf_base_url(c, r.instance, base);
    if (r.kind == WF_ROUTE_ACTOR) {
        wf_actor_url(c, r.instance, r.actor, url);
        REQUIRE(strlen(url) == strlen(base) + strlen(path));
        REQUIRE(strcmp(url + strlen(base), path) == 0);
    }
    /* The host names that instance, whatever its case, port or trailing dot. */
    char h[WF_HOST_MAX];
    wf_host(c, r.instance, h);
    REQUIRE(strncasecmp(host, h, strlen(h)) == 0);
    render_route(c, &r);
}

static void fuzz_webfinger(const struct wf_crowd *c, int instance, const char *res, size_t res_len)
{
    struct wf_doc d = {0};
    wf_webfinger_n(c, instance, res, res_len, &d);
    check_doc(&d);
    REQUIRE(d.status == 200 || d.status == 400 || d.status == 404);
    json_t *j = json_loads(d.body, 0, NULL);
    REQUIRE(j != NULL);
    if (d.status == 200) {
        REQUIRE(strcmp(d.content_type, WF_CT_JRD) == 0);
        const char *subject = json_string_value(json_object_get(j, "subject"));
        json_t *self = json_array_get(json_object_get(j, "links"), 0);
        const char *href = json_string_value(json_object_get(self, "href"));
        REQUIRE(subject && strncmp(subject, "acct:", 5) == 0 && href);
        char base[WF_URL_MAX];
        wf_base_url(c, instance, base);
        size_t n = strlen(base);
        struct wf_route r;
        REQUIRE(strncmp(href, base, n) == 0);
        REQUIRE(wf_route_path(c, instance, href + n, strlen(href + n), &r) == 0);
        REQUIRE(r.kind == WF_ROUTE_ACTOR);
        /* Asking again by the actor URL gives the same answer. */
        struct wf_doc again = {0};
        wf_webfinger(c, instance, href, &again);
        REQUIRE(again.status == 200 && strcmp(again.body, d.body) == 0);
        wf_doc_free(&again);
    } else {
        REQUIRE(json_is_string(json_object_get(j, "error")));
    }
    json_decref(j);
    wf_doc_free(&d);
}

static void fuzz_template(const char *tpl)
{
    struct wf_crowd c = {7, 3, tpl, "https", 0, "0.1.0"};
    struct flood_err err = {0};
    if (wf_crowd_check(&c, &err) < 0) {
        REQUIRE(err.msg[0] != '\0');
        return;
    }
    /* A template that passes makes names that map back to their index, and only then. */
    for (int i = 1; i <= c.instances; i++) {
        char h[WF_HOST_MAX];
        wf_host(&c, i, h);
        REQUIRE(wf_instance_of_host(&c, h) == i);
    }
    char h[WF_HOST_MAX];
    wf_host(&c, 8, h);
    REQUIRE(wf_instance_of_host(&c, h) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t host_len, path_len, res_len, accept_len, tpl_len;
    char *host = field(data, size, 0, &host_len);
    char *path = field(data, size, 1, &path_len);
    char *res = field(data, size, 2, &res_len);
    char *accept = field(data, size, 3, &accept_len);
    char *tpl = field(data, size, 4, &tpl_len);
    const struct wf_crowd *c = &crowds[host_len % 3];

    fuzz_route(c, host, path);
    int any = wf_instance_of_host_n(c, host, host_len, WF_PORT_ANY);
    int pub = wf_instance_of_host_n(c, host, host_len, WF_PORT_PUBLIC);
    REQUIRE(any >= 0 && any <= c->instances && pub >= 0 && pub <= c->instances);
    REQUIRE(pub == 0 || pub == any);

    int instance = wf_instance_of_host(c, host);
    fuzz_webfinger(c, instance ? instance : 1, res, res_len);

    int a = wf_accepts_activity_json(accept);
    REQUIRE(a == 0 || a == 1);
    REQUIRE(wf_accepts_activity_json(accept) == a);

    if (tpl_len > 0)
        fuzz_template(tpl);

    free(host);
    free(path);
    free(res);
    free(accept);
    free(tpl);
    return 0;
}
