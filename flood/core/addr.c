#include "flood/core/addr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int addr_numeric(const char *host, unsigned port, struct sockaddr_storage *ss, socklen_t *len)
{
    memset(ss, 0, sizeof(*ss));
    struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        *len = sizeof(*v4);
        return 0;
    }
    if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        *len = sizeof(*v6);
        return 0;
    }
    return -1;
}

int addr_parse(const char *spec, const char *what, unsigned flags, struct sockaddr_storage *ss,
               socklen_t *len, struct flood_err *err)
{
    struct sockaddr_storage scratch;
    socklen_t scratch_len;
    if (!ss)
        ss = &scratch;
    if (!len)
        len = &scratch_len;
    char host[128];
    const char *colon = spec ? strrchr(spec, ':') : NULL;
    if (!colon || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
        strlen(colon + 1) > 5)
        goto bad;
    size_t hl = (size_t)(colon - spec);
    if (hl >= sizeof(host) || (!hl && !(flags & ADDR_HOST_OPTIONAL)))
        goto bad;
    memcpy(host, spec, hl);
    host[hl] = '\0';
    if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = '\0';
    }
    long port = strtol(colon + 1, NULL, 10);
    if (port > 65535)
        goto bad;
    if (addr_numeric(*host ? host : "0.0.0.0", (unsigned)port, ss, len) == 0)
        return 0;
bad:
    flood_err_set(err, FLOOD_EINVAL, "%s: bad address '%s' (want ADDR:PORT, a numeric address)",
                  what, spec ? spec : "");
    return -1;
}

int addr_parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *len,
                      struct flood_err *err)
{
    return addr_parse(spec, "--listen", ADDR_HOST_OPTIONAL, ss, len, err);
}

int addr_bound(int fd, char out[ADDR_TEXT_MAX], int *port)
{
    struct sockaddr_storage a;
    socklen_t al = sizeof(a);
    if (fd < 0 || getsockname(fd, (struct sockaddr *)&a, &al) < 0)
        return -1;
    char host[INET6_ADDRSTRLEN];
    int v6 = a.ss_family == AF_INET6;
    if (a.ss_family != AF_INET && !v6)
        return -1;
    const void *ip = v6 ? (const void *)&((struct sockaddr_in6 *)&a)->sin6_addr
                        : (const void *)&((struct sockaddr_in *)&a)->sin_addr;
    int p =
        ntohs(v6 ? ((struct sockaddr_in6 *)&a)->sin6_port : ((struct sockaddr_in *)&a)->sin_port);
    if (!inet_ntop(a.ss_family, ip, host, sizeof(host)))
        return -1;
    snprintf(out, ADDR_TEXT_MAX, v6 ? "[%s]:%d" : "%s:%d", host, p);
    if (port)
        *port = p;
    return 0;
}
