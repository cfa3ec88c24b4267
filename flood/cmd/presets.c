/* flood/cmd/presets.c: presets (see presets.h): finding, reading and expanding them, and
 * `flood presets`. */
#include "flood/cmd/presets.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flood/cmd/cmd.h"
#include "flood/core/opt.h"

static int is_name(const char *s)
{
    if (!*s || strlen(s) > 64)
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_'))
            return 0;
    return 1;
}

/* The folders presets are looked up in, in order, into dirs[max]; returns how many. */
static size_t preset_dirs(char dirs[][PATH_MAX], size_t max)
{
    size_t n = 0;
    const char *env = getenv("FLOOD_PRESETS");
    if (env && *env && n < max)
        snprintf(dirs[n++], PATH_MAX, "%s", env);
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (len > 0) {
        exe[len] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0; /* the binary's folder: build/ or PREFIX/bin */
            if (n < max)
                snprintf(dirs[n++], PATH_MAX, "%.*s/../fixtures/presets", PATH_MAX - 40, exe);
            if (n < max)
                snprintf(dirs[n++], PATH_MAX, "%.*s/../share/flood/presets", PATH_MAX - 40, exe);
        }
    }
    if (n < max)
        snprintf(dirs[n++], PATH_MAX, "fixtures/presets");
    return n;
}

int presets_find(const char *name, char *path, size_t size, struct flood_err *err)
{
    if (!is_name(name)) {
        if (access(name, R_OK)) {
            flood_err_set(err, FLOOD_ENOTFOUND, "presets: cannot read '%s': %s", name,
                          strerror(errno));
            return -1;
        }
        snprintf(path, size, "%s", name);
        return 0;
    }
    char dirs[4][PATH_MAX];
    size_t n = preset_dirs(dirs, 4);
    for (size_t i = 0; i < n; i++) {
        char cand[PATH_MAX + 80];
        snprintf(cand, sizeof(cand), "%s/%s", dirs[i], name);
        if (access(cand, R_OK) == 0) {
            char real[PATH_MAX];
            snprintf(path, size, "%s", realpath(cand, real) ? real : cand);
            return 0;
        }
    }
    if (access(name, R_OK) == 0) { /* a file in the current folder named like a preset */
        snprintf(path, size, "%s", name);
        return 0;
    }
    flood_err_set(err, FLOOD_ENOTFOUND, "presets: no preset '%s' (flood presets lists them)", name);
    return -1;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strcspn(s, "\r\n");
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    s[n] = 0;
    return s;
}

static void add_arg(struct preset *p, const char *s, size_t len)
{
    p->args = flood_xrealloc(p->args, (p->n_args + 1) * sizeof(*p->args));
    p->args[p->n_args++] = flood_xstrndup(s, len);
}

/* "# watch: a, b c" into p->watch */
static void add_watch(struct preset *p, const char *s)
{
    while (*s) {
        size_t skip = strspn(s, ", \t");
        s += skip;
        size_t len = strcspn(s, ", \t");
        if (len) {
            char *m = flood_xstrndup(s, len);
            json_array_append_new(p->watch, json_string(m));
            free(m);
        }
        s += len;
    }
}

