/*
 * command: finding the step's command as execvp would, and the word when it
 * cannot run (incident 1: a refused exec that nothing explained). Portable:
 * every backend's launcher shares it, so "command not found", "the sandbox
 * refused it" and the exit statuses (126, 127, 128+N: stepbox(1)) read the
 * same on Linux and macOS.
 */
#ifndef STEPBOX_COMMAND_H
#define STEPBOX_COMMAND_H

#include <stdbool.h>

#include "err.h"

/*
 * Find argv0 as execvp would, in path_env, relative names against workdir.
 * Returns 0 with *out owned by the caller, -ENOENT when nothing is found,
 * -EACCES when only non-executable matches exist (*out names the first).
 */
int command_resolve(const char *argv0, const char *path_env, const char *workdir, char **out);

/*
 * command_resolve with envp's PATH: 0 with *file set, or a negative errno
 * with *file NULL and err filled: ERR_NOT_FOUND (exit 127), ERR_CANNOT_EXEC
 * (a match that is not executable: 126), or ERR_UNAVAILABLE.
 */
int command_find(const char *argv0, char *const *envp, const char *workdir, char **file,
		 struct stepbox_err *err);

/* Whether the sandbox lets the canonical path canon be executed (arg: the backend's). */
typedef bool command_may_exec(const void *arg, const char *canon);

/*
 * The exec of file failed with errnum: fill err with why (a folder, outside
 * every execute grant as may says, a missing or refused interpreter), of
 * kind ERR_CANNOT_EXEC (126) or ERR_NOT_FOUND (127), and return a negative
 * errno.
 */
int command_exec_failure(command_may_exec *may, const void *arg, const char *file, int errnum,
			 struct stepbox_err *err);

/*
 * Before a launcher that cannot report its exec's errno (sandbox-exec): 0
 * when may lets file and its "#!" interpreter run, else as
 * command_exec_failure.
 */
int command_check(command_may_exec *may, const void *arg, const char *file,
		  struct stepbox_err *err);

/* The interpreter a "#!" line of file names (malloc'd), or NULL. */
char *command_interpreter(const char *file);

/* stepbox's exit status for a wait status: the command's, or 128+N for signal N. */
int command_status(int status);

#endif
