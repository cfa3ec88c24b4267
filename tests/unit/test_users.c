/* tests/unit/test_users.c: the users model (flood/report/users.h): the arithmetic worked by
 * hand from its definition, its parts changed and refused, and the phrase printed. */
#include <math.h>
#include <string.h>

#include "flood/report/users.h"
#include "tests/check.h"

int main(void)
{
    struct users_model m;
    users_model_defaults(&m);
    /* 150 x 0.8 x 0.5 x (2 + 1 + 0.2) + 1 x (3 + 1 + 0.5) = 192 + 4.5 = 196.5 a day; x2 peak */
    double per = 196.5 / 86400 * 2;
    CHECK(fabs(users_per_user_rate(&m) - per) < 1e-12, "a user at peak: 196.5 a day x 2 / 86400");
    CHECK(fabs(users_for_rate(&m, 212) - 212 / per) < 1e-6, "212/s is 212 over that");
    struct flood_err e = {0};
    CHECK(users_model_parse(&m, "follows=300,remote=50%,unique=0.25,peak=3", &e) == 0 &&
              m.follows == 300 && m.remote == 0.5 && m.unique == 0.25 && m.peak == 3,
          "parts changed, shares as %% or a fraction: %s", e.msg);
    /* 300 x 0.5 x 0.25 x 3.2 + 4.5 = 124.5 a day, x3 */
    CHECK(fabs(users_per_user_rate(&m) - 124.5 / 86400 * 3) < 1e-12, "the changed model");
    struct users_model keep = m;
    CHECK(users_model_parse(&m, "follows=10,shares=3", &e) == -1 && strstr(e.msg, "'shares=3'") &&
              m.follows == keep.follows,
          "an unknown key refused, naming it, and nothing changed: %s", e.msg);
    CHECK(users_model_parse(&m, "remote=150%", &e) == -1 &&
              strstr(e.msg, "--users-model remote: expected a share"),
          "a share over 100%% refused: %s", e.msg);
    CHECK(users_model_parse(&m, "peak=0.5", &e) == -1 && strstr(e.msg, "--users-model peak"),
          "a peak under the mean refused: %s", e.msg);
    CHECK(users_model_parse(&m, "follows=0,local-posts=0", &e) == -1 &&
              strstr(e.msg, "no inbound activity"),
          "a model with no inbound activity refused: %s", e.msg);
    users_model_defaults(&m);
    char buf[512];
    users_phrase(&m, 212, buf, sizeof(buf));
    CHECK(strstr(buf, " ≈ the inbound federation of 47,000 active users at peak (model: "
                      "follows=150, remote=80%, unique=50%") != NULL,
          "the phrase: %s", buf);
    users_phrase(&m, 1, buf, sizeof(buf));
    CHECK(strstr(buf, "of 220 active users") != NULL, "a small one: %s", buf);
    json_t *j = users_json(&m, 212);
    CHECK(j && json_number_value(json_object_get(j, "users")) == floor(212 / per) &&
              json_number_value(json_object_get(json_object_get(j, "model"), "follows")) == 150,
          "the JSON carries the figure and every parameter");
    json_decref(j);
    return check_done();
}
