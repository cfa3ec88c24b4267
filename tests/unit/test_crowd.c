/* Unit tests of the crowd: options, keys in the state folder, the key pool and the layout a
 * state folder keeps, processes starting together on a new folder, follows. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
    CHECK(crowd_opts_set(&o, "instances", "5", &err) == 0 && o.instances == 5, "--instances 5");
    CHECK(crowd_opts_set(&o, "instances", "0", &err) == -1, "--instances 0 refused");
    CHECK(strstr(err.msg, "--instances") != NULL, "the error names the option: %s", err.msg);
    CHECK(crowd_opts_set(&o, "actors", "12x", &err) == -1, "--actors 12x refused");
    CHECK(crowd_opts_set(&o, "actors", "", &err) == -1, "--actors '' refused");
    CHECK(crowd_opts_set(&o, "key-bits", "1024", &err) == -1,
          "--key-bits 1024 refused (Fedify needs 2048)");
    CHECK(crowd_opts_set(&o, "scheme", "ftp", &err) == -1, "--scheme ftp refused");
    CHECK(crowd_opts_set(&o, "key-type", "dsa", &err) == -1, "--key-type dsa refused");
    CHECK(crowd_opts_set(&o, "key-type", "ed25519", &err) == 0 && o.key_type == SIGN_KEY_ED25519,
          "--key-type ed25519");
    CHECK(crowd_opts_set(&o, "public-port", "65536", &err) == -1, "--public-port 65536 refused");
    CHECK(o.key_pool == CROWD_KEY_POOL_FOLDER, "no --key-pool: the state folder's layout");
    CHECK(crowd_opts_set(&o, "key-pool", "0", &err) == 0 && o.key_pool == 0,
          "--key-pool 0: a key per actor");
    CHECK(crowd_opts_set(&o, "key-pool", "-1", &err) == -1, "--key-pool -1 refused");
    int k = crowd_default_pool(SIGN_KEY_RSA);
    CHECK(k >= 8 && k <= 64, "a new folder's RSA pool: %d keys", k);
    CHECK(crowd_default_pool(SIGN_KEY_ED25519) == 0, "Ed25519: a key per actor");

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

/* The first line of a small file, or "" (static buffer). */
static const char *first_line(const char *path)
{
    static char buf[512];
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(buf, sizeof(buf), f))
            buf[0] = '\0';
        fclose(f);
    }
    buf[strcspn(buf, "\n")] = '\0';
    return buf;
}

/* Which layout a state folder keeps without --key-pool: its record, or a key per actor for a
 * folder that holds keys and no record (made by a flood that gave each actor a key). */
static void test_layout(void)
{
    char dir[] = "/tmp/flood-test-layout-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "temp state folder");
    struct crowd_opts o;
    crowd_opts_defaults(&o);
    o.instances = 1;
    o.actors = 1;
    o.state = dir;
    o.quiet = 1;
    struct flood_err err = {0};
    char rec[512];
    snprintf(rec, sizeof(rec), "%s/keys/rsa-2048/pool", dir);

    /* an explicit pool on a new folder records the default layout all the same */
    o.key_pool = 1;
    struct crowd *c = crowd_new(&o, &err);
    CHECK(c && c->n_keys == 1 && c->opts.key_pool == 1, "--key-pool 1: one key (%s)",
          c ? "ok" : err.msg);
    crowd_free(c);
    char want[32];
    snprintf(want, sizeof(want), "%d", crowd_default_pool(SIGN_KEY_RSA));
    CHECK_STR(first_line(rec), want, "a new folder records the default pool");

    /* a folder with keys and no record: a key per actor, recorded */
    unlink(rec);
    o.key_pool = CROWD_KEY_POOL_FOLDER;
    c = crowd_new(&o, &err);
    CHECK(c && c->n_keys == 2 && c->opts.key_pool == 0,
          "keys without a record: a key per actor (%s)", c ? "ok" : err.msg);
    CHECK(c && crowd_key(c, 1, 0) != crowd_key(c, 1, 1), "and the actors' keys differ");
    crowd_free(c);
    CHECK_STR(first_line(rec), "0", "that layout is recorded");
    c = crowd_new(&o, &err);
    CHECK(c && c->n_keys == 2, "and kept on the next start");
    crowd_free(c);

    /* a read-only copy of such a folder (a Kubernetes Secret) loads as it was made */
    char kdir[512];
    snprintf(kdir, sizeof(kdir), "%s/keys/rsa-2048", dir);
    if (geteuid() != 0) { /* root writes anywhere */
        unlink(rec);
        chmod(kdir, 0500);
        c = crowd_new(&o, &err);
        CHECK(c && c->n_keys == 2, "a read-only folder without a record: a key per actor (%s)",
              c ? "ok" : err.msg);
        crowd_free(c);
        CHECK(access(rec, F_OK) != 0, "and nothing is written there");
        chmod(kdir, 0700);
    } else {
        CHECK(1, "a read-only folder # SKIP running as root: every folder is writable");
    }

    /* a record that is not a number is a clear error */
    FILE *f = fopen(rec, "w");
    if (f) {
        fputs("lots\n", f);
        fclose(f);
    }
    c = crowd_new(&o, &err);
    CHECK(c == NULL && strstr(err.msg, rec) && strstr(err.msg, "number of keys"),
          "a bad record is named: %s", err.msg);
    crowd_free(c);

    /* Ed25519: a key per actor on a new folder */
    o.key_type = SIGN_KEY_ED25519;
    o.instances = 2;
    c = crowd_new(&o, &err);
    CHECK(c && c->n_keys == 4 && c->opts.key_pool == 0, "Ed25519: a key per actor (%s)",
          c ? "ok" : err.msg);
    crowd_free(c);
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0, "temp state removed");
}

