/* tests/unit/test_sign_unit.c: sign/ helpers, keys, round trips in both dialects, and the
 * negative twin of each positive case: every covered component altered, stale dates,
 * garbage, truncated, duplicated and enormous header values. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sign/internal.h"
#include "sign/sign.h"
#include "tests/check.h"

/* The body and digests of draft-cavage-12 Appendix C and RFC 9421 Appendix B.2. */
#define BODY        "{\"hello\": \"world\"}"
#define BODY_SHA256 "X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="
#define BODY_SHA512                                                                                \
    "WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew=="
/* RFC 9421 B.1.4 test-key-ed25519; its multibase form computed with an independent
 * base58btc implementation (Python) over 0xed 0x01 + the raw key. */
#define ED_PUB_PEM                                                                                 \
    "-----BEGIN PUBLIC KEY-----\n"                                                                 \
    "MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=\n"                               \
    "-----END PUBLIC KEY-----\n"
#define ED_MULTIBASE "z6Mkh4LmfP1ev9MNPGr7JbEbtD6BD4fsu1duEj83PMCs3xHG"

#define NOW 1700000000L
#define BIG (1024 * 1024)

static void test_helpers(void)
{
    char date[32], d[SIGN_DIGEST_MAX];
    time_t t;
    unsigned char buf[8];

    /* RFC 9110 section 5.6.7 example */
    sign_http_date(784111777, date);
    CHECK_STR(date, "Sun, 06 Nov 1994 08:49:37 GMT", "IMF-fixdate of 784111777");
    sign_http_date(784111778, date); /* a thread's last second is kept: another, then back */
    CHECK_STR(date, "Sun, 06 Nov 1994 08:49:38 GMT", "the next second");
    sign_http_date(784111777, date);
    CHECK_STR(date, "Sun, 06 Nov 1994 08:49:37 GMT", "the second before, again");
    CHECK(sign_parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT", &t) == 0 && t == 784111777,
          "IMF-fixdate parses back");
    CHECK(sign_parse_http_date("Mon, 06 Nov 1994 08:49:37 GMT", &t) < 0, "wrong weekday fails");
    CHECK(sign_parse_http_date("Sun, 06 Nov 1994 08:49:37 UTC", &t) < 0, "non-GMT zone fails");
    CHECK(sign_parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT", &t) < 0, "RFC 850 form fails");
    CHECK(sign_parse_http_date("Sat, 31 Feb 2024 08:49:37 GMT", &t) < 0, "31 February fails");
    CHECK(sign_parse_http_date("Sun, 06 Nov 1994 08:49:60 GMT", &t) < 0,
          "second 60 fails (it would read as 08:50:00; the fuzzer found it)");
    CHECK(sign_parse_http_date("Sun, 06 Nov 1994 08:49:59 GMT", &t) == 0 && t == 784111799,
          "second 59 parses");
    CHECK(sign_parse_http_date("", &t) < 0 && sign_parse_http_date(NULL, &t) < 0,
          "empty date fails");

    sign_digest(BODY, strlen(BODY), d);
    CHECK_STR(d, "SHA-256=" BODY_SHA256, "Digest of the Appendix C body");
    sign_content_digest(BODY, strlen(BODY), d);
    CHECK_STR(d, "sha-256=:" BODY_SHA256 ":", "Content-Digest of the same body");
    CHECK(sign_digest_check("SHA-256=" BODY_SHA256, BODY, strlen(BODY)) == SIGN_OK,
          "Digest check ok");
    CHECK(sign_digest_check("sha-256=" BODY_SHA256, BODY, strlen(BODY)) == SIGN_OK,
          "Digest algorithm name is case-insensitive");
    CHECK(sign_digest_check("MD5=abc=, SHA-256=" BODY_SHA256, BODY, strlen(BODY)) == SIGN_OK,
          "Digest: other members ignored");
    CHECK(sign_digest_check("SHA-256=" BODY_SHA256, BODY "x", strlen(BODY) + 1) == SIGN_ERR_DIGEST,
          "Digest of another body: digest");
    CHECK(sign_digest_check("SHA-512=" BODY_SHA512, BODY, strlen(BODY)) == SIGN_ERR_ALGORITHM,
          "Digest without SHA-256: algorithm");
    CHECK(sign_digest_check("SHA-256=!!!", BODY, strlen(BODY)) == SIGN_ERR_SYNTAX,
          "Digest garbage: syntax");
    CHECK(sign_digest_check("SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWx", BODY, strlen(BODY)) ==
              SIGN_ERR_SYNTAX,
          "Digest truncated: syntax");
    CHECK(sign_digest_check("SHA-256=" BODY_SHA256 ",SHA-256=" BODY_SHA256, BODY, strlen(BODY)) ==
              SIGN_ERR_SYNTAX,
          "Digest duplicated: syntax");
    CHECK(sign_content_digest_check("sha-512=:" BODY_SHA512 ":", BODY, strlen(BODY)) == SIGN_OK,
          "Content-Digest sha-512 (RFC 9421 B.2) ok");
    CHECK(sign_content_digest_check("sha-256=:" BODY_SHA256 ":, sha-512=:" BODY_SHA512 ":", BODY,
                                    strlen(BODY)) == SIGN_OK,
          "Content-Digest with both ok");
    CHECK(sign_content_digest_check("sha-256=:" BODY_SHA256 ":", "{}", 2) == SIGN_ERR_DIGEST,
          "Content-Digest of another body: digest");
    CHECK(sign_content_digest_check("md5=:AAAA:", BODY, strlen(BODY)) == SIGN_ERR_ALGORITHM,
          "Content-Digest without sha-256/512: algorithm");
    CHECK(sign_content_digest_check("sha-256=" BODY_SHA256, BODY, strlen(BODY)) == SIGN_ERR_SYNTAX,
          "Content-Digest without colons: syntax");
    CHECK(sign_content_digest_check("sha-256=:" BODY_SHA256 ":, sha-256=:" BODY_SHA256 ":", BODY,
                                    strlen(BODY)) == SIGN_ERR_SYNTAX,
          "Content-Digest duplicated: syntax");
    {
        char *big = malloc(BIG + 1);
        memset(big, 'A', BIG);
        memcpy(big, "SHA-256=", 8);
        big[BIG] = '\0';
        CHECK(sign_digest_check(big, BODY, strlen(BODY)) == SIGN_ERR_SYNTAX, "1 MB Digest: syntax");
        memcpy(big, "sha-256=:", 9);
        CHECK(sign_content_digest_check(big, BODY, strlen(BODY)) == SIGN_ERR_SYNTAX,
              "1 MB Content-Digest: syntax");
        free(big);
    }
    CHECK(sign_b64_decode("Zm9v", 4, buf, sizeof(buf)) == 3, "base64 decodes");
    CHECK(sign_b64_decode("Zm9", 3, buf, sizeof(buf)) < 0, "base64 without padding fails");
    CHECK(sign_b64_decode("Zm9=", 4, buf, sizeof(buf)) < 0, "base64 non-canonical bits fail");
    CHECK(strcmp(sign_verdict_name(SIGN_ERR_NOT_COVERED), "not_covered") == 0 &&
              strcmp(sign_verdict_name(99), "unknown") == 0,
          "verdict names");
}

static void test_keys(void)
{
    struct flood_err err = {0, ""};
    struct sign_key *k, *k2;
    char *pem, *pub, *pub2, *mb;

    k = sign_key_from_pem(ED_PUB_PEM, 0, &err);
    CHECK(k && sign_key_type(k) == SIGN_KEY_ED25519 && !sign_key_is_private(k),
          "Ed25519 SPKI public key loads");
    mb = k ? sign_key_multibase(k, &err) : NULL;
    CHECK_STR(mb, ED_MULTIBASE, "FEP-521a publicKeyMultibase of RFC 9421 test-key-ed25519");
    k2 = sign_key_from_multibase(ED_MULTIBASE, &err);
    pub = k ? sign_key_public_pem(k, &err) : NULL;
    pub2 = k2 ? sign_key_public_pem(k2, &err) : NULL;
    CHECK(pub && pub2 && strcmp(pub, pub2) == 0, "multibase parses back to the same key");
    free(mb), free(pub), free(pub2);
    sign_key_free(k), sign_key_free(k2);
    CHECK(sign_key_from_multibase("z6Mkh4LmfP1ev9MNPGr7JbEbtD6BD4fsu1duEj83PMCs3xH0", &err) == NULL,
          "multibase with a non-base58 character fails");
    CHECK(sign_key_from_multibase("z6Mkh4LmfP1ev9MNPGr7JbEbtD6BD4fsu1duEj83PMCs3x", &err) == NULL,
          "truncated multibase fails");
    CHECK(sign_key_from_multibase("f00", &err) == NULL, "non-z multibase fails");
    CHECK(sign_key_from_pem("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", 0,
                            &err) == NULL,
          "garbage PEM fails: %s", err.msg);
    CHECK(sign_key_from_pem("", 0, &err) == NULL, "empty PEM fails");

    k = sign_key_generate(SIGN_KEY_RSA, 2048, &err);
    CHECK(k && sign_key_type(k) == SIGN_KEY_RSA && sign_key_is_private(k), "RSA-2048 generated");
    pem = k ? sign_key_private_pem(k, &err) : NULL;
    CHECK(pem && strstr(pem, "BEGIN PRIVATE KEY"), "private key written as PKCS#8");
    k2 = pem ? sign_key_from_pem(pem, 0, &err) : NULL;
    pub = k ? sign_key_public_pem(k, &err) : NULL;
    pub2 = k2 ? sign_key_public_pem(k2, &err) : NULL;
    CHECK(pub && pub2 && strcmp(pub, pub2) == 0 && strstr(pub, "BEGIN PUBLIC KEY"),
          "PKCS#8 round trip keeps the key, public key as SPKI");
    CHECK(k && sign_key_multibase(k, &err) == NULL, "no multibase form for RSA");
    free(pem), free(pub), free(pub2);
    sign_key_free(k), sign_key_free(k2);
    CHECK(sign_key_generate(SIGN_KEY_RSA, 512, &err) == NULL, "RSA-512 refused");
}

/* ---- round trips and their negative twins ---------------------------------------------- */

struct fixture {
    struct sign_header h[16];
    size_t n;
    struct sign_msg msg;
    struct sign_out out;
    char body[64];
};

/* Sign a POST (or GET) and turn the produced lines into headers of msg. */
static int make(struct fixture *f, enum sign_dialect dialect, const struct sign_key *key,
                const char *method, time_t now)
{
    struct sign_params p = {dialect, key, "https://a.test/users/x#main-key", now};
    struct flood_err err = {0, ""};
    size_t i;
    memset(f, 0, sizeof(*f));
    strcpy(f->body, BODY);
    f->h[f->n++] = (struct sign_header){"Content-Type", "application/activity+json"};
    f->msg = (struct sign_msg){method,
                               "https",
                               "b.test",
                               "/inbox?x=1",
                               f->h,
                               f->n,
                               strcmp(method, "GET") ? f->body : NULL,
                               strcmp(method, "GET") ? strlen(f->body) : 0};
    if (sign_request(&p, &f->msg, &f->out, &err) < 0) {
        printf("# sign_request: %s\n", err.msg);
        return -1;
    }
    for (i = 0; i < f->out.n; i++) {
        char *c = strchr(f->out.lines[i], ':');
        *c = '\0';
        f->h[f->n++] = (struct sign_header){f->out.lines[i], c + 2};
    }
    f->msg.n_headers = f->n;
    return 0;
}

static void unmake(struct fixture *f)
{
    size_t i;
    for (i = 0; i < f->out.n; i++) /* put the ": " back so sign_out_free frees whole lines */
        f->out.lines[i][strlen(f->out.lines[i])] = ':';
    sign_out_free(&f->out);
}

static int verify(const struct sign_msg *msg, const struct sign_key *key, time_t now,
                  struct flood_err *err)
{
    struct sign_parsed *sp = NULL;
    int v = sign_parse(msg, &sp, err);
    if (v == SIGN_OK)
        v = sign_verify(sp, msg, key, now, 3600, err);
    sign_parsed_free(sp);
    return v;
}

static struct sign_header *hdr(struct fixture *f, const char *name)
{
    size_t i;
    for (i = 0; i < f->n; i++)
        if (strcasecmp(f->h[i].name, name) == 0)
            return &f->h[i];
    return NULL;
}

static void twins(const char *tag, enum sign_dialect dialect, const struct sign_key *key,
                  const struct sign_key *other)
{
    struct fixture f;
    struct flood_err err = {0, ""};
    int v;
    const char *digest_name = dialect == SIGN_CAVAGE ? "Digest" : "Content-Digest";
    char date[32];

    if (make(&f, dialect, key, "POST", NOW) < 0) {
        CHECK(0, "%s: sign_request", tag);
        return;
    }
    CHECK(f.out.n == (dialect == SIGN_CAVAGE ? 4u : 5u), "%s: %zu header lines", tag, f.out.n);
    v = verify(&f.msg, key, NOW + 10, &err);
    CHECK(v == SIGN_OK, "%s: POST round trip verifies (%s)", tag, v ? err.msg : "ok");
    {
        struct sign_parsed *sp = NULL;
        CHECK(sign_parse(&f.msg, &sp, &err) == SIGN_OK && sp &&
                  sign_parsed_dialect(sp) == dialect &&
                  strcmp(sign_parsed_key_id(sp), "https://a.test/users/x#main-key") == 0,
              "%s: parsed dialect and key id", tag);
        sign_parsed_free(sp);
    }

#define TWIN(what, field, newval, want)                                                            \
    do {                                                                                           \
        const char *saved_ = (field);                                                              \
        (field) = (newval);                                                                        \
        v = verify(&f.msg, key, NOW, &err);                                                        \
        CHECK(v == (want), "%s: %s altered -> %s (got %s: %s)", tag, what,                         \
              sign_verdict_name(want), sign_verdict_name(v), err.msg);                             \
        (field) = saved_;                                                                          \
    } while (0)

    TWIN("method", f.msg.method, "PUT", SIGN_ERR_MISMATCH);
    TWIN("path", f.msg.path, "/outbox?x=1", SIGN_ERR_MISMATCH);
    TWIN("query", f.msg.path, "/inbox?x=2", SIGN_ERR_MISMATCH);
    TWIN("host", hdr(&f, "host")->value, "c.test",
         dialect == SIGN_CAVAGE ? SIGN_ERR_MISMATCH : SIGN_OK);
    TWIN("authority", f.msg.authority, "c.test",
         dialect == SIGN_CAVAGE ? SIGN_OK : SIGN_ERR_MISMATCH);
    sign_http_date(NOW + 1, date);
    TWIN("date", hdr(&f, "date")->value, date,
         dialect == SIGN_CAVAGE ? SIGN_ERR_MISMATCH : SIGN_OK);
    TWIN("body", f.msg.body, "{\"hello\": \"World\"}", SIGN_ERR_DIGEST);
    TWIN(digest_name, hdr(&f, digest_name)->value,
         dialect == SIGN_CAVAGE ? "SHA-256=" BODY_SHA512 : "sha-256=:" BODY_SHA256 "x:",
         dialect == SIGN_CAVAGE ? SIGN_ERR_SYNTAX : SIGN_ERR_SYNTAX);
    {
        /* the digest of another body, well-formed */
        char d[SIGN_DIGEST_MAX];
        if (dialect == SIGN_CAVAGE)
            sign_digest("{}", 2, d);
        else
            sign_content_digest("{}", 2, d);
        TWIN("digest value", hdr(&f, digest_name)->value, d, SIGN_ERR_DIGEST);
    }
    TWIN("content-type", hdr(&f, "content-type")->value, "text/html",
         dialect == SIGN_CAVAGE ? SIGN_ERR_MISMATCH : SIGN_OK);
    if (dialect == SIGN_RFC9421) {
        /* keyid is inside the signed parameters */
        char *si = strdup(hdr(&f, "signature-input")->value), *at = strstr(si, "x#main-key");
        at[0] = 'y';
        TWIN("keyid", hdr(&f, "signature-input")->value, si, SIGN_ERR_MISMATCH);
        free(si);
        sign_http_date(NOW, date);
    }
    /* a keyId naming another actor makes the verifier use another key */
    v = verify(&f.msg, other, NOW, &err);
    CHECK(v == SIGN_ERR_MISMATCH || v == SIGN_ERR_ALGORITHM, "%s: another key -> mismatch (%s)",
          tag, sign_verdict_name(v));
    v = verify(&f.msg, key, NOW + 7200, &err);
    CHECK(v == SIGN_ERR_DATE, "%s: two hours later -> date (%s)", tag, err.msg);
    v = verify(&f.msg, key, NOW - 7200, &err);
    CHECK(v == SIGN_ERR_DATE, "%s: two hours earlier -> date (%s)", tag, err.msg);
    {
        struct sign_parsed *sp = NULL;
        CHECK(sign_parse(&f.msg, &sp, &err) == SIGN_OK &&
                  sign_verify(sp, &f.msg, NULL, NOW, 3600, &err) == SIGN_ERR_KEY,
              "%s: no key -> key", tag);
        sign_parsed_free(sp);
    }
    unmake(&f);

    /* A GET carries no digest and still verifies; host must be covered. */
    if (make(&f, dialect, key, "GET", NOW) == 0) {
        v = verify(&f.msg, key, NOW, &err);
        CHECK(v == SIGN_OK && !hdr(&f, digest_name), "%s: GET round trip (%s)", tag,
              v ? err.msg : "ok");
        TWIN("GET method", f.msg.method, "POST", SIGN_ERR_NOT_COVERED);
        unmake(&f);
    }
#undef TWIN
}

/* Hostile Signature headers on an otherwise valid cavage POST. */
static void hostile(const struct sign_key *key)
{
    struct fixture f;
    struct flood_err err = {0, ""};
    struct sign_header *sig;
    const char *orig;
    char *buf, *big;
    int v;
    static const char *const bad[] = {
        "",
        "garbage",
        "keyId=",
        "keyId=\"a\",signature=\"",
        "keyId=\"a\",signature=\"!!!!\"",
        "keyId=\"a\",headers=\"date\"",
        "signature=\"AAAA\"",
        "keyId=\"a\",keyId=\"b\",signature=\"AAAA\"",
        "keyId=\"a\",algorithm=\"rsa-sha1\",headers=\"(request-target) host date digest\","
        "signature=\"AAAA\"",
        "keyId=\"a\",headers=\"\",signature=\"AAAA\"",
        "keyId=\"a\",headers=\"date\",signature=\"AAAA\",",
        "keyId=\"a\" signature=\"AAAA\"",
    };
    size_t i;
    if (make(&f, SIGN_CAVAGE, key, "POST", NOW) < 0)
        return;
    sig = hdr(&f, "signature");
    orig = sig->value;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        sig->value = bad[i];
        v = verify(&f.msg, key, NOW, &err);
        CHECK(v != SIGN_OK, "cavage: hostile Signature '%s' -> %s (%s)", bad[i],
              sign_verdict_name(v), err.msg);
    }
    /* truncated: the real header cut in half */
    buf = strdup(orig);
    buf[strlen(buf) / 2] = '\0';
    sig->value = buf;
    v = verify(&f.msg, key, NOW, &err);
    CHECK(v == SIGN_ERR_SYNTAX, "cavage: truncated Signature -> syntax (%s)", err.msg);
    free(buf);
    /* a signed header absent from the message */
    buf = flood_xasprintf("%s", orig);
    sig->value = orig;
    f.h[0].name = "X-Other"; /* Content-Type gone */
    v = verify(&f.msg, key, NOW, &err);
    CHECK(v == SIGN_ERR_NOT_COVERED, "cavage: signed content-type absent -> not_covered (%s)",
          err.msg);
    f.h[0].name = "Content-Type";
    free(buf);
    /* duplicated Signature header */
    f.h[f.n++] = (struct sign_header){"Signature", orig};
    f.msg.n_headers = f.n;
    v = verify(&f.msg, key, NOW, &err);
    CHECK(v == SIGN_ERR_SYNTAX, "cavage: two Signature headers -> syntax (%s)", err.msg);
    f.n--;
    f.msg.n_headers = f.n;
    /* enormous: 1 MB of header value */
    big = malloc(BIG + 1);
    memset(big, 'a', BIG);
    big[BIG] = '\0';
    sig->value = big;
    v = verify(&f.msg, key, NOW, &err);
    CHECK(v == SIGN_ERR_SYNTAX, "cavage: 1 MB Signature -> syntax (%s)", err.msg);
    sig->value = orig;
    hdr(&f, "content-type")->value = big;
    v = verify(&f.msg, key, NOW, &err);
    CHECK(v == SIGN_ERR_SYNTAX, "cavage: 1 MB signed header -> syntax (%s)", err.msg);
    hdr(&f, "content-type")->value = "application/activity+json";
    free(big);
    /* a line break smuggled into a signed header */
    hdr(&f, "content-type")->value = "text/html\ndigest: x";
    v = verify(&f.msg, key, NOW, &err);
    CHECK(v == SIGN_ERR_SYNTAX, "cavage: header with a line break -> syntax (%s)", err.msg);
    hdr(&f, "content-type")->value = "application/activity+json";
    /* no signature at all */
    sig->name = "X-Signature";
    v = verify(&f.msg, key, NOW, &err);
    CHECK(v == SIGN_ERR_MISSING, "cavage: no Signature -> missing");
    sig->name = "Signature";
    /* a POST whose signature does not cover digest */
    {
        char *s = strdup(orig), *d = strstr(s, " digest");
        memmove(d, d + 7, strlen(d + 7) + 1);
        sig->value = s;
        v = verify(&f.msg, key, NOW, &err);
        CHECK(v == SIGN_ERR_NOT_COVERED, "cavage: POST without digest covered -> not_covered (%s)",
              err.msg);
        free(s);
        sig->value = orig;
    }
    unmake(&f);
}

