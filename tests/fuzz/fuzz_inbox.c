/* tests/fuzz/fuzz_inbox.c: libFuzzer harness for what the crowd's inboxes read off the
 * network: the body of a delivery (inbound_classify: depth check, JSON, activity fields),
 * the times in it (inbound_parse_time), the URLs in it (keycache_url_authority), and a
 * fetched key document (keycache_parse_key_doc, for a keyId taken from the input's first
 * line when it has one). Beyond "no crash, no leak", it checks invariants and aborts when
 * one breaks: an accepted activity has a type and an actor; an authority is lower-case with
 * no '/', '@' or '#'; a time that parses re-parses the same. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flood/inbound/inbound.h"
#include "flood/inbound/keycache.h"

#define REQUIRE(cond)                                                                              \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__);          \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static void check_url(const char *url)
{
    char auth[300];
    if (!url || keycache_url_authority(url, auth, sizeof(auth), 1) < 0)
        return;
    REQUIRE(auth[0] != '\0');
    for (const char *p = auth; *p; p++)
        REQUIRE(*p != '/' && *p != '@' && *p != '#' && *p != '?' && !(*p >= 'A' && *p <= 'Z'));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct inbound_activity a;
    struct flood_err e;
    int rc = inbound_classify((const char *)data, size, &a, &e);
    REQUIRE(rc >= INBOUND_ACTIVITY_OK && rc <= INBOUND_NOT_ACTIVITY);
    if (rc == INBOUND_ACTIVITY_OK) {
        REQUIRE(a.doc && a.type && a.actor);
        check_url(a.actor);
        check_url(a.id);
        check_url(a.object_id);
        int64_t us, us2;
        if (a.published && inbound_parse_time(a.published, &us) == 0) {
            REQUIRE(inbound_parse_time(a.published, &us2) == 0 && us == us2);
        }
        inbound_activity_clear(&a);
    } else {
        REQUIRE(a.doc == NULL && e.msg[0]);
    }

    /* the same bytes as a key document; the keyId is the first line when there is one */
    const char *nl = memchr(data, '\n', size);
    char key_id[512] = "https://remote.test/users/alice#main-key";
    const char *body = (const char *)data;
    size_t len = size;
    if (nl && (size_t)(nl - body) < sizeof(key_id) && !memchr(body, '\0', (size_t)(nl - body))) {
        memcpy(key_id, body, (size_t)(nl - body));
        key_id[nl - body] = '\0';
        len = size - (size_t)(nl - body) - 1;
        body = nl + 1;
    }
    struct keycache_doc d;
    if (keycache_parse_key_doc(body, len, key_id, &d, &e) == 0) {
        REQUIRE(d.key && d.owner);
        keycache_doc_clear(&d);
    }

    /* short inputs as a time and a URL */
    if (size < 128) {
        char s[128];
        memcpy(s, data, size);
        s[size] = '\0';
        int64_t us;
        (void)inbound_parse_time(s, &us);
        check_url(s);
    }
    return 0;
}
