/* tests/fuzz/fuzz_sign_cavage.c: the draft-cavage Signature header parser and verifier.
 * The input is the Signature header value of an otherwise well-formed POST. */
#include "tests/fuzz/fuzz_sign_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_str(data, size);
    struct sign_header h[] = {
        {"Host", "example.com"},
        {"Date", "Tue, 20 Apr 2021 02:07:55 GMT"},
        {"Content-Type", "application/json"},
        {"Digest", "SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="},
        {"Signature", s},
    };
    struct sign_msg msg = {"POST", "https", "example.com", "/foo?param=value&pet=dog",
                           h,      5,       FUZZ_BODY,     strlen(FUZZ_BODY)};
    fuzz_check(&msg);
    /* the same value as "Authorization: Signature ..." */
    h[4].name = "Authorization";
    fuzz_check(&msg);
    free(s);
    return 0;
}
