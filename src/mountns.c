#include "mountns.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The scratch mount the new root is built in, and where the host root goes. */
#define BASE "/tmp"
#define NEWROOT "/newroot"
#define OLDROOT "/oldroot"

void mountns_plan(struct mountns_plan *p, const struct stepbox_config *cfg,
		  const struct grants *g)
{
	memset(p, 0, sizeof(*p));
	p->clone_flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC;
	/* root needs no user namespace: it may mount already */
	p->userns = geteuid() != 0;
	if (p->userns)
		p->clone_flags |= CLONE_NEWUSER;
	/* a new network namespace has only a loopback device, and it is down */
	if (cfg->net == NET_NONE)
		p->clone_flags |= CLONE_NEWNET;
	p->uid = geteuid();
	p->gid = getegid();
	p->grants = g;
}

int mountns_probe(const struct mountns_plan *p, struct stepbox_err *err)
{
	pid_t pid = fork();
	if (pid < 0)
		return err_set(err, ERR_UNAVAILABLE, errno, "fork to probe namespaces");
	if (pid == 0)
		_exit(unshare(p->clone_flags & ~CLONE_NEWPID) < 0 ? (errno & 0x7f) : 0);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	int e = WIFEXITED(st) ? WEXITSTATUS(st) : EINVAL;
	return e == 0 ? 0 : mountns_unavailable(p, e, err);
}

int mountns_unavailable(const struct mountns_plan *p, int e, struct stepbox_err *err)
{
	err_set(err, ERR_UNAVAILABLE, e, "cannot create %snamespaces for the mountns backend",
		p->userns ? "user and mount " : "mount ");
	if (p->userns)
		err_hint(err, "unprivileged user namespaces are off here: check the sysctls "
			      "user.max_user_namespaces (must be > 0), "
			      "kernel.unprivileged_userns_clone (Debian, must be 1) and "
			      "kernel.apparmor_restrict_unprivileged_userns (Ubuntu, must be 0); "
			      "or boot with Landlock in lsm= to use the landlock backend");
	else
		err_hint(err, "a container may forbid mount namespaces; boot with Landlock in "
			      "lsm= to use the landlock backend");
	return -e;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, text, strlen(text));
	int e = n == (ssize_t)strlen(text) ? 0 : (n < 0 ? errno : EIO);
	close(fd);
	return -e;
}

int mountns_write_maps(const struct mountns_plan *p, pid_t child, struct stepbox_err *err)
{
	if (!p->userns)
		return 0;
	char path[64], map[64];
	int r;
	/* an unprivileged writer may map only itself, and only after setgroups is denied */
	snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)child);
	if ((r = write_file(path, "deny")) < 0 && r != -ENOENT)
		return err_set(err, ERR_UNAVAILABLE, -r, "write '%s'", path);
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)child);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)p->uid, (unsigned)p->uid);
	if ((r = write_file(path, map)) < 0)
		return err_set(err, ERR_UNAVAILABLE, -r, "write '%s'", path);
	snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)child);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)p->gid, (unsigned)p->gid);
	if ((r = write_file(path, map)) < 0)
		return err_set(err, ERR_UNAVAILABLE, -r, "write '%s'", path);
	return 0;
}

