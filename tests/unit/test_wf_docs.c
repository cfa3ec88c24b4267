/* tests/unit/test_wf_docs.c: the webfinger/ documents against hand-written golden files.
 *
 * Each fixtures/webfinger/<case>/ holds "input" (key=value lines: function, the crowd,
 * instance, actor, resource, ...), "expected.head" ("STATUS content/type") and, for a
 * document, "expected.json" (compared byte for byte after compact re-serialization, so
 * key order counts) or "expected.xml" (compared as is). A case without a body file must
 * answer a JSON {"error": "..."} document. */
#include "tests/check.h"
#include "webfinger/wf.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#define DIR_ROOT "fixtures/webfinger"
#define MAX_KEYS 32

struct input {
    int n;
    char *key[MAX_KEYS];
    char *value[MAX_KEYS];
};

/* A whole file as a new string, or NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *s = malloc(cap);
    size_t got;
    while (s && (got = fread(s + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len - 1 == 0) {
            char *t = realloc(s, cap *= 2);
            if (!t) {
                free(s);
                s = NULL;
            } else {
                s = t;
            }
        }
    }
    fclose(f);
    if (s)
        s[len] = '\0';
    return s;
}

static void chomp(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
}

static int read_input(const char *path, struct input *in)
{
    char *text = slurp(path);
    if (!text)
        return -1;
    in->n = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        chomp(line);
        char *eq = strchr(line, '=');
        if (line[0] == '#' || !eq || in->n == MAX_KEYS)
            continue;
        in->key[in->n] = strndup(line, (size_t)(eq - line));
        in->value[in->n] = strdup(eq + 1);
        in->n++;
    }
    free(text);
    return 0;
}

static void free_input(struct input *in)
{
    for (int i = 0; i < in->n; i++) {
        free(in->key[i]);
        free(in->value[i]);
    }
    in->n = 0;
}

static const char *get(const struct input *in, const char *key, const char *dflt)
{
    for (int i = 0; i < in->n; i++)
        if (strcmp(in->key[i], key) == 0)
            return in->value[i];
    return dflt;
}

static int get_int(const struct input *in, const char *key, int dflt)
{
    const char *v = get(in, key, NULL);
    return v ? atoi(v) : dflt;
}

static enum wf_route_kind kind_of(const char *s)
{
    if (strcmp(s, "outbox") == 0)
        return WF_ROUTE_OUTBOX;
    if (strcmp(s, "followers") == 0)
        return WF_ROUTE_FOLLOWERS;
    if (strcmp(s, "following") == 0)
        return WF_ROUTE_FOLLOWING;
    if (strcmp(s, "inbox") == 0)
        return WF_ROUTE_INBOX;
    return WF_ROUTE_NONE;
}

/* Render the document the input asks for. 0, or -1 for an unknown function. */
static int render(const struct input *in, struct wf_doc *doc)
{
    struct wf_crowd c = {
        .instances = get_int(in, "instances", 20),
        .actors = get_int(in, "actors", 10),
        .domain_template = get(in, "template", "flood%d.test"),
        .scheme = get(in, "scheme", "https"),
        .public_port = get_int(in, "port", 0),
        .version = get(in, "version", "0.1.0"),
    };
    struct flood_err err = {0};
    if (wf_crowd_check(&c, &err) < 0) {
        printf("# crowd: %s\n", err.msg);
        return -1;
    }
    const char *fn = get(in, "function", "");
    int instance = get_int(in, "instance", 1), actor = get_int(in, "actor", 1);
    if (strcmp(fn, "webfinger") == 0) {
        wf_webfinger(&c, instance, get(in, "resource", NULL), doc);
    } else if (strcmp(fn, "host_meta") == 0) {
        wf_host_meta(&c, instance, doc);
    } else if (strcmp(fn, "nodeinfo_wellknown") == 0) {
        wf_nodeinfo_wellknown(&c, instance, doc);
    } else if (strcmp(fn, "nodeinfo") == 0) {
        wf_nodeinfo(&c, instance, get(in, "nodeinfo", "2.0"), doc);
    } else if (strcmp(fn, "actor") == 0) {
        const char *key_path = get(in, "key", NULL), *mb_path = get(in, "multibase", NULL);
        char *pem = key_path ? slurp(key_path) : NULL;
        char *mb = mb_path ? slurp(mb_path) : NULL;
        if (mb)
            chomp(mb);
        struct wf_key_info key = {.public_pem = pem, .ed25519_multibase = mb};
        wf_actor(&c, instance, actor, &key, doc);
        free(pem);
        free(mb);
    } else if (strcmp(fn, "collection") == 0) {
        char *list = strdup(get(in, "items", ""));
        const char *items[16];
        size_t n = 0;
        char *save = NULL;
        for (char *t = strtok_r(list, ",", &save); t && n < 16; t = strtok_r(NULL, ",", &save))
            items[n++] = t;
        wf_collection(&c, instance, actor, kind_of(get(in, "kind", "")), items, n,
                      (size_t)get_int(in, "total", 0), doc);
        free(list);
    } else {
        printf("# unknown function '%s'\n", fn);
        return -1;
    }
    return 0;
}

