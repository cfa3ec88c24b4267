/* flood/core/addr.h: numeric socket addresses, and listening addresses. "ADDR:PORT", "[V6]:PORT" or
 * ":PORT" (numeric addresses only: a listener never resolves a name) into a socket address, and
 * a listener's bound address back into text, for the crowd's server, the metrics endpoint, the
 * dashboard and any other listener. */
#ifndef FLOOD_ADDR_H
#define FLOOD_ADDR_H

#include <sys/socket.h>

#include "sign/err.h"

/* A numeric address (IPv4 or IPv6, no brackets) and port into ss (its length in *len): 0,
 * or -1 when host is not one. The crowd's listeners and the sender's --resolve and
 * literal-address origins share it. */
int addr_numeric(const char *host, unsigned port, struct sockaddr_storage *ss,
                 socklen_t *len) FLOOD_WUR;

#define ADDR_TEXT_MAX 64 /* "[V6]:PORT" and its NUL */

/* addr_parse: ":PORT" (no host) listens on every IPv4 address (0.0.0.0). */
#define ADDR_HOST_OPTIONAL 1u

/* Parse spec, "ADDR:PORT", "[V6]:PORT" (or ":PORT" with ADDR_HOST_OPTIONAL), a numeric
 * address and a port 0..65535 (0: the kernel's choice), into ss (its length in *len). 0,
 * or -1 and err ("WHAT: bad address 'SPEC' (want ADDR:PORT, a numeric address)"). ss and
 * len may be NULL to only check spec. The crowd's --listen, the metrics endpoint and the
 * dashboard share it. */
int addr_parse(const char *spec, const char *what, unsigned flags, struct sockaddr_storage *ss,
               socklen_t *len, struct flood_err *err) FLOOD_WUR;

/* addr_parse of the crowd's --listen (the host optional). */
int addr_parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *len,
                      struct flood_err *err) FLOOD_WUR;

/* The address the listening socket fd is bound to (after port 0, the port the kernel
 * chose): "ADDR:PORT" or "[V6]:PORT" into out (ADDR_TEXT_MAX bytes), the port into *port
 * (may be NULL). 0, or -1 when fd has no address. */
int addr_bound(int fd, char out[ADDR_TEXT_MAX], int *port) FLOOD_WUR;

#endif
