/* tests/unit/test_wf_serve.c: the routes of what the crowd serves besides documents
 * (media, pages, emoji, avatars and headers, the standalone key), each beside its
 * malformed twins, and the renders of link pages and key documents. The URL forms come
 * from webfinger/media.h: every URL the media functions make must route back to the
 * same image. */
#include <jansson.h>

#include "tests/check.h"
#include "webfinger/media.h"
#include "webfinger/page.h"
#include "webfinger/wf.h"

#include <stdlib.h>
#include <string.h>

static const struct wf_crowd crowd = {
    .instances = 20,
    .actors = 10,
    .domain_template = "flood%d.test",
    .scheme = "https",
    .public_port = 8443,
    .version = "0.1.0",
};

static int route(const char *path, struct wf_route *rt)
{
    return wf_route(&crowd, "flood2.test:8443", path, rt);
}

/* The path of a URL of flood2 (after the origin). */
static const char *path_of(const char *url)
{
    const char *p = strstr(url, "://");
    return p ? strchr(p + 3, '/') : NULL;
}

static int same_media(const struct wf_media *a, const struct wf_media *b)
{
    return a->id == b->id && a->width == b->width && a->height == b->height && a->bytes == b->bytes;
}

static void test_routes(void)
{
    struct wf_route rt;
    struct wf_media m, want;
    char url[WF_URL_MAX];

    wf_media_fit(77, 500000, 4, 3, &m);
    wf_media_url(&crowd, 2, &m, url);
    CHECK(route(path_of(url), &rt) == 0 && rt.kind == WF_ROUTE_MEDIA && same_media(&rt.media, &m),
          "media URL routes to its image");
    const char *bad_media[] = {"/media/",
                               "/media/1-2x3.png",
                               "/media/01-1x1-72.png",
                               "/media/1-1x1-71.png",
                               "/media/1-1x1-72.jpg",
                               "/media/1-0x1-72.png",
                               "/media/1-1x1-72.png/x"};
    for (size_t i = 0; i < sizeof(bad_media) / sizeof(bad_media[0]); i++)
        CHECK(route(bad_media[i], &rt) == 404 && rt.kind == WF_ROUTE_NONE, "malformed %s: 404",
              bad_media[i]);

    wf_page_url(&crowd, 2, 123, url);
    CHECK(route(path_of(url), &rt) == 0 && rt.kind == WF_ROUTE_PAGE && rt.seq == 123,
          "page URL routes with its id");
    CHECK(route("/pages/0", &rt) == 0 && rt.kind == WF_ROUTE_PAGE && rt.seq == 0, "page 0");
    const char *bad_pages[] = {
        "/pages/",  "/pages/012", "/pages/1x", "/pages/-1", "/pages/18446744073709551616",
        "/pages/1/"};
    for (size_t i = 0; i < sizeof(bad_pages) / sizeof(bad_pages[0]); i++)
        CHECK(route(bad_pages[i], &rt) == 404, "malformed %s: 404", bad_pages[i]);

    wf_emoji_url(&crowd, 2, "blob_cat1", url);
    wf_media_of_emoji("blob_cat1", &want);
    CHECK(route(path_of(url), &rt) == 0 && rt.kind == WF_ROUTE_EMOJI &&
              same_media(&rt.media, &want),
          "emoji URL routes to its image");
    const char *bad_emoji[] = {"/emoji/.png",
                               "/emoji/Blob.png",
                               "/emoji/blob.gif",
                               "/emoji/a-b.png",
                               "/emoji/Blob",
                               "/emoji/a-b",
                               "/emoji/blob/",
                               "/emoji/"
                               "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.png"};
    for (size_t i = 0; i < sizeof(bad_emoji) / sizeof(bad_emoji[0]); i++)
        CHECK(route(bad_emoji[i], &rt) == 404, "malformed %s: 404", bad_emoji[i]);
    CHECK(route("/emoji/blob_cat1", &rt) == 0 && rt.kind == WF_ROUTE_EMOJI_DOC,
          "an Emoji tag's id (BASE/emoji/NAME) routes to its Emoji object");
    struct wf_doc ed;
    wf_emoji_doc(&crowd, 2, "blob_cat1", &ed);
    json_t *ej = ed.body ? json_loads(ed.body, 0, NULL) : NULL;
    wf_emoji_url(&crowd, 2, "blob_cat1", url);
    CHECK(
        ed.status == 200 && ej &&
            !strcmp(json_string_value(json_object_get(ej, "type")), "Emoji") &&
            !strcmp(json_string_value(json_object_get(ej, "name")), ":blob_cat1:") &&
            !strcmp(json_string_value(json_object_get(json_object_get(ej, "icon"), "url")), url) &&
            strstr(json_string_value(json_object_get(ej, "id")), "/emoji/blob_cat1"),
        "the Emoji object: type, :name:, icon url its image");
    json_decref(ej);
    wf_doc_free(&ed);
    wf_emoji_doc(&crowd, 2, "Blob", &ed);
    CHECK(ed.status == 404, "an Emoji object of a bad name: 404");
    wf_doc_free(&ed);

    for (int avatar = 0; avatar <= 1; avatar++) {
        for (int actor = 0; actor <= 10; actor += 10) {
            wf_avatar_url(&crowd, 2, actor, avatar, url);
            wf_media_of_actor(2, actor, avatar, &want);
            CHECK(route(path_of(url), &rt) == 0 &&
                      rt.kind == (avatar ? WF_ROUTE_AVATAR : WF_ROUTE_HEADER) &&
                      rt.actor == actor && same_media(&rt.media, &want),
                  "%s of actor %d routes to its image", avatar ? "avatar" : "header", actor);
        }
    }
    CHECK(route("/users/user11/avatar.png", &rt) == 404, "avatar of no actor: 404");
    CHECK(route("/users/user1/avatar.jpg", &rt) == 404, "avatar.jpg: 404");
    CHECK(route("/users/user1/avatar.png/", &rt) == 404, "avatar.png/: 404");

    CHECK(route("/users/user3/main-key", &rt) == 0 && rt.kind == WF_ROUTE_KEY && rt.actor == 3,
          "/users/NAME/main-key is the key");
    CHECK(route("/actor/main-key", &rt) == 0 && rt.kind == WF_ROUTE_KEY && rt.actor == 0,
          "/actor/main-key is the instance actor's key");
    CHECK(route("/users/user3/main-key/", &rt) == 404 && route("/users/user3/Main-key", &rt) == 404,
          "main-key variants: 404");
    CHECK(route("/users/user3", &rt) == 0 && rt.kind == WF_ROUTE_ACTOR && rt.media.bytes == 0,
          "an actor route carries no image");
}

