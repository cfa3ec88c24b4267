/* flood/send/content_opt.h: --content-opt, "KEY=VALUE[,KEY=VALUE...]" over a content profile
 * (webfinger/content.h holds the profiles and their defaults; the values are read with the
 * grammar of flood/core/grammar.h, which webfinger/ may not include). */
#ifndef FLOOD_CONTENT_OPT_H
#define FLOOD_CONTENT_OPT_H

#include "sign/err.h"
#include "webfinger/content.h"

/* Apply "KEY=VALUE[,KEY=VALUE...]" to p (keys: content_opt_help) and make it ready. Shares
 * (cw, emoji, links, media) are "8%" or a fraction "0.08"; sizes "300k" (powers of 1000),
 * "2MiB" (1024). A profile given options is no longer plain. 0, or -1 and err naming
 * --content-opt, the key and the forms it takes (p may then be partly changed). */
int content_opt_apply(struct wf_content_profile *p, const char *opts,
                      struct flood_err *err) FLOOD_WUR;

/* The keys content_opt_apply takes, for --help. */
extern const char content_opt_help[];

#endif
