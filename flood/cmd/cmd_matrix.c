/* flood/cmd/cmd_matrix.c: `flood matrix CARD...`, the cards of `flood check --json` from
 * several targets side by side: Markdown on stdout (or --md FILE), and with --html FILE one
 * self-contained page. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "flood/check/check_card.h"
#include "flood/cmd/cmd.h"

static void matrix_usage(FILE *f)
{
    fprintf(f,
            "usage: flood matrix [--html FILE] [--md FILE] CARD.json...\n"
            "An interop matrix of the cards written by flood check --json: one row a step\n"
            "(the steps of every card in scenario order), one column a target (the card's\n"
            "--name, else its persona; two cards of one target are told apart by file name),\n"
            "each cell the step's result, and a summary row of counts per target. Rows whose\n"
            "results differ are marked.\n\n"
            "  --md FILE            write the Markdown to FILE instead of stdout\n"
            "  --html FILE          also write FILE: one self-contained page (no script,\n"
            "                       nothing loaded), cells coloured pass/fail/skip/deferred/\n"
            "                       unsupported, what was expected and got on hover\n"
            "  -h, --help           this help\n\n"
            "At most %d cards. Exit codes: 0 written, 1 a card could not be read or is not a\n"
            "card (or a FILE could not be written), 2 usage.\n",
            CHECK_MATRIX_MAX);
}

int cmd_matrix(int argc, char **argv)
{
    static const struct option opts[] = {
        {"html", required_argument, NULL, 'H'},
        {"md", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *html = NULL, *mdfile = NULL;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'H':
            html = optarg;
            break;
        case 'm':
            mdfile = optarg;
            break;
        case 'h':
            matrix_usage(stdout);
            return 0;
        default:
            fprintf(stderr, "flood: matrix: %s '%s' (flood matrix --help)\n",
                    c == ':' ? "option needs a value" : "unknown option", argv[optind - 1]);
            return 2;
        }
    }
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
