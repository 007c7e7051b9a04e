/*
 * path: the path predicates and the symlink-safe file operations every module
 * shares. Paths here are absolute and canonical unless a function says
 * otherwise. Nothing here follows a symlink it was not asked to follow:
 * stepbox acts as the caller before the sandbox exists, in folders a previous
 * step could write, so a planted link must never redirect it.
 */
#ifndef STEPBOX_PATH_H
#define STEPBOX_PATH_H

#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * macOS has no O_PATH: a descriptor opened for reading stands in. Where a
 * folder cannot be read it is refused (EACCES): the safe side for what
 * stepbox uses these for (walking to a folder without following links).
 */
#ifndef O_PATH
#define O_PATH O_RDONLY
#endif

/* Whether path is dir or lies beneath it ("/" holds everything). */
bool path_beneath(const char *path, const char *dir);

/* The absolute path with "//", "." and ".." taken out as text, as a reader sees it. */
int path_normalize(const char *path, char *buf, size_t cap);

/* req as text, made absolute against cwd and normalized (no link looked at). */
int path_lexical(const char *cwd, const char *req, char *buf, size_t cap);

/* An absolute path with no empty, "." or ".." name in it: its text is where it lands, links aside.
 */
bool path_plain(const char *path);

/*
 * The folder holding path, in buf: "/a/b" gives "/a", "/a" gives "/".
 * Returns buf, or NULL when it does not fit.
 */
char *path_parent(const char *path, char *buf, size_t cap);

/* The last component of path ("/" for "/"). */
const char *path_base(const char *path);

/* What to say when a canonical path meets a symlink (-ELOOP below): planted since. */
#define PATH_LINK_APPEARED_HINT                                                                    \
	"a symlink appeared on the way since the grant was resolved; check what else writes "      \
	"there"

/*
 * Open the canonical absolute path with O_PATH | O_CLOEXEC (plus extra
 * flags: O_DIRECTORY, O_NOFOLLOW) without following any symlink on the way:
 * a component that became a symlink since path was resolved gives -ELOOP.
 * Uses openat2(RESOLVE_NO_SYMLINKS), or a walk component by component with
 * O_NOFOLLOW on kernels before 5.6. Returns the fd or a negative errno.
 */
int path_open_nofollow(const char *path, int extra);

/*
 * path_open_nofollow of a file or a folder, opened as a folder when it is one
 * (*dir says which): most grants are folders, and their type then needs no
 * stat.
 */
int path_open_nofollow_typed(const char *path, bool *dir);

/*
 * mkdir -p of the canonical absolute path without following symlinks: every
 * component is opened with O_NOFOLLOW relative to the one before and created
 * with mkdirat when missing (the last one leaf_mode, the others 0755). A
 * component that is a symlink or not a folder fails with -ELOOP or -ENOTDIR,
 * and bad (when not NULL) then holds the prefix that failed. Returns an
 * O_PATH | O_DIRECTORY fd of the folder, or a negative errno.
 */
int path_mkdir_nofollow(const char *path, mode_t leaf_mode, char *bad, size_t badcap);

/*
 * Everything fd gives until its end, in one allocation ending in a NUL
 * (*len does not count it), read whole rather than line by line (a procfs
 * file is made anew at each read). 0, -EFBIG past max bytes, or -errno.
 */
int path_read_fd(int fd, size_t max, char **out, size_t *len);

/*
 * Close fds (n of them, in rising order for the best effect): each run of
 * consecutive numbers with one close_range where there is one.
 */
void path_close_fds(const int *fds, size_t n);

/* The same for the file at path (a procfs file), or NULL when it cannot be read. */
char *path_read_file(const char *path, size_t max);

/*
 * A folder's entries straight from getdents64 (no DIR: its fcntl and
 * allocation per folder count when every launch walks /etc as root).
 */
struct path_dir {
	int fd;
	char *buf; /* Linux: getdents64's records */
#ifndef __linux__
	DIR *dir; /* elsewhere: readdir on a copy of fd */
#endif
	size_t pos, len;
	int err; /* set when reading stopped on an error */
};

struct path_entry {
	const char *name;
	unsigned char type; /* DT_*: DT_UNKNOWN where the filesystem does not say */
};

/* Open name (relative to dfd) as a folder, not following a symlink. 0 or -errno. */
int path_dir_open(struct path_dir *d, int dfd, const char *name);
/* The next entry but "." and "..", or false at the end (d->err says if early). */
bool path_dir_next(struct path_dir *d, struct path_entry *e);
void path_dir_close(struct path_dir *d);

/*
 * path, named by thread tid relative to dirfd (AT_FDCWD: its cwd), made
 * absolute as the caller's /proc shows that folder (Linux); "" in out where
 * it cannot be (too long to be a path the kernel took).
 */
void path_of_tid(pid_t tid, int dirfd, const char *path, char *out, size_t cap);

/* Decode mountinfo's octal escapes (\040 for a space) in place. */
void path_unescape_mountinfo(char *s);

/* The fields of one /proc/PID/mountinfo line. */
struct path_mount {
	char *id, *parent, *dev, *root, *mnt, *opts; /* dev: "major:minor"; root, mnt unescaped */
	char *fstype, *source, *super;               /* after " - "; NULL where the line has none */
};

/*
 * Cut line (one mountinfo line; a newline ends it) into m, in place:
 * "id parent major:minor root mount-point options [optional...] - fstype
 * source super-options". False for a line without a mount point.
 */
bool path_mount_fields(char *line, struct path_mount *m);

#endif
