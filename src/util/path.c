#include "path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

bool path_beneath(const char *path, const char *dir)
{
	size_t dl = strlen(dir);
	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	return strncmp(path, dir, dl) == 0 && (path[dl] == '\0' || path[dl] == '/');
}

/* The absolute path with "//", "." and ".." taken out as text, as a reader sees it. */
int path_normalize(const char *path, char *buf, size_t cap)
{
	size_t k = 0;
	buf[0] = '\0';
	for (const char *p = path; *p;) {
		size_t len = strcspn(p, "/");
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			char *slash = strrchr(buf, '/');
			if (slash)
				*slash = '\0';
			k = strlen(buf);
		} else if (len > 0 && !(len == 1 && p[0] == '.')) {
			if (k + 1 + len >= cap)
				return -ENAMETOOLONG;
			buf[k++] = '/';
			memcpy(buf + k, p, len);
			buf[k += len] = '\0';
		}
		p += len;
		while (*p == '/')
			p++;
	}
	if (k == 0)
		snprintf(buf, cap, "/");
	return 0;
}

/* req as text, made absolute against cwd and normalized (no link looked at). */
int path_lexical(const char *cwd, const char *req, char *buf, size_t cap)
{
	char abs[PATH_MAX];
	bool rel = req[0] != '/';
	if (snprintf(abs, sizeof(abs), "%s%s%s", rel ? cwd : "", rel ? "/" : "", req) >=
	    (int)sizeof(abs))
		return -ENAMETOOLONG;
	return path_normalize(abs, buf, cap);
}

