/* sign/digest.c: Digest (RFC 3230, "SHA-256=<b64>") and Content-Digest (RFC 9530,
 * "sha-256=:<b64>:"), made and checked. */
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sign/internal.h"

/* md of body (NULL: the empty body) into out. EVP_Digest fails only when OpenSSL itself is
 * unusable (no provider offers SHA-2, out of memory), never for any input: like an allocation
 * failure, that aborts with a message rather than sign or check with a made-up digest. */
static void digest_of(const EVP_MD *md, const void *body, size_t len, unsigned char *out,
                      unsigned out_len)
{
    unsigned n = 0;
    if (!md || EVP_Digest(body ? body : (const void *)"", len, out, &n, md, NULL) != 1 ||
        n != out_len) {
        fprintf(stderr, "sign: OpenSSL cannot compute %s\n", md ? EVP_MD_get0_name(md) : "SHA-2");
        abort();
    }
}

void sign_digest(const void *body, size_t len, char out[SIGN_DIGEST_MAX])
{
    unsigned char md[SHA256_DIGEST_LENGTH];
    digest_of(EVP_sha256(), body, len, md, sizeof(md));
    memcpy(out, "SHA-256=", 8);
    sign_b64_encode(md, sizeof(md), out + 8);
}

void sign_content_digest(const void *body, size_t len, char out[SIGN_DIGEST_MAX])
{
    unsigned char md[SHA256_DIGEST_LENGTH];
    size_t n;
    digest_of(EVP_sha256(), body, len, md, sizeof(md));
    memcpy(out, "sha-256=:", 9);
    n = sign_b64_encode(md, sizeof(md), out + 9);
    out[9 + n] = ':';
    out[10 + n] = '\0';
}

/* Digest: a comma-separated list of <algorithm>=<encoded digest> (RFC 3230 section 4.3.2);
 * algorithm names are case-insensitive. Members other than SHA-256 are ignored. */
int sign_digest_check(const char *header, const void *body, size_t len)
{
    const char *p, *end;
    int found = 0;
    if (!header)
        return SIGN_ERR_SYNTAX;
    end = memchr(header, '\0', SIGN_HEADER_VALUE_MAX + 1);
    if (!end)
        return SIGN_ERR_SYNTAX;
    p = header;
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p)), *eq, *ve;
        const char *me = comma ? comma : end;
        while (p < me && (*p == ' ' || *p == '\t'))
            p++;
        ve = me;
        while (ve > p && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
        eq = memchr(p, '=', (size_t)(ve - p));
        if (!eq || eq == p)
            return SIGN_ERR_SYNTAX;
        if (eq - p == 7 && strncasecmp(p, "SHA-256", 7) == 0) {
            unsigned char want[SHA256_DIGEST_LENGTH], got[SHA256_DIGEST_LENGTH + 3];
            long n = sign_b64_decode(eq + 1, (size_t)(ve - eq - 1), got, sizeof(got));
            if (found)
                return SIGN_ERR_SYNTAX; /* two SHA-256 members: ambiguous */
            found = 1;
            if (n != SHA256_DIGEST_LENGTH)
                return SIGN_ERR_SYNTAX;
            digest_of(EVP_sha256(), body, len, want, sizeof(want));
            if (memcmp(want, got, sizeof(want)) != 0)
                return SIGN_ERR_DIGEST;
        }
        p = comma ? comma + 1 : end;
    }
    return found ? SIGN_OK : SIGN_ERR_ALGORITHM;
}

/* Content-Digest is an RFC 8941 Dictionary of byte sequences (RFC 9530 section 2).
 * sha-256 and sha-512 members are checked; others are ignored. */
int sign_content_digest_check(const char *header, const void *body, size_t len)
{
    struct sfv_dict d;
    const struct sfv_member *m256, *m512;
    int verdict = SIGN_OK;
    const char *end;
    if (!header)
        return SIGN_ERR_SYNTAX;
    end = memchr(header, '\0', SIGN_HEADER_VALUE_MAX + 1);
    if (!end || sfv_parse_dict(header, (size_t)(end - header), &d, NULL) < 0)
        return SIGN_ERR_SYNTAX;
    m256 = sfv_dict_get(&d, "sha-256");
    m512 = sfv_dict_get(&d, "sha-512");
    if (!m256 && !m512) {
        sfv_dict_free(&d);
        return SIGN_ERR_ALGORITHM;
    }
    if (m256) {
        unsigned char md[SHA256_DIGEST_LENGTH];
        digest_of(EVP_sha256(), body, len, md, sizeof(md));
        if (m256->is_inner || m256->item.bare.type != SFV_BYTES ||
            m256->item.bare.n_bytes != sizeof(md))
            verdict = SIGN_ERR_SYNTAX;
        else if (memcmp(md, m256->item.bare.bytes, sizeof(md)) != 0)
            verdict = SIGN_ERR_DIGEST;
    }
    if (m512 && verdict == SIGN_OK) {
        unsigned char md[SHA512_DIGEST_LENGTH];
        digest_of(EVP_sha512(), body, len, md, sizeof(md));
        if (m512->is_inner || m512->item.bare.type != SFV_BYTES ||
            m512->item.bare.n_bytes != sizeof(md))
            verdict = SIGN_ERR_SYNTAX;
        else if (memcmp(md, m512->item.bare.bytes, sizeof(md)) != 0)
            verdict = SIGN_ERR_DIGEST;
    }
    sfv_dict_free(&d);
    return verdict;
}
