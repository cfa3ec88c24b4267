/* webfinger/crowd.c: naming in the crowd. Host names from the domain template, base and
 * actor URLs, and the reverse: which instance a Host header names, which actor a username. */
#include "webfinger/wf.h"

#include <stdio.h>
#include <string.h>

#include "webfinger/sput.h"

#define WF_COUNT_MAX     1000000 /* instances and actors per instance */
#define WF_DNS_NAME_MAX  253     /* RFC 1035 2.3.4, without the trailing dot */
#define WF_DNS_LABEL_MAX 63

static char lower(char ch)
{
    return (ch >= 'A' && ch <= 'Z') ? (char)(ch - 'A' + 'a') : ch;
}

static int is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

/* Case-insensitive comparison of n bytes (ASCII only, no locale). */
static int same_ci(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (lower(a[i]) != lower(b[i]))
            return 0;
    return 1;
}

/* Parse len decimal digits, no sign, no leading zero, value 1..max. 0 when not. */
static long parse_index(const char *s, size_t len, long max)
{
    if (len == 0 || len > 7 || s[0] == '0')
        return 0;
    long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (!is_digit(s[i]))
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    return v <= max ? v : 0;
}

/* Split the template around its "%d". 0, or -1 when it has none. */
static int split_template(const char *tpl, size_t *pre_len, const char **suffix)
{
    /* a byte loop: the template is a host name's length, and every URL of every activity
     * comes here, where strstr's setup cost more than the scan */
    for (const char *d = tpl; d && *d; d++)
        if (d[0] == '%' && d[1] == 'd') {
            *pre_len = (size_t)(d - tpl);
            *suffix = d + 2;
            return 0;
        }
    return -1;
}

static int default_port(const struct wf_crowd *c)
{
    return (c->scheme && strcmp(c->scheme, "http") == 0) ? 80 : 443;
}

void wf_host(const struct wf_crowd *c, int instance, char out[WF_HOST_MAX])
{
    size_t pre_len, n = 0;
    const char *suffix;
    out[0] = '\0';
    if (split_template(c->domain_template, &pre_len, &suffix) < 0) {
        wf_sput_str(out, WF_HOST_MAX, &n, c->domain_template ? c->domain_template : "");
        return;
    }
    wf_sput(out, WF_HOST_MAX, &n, c->domain_template, pre_len);
    wf_sput_i(out, WF_HOST_MAX, &n, instance);
    wf_sput_str(out, WF_HOST_MAX, &n, suffix);
}

/* The port is left out when it is the scheme's default: https://h:443/x and https://h/x
 * are one origin, and Lemmy refuses a port in the domain. */
void wf_base_url(const struct wf_crowd *c, int instance, char out[WF_URL_MAX])
{
    char host[WF_HOST_MAX];
    size_t n = 0;
    wf_host(c, instance, host);
    out[0] = '\0';
    wf_sput_str(out, WF_URL_MAX, &n, c->scheme ? c->scheme : "https");
    wf_sput(out, WF_URL_MAX, &n, "://", 3);
    wf_sput_str(out, WF_URL_MAX, &n, host);
    if (c->public_port > 0 && c->public_port != default_port(c)) {
        wf_sput(out, WF_URL_MAX, &n, ":", 1);
        wf_sput_i(out, WF_URL_MAX, &n, c->public_port);
    }
}

void wf_actor_name(int actor, char out[WF_NAME_MAX])
{
    size_t n = 0;
    out[0] = '\0';
    wf_sput(out, WF_NAME_MAX, &n, "user", 4);
    wf_sput_i(out, WF_NAME_MAX, &n, actor);
}

void wf_actor_url(const struct wf_crowd *c, int instance, int actor, char out[WF_URL_MAX])
{
    /* At most 5 + 3 + 253 + 6 bytes of base: the path always fits. */
    wf_base_url(c, instance, out);
    size_t n = strlen(out);
    if (actor == 0) {
        wf_sput(out, WF_URL_MAX, &n, "/actor", 6);
    } else {
        wf_sput(out, WF_URL_MAX, &n, "/users/user", 11);
        wf_sput_i(out, WF_URL_MAX, &n, actor);
    }
}