bool path_plain(const char *path)
{
	if (path[0] != '/')
		return false;
	for (const char *p = path; *p;) {
		const char *name = p + 1;
		size_t len = strcspn(name, "/");
		if (len == 0 || (name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.'))))
			return false;
		p = name + len;
	}
	return true;
}

char *path_parent(const char *path, char *buf, size_t cap)
{
	if (snprintf(buf, cap, "%s", path) >= (int)cap)
		return NULL;
	char *slash = strrchr(buf, '/');
	if (!slash)
		return NULL;
	if (slash == buf)
		slash[1] = '\0';
	else
		*slash = '\0';
	return buf;
}

const char *path_base(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

#ifdef __linux__
/* Our copy of the uapi: Debian 12's headers have openat2 but not everywhere. */
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
struct path_open_how {
	uint64_t flags;
	uint64_t mode;
	uint64_t resolve;
};
#define PATH_RESOLVE_NO_SYMLINKS 0x04
#endif

static int walk_nofollow(const char *path, int extra)
{
	int dfd = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	const char *p = path;
	while (*p == '/')
		p++;
	if (!*p)
		return dfd;
	while (*p) {
		const char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char comp[NAME_MAX + 1];
		if (len > NAME_MAX) {
			close(dfd);
			return -ENAMETOOLONG;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		p += len;
		while (*p == '/')
			p++;
		int flags = O_PATH | O_NOFOLLOW | O_CLOEXEC | (*p ? O_DIRECTORY : extra);
		int fd = openat(dfd, comp, flags);
		int e = errno;
		close(dfd);
		if (fd < 0)
			return -e;
		/* O_PATH | O_NOFOLLOW opens a symlink itself: refuse it */
		struct stat st;
		if (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode)) {
			close(fd);
			return -ELOOP;
		}
		dfd = fd;
	}
	return dfd;
}

int path_open_nofollow(const char *path, int extra)
{
#ifdef __linux__
	struct path_open_how how = {
		.flags = (uint64_t)(O_PATH | O_CLOEXEC | (extra & ~O_NOFOLLOW)),
		.resolve = PATH_RESOLVE_NO_SYMLINKS,
	};
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (fd >= 0)
		return fd;
	if (errno != ENOSYS && errno != EPERM) /* EPERM: a seccomp profile refusing it */
		return -errno;
#endif
	return walk_nofollow(path, extra & ~O_NOFOLLOW);
}

int path_open_nofollow_typed(const char *path, bool *dir)
{
	int fd = path_open_nofollow(path, O_DIRECTORY);
	*dir = fd >= 0;
	return fd == -ENOTDIR ? path_open_nofollow(path, 0) : fd;
}

int path_mkdir_nofollow(const char *path, mode_t leaf_mode, char *bad, size_t badcap)
{
	char done[PATH_MAX] = "";
	if (bad && badcap)
		bad[0] = '\0';
	if (path[0] != '/' || strlen(path) >= sizeof(done))
		return -EINVAL;
	/* there already, with no symlink on the way: one call (the usual case) */
	int fast = path_open_nofollow(path, O_DIRECTORY);
	if (fast >= 0)
		return fast;
	int dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	const char *p = path;
	int r = 0;
	while (*p == '/')
		p++;
	while (*p) {
		const char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char comp[NAME_MAX + 1];
		if (len > NAME_MAX) {
			r = -ENAMETOOLONG;
			break;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		p += len;
		while (*p == '/')
			p++;
		size_t dl = strlen(done);
		snprintf(done + dl, sizeof(done) - dl, "/%s", comp);
		int fd = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT) {
			if (mkdirat(dfd, comp, *p ? 0755 : leaf_mode) < 0 && errno != EEXIST) {
				r = -errno;
				break;
			}
			fd = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (fd < 0) {
			/* O_NOFOLLOW | O_DIRECTORY on a symlink: ENOTDIR or ELOOP */
			struct stat st;
			r = fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)
				    ? -ELOOP
				    : -errno;
			break;
		}
		close(dfd);
		dfd = fd;
	}
	if (r < 0) {
		close(dfd);
		if (bad && badcap)
			snprintf(bad, badcap, "%s", done);
		return r;
	}
	return dfd;
}

#define PATH_DIR_BUF 32768

int path_dir_open(struct path_dir *d, int dfd, const char *name)
{
	memset(d, 0, sizeof(*d));
	d->fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d->fd < 0)
		return -errno;
#ifdef __linux__
	if (!(d->buf = malloc(PATH_DIR_BUF))) {
#else
	int own = dup(d->fd);
	if (own < 0 || !(d->dir = fdopendir(own))) {
		if (own >= 0)
			close(own);
#endif
		close(d->fd);
		d->fd = -1;
		return -ENOMEM;
	}
	return 0;
}

#ifdef __linux__
/* The kernel's record, as getdents64 writes it. */
struct kernel_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

bool path_dir_next(struct path_dir *d, struct path_entry *e)
{
	for (;;) {
		if (d->pos >= d->len) {
			long n = syscall(SYS_getdents64, d->fd, d->buf, PATH_DIR_BUF);
			if (n <= 0) {
				d->err = n < 0 ? errno : 0;
				return false;
			}
			d->len = (size_t)n;
			d->pos = 0;
		}
		const struct kernel_dirent64 *k = (const void *)(d->buf + d->pos);
		d->pos += k->d_reclen;
		if (strcmp(k->d_name, ".") == 0 || strcmp(k->d_name, "..") == 0)
			continue;
		e->name = k->d_name;
		e->type = k->d_type;
		return true;
	}
}
#else
bool path_dir_next(struct path_dir *d, struct path_entry *e)
{
	for (;;) {
		errno = 0;
		struct dirent *k = readdir(d->dir);
		if (!k) {
			d->err = errno;
			return false;
		}
		if (strcmp(k->d_name, ".") == 0 || strcmp(k->d_name, "..") == 0)
			continue;
		e->name = k->d_name;
		e->type = k->d_type;
		return true;
	}
}
#endif

void path_dir_close(struct path_dir *d)
{
#ifndef __linux__
	if (d->dir)
		closedir(d->dir);
	d->dir = NULL;
#endif
	if (d->fd >= 0)
		close(d->fd);
	free(d->buf);
	d->fd = -1;
	d->buf = NULL;
}

int path_read_fd(int fd, size_t max, char **out, size_t *len)
{
	size_t cap = 16384, n = 0;
	char *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (n + 1 == cap) {
			char *more = cap <= max ? realloc(buf, cap * 2) : NULL;
			if (!more) {
				free(buf);
				return cap <= max ? -ENOMEM : -EFBIG;
			}
			buf = more;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			return -e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > max) {
		free(buf);
		return -EFBIG;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

char *path_read_file(const char *path, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf = NULL;
	size_t len;
	if (fd >= 0 && path_read_fd(fd, max, &buf, &len) < 0)
		buf = NULL;
	if (fd >= 0)
		close(fd);
	return buf;
}

void path_close_fds(const int *fds, size_t n)
{
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && fds[j] == fds[j - 1] + 1; j++)
			;
#ifdef SYS_close_range
		if (j - i > 1 &&
		    syscall(SYS_close_range, (unsigned)fds[i], (unsigned)fds[j - 1], 0u) == 0)
			continue;
#endif
		for (size_t k = i; k < j; k++)
			close(fds[k]);
	}
}

/* Decode mountinfo's octal escapes (\040 for a space) in place. */
void path_unescape_mountinfo(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] && r[3]) {
			*w++ = (char)(((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/* The next space-separated field of *cursor, cut in place, or NULL. */
static char *mount_field(char **cursor)
{
	char *f = *cursor;
	if (!f || !*f)
		return NULL;
	char *sp = strchr(f, ' ');
	if (sp)
		*sp++ = '\0';
	*cursor = sp;
	return f;
}

bool path_mount_fields(char *line, struct path_mount *m)
{
	memset(m, 0, sizeof(*m));
	line[strcspn(line, "\n")] = '\0';
	/* spaces in names are escaped (\040): the first " - " ends the optional fields */
	char *dash = strstr(line, " - "), *cur = line;
	if (dash) {
		*dash = '\0';
		char *tail = dash + 3;
		m->fstype = mount_field(&tail);
		m->source = mount_field(&tail);
		m->super = mount_field(&tail);
	}
	m->id = mount_field(&cur);
	m->parent = mount_field(&cur);
	m->dev = mount_field(&cur);
	m->root = mount_field(&cur);
	m->mnt = mount_field(&cur);
	m->opts = mount_field(&cur);
	if (!m->mnt)
		return false;
	path_unescape_mountinfo(m->root);
	path_unescape_mountinfo(m->mnt);
	return true;
}

void path_of_tid(pid_t tid, int dirfd, const char *path, char *out, size_t cap)
{
	if (path[0] == '/') {
		snprintf(out, cap, "%s", path);
		return;
	}
	char link[64], base[PATH_MAX];
	if (dirfd == AT_FDCWD)
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)tid);
	else
		snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)tid, dirfd);
	ssize_t n = readlink(link, base, sizeof(base) - 1);
	base[n > 0 ? n : 0] = '\0';
	if (snprintf(out, cap, "%s/%s", n > 0 ? base : ".", path) >= (int)cap)
		out[0] = '\0';
}
