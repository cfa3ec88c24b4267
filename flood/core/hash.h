/* flood/core/hash.h: FNV-1a, 64 bits (Fowler, Noll, Vo; the offset basis and prime of
 * draft-eastlake-fnv section 6.1.2): the one string hash of flood's tables (the key cache,
 * the inbox's duplicate set, the fetch table, the replay's names, the sender's origins).
 * Not for anything an attacker may choose to collide on purpose where that matters: every
 * table using it bounds its probes. Inline: the sender and the crowd hash on their hot
 * paths. */
#ifndef FLOOD_HASH_H
#define FLOOD_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_FNV_OFFSET 14695981039346656037ULL
#define HASH_FNV_PRIME  1099511628211ULL

/* FNV-1a of the n bytes at p (any bytes, NULs included). */
static inline uint64_t hash_fnv1a(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = HASH_FNV_OFFSET;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * HASH_FNV_PRIME;
    return h;
}

/* FNV-1a of the NUL-terminated string s (its NUL not included). */
static inline uint64_t hash_fnv1a_str(const char *s)
{
    uint64_t h = HASH_FNV_OFFSET;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * HASH_FNV_PRIME;
    return h;
}

#endif