int wf_actor_of_name(const struct wf_crowd *c, const char *name, size_t len)
{
    if (len < 5 || memcmp(name, "user", 4) != 0)
        return 0;
    return (int)parse_index(name + 4, len - 4, c->actors);
}

/* ":PORT" after a host: 1..5 digits, no leading zero, 1..65535. The port, or 0. */
static int parse_port(const char *s, size_t len)
{
    if (len == 0 || len > 5 || s[0] == '0')
        return 0;
    long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (!is_digit(s[i]))
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    return v <= 65535 ? (int)v : 0;
}

/* A trailing dot (an absolute DNS name, "flood1.test.") is tolerated: it names the same
 * host, and curl sends the Host header exactly as the URL spells it. */
int wf_instance_of_host_n(const struct wf_crowd *c, const char *host, size_t len,
                          enum wf_port_rule rule)
{
    size_t pre_len;
    const char *suffix;
    if (!c || !host || len == 0 || split_template(c->domain_template, &pre_len, &suffix) < 0)
        return 0;
    const char *colon = memchr(host, ':', len);
    size_t name_len = colon ? (size_t)(colon - host) : len;
    if (colon) {
        int port = parse_port(colon + 1, len - name_len - 1);
        if (port == 0)
            return 0;
        if (rule == WF_PORT_PUBLIC &&
            port != (c->public_port > 0 ? c->public_port : default_port(c)))
            return 0;
    }
    if (name_len > 0 && host[name_len - 1] == '.')
        name_len--;
    size_t suf_len = strlen(suffix);
    if (name_len >= WF_HOST_MAX || name_len <= pre_len + suf_len)
        return 0;
    if (!same_ci(host, c->domain_template, pre_len) ||
        !same_ci(host + name_len - suf_len, suffix, suf_len))
        return 0;
    return (int)parse_index(host + pre_len, name_len - pre_len - suf_len, c->instances);
}

int wf_instance_of_host(const struct wf_crowd *c, const char *host)
{
    return host ? wf_instance_of_host_n(c, host, strlen(host), WF_PORT_ANY) : 0;
}

/* RFC 1123 host name: dot-separated labels of 1..63 letters, digits and hyphens, no label
 * starting or ending with a hyphen, 253 bytes at most. The last label must not be all
 * digits, or the "host" would be an IPv4 address. 0, or -1 and err. */
static int check_host_name(const char *h, struct flood_err *err)
{
    size_t len = strlen(h);
    if (len == 0 || len > WF_DNS_NAME_MAX) {
        flood_err_set(err, FLOOD_EINVAL, "webfinger: host name '%s' must be 1..%d bytes", h,
                      WF_DNS_NAME_MAX);
        return -1;
    }
    const char *label = h;
    int all_digits = 1;
    for (const char *p = h;; p++) {
        if (*p == '.' || *p == '\0') {
            size_t n = (size_t)(p - label);
            if (n == 0 || n > WF_DNS_LABEL_MAX || label[0] == '-' || p[-1] == '-') {
                flood_err_set(err, FLOOD_EINVAL,
                              "webfinger: host name '%s' has a bad label (1..63 bytes, no "
                              "hyphen at either end)",
                              h);
                return -1;
            }
            if (*p == '\0')
                break;
            label = p + 1;
            all_digits = 1;
            continue;
        }
        if (!is_digit(*p))
            all_digits = 0;
    }
    if (all_digits) {
        flood_err_set(err, FLOOD_EINVAL,
                      "webfinger: host name '%s' ends in a numeric label (an address, not a "
                      "name)",
                      h);
        return -1;
    }
    return 0;
}

