#include "err.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int err_set(struct stepbox_err *err, enum err_kind kind, int errnum, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
		if (errnum) {
			size_t len = strlen(err->msg);
			snprintf(err->msg + len, sizeof(err->msg) - len, ": %s", strerror(errnum));
		}
		err->kind = kind;
		err->errnum = errnum;
		err->hint[0] = '\0';
	}
	return errnum ? -errnum : -EINVAL;
}

void err_hint(struct stepbox_err *err, const char *fmt, ...)
{
	if (!err)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->hint, sizeof(err->hint), fmt, ap);
	va_end(ap);
}

void err_print(const struct stepbox_err *err)
{
	fprintf(stderr, "stepbox: %s%s\n",
		err->kind == ERR_UNAVAILABLE ? "SANDBOX_UNAVAILABLE: " : "", err->msg);
	if (err->hint[0])
		fprintf(stderr, "hint: %s\n", err->hint);
}

int err_exit_code(const struct stepbox_err *err)
{
	return err->kind == ERR_CANNOT_EXEC ? 126 : err->kind == ERR_NOT_FOUND ? 127 : 125;
}

void err_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("stepbox: warning: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
