/* flood/core/opt.h: one table for every option, in the manner of nginx's ngx_command_t.
 *
 * A row says everything about one option: its name, the kind of value and its grammar and
 * range (parsed by core/grammar.h, so a refusal names the option and the forms accepted),
 * where the value goes (an offset into the struct of options it belongs to), its default,
 * its help line, its key in run.json's "config" record and which commands take it. From the
 * rows come the getopt_long table, --help (headings and wrapped lines), the defaults, the
 * config record and `flood options` (the list the man page and README are checked against).
 *
 * A command's options are a few sets of rows, each over its own struct: flood run's own
 * (cmd/run_opts.c over struct run_opts), the crowd's (crowd/crowd.c over struct crowd_opts)
 * and the inbound side's (inbound/inbound_opts.c over struct inbound_opts). Adding an option
 * is one row and the code that uses its value. */
#ifndef FLOOD_OPT_H
#define FLOOD_OPT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "flood/core/grammar.h"
#include "sign/err.h"

enum opt_kind {
    OPT_HEADING,     /* not an option: a heading of --help ("Load:"), in help */
    OPT_FLAG,        /* no value: the int at off becomes 1 */
    OPT_UINT,        /* a whole number in [lo, hi], into an integer of `size` bytes */
    OPT_PERCENT,     /* a whole percent 0..100 ("20" or "20%"), into an unsigned */
    OPT_REAL,        /* a number in [lo, hi], into a double */
    OPT_DURATION,    /* a duration in [lo, hi] s (`bare`: what a plain number is), double s */
    OPT_DURATION_MS, /* the same, kept as a long of milliseconds */
    OPT_SIZE,        /* a size in bytes in [lo, hi], into a uint64_t */
    OPT_SHARE,       /* a share in [lo, hi] (`share_bare`), as a double fraction */
    OPT_RATE,        /* a rate a second in (0, hi], into a double */
    OPT_KEYWORD,     /* one of words[], its index into an int */
    OPT_STRING,      /* the text, into a const char * (borrowed from argv) */
    OPT_STRINGS,     /* repeatable: a copy appended to the char ** at off, its count at n_off */
    OPT_PATH,        /* a file that must be readable, into a const char * */
    OPT_CUSTOM,      /* `set` parses and stores it */
};

/* The commands, as a row's `cmds` mask says which take it (0: every command given the
 * row's set). */
enum opt_cmd {
    OPT_CMD_RUN = 1u << 0,
    OPT_CMD_CAPACITY = 1u << 1,
    OPT_CMD_SERVE = 1u << 2,
    OPT_CMD_ACTORS = 1u << 3,
    OPT_CMD_CHECK = 1u << 4,
    OPT_CMD_FETCH = 1u << 5,
    OPT_CMD_SIGN = 1u << 6,
    OPT_CMD_VERIFY = 1u << 7,
    OPT_CMD_REPORT = 1u << 8,
    OPT_CMD_COMPARE = 1u << 9,
    OPT_CMD_MATRIX = 1u << 10,
    OPT_CMD_MERGE = 1u << 11,
    OPT_CMD_PRESETS = 1u << 12,
};

/* Row flags. */
enum {
    OPT_F_NO_JSON_NULL = 1 << 0, /* a string not given is recorded as "" rather than null */
    OPT_F_HIDDEN = 1 << 1,       /* taken but not in --help (the man page still names it) */
    OPT_F_DEF_QUIET = 1 << 2,    /* the default is applied, but the help text says it itself */
    OPT_F_OMIT_NULL = 1 << 3,    /* a string not given leaves its config key out */
};

struct opt;

/* A custom setter: parse arg (NULL for a flag) into the struct at base. 0, or -1 and err
 * (starting with "--NAME"). */
typedef int (*opt_set_fn)(void *base, const struct opt *row, const char *arg,
                          struct flood_err *err);
/* A custom recorder: the row's value in run.json's config (a new reference), or NULL to
 * leave its key out. */
typedef json_t *(*opt_record_fn)(const void *base, const struct opt *row);

