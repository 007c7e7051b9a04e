/*
 * command: finding the step's command as execvp would, and the word when it
 * cannot run (incident 1: a refused exec that nothing explained). Portable:
 * every backend's launcher shares it, so "command not found", "the sandbox
 * refused it" and the exit statuses (DESIGN.md: 126, 127, 128+N) read the
 * same on Linux and macOS.
 */
#ifndef STEPBOX_COMMAND_H
#define STEPBOX_COMMAND_H

#include <stdbool.h>

/*
 * Find argv0 as execvp would, in path_env, relative names against workdir.
 * Returns 0 with *out owned by the caller, -ENOENT when nothing is found,
 * -EACCES when only non-executable matches exist (*out names the first).
 */
int command_resolve(const char *argv0, const char *path_env, const char *workdir, char **out);

/*
 * command_resolve with envp's PATH, saying on stderr what was not found:
 * 0 with *file set, 127 (not found) or 126 (not executable) with the word
 * said and *file NULL, or a negative errno.
 */
int command_find(const char *argv0, char *const *envp, const char *workdir, char **file);

/* Whether the sandbox lets the canonical path canon be executed (arg: the backend's). */
typedef bool command_may_exec(const void *arg, const char *canon);

/*
 * The exec of file failed with errnum: say why on stderr (a folder, outside
 * every execute grant as may says, a missing or refused interpreter) and
 * return the exit status, 126 or 127 (ENOENT).
 */
int command_exec_failure(command_may_exec *may, const void *arg, const char *file, int errnum);

/*
 * Before a launcher that cannot report its exec's errno (sandbox-exec): 0
 * when may lets file and its "#!" interpreter run, else the word said as
 * command_exec_failure says it, and 126 or 127.
 */
int command_check(command_may_exec *may, const void *arg, const char *file);

/* stepbox's exit status for a wait status: the command's, or 128+N for signal N. */
int command_status(int status);

#endif
