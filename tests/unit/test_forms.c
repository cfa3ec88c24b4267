/* tests/unit/test_forms.c: every value form the docs show (README.md, docs/, docs/flood.1,
 * fixtures/presets, fixtures/scenarios), passed through the parser that reads it for real
 * (sched_parse_duration, sched_init_stages, workload_parse_mix, content_opt_apply,
 * scenario_parse, expect_parse, signer_parse_bad, signer_parse_dialects) with the value it must
 * give, each beside a refused twin whose message names the option and the forms it takes.
 * The preset files are read here too: every --mix, --stages, --content-opt, --sign,
 * --bad-signatures and duration they hold must parse. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flood/check/scenario.h"
#include "flood/report/expect.h"
#include "flood/send/content_opt.h"
#include "flood/send/sched.h"
#include "flood/send/signer.h"
#include "flood/send/workload.h"
#include "tests/check.h"

enum parser {
    P_DURATION, /* sched_parse_duration: --duration, --timeout, --accept-wait, ... */
    P_STAGES,   /* sched_init_stages: the expected count of the schedule */
    P_MIX,      /* workload_parse_mix: the sum of the weights */
    P_CONTENT,  /* content_opt_apply on "default": the field named */
    P_STEP,     /* scenario_parse of one line (a follow before it): the step's ms */
    P_EXPECT,   /* expect_parse: the value in ms, a count, or a share */
    P_GATE,     /* expect_parse as a compare gate */
    P_BAD,      /* signer_parse_bad: the share */
    P_SIGN,     /* signer_parse_dialects: how many dialects */
};

/* Parse text with p: 0 and *got, or -1 and err. */
static int parse(enum parser p, const char *text, const char *field, double *got,
                 struct flood_err *err)
{
    switch (p) {
    case P_DURATION:
        return sched_parse_duration(text, got, err);
    case P_STAGES: {
        static struct sched s;
        if (sched_init_stages(&s, text, SCHED_CONSTANT, 1, err))
            return -1;
        *got = s.total_count;
        return 0;
    }
    case P_MIX: {
        unsigned m[OP__COUNT];
        if (workload_parse_mix(text, m, err))
            return -1;
        *got = 0;
        for (int i = 0; i < OP__COUNT; i++)
            *got += m[i];
        return 0;
    }
    case P_CONTENT: {
        struct wf_content_profile c;
        if (wf_content_profile("default", &c, err) || content_opt_apply(&c, text, err))
            return -1;
        *got = !strcmp(field, "media")          ? c.media
               : !strcmp(field, "link")         ? c.link
               : !strcmp(field, "cw")           ? c.cw
               : !strcmp(field, "media_max")    ? c.media_max
               : !strcmp(field, "media_median") ? c.media_median
               : !strcmp(field, "media_cap")    ? (double)c.media_cap
                                                : NAN;
        return 0;
    }
    case P_STEP: {
        char doc[256];
        struct scenario sc;
        snprintf(doc, sizeof(doc), "follow\npost mention\nlike\n%s\n", text);
        if (scenario_parse(doc, "doc.flood", &sc, err))
            return -1;
        *got = (double)sc.steps[sc.n - 1].ms;
        scenario_free(&sc);
        return 0;
    }
    case P_EXPECT:
    case P_GATE: {
        struct expect e;
        if (expect_parse(text, p == P_GATE, &e, err))
            return -1;
        *got = e.value;
        return 0;
    }
    case P_BAD: {
        struct signer_opts o = {0};
        if (signer_parse_bad(text, &o, err))
            return -1;
        *got = o.bad_share;
        return 0;
    }
    case P_SIGN: {
        struct signer_opts o = {0};
        if (signer_parse_dialects(text, &o, err))
            return -1;
        *got = o.n_dialects;
        return 0;
    }
    }
    return -1;
}