static void hostile_rfc9421(const struct sign_key *key)
{
    struct fixture f;
    struct flood_err err = {0, ""};
    struct sign_header *si, *sg;
    const char *oi, *og;
    char *big;
    int v;
    size_t i;
    static const char *const bad_input[] = {
        "",
        "sig1",
        "sig1=(",
        "sig1=(\"@method\" \"@method\");created=1;keyid=\"k\"",
        "sig1=(\"@method\";sf);created=1;keyid=\"k\"",
        "sig1=(\"Content-Type\");created=1;keyid=\"k\"",
        "sig1=(\"@signature-params\");created=1;keyid=\"k\"",
        "sig1=(\"@status\");created=1;keyid=\"k\"",
        "sig1=();created=\"1\";keyid=\"k\"",
        "sig1=();created=1",
        "sig1=(@method);created=1;keyid=\"k\"",
        "sig1=();created=1;keyid=\"k\", sig1=();created=1;keyid=\"k\"",
        "sig1=();created=1;keyid=\"k\",",
        "sig2=(\"@method\");created=1;keyid=\"k\"",
    };
    if (make(&f, SIGN_RFC9421, key, "POST", NOW) < 0)
        return;
    si = hdr(&f, "signature-input");
    sg = hdr(&f, "signature");
    oi = si->value;
    og = sg->value;
    for (i = 0; i < sizeof(bad_input) / sizeof(bad_input[0]); i++) {
        si->value = bad_input[i];
        v = verify(&f.msg, key, NOW, &err);
        CHECK(v != SIGN_OK, "rfc9421: hostile Signature-Input '%s' -> %s (%s)", bad_input[i],
              sign_verdict_name(v), err.msg);
    }
    si->value = oi;
    sg->value = "sig1=:AAAA";
    v = verify(&f.msg, key, NOW, &err);
    CHECK(v == SIGN_ERR_SYNTAX, "rfc9421: truncated Signature -> syntax (%s)", err.msg);
    sg->value = "sig1=\"AAAA\"";
    v = verify(&f.msg, key, NOW, &err);
    CHECK(v == SIGN_ERR_SYNTAX, "rfc9421: Signature not a byte sequence -> syntax");
    sg->value = "sig1=:AAAA:";
    v = verify(&f.msg, key, NOW, &err);
    CHECK(v == SIGN_ERR_MISMATCH, "rfc9421: wrong signature bytes -> mismatch (%s)", err.msg);
    big = malloc(BIG + 1);
    memset(big, 'a', BIG);
    memcpy(big, "sig1=:", 6);
    big[BIG] = '\0';
    sg->value = big;
    v = verify(&f.msg, key, NOW, &err);
    CHECK(v == SIGN_ERR_SYNTAX, "rfc9421: 1 MB Signature -> syntax (%s)", err.msg);
    free(big);
    sg->value = og;
    /* duplicated Signature-Input lines are joined into one dictionary: duplicate key */
    f.h[f.n++] = (struct sign_header){"Signature-Input", oi};
    f.msg.n_headers = f.n;
    v = verify(&f.msg, key, NOW, &err);
    CHECK(v == SIGN_ERR_SYNTAX, "rfc9421: duplicated Signature-Input -> syntax (%s)", err.msg);
    f.n--;
    f.msg.n_headers = f.n;
    /* a second signature with another label after ours: the first is used */
    {
        char *two = flood_xasprintf("%s, sig2=(\"@method\");created=1;keyid=\"other\"", oi);
        char *twos = flood_xasprintf("%s, sig2=:AAAA:", og);
        struct sign_parsed *sp = NULL;
        si->value = two;
        sg->value = twos;
        v = verify(&f.msg, key, NOW, &err);
        CHECK(v == SIGN_OK, "rfc9421: first of two signatures verifies (%s)", v ? err.msg : "ok");
        CHECK(sign_parse_label(&f.msg, "sig2", &sp, &err) == SIGN_OK &&
                  strcmp(sign_parsed_key_id(sp), "other") == 0 &&
                  strcmp(sign_parsed_label(sp), "sig2") == 0,
              "rfc9421: a signature chosen by label");
        sign_parsed_free(sp);
        CHECK(sign_parse_label(&f.msg, "sig9", &sp, &err) == SIGN_ERR_MISSING,
              "rfc9421: unknown label -> missing");
        si->value = oi;
        sg->value = og;
        free(two);
        free(twos);
    }
    /* expires in the past */
    {
        char *s = flood_xasprintf("%s;expires=%ld", oi, NOW - 10);
        si->value = s;
        v = verify(&f.msg, key, NOW, &err);
        CHECK(v == SIGN_ERR_DATE, "rfc9421: expired -> date (%s)", err.msg);
        si->value = oi;
        free(s);
    }
    /* the alg parameter disagrees with the key */
    {
        char *s = strdup(oi), *a = strstr(s, "alg=\"");
        const char *other =
            sign_key_type(key) == SIGN_KEY_RSA ? "alg=\"ed25519\"" : "alg=\"rsa-v1_5-sha256\"";
        char *s2;
        *a = '\0';
        s2 = flood_xasprintf("%s%s", s, other);
        si->value = s2;
        v = verify(&f.msg, key, NOW, &err);
        CHECK(v == SIGN_ERR_ALGORITHM, "rfc9421: alg not the key's -> algorithm (%s)", err.msg);
        si->value = oi;
        free(s);
        free(s2);
    }
    unmake(&f);
}

