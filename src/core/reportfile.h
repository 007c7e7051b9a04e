/*
 * reportfile: the --report file, on every platform. Its folder is resolved
 * before the step runs (a symlink a step could have planted on the way is
 * refused), and the JSON is written atomically (a temporary file, then
 * rename) relative to that folder, through no symlink. A run's report is
 * built by its backend's launcher (src/diag/report.c, src/macos/seatbelt.c); the report
 * of a run that never started is built here.
 */
#ifndef STEPBOX_REPORTFILE_H
#define STEPBOX_REPORTFILE_H

#include <jansson.h>

#include "err.h"
#include "grants.h"
#include "policy.h"

/*
 * The canonical folder of path (the report file, or learn's -o: opt, the
 * option that named it, for the messages) into *dir: 0, or -errno with err
 * when it does not exist or goes through a symlink in one of g's write
 * grants (a step may have planted it).
 */
int reportfile_dir(const char *path, const char *opt, const struct grants *g, char **dir,
		   struct stepbox_err *err);

/* Write root (taken) to path in dir, its canonical folder. 0 or -errno with err. */
int reportfile_write(const char *path, const char *opt, const char *dir, json_t *root,
		     struct stepbox_err *err);

/*
 * The report of a run that never started (exit 125): version, started false,
 * and an error object (kind, message, path, hint, errno) from failure.
 */
int reportfile_error(const char *path, const struct stepbox_config *cfg,
		     const struct stepbox_err *failure, struct stepbox_err *err);

#endif
