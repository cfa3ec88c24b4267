/* flood/cmd/cmd.h: the commands main() dispatches to. Each takes its own argv (argv[0] is the
 * command's name) and returns the process exit code: 0 ok, 1 failure, 2 usage.
 *
 * The room flood/cmd/: the commands, thin on top of every other room: one file a command
 * (cmd_*.c, each with its option rows, core/opt.h) and flood run's option rows (run_opts.c).
 * Nothing includes this room but flood/main.c. */
#ifndef FLOOD_CMD_H
#define FLOOD_CMD_H

#include "flood/core/opt.h"

int cmd_serve(int argc, char **argv);
int cmd_actors(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_capacity(int argc, char **argv);
int cmd_sign(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_fetch(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_matrix(int argc, char **argv);
int cmd_presets(int argc, char **argv);
/* flood merge OUT DIR...: the shards of one run as one run's results. */
int cmd_merge(int argc, char **argv);
/* flood options: every command's options as their rows declare them (for the docs' test). */
int cmd_options(int argc, char **argv);

/* Each command's own option rows (core/opt.h); flood run's are run_opt_rows (run_opts.h),
 * the crowd's and the inbound side's crowd_opt_rows and inbound_opt_rows. */
extern const struct opt serve_opt_rows[], capacity_opt_rows[], sign_opt_rows[], verify_opt_rows[],
    fetch_opt_rows[], check_opt_rows[], report_opt_rows[], compare_opt_rows[], matrix_opt_rows[],
    merge_opt_rows[], presets_opt_rows[];

#endif