/* The crowd's public keys, one PEM after another, into path (a child's report). */
static int dump_keys(const struct crowd *c, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "%zu keys\n", c->n_keys);
    for (size_t i = 0; i < c->n_keys; i++)
        fputs(c->key_pems[i], f);
    return fclose(f);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Eight processes (shards, serve + run, CI jobs) starting at once on a new state folder with
 * the default crowd: all start, all sign with the same keys, and those are the keys on disk. */
static void test_concurrent(void)
{
    char dir[] = "/tmp/flood-test-crowd-shared-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "temp folder");
    char state[600], path[700];
    snprintf(state, sizeof(state), "%s/new/state", dir); /* parents missing too */
    enum { KIDS = 8 };
    pid_t pids[KIDS];
    for (int k = 0; k < KIDS; k++) {
        pids[k] = fork();
        if (pids[k] == 0) {
            struct crowd_opts o;
            crowd_opts_defaults(&o);
            o.state = state;
            o.quiet = 1;
            struct flood_err err = {0};
            struct crowd *c = crowd_new(&o, &err);
            snprintf(path, sizeof(path), "%s/kid%d.keys", dir, k);
            if (!c || dump_keys(c, path)) {
                snprintf(path, sizeof(path), "%s/kid%d.err", dir, k);
                FILE *f = fopen(path, "w");
                if (f) {
                    fprintf(f, "%s", c ? strerror(errno) : err.msg);
                    fclose(f);
                }
                _exit(1);
            }
            crowd_free(c);
            _exit(0);
        }
    }
    int all_ok = 1;
    char why[600] = "";
    for (int k = 0; k < KIDS; k++) {
        int st = 0;
        int ok = pids[k] > 0 && waitpid(pids[k], &st, 0) == pids[k] && WIFEXITED(st) &&
                 WEXITSTATUS(st) == 0;
        if (!ok && !why[0]) {
            snprintf(path, sizeof(path), "%s/kid%d.err", dir, k);
            snprintf(why, sizeof(why), "; process %d: %s (status %d)", k, first_line(path), st);
        }
        all_ok &= ok;
    }
    CHECK(all_ok, "%d processes at once on a new state folder: all start%s", KIDS, why);

    /* the keys on disk, as one more process loads them */
    struct crowd_opts o;
    crowd_opts_defaults(&o);
    o.state = state;
    o.quiet = 1;
    struct flood_err err = {0};
    struct crowd *c = crowd_new(&o, &err);
    CHECK(c != NULL, "the folder loads afterwards (%s)", c ? "ok" : err.msg);
    if (!c)
        return;
    size_t pool = (size_t)crowd_default_pool(SIGN_KEY_RSA);
    CHECK(c->n_keys == pool, "the default crowd has a pool of %zu keys: %zu", pool, c->n_keys);
    snprintf(path, sizeof(path), "%s/disk.keys", dir);
    CHECK(dump_keys(c, path) == 0, "keys dumped");
    char *disk = slurp(path);
    int same = disk != NULL;
    for (int k = 0; k < KIDS; k++) {
        snprintf(path, sizeof(path), "%s/kid%d.keys", dir, k);
        char *kid = slurp(path);
        same &= kid && !strcmp(kid, disk);
        free(kid);
    }
    free(disk);
    CHECK(same, "every process signed with the keys on disk");
    snprintf(path, sizeof(path), "cd '%s/keys/rsa-2048' && ls | grep -q '\\.tmp\\.'", state);
    CHECK(system(path) != 0, "no temporary file left behind");

    /* every actor its own keyId and document, even where two share key material */
    CHECK(pool > 9 || crowd_key(c, 1, 1) == crowd_key(c, 1, 1 + (int)pool),
          "actors %zu apart share a key", pool);
    CHECK(crowd_key(c, 1, 1) != crowd_key(c, 1, 2), "neighbours do not");
    char k1[WF_URL_MAX], k2[WF_URL_MAX];
    crowd_key_id(c, 1, 1, k1);
    crowd_key_id(c, 1, 9, k2);
    CHECK(strcmp(k1, k2) != 0, "each actor its own keyId: %s, %s", k1, k2);
    struct wf_doc d;
    crowd_actor_doc(c, 1, 9, &d);
    CHECK(d.body && strstr(d.body, "\"http://flood1.test/users/user9#main-key\"") &&
              strstr(d.body, "\"owner\":\"http://flood1.test/users/user9\""),
          "and its own key document");
    wf_doc_free(&d);
    crowd_free(c);
    snprintf(path, sizeof(path), "rm -rf '%s'", dir);
    CHECK(system(path) == 0, "temp folder removed");
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
    test_layout();
    test_concurrent();
    test_follows();
    return check_done();
}
