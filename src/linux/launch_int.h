/*
 * launch's private header: what launch.c (the fork, the child's steps, the
 * start) takes from launch_tree.c (the wait for the process tree, and its
 * killing). Nothing outside src/linux/launch*.c includes it.
 */
#ifndef STEPBOX_LAUNCH_INT_H
#define STEPBOX_LAUNCH_INT_H

#include <signal.h>
#include <sys/types.h>

#include "launch.h"

/* CLOCK_MONOTONIC, in seconds. */

/* SIGKILL every child of every thread of ours but spare (0: none): how many there were. */
int launch_kill_children(pid_t spare);

/*
 * Kill what is left of the tree (launch_tree.c says how); live_pgid, a
 * process group whose leader is not reaped, or 0; spare, a child of ours
 * that is not the step's (the network proxy), or 0.
 */
void launch_kill_tree(pid_t live_pgid, pid_t spare);

/*
 * Wait for the command (pid, stepbox's child) and its whole tree: the
 * signals in set (blocked) are passed on to its group, the timeout and the
 * grace enforced; then the tree is killed and res says how it ended.
 * status_fd: the init's pipe of the command's own status, or -1. Returns 0.
 */
int launch_wait(const struct launch_spec *s, pid_t pid, const sigset_t *set, int status_fd,
		struct launch_result *res);

#endif
