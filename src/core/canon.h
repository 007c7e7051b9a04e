/*
 * canon: a path resolved to its canonical place as the kernel would from a
 * root, symlink by symlink, with a missing tail kept as written.
 */
#ifndef STEPBOX_CANON_H
#define STEPBOX_CANON_H

#include <stdbool.h>
#include <stddef.h>

#include "strv.h"

/* root + path into buf, where root "/" adds nothing: 0 or -ENAMETOOLONG. */
int canon_host_path(const char *root, const char *path, char *buf, size_t cap);

/*
 * Resolve path as the kernel would from root (absolute symlinks restart at
 * root), like realpath(3) but tolerating a missing tail, which is appended
 * as written. *exists says whether the whole path exists. Returns 0 or a
 * negative errno (ELOOP, ENOTDIR, EACCES, ENAMETOOLONG).
 */
int canon_path(const char *root, const char *path, char **out, bool *exists);

/*
 * Called for each symlink canon_links goes through: link is where the
 * symlink lies (canonical, in the sandbox's view), target what readlink(2)
 * gives. A negative return stops the resolution and is returned.
 */
typedef int (*canon_link_fn)(void *arg, const char *link, const char *target);

/* canon_path, reporting each symlink it crosses to on_link (may be NULL). */
int canon_links(const char *root, const char *path, char **out, bool *exists, canon_link_fn on_link,
		void *arg);

/* What canon_memo's last lookup opened, when asked: an O_PATH fd on the path, or -1. */
struct canon_fd {
	int fd;
	bool dir;
};

/*
 * canon_links, remembering in dirs (when not NULL) the folders it found
 * real (not symlinks): a build resolves dozens of paths under /etc, /usr,
 * /dev and the workdir's parents, and each lstat costs a syscall. With
 * held, the last name is opened (no symlink on the whole way) instead of
 * looked at, and the fd kept for its Landlock rule: one lookup, not two.
 */
int canon_memo(const char *root, const char *path, char **out, bool *exists, canon_link_fn on_link,
	       void *arg, struct strv *dirs, struct canon_fd *held);

#endif