static void test_ed25519_cavage(const struct sign_key *ed)
{
    struct fixture f;
    if (make(&f, SIGN_CAVAGE, ed, "POST", NOW) == 0) {
        CHECK(strstr(hdr(&f, "signature")->value, "algorithm=\"hs2019\"") != NULL,
              "Ed25519 cavage signature says hs2019");
        {
            char *s = strdup(hdr(&f, "signature")->value), *a = strstr(s, "hs2019");
            struct flood_err err = {0, ""};
            const char *orig = hdr(&f, "signature")->value;
            char *s2;
            *a = '\0';
            s2 = flood_xasprintf("%srsa-sha256%s", s, a + 6);
            hdr(&f, "signature")->value = s2;
            CHECK(verify(&f.msg, ed, NOW, &err) == SIGN_ERR_ALGORITHM,
                  "Ed25519 key with algorithm rsa-sha256 -> algorithm");
            hdr(&f, "signature")->value = orig;
            free(s);
            free(s2);
        }
        unmake(&f);
    }
}

/* One key shared by threads that sign at once (each signature on its own context). */
struct thread_job {
    const struct sign_key *key;
    enum sign_dialect dialect;
    int failures;
};

static void *thread_sign(void *arg)
{
    struct thread_job *job = arg;
    for (int i = 0; i < 50; i++) {
        struct fixture f;
        struct flood_err err = {0, ""};
        if (make(&f, job->dialect, job->key, "POST", NOW + i) < 0 ||
            verify(&f.msg, job->key, NOW + i, &err) != SIGN_OK)
            job->failures++;
        unmake(&f);
    }
    return NULL;
}

