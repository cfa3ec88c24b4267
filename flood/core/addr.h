/* flood/core/addr.h: numeric socket addresses, and listening addresses. "ADDR:PORT", "[V6]:PORT" or
 * ":PORT" (numeric addresses only: a listener never resolves a name) into a socket address, for the
 * crowd's server, the metrics endpoint and any other listener. */
#ifndef FLOOD_ADDR_H
#define FLOOD_ADDR_H

#include <sys/socket.h>

#include "sign/err.h"

/* A numeric address (IPv4 or IPv6, no brackets) and port into ss (its length in *len): 0,
 * or -1 when host is not one. The crowd's listeners and the sender's --resolve and
 * literal-address origins share it. */
int addr_numeric(const char *host, unsigned port, struct sockaddr_storage *ss,
                 socklen_t *len) FLOOD_WUR;

/* Parse spec into ss (its length in *len). 0, or -1 and err ("--listen: expected ADDR:PORT
 * (a numeric address), got '...'"). ss and len may be NULL to only check spec. */
int addr_parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *len,
                      struct flood_err *err) FLOOD_WUR;

#endif
