/*
 * sbpl_int: what the profile's writer (sbpl.c) and its protected paths
 * (sbpl_protect.c) share. Nothing outside the sbpl module includes it.
 */
#ifndef STEPBOX_SBPL_INT_H
#define STEPBOX_SBPL_INT_H

#include <stdio.h>

#include "policy.h"
#include "strv.h"

struct sbpl_out {
	FILE *f;
	/* the first failure: -EINVAL for a path SBPL cannot hold, -E2BIG for a
	 * protected path with too many spellings to write, or another -errno */
	int err;
	char bad[320]; /* that path, as far as it fits */
};

/* The first failure kept, with the path it was about (or NULL). */
void sbpl_fail(struct sbpl_out *o, int err, const char *path);

/* A string literal: quotes and backslashes escaped (sbpl_fail where SBPL cannot hold it). */
void sbpl_str(struct sbpl_out *o, const char *s);

/* A path as macOS resolves it (/tmp, /var and /etc are in /private): to free, or NULL. */
char *sbpl_mac_path(const char *p);

/*
 * The protected paths beneath the write grants (write: as macOS names them),
 * as one (deny file-write* ...) form, for the profile's end (sbpl_protect.c).
 */
void sbpl_deny_protected(struct sbpl_out *o, const struct stepbox_config *cfg,
			 const struct strv *write);

#endif