struct opt {
    const char *name; /* the long name without "--"; for a heading, NULL */
    enum opt_kind kind;
    const char *arg;     /* the value's name in --help ("N", "ADDR:PORT"); NULL for a flag */
    const char *help;    /* one paragraph, wrapped by opt_help; for a heading, its text */
    size_t off, size;    /* where the value goes in the set's struct (OPT_AT), and its size */
    size_t n_off;        /* OPT_STRINGS: where the size_t count is */
    double lo, hi;       /* the range (OPT_UINT, OPT_REAL, OPT_DURATION*, OPT_SIZE, OPT_SHARE);
                          * hi >= 2^64 is UINT64_MAX */
    enum gram_bare bare; /* OPT_DURATION*: a plain number */
    enum gram_share_bare share_bare; /* OPT_SHARE: a plain number */
    const char *const *words;        /* OPT_KEYWORD: the names, NULL-terminated */
    opt_set_fn set;                  /* OPT_CUSTOM; for others optional: a check after */
    const char *def;                 /* the default, as a user would write it; shown in help */
    const char *json;                /* the key in run.json's config, or NULL */
    opt_record_fn record;            /* a custom record (else one from the kind) */
    unsigned cmds;                   /* enum opt_cmd mask, 0: every command given the set */
    unsigned flags;                  /* OPT_F_* */
};

/* Where a member of struct T is: for a row's .off and .size. */
#define OPT_AT(T, m) .off = offsetof(T, m), .size = sizeof(((T *)0)->m)
/* A heading row of --help, for commands in mask cmds (0: all). */
#define OPT_HEAD(text, mask)                                                                       \
    {                                                                                              \
        .name = NULL, .kind = OPT_HEADING, .help = (text), .cmds = (mask)                          \
    }

/* One set of rows (terminated by a row with neither name nor help) over one struct. */
struct opt_set {
    const struct opt *rows;
    void *base; /* the struct the rows' offsets point into (NULL: only for help and lists) */
};

/* A command's whole command line. */
struct opt_spec {
    const char *cmd; /* "run": messages read "flood: run: ..." */
    unsigned mask;   /* OPT_CMD_* of the command, to pick rows by their cmds */
    struct opt_set sets[4];
    size_t n_sets;
    const char *usage; /* the usage line and description, printed before the rows */
    const char *tail;  /* printed after the rows (exit codes ...), or NULL */
    int operands;      /* how many operands may follow the options (-1: any number) */
    /* Optional: told of every option applied, in order (set is the index into sets), with
     * the argv words it came from (raw[0..n_raw): "--name value" or "--name=value"). */
    void (*seen)(void *ctx, size_t set, const struct opt *row, const char *arg, char **raw,
                 int n_raw);
    void *ctx;
};

/* Whether the row is an option the command with mask takes. */
int opt_takes(const struct opt *row, unsigned mask);

/* Apply every row's default (rows with .def) of every set to its struct. 0, or -1 and err:
 * a default its own grammar refuses is a bug of the table, reported as one. */
int opt_defaults(const struct opt_spec *spec, struct flood_err *err) FLOOD_WUR;

/* Apply one row's value to base (arg NULL for a flag). 0, or -1 and err. */
int opt_apply(const struct opt *row, void *base, const char *arg, struct flood_err *err) FLOOD_WUR;

/* Parse argv (argv[0] is the command's name) with getopt_long over the sets' rows; of two
 * rows of one name, the earlier set's wins. Returns 0 with optind at the first operand,
 * 1 after --help (opt_help on stdout), or 2 after a usage error (printed on stderr as
 * "flood: CMD: ..."). */
int opt_parse(const struct opt_spec *spec, int argc, char **argv);

/* --help: the usage text, every row the command takes (a heading before its rows, each
 * option as "  --NAME ARG" and its help wrapped at column 23 to 92 columns, its default
 * appended), then "  -h, --help" and the tail. */
void opt_help(const struct opt_spec *spec, FILE *f);

/* The config record of one set: each row with a json key, its value in force, added to
 * obj (a row's custom recorder where the shape is special). */
void opt_record(const struct opt *rows, const void *base, unsigned mask, json_t *obj);

/* The row of set rows named name (without "--"), or NULL. */
const struct opt *opt_find(const struct opt *rows, const char *name);

/* Append a copy of s to the list *v of *n strings; free a list of n strings. */
void opt_strs_add(char ***v, size_t *n, const char *s);
void opt_strs_free(char **v, size_t n);

#endif
