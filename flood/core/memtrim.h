/* flood/core/memtrim.h: freed memory handed back to the system during a long run. malloc
 * keeps what a burst freed (a target that stalls fills --max-inflight's requests, then
 * answers them all) in its arenas, so the resident set stays at the burst's high water; a
 * thread calling malloc_trim(0) every period hands the free pages back (glibc's
 * madvise(MADV_DONTNEED) of whole free pages in every arena), and the resident set follows
 * what is in use. */
#ifndef FLOOD_CORE_MEMTRIM_H
#define FLOOD_CORE_MEMTRIM_H

struct memtrim;

/* Start the thread: malloc_trim every period_ms (> 0). NULL when the thread cannot start
 * (the run goes on without it). */
struct memtrim *memtrim_start(long period_ms);
/* Stop and join the thread (within one period at most), free it. NULL is a no-op. */
void memtrim_stop(struct memtrim *t);
/* Times the thread trimmed so far. */
unsigned long memtrim_count(struct memtrim *t);

#endif