/* MAJOR.MINOR.PATCH without leading zeros, then optional -pre and +build of
 * [0-9A-Za-z.-] (semver.org 2.0.0, loosely): Misskey parses software.version as semver. */
static int is_semver(const char *v)
{
    for (int part = 0; part < 3; part++) {
        if (!is_digit(*v) || (v[0] == '0' && is_digit(v[1])))
            return 0;
        while (is_digit(*v))
            v++;
        if (part < 2 && *v++ != '.')
            return 0;
    }
    if (*v == '-' || *v == '+') {
        v++;
        if (*v == '\0')
            return 0;
        for (; *v; v++)
            if (!(is_digit(*v) || (*v >= 'a' && *v <= 'z') || (*v >= 'A' && *v <= 'Z') ||
                  *v == '.' || *v == '-' || *v == '+'))
                return 0;
    }
    return *v == '\0';
}

int wf_crowd_check(const struct wf_crowd *c, struct flood_err *err)
{
    if (!c) {
        flood_err_set(err, FLOOD_EINVAL, "webfinger: no crowd");
        return -1;
    }
    if (c->instances < 1 || c->instances > WF_COUNT_MAX) {
        flood_err_set(err, FLOOD_EINVAL, "webfinger: instances '%d' must be 1..%d", c->instances,
                      WF_COUNT_MAX);
        return -1;
    }
    if (c->actors < 1 || c->actors > WF_COUNT_MAX) {
        flood_err_set(err, FLOOD_EINVAL, "webfinger: actors '%d' must be 1..%d", c->actors,
                      WF_COUNT_MAX);
        return -1;
    }
    if (!c->scheme || (strcmp(c->scheme, "http") != 0 && strcmp(c->scheme, "https") != 0)) {
        flood_err_set(err, FLOOD_EINVAL, "webfinger: scheme '%s' must be http or https",
                      c->scheme ? c->scheme : "(none)");
        return -1;
    }
    if (c->public_port < 0 || c->public_port > 65535) {
        flood_err_set(err, FLOOD_EINVAL, "webfinger: public port '%d' must be 0..65535",
                      c->public_port);
        return -1;
    }
    if (!c->version || !is_semver(c->version)) {
        flood_err_set(err, FLOOD_EINVAL, "webfinger: version '%s' is not semver (1.2.3)",
                      c->version ? c->version : "(none)");
        return -1;
    }
    const char *tpl = c->domain_template;
    if (!tpl) {
        flood_err_set(err, FLOOD_EINVAL, "webfinger: no domain template");
        return -1;
    }
    int conversions = 0;
    for (const char *p = tpl; *p; p++) {
        if (*p == '%') {
            if (p[1] != 'd') {
                flood_err_set(err, FLOOD_EINVAL,
                              "webfinger: domain template '%s' may hold only one %%d", tpl);
                return -1;
            }
            conversions++;
            p++;
        } else if (!(is_digit(*p) || (*p >= 'a' && *p <= 'z') || *p == '-' || *p == '.')) {
            flood_err_set(err, FLOOD_EINVAL,
                          "webfinger: domain template '%s' has '%c' (use a-z, 0-9, '-', '.')", tpl,
                          *p);
            return -1;
        }
    }
    if (conversions != 1) {
        flood_err_set(err, FLOOD_EINVAL,
                      "webfinger: domain template '%s' needs exactly one %%d (has %d)", tpl,
                      conversions);
        return -1;
    }
    /* The first and the last instance bound every name's length; the shape is common. */
    char host[WF_HOST_MAX];
    if (strlen(tpl) + 5 >= WF_HOST_MAX) {
        flood_err_set(err, FLOOD_EINVAL, "webfinger: domain template '%s' is too long", tpl);
        return -1;
    }
    wf_host(c, 1, host);
    if (check_host_name(host, err) < 0)
        return -1;
    wf_host(c, c->instances, host);
    if (check_host_name(host, err) < 0)
        return -1;
    return 0;
}