static void test_page(void)
{
    struct wf_doc a, b, other;
    wf_page(&crowd, 2, 123, &a);
    wf_page(&crowd, 2, 123, &b);
    wf_page(&crowd, 2, 124, &other);
    CHECK(a.status == 200 && !strcmp(a.content_type, "text/html; charset=utf-8"),
          "page: 200 text/html; charset=utf-8");
    CHECK(a.len == b.len && !memcmp(a.body, b.body, a.len), "page: the same id, the same bytes");
    CHECK(other.len != a.len || memcmp(a.body, other.body, a.len),
          "page: another id, another page");
    CHECK(strlen(a.body) == a.len, "page: len is the body's length");
    char url[WF_URL_MAX], img[WF_URL_MAX], tag[WF_URL_MAX + 64];
    wf_page_url(&crowd, 2, 123, url);
    struct wf_media m;
    wf_media_of_page(123, &m);
    wf_media_url(&crowd, 2, &m, img);
    snprintf(tag, sizeof(tag), "<meta property=\"og:url\" content=\"%s\">", url);
    CHECK(strstr(a.body, tag) != NULL, "page: og:url is the page's own URL");
    snprintf(tag, sizeof(tag), "<meta property=\"og:image\" content=\"%s\">", img);
    CHECK(strstr(a.body, tag) != NULL, "page: og:image is wf_media_of_page on the same instance");
    CHECK(strstr(a.body, "<title>") && strstr(a.body, "property=\"og:title\"") &&
              strstr(a.body, "property=\"og:description\"") &&
              strstr(a.body, "<meta property=\"og:type\" content=\"article\">") &&
              strstr(a.body, "name=\"twitter:card\""),
          "page: title, og:title, og:description, og:type article, twitter:card");
    wf_doc_free(&a);
    wf_doc_free(&b);
    wf_doc_free(&other);
    wf_page(&crowd, 21, 1, &a);
    CHECK(a.status == 404, "page of an instance out of range: 404");
    wf_doc_free(&a);
}

static void test_key_doc(void)
{
    struct wf_key_info key = {.public_pem = "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC "
                                            "KEY-----\n"};
    struct wf_doc d;
    wf_key_doc(&crowd, 2, 3, &key, &d);
    json_t *j = d.body ? json_loadb(d.body, d.len, 0, NULL) : NULL;
    CHECK(d.status == 200 && !strcmp(d.content_type, WF_CT_ACTIVITY) && j, "key doc: 200 JSON");
    CHECK_STR(json_string_value(json_object_get(j, "id")),
              "https://flood2.test:8443/users/user3/main-key", "key doc: id is its URL");
    CHECK_STR(json_string_value(json_object_get(j, "owner")),
              "https://flood2.test:8443/users/user3", "key doc: owner is the actor");
    CHECK_STR(json_string_value(json_object_get(j, "publicKeyPem")), key.public_pem,
              "key doc: the PEM");
    json_decref(j);
    wf_doc_free(&d);
    wf_key_doc(&crowd, 2, 11, &key, &d);
    CHECK(d.status == 404, "key doc of no actor: 404");
    wf_doc_free(&d);
    wf_key_doc(&crowd, 2, 3, NULL, &d);
    CHECK(d.status == 404, "key doc without a key: 404");
    wf_doc_free(&d);
}

int main(void)
{
    test_routes();
    test_page();
    test_key_doc();
    return check_done();
}
