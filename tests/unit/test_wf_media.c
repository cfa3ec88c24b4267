/* tests/unit/test_wf_media.c: the URLs of what the crowd serves besides documents (media,
 * pages, emoji, avatars): sizes fitted and parsed back, every refusal beside its positive
 * twin, and BlurHash digits checked against the BlurHash specification's base-83 alphabet
 * and its 1 x 1 layout (size flag, maximum AC, four DC digits). */
#include "tests/check.h"
#include "webfinger/media.h"

#include <stdio.h>
#include <string.h>

static const struct wf_crowd crowd = {
    .instances = 20,
    .actors = 10,
    .domain_template = "flood%d.test",
    .scheme = "http",
    .public_port = 8080,
    .version = "0.1.0",
};

/* PNG's layout by hand: 8 signature + 25 IHDR + IDAT (12 + zlib: 2 header, the rows with a
 * filter byte each, 5 bytes a stored block of at most 65535, 4 Adler-32) + 12 IEND. */
static void test_min_bytes(void)
{
    CHECK(wf_media_min_bytes(1, 1) == 8 + 25 + 12 + (2 + 4 + 5 + 4) + 12, "1x1: %llu",
          (unsigned long long)wf_media_min_bytes(1, 1));
    /* 100 x 100: 30100 raw bytes, one block */
    CHECK(wf_media_min_bytes(100, 100) == 57 + 2 + 30100 + 5 + 4, "100x100");
    /* 200 x 200: 120200 raw bytes, two blocks */
    CHECK(wf_media_min_bytes(200, 200) == 57 + 2 + 120200 + 10 + 4, "200x200: two blocks");
}

static void test_fit(void)
{
    static const unsigned long long sizes[] = {1, 72, 100, 5000, 60000, 1000000, 30000000};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        struct wf_media m;
        wf_media_fit(9, sizes[i], 4, 3, &m);
        uint64_t min = wf_media_min_bytes(m.width, m.height);
        CHECK(m.bytes >= min && (m.bytes == min || m.bytes - min >= 12),
              "%llu: a size the PNG can be exactly", sizes[i]);
        CHECK(sizes[i] < 84 || m.bytes == sizes[i], "%llu: the size asked for (%llu)", sizes[i],
              (unsigned long long)m.bytes);
        CHECK(m.width == 1 || wf_media_min_bytes(m.width + 1, m.height + 1) > sizes[i],
              "%llu: the largest image that fits (%ux%u)", sizes[i], m.width, m.height);
    }
    struct wf_media m;
    wf_media_fit(1, 30000000, 16, 9, &m);
    CHECK(m.width > m.height && m.width * 9 / 16 - m.height <= 1, "aspect 16:9 kept (%ux%u)",
          m.width, m.height);
}

static void test_url_parse(void)
{
    struct wf_media m = {.id = 42, .width = 100, .height = 100, .bytes = 0};
    m.bytes = wf_media_min_bytes(100, 100) + 500;
    char url[WF_URL_MAX];
    wf_media_url(&crowd, 3, &m, url);
    char want[WF_URL_MAX];
    snprintf(want, sizeof(want), "http://flood3.test:8080/media/42-100x100-%llu.png",
             (unsigned long long)m.bytes);
    CHECK_STR(url, want, "media URL");
    const char *name = strstr(url, "/media/") + 7;
    struct wf_media p;
    CHECK(wf_media_parse(name, strlen(name), &p) == 0 && p.id == 42 && p.width == 100 &&
              p.height == 100 && p.bytes == m.bytes,
          "parsed back");
    static const char *const bad[] = {
        "42-100x100.png",                  /* no size */
        "42-100x100-30000.jpg",            /* not png */
        "042-100x100-30111.png",           /* leading zero */
        "42-0x100-30111.png",              /* zero width */
        "42-100x16385-1.png",              /* too tall */
        "42-100x100-30110.png",            /* below the minimum */
        "42-100x100-30112.png",            /* above it by less than a padding chunk */
        "42-100x100-30111.pngx",           /* trailing bytes */
        "-100x100-30111.png",              /* no id */
        "18446744073709551616-1x1-72.png", /* id over 64 bits */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK(wf_media_parse(bad[i], strlen(bad[i]), &p) == -1, "refused: %s", bad[i]);
    char ok[64];
    snprintf(ok, sizeof(ok), "42-100x100-%llu.png",
             (unsigned long long)wf_media_min_bytes(100, 100));
    CHECK(wf_media_parse(ok, strlen(ok), &p) == 0, "the minimum itself is fine: %s", ok);
}

static void test_blurhash(void)
{
    static const char b83[] =
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~";
    for (uint64_t id = 0; id < 50; id++) {
        char h[WF_BLURHASH_MAX];
        wf_media_blurhash(id, h);
        CHECK(strlen(h) == 6 && h[0] == '0' && h[1] == '0', "id %llu: 1x1 layout '%s'",
              (unsigned long long)id, h);
        unsigned long v = 0;
        for (int i = 2; i < 6; i++)
            v = v * 83 + (unsigned long)(strchr(b83, h[i]) - b83);
        uint8_t rgb[3];
        wf_media_rgb(id, rgb);
        CHECK(v == ((unsigned long)rgb[0] << 16 | (unsigned long)rgb[1] << 8 | rgb[2]),
              "id %llu: the DC digits are the image's colour", (unsigned long long)id);
    }
}

static void test_emoji_avatar_page(void)
{
    char url[WF_URL_MAX], name[WF_EMOJI_NAME_MAX];
    wf_emoji_url(&crowd, 2, "blobcat_12", url);
    CHECK_STR(url, "http://flood2.test:8080/emoji/blobcat_12.png", "emoji URL");
    CHECK(wf_emoji_parse("blobcat_12.png", 14, name) == 0 && !strcmp(name, "blobcat_12"),
          "emoji parsed");
    CHECK(wf_emoji_parse("Blob.png", 8, name) == -1, "upper case refused");
    CHECK(wf_emoji_parse(".png", 4, name) == -1, "empty name refused");
    CHECK(wf_emoji_parse("a/b.png", 7, name) == -1, "slash refused");
    wf_avatar_url(&crowd, 4, 7, 1, url);
    CHECK_STR(url, "http://flood4.test:8080/users/user7/avatar.png", "avatar URL");
    wf_avatar_url(&crowd, 4, 7, 0, url);
    CHECK_STR(url, "http://flood4.test:8080/users/user7/header.png", "header URL");
    struct wf_media a, b;
    wf_media_of_actor(4, 7, 1, &a);
    wf_media_of_actor(4, 8, 1, &b);
    CHECK(a.id != b.id && a.width == a.height, "avatars differ by actor and are square");
    wf_page_url(&crowd, 5, 77, url);
    CHECK_STR(url, "http://flood5.test:8080/pages/77", "page URL");
    wf_media_of_page(77, &a);
    CHECK(a.bytes == WF_PAGE_IMAGE_BYTES && a.width > a.height, "page image ~60 KB, landscape");
}

int main(void)
{
    test_min_bytes();
    test_fit();
    test_url_parse();
    test_blurhash();
    test_emoji_avatar_page();
    return check_done();
}
