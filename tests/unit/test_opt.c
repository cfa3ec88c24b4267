/* tests/unit/test_opt.c: the option table (flood/core/opt.h): each kind parsed into its
 * place, refusals naming the option, defaults, shadowing, --help's layout and the config
 * record. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flood/core/opt.h"
#include "tests/check.h"

struct t_opts {
    int flag, small;
    uint64_t big;
    unsigned pct;
    double real, dur, share, rate;
    long ms;
    uint64_t size;
    int kw;
    const char *str, *path, *custom;
    char **list;
    size_t n_list;
};

static int set_custom(void *base, const struct opt *row, const char *arg, struct flood_err *err)
{
    (void)row;
    if (!strcmp(arg, "bad")) {
        flood_err_set(err, FLOOD_EINVAL, "custom: no '%s'", arg);
        return -1;
    }
    ((struct t_opts *)base)->custom = arg;
    return 0;
}

static json_t *rec_custom(const void *base, const struct opt *row)
{
    (void)row;
    const struct t_opts *t = base;
    return t->custom ? json_string(t->custom) : NULL;
}

#define T(m) OPT_AT(struct t_opts, m)
static const char *const words[] = {"one", "two", NULL};

static const struct opt rows[] = {
    OPT_HEAD("First:", 0),
    {"flag", OPT_FLAG, T(flag), .json = "flag", .help = "a flag"},
    {"small", OPT_UINT, "N", T(small), .lo = 1, .hi = 10, .def = "3", .json = "small",
     .help = "a small number"},
    {"big", OPT_UINT, "N", T(big), .lo = 0, .hi = 18446744073709551616.0, .json = "big",
     .help = "any number"},
    {"pct", OPT_PERCENT, "P", T(pct), .lo = 0, .hi = 1, .def = "50", .json = "pct_pct",
     .help = "a percent"},
    {"real", OPT_REAL, "X", T(real), .lo = 0.5, .hi = 2, .def = "1", .help = "a number"},
    OPT_HEAD("Second:", 0),
    {"dur", OPT_DURATION, "D", T(dur), .lo = 0, .hi = 60, .bare = GRAM_BARE_SECONDS,
     .json = "dur_s", .help = "a duration"},
    {"ms", OPT_DURATION_MS, "T", T(ms), .lo = 0.001, .hi = 60, .bare = GRAM_BARE_SECONDS,
     .def = "2s", .json = "ms", .help = "a duration in ms"},
    {"size", OPT_SIZE, "B", T(size), .lo = 1, .hi = 1e9, .help = "a size"},
    {"share", OPT_SHARE, "S", T(share), .lo = 0, .hi = 1, .share_bare = GRAM_SHARE_FRACTION,
     .help = "a share"},
    {"rate", OPT_RATE, "R", T(rate), .hi = 1000, .help = "a rate"},
    {"kw", OPT_KEYWORD, "K", T(kw), .words = words, .def = "two", .json = "kw",
     .help = "a keyword"},
    {"str", OPT_STRING, "S", T(str), .json = "str", .help = "a string"},
    {"path", OPT_PATH, "F", T(path), .help = "a readable file"},
    {"list", OPT_STRINGS, "S", T(list), .n_off = offsetof(struct t_opts, n_list), .json = "list",
     .help = "repeatable"},
    {"custom", OPT_CUSTOM, "C", .set = set_custom, .json = "custom", .record = rec_custom,
     .help = "a long help line that must be wrapped at the help's width so that no line of it "
             "is longer than ninety-two columns, its next lines starting at column twenty-three"},
    {"only-b", OPT_FLAG, T(flag), .cmds = OPT_CMD_SIGN, .help = "for another command"},
    {0},
};

/* A second set whose --str is shadowed by the first set's. */
static const struct opt rows2[] = {
    OPT_HEAD("other:", 0),
    {"str", OPT_STRING, "S", T(path), .help = "shadowed"},
    {"other", OPT_FLAG, T(small), .help = "the other set's flag"},
    {0},
};

static int parse(struct t_opts *t, struct t_opts *t2, int argc, char **argv)
{
    struct opt_spec spec = {.cmd = "test",
                            .mask = OPT_CMD_RUN,
                            .sets = {{rows, t}, {rows2, t2}},
                            .n_sets = 2,
                            .usage = "usage: flood test\n"};
    memset(t, 0, sizeof(*t));
    memset(t2, 0, sizeof(*t2));
    struct flood_err err = {0};
    if (opt_defaults(&spec, &err))
        return -1;
    FILE *keep = stderr;
    stderr = fopen("/dev/null", "w"); /* the usage errors are printed */
    int rc = opt_parse(&spec, argc, argv);
    fclose(stderr);
    stderr = keep;
    return rc;
}

