/* flood/check/check_net.c: the runner's requests: signed inbox POSTs (good, or spoiled on
 * purpose), posts as a crowd actor judged "2xx expected", and Mastodon API calls. Blocking libcurl,
 * one easy handle a call: the runner sends one request at a time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "flood/check/check_internal.h"
#include "flood/core/http.h"
#include "flood/core/url.h"

#define STALE_S (24L * 3600) /* outside every server's window (Mastodon's is the widest) */

void check_http_free(struct check_http *h)
{
    free(h->body);
    memset(h, 0, sizeof(*h));
}

int check_net_request(const struct check *c, const char *method, const char *url,
                      const char *const *lines, size_t n_lines, const char *body, size_t len,
                      struct check_http *out, struct flood_err *err)
{
    memset(out, 0, sizeof(*out));
    int post = !strcmp(method, "POST");
    if (!post && strcmp(method, "GET")) {
        flood_err_set(err, FLOOD_EINVAL, "check: %s '%s': only GET and POST", method, url);
        return -1;
    }
    char ua[64];
    snprintf(ua, sizeof(ua), "flood/%s (check)", FLOOD_VERSION);
    struct http_opts o = c->o.http;
    o.max_body = CHECK_BODY_MAX;
    o.max_redirects = 0; /* a redirect is an answer the step judges */
    o.user_agent = ua;
    struct http_req req = {.method = post ? HTTP_POST : HTTP_GET,
                           .url = url,
                           .body = body,
                           .body_len = body ? len : 0,
                           .headers = lines,
                           .n_headers = n_lines,
                           .o = &o,
                           .who = "check"};
    struct http_resp r;
    if (http_fetch(&req, &r, err) < 0)
        return -1;
    out->status = r.status;
    out->body = r.body;
    out->len = r.len;
    r.body = NULL;
    http_resp_free(&r);
    return 0;
}

int check_net_post(struct check *c, const char *inbox, const char *body, const struct sign_key *key,
                   const char *key_id, int dialect, enum check_variant variant,
                   struct check_http *out, struct flood_err *err)
{
    struct url_parts u;
    struct flood_err ue;
    if (url_split(inbox, &u, &ue) < 0) {
        flood_err_set(err, ue.code, "check: bad inbox URL (%s)", ue.msg);
        return -1;
    }
    static const char ct[] = "application/activity+json";
    struct sign_header h[1] = {{"Content-Type", ct}};
    size_t len = strlen(body);
    struct sign_msg msg = {.method = "POST",
                           .scheme = u.scheme,
                           .authority = u.authority,
                           .path = u.target,
                           .headers = h,
                           .n_headers = 1,
                           .body = body,
                           .body_len = len};
    if (variant == CV_BAD_KEY && !c->stranger) {
        c->stranger = sign_key_generate(SIGN_KEY_RSA, 2048, err);
        if (!c->stranger)
            return -1;
    }
    struct sign_params sp = {.dialect = dialect,
                             .key = variant == CV_BAD_KEY ? c->stranger : key,
                             .key_id = key_id,
                             .now = time(NULL) - (variant == CV_STALE ? STALE_S : 0)};
    struct sign_out so = {0};
    if (sign_request(&sp, &msg, &so, err) < 0)
        return -1;
    const char *lines[SIGN_MAX_OUT + 2];
    char *hs = NULL;
    size_t n = 0;
    for (size_t i = 0; i < so.n; i++) {
        const char *l = so.lines[i];
        int is_sig = !strncasecmp(l, "Signature:", 10) || !strncasecmp(l, "Signature-Input:", 16);
        if (variant == CV_UNSIGNED && is_sig)
            continue;
        if (variant == CV_HS2019 && !strncasecmp(l, "Signature:", 10)) {
            /* algorithm is not part of the signing string: the same signature, hs2019
             * declared (draft-cavage-12 section 2.1.3) */
            const char *a = strstr(l, "algorithm=\"rsa-sha256\"");
            if (a) {
                hs = flood_xasprintf("%.*salgorithm=\"hs2019\"%s", (int)(a - l), l,
                                     a + strlen("algorithm=\"rsa-sha256\""));
                l = hs;
            }
        }
        lines[n++] = l;
    }
    lines[n++] = "Content-Type: application/activity+json";
    lines[n++] = "Accept: application/activity+json, application/ld+json";
    /* digest-mismatch: the signed Digest is of body, the bytes sent are body plus a
     * newline: the same activity, so a target that ignores the Digest processes it */
    char *sent = variant == CV_DIGEST ? flood_xasprintf("%s\n", body) : NULL;
    int rc = check_net_request(c, "POST", inbox, lines, n, sent ? sent : body, sent ? len + 1 : len,
                               out, err);
    free(sent);
    free(hs);
    sign_out_free(&so);
    return rc;
}

int check_api(struct check *c, const char *method, const char *path, const char *body, long *status,
              json_t **json, struct flood_err *err)
{
    *json = NULL;
    char *url = flood_xasprintf("%s%s", c->origin, path);
    char *auth = flood_xasprintf("Authorization: Bearer %s", c->o.token);
    const char *lines[3] = {auth, "Accept: application/json", "Content-Type: application/json"};
    struct check_http h;
    int rc = check_net_request(c, method, url, lines, body ? 3 : 2, body, body ? strlen(body) : 0,
                               &h, err);
    free(url);
    free(auth);
    if (rc < 0)
        return -1;
    *status = h.status;
    if (h.body)
        *json = json_loadb(h.body, h.len, 0, NULL);
    check_http_free(&h);
    return 0;
}

/* ---- sending as the crowd ----------------------------------------------------------- */

struct wf_persona_ref check_pref(const struct check *c)
{
    return (struct wf_persona_ref){.actor = c->persona.actor, .mention = c->mention};
}

/* Serve a JSON document at its id, and return it as text (new string). */
char *check_serve_json(struct check *c, const json_t *doc)
{
    char *text = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
    const char *id = json_string_value(json_object_get(doc, "id"));
    if (text && id)
        check_serve_object(c, id, text);
    return text;
}

/* POST text as crowd actor (inst, act) to the persona's inbox, cavage. */
static int post_as(struct check *c, int inst, int act, const char *text, struct check_http *h,
                   struct flood_err *err)
{
    char kid[WF_URL_MAX];
    crowd_key_id(c->crowd, inst, act, kid);
    return check_net_post(c, c->persona.inbox, text, crowd_key(c->crowd, inst, act), kid,
                          SIGN_CAVAGE, CV_GOOD, h, err);
}

/* Send text and judge "a 2xx is expected". */
void check_send_expect_2xx(struct check *c, struct check_result *r, int inst, int act,
                           const char *text, const char *what)
{
    struct check_http h;
    struct flood_err e = {0};
    if (post_as(c, inst, act, text, &h, &e) < 0) {
        check_set(r, CHECK_FAIL, "2xx", e.msg, NULL);
        return;
    }
    char *got = check_answer_text(&h);
    if (check_is_2xx(h.status))
        check_set(r, CHECK_PASS, NULL, NULL, "%s: %s", what, got);
    else
        check_set(r, CHECK_FAIL, "2xx", got, NULL);
    free(got);
    check_http_free(&h);
}
