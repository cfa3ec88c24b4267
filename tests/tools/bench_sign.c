/* tests/tools/bench_sign.c: signing throughput of sign_request on one thread.
 * Signs a realistic ~1 KB ActivityPub POST (Digest included) for SECONDS with RSA-2048,
 * then with Ed25519, in the draft-cavage dialect, and prints signs per second:
 *   bench_sign [SECONDS] [cavage|rfc9421]
 *   -> "rsa2048 cavage 1234.5 signs/s (...)" and "ed25519 cavage 23456.7 signs/s (...)"
 * The rate is per second of user CPU time, as `openssl speed` counts it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "sign/sign.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* User CPU seconds of this process: what `openssl speed` divides by (without -elapsed), so
 * the two rates compare on a loaded machine too. */
static double user_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
}

static char body[2048];

static int bench(const char *name, enum sign_key_type type, enum sign_dialect dialect,
                 double seconds)
{
    struct flood_err err = {0, ""};
    struct sign_key *key = sign_key_generate(type, 2048, &err);
    struct sign_header h[] = {{"Content-Type", "application/activity+json"},
                              {"User-Agent", "flood/bench"}};
    struct sign_msg msg = {"POST", "https", "target.example", "/users/alice/inbox", h,
                           2,      body,    strlen(body)};
    struct sign_params p = {dialect, key, "https://flood1.test/users/user1#main-key", 1700000000};
    double start, end, ustart;
    long n = 0;
    if (!key) {
        fprintf(stderr, "bench_sign: %s\n", err.msg);
        return 1;
    }
    start = now_s();
    ustart = user_s();
    end = start + seconds;
    do {
        /* check the clock every 16 signatures: cheap against one signature */
        for (int i = 0; i < 16; i++) {
            struct sign_out out;
            p.now++;
            if (sign_request(&p, &msg, &out, &err) < 0) {
                fprintf(stderr, "bench_sign: %s\n", err.msg);
                sign_key_free(key);
                return 1;
            }
            sign_out_free(&out);
            n++;
        }
    } while (now_s() < end);
    printf("%s %s %.1f signs/s (user CPU time; %.1f per wall-clock second)\n", name,
           dialect == SIGN_CAVAGE ? "cavage" : "rfc9421", (double)n / (user_s() - ustart),
           (double)n / (now_s() - start));
    fflush(stdout);
    /* Like for like with `openssl speed`, which signs 20 bytes: sign_data_b64 over 20 bytes
     * measures what sign/ adds around the EVP call (context, base64, allocation). */
    start = now_s();
    ustart = user_s();
    end = start + seconds / 2;
    n = 0;
    do {
        for (int i = 0; i < 16; i++) {
            char *b64 = sign_data_b64(key, NULL, body, 20, &err);
            if (!b64) {
                fprintf(stderr, "bench_sign: %s\n", err.msg);
                sign_key_free(key);
                return 1;
            }
            free(b64);
            n++;
        }
    } while (now_s() < end);
    printf("%s raw20 %.1f signs/s (user CPU time; 20-byte message, as openssl speed)\n", name,
           (double)n / (user_s() - ustart));
    fflush(stdout);
    sign_key_free(key);
    return 0;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 5;
    enum sign_dialect dialect =
        argc > 2 && strcmp(argv[2], "rfc9421") == 0 ? SIGN_RFC9421 : SIGN_CAVAGE;
    int len;
    if (seconds <= 0)
        seconds = 5;
    /* A Create(Note) mentioning a persona, about 1 KB as Mastodon sends them. */
    len = snprintf(body, sizeof(body),
                   "{\"@context\":[\"https://www.w3.org/ns/activitystreams\","
                   "\"https://w3id.org/security/v1\"],\"id\":\"https://flood1.test/users/user1/"
                   "statuses/1234567890/activity\",\"type\":\"Create\",\"actor\":\"https://"
                   "flood1.test/users/user1\",\"published\":\"2024-05-01T12:00:00Z\",\"to\":["
                   "\"https://www.w3.org/ns/activitystreams#Public\"],\"cc\":[\"https://"
                   "flood1.test/users/user1/followers\",\"https://target.example/users/alice\"],"
                   "\"object\":{\"id\":\"https://flood1.test/users/user1/statuses/1234567890\","
                   "\"type\":\"Note\",\"attributedTo\":\"https://flood1.test/users/user1\","
                   "\"published\":\"2024-05-01T12:00:00Z\",\"to\":[\"https://www.w3.org/ns/"
                   "activitystreams#Public\"],\"cc\":[\"https://flood1.test/users/user1/"
                   "followers\",\"https://target.example/users/alice\"],\"content\":\"<p><span "
                   "class=\\\"h-card\\\"><a href=\\\"https://target.example/@alice\\\" "
                   "class=\\\"u-url mention\\\">@alice</a></span> Lorem ipsum dolor sit amet, "
                   "consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et "
                   "dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation "
                   "ullamco laboris nisi ut aliquip ex ea commodo consequat.</p>\",\"tag\":[{"
                   "\"type\":\"Mention\",\"href\":\"https://target.example/users/alice\","
                   "\"name\":\"@alice@target.example\"}],\"url\":\"https://flood1.test/@user1/"
                   "1234567890\",\"sensitive\":false}}");
    if (len < 900 || len >= (int)sizeof(body))
        return 1;
    if (bench("rsa2048", SIGN_KEY_RSA, dialect, seconds) ||
        bench("ed25519", SIGN_KEY_ED25519, dialect, seconds))
        return 1;
    return 0;
}