int presets_load(const char *path, struct preset *p, struct flood_err *err)
{
    memset(p, 0, sizeof(*p));
    FILE *f = fopen(path, "r");
    if (!f) {
        flood_err_set(err, FLOOD_EIO, "presets: cannot read '%s': %s", path, strerror(errno));
        return -1;
    }
    const char *base = strrchr(path, '/');
    p->name = flood_xstrdup(base ? base + 1 : path);
    p->path = flood_xstrdup(path);
    p->what = flood_xstrdup("");
    p->watch = json_array();
    char line[PRESETS_LINE_MAX + 2];
    int lineno = 0;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            flood_err_set(err, FLOOD_ELIMIT, "presets: %s:%d: line longer than %d bytes", path,
                          lineno, PRESETS_LINE_MAX);
            goto bad;
        }
        char *s = trim(line);
        if (!*s)
            continue;
        if (*s == '#') {
            s = trim(s + 1);
            if (!strncmp(s, "what:", 5)) {
                free(p->what);
                p->what = flood_xstrdup(trim(s + 5));
            } else if (!strncmp(s, "watch:", 6))
                add_watch(p, s + 6);
            continue;
        }
        if (strncmp(s, "--", 2) || !s[2] || s[2] == ' ' || s[2] == '=') {
            flood_err_set(err, FLOOD_EINVAL,
                          "presets: %s:%d: expected an option (--name [value]), got '%.60s'", path,
                          lineno, s);
            goto bad;
        }
        size_t name_len = strcspn(s, " \t=");
        if (!strncmp(s, "--preset", name_len) && name_len == 8) {
            flood_err_set(err, FLOOD_EINVAL, "presets: %s:%d: a preset cannot name another", path,
                          lineno);
            goto bad;
        }
        if (s[name_len] == '=') {
            add_arg(p, s, strlen(s)); /* getopt_long splits --opt=value itself */
            continue;
        }
        add_arg(p, s, name_len);
        char *v = trim(s + name_len);
        if (*v)
            add_arg(p, v, strlen(v));
    }
    if (ferror(f)) {
        flood_err_set(err, FLOOD_EIO, "presets: cannot read '%s'", path);
        goto bad;
    }
    fclose(f);
    return 0;
bad:
    fclose(f);
    presets_free(p);
    return -1;
}

void presets_free(struct preset *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_args; i++)
        free(p->args[i]);
    free(p->args);
    free(p->name);
    free(p->path);
    free(p->what);
    json_decref(p->watch);
    memset(p, 0, sizeof(*p));
}

/* 1 when a is --rate or --duration, 2 when --stages or --replay, else 0. */
static int sched_opt(const char *a)
{
    static const char *const names[] = {"--rate", "--duration", "--stages", "--replay"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        size_t n = strlen(names[i]);
        if (!strncmp(a, names[i], n) && (a[n] == 0 || a[n] == '='))
            return i < 2 ? 1 : 2;
    }
    return 0;
}

int presets_expand(int argc, char **argv, int *nargc, char ***nargv, struct preset *p, int *found,
                   struct flood_err *err)
{
    *found = 0;
    int at = -1, width = 0;
    const char *what = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--"))
            break;
        int w = 0;
        const char *v = NULL;
        if (!strcmp(argv[i], "--preset")) {
            if (i + 1 >= argc) {
                flood_err_set(err, FLOOD_EINVAL, "--preset: expected a name or a file");
                return -1;
            }
            w = 2;
            v = argv[i + 1];
        } else if (!strncmp(argv[i], "--preset=", 9)) {
            w = 1;
            v = argv[i] + 9;
        }
        if (!w)
            continue;
        if (at >= 0) {
            flood_err_set(err, FLOOD_EINVAL, "--preset: given twice ('%s' and '%s')", what, v);
            return -1;
        }
        at = i;
        width = w;
        what = v;
        i += w - 1;
    }
    if (at >= 0) {
        char path[PATH_MAX];
        if (presets_find(what, path, sizeof(path), err) || presets_load(path, p, err))
            return -1;
        *found = 1;
    }
    /* a schedule given after the preset replaces the preset's: --stages or --replay drops
     * its --rate, --duration and --stages; --rate or --duration its --stages (and override
     * its --rate or --duration as any later option does) */
    int resched = 0;
    for (int i = at + width; at >= 0 && i < argc; i++)
        resched |= 1 << sched_opt(argv[i]);
    size_t n = (size_t)argc - (size_t)width + (*found ? p->n_args : 0);
    char **v = flood_xcalloc(n + 1, sizeof(*v));
    size_t k = 0;
    for (int i = 0; i < argc; i++) {
        if (i == at) {
            for (size_t j = 0; j < p->n_args; j++) {
                int kind = sched_opt(p->args[j]);
                if (kind && ((resched & 4) || ((resched & 2) && kind == 2))) {
                    if (!strchr(p->args[j], '=') && j + 1 < p->n_args &&
                        strncmp(p->args[j + 1], "--", 2))
                        j++; /* its value */
                    continue;
                }
                v[k++] = p->args[j];
            }
            i += width - 1;
            continue;
        }
        v[k++] = argv[i];
    }
    *nargc = (int)k;
    *nargv = v;
    return 0;
}

