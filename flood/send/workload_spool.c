/* flood/send/workload_spool.c: where the records of a run live (see workload_int.h). A run
 * keeps one 16-byte record per activity for as long as it runs, since the crowd serves any
 * of its objects again at its id, and beside each record 4 bytes (a note's latest edit):
 * an hour at 2,000/s is 144 MB. With a state folder the
 * chunks are pages of an unnamed file there (O_TMPFILE, gone with the process), mapped
 * shared; chunks older than the newest SPOOL_KEEP are dropped from the resident set at each
 * new chunk (madvise MADV_DONTNEED: for a shared file mapping the data stays in the file and
 * the page cache, and a later read or write of an old record faults its page back in). So
 * the resident set holds the records still being written, and a long run does not grow by
 * its age. Without a state folder, or when the file cannot be made, chunks are memory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flood/core/fsutil.h"
#include "flood/send/workload_int.h"

/* Chunk c mapped (1) or memory (0), in w->mapped, grown as chunks come. */
static void mark(struct workload *w, size_t c, unsigned char mapped)
{
    if (c >= w->n_mapped) {
        size_t n = w->n_mapped ? w->n_mapped : 16;
        while (n <= c)
            n *= 2;
        w->mapped = flood_xrealloc(w->mapped, n);
        memset(w->mapped + w->n_mapped, 0, n - w->n_mapped);
        w->n_mapped = n;
    }
    w->mapped[c] = mapped;
}

struct entry *workload_chunk_new(struct workload *w, size_t c)
{
    if (!w->spool_tried) { /* the first chunk decides: a file for the run, or memory */
        w->spool_tried = 1;
        w->spool_fd =
            w->o.state_dir && *w->o.state_dir ? fs_unnamed_file(w->o.state_dir, "records") : -1;
    }
    if (w->spool_fd >= 0) { /* decided above */
        off_t off = (off_t)c * (off_t)CHUNK_BYTES;
        struct stat st;
        void *p = MAP_FAILED;
        if (!fstat(w->spool_fd, &st) && (st.st_size >= off + (off_t)CHUNK_BYTES ||
                                         !ftruncate(w->spool_fd, off + (off_t)CHUNK_BYTES)))
            p = mmap(NULL, CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, w->spool_fd, off);
        if (p != MAP_FAILED) {
            mark(w, c, 1);
            /* the chunks before the newest SPOOL_KEEP leave the resident set (again: a
             * record written or served since faulted its page back in) */
            for (size_t i = 0; i + SPOOL_KEEP <= c && i < w->n_chunks; i++)
                if (w->chunks[i] && i < w->n_mapped && w->mapped[i])
                    madvise(w->chunks[i], CHUNK_BYTES, MADV_DONTNEED);
            return p;
        }
        if (!w->spool_warned) { /* a full disk: the chunks from here on are memory */
            w->spool_warned = 1;
            fprintf(stderr,
                    "flood: workload: the records' file cannot grow (%s): the newer "
                    "records are kept in memory\n",
                    strerror(errno));
        }
    }
    mark(w, c, 0);
    return flood_xcalloc(1, CHUNK_BYTES);
}

void workload_chunks_free(struct workload *w)
{
    for (size_t i = 0; i < w->n_chunks; i++) {
        if (!w->chunks[i])
            continue;
        if (i < w->n_mapped && w->mapped[i])
            munmap(w->chunks[i], CHUNK_BYTES);
        else
            free(w->chunks[i]);
    }
    free(w->chunks);
    free(w->mapped);
    w->chunks = NULL;
    w->mapped = NULL;
    w->n_chunks = w->n_mapped = 0;
    if (w->spool_tried && w->spool_fd >= 0) /* spool_fd is 0, not a descriptor, before */
        close(w->spool_fd);
    w->spool_fd = -1;
}
