/* flood/cmd/cmd_sign.h: `flood sign` and `flood verify`, the command-line face of sign/. */
#ifndef FLOOD_CMD_SIGN_H
#define FLOOD_CMD_SIGN_H

/* flood sign --key PEM --key-id ID --method M --url URL [--body FILE] [--content-type CT]
 *            [--dialect cavage|rfc9421] [--date IMF-FIXDATE | --time EPOCH]
 * Prints the headers to add, "Name: value" a line. Returns 0, 1 on failure, 2 on usage. */
int cmd_sign(int argc, char **argv);

/* flood verify --key PEM --method M --url URL [--body FILE] [--header 'Name: value']...
 *              [--headers-file FILE] [--now EPOCH] [--window SECONDS]
 * Prints "ok <dialect> keyId=<id>" and returns 0; prints "flood: verify: <verdict>: <detail>"
 * on stderr and returns 1; 2 on usage. */
int cmd_verify(int argc, char **argv);

#endif
