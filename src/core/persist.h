/*
 * persist: one writer, or any number of readers, at a time in the workflow's
 * persistent folder P. An open file description lock (F_OFD_SETLK) on
 * P/.stepbox-lock: exclusive for --persist, shared for --persist-shared,
 * taken before the command starts and held by the launcher until every
 * process of the step is gone. The kernel frees it when the launcher dies
 * (however it dies), the descriptor is close-on-exec so no step process
 * holds it, it works across machines on NFSv4, and under the namespaces the
 * file is covered inside the sandbox (it cannot be opened, removed or
 * replaced there). docs/persistence.md has the model.
 */
#ifndef STEPBOX_PERSIST_H
#define STEPBOX_PERSIST_H

#include <stdbool.h>

#include "err.h"
#include "strv.h"

#define PERSIST_LOCK_NAME ".stepbox-lock"

struct persist_lock {
	int fd;      /* the locked file, or -1 */
	int path_fd; /* the same lock keyed by P's path, outside P (persist.c), or -1 */
	bool shared;
	double waited_s;  /* how long another step held it */
	char holder[160]; /* who held it when we started waiting, or "" */
	char killed[160]; /* the last writer, if it was killed before it ended, or "" */
};

/*
 * Lock dir (which exists) for this step. Waits while another step holds it
 * in a conflicting mode: after a second says once on stderr for what and
 * whom (unless quiet), and gives up after wait_s seconds (-1: never) with
 * err filled (exit 125). Then records this step as the holder; when the
 * last writer was killed mid-step (killed), repairs what it left
 * (persist_repair) and says so on stderr (quiet: only when something was
 * set aside). 0 or a negative errno.
 */
int persist_lock(struct persist_lock *l, const char *dir, bool shared, long wait_s, bool quiet,
		 struct stepbox_err *err);

/*
 * After the step: warn when dir/.stepbox-lock is no longer the file this
 * step locked. Under Landlock alone the step can remove it, and a step
 * started meanwhile would have locked a new one beside it.
 */
void persist_check_intact(const struct persist_lock *l, const char *dir);

/* Release (close) the lock, saying this writer ended; safe on a lock never taken. */
void persist_unlock(struct persist_lock *l);

/*
 * After a writer was killed (killed[0]): set aside what it left half done
 * where stepbox routes installs (pip's dist-info folders without a RECORD, in
 * dir/python), by renaming, never removing. Names go to set_aside.
 */
int persist_repair(const char *dir, struct strv *set_aside);

#endif
