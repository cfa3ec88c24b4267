/* flood/cmd/cmd_fetch.h: `flood fetch`, a signed GET as a crowd actor (authorized fetch),
 * printing the answer. main() reaches it through the weak cmd_fetch of flood/cmd.h. */
#ifndef FLOOD_CMD_FETCH_H
#define FLOOD_CMD_FETCH_H

#include "flood/cmd/cmd.h"

/* flood fetch [options] URL. Exit 0 for a 2xx answer (body on stdout, JSON pretty-printed),
 * 1 for another status (status and body on stderr) or a failure, 2 for a usage error. */
int cmd_fetch(int argc, char **argv);

#endif
