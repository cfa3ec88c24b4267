#include "flood/core/addr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
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

int addr_parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *len,
                      struct flood_err *err)
{
    struct sockaddr_storage scratch;
    socklen_t scratch_len;
    if (!ss)
        ss = &scratch;
    if (!len)
        len = &scratch_len;
    char host[128];
    const char *colon = strrchr(spec, ':');
    if (!colon || colon == spec + strlen(spec) - 1)
        goto bad;
    size_t hl = (size_t)(colon - spec);
    if (hl >= sizeof(host))
        goto bad;
    memcpy(host, spec, hl);
    host[hl] = '\0';
    if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = '\0';
    }
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || port < 0 || port > 65535)
        goto bad;
    if (addr_numeric(*host ? host : "0.0.0.0", (unsigned)port, ss, len) == 0)
        return 0;
bad:
    flood_err_set(err, FLOOD_EINVAL, "--listen: expected ADDR:PORT (a numeric address), got '%s'",
                  spec);
    return -1;
}
