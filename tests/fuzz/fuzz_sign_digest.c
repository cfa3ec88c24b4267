/* tests/fuzz/fuzz_sign_digest.c: the Digest and Content-Digest header checks, and the
 * IMF-fixdate parser. The input is the header value. */
#include <time.h>

#include "tests/fuzz/fuzz_sign_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_str(data, size);
    time_t t;
    (void)sign_digest_check(s, FUZZ_BODY, strlen(FUZZ_BODY));
    (void)sign_content_digest_check(s, FUZZ_BODY, strlen(FUZZ_BODY));
    (void)sign_content_digest_check(s, NULL, 0);
    if (sign_parse_http_date(s, &t) == 0) {
        char back[32];
        sign_http_date(t, back);
        if (strcmp(back, s) != 0) /* a date that parses prints back the same */
            abort();
    }
    free(s);
    return 0;
}