/* A form, what it gives, and its refused twin with what the refusal must say. */
static const struct {
    enum parser p;
    const char *text, *field;
    double want;
    const char *bad, *says;
} forms[] = {
    /* durations (README, docs/LOAD.md, docs/BACKPRESSURE.md, the presets) */
    {P_DURATION, "30s", "", 30, "30sec", "duration: expected a duration from 0s to 1 week"},
    {P_DURATION, "1m", "", 60, "1min", "(250us, 500ms, 1.5s, 2m, 1h; a plain number is seconds)"},
    {P_DURATION, "60s", "", 60, "8d", "got '8d'"},
    {P_DURATION, "12s", "", 12, "-12s", "got '-12s'"},
    {P_DURATION, "1.5s", "", 1.5, "1,5s", "got '1,5s'"},
    {P_DURATION, "500ms", "", 0.5, "500 ms", "got '500 ms'"},
    {P_DURATION, "30", "", 30, "200h", "got '200h'"},
    {P_DURATION, "1h", "", 3600, "1e3", "got '1e3'"},
    /* --stages (README, docs/LOAD.md, docs/flood.1, the presets); the count by hand */
    {P_STAGES, "10:20s,0:10s", "", 150, "10:20s,0:10x",
     "--stages: stage 2 duration: expected a duration from 0s to 1 week"},
    {P_STAGES, "8:10s,0:8s", "", 72, "8:10s;0:8s", "--stages: stage 1 duration: expected"},
    {P_STAGES, "40:0,40:6s", "", 240, "40:0,40", "--stages: stage 2: expected RATE:DURATION"},
    {P_STAGES, "5:0,5:2s,60:0,60:5s,5:0,5:2s", "", 320, "5:0,5:2s,,60:5s",
     "--stages: stage 3: expected RATE:DURATION (10:30s, 0:0, 1.5k:2m), got ''"},
    {P_STAGES, "0:0,0:4s,150:0,150:3s,5:0,5:3s", "", 465, "0:0,x:4s",
     "--stages: stage 2 rate: expected 0 or a rate above 0 and at most 10000000 a second"},
    {P_STAGES, "1.5k:2s", "", 1500, "1.5k:2s,", "--stages: stage 2: expected RATE:DURATION"},
    {P_STAGES, "600/m:10s", "", 50, "600/d:10s", "--stages: stage 1 rate: expected 0 or a rate"},
    {P_STAGES, "10:1.5s", "", 7.5, "0:10s", "--stages: '0:10s' sends nothing"},
    /* --mix (README, docs/LOAD.md, docs/TRAFFIC.md, the presets) */
    {P_MIX, "create=70,like=20,follow=10", "", 100, "create=70,like=20,folow=10",
     "--mix: expected one of create, like, follow, undo, announce"},
    {P_MIX, "create=40,reply=10,announce=15,like=20,follow=5,update=5,delete=5", "", 100,
     "create=40,reply=10%", "--mix reply: expected a whole number from 0 to 1000000, got '10%'"},
    {P_MIX, "create=30,delete=60,delete-actor=10", "", 100, "create=30,delete=60,",
     "--mix: expected OP=WEIGHT[,OP=WEIGHT...] (create=70,like=20,follow=10), got ''"},
    {P_MIX, "update-actor=30,create=70", "", 100, "update-actor 30", "--mix: expected OP=WEIGHT"},
    {P_MIX, "like=40,announce=30,reply=25,follow=5", "", 100, "like=40,like=30",
     "--mix: 'like' given twice"},
    {P_MIX, "create=1", "", 1, "create=0", "--mix: every weight is 0"},
    {P_MIX, "announce=100", "", 100, "announce=1.5", "--mix announce: expected a whole number"},
    /* --content-opt (README, docs/BACKPRESSURE.md, the presets, traffic_target.sh) */
    {P_CONTENT, "media=100%,media-count=2,links=0%", "media", 1, "media=100%,media-count=5",
     "--content-opt media-count: expected a whole number from 1 to 4, got '5'"},
    {P_CONTENT, "media=100%,media-count=2,links=0%", "media_max", 2, "links=-1%",
     "--content-opt links: expected a share from 0% to 100%"},
    {P_CONTENT, "media=100%,media-size=8k,media-max=16k", "media_median", 8000,
     "media=100%,media-size=8q", "--content-opt media-size: expected a size from 100 to"},
    {P_CONTENT, "media-size=20k,media-max=48k", "media_cap", 48000, "media-size=20k,media-mx=48k",
     "--content-opt: expected one of length, length-max"},
    {P_CONTENT, "cw=0.08", "cw", 0.08, "cw=1.5", "a plain number is a fraction, 0.2 = 20%"},
    {P_CONTENT, "cw=8%", "cw", 0.08, "cw=8%%", "--content-opt cw: expected a share"},
    {P_CONTENT, "media-size=300k", "media_median", 300000, "media-size=300kk",
     "(300, 300k, 1.5m, 2g; KiB, MiB, GiB are powers of 1024)"},
    /* scenario durations (docs/INTEROP.md, fixtures/scenarios) */
    {P_STEP, "expect accept within 10s", "", 10000, "expect accept within 10",
     "doc.flood:4: within: expected a duration from 1ms to 1h (250us, 500ms, 1.5s, 2m, 1h)"},
    {P_STEP, "api mention-notified within 10s", "", 10000, "api mention-notified within 2h",
     "got '2h'"},
    {P_STEP, "announce unseen within 5s as flood1/user1", "", 5000,
     "announce unseen within 5 as flood1/user1",
     "doc.flood:4: within: expected a duration from 1ms to 1h (250us, 500ms, 1.5s, 2m, 1h), "
     "got '5'"},
    {P_STEP, "post media within 1.5s", "", 1500, "post media within 0ms",
     "doc.flood:4: within: expected a duration from 1ms to 1h"},
    {P_STEP, "wait 2m", "", 120000, "wait 2x", "doc.flood:4: wait: expected a duration"},
    /* --expect (README, docs/flood.1, docs/TRAFFIC.md, docs/LOAD.md) and compare's gates */
    {P_EXPECT, "p99<5s", "", 5000, "p99<5kg", "--expect 'p99<5kg': expected a duration"},
    {P_EXPECT, "p99<300ms", "", 300, "p99<300mss",
     "(250us, 500ms, 1.5s, 2m, 1h; a plain "
     "number is milliseconds)"},
    {P_EXPECT, "p99 < 10ms", "", 10, "p99 < 10 ms", "--expect 'p99 < 10 ms': unexpected text"},
    {P_EXPECT, "create.p99.9 <= 5s", "", 5000, "create.p99.9 <= 5%", "a time takes no %"},
    {P_EXPECT, "f2a.p95<2s", "", 2000, "f2a.p95<-2s", "expected a duration"},
    {P_EXPECT, "p50<1us", "", 0.001, "p50<1ns", "got '1ns'"},
    {P_EXPECT, "2xx>=99%", "", 0.99, "2xx>=99%%", "--expect '2xx>=99%%': expected a share"},
    {P_EXPECT, "fetch.actor<=110%", "", 1.1, "fetch.actor<=110ms",
     "expected a count (0, 12, 1.5) or a share (99%)"},
    {P_EXPECT, "shed==0", "", 0, "shed==zero", "got 'zero'"},
    {P_EXPECT, "errors==0", "", 0, "errors==-1", "got '-1'"},
    {P_EXPECT, "fetch.actor.repeat==0", "", 0, "fetch.actor.repeat==0x0", "got '0x0'"},
    {P_GATE, "p99 within 10%", "", 0.1, "p99 within 10", "(none)"},
    {P_GATE, "2xx within 1%", "", 0.01, "2xx within 1%%", "expected a share"},
    {P_GATE, "p99 within 15ms", "", 15, "p99 within 15 ms", "unexpected text"},
    /* --bad-signatures (README, docs/flood.1, run_sink.sh) */
    {P_BAD, "30%", "", 0.3, "200%",
     "--bad-signatures: expected a share from 0% to 100% (20%, "
     "0.5%; a plain number is percent), got '200%'"},
    {P_BAD, "5", "", 0.05, "5x", "--bad-signatures: expected a share"},
    {P_BAD, "100%", "", 1, "0.5%%", "got '0.5%%'"},
    {P_BAD, "0.5%", "", 0.005, "", "got ''"},
    /* --sign (README, docs/flood.1) */
    {P_SIGN, "cavage", "", 1, "bogus",
     "--sign: expected one of cavage, rfc9421, cavage,rfc9421, rfc9421,cavage, none, got "
     "'bogus'"},
    {P_SIGN, "rfc9421,cavage", "", 2, "rfc9421,,cavage", "--sign: expected one of"},
    {P_SIGN, "none", "", 0, "None", "got 'None'"},
};

