/*
 * shm: the step's own /dev/shm under Landlock alone.
 *
 * glibc makes POSIX shared memory (shm_open) and named semaphores
 * (sem_open: Python's multiprocessing, PostgreSQL, Chromium, test runners)
 * as files in /dev/shm, a path no program chooses. The namespace layers
 * mount a tmpfs of the step's own there; Landlock alone can only grant or
 * refuse the host's, which holds every other process's shared memory (a
 * root step's: all of it). So the supervisor serves the calls glibc makes
 * there from a folder of the step's own, made here, and removed with
 * everything in it when the step ends: the step sees an empty /dev/shm
 * whose objects are its own, and never the host's.
 */
#ifndef STEPBOX_SHM_H
#define STEPBOX_SHM_H

#include <limits.h>

#include "err.h"

struct shm_place {
	int dirfd; /* -1: none */
	char path[PATH_MAX];
};

/*
 * Make the folder: in /dev/shm (memory, as the step's program expects),
 * else in XDG_RUNTIME_DIR or /tmp, mode 0700. Folders that earlier runs
 * killed before their end left there (their stepbox is gone) are removed
 * first. 0, or -errno with err saying what failed.
 */
int shm_place_make(struct shm_place *p, struct stepbox_err *err);

/* Remove the folder and what the step made in it; a no-op for none. */
void shm_place_remove(struct shm_place *p);

/*
 * The object a path names in /dev/shm: "/dev/shm/NAME" with NAME one
 * component (not "." or ".."), as glibc writes it; NULL for any other path,
 * which the supervisor leaves to Landlock.
 */
const char *shm_name(const char *path);

#endif
