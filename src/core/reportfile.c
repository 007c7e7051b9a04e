/* reportfile: see reportfile.h. */
#include "reportfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "canon.h"
#include "path.h"
#include "show.h"

/* A symlink on the way to the report's folder that lies where a step writes. */
static int planted(void *arg, const char *link, const char *target)
{
	(void)target;
	const struct grants *g = arg;
	for (size_t i = 0; i < g->n; i++)
		if ((g->v[i].access & GRANT_WRITE) && !(g->v[i].access & GRANT_PRIVATE) &&
		    path_beneath(link, g->v[i].path))
			return -ELOOP;
	return 0;
}

int reportfile_dir(const char *path, const char *opt, const struct grants *g, char **dir_out,
		   struct stepbox_err *err)
{
	char dir[PATH_MAX];
	bool exists = false;
	int r;
	*dir_out = NULL;
	if (!path_parent(path, dir, sizeof(dir)))
		r = -ENAMETOOLONG;
	else
		r = canon_links("/", dir, dir_out, &exists, planted, (void *)g);
	if (r == -ELOOP && *dir_out == NULL) {
		r = err_set(err, ERR_USAGE, 0,
			    "the folder of %s '%s' goes through a symlink in a "
			    "write grant",
			    opt, path);
		err_hint(err,
			 "a step may have planted it: remove the link, or keep %s out of the "
			 "step's write grants",
			 opt);
	} else if (r < 0 || !exists) {
		r = err_set(err, ERR_USAGE, r < 0 ? -r : ENOENT, "the folder of %s '%s'", opt,
			    path);
		err_hint(err, "%s names a file in a folder that exists", opt);
	}
	if (r < 0) {
		free(*dir_out);
		*dir_out = NULL;
	}
	return r;
}

/*
 * Write root to path, atomically (a temporary file, then rename), in dir:
 * path's folder, canonical. The folder may lie in a step's write grants: it
 * is opened without following any symlink (one there now was planted), and
 * everything after is relative to it. Takes root.
 */
int reportfile_write(const char *path, const char *opt, const char *dir, json_t *root,
		     struct stepbox_err *err)
{
	const char *name = path_base(path);
	char tmp[NAME_MAX + 32];
	int dfd = path_open_nofollow(dir, O_DIRECTORY);
	if (!root || dfd < 0 ||
	    snprintf(tmp, sizeof(tmp), ".%s.tmp.%d", name, (int)getpid()) >= (int)sizeof(tmp)) {
		int e = dfd < 0 ? -dfd : root ? ENAMETOOLONG : ENOMEM;
		json_decref(root);
		if (dfd >= 0)
			close(dfd);
		err_set(err, ERR_USAGE, e, "write %s '%s'", opt, path);
		if (e == ELOOP)
			err_hint(err,
				 "its folder '%s' goes through a symlink (one a step may have "
				 "planted); give %s a path through real folders, out of the "
				 "step's write grants",
				 dir, opt);
		return -e;
	}
	int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	FILE *f_out = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f_out) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		close(dfd);
		json_decref(root);
		return err_set(err, ERR_USAGE, e, "write %s '%s/%s'", opt, dir, tmp);
	}
	int r = show_dump(f_out, root);
	int e = 0;
	if (fclose(f_out) != 0 || r < 0 || renameat(dfd, tmp, dfd, name) < 0) {
		e = errno ? errno : EIO;
		unlinkat(dfd, tmp, 0);
	}
	close(dfd);
	return e ? err_set(err, ERR_USAGE, e, "write %s '%s'", opt, path) : 0;
}

int reportfile_error(const char *path, const struct stepbox_config *cfg,
		     const struct stepbox_err *failure, struct stepbox_err *err)
{
	/*
	 * Nothing was resolved yet, so no grant tells which symlinks a step
	 * could have planted: the folder is taken as given, through no symlink
	 * at all (write_report opens it with RESOLVE_NO_SYMLINKS).
	 */
	char dir[PATH_MAX];
	if (!path_parent(path, dir, sizeof(dir)))
		return err_set(err, ERR_USAGE, ENAMETOOLONG, "write --report '%s'", path);
	/* the path the message is about: stepbox quotes it as '...' */
	const char *q = strchr(failure->msg, '\''), *q2 = q ? strchr(q + 1, '\'') : NULL;
	json_t *error = json_pack(
		"{s:s, s:s, s:o, s:o, s:o}", "kind",
		failure->kind == ERR_USAGE ? "usage" : "sandbox_unavailable", "message",
		failure->msg, "path", q2 ? json_stringn(q + 1, (size_t)(q2 - q - 1)) : json_null(),
		"hint", failure->hint[0] ? json_string(failure->hint) : json_null(), "errno",
		failure->errnum ? json_integer(failure->errnum) : json_null());
	json_t *root =
		json_pack("{s:i, s:b, s:i, s:o, s:o}", "version", 1, "started", false, "exit_code",
			  125, "error", error, "network", show_network_json(cfg));
	return reportfile_write(path, "--report", dir, root, err);
}
