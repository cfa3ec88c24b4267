/* tests/fuzz/fuzz_sign_rfc9421.c: the RFC 9421 Signature-Input and Signature parsers
 * (RFC 8941 dictionaries), the signature base and the verifier. The input's first line is
 * the Signature-Input value, the rest the Signature value. */
#include "tests/fuzz/fuzz_sign_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_str(data, size), *nl = strchr(s, '\n');
    const char *sig = "";
    if (nl) {
        *nl = '\0';
        sig = nl + 1;
    }
    {
        struct sign_header h[] = {
            {"Host", "example.com"},
            {"Date", "Tue, 20 Apr 2021 02:07:55 GMT"},
            {"Content-Type", "application/json"},
            {"Content-Digest", "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:"},
            {"Content-Length", "18"},
            {"Signature-Input", s},
            {"Signature", sig},
        };
        struct sign_msg msg = {"POST", "https", "example.com", "/foo?param=Value&Pet=dog",
                               h,      7,       FUZZ_BODY,     strlen(FUZZ_BODY)};
        struct sign_parsed *sp = NULL;
        struct flood_err err;
        char *base;
        fuzz_check(&msg);
        /* choose by label too */
        if (sign_parse_label(&msg, "sig1", &sp, &err) == SIGN_OK)
            (void)sign_verify(sp, &msg, fuzz_key(), 1618884473, 3600, &err);
        sign_parsed_free(sp);
        /* the base builder takes a member value directly */
        base = sign_rfc9421_base(&msg, s, &err);
        free(base);
    }
    free(s);
    return 0;
}
