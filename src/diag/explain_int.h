/*
 * explain_int.h: what explain.c and explain_learn.c share of one judgment;
 * nothing else includes it.
 */
#ifndef STEPBOX_EXPLAIN_INT_H
#define STEPBOX_EXPLAIN_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "explain.h"

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
/* d reads or runs a tool installed in HOME: who installed it, and its root in root. */
const char *explain_home_tool(const struct explain_denial *d, const char *home, char *root,
			      size_t cap);

#endif
