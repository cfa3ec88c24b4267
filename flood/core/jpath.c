/* flood/core/jpath.c: dotted JSON paths (see jpath.h). */
#include "flood/core/jpath.h"

#include <string.h>

json_t *jpath_get(const json_t *o, const char *p)
{
    json_t *v = (json_t *)o;
    if (!p)
        return NULL;
    while (v && *p) {
        if (!json_is_object(v))
            return NULL;
        /* the longest key first: the whole rest, then up to each earlier dot */
        size_t n = strlen(p);
        json_t *next = NULL;
        for (;;) {
            next = json_object_getn(v, p, n);
            if (next)
                break;
            while (n > 0 && p[--n] != '.')
                ;
            if (n == 0)
                return NULL;
        }
        v = next;
        p += n;
        if (*p == '.')
            p++;
    }
    return v;
}
