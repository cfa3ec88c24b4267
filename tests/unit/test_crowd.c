/* Unit tests of the crowd: options, keys in the state folder, the key pool, follows. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flood/crowd/crowd.h"
#include "flood/crowd/follows.h"
#include "tests/check.h"

static void test_options(void)
{
    struct crowd_opts o;
    struct flood_err err = {0};
    crowd_opts_defaults(&o);
    CHECK(o.instances == 20 && o.actors == 10 && o.key_bits == 2048, "defaults 20 x 10, 2048 bits");
    CHECK(crowd_opts_set(&o, CROWD_OPT_INSTANCES, "5", &err) == 0 && o.instances == 5,
          "--instances 5");
    CHECK(crowd_opts_set(&o, CROWD_OPT_INSTANCES, "0", &err) == -1, "--instances 0 refused");
    CHECK(strstr(err.msg, "--instances") != NULL, "the error names the option: %s", err.msg);
    CHECK(crowd_opts_set(&o, CROWD_OPT_ACTORS, "12x", &err) == -1, "--actors 12x refused");
    CHECK(crowd_opts_set(&o, CROWD_OPT_ACTORS, "", &err) == -1, "--actors '' refused");
    CHECK(crowd_opts_set(&o, CROWD_OPT_KEY_BITS, "1024", &err) == -1,
          "--key-bits 1024 refused (Fedify needs 2048)");
    CHECK(crowd_opts_set(&o, CROWD_OPT_SCHEME, "ftp", &err) == -1, "--scheme ftp refused");
    CHECK(crowd_opts_set(&o, CROWD_OPT_KEY_TYPE, "dsa", &err) == -1, "--key-type dsa refused");
    CHECK(crowd_opts_set(&o, CROWD_OPT_KEY_TYPE, "ed25519", &err) == 0 &&
              o.key_type == SIGN_KEY_ED25519,
          "--key-type ed25519");
    CHECK(crowd_opts_set(&o, CROWD_OPT_PUBLIC_PORT, "65536", &err) == -1,
          "--public-port 65536 refused");

    crowd_opts_defaults(&o);
    CHECK(crowd_opts_check(&o, &err) == 0, "default options check");
    o.domain = "flood.test";
    CHECK(crowd_opts_check(&o, &err) == -1, "a template without %%d is refused");
    o.domain = "flood%d.test";
    o.listen = "localhost:80";
    CHECK(crowd_opts_check(&o, &err) == -1, "a non-numeric listen address is refused");
    o.listen = "[::1]:0";
    CHECK(crowd_opts_check(&o, &err) == 0, "an IPv6 listen address is taken");
    o.listen = "127.0.0.1:70000";
    CHECK(crowd_opts_check(&o, &err) == -1, "port 70000 is refused");
}

static void test_keys(void)
{
    char dir[] = "/tmp/flood-test-crowd-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "temp state folder");
    struct crowd_opts o;
    crowd_opts_defaults(&o);
    o.instances = 2;
    o.actors = 3;
    o.key_type = SIGN_KEY_ED25519; /* Ed25519 keys are made in microseconds */
    o.state = dir;
    o.quiet = 1;
    struct flood_err err = {0};
    struct crowd *c = crowd_new(&o, &err);
    CHECK(c != NULL, "crowd of 2 x 3 made: %s", c ? "" : err.msg);
    if (!c)
        return;
    CHECK(c->n_keys == 8, "a key per actor and per instance actor: %zu", c->n_keys);
    char path[512];
    snprintf(path, sizeof(path), "%s/keys/ed25519/000007.pem", dir);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "key files are mode 0600");
    char kid[WF_URL_MAX];
    crowd_key_id(c, 2, 3, kid);
    CHECK_STR(kid, "http://flood2.test/users/user3#main-key", "key id of user3 on flood2");
    crowd_key_id(c, 1, 0, kid);
    CHECK_STR(kid, "http://flood1.test/actor#main-key", "key id of the instance actor");
    CHECK(crowd_key(c, 1, 1) != crowd_key(c, 1, 2), "actors have their own keys");
    char *pem1 = flood_xstrdup(c->key_pems[5]);
    crowd_free(c);

    /* Reused on the next start; with a pool of 2, actors share the first two keys. */
    o.key_pool = 2;
    c = crowd_new(&o, &err);
    CHECK(c != NULL && c->n_keys == 2, "a pool of 2 keys");
    if (c) {
        CHECK(crowd_key(c, 1, 0) == crowd_key(c, 1, 2) && crowd_key(c, 1, 1) != crowd_key(c, 1, 0),
              "the pool is shared round-robin");
        crowd_free(c);
    }
    o.key_pool = 0;
    c = crowd_new(&o, &err);
    CHECK(c && !strcmp(c->key_pems[5], pem1), "keys survive a restart");
    crowd_free(c);
    free(pem1);

    /* A corrupted key file is a clear error, never a silent new key. */
    snprintf(path, sizeof(path), "%s/keys/ed25519/000003.pem", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n", f);
        fclose(f);
    }
    c = crowd_new(&o, &err);
    CHECK(c == NULL && strstr(err.msg, "000003.pem") != NULL, "a bad key file is named: %s",
          err.msg);
    crowd_free(c);

    o.state = "/proc/flood-no-such-place";
    c = crowd_new(&o, &err);
    CHECK(c == NULL && strstr(err.msg, "state folder") != NULL,
          "an unusable state folder is a clear error: %s", err.msg);
    crowd_free(c);
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0, "temp state removed");
}

static void test_follows(void)
{
    struct follows *f = follows_new(1000);
    CHECK(follows_add(f, 7, "https://t.test/users/a") == 1, "a follower added");
    CHECK(follows_add(f, 7, "https://t.test/users/a") == 0, "a follower added twice counts once");
    CHECK(follows_add(f, 7, "https://t.test/users/b") == 1, "a second follower");
    CHECK(follows_has(f, 7, "https://t.test/users/b") &&
              !follows_has(f, 8, "https://t.test/users/b"),
          "followers are per actor");
    size_t n;
    char **l = follows_list(f, 7, 1, &n);
    CHECK(n == 2 && !strcmp(l[0], "https://t.test/users/a"), "list in order of arrival");
    follows_list_free(l, n);
    CHECK(follows_remove(f, 7, "https://t.test/users/a") == 1, "Undo removes");
    CHECK(follows_remove(f, 7, "https://t.test/users/a") == 0, "Undo of a non-follower is a no-op");
    l = follows_list(f, 7, 1, &n);
    CHECK(n == 1 && !strcmp(l[0], "https://t.test/users/b"), "one follower left");
    follows_list_free(l, n);
    l = follows_list(f, 999, 0, &n);
    CHECK(n == 0, "an actor never followed has empty lists");
    follows_list_free(l, n);
    CHECK(following_add(f, 3, "https://t.test/users/x") == 1 &&
              following_remove(f, 3, "https://t.test/users/x") == 1,
          "following add and remove");
    follows_free(f);
}

int main(void)
{
    test_options();
    test_keys();
    test_follows();
    return check_done();
}
