/* tests/unit/test_tls_sni.c: certificates for big crowds: which templates get a wildcard, the
 * wildcard leaf, and leaves per instance (made, kept mode 0600, read back, remade when
 * spoilt). Certificates are checked by the openssl command (verify -verify_hostname), not by
 * the code under test. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flood/crowd/crowd.h"
#include "flood/crowd/tls.h"
#include "flood/crowd/tls_sni.h"
#include "tests/check.h"

static char base[64];

/* 1 when `openssl verify` accepts cert (a file) under ca for host. */
static int openssl_verifies(const char *ca, const char *cert, const char *host)
{
    char cmd[1024];
    snprintf(cmd, sizeof(cmd),
             "openssl verify -CAfile '%s' -verify_hostname '%s' '%s' >/dev/null 2>&1", ca, host,
             cert);
    return system(cmd) == 0;
}

static void test_wildcard_rule(void)
{
    char w[256];
    CHECK(crowd_tls_wildcard("i%d.flood.test", w, sizeof(w)) && !strcmp(w, "*.flood.test"),
          "i%%d.flood.test gets *.flood.test");
    CHECK(crowd_tls_wildcard("%d.lab.example.org", w, sizeof(w)) && !strcmp(w, "*.lab.example.org"),
          "%%d.lab.example.org gets *.lab.example.org");
    CHECK(!crowd_tls_wildcard("flood%d.test", w, sizeof(w)),
          "flood%%d.test: *.test is a TLD, none");
    CHECK(!crowd_tls_wildcard("a.b%d.test", w, sizeof(w)),
          "a.b%%d.test: %%d below the first label");
    CHECK(!crowd_tls_wildcard("flood%d", w, sizeof(w)), "one label: none");
    CHECK(!crowd_tls_wildcard("i%d.flood.test", w, 5), "too small a buffer: none");
}

static void test_wildcard_leaf(void)
{
    char dir[128], pem[160];
    snprintf(dir, sizeof(dir), "%s/wild", base);
    const char *hosts[] = {"*.flood.test"};
    struct tls_files tf;
    struct flood_err err = {0};
    int rc = tls_ensure(dir, hosts, 1, &tf, &err);
    CHECK(rc == 0, "a wildcard leaf is made: %s", err.msg);
    snprintf(pem, sizeof(pem), "%s/crowd.pem", dir);
    CHECK(rc == 0 && openssl_verifies(tf.ca_path, pem, "i5.flood.test"),
          "openssl: it covers i5.flood.test");
    CHECK(rc == 0 && openssl_verifies(tf.ca_path, pem, "i10000.flood.test"),
          "openssl: and i10000.flood.test");
    CHECK(rc == 0 && !openssl_verifies(tf.ca_path, pem, "a.i5.flood.test"),
          "openssl: not two labels down");
    CHECK(rc == 0 && !openssl_verifies(tf.ca_path, pem, "flood.test"), "openssl: not the parent");
    tls_files_free(&tf);
    const char *tld[] = {"*.test"};
    CHECK(tls_ensure(dir, tld, 1, &tf, &err) == -1 && err.code == FLOOD_EINVAL,
          "*.test is refused: %s", err.msg);
    tls_files_free(&tf);
    const char *mid[] = {"a.*.test"};
    CHECK(tls_ensure(dir, mid, 1, &tf, &err) == -1, "a '*' not first is refused");
    tls_files_free(&tf);
}

static void test_per_instance(void)
{
    char dir[128], leaf[200], ca[TLS_PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/sni", base);
    struct wf_crowd wf = {.instances = 10000,
                          .actors = 1,
                          .domain_template = "flood%d.test",
                          .scheme = "https",
                          .version = "1.0.0"};
    struct flood_err err = {0};
    int made = 0;
    struct tls_sni *t = tls_sni_new(dir, &wf, ca, &made, &err);
    CHECK(t != NULL && made == 1, "a new folder: the CA made, the table ready: %s", err.msg);
    snprintf(leaf, sizeof(leaf), "%s/leaves/flood1.test.pem", dir);
    struct stat st;
    CHECK(stat(leaf, &st) == 0 && (st.st_mode & 0777) == 0600, "flood1.test's leaf, mode 0600");
    CHECK(openssl_verifies(ca, leaf, "flood1.test"), "openssl: it is the CA's, for flood1.test");
    CHECK(!openssl_verifies(ca, leaf, "flood2.test"), "openssl: and not for flood2.test");
    struct tls_sni_stats ss = {0};
    for (int i = 0; t && i < 3000; i++) { /* the thread making the first leaves, bounded */
        tls_sni_get_stats(t, &ss);
        if (ss.made + ss.read >= TLS_SNI_AHEAD)
            break;
        usleep(10000);
    }
    CHECK(ss.made == TLS_SNI_AHEAD && ss.failed == 0, "%d leaves made ahead", TLS_SNI_AHEAD);
    tls_sni_free(t);
    snprintf(leaf, sizeof(leaf), "%s/leaves/flood128.test.pem", dir);
    CHECK(openssl_verifies(ca, leaf, "flood128.test"), "the first 128 made ahead (flood128.test)");
    snprintf(leaf, sizeof(leaf), "%s/leaves/flood129.test.pem", dir);
    CHECK(stat(leaf, &st) != 0, "and no more (flood129.test)");

    /* again: read back, not made; a spoilt file remade */
    snprintf(leaf, sizeof(leaf), "%s/leaves/flood1.test.pem", dir);
    FILE *f = fopen(leaf, "w");
    if (f) {
        fputs("not a certificate\n", f);
        fclose(f);
    }
    t = tls_sni_new(dir, &wf, ca, &made, &err);
    memset(&ss, 0, sizeof(ss));
    if (t)
        tls_sni_get_stats(t, &ss);
    CHECK(t && made == 0 && ss.made == 1, "the CA kept, the spoilt leaf of flood1.test remade");
    CHECK(openssl_verifies(ca, leaf, "flood1.test"), "openssl: the remade leaf verifies");
    tls_sni_free(t);
    t = tls_sni_new(dir, &wf, ca, &made, &err);
    if (t)
        tls_sni_get_stats(t, &ss);
    CHECK(t && ss.read >= 1 && ss.made == 0, "a good leaf is read back (read %llu, made %llu)",
          ss.read, ss.made);
    tls_sni_free(t);

    chmod(dir, 0700);
    char cap[TLS_PATH_MAX + 8];
    snprintf(cap, sizeof(cap), "%s/ca.key", dir);
    chmod(cap, 0644);
    t = tls_sni_new(dir, &wf, ca, &made, &err);
    CHECK(t == NULL && strstr(err.msg, "chmod 600"), "a CA key readable by others: %s", err.msg);
    tls_sni_free(t);
}

int main(void)
{
    umask(022);
    snprintf(base, sizeof(base), "/tmp/flood-test-tls-sni-XXXXXX");
    if (!mkdtemp(base)) {
        printf("not ok 1 - mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    test_wildcard_rule();
    test_wildcard_leaf();
    test_per_instance();
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", base);
    return check_done();
}
