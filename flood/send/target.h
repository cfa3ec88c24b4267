/* flood/send/target.h: persona discovery. A persona given as acct:NAME@HOST is resolved by
 * WebFinger (https, or http with --target-http), one given as an actor URL is taken as is;
 * then its actor document is fetched with a signed GET as the crowd's instance actor of
 * instance 1 (authorized fetch: the target fetches that actor's key from the crowd, so the
 * crowd must be serving), and its outbox's first page gives the posts a Like can target.
 * Every step is bounded (1 MiB bodies, a timeout, same-host redirects only) and every
 * error names the persona and the step. */
#ifndef FLOOD_TARGET_H
#define FLOOD_TARGET_H

#include <stddef.h>

#include "flood/crowd/crowd.h"
#include "sign/err.h"
#include "flood/core/http.h"
#include "flood/send/workload.h"

#define TARGET_POSTS_MAX 40 /* posts kept per persona */

struct target_opts {
    int target_http;       /* --target-http: WebFinger over plain http (lab targets) */
    struct http_opts http; /* --resolve, --connect-to, --insecure, --cacert, --timeout */
    int dialect;           /* how GETs are signed: SIGN_CAVAGE (default 0) or SIGN_RFC9421 */
    int quiet;             /* no warning lines on stderr (e.g. an unreadable outbox) */
};

/* Discover spec ("acct:NAME@HOST", "NAME@HOST", "@NAME@HOST" or an http(s) actor URL) into
 * *out (new strings: persona_free). The crowd (borrowed) signs the GETs. 0, or -1 and err,
 * e.g. "target: webfinger of 'acct:x@y': HTTP 404". An outbox that cannot be read is not an
 * error: the persona then has no posts (and a warning is printed unless quiet). */
int target_discover(const char *spec, const struct crowd *crowd, const struct target_opts *o,
                    struct persona *out, struct flood_err *err) FLOOD_WUR;
/* Free the strings of a persona filled by target_discover (or built by hand with malloc'd
 * members) and zero it. */
void persona_free(struct persona *p);

/* Read a --personas FILE: one spec a line; blank lines and '#' comments skipped,
 * surrounding blanks trimmed. *specs is a new array of new strings (target_specs_free),
 * *n their count (at least 1). 0, or -1 and err naming the file and line. */
int target_read_personas_file(const char *path, char ***specs, size_t *n,
                              struct flood_err *err) FLOOD_WUR;
void target_specs_free(char **specs, size_t n);

/* ---- the pure steps, exposed for tests -------------------------------------------------- */

/* Split an acct spec into user and host (new strings). 1 for an acct, 0 for an http(s) URL
 * (nothing allocated), -1 and err for anything else. */
int target_parse_spec(const char *spec, char **user, char **host, struct flood_err *err) FLOOD_WUR;
/* The actor URL of a WebFinger JRD: the href of the first link with rel "self" and type
 * application/activity+json or application/ld+json (any profile). A new string, or NULL. */
char *target_jrd_self(const json_t *jrd);
/* Up to max post ids from an outbox page's items (orderedItems or items): a Create's
 * object (id or embedded object's id), or an object that is not an activity (Note,
 * Article, Question, Page, ...). Announces, bare strings and the rest are skipped. Appends
 * new strings to *posts / *n. */
void target_outbox_posts(const json_t *page, char ***posts, size_t *n, size_t max);

#endif
