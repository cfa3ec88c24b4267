/* tests/tools/bench_build.c: what building a body costs next to signing it, on one thread.
 * Builds the lightest Create (plain) and the heaviest (the heavy profile with every part at
 * its most: 4 media, 8 hashtags, emoji, a link, 4 mentions, 5,000 characters), each as text
 * (the hot path) and as a jansson tree dumped, and signs a ~1 KB POST with RSA-2048
 * (draft-cavage). Prints per-operation CPU microseconds and the ratios to one signature:
 *   bench_build [SECONDS]
 * Ratios, never absolute times, are what to compare across machines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "sign/sign.h"
#include "webfinger/activity.h"
#include "flood/send/content_opt.h"
#include "webfinger/content.h"

static double user_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
}

static const struct wf_crowd crowd = {20, 10, "flood%d.test", "https", 0, "0"};

/* CPU microseconds per build of a (tree: through jansson and json_dumps). */
static double per_build(const struct wf_act_args *a, int tree, double seconds, size_t *bytes)
{
    double start = user_s();
    long n = 0;
    struct wf_act_args b = *a;
    do {
        for (int i = 0; i < 64; i++, n++) {
            struct flood_err err = {0, ""};
            b.from.seq = a->from.seq + (uint64_t)n;
            char *s;
            if (tree) {
                json_t *j = wf_act_json(&crowd, &b, &err);
                s = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
                json_decref(j);
            } else {
                s = wf_act_text(&crowd, &b, bytes, &err);
            }
            if (!s) {
                fprintf(stderr, "bench_build: %s\n", err.msg);
                exit(1);
            }
            if (tree && bytes)
                *bytes = strlen(s);
            free(s);
        }
    } while (user_s() - start < seconds);
    return (user_s() - start) * 1e6 / (double)n;
}

static double per_sign(double seconds)
{
    struct flood_err err = {0, ""};
    struct sign_key *key = sign_key_generate(SIGN_KEY_RSA, 2048, &err);
    if (!key) {
        fprintf(stderr, "bench_build: %s\n", err.msg);
        exit(1);
    }
    static char body[1024];
    memset(body, 'x', sizeof(body) - 1);
    struct sign_header h[] = {{"Content-Type", "application/activity+json"}};
    struct sign_msg msg = {"POST", "https", "target.example", "/inbox", h, 1, body, strlen(body)};
    struct sign_params p = {SIGN_CAVAGE, key, "https://flood1.test/users/user1#main-key",
                            1700000000};
    double start = user_s();
    long n = 0;
    do {
        for (int i = 0; i < 8; i++, n++) {
            struct sign_out out;
            p.now++;
            if (sign_request(&p, &msg, &out, &err) < 0) {
                fprintf(stderr, "bench_build: %s\n", err.msg);
                exit(1);
            }
            sign_out_free(&out);
        }
    } while (user_s() - start < seconds);
    sign_key_free(key);
    return (user_s() - start) * 1e6 / (double)n;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    struct wf_content_profile heavy;
    if (wf_content_profile("heavy", &heavy, NULL) < 0 ||
        content_opt_apply(&heavy,
                          "length=5000,mentions=4-4,hashtags=8-8,emoji=100%,links=100%,"
                          "media=100%,media-count=4,cw=100%",
                          NULL) < 0)
        return 1;
    heavy.len_sigma = 0;
    struct wf_post post;
    wf_content_draw(&heavy, 1, 20, 10, 1, &post);
    struct wf_act_args light = {.kind = WF_ACT_CREATE,
                                .from = {3, 7, 5497558138897},
                                .p = {"https://target.test/users/alice", "@alice@target.test"},
                                .published = 1764493200};
    struct wf_act_args full = light;
    full.post = &post;
    size_t lb = 0, hb = 0;
    double sign = per_sign(secs);
    double lt = per_build(&light, 0, secs, &lb), ht = per_build(&full, 0, secs, &hb);
    double lj = per_build(&light, 1, secs, NULL), hj = per_build(&full, 1, secs, NULL);
    printf("sign rsa2048 cavage: %.1f us\n", sign);
    printf("build lightest Create (%zu bytes): text %.2f us (%.4f of a signature), jansson "
           "%.2f us (text %.1fx faster)\n",
           lb, lt, lt / sign, lj, lj / lt);
    printf("build heaviest Create (%zu bytes): text %.2f us (%.4f of a signature), jansson "
           "%.2f us (text %.1fx faster)\n",
           hb, ht, ht / sign, hj, hj / ht);
    printf("heaviest / lightest: %.1fx; aim: building under a tenth of signing: %s\n", ht / lt,
           ht < sign / 10 ? "yes" : "no");
    return 0;
}
