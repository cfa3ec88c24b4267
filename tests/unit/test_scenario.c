/* tests/unit/test_scenario.c: the `flood check` scenario language: every step form, the
 * built-in default against its fixture, and errors with the file name and line number.
 * Every accepted form has a refused twin. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flood/check/scenario.h"
#include "tests/check.h"

/* Parse text; 0 or -1, err->msg filled on failure. */
static int parse(const char *text, struct scenario *s, struct flood_err *err)
{
    memset(err, 0, sizeof(*err));
    return scenario_parse(text, "t.flood", s, err);
}

/* text must be refused with exactly this message. */
static void refused(const char *text, const char *want, const char *what)
{
    struct scenario s;
    struct flood_err err;
    int rc = parse(text, &s, &err);
    CHECK(rc == -1 && s.n == 0 && s.steps == NULL, "refused: %s", what);
    CHECK_STR(err.msg, want, "message: %s", what);
    scenario_free(&s);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static void every_step(void)
{
    const char *text = "# every form\n"
                       "\n"
                       "discover webfinger\n"
                       "discover actor\n"
                       "discover actor unsigned   # trailing comment\n"
                       "discover nodeinfo\n"
                       "follow\n"
                       "follow as flood2/user3\n"
                       "expect accept within 500ms\n"
                       "undo follow\n"
                       "post mention as 1/2\n"
                       "like\n"
                       "undo like\n"
                       "send unsigned expect refused\n"
                       "send bad-key expect refused as 2/1\n"
                       "send stale-date expect refused\n"
                       "send digest-mismatch expect refused\n"
                       "send foreign-keyid expect refused\n"
                       "send dialect cavage-rsa expect accepted\n"
                       "send dialect cavage-hs2019\n"
                       "send dialect rfc9421-rsa as 1/1\n"
                       "send dialect rfc9421-ed25519\n"
                       "rotate key then send\n"
                       "api mention-notified\n"
                       "api like-counted within 2m\n"
                       "api follow-crowd expect accepted within 5s as flood1/user2\n"
                       "\twait 2s\r\n"
                       "timer start t1\n"
                       "timer stop t1\n";
    struct scenario s;
    struct flood_err err;
    int rc = parse(text, &s, &err);
    CHECK(rc == 0, "every step parses (%s)", err.msg);
    if (rc)
        return;
    CHECK(s.n == 27, "27 steps, got %zu", s.n);
    static const enum scenario_kind kinds[] = {SC_DISCOVER_WEBFINGER,
                                               SC_DISCOVER_ACTOR,
                                               SC_DISCOVER_ACTOR,
                                               SC_DISCOVER_NODEINFO,
                                               SC_FOLLOW,
                                               SC_FOLLOW,
                                               SC_EXPECT_ACCEPT,
                                               SC_UNDO_FOLLOW,
                                               SC_POST_MENTION,
                                               SC_LIKE,
                                               SC_UNDO_LIKE,
                                               SC_SEND_BAD,
                                               SC_SEND_BAD,
                                               SC_SEND_BAD,
                                               SC_SEND_BAD,
                                               SC_SEND_BAD,
                                               SC_SEND_DIALECT,
                                               SC_SEND_DIALECT,
                                               SC_SEND_DIALECT,
                                               SC_SEND_DIALECT,
                                               SC_ROTATE,
                                               SC_API_MENTION,
                                               SC_API_LIKE,
                                               SC_API_FOLLOW_CROWD,
                                               SC_WAIT,
                                               SC_TIMER_START,
                                               SC_TIMER_STOP};
    int kinds_ok = 1;
    for (size_t i = 0; i < s.n && i < 27; i++)
        if (s.steps[i].kind != kinds[i]) {
            kinds_ok = 0;
            printf("#   step %zu (%s): kind %d, want %d\n", i, s.steps[i].text,
                   (int)s.steps[i].kind, (int)kinds[i]);
        }
    CHECK(kinds_ok, "every step has its kind");
    CHECK(s.steps[0].line == 3, "line numbers count comments and blanks (got %d)", s.steps[0].line);
    CHECK(s.steps[1].signed_get == 1 && s.steps[2].signed_get == 0,
          "discover actor: signed by default, unsigned on request");
    CHECK_STR(s.steps[2].text, "discover actor unsigned", "the comment is cut from the text");
    CHECK(s.steps[4].instance == 1 && s.steps[4].actor == 1 && !s.steps[4].has_as,
          "follow without 'as' is 1/1");
    CHECK(s.steps[5].instance == 2 && s.steps[5].actor == 3 && s.steps[5].has_as,
          "follow as flood2/user3 is 2/3");
    CHECK(s.steps[6].ms == 500, "within 500ms");
    CHECK(s.steps[8].instance == 1 && s.steps[8].actor == 2, "post mention as 1/2");
    CHECK(s.steps[11].bad == SC_BAD_UNSIGNED && s.steps[12].bad == SC_BAD_KEY &&
              s.steps[13].bad == SC_BAD_STALE_DATE && s.steps[14].bad == SC_BAD_DIGEST &&
              s.steps[15].bad == SC_BAD_FOREIGN_KEYID,
          "the five bad requests");
    CHECK(s.steps[12].instance == 2 && s.steps[12].actor == 1, "send ... as 2/1");
    CHECK(s.steps[16].dialect == SC_DIALECT_CAVAGE_RSA && s.steps[16].expect_accepted,
          "cavage-rsa expect accepted");
    CHECK(s.steps[17].dialect == SC_DIALECT_CAVAGE_HS2019 && !s.steps[17].expect_accepted,
          "cavage-hs2019 records only");
    CHECK(s.steps[18].dialect == SC_DIALECT_RFC9421_RSA &&
              s.steps[19].dialect == SC_DIALECT_RFC9421_ED25519,
          "the RFC 9421 dialects");
    CHECK(s.steps[21].ms == SCENARIO_DEFAULT_WAIT_MS, "api without within: the default wait");
    CHECK(s.steps[22].ms == 120000, "within 2m");
    CHECK(s.steps[23].ms == 5000 && s.steps[23].instance == 1 && s.steps[23].actor == 2,
          "api follow-crowd within 5s as flood1/user2");
    CHECK(s.steps[24].ms == 2000, "wait 2s (tab before, CRLF after)");
    CHECK_STR(s.steps[24].text, "wait 2s", "CR and tab trimmed");
    CHECK_STR(s.steps[25].name, "t1", "timer name");
    CHECK_STR(s.file, "t.flood", "the file name is kept");
    scenario_free(&s);
    CHECK(s.n == 0 && s.steps == NULL && s.file == NULL, "scenario_free empties");
}

static void default_scenario(void)
{
    char *text = read_file("fixtures/scenarios/default.flood");
    CHECK(text != NULL, "fixtures/scenarios/default.flood is readable");
    if (!text)
        return;
    CHECK_STR(scenario_default_text, text, "the built-in default is the fixture, byte for byte");
    struct scenario s;
    struct flood_err err;
    int rc = scenario_load("fixtures/scenarios/default.flood", &s, &err);
    CHECK(rc == 0, "the default scenario loads (%s)", rc ? err.msg : "");
    /* it covers every kind but wait (issue: discovery, follow/accept, mention, like, undo,
     * the persona's follow, refusals, dialects, rotation, timers) */
    int seen[SC__KINDS] = {0}, bads[SC__BADS] = {0}, dialects[SC__DIALECTS] = {0};
    for (size_t i = 0; rc == 0 && i < s.n; i++) {
        seen[s.steps[i].kind]++;
        if (s.steps[i].kind == SC_SEND_BAD)
            bads[s.steps[i].bad]++;
        if (s.steps[i].kind == SC_SEND_DIALECT)
            dialects[s.steps[i].dialect]++;
    }
    int all = 1;
    for (int k = 0; k < SC__KINDS; k++)
        if (k != SC_WAIT && !seen[k]) {
            all = 0;
            printf("#   kind %d missing\n", k);
        }
    CHECK(all, "the default covers every step kind but wait");
    CHECK(seen[SC_DISCOVER_ACTOR] == 2, "actor fetched signed and unsigned");
    int b = 1, d = 1;
    for (int k = 0; k < SC__BADS; k++)
        b &= bads[k] == 1;
    for (int k = 0; k < SC__DIALECTS; k++)
        d &= dialects[k] == 1;
    CHECK(b, "every bad request once");
    CHECK(d, "every dialect once");
    scenario_free(&s);

    rc = scenario_load("fixtures/scenarios/bad-syntax.flood", &s, &err);
    CHECK(rc == -1, "bad-syntax.flood is refused");
    CHECK_STR(err.msg,
              "fixtures/scenarios/bad-syntax.flood:5: unknown step 'folow' (discover, follow, "
              "expect, undo, post, announce, reply, edit, delete, like, send, rotate, api, wait, "
              "timer)",
              "with its file name and line number");
    rc = scenario_load("fixtures/scenarios/refusals.flood", &s, &err);
    CHECK(rc == 0 && s.n == 5, "refusals.flood loads, 5 steps");
    scenario_free(&s);
    rc = scenario_load("fixtures/scenarios/no-such.flood", &s, &err);
    CHECK(rc == -1 && strstr(err.msg, "cannot open 'fixtures/scenarios/no-such.flood'"),
          "a missing file: %s", err.msg);
}

static void errors(void)
{
    refused("discover webfinger\n\n# c\nfolow\n",
            "t.flood:4: unknown step 'folow' (discover, follow, expect, undo, post, announce, "
            "reply, edit, delete, like, send, "
            "rotate, api, wait, timer)",
            "a typo, with its line");
    refused("discover webfinger\ndiscover actors\n",
            "t.flood:2: unknown discovery 'actors' (webfinger, actor, nodeinfo)",
            "unknown discovery");
    refused("discover actor maybe\n",
            "t.flood:1: 'discover actor' takes signed or unsigned, not 'maybe'",
            "discover actor maybe");
    refused("follow\nexpect accept\n", "t.flood:2: 'expect accept' needs 'within DURATION'",
            "expect accept without within");
    refused("follow\nexpect accept within 10\n",
            "t.flood:2: within: expected a duration from 1ms to 1h (250us, 500ms, 1.5s, 2m, "
            "1h), got '10'",
            "a duration without unit");
    refused("follow\nexpect reject within 1s\n",
            "t.flood:2: unknown expectation 'reject' (expect accept within DURATION)",
            "expect reject");
    refused("expect accept within 1s\n",
            "t.flood:1: 'expect accept within 1s' with no 'follow' "
            "before it",
            "expect accept before any follow");
    refused("undo follow\n", "t.flood:1: 'undo follow' with no 'follow' before it",
            "undo follow before any follow");
    refused("undo like\n", "t.flood:1: 'undo like' with no 'like' before it",
            "undo like before any like");
    refused("api mention-notified\n",
            "t.flood:1: 'api mention-notified' with no 'post mention' before it",
            "api mention-notified before any post");
    refused("api like-counted\n", "t.flood:1: 'api like-counted' with no 'like' before it",
            "api like-counted before any like");
    refused("follow as flood1\n",
            "t.flood:1: bad actor 'flood1' (want I/A, e.g. 1/1 or flood1/user1)",
            "an actor without a slash");
    refused("follow as flood/user1\n",
            "t.flood:1: bad actor 'flood/user1' (want I/A, e.g. 1/1 or flood1/user1)",
            "an instance without a number");
    refused("follow now\n", "t.flood:1: unexpected 'now' after 'follow'", "follow now");
    refused("undo post\n", "t.flood:1: unknown undo 'post' (undo follow, undo like)", "undo post");
    refused("post note\n", "t.flood:1: unknown post 'note' (post mention, post media, post poll)",
            "post note");
    refused("send unsigned\n", "t.flood:1: 'send unsigned' needs 'expect refused'",
            "send unsigned without expectation");
    refused("send unsigned expect accepted\n", "t.flood:1: 'send unsigned' needs 'expect refused'",
            "a bad request expected taken");
    refused("send wrong-key expect refused\n",
            "t.flood:1: unknown send 'wrong-key' (unsigned, bad-key, stale-date, "
            "digest-mismatch, foreign-keyid, dialect D)",
            "unknown bad request");
    refused("send dialect rfc9421\n",
            "t.flood:1: unknown dialect 'rfc9421' (cavage-rsa, cavage-hs2019, rfc9421-rsa, "
            "rfc9421-ed25519)",
            "unknown dialect");
    refused("send dialect cavage-rsa expect refused\n",
            "t.flood:1: unexpected 'expect' after the dialect (expect accepted?)",
            "a dialect expected refused");
    refused("send dialect rfc9421-ed25519 as 1/1\n",
            "t.flood:1: 'rfc9421-ed25519' signs as the Ed25519 check actor: no 'as'",
            "ed25519 with as");
    refused("rotate key\n", "t.flood:1: unknown rotation 'key' (rotate key then send)",
            "rotate key alone");
    refused("api follow-crowd\n", "t.flood:1: 'api follow-crowd' needs 'expect accepted'",
            "api follow-crowd without expectation");
    refused("api timeline\n",
            "t.flood:1: unknown api check 'timeline' (mention-notified, like-counted, "
            "follow-crowd)",
            "unknown api check");
    refused("post mention\napi mention-notified as 1/1\n", "t.flood:2: 'api' takes no 'as I/A'",
            "api mention-notified with as");
    refused("wait\n", "t.flood:1: 'wait' needs one DURATION", "wait without duration");
    refused("wait 0s\n",
            "t.flood:1: wait: expected a duration from 1ms to 1h (250us, 500ms, 1.5s, 2m, 1h), "
            "got '0s'",
            "wait 0s");
    refused("follow\nundo follow as 1/1\n",
            "t.flood:2: unexpected 'as' after the undo (it undoes the last one)",
            "undo takes no as");
    refused("timer stop a\n", "t.flood:1: timer 'a' stopped but not started",
            "timer stopped before start");
    refused("timer start a\ntimer start a\ntimer stop a\n", "t.flood:2: timer 'a' started twice",
            "timer started twice");
    refused("timer start a\nwait 1s\n", "t.flood:1: timer 'a' is never stopped",
            "timer left running");
    refused("timer start a/b\n",
            "t.flood:1: bad timer name 'a/b' (letters, digits, _ - ., at most 31)",
            "bad timer name");
    refused("timer go a\n", "t.flood:1: 'timer' wants 'timer start NAME' or 'timer stop NAME'",
            "timer go");
    refused("# only comments\n\n", "t.flood: no steps", "a file without steps");
    refused("", "t.flood: no steps", "an empty file");
    refused("wait 1s\x01\n", "t.flood:1: a control character in the line", "a control byte");
    char long_line[600];
    memset(long_line, 'a', sizeof(long_line) - 2);
    long_line[sizeof(long_line) - 2] = '\n';
    long_line[sizeof(long_line) - 1] = '\0';
    refused(long_line, "t.flood:1: line longer than 511 bytes", "a line too long");
    refused("wait 1s 2s 3s 4s 5s 6s 7s 8s 9s 10s 11s 12s\n",
            "t.flood:1: too many words (at most 12)", "too many words");
}

static void durations_and_actors(void)
{
    static const struct {
        const char *text;
        long ms; /* -1: refused */
    } durs[] = {
        {"10s", 10000},
        {"500ms", 500},
        {"2m", 120000},
        {"60m", 3600000},
        {"1h", 3600000},
        {"1.5s", 1500},
        {"0.5m", 30000},
        {"2400us", 2},
        {"1ms", 1},
        {"61m", -1},
        {"0ms", -1},
        {"-1s", -1},
        {"10", -1},
        {"10h", -1},
        {"s", -1},
        {"1.s", -1},
        {"1e3ms", -1},
        {"10 s", -1},
        {"99999999999999999999s", -1},
    };
    for (size_t k = 0; k < sizeof(durs) / sizeof(durs[0]); k++) {
        long ms = -7;
        struct flood_err e = {0};
        int rc = scenario_parse_duration("within", durs[k].text, &ms, &e);
        if (durs[k].ms >= 0)
            CHECK(rc == 0 && ms == durs[k].ms, "duration '%s' is %ld ms (got %ld)", durs[k].text,
                  durs[k].ms, ms);
        else
            CHECK(rc == -1 && ms == -7 &&
                      strstr(e.msg, "within: expected a duration from 1ms to 1h (250us, 500ms, "
                                    "1.5s, 2m, 1h), got '"),
                  "duration '%s' refused, naming the forms: %s", durs[k].text, e.msg);
    }
    int i = 0, a = 0;
    CHECK(scenario_parse_actor("1/1", &i, &a) == 0 && i == 1 && a == 1, "1/1");
    CHECK(scenario_parse_actor("flood12/user3", &i, &a) == 0 && i == 12 && a == 3, "flood12/user3");
    CHECK(scenario_parse_actor("2/1", &i, &a) == 0 && i == 2 && a == 1, "2/1");
    CHECK(scenario_parse_actor("2/0", &i, &a) == -1, "2/0: the instance actor sends nothing");
    CHECK(scenario_parse_actor("0/1", &i, &a) == -1, "0/1: instances count from 1");
    CHECK(scenario_parse_actor("1", &i, &a) == -1, "1: no slash");
    CHECK(scenario_parse_actor("1/2/3", &i, &a) == -1, "1/2/3");
    CHECK(scenario_parse_actor("flood/user", &i, &a) == -1, "no digits");
    CHECK(scenario_parse_actor("1/user1 ", &i, &a) == -1, "a blank inside");
    CHECK(scenario_parse_actor("1/99999999", &i, &a) == -1, "too many digits");
    CHECK_STR(scenario_bad_name(SC_BAD_FOREIGN_KEYID), "foreign-keyid", "bad name");
    CHECK_STR(scenario_dialect_name(SC_DIALECT_RFC9421_ED25519), "rfc9421-ed25519", "dialect name");
    CHECK_STR(scenario_dialect_name((enum scenario_dialect)99), "?", "an unknown dialect");
}

/* The traffic steps: their forms, their default wait, and their order rules. */
static void traffic_steps(void)
{
    const char *text = "announce unseen as 1/2\n"
                       "reply thread within 3s as flood2/user1\n"
                       "post media\n"
                       "post poll within 1s\n"
                       "post mention\n"
                       "edit post\n"
                       "delete post within 2s\n";
    struct scenario s;
    struct flood_err err;
    int rc = parse(text, &s, &err);
    CHECK(rc == 0 && s.n == 7, "the traffic steps parse (%s)", rc ? err.msg : "");
    if (rc == 0 && s.n == 7) {
        static const enum scenario_kind want[] = {
            SC_ANNOUNCE_UNSEEN, SC_REPLY_THREAD, SC_POST_MEDIA, SC_POST_POLL,
            SC_POST_MENTION,    SC_EDIT_POST,    SC_DELETE_POST};
        int ok = 1;
        for (size_t i = 0; i < 7; i++)
            ok &= s.steps[i].kind == want[i];
        CHECK(ok, "every traffic step has its kind");
        CHECK(s.steps[0].instance == 1 && s.steps[0].actor == 2 &&
                  s.steps[0].ms == SCENARIO_TRAFFIC_WAIT_MS,
              "announce unseen as 1/2, the traffic default wait");
        CHECK(s.steps[1].ms == 3000 && s.steps[1].instance == 2, "reply thread within 3s as 2/1");
        CHECK(s.steps[3].ms == 1000 && s.steps[6].ms == 2000, "within on post poll and delete");
        scenario_free(&s);
    }
    refused("edit post\n", "t.flood:1: 'edit post' with no 'post mention' before it",
            "edit with nothing to edit");
    refused("post mention\ndelete post\nedit post\n",
            "t.flood:3: 'edit post' with no 'post mention' before it", "edit after the delete");
    refused("edit post as 1/1\npost mention\n", "t.flood:1: 'edit' takes no 'as I/A'",
            "edit as another actor");
    refused("announce seen\n",
            "t.flood:1: unknown 'seen' (announce unseen, reply thread, edit post, delete post)",
            "announce seen");
    refused("post mention within 5s\n", "t.flood:1: 'post' takes no 'within'",
            "post mention within");
}

int main(void)
{
    every_step();
    default_scenario();
    errors();
    durations_and_actors();
    traffic_steps();
    return check_done();
}