static void test_threads(const struct sign_key *key, const char *tag)
{
    pthread_t t[4];
    struct thread_job jobs[4];
    int failures = 0, started = 0;
    for (int i = 0; i < 4; i++) {
        jobs[i] = (struct thread_job){key, i % 2 ? SIGN_RFC9421 : SIGN_CAVAGE, 0};
        if (pthread_create(&t[i], NULL, thread_sign, &jobs[i]) == 0)
            started++;
        else
            break;
    }
    for (int i = 0; i < started; i++) {
        pthread_join(t[i], NULL);
        failures += jobs[i].failures;
    }
    CHECK(started == 4 && failures == 0, "%s: 4 threads x 50 signatures with one key: %d failed",
          tag, failures);
}

int main(void)
{
    struct flood_err err = {0, ""};
    struct sign_key *rsa, *rsa2, *ed, *ed2;
    test_helpers();
    test_keys();
    rsa = sign_key_generate(SIGN_KEY_RSA, 2048, &err);
    rsa2 = sign_key_generate(SIGN_KEY_RSA, 2048, &err);
    ed = sign_key_generate(SIGN_KEY_ED25519, 0, &err);
    ed2 = sign_key_generate(SIGN_KEY_ED25519, 0, &err);
    CHECK(rsa && rsa2 && ed && ed2, "keys generated");
    if (rsa && rsa2 && ed && ed2) {
        twins("cavage/rsa", SIGN_CAVAGE, rsa, rsa2);
        twins("cavage/ed25519", SIGN_CAVAGE, ed, ed2);
        twins("rfc9421/rsa", SIGN_RFC9421, rsa, rsa2);
        twins("rfc9421/ed25519", SIGN_RFC9421, ed, ed2);
        hostile(rsa);
        hostile_rfc9421(rsa);
        hostile_rfc9421(ed);
        test_ed25519_cavage(ed);
        test_threads(rsa, "rsa");
        test_threads(ed, "ed25519");
    }
    sign_key_free(rsa);
    sign_key_free(rsa2);
    sign_key_free(ed);
    sign_key_free(ed2);
    return check_done();
}
