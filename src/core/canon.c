/*
 * canon: a path resolved to its canonical place as the kernel would from a
 * root, symlink by symlink, with a missing tail kept as written. grants
 * resolve every path with it before the sandbox starts; explain, env and
 * the report folder use it to name places as the host has them.
 */
#include "canon.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path.h"

#define MAX_SYMLINKS 40

int canon_host_path(const char *root, const char *path, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "%s%s", strcmp(root, "/") ? root : "", path);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* one walk: pending is what is left to walk; done the resolved prefix ("" is /) */
struct walk {
	const char *root;
	char pending[PATH_MAX * 2], done[PATH_MAX], hp[PATH_MAX * 2];
	char *p;
	int links;
	bool *exists;
	canon_link_fn on_link;
	void *arg;
	struct strv *dirs;
	struct canon_fd *held;
};

/* the next name off pending into comp: 1 for one, 0 at the end */
static int next_comp(struct walk *w, char comp[NAME_MAX + 1], size_t *lenp)
{
	while (*w->p == '/')
		w->p++;
	if (!*w->p)
		return 0;
	char *end = strchr(w->p, '/');
	size_t len = end ? (size_t)(end - w->p) : strlen(w->p);
	if (len > NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(comp, w->p, len);
	comp[len] = '\0';
	w->p += len;
	*lenp = len;
	return 1;
}

/* done ends in a symlink at hp: walk its target, then the rest */
static int follow_link(struct walk *w, size_t dl, int *races)
{
	char target[PATH_MAX];
	if (++w->links > MAX_SYMLINKS)
		return -ELOOP;
	ssize_t tl = readlink(w->hp, target, sizeof(target) - 1);
	if (tl < 0 && errno == EINVAL && ++*races < 8)
		return 1; /* no longer a link: swapped since lstat, look again */
	if (tl < 0)
		return -errno;
	target[tl] = '\0';
	/* done is the link's own canonical place: its parents are resolved */
	int r = w->on_link ? w->on_link(w->arg, w->done, target) : 0;
	if (r < 0)
		return r;
	char rest[PATH_MAX * 2];
	if (snprintf(rest, sizeof(rest), "%s%s%s", target, *w->p ? "/" : "", w->p) >=
	    (int)sizeof(rest))
		return -ENAMETOOLONG;
	snprintf(w->pending, sizeof(w->pending), "%s", rest);
	w->p = w->pending;
	w->done[dl] = '\0'; /* drop the link itself */
	if (target[0] == '/')
		w->done[0] = '\0';
	return 0;
}

/* look at done (on the host at hp): missing, a link to follow, or a folder */
static int look(struct walk *w, size_t dl)
{
	struct stat st;
	int races = 0;
again:
	if (lstat(w->hp, &st) < 0) {
		if (errno != ENOENT)
			return -errno;
		*w->exists = false;
		return 0;
	}
	if (S_ISLNK(st.st_mode)) {
		int r = follow_link(w, dl, &races);
		if (r > 0)
			goto again;
		return r;
	}
	if (*w->p && !S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (*w->p && w->dirs && w->dirs->n < 256 && strv_push(w->dirs, w->done) < 0)
		return -ENOMEM;
	return 0;
}

/* one name of the walk: ".", "..", or one more on done, looked at */
static int step(struct walk *w, const char *comp, size_t len)
{
	if (strcmp(comp, ".") == 0)
		return 0;
	if (strcmp(comp, "..") == 0) {
		char *slash = strrchr(w->done, '/');
		if (slash)
			*slash = '\0';
		return 0;
	}
	size_t dl = strlen(w->done);
	if (dl + 1 + len >= sizeof(w->done))
		return -ENAMETOOLONG;
	w->done[dl] = '/';
	memcpy(w->done + dl + 1, comp, len + 1);
	if (!*w->exists)
		return 0; /* beneath a missing folder: keep the rest as written */
	if (*w->p && w->dirs && strv_find(w->dirs, w->done) >= 0)
		return 0; /* a real folder, seen already in this build */
	if (canon_host_path(w->root, w->done, w->hp, sizeof(w->hp)) < 0)
		return -ENAMETOOLONG;
	if (w->held && !*w->p && w->held->fd < 0) {
		/* a symlink, a missing name, anything else: looked at below */
		int fd = path_open_nofollow_typed(w->hp, &w->held->dir);
		if (fd >= 0) {
			w->held->fd = fd;
			return 0;
		}
	}
	return look(w, dl);
}

int canon_memo(const char *root, const char *path, char **out, bool *exists, canon_link_fn on_link,
	       void *arg, struct strv *dirs, struct canon_fd *held)
{
	struct walk w = {.root = root,
			 .exists = exists,
			 .on_link = on_link,
			 .arg = arg,
			 .dirs = dirs,
			 .held = held};
	*out = NULL;
	if (strlen(path) >= PATH_MAX)
		return -ENAMETOOLONG;
	snprintf(w.pending, sizeof(w.pending), "%s", path);
	w.done[0] = '\0';
	*exists = true;
	if (held)
		held->fd = -1;
	w.p = w.pending;
	for (;;) {
		char comp[NAME_MAX + 1];
		size_t len;
		int r = next_comp(&w, comp, &len);
		if (r < 0)
			return r;
		if (r == 0)
			break;
		r = step(&w, comp, len);
		if (r < 0)
			return r;
	}
	*out = strdup(w.done[0] ? w.done : "/");
	if (*out || !held || held->fd < 0)
		return *out ? 0 : -ENOMEM;
	close(held->fd);
	held->fd = -1;
	return -ENOMEM;
}

int canon_links(const char *root, const char *path, char **out, bool *exists, canon_link_fn on_link,
		void *arg)
{
	return canon_memo(root, path, out, exists, on_link, arg, NULL, NULL);
}

int canon_path(const char *root, const char *path, char **out, bool *exists)
{
	return canon_links(root, path, out, exists, NULL, NULL);
}
