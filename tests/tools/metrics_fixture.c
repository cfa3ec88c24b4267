/* tests/tools/metrics_fixture.c: flood's /metrics endpoint over a synthetic source with
 * figures fixed here, so tests/integration/metrics.sh can scrape it with real clients
 * (curl, promtool) and compare with values worked out by hand.
 *
 *   metrics_fixture [--listen ADDR:PORT] [--empty] [--exit-after SEC]
 *
 * Prints "port N" once listening; stops on SIGTERM/SIGINT or after --exit-after (default
 * 60 s). --empty makes the source report nothing (scrapes answer 503). Exit 1 when the
 * endpoint cannot start (the error on stderr), 2 on a usage error.
 *
 * The figures: operation create scheduled 10, sent 9, shed 1, completed 8, unfinished 1;
 * outcomes 202 x5, 429 x2, timeout x1; corrected latency samples 0.3 ms x3, 2 ms x2, 70 ms x1,
 * 1.5 s x2; service time the same minus 0.1 ms each; in flight 1; inbound deliveries
 * Create 4, Accept 1, rejected digest 2; probes: 1 Accept, Follow-to-Accept 240 ms x1. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flood/report/metrics.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static int fixture_snapshot(void *ctx, struct metrics_snapshot *s)
{
    if (*(int *)ctx)
        return -1;
    s->have_sender = 1;
    struct stats_counts *c = &s->op[OP_CREATE];
    c->scheduled = 10;
    c->sent = 9;
    c->shed = 1;
    c->completed = 8;
    c->unfinished = 1;
    c->outcomes[OUT_202] = 5;
    c->outcomes[OUT_429] = 2;
    c->outcomes[OUT_TIMEOUT] = 1;
    static const struct {
        uint64_t us, n;
    } lat[] = {{300, 3}, {2000, 2}, {70000, 1}, {1500000, 2}};
    for (size_t i = 0; i < sizeof(lat) / sizeof(lat[0]); i++) {
        hist_record_n(&s->latency[OP_CREATE], lat[i].us, lat[i].n);
        hist_record_n(&s->service[OP_CREATE], lat[i].us - 100, lat[i].n);
    }
    s->in_flight = 1;
    s->inbound = json_pack("{s:{s:i, s:i}, s:{s:i}}", "deliveries", "Create", 4, "Accept", 1,
                           "rejected", "digest", 2);
    s->have_probes = 1;
    s->probe_accepts = 1;
    hist_record(&s->follow_to_accept, 240000);
    return s->inbound ? 0 : -1;
}

int main(int argc, char **argv)
{
    const char *listen = "127.0.0.1:0";
    int empty = 0;
    long exit_after = 60;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--listen") && i + 1 < argc)
            listen = argv[++i];
        else if (!strcmp(argv[i], "--empty"))
            empty = 1;
        else if (!strcmp(argv[i], "--exit-after") && i + 1 < argc)
            exit_after = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: metrics_fixture [--listen ADDR:PORT] [--empty] "
                            "[--exit-after SEC]\n");
            return 2;
        }
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    struct metrics_source src = {.snapshot = fixture_snapshot, .ctx = &empty};
    struct flood_err err = {0};
    struct metrics *m = metrics_start(listen, &src, &err);
    if (!m) {
        fprintf(stderr, "metrics_fixture: %s\n", err.msg);
        return 1;
    }
    printf("port %d\n", metrics_port(m));
    fprintf(stderr, "metrics_fixture: serving http://%s/metrics\n", metrics_address(m));
    fflush(stdout);
    for (long i = 0; i < exit_after * 10 && !stop; i++)
        nanosleep(&(struct timespec){.tv_nsec = 100000000}, NULL);
    metrics_stop(m);
    return 0;
}