static void table(void)
{
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        double got = NAN;
        struct flood_err err = {0};
        int rc = parse(forms[i].p, forms[i].text, forms[i].field, &got, &err);
        CHECK(rc == 0 && fabs(got - forms[i].want) <= 1e-9 * fmax(1, fabs(forms[i].want)),
              "'%s' parses to %g (got %g%s%s)", forms[i].text, forms[i].want, got, rc ? ": " : "",
              rc ? err.msg : "");
        if (!strcmp(forms[i].says, "(none)")) {
            /* a gate's bare number is an amount in the metric's unit: a form, not a twin */
            CHECK(parse(forms[i].p, forms[i].bad, "", &got, &err) == 0 && got == 10,
                  "'%s' is an amount of 10 ms", forms[i].bad);
            continue;
        }
        memset(&err, 0, sizeof(err));
        rc = parse(forms[i].p, forms[i].bad, forms[i].field, &got, &err);
        CHECK(rc == -1 && strstr(err.msg, forms[i].says), "'%s' refused: %s", forms[i].bad,
              err.msg);
    }
}

/* The options of a preset file whose values a module parser reads. */
static int preset_value(const char *opt, const char *v, struct flood_err *err)
{
    static const struct {
        const char *opt;
        enum parser p;
    } by[] = {
        {"--duration", P_DURATION},  {"--timeout", P_DURATION}, {"--accept-wait", P_DURATION},
        {"--stages", P_STAGES},      {"--mix", P_MIX},          {"--content-opt", P_CONTENT},
        {"--bad-signatures", P_BAD}, {"--sign", P_SIGN},
    };
    double got;
    for (size_t i = 0; i < sizeof(by) / sizeof(by[0]); i++)
        if (!strcmp(opt, by[i].opt))
            return parse(by[i].p, v, "media", &got, err) ? -1 : 1;
    return 0;
}

static void presets(void)
{
    DIR *d = opendir("fixtures/presets");
    CHECK(d != NULL, "fixtures/presets opens (run from the source tree)");
    if (!d)
        return;
    int files = 0, values = 0, bad = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "README"))
            continue;
        char path[512], line[1024];
        snprintf(path, sizeof(path), "fixtures/presets/%s", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        files++;
        while (fgets(line, sizeof(line), f)) {
            line[strcspn(line, "\r\n")] = '\0';
            char *sp = strchr(line, ' ');
            if (line[0] != '-' || !sp)
                continue;
            *sp = '\0';
            struct flood_err err = {0};
            int rc = preset_value(line, sp + 1, &err);
            values += rc != 0;
            if (rc < 0) {
                bad++;
                printf("# %s: %s %s: %s\n", path, line, sp + 1, err.msg);
            }
        }
        fclose(f);
    }
    closedir(d);
    CHECK(files >= 10 && values >= 20 && bad == 0,
          "every value of the %d presets parses (%d values, %d refused)", files, values, bad);
}

int main(void)
{
    table();
    presets();
    return check_done();
}
