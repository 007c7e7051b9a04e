/*
 * grants_dirs.c: the one part of grants that writes. grants_build only reads
 * the file tree; before a step starts, the workdir and the persistent folder
 * its grants name are made here, as the caller, never through a symlink.
 */
#include "grants.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path.h"

/* https://bford.info/cachedir/ : backup tools that honour it skip the folder */
static const char cachedir_tag[] = "Signature: 8a477f597d28d172789f06886806bc55\n"
				   "# This file is a cache directory tag created by stepbox.\n"
				   "# It marks the workflow's persistent tool folder: installed\n"
				   "# tools and caches that can be downloaded again.\n";

/*
 * mkdir -p that never follows a symlink: a previous step may have replaced a
 * folder on the way with a link since the grants were resolved, and stepbox
 * runs as the caller here. Returns an O_PATH fd of the folder, or -errno with
 * err naming the component that failed.
 */
static int make_dir(const char *path, mode_t mode, const char *what, struct stepbox_err *err)
{
	char bad[PATH_MAX];
	int fd = path_mkdir_nofollow(path, mode, bad, sizeof(bad));
	if (fd == -ELOOP) {
		err_set(err, ERR_USAGE, 0, "create %s '%s': '%s' is a symlink", what, path, bad);
		err_hint(err, "stepbox never follows a symlink where it creates its folders; a "
			      "previous step may have planted it: remove it");
		return -ELOOP;
	}
	if (fd == -ENOTDIR || fd == -EEXIST) {
		/* -C FILE: the user's words to fix, not the sandbox's */
		err_set(err, ERR_USAGE, 0, "%s '%s': '%s' is not a folder", what, path,
			bad[0] ? bad : path);
		err_hint(err, "give a folder (or a path to make one): -C DIR, --persist DIR");
		return -ENOTDIR;
	}
	if (fd < 0)
		return err_set(err, ERR_UNAVAILABLE, -fd, "create %s '%s' (at '%s')", what, path,
			       bad[0] ? bad : path);
	return fd;
}

int grants_prepare_dirs(const struct grants *g, struct stepbox_err *err)
{
	if (g->persist) {
		int dfd = make_dir(g->persist, 0700, "persistent folder", err);
		if (dfd < 0)
			return dfd;
		/* O_EXCL | O_NOFOLLOW: never overwrite or follow what is there; one is enough */
		int fd = openat(dfd, "CACHEDIR.TAG",
				O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
				0644);
		int e = errno;
		close(dfd);
		if (fd >= 0) {
			ssize_t w = write(fd, cachedir_tag, sizeof(cachedir_tag) - 1);
			close(fd);
			if (w != (ssize_t)sizeof(cachedir_tag) - 1)
				return err_set(err, ERR_UNAVAILABLE, EIO, "write '%s/CACHEDIR.TAG'",
					       g->persist);
		} else if (e != EEXIST) {
			return err_set(err, ERR_UNAVAILABLE, e, "create '%s/CACHEDIR.TAG'",
				       g->persist);
		}
	}
	int fd = make_dir(g->workdir, 0755, "workdir", err);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}
