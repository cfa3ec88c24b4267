/* tests/fuzz/fuzz_sign_common.h: a fixed signed-POST context shared by the sign/ fuzz
 * harnesses. The key is RFC 9421 B.1.4 test-key-ed25519 (public): verification is cheap,
 * so the fuzzer spends its time in the parsers. */
#ifndef FLOOD_FUZZ_SIGN_COMMON_H
#define FLOOD_FUZZ_SIGN_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sign/sign.h"

#define FUZZ_BODY "{\"hello\": \"world\"}"

static const struct sign_key *fuzz_key(void)
{
    static struct sign_key *key;
    if (!key) {
        struct flood_err err;
        key = sign_key_from_pem("-----BEGIN PUBLIC KEY-----\n"
                                "MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=\n"
                                "-----END PUBLIC KEY-----\n",
                                0, &err);
        if (!key)
            abort();
    }
    return key;
}

/* Parse and verify msg; any verdict is fine, a crash or a leak is not. */
static void fuzz_check(const struct sign_msg *msg)
{
    struct sign_parsed *sp = NULL;
    struct flood_err err;
    int v = sign_parse(msg, &sp, &err);
    if (v == SIGN_OK) {
        char *base;
        (void)sign_parsed_key_id(sp);
        (void)sign_parsed_algorithm(sp);
        (void)sign_verify(sp, msg, fuzz_key(), 1618884473, 3600, &err);
        (void)sign_verify_signature(sp, msg, fuzz_key(), &err);
        base = sign_parsed_base(sp, msg, &err);
        free(base);
    }
    sign_parsed_free(sp);
}

/* A NUL-terminated copy of the input (owned; free it). */
static char *fuzz_str(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

#endif
