/* flood/core/url.c: http(s) URLs split by libcurl's URL API into fixed-size parts. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "flood/core/url.h"

/* Copy src into dst[size], lower-cased when lower; -1 when it does not fit. */
static int copy_part(char *dst, size_t size, const char *src, int lower)
{
    size_t n = strlen(src);
    if (n >= size)
        return -1;
    for (size_t i = 0; i < n; i++)
        dst[i] = lower && src[i] >= 'A' && src[i] <= 'Z' ? (char)(src[i] - 'A' + 'a') : src[i];
    dst[n] = '\0';
    return 0;
}

/* The text before curl sees it: "http" or "https", then exactly "//" and a host. curl
 * alone would also take "http:/h" and "http:///h", which no server writes as an id. */
static const char *check_shape(const char *url)
{
    size_t sl = strcspn(url, ":/?#");
    if (url[sl] != ':' ||
        !((sl == 4 && !strncasecmp(url, "http", 4)) || (sl == 5 && !strncasecmp(url, "https", 5))))
        return "not an http or https URL";
    const char *a = url + sl + 1;
    if (strncmp(a, "//", 2) || a[2] == '/' || a[2] == '\0')
        return "no //host after the scheme";
    if (memchr(a + 2, '@', strcspn(a + 2, "/?#")))
        return "userinfo (user@) in the URL";
    return NULL;
}

int url_split(const char *url, struct url_parts *out, struct flood_err *err)
{
    if (!url) {
        flood_err_set(err, FLOOD_EINVAL, "url: no URL");
        return -1;
    }
    if (strnlen(url, URL_INPUT_MAX + 1) > URL_INPUT_MAX) {
        flood_err_set(err, FLOOD_ELIMIT, "url: longer than %d bytes '%.80s...'", URL_INPUT_MAX,
                      url);
        return -1;
    }
    const char *why = check_shape(url);
    if (why) {
        flood_err_set(err, FLOOD_EINVAL, "url: %s '%.200s'", why, url);
        return -1;
    }
    CURLU *h = curl_url();
    if (!h) {
        flood_err_set(err, FLOOD_EIO, "url: libcurl could not allocate a URL handle");
        return -1;
    }
    char *scheme = NULL, *host = NULL, *port = NULL, *defport = NULL, *path = NULL, *query = NULL,
         *user = NULL, *password = NULL, *zone = NULL;
    int rc = -1;
    CURLUcode uc = curl_url_set(h, CURLUPART_URL, url, 0);
    if (uc != CURLUE_OK) {
        flood_err_set(err, FLOOD_EINVAL, "url: %s '%.200s'", curl_url_strerror(uc), url);
        goto out;
    }
    /* curl reports a missing optional part as an error code: absent is NULL here */
    curl_url_get(h, CURLUPART_USER, &user, 0);
    curl_url_get(h, CURLUPART_PASSWORD, &password, 0);
    curl_url_get(h, CURLUPART_ZONEID, &zone, 0);
    curl_url_get(h, CURLUPART_PORT, &port, CURLU_NO_DEFAULT_PORT);
    curl_url_get(h, CURLUPART_QUERY, &query, 0);
    if (user || password) {
        flood_err_set(err, FLOOD_EINVAL, "url: userinfo (user@) in the URL '%.200s'", url);
        goto out;
    }
    if (zone) {
        flood_err_set(err, FLOOD_EINVAL, "url: IPv6 zone id in the URL '%.200s'", url);
        goto out;
    }
    if (curl_url_get(h, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(h, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        curl_url_get(h, CURLUPART_PORT, &defport, CURLU_DEFAULT_PORT) != CURLUE_OK ||
        curl_url_get(h, CURLUPART_PATH, &path, 0) != CURLUE_OK || !host[0]) {
        flood_err_set(err, FLOOD_EINVAL, "url: no host in '%.200s'", url);
        goto out;
    }
    char *end;
    unsigned long pn = strtoul(defport, &end, 10);
    if (*end || pn == 0 || pn > 65535) {
        flood_err_set(err, FLOOD_EINVAL, "url: bad port '%s' in '%.200s'", defport, url);
        goto out;
    }
    out->port = (unsigned)pn;
    if (copy_part(out->scheme, sizeof(out->scheme), scheme, 1) < 0 ||
        copy_part(out->host, sizeof(out->host), host, 1) < 0) {
        flood_err_set(err, FLOOD_ELIMIT, "url: host longer than %d bytes in '%.200s'",
                      URL_HOST_MAX - 1, url);
        goto out;
    }
    int n = snprintf(out->authority, sizeof(out->authority), "%s%s%s", out->host, port ? ":" : "",
                     port ? port : "");
    int t = snprintf(out->target, sizeof(out->target), "%s%s%s", path[0] ? path : "/",
                     query ? "?" : "", query ? query : "");
    int o = snprintf(out->origin, sizeof(out->origin), "%s://%s", out->scheme, out->authority);
    if (n < 0 || (size_t)n >= sizeof(out->authority) || o < 0 || (size_t)o >= sizeof(out->origin)) {
        flood_err_set(err, FLOOD_ELIMIT, "url: host[:port] too long in '%.200s'", url);
        goto out;
    }
    if (t < 0 || (size_t)t >= sizeof(out->target)) {
        flood_err_set(err, FLOOD_ELIMIT, "url: path and query longer than %d bytes in '%.200s'",
                      URL_TARGET_MAX - 1, url);
        goto out;
    }
    rc = 0;
out:
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_free(defport);
    curl_free(path);
    curl_free(query);
    curl_free(user);
    curl_free(password);
    curl_free(zone);
    curl_url_cleanup(h);
    return rc;
}