/* mkdir -p of the parents of path, which must all lie on the new root's tmpfs. */
static int make_parents(const char *path, dev_t tmpfs)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", path);
	char *slash = strrchr(buf, '/');
	if (!slash || slash == buf)
		return 0;
	*slash = '\0';
	struct stat st;
	if (lstat(buf, &st) == 0)
		return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
	int r = make_parents(buf, tmpfs);
	if (r < 0)
		return r;
	/* never create anything in a granted (host) folder */
	char *up = strrchr(buf, '/');
	if (up && up != buf) {
		*up = '\0';
		if (lstat(buf, &st) < 0 || st.st_dev != tmpfs)
			return -EXDEV;
		*up = '/';
	}
	return mkdir(buf, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

/*
 * A folder grant needs a folder mount point, a file grant a file one: binding
 * one onto the other either fails or hides the wrong thing, so the type of the
 * mount point is made from the source's, and an existing one must match.
 */
static int mount_point(const char *dst, bool dir, dev_t tmpfs)
{
	struct stat st;
	if (lstat(dst, &st) == 0)
		return S_ISDIR(st.st_mode) == dir ? 0 : -ENOTDIR;
	int r = make_parents(dst, tmpfs);
	if (r < 0)
		return r;
	/* its folder too must be the new root's tmpfs, not a granted host folder
	 * (a grant that vanished since it was resolved would land there) */
	char parent[PATH_MAX];
	if (snprintf(parent, sizeof(parent), "%s", dst) >= (int)sizeof(parent))
		return -ENAMETOOLONG;
	char *slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	if (lstat(parent, &st) < 0 || st.st_dev != tmpfs)
		return -EXDEV;
	if (dir)
		return mkdir(dst, 0755) < 0 ? -errno : 0;
	int fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* Flags a bind mount keeps whatever we ask: the kernel locks them in a user
 * namespace, and a remount that drops one fails. */
static unsigned long locked_flags(const char *path)
{
	struct statvfs sv;
	unsigned long f = 0;
	if (statvfs(path, &sv) < 0)
		return 0;
	if (sv.f_flag & ST_RDONLY)
		f |= MS_RDONLY;
	if (sv.f_flag & ST_NOSUID)
		f |= MS_NOSUID;
	if (sv.f_flag & ST_NODEV)
		f |= MS_NODEV;
	if (sv.f_flag & ST_NOEXEC)
		f |= MS_NOEXEC;
	if (sv.f_flag & ST_NOATIME)
		f |= MS_NOATIME;
	if (sv.f_flag & ST_NODIRATIME)
		f |= MS_NODIRATIME;
	if (sv.f_flag & ST_RELATIME)
		f |= MS_RELATIME;
	return f;
}

static unsigned long access_flags(unsigned access)
{
	unsigned long f = MS_NOSUID;
	if (!(access & GRANT_WRITE))
		f |= MS_RDONLY;
	if (!(access & GRANT_EXEC))
		f |= MS_NOEXEC;
	if (!(access & GRANT_DEV))
		f |= MS_NODEV;
	return f;
}

/* Decode mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
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

static bool special(const char *path)
{
	return strcmp(path, "/proc") == 0 || strcmp(path, "/dev/pts") == 0 ||
	       strcmp(path, "/dev/ptmx") == 0;
}

/*
 * Give every mount under NEWROOT the flags of the deepest grant that covers
 * it: a grant's own bind mount, and the submounts a recursive bind brought
 * along (each has flags of its own, and a writable one inside a read-only
 * grant would be a hole). mountinfo is read once; each mount is remounted
 * once. v is sorted by path, so the last match is the deepest.
 */
static int remount_all(const struct grant *const *v, const unsigned *acc, size_t n,
		       const char **what, const char **path)
{
	/* after the first pivot the host's procfs is under OLDROOT; it shows our task */
	FILE *f = fopen(OLDROOT "/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	char line[4096];
	int r = 0;
	*what = "set the mount flags of";
	while (r == 0 && fgets(line, sizeof(line), f)) {
		char *save = NULL, *mp = strtok_r(line, " ", &save);
		for (int i = 1; mp && i < 5; i++)
			mp = strtok_r(NULL, " ", &save);
		if (!mp || strncmp(mp, NEWROOT "/", sizeof(NEWROOT)) != 0)
			continue;
		unescape(mp);
		const char *inside = mp + sizeof(NEWROOT) - 1;
		size_t best = n;
		for (size_t i = 0; i < n; i++) {
			size_t gl = strlen(v[i]->path);
			if (strncmp(inside, v[i]->path, gl) == 0 &&
			    (inside[gl] == '\0' || inside[gl] == '/' || gl == 1))
				best = i;
		}
		if (best == n || special(v[best]->path))
			continue;
		*path = v[best]->path;
		unsigned long flags = MS_REMOUNT | MS_BIND | access_flags(acc[best]) | locked_flags(mp);
		if (mount(NULL, mp, NULL, flags, NULL) < 0 && errno != ENOENT)
			r = -errno;
	}
	fclose(f);
	return r;
}

static int by_path(const void *a, const void *b)
{
	return strcmp((*(const struct grant *const *)a)->path,
		      (*(const struct grant *const *)b)->path);
}

/* Bind every grant under NEWROOT, parents before children; then the flags. */
static int bind_grants(const struct grants *g, const char **what, const char **path)
{
	struct stat rootst;
	if (stat(NEWROOT, &rootst) < 0)
		return -errno;
	const struct grant **v = malloc(g->n * sizeof(*v));
	unsigned *acc = malloc(g->n * sizeof(*acc));
	if (!v || !acc) {
		free(v);
		free(acc);
		return -ENOMEM;
	}
	for (size_t i = 0; i < g->n; i++)
		v[i] = &g->v[i];
	qsort(v, g->n, sizeof(*v), by_path);
	size_t n = 0;
	for (size_t i = 0; i < g->n; i++) { /* one mount per path: the union of access */
		if (n && strcmp(v[n - 1]->path, v[i]->path) == 0) {
			acc[n - 1] |= v[i]->access;
			continue;
		}
		v[n] = v[i];
		acc[n++] = v[i]->access;
	}
	int r = 0;
	char src[PATH_MAX + 16], dst[PATH_MAX + 16];
	for (size_t i = 0; r == 0 && i < n; i++) {
		*path = v[i]->path;
		snprintf(src, sizeof(src), OLDROOT "%s", strcmp(v[i]->path, "/") ? v[i]->path : "");
		snprintf(dst, sizeof(dst), NEWROOT "%s", strcmp(v[i]->path, "/") ? v[i]->path : "");
		struct stat st;
		if (lstat(src, &st) < 0) {
			if (!(acc[i] & GRANT_WRITE))
				continue; /* vanished since it was resolved: dropping narrows */
			*what = "find the grant";
			r = -errno;
			break;
		}
		if (strcmp(v[i]->path, "/dev/ptmx") == 0) {
			/* the new devpts instance's multiplexer */
			*what = "make the symlink";
			if ((r = make_parents(dst, rootst.st_dev)) == 0 && symlink("pts/ptmx", dst) < 0)
				r = -errno;
			continue;
		}
		*what = "make the mount point for";
		if ((r = mount_point(dst, S_ISDIR(st.st_mode), rootst.st_dev)) < 0)
			break;
		if (strcmp(v[i]->path, "/proc") == 0) {
			/* a procfs of the new PID namespace: no host process is visible */
			*what = "mount a new /proc at";
			if (mount("proc", dst, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
				r = -errno;
			continue;
		}
		if (strcmp(v[i]->path, "/dev/pts") == 0) {
			/* a devpts of our own: the host's terminals are not reachable */
			*what = "mount a new devpts at";
			if (mount("devpts", dst, "devpts", MS_NOSUID | MS_NOEXEC,
				  "newinstance,ptmxmode=0666,mode=0620") < 0)
				r = -errno;
			continue;
		}
		*what = "bind-mount";
		if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
			r = -errno;
	}
	/*
	 * A grant asked for through a symlink (/lib64 -> usr/lib64 on merged-/usr,
	 * the ELF loader's path) gets that symlink in the new root too, pointing
	 * at the canonical path, when nothing is there already.
	 */
	for (size_t i = 0; r == 0 && i < g->n; i++) {
		const struct grant *gr = &g->v[i];
		struct stat st;
		if (strcmp(gr->requested, gr->path) == 0 || gr->requested[0] != '/')
			continue;
		snprintf(dst, sizeof(dst), NEWROOT "%s", gr->requested);
		if (lstat(dst, &st) == 0)
			continue;
		*path = gr->requested;
		*what = "make the symlink";
		if ((r = make_parents(dst, rootst.st_dev)) == 0 && symlink(gr->path, dst) < 0)
			r = -errno;
	}
	/* symlinks inside folders granted entry by entry (root's /etc) */
	for (size_t i = 0; r == 0 && i < g->nlinks; i++) {
		struct stat st;
		snprintf(dst, sizeof(dst), NEWROOT "%s", g->links[i].path);
		if (lstat(dst, &st) == 0)
			continue;
		*path = g->links[i].path;
		*what = "make the symlink";
		if ((r = make_parents(dst, rootst.st_dev)) == 0 &&
		    symlink(g->links[i].target, dst) < 0)
			r = -errno;
	}
	if (r == 0)
		r = remount_all(v, acc, n, what, path);
	free(v);
	free(acc);
	return r;
}

/*
 * The order: nothing propagates back to the host; a scratch tmpfs becomes
 * the root with the host's root at OLDROOT (so grant sources stay reachable
 * even under /tmp); the new root is a second tmpfs inside it; grants are bound
 * from OLDROOT into NEWROOT; then NEWROOT becomes the root, the host's is
 * detached, and the new root is made read-only.
 */
int mountns_setup_root(const struct mountns_plan *p, const char **what, const char **path)
{
	*path = NULL;
	*what = "make the mounts private";
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	*what = "mount the scratch tmpfs on";
	*path = BASE;
	if (mount("tmpfs", BASE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
		return -errno;
	*what = "prepare the new root in";
	if (chdir(BASE) < 0 || mkdir(BASE NEWROOT, 0755) < 0 || mkdir(BASE OLDROOT, 0755) < 0 ||
	    mount("tmpfs", BASE NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
		return -errno;
	*what = "pivot into the scratch root";
	if (syscall(SYS_pivot_root, BASE, BASE OLDROOT) < 0 || chdir("/") < 0)
		return -errno;
	int r = bind_grants(p->grants, what, path);
	if (r < 0)
		return r;
	*path = NULL;
	*what = "pivot into the new root";
	if (chdir(NEWROOT) < 0 || syscall(SYS_pivot_root, ".", ".") < 0)
		return -errno;
	*what = "detach the host's root";
	if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		return -errno;
	*what = "make the new root read-only";
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV,
		  NULL) < 0)
		return -errno;
	return 0;
}
