/* webfinger/jout.h: one JSON writer with two backends, for the activity builders. A builder
 * written once against these calls gives either a jansson tree (the reference form, what
 * the golden tests compare) or compact text byte-equal to
 * json_dumps(tree, JSON_COMPACT | JSON_PRESERVE_ORDER), written directly without a tree
 * (the sender's hot path, about a tenth of jansson's cost). Internal to webfinger/.
 *
 * Members are written in call order; a builder never writes the same key twice in one
 * object (jansson would replace it, the text would repeat it). A string that is not valid
 * UTF-8 marks the writer bad; the result is then refused. */
#ifndef FLOOD_WF_JOUT_H
#define FLOOD_WF_JOUT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define WF_JO_DEPTH 12

struct wf_jo {
    int tree; /* 1: jansson backend, 0: text */
    int bad;
    int depth;
    /* text */
    char *p;
    size_t len, cap;
    int first[WF_JO_DEPTH]; /* no member written yet at this depth */
    char obj[WF_JO_DEPTH];  /* the container at this depth is an object */
    const char *last_src;   /* the last string written: its source, bytes, and where its */
    size_t last_n, last_off, last_len; /* escaped form (with quotes) is in p */
    /* tree */
    json_t *root;
    json_t *stack[WF_JO_DEPTH];
};

/* Start a writer (tree = 1 for jansson). size_hint: bytes to reserve for text. */
void wf_jo_init(struct wf_jo *j, int tree, size_t size_hint);
/* key is the member name inside an object, NULL inside an array or at the top. */
void wf_jo_obj(struct wf_jo *j, const char *key);
void wf_jo_arr(struct wf_jo *j, const char *key);
void wf_jo_end(struct wf_jo *j);
void wf_jo_str(struct wf_jo *j, const char *key, const char *v);
/* A string of n bytes (may hold no NUL). */
void wf_jo_strn(struct wf_jo *j, const char *key, const char *v, size_t n);
/* The same string as the last wf_jo_strn(j, ..., v, n) (same pointer and length) again:
 * the text backend copies its escaped form instead of escaping it twice (contentMap). */
void wf_jo_strn_again(struct wf_jo *j, const char *key, const char *v, size_t n);
void wf_jo_int(struct wf_jo *j, const char *key, int64_t v);
void wf_jo_bool(struct wf_jo *j, const char *key, int v);
/* Finish: the tree (new reference) or NULL when bad; wf_jo_text gives the text (new
 * string, length in *len) or NULL when bad. Either frees what the other backend holds. */
json_t *wf_jo_tree(struct wf_jo *j);
char *wf_jo_text(struct wf_jo *j, size_t *len);
/* Release whatever the writer holds (after an error). */
void wf_jo_drop(struct wf_jo *j);

/* Length of the UTF-8 sequence at s (1..4), 0 when invalid (as jansson judges). */
size_t wf_utf8_len(const unsigned char *s);

#endif