json_t *presets_json(const struct preset *p)
{
    return json_pack("{s:s, s:s, s:s, s:O}", "name", p->name, "file", p->path, "what", p->what,
                     "watch", p->watch);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every preset in dir, one line each, skipping names already listed (seen). */
static void list_dir(const char *dir, char ***seen, size_t *n_seen)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!is_name(e->d_name) || !strcmp(e->d_name, "README"))
            continue;
        int dup = 0;
        for (size_t i = 0; i < *n_seen; i++)
            dup |= !strcmp((*seen)[i], e->d_name);
        if (dup)
            continue;
        names = flood_xrealloc(names, (n + 1) * sizeof(*names));
        names[n++] = flood_xstrdup(e->d_name);
    }
    closedir(d);
    if (n) /* qsort's array may not be NULL, even for no element */
        qsort(names, n, sizeof(*names), by_name);
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX + 80];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        struct preset p;
        struct flood_err err = {0};
        if (presets_load(path, &p, &err))
            printf("%-16s (unreadable: %s)\n", names[i], err.msg);
        else {
            printf("%-16s %s\n", names[i], p.what);
            presets_free(&p);
        }
        *seen = flood_xrealloc(*seen, (*n_seen + 1) * sizeof(**seen));
        (*seen)[(*n_seen)++] = names[i];
    }
    free(names);
}

static const char presets_usage[] =
    "usage: flood presets [--show NAME|FILE]\n"
    "List the presets, one line each: its name and what it reproduces. A preset is a file\n"
    "of flood run options, one a line ('# what:' and '# watch:' comments name it and the\n"
    "figures to read first); `flood run --preset NAME ...` runs one, options after it win.\n"
    "Looked up in $FLOOD_PRESETS, fixtures/presets beside the binary, PREFIX/share/flood/\n"
    "presets, ./fixtures/presets. docs/BACKPRESSURE.md explains each.\n";

struct presets_args {
    const char *show;
};

const struct opt presets_opt_rows[] = {
    {"show", OPT_STRING, "NAME|FILE", OPT_AT(struct presets_args, show),
     .help = "print the preset's file"},
    {0},
};

/* --show: the preset's file, as it is. 0, or 1 with the error printed. */
static int presets_show(const char *name)
{
    char path[PATH_MAX];
    struct flood_err err = {0};
    struct preset p;
    if (presets_find(name, path, sizeof(path), &err) || presets_load(path, &p, &err)) {
        fprintf(stderr, "flood: presets: %s\n", err.msg);
        return 1;
    }
    presets_free(&p);
    FILE *f = fopen(path, "r");
    char buf[4096];
    size_t n;
    printf("# %s\n", path);
    while (f && (n = fread(buf, 1, sizeof(buf), f)) > 0)
        fwrite(buf, 1, n, stdout);
    if (f)
        fclose(f);
    return 0;
}

int cmd_presets(int argc, char **argv)
{
    struct presets_args a = {0};
    struct opt_spec spec = {.cmd = "presets",
                            .mask = OPT_CMD_PRESETS,
                            .sets = {{presets_opt_rows, &a}},
                            .n_sets = 1,
                            .usage = presets_usage};
    int rc = opt_parse(&spec, argc, argv);
    if (rc)
        return rc == 1 ? 0 : 2;
    if (a.show)
        return presets_show(a.show);
    char dirs[4][PATH_MAX];
    size_t n = preset_dirs(dirs, 4);
    char **seen = NULL;
    size_t n_seen = 0;
    for (size_t i = 0; i < n; i++)
        list_dir(dirs[i], &seen, &n_seen);
    for (size_t i = 0; i < n_seen; i++)
        free(seen[i]);
    free(seen);
    if (!n_seen) {
        fprintf(stderr, "flood: presets: none found (set FLOOD_PRESETS to their folder)\n");
        return 1;
    }
    return 0;
}
