/* flood/core/fsutil.c: folders and files safe against concurrent processes (rules in fsutil.h). */
#include "flood/core/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* One folder part of path: made, or already there as a folder. Errors name the whole path,
 * and the part when it is a parent. */
static int mkdir_one(const char *part, const char *path, mode_t mode, const char *what,
                     struct flood_err *err)
{
    if (mkdir(part, mode) == 0)
        return 0;
    int e = errno;
    struct stat st;
    int whole = strcmp(part, path) == 0;
    if (e == EEXIST && stat(part, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return 0; /* made by someone else, maybe at this very moment: fine */
        if (whole)
            flood_err_set(err, FLOOD_EIO, "%s: '%s' is not a folder", what, path);
        else
            flood_err_set(err, FLOOD_EIO, "%s: cannot make '%s': '%s' is not a folder", what, path,
                          part);
        return -1;
    }
    if (whole)
        flood_err_set(err, FLOOD_EIO, "%s: cannot make '%s': %s", what, path, strerror(e));
    else
        flood_err_set(err, FLOOD_EIO, "%s: cannot make '%s': '%s': %s", what, path, part,
                      strerror(e));
    return -1;
}

int fs_mkdir_p(const char *path, mode_t mode, const char *what, struct flood_err *err)
{
    if (!path || !*path) {
        flood_err_set(err, FLOOD_EINVAL, "%s: no folder name", what);
        return -1;
    }
    char *buf = flood_xstrdup(path);
    int rc = 0;
    for (char *p = buf + 1; *p && rc == 0; p++) {
        if (*p != '/' || p[-1] == '/')
            continue;
        *p = '\0';
        rc = mkdir_one(buf, path, mode, what, err);
        *p = '/';
    }
    if (rc == 0)
        rc = mkdir_one(buf, path, mode, what, err);
    free(buf);
    return rc;
}

int fs_tmp_open(struct fs_tmp *t, const char *path, mode_t mode, const char *what,
                struct flood_err *err)
{
    static atomic_uint serial;
    memset(t, 0, sizeof(*t));
    t->what = what;
    int fd = -1;
    /* a name no other process or thread uses: the pid and a counter (and O_EXCL to be sure) */
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        free(t->tmp);
        t->tmp =
            flood_xasprintf("%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&serial, 1));
        fd = open(t->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        flood_err_set(err, FLOOD_EIO, "%s: cannot write '%s': %s", what, path, strerror(errno));
        free(t->tmp);
        t->tmp = NULL;
        return -1;
    }
    t->f = fdopen(fd, "w");
    if (!t->f) {
        int e = errno;
        close(fd);
        unlink(t->tmp);
        free(t->tmp);
        t->tmp = NULL;
        flood_err_set(err, FLOOD_EIO, "%s: cannot write '%s': %s", what, path, strerror(e));
        return -1;
    }
    t->path = flood_xstrdup(path);
    return 0;
}

void fs_tmp_abort(struct fs_tmp *t)
{
    if (t->f)
        fclose(t->f);
    if (t->tmp)
        unlink(t->tmp);
    free(t->tmp);
    free(t->path);
    memset(t, 0, sizeof(*t));
}

/* Put tmp at path unless something is there: link(), or renameat2(RENAME_NOREPLACE) on a
 * file system without hard links. 0, or -1 with errno (EEXIST: someone was first). */
static int place_first(const char *tmp, const char *path)
{
    if (link(tmp, path) == 0) {
        unlink(tmp);
        return 0;
    }
    if (errno != EPERM && errno != EOPNOTSUPP && errno != ENOSYS)
        return -1;
    return renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE);
}

int fs_tmp_commit(struct fs_tmp *t, enum fs_place place, int sync, struct flood_err *err)
{
    int e = 0;
    if (fflush(t->f) != 0 || ferror(t->f) || (sync && fsync(fileno(t->f)) != 0))
        e = errno ? errno : EIO;
    if (fclose(t->f) != 0 && !e)
        e = errno ? errno : EIO;
    t->f = NULL;
    int rc = 0;
    if (!e && place == FS_REPLACE && rename(t->tmp, t->path) != 0)
        e = errno;
    if (!e && place == FS_FIRST && place_first(t->tmp, t->path) != 0) {
        if (errno == EEXIST)
            rc = 1;
        else
            e = errno;
    }
    if (e) {
        flood_err_set(err, FLOOD_EIO, "%s: cannot write '%s': %s", t->what, t->path, strerror(e));
        rc = -1;
    }
    fs_tmp_abort(t); /* removes the temporary when it is still there */
    return rc;
}

int fs_write_file(const char *path, const void *data, size_t len, mode_t mode, enum fs_place place,
                  int sync, const char *what, struct flood_err *err)
{
    struct fs_tmp t;
    if (fs_tmp_open(&t, path, mode, what, err))
        return -1;
    if (len && fwrite(data, 1, len, t.f) != len) {
        flood_err_set(err, FLOOD_EIO, "%s: cannot write '%s': %s", what, path, strerror(errno));
        fs_tmp_abort(&t);
        return -1;
    }
    return fs_tmp_commit(&t, place, sync, err);
}

char *fs_read_file(const char *path, size_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = flood_xmalloc(cap);
    int e = 0;
    for (;;) {
        if (n + 1 >= cap) {
            cap *= 2;
            buf = flood_xrealloc(buf, cap);
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            e = r < 0 ? errno : 0;
            break;
        }
        n += (size_t)r;
        if (n > max) {
            e = EFBIG;
            break;
        }
    }
    close(fd);
    if (e) {
        free(buf);
        errno = e;
        return NULL;
    }
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

int fs_lock(const char *path, const char *wait_note, int *fd_out, const char *what,
            struct flood_err *err)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 && errno == EISDIR)
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        flood_err_set(err, FLOOD_EIO, "%s: cannot open '%s' to lock it: %s", what, path,
                      strerror(errno));
        return -1;
    }
    int rc = flock(fd, LOCK_EX | LOCK_NB);
    if (rc != 0 && errno == EWOULDBLOCK) {
        if (wait_note)
            fprintf(stderr, "%s\n", wait_note);
        while ((rc = flock(fd, LOCK_EX)) != 0 && errno == EINTR)
            ;
    }
    if (rc != 0) {
        flood_err_set(err, FLOOD_EIO, "%s: cannot lock '%s': %s", what, path, strerror(errno));
        close(fd);
        return -1;
    }
    *fd_out = fd;
    return 0;
}

int fs_unnamed_file(const char *dir, const char *name)
{
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
        return fd;
    char *path = flood_xasprintf("%s/.%s-XXXXXX", dir, name);
    fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0)
        unlink(path);
    int e = errno;
    free(path);
    errno = e;
    return fd;
}

static size_t pio_full(int fd, char *buf, size_t len, off_t off, int wr)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = wr ? pwrite(fd, buf + done, len - done, off + (off_t)done)
                       : pread(fd, buf + done, len - done, off + (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = 0;
            break;
        }
        done += (size_t)n;
    }
    return done;
}

size_t fs_pread_full(int fd, void *buf, size_t len, off_t off)
{
    return pio_full(fd, buf, len, off, 0);
}

size_t fs_pwrite_full(int fd, const void *buf, size_t len, off_t off)
{
    return pio_full(fd, (char *)buf, len, off, 1);
}
