/* tests/unit/test_wf_png.c: the streaming PNG generator (webfinger/png.c). Every image is
 * decoded by an independent decoder, tests/tools/png_check.py (Python's zlib and struct):
 * size, chunk CRCs, dimensions, colour, Adler-32. The generator's output must not depend
 * on how it is read (chunks of 1 byte or of 1 MiB give the same bytes). */
#include "tests/check.h"
#include "webfinger/media.h"
#include "webfinger/png.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The whole image read in chunks of `chunk` bytes; a new buffer, its length in *len. */
static uint8_t *make(const struct wf_media *m, size_t chunk, uint64_t *len)
{
    struct wf_png p;
    wf_png_init(&p, m);
    size_t cap = (size_t)m->bytes + chunk + 16, n = 0, got;
    uint8_t *buf = malloc(cap);
    while (buf && n < cap && (got = wf_png_read(&p, buf + n, cap - n < chunk ? cap - n : chunk)))
        n += got;
    *len = n;
    return buf;
}

/* Decode with the independent checker: 1 when it says ok. */
static int decodes(const struct wf_media *m, const uint8_t *buf, uint64_t len)
{
    char path[] = "/tmp/flood_png_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 0;
    int ok = write(fd, buf, (size_t)len) == (ssize_t)len;
    close(fd);
    uint8_t rgb[3];
    wf_media_rgb(m->id, rgb);
    char cmd[512];
    snprintf(cmd, sizeof(cmd),
             "python3 tests/tools/png_check.py %s %u %u %u %u %u %" PRIu64 " >/dev/null", path,
             m->width, m->height, rgb[0], rgb[1], rgb[2], m->bytes);
    ok = ok && system(cmd) == 0;
    unlink(path);
    return ok;
}

static void test_image(const struct wf_media *m, const char *what)
{
    uint64_t len = 0, len1 = 0;
    uint8_t *a = make(m, 65536, &len);
    CHECK(a && len == m->bytes, "%s: %" PRIu64 " bytes made, exactly as the URL says", what, len);
    CHECK(a && decodes(m, a, len), "%s: %ux%u decodes, one colour, CRCs and Adler-32 hold", what,
          m->width, m->height);
    if (m->bytes < 400000) {
        uint8_t *b = make(m, 1, &len1);
        CHECK(b && len1 == len && !memcmp(a, b, (size_t)len),
              "%s: read a byte at a time, the same bytes", what);
        free(b);
        b = make(m, 7919, &len1);
        CHECK(b && len1 == len && !memcmp(a, b, (size_t)len),
              "%s: read 7919 bytes at a time, the same bytes", what);
        free(b);
    }
    free(a);
}

int main(void)
{
    struct wf_media m;
    const char *names[] = {"1x1 minimum", "3x2 minimum", "1x1 padded by one empty chunk"};
    struct wf_media fixed[] = {
        {7, 1, 1, 0},
        {8, 3, 2, 0},
        {9, 1, 1, 0},
    };
    fixed[0].bytes = wf_media_min_bytes(1, 1);
    fixed[1].bytes = wf_media_min_bytes(3, 2);
    fixed[2].bytes = wf_media_min_bytes(1, 1) + 12;
    for (int i = 0; i < 3; i++)
        test_image(&fixed[i], names[i]);

    /* a row longer than a stored block, and a block boundary inside a row */
    m = (struct wf_media){11, 30000, 2, 0};
    m.bytes = wf_media_min_bytes(m.width, m.height) + 1000;
    test_image(&m, "30000x2, rows over a stored block, padded");

    wf_media_of_actor(1, 1, 1, &m);
    test_image(&m, "avatar");
    wf_media_of_actor(1, 1, 0, &m);
    test_image(&m, "header");
    wf_media_of_emoji("blobcat", &m);
    test_image(&m, "emoji");
    wf_media_of_page(42, &m);
    test_image(&m, "page image");
    wf_media_fit(5, 20 * 1000 * 1000, 4, 3, &m);
    test_image(&m, "20 MB photo");

    /* reading past the end gives nothing */
    struct wf_png p;
    uint8_t buf[4096];
    wf_png_init(&p, &fixed[0]);
    uint64_t total = 0;
    size_t got;
    while ((got = wf_png_read(&p, buf, sizeof(buf))))
        total += got;
    CHECK(total == fixed[0].bytes && wf_png_read(&p, buf, sizeof(buf)) == 0 &&
              p.pos == fixed[0].bytes,
          "after the end, reads give 0");
    return check_done();
}
