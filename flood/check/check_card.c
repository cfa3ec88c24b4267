/* flood/check/check_card.c: a card of `flood check --json` read back: is it one, whose is
 * it, and the escaping and atomic writing its XML and HTML forms share. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flood/check/check_card.h"

static const char *const results[] = {"pass", "fail", "skip", "deferred", "unsupported"};

int check_card_valid(const json_t *card, struct flood_err *err)
{
    if (!json_is_object(card)) {
        flood_err_set(err, FLOOD_EINVAL, "not a flood check card: not a JSON object");
        return -1;
    }
    const json_t *steps = json_object_get(card, "steps");
    if (!json_is_array(steps)) {
        flood_err_set(err, FLOOD_EINVAL, "not a flood check card: no \"steps\" array");
        return -1;
    }
    if (!json_is_object(json_object_get(card, "summary"))) {
        flood_err_set(err, FLOOD_EINVAL, "not a flood check card: no \"summary\" object");
        return -1;
    }
    size_t i;
    const json_t *st;
    json_array_foreach(steps, i, st)
    {
        const char *r = json_string_value(json_object_get(st, "result"));
        int known = 0;
        for (size_t k = 0; r && k < sizeof(results) / sizeof(results[0]); k++)
            known |= !strcmp(r, results[k]);
        if (!json_is_string(json_object_get(st, "step")) || !known) {
            flood_err_set(err, FLOOD_EINVAL,
                          "not a flood check card: steps[%zu] has no \"step\" text or no known "
                          "\"result\"",
                          i);
            return -1;
        }
    }
    return 0;
}

json_t *check_card_load(const char *path, struct flood_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        flood_err_set(err, FLOOD_EIO, "cannot read: %s", strerror(errno));
        return NULL;
    }
    json_error_t je;
    json_t *card = json_loadf(f, 0, &je);
    fclose(f);
    if (!card) {
        flood_err_set(err, FLOOD_EINVAL, "not JSON: %s (line %d)", je.text, je.line);
        return NULL;
    }
    if (check_card_valid(card, err) < 0) {
        json_decref(card);
        return NULL;
    }
    return card;
}

const char *check_card_target(const json_t *card)
{
    const char *t = json_string_value(json_object_get(card, "target"));
    if (t && *t)
        return t;
    t = json_string_value(json_object_get(json_object_get(card, "persona"), "spec"));
    return t && *t ? t : NULL;
}

int check_write_atomic(const char *path, void (*body)(FILE *f, const void *arg), const void *arg,
                       struct flood_err *err)
{
    char *tmp = flood_xasprintf("%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        flood_err_set(err, FLOOD_EIO, "cannot write '%s': %s", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    body(f, arg);
    int bad = ferror(f);
    if (fclose(f) || bad || rename(tmp, path)) {
        flood_err_set(err, FLOOD_EIO, "cannot write '%s': %s", path,
                      errno ? strerror(errno) : "write error");
        remove(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}
