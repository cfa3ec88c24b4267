/* flood/cmd/presets.h: presets, files of ordinary `flood run` options, one a line, that
 * reproduce a known backpressure bug shape (docs/BACKPRESSURE.md). `flood run --preset
 * NAME|FILE` puts a preset's options in place of the --preset option, so options given after
 * it win (a later option overrides an earlier one); `flood presets` lists them.
 *
 * A preset file:
 *   # what: one line saying what it reproduces        (printed by `flood presets`)
 *   # watch: f2a.p99, json:inbound.delivery_lag_ms.p99 (--expect metrics, printed first)
 *   # any other comment
 *   --mix like=40,announce=40,reply=20     an option and its value, split at the first
 *   --duration 10s                          blank; "--opt=value" works too; the value is
 *   --quiet                                 taken as it is, blanks inside included
 * A NAME (letters, digits, '-', '_') is looked up as NAME in $FLOOD_PRESETS, then in
 * fixtures/presets beside the binary (build/flood -> fixtures/presets, and
 * PREFIX/share/flood/presets when installed), then ./fixtures/presets; anything else is a
 * file's path. */
#ifndef FLOOD_PRESETS_H
#define FLOOD_PRESETS_H

#include <jansson.h>
#include <stddef.h>

#include "sign/err.h"

#define PRESETS_LINE_MAX 1024

struct preset {
    char *name;    /* the file's base name */
    char *path;    /* where it was read */
    char *what;    /* "# what:" or "" */
    json_t *watch; /* "# watch:" metrics, an array of strings (owned) */
    char **args;   /* the options, split ("--mix", "like=40,...") */
    size_t n_args;
};

/* Find a preset by name or path into path (size bytes). 0, or -1 and err ("presets: no
 * preset 'x' (flood presets lists them)"). */
int presets_find(const char *name, char *path, size_t size, struct flood_err *err) FLOOD_WUR;
/* Read the preset at path into p (presets_free). 0, or -1 and err naming FILE:LINE. */
int presets_load(const char *path, struct preset *p, struct flood_err *err) FLOOD_WUR;
void presets_free(struct preset *p);

/* Expand the first --preset X (or --preset=X) of argv into a new argv (*nargv, an array the
 * caller frees with free(); its strings borrow argv and p->args) and load p. *found is 0
 * (and *nargv a copy of argv) when there is none. A second --preset is refused, as is one
 * inside a preset file. A schedule option (--rate, --duration, --stages, --replay) after
 * the --preset drops the preset's own schedule options. 0, or -1 and err. */
int presets_expand(int argc, char **argv, int *nargc, char ***nargv, struct preset *p, int *found,
                   struct flood_err *err) FLOOD_WUR;

/* The preset as run.json's "preset" object: name, file, what, watch (a new reference). */
json_t *presets_json(const struct preset *p);

#endif
