/* tests/unit/test_content_opt.c: --content-opt over a content profile (flood/send/content_opt.h):
 * every key with its value read by the grammar (cw=0.08 and cw=8% the same share, media-size=300k
 * 300,000 bytes), and each refused twin naming --content-opt, the key and the forms. */
#include <math.h>
#include <string.h>

#include "flood/send/content_opt.h"
#include "tests/check.h"

static void applies(void)
{
    struct wf_content_profile p;
    struct flood_err err = {0};
    CHECK(wf_content_profile("plain", &p, NULL) == 0 &&
              content_opt_apply(&p, "mentions=2-3,media=50%,visibility=1/0/0/0,media-size=2m",
                                &err) == 0 &&
              !p.plain && p.mentions_min == 2 && p.mentions_max == 3 && p.media == 0.5 &&
              p.media_median == 2e6 && p.vis[0] == 1 && p.vis[1] == 0,
          "options apply, the profile no longer plain (%s)", err.msg);
    CHECK(wf_content_profile("default", &p, NULL) == 0 &&
              content_opt_apply(&p, "cw=0.08", &err) == 0 && fabs(p.cw - 0.08) < 1e-12,
          "cw=0.08 is 8%%");
    CHECK(content_opt_apply(&p, "cw=8%", &err) == 0 && fabs(p.cw - 0.08) < 1e-12, "cw=8%% is 8%%");
    CHECK(content_opt_apply(&p, "cw=1", &err) == 0 && p.cw == 1, "cw=1 is every post");
    CHECK(content_opt_apply(&p, "media-size=300k,media-max=2MiB", &err) == 0 &&
              p.media_median == 300000 && p.media_cap == 2u << 20,
          "media-size=300k is 300,000 bytes, media-max=2MiB 2,097,152");
    CHECK(content_opt_apply(&p,
                            "length=500,length-max=2000,hashtags=2-4,zipf=1.2,emoji=30%,"
                            "links=0%,media-count=2,visibility=60/20/15/5",
                            &err) == 0 &&
              p.len_median == 500 && p.len_max == 2000 && p.tags_min == 2 && p.tags_max == 4 &&
              fabs(p.zipf_s - 1.2) < 1e-12 && fabs(p.emoji - 0.3) < 1e-12 && p.link == 0 &&
              p.media_max == 2 && p.vis[3] == 5,
          "every other key (%s)", err.msg);
    CHECK(content_opt_apply(&p, "hashtags=3", &err) == 0 && p.tags_min == 3 && p.tags_max == 3,
          "a range of one number");
    CHECK(content_opt_apply(&p, "", &err) == 0, "no options: nothing changes");
}

static void refused(void)
{
    static const struct {
        const char *text, *msg;
    } t[] = {
        {"mentions=3-2", "--content-opt mentions: expected A-B or A, whole numbers from 0 to 4"},
        {"mentions=0-9", "--content-opt mentions: expected A-B or A, whole numbers from 0 to 4"},
        {"hashtags=x", "--content-opt hashtags: expected A-B or A, whole numbers from 0 to 8"},
        {"visibility=1/2", "--content-opt visibility: expected four weights PUB/UNL/FOL/DIR"},
        {"visibility=1/2/3/4/5", "--content-opt visibility: expected four weights"},
        {"visibility=0/0/0/0", "--content-opt visibility: expected four weights"},
        {"cw=150%", "--content-opt cw: expected a share from 0% to 100% (20%, 0.5%; a plain "
                    "number is a fraction, 0.2 = 20%), got '150%'"},
        {"media=2", "--content-opt media: expected a share from 0% to 100%"},
        {"emoji=-1%", "--content-opt emoji: expected a share"},
        {"media-size=300x", "--content-opt media-size: expected a size from 100 to 1000000000 "
                            "bytes (300, 300k, 1.5m, 2g; KiB, MiB, GiB are powers of 1024), got "
                            "'300x'"},
        {"media-max=10", "--content-opt media-max: expected a size from 100"},
        {"media-count=5", "--content-opt media-count: expected a whole number from 1 to 4"},
        {"length=0", "--content-opt length: expected a number from 1 to 100000"},
        {"length-max=1.5", "--content-opt length-max: expected a whole number from 1 to 100000"},
        {"zipf=9", "--content-opt zipf: expected a number from 0 to 5"},
        {"colour=red", "--content-opt: expected one of length, length-max, mentions, hashtags, "
                       "zipf, visibility, cw, emoji, links, media, media-count, media-size, "
                       "media-max, got 'colour'"},
        {"cw", "--content-opt: expected KEY=VALUE[,KEY=VALUE...] (media=50%,media-size=300k), "
               "got 'cw'"},
        {"cw=5%,,links=1%", "--content-opt: expected KEY=VALUE"},
        {"cw=5%,", "--content-opt: expected KEY=VALUE"},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        struct wf_content_profile p;
        struct flood_err err = {0};
        CHECK(wf_content_profile("default", &p, NULL) == 0 &&
                  content_opt_apply(&p, t[i].text, &err) == -1 && strstr(err.msg, t[i].msg),
              "'%s' refused: %s", t[i].text, err.msg);
    }
    CHECK(strstr(content_opt_help, "media-size=BYTES") != NULL, "the help names the keys");
}

int main(void)
{
    applies();
    refused();
    return check_done();
}