static void run_case(const char *name)
{
    char path[512];
    struct input in = {0};
    snprintf(path, sizeof(path), DIR_ROOT "/%s/input", name);
    if (read_input(path, &in) < 0)
        return; /* not a case folder (keys/) */
    struct wf_doc doc = {0};
    if (render(&in, &doc) < 0) {
        CHECK(0, "%s: renders", name);
        free_input(&in);
        return;
    }
    snprintf(path, sizeof(path), DIR_ROOT "/%s/expected.head", name);
    char *head = slurp(path);
    if (head)
        chomp(head);
    char got_head[256];
    snprintf(got_head, sizeof(got_head), "%d %s", doc.status,
             doc.content_type ? doc.content_type : "(none)");
    CHECK_STR(got_head, head, "%s: status and content type", name);
    CHECK(doc.body && strlen(doc.body) == doc.len, "%s: body length matches", name);

    snprintf(path, sizeof(path), DIR_ROOT "/%s/expected.json", name);
    char *want_json = slurp(path);
    snprintf(path, sizeof(path), DIR_ROOT "/%s/expected.xml", name);
    char *want_xml = slurp(path);
    if (want_json) {
        json_error_t jerr;
        json_t *want = json_loads(want_json, 0, &jerr);
        json_t *got = doc.body ? json_loads(doc.body, 0, &jerr) : NULL;
        CHECK(want != NULL, "%s: expected.json parses", name);
        CHECK(got != NULL, "%s: body parses as JSON", name);
        CHECK(want && got && json_equal(want, got), "%s: document equals expected.json", name);
        char *canon = want ? json_dumps(want, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        CHECK_STR(doc.body, canon, "%s: bytes and key order equal expected.json", name);
        free(canon);
        json_decref(want);
        json_decref(got);
    } else if (want_xml) {
        CHECK_STR(doc.body, want_xml, "%s: body equals expected.xml", name);
    } else {
        json_error_t jerr;
        json_t *got = doc.body ? json_loads(doc.body, 0, &jerr) : NULL;
        json_t *msg = got ? json_object_get(got, "error") : NULL;
        CHECK(json_is_string(msg) && json_object_size(got) == 1 &&
                  strncmp(json_string_value(msg), "webfinger: ", 11) == 0,
              "%s: body is {\"error\": \"webfinger: ...\"} (%s)", name,
              doc.body ? doc.body : "(none)");
        json_decref(got);
    }
    /* Pure functions: rendering twice gives the same bytes. */
    struct wf_doc again = {0};
    if (render(&in, &again) == 0)
        CHECK(again.body && doc.body && strcmp(again.body, doc.body) == 0,
              "%s: rendering is deterministic", name);
    wf_doc_free(&again);
    free(want_json);
    free(want_xml);
    free(head);
    wf_doc_free(&doc);
    free_input(&in);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
    DIR *d = opendir(DIR_ROOT);
    CHECK(d != NULL, "open " DIR_ROOT " (run from the repository root)");
    if (!d)
        return check_done();
    char *names[512];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 512)
        if (e->d_name[0] != '.')
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof(names[0]), by_name);
    for (size_t i = 0; i < n; i++) {
        run_case(names[i]);
        free(names[i]);
    }
    CHECK(n >= 30, "found %zu fixture folders", n);
    return check_done();
}
