/* flood/check/check_card.h: what is made of a card, the JSON report of `flood check --json`
 * (check_report_json): checking that a document is one (check_card.c), its JUnit XML form
 * for CI systems (check_junit.c), and several cards side by side as an interop matrix in
 * Markdown and self-contained HTML (check_matrix.c). No network: a card in, text out. */
#ifndef FLOOD_CHECK_CARD_H
#define FLOOD_CHECK_CARD_H

#include <jansson.h>
#include <stdio.h>

#include "sign/err.h"

#define CHECK_MATRIX_MAX 32 /* cards in one matrix */

/* 0 when card is a check card: an object with a "steps" array whose every element has a
 * "step" string and a "result" among pass, fail, skip, deferred, unsupported, and a
 * "summary" object. -1 and err ("not a flood check card: ...") otherwise. */
int check_card_valid(const json_t *card, struct flood_err *err) FLOOD_WUR;

/* The card in the file at path (a new reference), or NULL and err: "cannot read: ...",
 * "not JSON: ...", or why it is not a card. */
json_t *check_card_load(const char *path, struct flood_err *err) FLOOD_WUR;

/* The card's target name (borrowed): its "target", else its persona's "spec", else NULL. */
const char *check_card_target(const json_t *card);

/* Write f's content to path atomically: body(f, arg) into path.tmp, then rename. 0, or -1
 * and err naming the file. */
int check_write_atomic(const char *path, void (*body)(FILE *f, const void *arg), const void *arg,
                       struct flood_err *err) FLOOD_WUR;

/* The card (borrowed, check_card_valid) as JUnit XML, written atomically to path: one
 * <testsuite> named after the target, one <testcase> a step (classname "flood.check", time
 * in seconds); fail is a <failure>, skip and unsupported are <skipped> saying which,
 * deferred passes with a <system-out> note (it does not fail `flood check` either), and a
 * persona that could not be discovered is one more testcase with an <error>. 0, or -1 and
 * err. */
int check_junit_write(const char *path, const json_t *card, struct flood_err *err) FLOOD_WUR;

/* An interop matrix: the steps of several cards down, the cards across. */
struct check_matrix;

/* A new, empty matrix; free with check_matrix_free. */
struct check_matrix *check_matrix_new(void);
void check_matrix_free(struct check_matrix *m);

/* Add card (a valid card; the matrix takes a reference of its own) read from file (copied;
 * the column's name when the card names no target, and told apart with when two cards name
 * the same target). Its steps join the rows in scenario order: a step already in a row
 * (the same text, the same occurrence) fills it, a new one is inserted after the row of
 * the step before it. 0, or -1 and err when the matrix is full. */
int check_matrix_add(struct check_matrix *m, const json_t *card, const char *file,
                     struct flood_err *err) FLOOD_WUR;

/* The matrix as Markdown: the cards, the table (one row a step, a summary row of counts
 * per target; a row whose results differ is marked), then the detail of every result that
 * is not a pass. */
void check_matrix_markdown(FILE *f, const void *m);

/* The matrix as one self-contained HTML page (no script, nothing loaded): cells coloured by
 * result, the detail in each cell's title (shown on hover). */
void check_matrix_html(FILE *f, const void *m);

#endif
