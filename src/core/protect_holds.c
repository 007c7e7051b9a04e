/*
 * protect_holds: what a folder holds that the live layer must ask the file
 * system for (the probe, from a folder the caller pinned). Whether a folder the step would move
 * away or remove holds, at any depth, a checkout or a gitdir of the person's. Moved away, its name
 * is free for a clone of the step's (mv W/src W/old; git clone evil W/src/a/b/repo), and the
 * person's next git command there would run what that clone holds. Every such move meets this walk,
 * so a folder that holds one can never be brought where a walk has already been; a folder the step
 * made (its inode noted live) holds none and is not walked.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path.h"
#include "protect_int.h"

/*
 * Whether the folder up levels above the pinned folder fd holds name (its
 * stat in *st): reached by "..", from the folder the call will be made
 * in, never by a path the step could change meanwhile. 0 or -errno; fail
 * closed: a folder not reached (ctx NULL: none to look from) answers 0.
 */
static int look_above(void *ctx, unsigned up, const char *name, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	if (!ctx)
		return 0; /* no folder to look from */
	int fd = *(const int *)ctx, cur = fd;
	for (unsigned i = 0; i < up; i++) {
		int next = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (cur != fd)
			close(cur);
		if (next < 0)
			return 0;
		cur = next;
	}
	int r = fstatat(cur, name, st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
	if (r < 0 && r != -ENOENT && r != -ENOTDIR)
		r = 0;
	if (cur != fd)
		close(cur);
	return r;
}

/* The folder name in the pinned folder ctx, to be listed: an fd or -errno. */
static int open_below(void *ctx, const char *name, bool follow)
{
	if (!ctx)
		return -EBADF; /* fail closed: no folder to look from */
	int fd = openat(*(const int *)ctx, name,
			O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
	return fd < 0 ? -errno : fd;
}

struct protect_probe protect_probe_from(const int *dirfd)
{
	return (struct protect_probe){look_above, (void *)dirfd, open_below};
}

/* One folder being listed: its listing, where its path ends, what it holds. */
struct frame {
	DIR *d;
	size_t len;
	bool head, objects;
};

struct walk {
	struct frame stack[PROTECT_HOLDS_DEPTH];
	int depth;
	char path[PATH_MAX];
	size_t left; /* entries that may still be read */
	protect_mine_fn *mine;
	void *arg;
};

static void pop(struct walk *w)
{
	closedir(w->stack[--w->depth].d);
	if (w->depth)
		w->path[w->stack[w->depth - 1].len] = '\0';
}

/* Enter the folder fd (owned) as name, beneath the folder on top: 0 or -errno. */
static int push(struct walk *w, int fd, const char *name)
{
	size_t at = w->depth ? w->stack[w->depth - 1].len : 0;
	int n = w->depth ? snprintf(w->path + at, sizeof(w->path) - at, "/%s", name) : 0;
	DIR *d = w->depth >= PROTECT_HOLDS_DEPTH || n < 0 || (size_t)n >= sizeof(w->path) - at
			 ? NULL
			 : fdopendir(fd);
	if (!d) {
		close(fd);
		w->path[at] = '\0';
		return -E2BIG; /* deeper than the walk goes: fail closed */
	}
	w->stack[w->depth++] = (struct frame){d, at + (size_t)n, false, false};
	return 0;
}

bool protect_link_holds(int dirfd, const char *name)
{
	char dotgit[NAME_MAX + 16], head[NAME_MAX + 16], objects[NAME_MAX + 16];
	struct stat st;
	if (snprintf(dotgit, sizeof(dotgit), "%s/.git", name) >= (int)sizeof(dotgit) ||
	    snprintf(head, sizeof(head), "%s/HEAD", name) >= (int)sizeof(head) ||
	    snprintf(objects, sizeof(objects), "%s/objects", name) >= (int)sizeof(objects))
		return true; /* fail closed */
	return fstatat(dirfd, dotgit, &st, 0) == 0 ||
	       (fstatat(dirfd, head, &st, 0) == 0 && fstatat(dirfd, objects, &st, 0) == 0);
}

/* One entry of the folder on top: 1 a person's .git, 0 on, -errno. */
static int entry(struct walk *w, const struct dirent *e)
{
	struct frame *f = &w->stack[w->depth - 1];
	const char *name = e->d_name;
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return 0;
	if (w->left-- == 0)
		return -E2BIG;
	f->head |= strcmp(name, "HEAD") == 0;
	f->objects |= strcmp(name, "objects") == 0 || strcmp(name, "commondir") == 0;
	bool dotgit = strcmp(name, ".git") == 0;
	if (!dotgit && e->d_type != DT_DIR && e->d_type != DT_LNK && e->d_type != DT_UNKNOWN)
		return 0;
	struct stat st;
	int dfd = dirfd(f->d);
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno; /* gone meanwhile: nothing there */
	char rel[PATH_MAX];
	if (snprintf(rel, sizeof(rel), "%s/%s", w->path, name) >= (int)sizeof(rel))
		return -E2BIG;
	if (dotgit)
		return w->mine(rel, &st, true, w->arg) ? 0 : 1;
	if (S_ISLNK(st.st_mode))
		return protect_link_holds(dfd, name) ? 1 : 0;
	if (!S_ISDIR(st.st_mode) || w->mine(rel, &st, false, w->arg))
		return 0;
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	return push(w, fd, name);
}

int protect_holds_person(int fd, const char *rel, size_t budget, protect_mine_fn *mine, void *arg)
{
	static __thread struct walk w; /* PATH_MAX and the stack: not on a thread's stack */
	memset(&w, 0, sizeof(w));
	w.left = budget;
	w.mine = mine;
	w.arg = arg;
	if (snprintf(w.path, sizeof(w.path), "%s", rel) >= (int)sizeof(w.path)) {
		close(fd);
		return -E2BIG;
	}
	int r = push(&w, fd, "");
	w.stack[0].len = strlen(w.path);
	while (r == 0 && w.depth > 0) {
		struct frame *f = &w.stack[w.depth - 1];
		errno = 0;
		const struct dirent *e = readdir(f->d);
		if (e) {
			r = entry(&w, e);
		} else if (errno) {
			r = -errno;
		} else if (f->head && f->objects) {
			r = 1; /* a gitdir no .git names, in a folder the step did not make */
		} else {
			pop(&w);
		}
	}
	while (w.depth > 0)
		pop(&w);
	return r;
}

/*
 * Whether the git config name in dirfd holds a key that runs (unread: it
 * does), or may come to hold one unseen: a link (written at its target), a
 * file with a second name (written by that one).
 */
static bool config_runs(int dirfd, const char *name)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (!S_ISREG(st.st_mode) || st.st_nlink > 1))
		return true;
	int fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return errno != ENOENT;
	char *text = NULL, *why = NULL;
	size_t len = 0;
	bool runs = path_read_fd(fd, PROTECT_MAX_CONTENT, &text, &len) < 0 ||
		    (why = protect_git_runs(NULL, text, len)) != NULL;
	free(why);
	free(text);
	close(fd);
	return runs;
}

/* Whether dirfd's hooks folder holds a hook (anything but git's samples), or is a link. */
static bool hooks_run(int dirfd)
{
	int fd = openat(dirfd, "hooks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno != ENOENT && errno != ENOTDIR;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return true;
	}
	bool runs = false;
	const struct dirent *e;
	while (!runs && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		runs = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
		       !(n > 7 && strcmp(e->d_name + n - 7, ".sample") == 0);
	}
	closedir(d);
	return runs;
}

const char *protect_folder_runs(int dirfd)
{
	struct stat st;
	if (config_runs(dirfd, "config") || config_runs(dirfd, "config.worktree"))
		return ".git/config";
	if (hooks_run(dirfd))
		return ".git/hooks";
	if (fstatat(dirfd, "info/attributes", &st, 0) == 0 || errno != ENOENT)
		return ".git/info/attributes";
	return NULL;
}
