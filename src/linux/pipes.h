/*
 * pipes: the named pipes (FIFOs) beneath a folder, found by each entry's type
 * as the folder lists it (getdents, no stat where the file system says). A
 * read-only mount does not keep a pipe from being opened for writing, so the
 * mount plan hides those in read grants where nothing else refuses them
 * (mountns.c, cover_fifos).
 */
#ifndef STEPBOX_PIPES_H
#define STEPBOX_PIPES_H

#include <stdbool.h>
#include <stddef.h>

#include "strv.h"

#define PIPES_DEPTH 64
#define PIPES_DEPTH_TEXT "64"

/* What a search calls: skip says a path is not to be searched (a mount of its
 * own); found takes each pipe (0, or a negative errno that ends the search). */
struct pipes_search {
	bool (*skip)(void *arg, const char *path);
	int (*found)(void *arg, const char *path);
	void *arg;
	size_t budget; /* entries it may still look at, across searches */
};

/*
 * Search the folder path (PATH_MAX bytes, extended in place and restored),
 * open as name in dfd. 0; 1 when the budget ran out first; 2 when a folder
 * could not be listed or lay deeper than PIPES_DEPTH (its siblings are still
 * searched); or found's negative errno.
 */
int pipes_find(struct pipes_search *s, int dfd, const char *name, char *path);

/*
 * Say, for each folder not searched whole (paths, with its sentence in
 * why), that a pipe there could be written: on stderr the first time for
 * that folder, then only with verbosity > 0. The folders said are kept, one
 * a line, in $XDG_STATE_HOME/stepbox/pipes-unsearched (else
 * ~/.local/state/stepbox/...); a run that cannot keep them says it each time.
 */
void pipes_say_unsearched(const struct strv *paths, const struct strv *why, int verbosity);

#endif
