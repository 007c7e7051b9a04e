#include "shm.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define SHM_PREFIX "stepbox-shm."

const char *shm_name(const char *path)
{
	static const char dir[] = "/dev/shm/";
	if (strncmp(path, dir, sizeof(dir) - 1) != 0)
		return NULL;
	const char *name = path + sizeof(dir) - 1;
	if (!*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return NULL;
	return name;
}

/* Empty a folder of ours (only files: the supervisor makes nothing else) and remove it. */
static void remove_at(int base, const char *name, int fd)
{
	int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d && dup_fd >= 0)
		close(dup_fd);
	for (struct dirent *e; d && (e = readdir(d));)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			unlinkat(fd, e->d_name, 0);
	if (d)
		closedir(d);
	unlinkat(base, name, AT_REMOVEDIR);
}

/*
 * Folders left by runs that ended before removing theirs (killed): each is
 * locked by its run for as long as that runs, so one that can be locked has
 * no owner left. Only our own user's.
 */
static void remove_stale(int base)
{
	int dup_fd = fcntl(base, F_DUPFD_CLOEXEC, 0);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return;
	}
	unsigned budget = 256;
	for (struct dirent *e; budget-- && (e = readdir(d));) {
		if (strncmp(e->d_name, SHM_PREFIX, sizeof(SHM_PREFIX) - 1) != 0)
			continue;
		int fd = openat(base, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		if (fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0)
			remove_at(base, e->d_name, fd);
		if (fd >= 0)
			close(fd);
	}
	closedir(d);
}

/*
 * Made under a name no cleaner looks at, locked, then given its name: a
 * cleaner never finds it unlocked.
 */
static int make_in(const char *base_path, struct shm_place *p)
{
	int base = open(base_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (base < 0)
		return -errno;
	remove_stale(base);
	char tmp[PATH_MAX];
	int n = snprintf(tmp, sizeof(tmp), "%s/.stepbox-new.XXXXXX", base_path);
	int r = n > 0 && (size_t)n < sizeof(tmp) && mkdtemp(tmp) ? 0 : -errno;
	if (r == 0 && n >= 0) {
		const char *suffix = strrchr(tmp, '.') + 1;
		n = snprintf(p->path, sizeof(p->path), "%s/" SHM_PREFIX "%s", base_path, suffix);
		p->dirfd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (p->dirfd < 0 || flock(p->dirfd, LOCK_EX | LOCK_NB) < 0 ||
		    (size_t)n >= sizeof(p->path) || rename(tmp, p->path) < 0) {
			r = -errno;
			if (p->dirfd >= 0)
				close(p->dirfd);
			p->dirfd = -1;
			rmdir(tmp);
		}
	}
	close(base);
	return r;
}

int shm_place_make(struct shm_place *p, struct stepbox_err *err)
{
	p->dirfd = -1;
	p->path[0] = '\0';
	const char *run = getenv("XDG_RUNTIME_DIR");
	const char *bases[] = {"/dev/shm", run && run[0] == '/' ? run : "/tmp", "/tmp"};
	int r = -ENOENT;
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]) && p->dirfd < 0; i++)
		r = make_in(bases[i], p);
	if (p->dirfd >= 0)
		return 0;
	err_set(err, ERR_UNAVAILABLE, -r,
		"make the step's own /dev/shm folder (in /dev/shm, "
		"XDG_RUNTIME_DIR or /tmp)");
	err_hint(err, "let this user write one of them, or grant the step /dev/shm "
		      "(-w /dev/shm: the host's, shared with every process there)");
	return r;
}

void shm_place_remove(struct shm_place *p)
{
	if (p->dirfd < 0)
		return;
	char *slash = strrchr(p->path, '/');
	assert(slash); /* made by shm_place_make: always BASE/stepbox-shm.X */
	*slash = '\0';
	int base = open(p->path[0] ? p->path : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	*slash = '/';
	if (base >= 0) {
		remove_at(base, slash + 1, p->dirfd);
		close(base);
	}
	close(p->dirfd);
	p->dirfd = -1;
}
