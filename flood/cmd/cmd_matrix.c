/* flood/cmd/cmd_matrix.c: `flood matrix CARD...`, the cards of `flood check --json` from
 * several targets side by side: Markdown on stdout (or --md FILE), and with --html FILE one
 * self-contained page. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "flood/check/check_card.h"
#include "flood/cmd/cmd.h"
#include "flood/core/opt.h"

struct matrix_args {
    const char *html, *md;
};

const struct opt matrix_opt_rows[] = {
    {"md", OPT_STRING, "FILE", OPT_AT(struct matrix_args, md),
     .help = "write the Markdown to FILE instead of stdout"},
    {"html", OPT_STRING, "FILE", OPT_AT(struct matrix_args, html),
     .help = "also write FILE: one self-contained page (no script, nothing loaded), cells "
             "coloured pass/fail/skip/deferred/unsupported, what was expected and got on hover"},
    {0},
};

static const char matrix_usage[] =
    "usage: flood matrix [--html FILE] [--md FILE] CARD.json...\n"
    "An interop matrix of the cards written by flood check --json: one row a step\n"
    "(the steps of every card in scenario order), one column a target (the card's\n"
    "--name, else its persona; two cards of one target are told apart by file name),\n"
    "each cell the step's result, and a summary row of counts per target. Rows whose\n"
    "results differ are marked.\n";

#define MATRIX_STR_(x) #x
#define MATRIX_STR(x)  MATRIX_STR_(x)
static const char matrix_tail[] = "At most " MATRIX_STR(
    CHECK_MATRIX_MAX) " cards. Exit codes: 0 written, 1 a card could not "
                      "be read or is not a\ncard (or a FILE could not be written), 2 usage.\n";

int cmd_matrix(int argc, char **argv)
{
    struct matrix_args a = {0};
    struct opt_spec spec = {.cmd = "matrix",
                            .mask = OPT_CMD_MATRIX,
                            .sets = {{matrix_opt_rows, &a}},
                            .n_sets = 1,
                            .usage = matrix_usage,
                            .tail = matrix_tail,
                            .operands = -1};
    int prc = opt_parse(&spec, argc, argv);
    if (prc)
        return prc == 1 ? 0 : 2;
    const char *html = a.html, *mdfile = a.md;
    int n = argc - optind;
    if (n < 1) {
        fprintf(stderr, "flood: matrix: at least one CARD.json (flood matrix --help)\n");
        return 2;
    }
    if (n > CHECK_MATRIX_MAX) {
        fprintf(stderr, "flood: matrix: at most %d cards, got %d\n", CHECK_MATRIX_MAX, n);
        return 2;
    }
    struct check_matrix *m = check_matrix_new();
    struct flood_err err = {0};
    int rc = 0;
    for (int i = optind; i < argc && !rc; i++) {
        json_t *card = check_card_load(argv[i], &err);
        if (!card || check_matrix_add(m, card, argv[i], &err) < 0) {
            fprintf(stderr, "flood: matrix: '%s': %s\n", argv[i], err.msg);
            rc = 1;
        }
        json_decref(card);
    }
    if (!rc && mdfile && check_write_atomic(mdfile, check_matrix_markdown, m, &err) < 0) {
        fprintf(stderr, "flood: matrix: --md: %s\n", err.msg);
        rc = 1;
    }
    if (!rc && html && check_write_atomic(html, check_matrix_html, m, &err) < 0) {
        fprintf(stderr, "flood: matrix: --html: %s\n", err.msg);
        rc = 1;
    }
    if (!rc && !mdfile) {
        check_matrix_markdown(stdout, m);
        if (fflush(stdout)) {
            fprintf(stderr, "flood: matrix: cannot write the Markdown to stdout\n");
            rc = 1;
        }
    }
    check_matrix_free(m);
    return rc;
}
