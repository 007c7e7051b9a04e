/* err: the one error record every module fills and only main prints. */
#ifndef STEPBOX_ERR_H
#define STEPBOX_ERR_H

#include <stdarg.h>

enum err_kind {
	ERR_USAGE,       /* bad flags or policy: exit 125 */
	ERR_UNAVAILABLE, /* the sandbox cannot be applied as asked: exit 125 */
	ERR_CANNOT_EXEC, /* the command was found and cannot be executed: exit 126 */
	ERR_NOT_FOUND,   /* the command (or its interpreter) is not there: exit 127 */
};

struct stepbox_err {
	enum err_kind kind;
	int errnum;      /* errno of the failing call, 0 if none */
	char msg[1024];  /* "cannot open '/srv/x': Permission denied" */
	char hint[1024]; /* what the user can do, or "" */
};

/*
 * Fill err (which may be NULL) and return -errnum, or -EINVAL when errnum is
 * 0, so callers can write `return err_set(err, ...)`. The message is printf
 * formatted; when errnum is non-zero ": strerror(errnum)" is appended.
 */
__attribute__((format(printf, 4, 5))) int err_set(struct stepbox_err *err, enum err_kind kind,
						  int errnum, const char *fmt, ...);

/* Set the hint line of an error already filled; no-op when err is NULL. */
__attribute__((format(printf, 2, 3))) void err_hint(struct stepbox_err *err, const char *fmt, ...);

/* Print "stepbox: [SANDBOX_UNAVAILABLE: ]msg" and "hint: ..." to stderr. */
void err_print(const struct stepbox_err *err);

/* stepbox's exit status for err: 125, or 126 and 127 for a command that cannot run. */
int err_exit_code(const struct stepbox_err *err);

/* Print "stepbox: warning: ..." to stderr. */
__attribute__((format(printf, 1, 2))) void err_warn(const char *fmt, ...);

#endif
