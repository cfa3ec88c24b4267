/* flood/core/fsutil.h: folders and files that several processes may make at the same time.
 *
 * Shards, `load.sh` (serve + run) and parallel CI jobs share a state folder and sometimes a
 * results folder, and start together. So nothing here checks and then makes: a folder is
 * made and EEXIST taken as success, then what is there is checked; a file is written under
 * a temporary name beside its final path and then put in place in one step, so a reader
 * never sees half a file:
 *   FS_FIRST    link(): the first writer wins, a later one is told (and reads that file),
 *               so two processes making the same key agree on one key;
 *   FS_REPLACE  rename(): the last writer wins, each file whole (results, reports).
 * A lock (fs_lock) serialises work that only one process should do (making keys). */
#ifndef FLOOD_FSUTIL_H
#define FLOOD_FSUTIL_H

#include <stdio.h>
#include <sys/types.h>

#include "sign/err.h"

enum fs_place {
    FS_FIRST = 0,   /* link into place; an existing file is kept */
    FS_REPLACE = 1, /* rename into place; an existing file is replaced */
};

/* Make folder path and any missing parents, each with mode (less the umask). A path that
 * exists already is fine when it is a folder (or a link to one). what names the folder in
 * errors ("crowd: state folder"). 0, or -1 and err (FLOOD_EIO): "WHAT: cannot make 'PATH':
 * reason" (naming the parent that failed, when one did) or "WHAT: 'PATH' is not a folder". */
int fs_mkdir_p(const char *path, mode_t mode, const char *what, struct flood_err *err) FLOOD_WUR;

/* A file being written as PATH.tmp.XXXXXX beside its final path. */
struct fs_tmp {
    FILE *f;    /* write here */
    char *path; /* the final path (owned) */
    char *tmp;  /* the temporary path (owned) */
    const char *what;
};

/* Start writing path (mode applied exactly, whatever the umask). what names the file's
 * kind in errors ("results"). 0 with t->f open, or -1 and err (FLOOD_EIO). */
int fs_tmp_open(struct fs_tmp *t, const char *path, mode_t mode, const char *what,
                struct flood_err *err) FLOOD_WUR;

/* Flush, optionally fsync (sync != 0: keys, certificates), close and put the file in place
 * as place says; t is released either way. 0 placed; 1 with FS_FIRST when a file was there
 * already (ours is dropped: read that one); -1 and err (FLOOD_EIO). */
int fs_tmp_commit(struct fs_tmp *t, enum fs_place place, int sync, struct flood_err *err) FLOOD_WUR;

/* Drop a file being written (close and remove the temporary); t may be zeroed already. */
void fs_tmp_abort(struct fs_tmp *t);

/* fs_tmp_open, the bytes, fs_tmp_commit: the same returns. */
int fs_write_file(const char *path, const void *data, size_t len, mode_t mode, enum fs_place place,
                  int sync, const char *what, struct flood_err *err) FLOOD_WUR;

/* A whole file of at most max bytes, as a new NUL-terminated string (free()), its length
 * in *len when len is not NULL. NULL with errno set: ENOENT for a missing file, EFBIG for a
 * bigger one, or whatever open/read said. */
char *fs_read_file(const char *path, size_t max, size_t *len);

/* Open path (a folder, or a file created mode 0600 when missing) and hold an exclusive
 * flock on it; when another process holds it and wait_note is not NULL, print wait_note on
 * stderr before waiting. The lock fd in *fd: close() it to release. 0, or -1 and err. */
int fs_lock(const char *path, const char *wait_note, int *fd, const char *what,
            struct flood_err *err) FLOOD_WUR;

/* An unnamed file in folder dir, read and written by its descriptor and gone with the
 * process: O_TMPFILE, or on a file system without it a named file (dir/.NAME-XXXXXX)
 * unlinked at once. Where a long run keeps what would otherwise grow its resident set
 * (records, the Follows' log, the dashboard's rows). The descriptor (O_CLOEXEC), or -1 with
 * errno. */
int fs_unnamed_file(const char *dir, const char *name);

/* len bytes read from (pread) or written to (pwrite) fd at offset off, short and
 * interrupted transfers retried: the bytes moved, fewer than len with errno set at an
 * error (0 at the end of the file, or a write that took nothing). */
size_t fs_pread_full(int fd, void *buf, size_t len, off_t off);
size_t fs_pwrite_full(int fd, const void *buf, size_t len, off_t off);

#endif
