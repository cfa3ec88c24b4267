/* flood/core/jpath.h: a value inside a JSON document by a dotted path of object keys
 * ("totals.latency_ms.p99"), for run.json's readers (--expect, the report) and a target's
 * stats document (capacity's --queue-path). */
#ifndef FLOOD_JPATH_H
#define FLOOD_JPATH_H

#include <jansson.h>

/* The value of o at path: object keys joined by '.', each step taking the longest key the
 * object holds ("latency_ms.p99.9" finds the key "p99.9"). The empty path is o itself.
 * Borrowed (valid while o is); NULL when a step is missing, o is NULL or a step is not an
 * object. */
json_t *jpath_get(const json_t *o, const char *path);

#endif
