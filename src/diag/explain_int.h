/*
 * explain_int.h: what explain.c and explain_learn.c share of one judgment;
 * nothing else includes it.
 */
#ifndef STEPBOX_EXPLAIN_INT_H
#define STEPBOX_EXPLAIN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "explain.h"

/* The policy key d's grant goes in: read_paths, write_paths or unix_sockets. */
const char *explain_grant_key(const struct explain_denial *d);
/* d changes something (not a read, a lookup or an exec). */
bool explain_is_write(const struct explain_denial *d);
/* The canonical form of path, its missing tail kept as written. */
void explain_canonical(const char *path, char *out, size_t cap);
/* A character or block device (a grant gives none but the baseline's). */
bool explain_is_device(const char *path);
/* Why a hidden path is hidden, as one clause. */
const char *explain_hidden_why(const char *path);
/* path is a key or credential file, or in a folder that holds them. */
bool explain_holds_keys(const char *path);
/*
 * Why a write grant of grant (canonical) is never proposed ("GRANT: why",
 * malloc'd), or NULL: a system folder, /opt, a home folder or what holds one,
 * unless in the workdir. homes: HOME and the user database's, "" for none.
 */
char *explain_write_refused(const char *grant, const char *const homes[2], const char *workdir);
/* d reads or runs a tool installed in HOME: who installed it, and its root in root. */
const char *explain_home_tool(const struct explain_denial *d, const char *home, char *root,
			      size_t cap);

/*
 * What to do about one sandbox denial, after it was named: one line on out.
 * Returns whether that line proposes d's grant (in proposed: the report's
 * "grant", which the MCP result takes): never for a hidden entry, a system
 * folder written, the shared cache, or a file of HOME (--home-file instead).
 * home: the caller's canonical HOME, or NULL.
 */
bool explain_advice(FILE *out, const struct explain *x, const struct explain_denial *d,
		    const char *home, char *proposed, size_t cap);

#endif
