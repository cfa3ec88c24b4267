/* flood/cmd/cmd.h: the commands main() dispatches to. Each takes its own argv (argv[0] is the
 * command's name) and returns the process exit code: 0 ok, 1 failure, 2 usage.
 *
 * The room flood/cmd/: the commands, thin on top of every other room: one file a command
 * (cmd_*.c), the option parser they share (cli.c) and flood run's options (run_opts.c).
 * Nothing includes this room but flood/main.c. */
#ifndef FLOOD_CMD_H
#define FLOOD_CMD_H

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

#endif