static void test_kinds(void)
{
    struct t_opts t, t2;
    char *argv[] = {"test",   "--flag",    "--small", "7",   "--big",    "18446744073709551615",
                    "--pct",  "20%",       "--real",  "1.5", "--dur",    "500ms",
                    "--ms",   "1.5",       "--size",  "2k",  "--share",  "0.25",
                    "--rate", "90000/h",   "--kw",    "one", "--str",    "s",
                    "--path", "/dev/null", "--list",  "a",   "--list=b", "--custom",
                    "c",      "--other",   NULL};
    int rc = parse(&t, &t2, sizeof(argv) / sizeof(argv[0]) - 1, argv);
    CHECK(rc == 0, "every kind parses (%d)", rc);
    CHECK(t.flag == 1 && t.small == 7 && t.big == UINT64_MAX, "flag, uint, the whole u64 range");
    CHECK(t.pct == 20 && t.real == 1.5 && t.dur == 0.5 && t.ms == 1500, "percent, real, durations");
    CHECK(t.size == 2000 && t.share == 0.25 && t.rate == 25, "size, share, rate");
    CHECK(t.kw == 0 && !strcmp(t.str, "s") && !strcmp(t.path, "/dev/null"), "keyword, strings");
    CHECK(t.n_list == 2 && !strcmp(t.list[0], "a") && !strcmp(t.list[1], "b"),
          "a repeatable list, --opt=value too");
    CHECK(t.custom && !strcmp(t.custom, "c"), "a custom setter");
    CHECK(t2.small == 1 && !t2.path, "the second set's own option lands in its struct; the "
                                     "shadowed --str in the first set's");

    json_t *c = json_object();
    opt_record(rows, &t, OPT_CMD_RUN, c);
    CHECK(json_is_true(json_object_get(c, "flag")) &&
              json_integer_value(json_object_get(c, "small")) == 7 &&
              json_integer_value(json_object_get(c, "pct_pct")) == 20 &&
              json_real_value(json_object_get(c, "dur_s")) == 0.5 &&
              json_integer_value(json_object_get(c, "ms")) == 1500 &&
              !strcmp(json_string_value(json_object_get(c, "kw")), "one") &&
              json_array_size(json_object_get(c, "list")) == 2 &&
              !strcmp(json_string_value(json_object_get(c, "custom")), "c"),
          "the config record: each kind's shape, a custom recorder");
    CHECK(!json_object_get(c, "real") && !json_object_get(c, "size"), "rows without a key: none");
    json_decref(c);
    opt_strs_free(t.list, t.n_list);

    char *none[] = {"test", NULL};
    rc = parse(&t, &t2, 1, none);
    CHECK(rc == 0 && t.small == 3 && t.pct == 50 && t.real == 1 && t.ms == 2000 && t.kw == 1,
          "the defaults from the rows");
    c = json_object();
    opt_record(rows, &t, OPT_CMD_RUN, c);
    CHECK(json_is_null(json_object_get(c, "str")) && !json_object_get(c, "custom"),
          "a string not given is null, a custom recorder may leave its key out");
    json_decref(c);
}

static const struct {
    const char *opt, *arg, *msg; /* msg: the start of the refusal */
} bad[] = {
    {"--small", "0", "--small: expected a whole number from 1 to 10, got '0'"},
    {"--small", "x", "--small: expected"},
    {"--pct", "12.5", "--pct: expected a whole percent"},
    {"--pct", "101", "--pct: expected a share"},
    {"--real", "3", "--real: expected a number from 0.5 to 2"},
    {"--dur", "2x", "--dur: expected a duration"},
    {"--ms", "0", "--ms: expected a duration from 1ms"},
    {"--size", "0", "--size: expected a size"},
    {"--share", "2", "--share: expected a share"},
    {"--rate", "0", "--rate: expected a rate"},
    {"--kw", "three", "--kw: expected"},
    {"--path", "/nonexistent/x", "--path: cannot read '/nonexistent/x'"},
    {"--custom", "bad", "--custom: no 'bad'"},
};

static void test_refusals(void)
{
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct t_opts t = {0};
        struct flood_err err = {0};
        const struct opt *row = opt_find(rows, bad[i].opt + 2);
        int rc = row ? opt_apply(row, &t, bad[i].arg, &err) : 0;
        CHECK(rc == -1 && !strncmp(err.msg, bad[i].msg, strlen(bad[i].msg)), "%s %s refused: %s",
              bad[i].opt, bad[i].arg, err.msg);
    }
    struct t_opts t, t2;
    char *only_b[] = {"test", "--only-b", NULL};
    CHECK(parse(&t, &t2, 2, only_b) == 2, "a row of another command is an unknown option here");
    char *missing[] = {"test", "--small", NULL};
    CHECK(parse(&t, &t2, 2, missing) == 2, "an option without its value: usage error");
    char *extra[] = {"test", "operand", NULL};
    CHECK(parse(&t, &t2, 2, extra) == 2, "an operand where none is taken: usage error");
}

static void test_help(void)
{
    struct t_opts t = {0}, t2 = {0};
    struct opt_spec spec = {.cmd = "test",
                            .mask = OPT_CMD_RUN,
                            .sets = {{rows, &t}, {rows2, &t2}},
                            .n_sets = 2,
                            .usage = "usage: flood test\n",
                            .tail = "the end\n"};
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    opt_help(&spec, f);
    fclose(f);
    CHECK(!strncmp(buf, "usage: flood test\n\nFirst:\n  --flag               a flag\n", 51),
          "the usage, a heading, a row with its text at column 23");
    CHECK(strstr(buf, "  --small N            a small number (default 3)\n") != NULL,
          "a default appended from the row");
    CHECK(strstr(buf, "\nSecond:\n") && strstr(buf, "\nother:\n"), "every heading with rows");
    CHECK(!strstr(buf, "only-b") && !strstr(buf, "shadowed"),
          "no row of another command, no shadowed row");
    CHECK(strstr(buf, "  -h, --help           this help\n\nthe end\n") != NULL,
          "--help, then the tail");
    int longest = 0, cont_ok = 1;
    for (char *line = buf; *line;) {
        char *nl = strchr(line, '\n');
        int len = (int)(nl - line);
        if (len > longest)
            longest = len;
        if (line[0] == ' ' && line[2] != '-' && strspn(line, " ") != 23)
            cont_ok = 0;
        line = nl + 1;
    }
    CHECK(longest <= 92, "no line longer than 92 columns (%d)", longest);
    CHECK(cont_ok, "continuation lines start at column 23");
    free(buf);
}

int main(void)
{
    test_kinds();
    test_refusals();
    test_help();
    return check_done();
}
