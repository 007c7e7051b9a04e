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

int canon_memo(const char *root, const char *path, char **out, bool *exists,
		      canon_link_fn on_link, void *arg, struct strv *dirs, struct canon_fd *held)
{
	/* pending: what is left to walk; done: the resolved prefix ("" is /) */
	char pending[PATH_MAX * 2], done[PATH_MAX], hp[PATH_MAX * 2];
	int links = 0;
	*out = NULL;
	if (strlen(path) >= PATH_MAX)
		return -ENAMETOOLONG;
	snprintf(pending, sizeof(pending), "%s", path);
	done[0] = '\0';
	*exists = true;
	if (held)
		held->fd = -1;
	char *p = pending;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char comp[NAME_MAX + 1];
		if (len > NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(comp, p, len);
		comp[len] = '\0';
		p += len;
		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			char *slash = strrchr(done, '/');
			if (slash)
				*slash = '\0';
			continue;
		}
		size_t dl = strlen(done);
		if (dl + 1 + len >= sizeof(done))
			return -ENAMETOOLONG;
		done[dl] = '/';
		memcpy(done + dl + 1, comp, len + 1);
		if (!*exists)
			continue; /* beneath a missing folder: keep the rest as written */
		struct stat st;
		if (*p && dirs && strv_find(dirs, done) >= 0)
			continue; /* a real folder, seen already in this build */
		if (canon_host_path(root, done, hp, sizeof(hp)) < 0)
			return -ENAMETOOLONG;
		if (held && !*p && held->fd < 0) {
			/* a symlink, a missing name, anything else: looked at below */
			int fd = path_open_nofollow_typed(hp, &held->dir);
			if (fd >= 0) {
				held->fd = fd;
				continue;
			}
		}
		int races = 0;
	again:
		if (lstat(hp, &st) < 0) {
			if (errno != ENOENT)
				return -errno;
			*exists = false;
			continue;
		}
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			if (++links > MAX_SYMLINKS)
				return -ELOOP;
			ssize_t tl = readlink(hp, target, sizeof(target) - 1);
			if (tl < 0 && errno == EINVAL && ++races < 8)
				goto again; /* no longer a link: swapped since lstat, look again */
			if (tl < 0)
				return -errno;
			target[tl] = '\0';
			/* done is the link's own canonical place: its parents are resolved */
			int r = on_link ? on_link(arg, done, target) : 0;
			if (r < 0)
				return r;
			char rest[PATH_MAX * 2];
			if (snprintf(rest, sizeof(rest), "%s%s%s", target, *p ? "/" : "", p) >=
			    (int)sizeof(rest))
				return -ENAMETOOLONG;
			snprintf(pending, sizeof(pending), "%s", rest);
			p = pending;
			done[dl] = '\0'; /* drop the link itself */
			if (target[0] == '/')
				done[0] = '\0';
			continue;
		}
		if (*p && !S_ISDIR(st.st_mode))
			return -ENOTDIR;
		if (*p && dirs && dirs->n < 256 && strv_push(dirs, done) < 0)
			return -ENOMEM;
	}
	*out = strdup(done[0] ? done : "/");
	if (*out || !held || held->fd < 0)
		return *out ? 0 : -ENOMEM;
	close(held->fd);
	held->fd = -1;
	return -ENOMEM;
}

int canon_links(const char *root, const char *path, char **out, bool *exists,
		       canon_link_fn on_link, void *arg)
{
	return canon_memo(root, path, out, exists, on_link, arg, NULL, NULL);
}

int canon_path(const char *root, const char *path, char **out, bool *exists)
{
	return canon_links(root, path, out, exists, NULL, NULL);
}
