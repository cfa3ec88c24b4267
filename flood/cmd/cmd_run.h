/* flood/cmd/cmd_run.h: `flood run`, the crowd plus the sender: flood a target's inbox at a set
 * rate, open loop, and measure every answer. */
#ifndef FLOOD_CMD_RUN_H
#define FLOOD_CMD_RUN_H

/* Run the command with its own argv (argv[0] = "run"). Returns the exit code: 0 the run
 * ran (also when interrupted by SIGINT/SIGTERM), 1 it could not run (crowd, discovery,
 * target unreachable before the start, results not written, conservation violated),
 * 2 a usage error, 3 the run ran and its results were written but an --expect failed. */
int cmd_run(int argc, char **argv);

#endif
