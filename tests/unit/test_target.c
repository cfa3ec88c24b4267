/* Unit tests of flood/target's pure steps: persona specs, the WebFinger self link, post ids
 * from outbox pages, and --personas files. The network steps are in
 * tests/integration/discovery.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flood/send/target.h"
#include "tests/check.h"

static void specs(void)
{
    struct {
        const char *spec;
        int kind;
        const char *user, *host;
    } cases[] = {
        {"acct:alice@target.test", 1, "alice", "target.test"},
        {"alice@target.test:8200", 1, "alice", "target.test:8200"},
        {"@alice@target.test", 1, "alice", "target.test"},
        {"ACCT:bob@x.test", 1, "bob", "x.test"},
        {"https://target.test/users/alice", 0, NULL, NULL},
        {"http://target.test:8200/users/alice", 0, NULL, NULL},
        {"alice", -1, NULL, NULL},
        {"acct:@target.test", -1, NULL, NULL},
        {"acct:alice@", -1, NULL, NULL},
        {"acct:a@b@c", -1, NULL, NULL},
        {"acct:al ice@target.test", -1, NULL, NULL},
        {"acct:alice@target.test/x", -1, NULL, NULL},
        {"ftp://target.test/users/a", -1, NULL, NULL},
        {"", -1, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *u, *h;
        struct flood_err err = {0};
        int k = target_parse_spec(cases[i].spec, &u, &h, &err);
        if (cases[i].kind == 1)
            CHECK(k == 1 && u && h && !strcmp(u, cases[i].user) && !strcmp(h, cases[i].host),
                  "spec '%s' is %s at %s", cases[i].spec, cases[i].user, cases[i].host);
        else if (cases[i].kind == 0)
            CHECK(k == 0 && !u && !h, "spec '%s' is an actor URL", cases[i].spec);
        else
            CHECK(k == -1 && err.msg[0] && !u, "spec '%s' refused (%s)", cases[i].spec, err.msg);
        free(u);
        free(h);
    }
    char *u, *h;
    CHECK(target_parse_spec(NULL, &u, &h, NULL) == -1, "a NULL spec refused");
}

static json_t *js(const char *s)
{
    json_error_t e;
    json_t *j = json_loads(s, 0, &e);
    if (!j)
        printf("# bad JSON in test: %s\n", e.text);
    return j;
}

static void jrd(void)
{
    json_t *j = js("{\"subject\":\"acct:a@t.test\",\"links\":["
                   "{\"rel\":\"http://webfinger.net/rel/profile-page\",\"type\":\"text/html\","
                   "\"href\":\"https://t.test/@a\"},"
                   "{\"rel\":\"self\",\"type\":\"application/json\",\"href\":\"https://t.test/x\"},"
                   "{\"rel\":\"self\",\"type\":\"application/activity+json\","
                   "\"href\":\"https://t.test/users/a\"}]}");
    char *s = target_jrd_self(j);
    CHECK_STR(s, "https://t.test/users/a", "the activity+json self link is taken");
    free(s);
    json_decref(j);
    j = js("{\"links\":[{\"rel\":\"self\",\"type\":\"application/ld+json; "
           "profile=\\\"https://www.w3.org/ns/activitystreams\\\"\",\"href\":\"https://t.test/u/"
           "1\"}]}");
    s = target_jrd_self(j);
    CHECK_STR(s, "https://t.test/u/1", "an ld+json self link with a profile is taken");
    free(s);
    json_decref(j);
    const char *bad[] = {
        "{\"links\":[{\"rel\":\"self\",\"type\":\"text/html\",\"href\":\"https://t.test/a\"}]}",
        "{\"links\":[{\"rel\":\"alternate\",\"type\":\"application/activity+json\","
        "\"href\":\"https://t.test/a\"}]}",
        "{\"links\":[{\"rel\":\"self\",\"type\":\"application/activity+json\"}]}",
        "{\"links\":[{\"rel\":\"self\",\"type\":\"application/activity+json\","
        "\"href\":\"javascript:alert(1)\"}]}",
        "{\"links\":[{\"rel\":\"self\",\"type\":\"application/ld+jsonx\","
        "\"href\":\"https://t.test/a\"}]}",
        "{\"links\":{}}",
        "[]",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        j = js(bad[i]);
        s = target_jrd_self(j);
        CHECK(s == NULL, "no self link in JRD %zu", i);
        free(s);
        json_decref(j);
    }
}

static void outbox(void)
{
    json_t *j = js("{\"orderedItems\":["
                   "{\"type\":\"Create\",\"object\":{\"id\":\"https://t.test/n/1\"}},"
                   "{\"type\":\"Announce\",\"object\":\"https://o.test/n/9\"},"
                   "{\"type\":\"Note\",\"id\":\"https://t.test/n/2\"},"
                   "\"https://t.test/n/bare\","
                   "{\"type\":\"Create\",\"object\":\"https://t.test/n/3\"},"
                   "{\"type\":\"Create\",\"object\":\"not a url\"},"
                   "{\"type\":\"Like\",\"object\":\"https://o.test/n/8\"},"
                   "{\"id\":\"https://t.test/n/untyped\"},"
                   "{\"type\":\"Article\",\"id\":\"https://t.test/n/4\"}]}");
    char **posts = NULL;
    size_t n = 0;
    target_outbox_posts(j, &posts, &n, 10);
    const char *want[] = {"https://t.test/n/1", "https://t.test/n/2", "https://t.test/n/3",
                          "https://t.test/n/4"};
    int same = n == 4;
    for (size_t i = 0; same && i < 4; i++)
        same = !strcmp(posts[i], want[i]);
    CHECK(same, "posts: Create objects and plain objects, in order (%zu)", n);
    target_outbox_posts(j, &posts, &n, 5);
    CHECK(n == 5, "the limit is kept when appending (%zu)", n);
    for (size_t i = 0; i < n; i++)
        free(posts[i]);
    free(posts);
    json_decref(j);
    j = js("{\"items\":[{\"type\":\"Note\",\"id\":\"https://t.test/n/5\"}]}");
    posts = NULL;
    n = 0;
    target_outbox_posts(j, &posts, &n, 10);
    CHECK(n == 1 && !strcmp(posts[0], "https://t.test/n/5"), "unordered items too");
    free(posts[0]);
    free(posts);
    json_decref(j);
    j = js("{\"first\":\"https://t.test/outbox?page=1\",\"totalItems\":3}");
    posts = NULL;
    n = 0;
    target_outbox_posts(j, &posts, &n, 10);
    CHECK(n == 0 && posts == NULL, "a collection without items gives none");
    json_decref(j);
}

static void personas_file(void)
{
    char path[] = "/tmp/flood-test-personas-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "temp file");
    if (fd < 0)
        return;
    FILE *f = fdopen(fd, "w");
    fputs("# personas\n\n  acct:alice@target.test  \nbob@target.test # a comment\n"
          "https://target.test/users/carol#main\r\n\t\n",
          f);
    fclose(f);
    char **specs;
    size_t n;
    struct flood_err err = {0};
    int rc = target_read_personas_file(path, &specs, &n, &err);
    CHECK(rc == 0 && n == 3, "three personas read (%s)", err.msg);
    if (rc == 0 && n == 3) {
        CHECK_STR(specs[0], "acct:alice@target.test", "blanks trimmed");
        CHECK_STR(specs[1], "bob@target.test", "a trailing comment dropped");
        CHECK_STR(specs[2], "https://target.test/users/carol#main", "a URL keeps its fragment");
        target_specs_free(specs, n);
    }
    f = fopen(path, "w");
    fputs("acct:alice@target.test\nnot a persona\n", f);
    fclose(f);
    rc = target_read_personas_file(path, &specs, &n, &err);
    CHECK(rc == -1 && strstr(err.msg, ":2:") && n == 0, "a bad line is named: %s", err.msg);
    f = fopen(path, "w");
    fputs("# nothing\n\n", f);
    fclose(f);
    rc = target_read_personas_file(path, &specs, &n, &err);
    CHECK(rc == -1 && strstr(err.msg, "no persona"), "an empty file refused: %s", err.msg);
    unlink(path);
    rc = target_read_personas_file(path, &specs, &n, &err);
    CHECK(rc == -1 && strstr(err.msg, "--personas"), "a missing file refused: %s", err.msg);
}

static void json_types(void)
{
    CHECK(http_is_json_type("application/activity+json") &&
              http_is_json_type("application/ld+json; profile=\"x\"") &&
              http_is_json_type("application/json; charset=utf-8") &&
              http_is_json_type("Application/JRD+JSON"),
          "JSON media types");
    CHECK(!http_is_json_type("text/html") && !http_is_json_type("application/jsonx") &&
              !http_is_json_type("application/+json") && !http_is_json_type(NULL),
          "their twins are not JSON");
}

int main(void)
{
    specs();
    jrd();
    outbox();
    personas_file();
    json_types();
    return check_done();
}
