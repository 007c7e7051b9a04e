/*
 * mountns's probes, in the parent: whether this caller needs a user
 * namespace, whether the kernel makes the namespaces and a new procfs (in a
 * short-lived child, with the run's own scratch root), the words for each
 * refusal, the user namespace for idmapped mounts, and the id maps written
 * for a child.
 */
#include "mountns.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"
#include "harden.h"
#include "mountns_int.h"
#include "path.h"

bool mountns_userns(void)
{
	return geteuid() != 0 || !harden_has_cap(CAP_SYS_ADMIN);
}

/* The child that holds the new user namespace until its maps are written. */
static int idmap_holder(void *arg)
{
	char c;
	/* shares our descriptors: returns once the parent closes the write end */
	return (int)read(*(int *)arg, &c, 1);
}

int mountns_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, text, strlen(text));
	int r = n == (ssize_t)strlen(text) ? 0 : n < 0 ? -errno : -EIO;
	close(fd);
	return r;
}

int mountns_idmap_userns(const char *probe, dev_t *dev)
{
	/*
	 * One id, the highest a map may name, for itself: no file system owner
	 * is ever that id, so every owner shows as unmapped.
	 */
	static const char map[] = "4294967294 4294967294 1\n";
	static char stack[8192] __attribute__((aligned(16)));
	struct stat st;
	if (stat(probe, &st) < 0)
		return -errno;
	*dev = st.st_dev;
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	/* CLONE_VM: nothing to copy; the child only blocks on the pipe */
	pid_t pid = clone(idmap_holder, stack + sizeof(stack),
			  CLONE_NEWUSER | CLONE_VM | CLONE_FILES | SIGCHLD, &pipefd[0]);
	int r = pid < 0 ? -errno : 0, ns = -1;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	if (r == 0)
		r = mountns_write_file(path, map);
	snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
	if (r == 0)
		r = mountns_write_file(path, map);
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	if (r == 0 && (ns = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		r = -errno;
	close(pipefd[1]);
	if (pid > 0)
		while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
			;
	close(pipefd[0]);
	/* the file system, and every mount beneath probe, must take the idmap */
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (__u64)ns};
	int t = r == 0 ? open_tree(AT_FDCWD, probe,
				   OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE)
		       : -1;
	if (r == 0 && t < 0)
		r = -errno;
	if (r == 0 && mount_setattr(t, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0)
		r = -errno;
	if (t >= 0)
		close(t);
	if (r < 0 && ns >= 0)
		close(ns);
	return r < 0 ? r : ns;
}

/* A sysctl's number, or dflt where it does not exist (or cannot be read). */
static long sysctl_or(const char *path, long dflt)
{
	char *text = path_read_file(path, 1 << 16);
	long v = text ? strtol(text, NULL, 10) : dflt;
	free(text);
	return v;
}

/*
 * The first steps of every new root, the probe's and a run's alike: nothing
 * propagates back to the host, and a scratch tmpfs becomes the root with the
 * host's at OLDROOT, the new root a second tmpfs inside it. No grant and no
 * path a step may write is involved, so a failure here is the host's word
 * (a namespace without the right to mount, a chroot whose root is no mount
 * point): the one kind auto falls back for. 0, or -errno with *what.
 */
int mountns_scratch_root(const char **what)
{
	*what = "make the mounts private";
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	*what = "mount the scratch tmpfs on " BASE;
	if (mount("tmpfs", BASE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
		return -errno;
	*what = "prepare the new root in " BASE;
	if (chdir(BASE) < 0 || mkdir(BASE NEWROOT, 0755) < 0 || mkdir(BASE OLDROOT, 0755) < 0 ||
	    mount("tmpfs", BASE NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
		return -errno;
	*what = "pivot into the scratch root";
	if (syscall(SYS_pivot_root, BASE, BASE OLDROOT) < 0 || chdir("/") < 0)
		return -errno;
	return 0;
}

/* gVisor's mount namespaces, measured (runsc 20221219, docs/containers.md) */
#define GVISOR_MOUNTS_HINT                                                                         \
	"gVisor (runsc) makes mount namespaces but not the root stepbox builds in them "           \
	"(pivot_root and MS_PRIVATE: EINVAL; open_tree, move_mount, mount_setattr: not "           \
	"implemented; a bind cannot be made read-only): run stepbox where Linux answers the "      \
	"step's calls (a runc or crun container, or the host)"

/* A new procfs that the host refuses (a masked /proc): the probe's second question. */
bool mountns_proc_refused(int e)
{
	return e == EPERM || e == EACCES;
}

/*
 * The probe's PID 1: the scratch root and a new procfs in it, as a run
 * makes them. 0; 128 + errno when the procfs is refused; PROBE_MOUNT +
 * errno when the namespace refuses mounts at all (a namespace made without
 * capabilities: Ubuntu's AppArmor restriction, or a filter refusing mount);
 * PROBE_ROOT + errno when the scratch root cannot be made otherwise.
 */
#define PROBE_ROOT 64
#define PROBE_MOUNT 192
static int probe_proc(void)
{
	const char *what;
	int r = mountns_scratch_root(&what);
	if (r < 0)
		return (-r == EPERM || -r == EACCES) && strstr(what, "pivot") == NULL
			       ? PROBE_MOUNT + (-r & 0x3f)
			       : PROBE_ROOT + (-r & 0x3f);
	if (mkdir(NEWROOT "/proc", 0555) < 0)
		return PROBE_ROOT + (errno & 0x3f);
	return mount("proc", NEWROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
		     NULL) < 0
		       ? 128 + (errno & 0x3f)
		       : 0;
}

/*
 * Make the namespaces in a child, and in its PID 1 a new procfs: a
 * container's masked /proc lets the namespaces be made and then refuses
 * the procfs, and check must say what run will meet.
 */
int mountns_probe(const struct mountns_plan *p, struct stepbox_err *err)
{
	pid_t pid = fork();
	if (pid < 0)
		return err_set(err, ERR_UNAVAILABLE, errno, "fork to probe namespaces");
	if (pid == 0) {
		if (unshare(p->clone_flags) < 0)
			_exit(errno & 0x3f);
		/* mapped as a run's init is: an unmapped uid can create nothing */
		int r = mountns_write_maps(p, getpid(), NULL);
		if (r < 0)
			_exit(-r & 0x3f);
		pid_t init = fork();
		if (init == 0)
			_exit(probe_proc());
		int st;
		if (init < 0 || waitpid(init, &st, 0) < 0)
			_exit(0);
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 0);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	int e = WIFEXITED(st) ? WEXITSTATUS(st) : EINVAL;
	if (e >= PROBE_MOUNT)
		return mountns_mount_refused(e - PROBE_MOUNT, err);
	if (e >= 128)
		return mountns_proc_failed(e - 128, err);
	if (e >= PROBE_ROOT) {
		err_set(err, ERR_UNAVAILABLE, e - PROBE_ROOT, "namespaces: cannot make a new root");
		if (harden_gvisor())
			err_hint(err, "%s", GVISOR_MOUNTS_HINT);
		else
			err_hint(err,
				 "pivot_root is refused here: a chroot whose root is not a mount "
				 "point (bind it onto itself first) or a security module; or use "
				 "--backend landlock (auto does)");
		return -(e - PROBE_ROOT);
	}
	return e == 0 ? 0 : mountns_unavailable(p, e, err);
}

int mountns_mount_refused(int e, struct stepbox_err *err)
{
	err_set(err, ERR_UNAVAILABLE, e, "namespaces: the new mount namespace refuses mounts");
	if (harden_gvisor())
		err_hint(err, "%s", GVISOR_MOUNTS_HINT);
	else if (sysctl_or("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", 0) == 1)
		err_hint(err,
			 "Ubuntu's AppArmor makes unprivileged user namespaces without "
			 "capabilities (kernel.apparmor_restrict_unprivileged_userns=1): give "
			 "stepbox an AppArmor profile with the 'userns,' rule, or set the sysctl "
			 "to 0; or use --backend landlock (auto does)");
	else
		err_hint(err, "a security module or a seccomp filter refuses mount() in the new "
			      "namespace; allow it there, or use --backend landlock (auto does)");
	return -e;
}

int mountns_proc_failed(int e, struct stepbox_err *err)
{
	err_set(err, ERR_UNAVAILABLE, e, "namespaces: cannot mount a new /proc");
	if (e == EPERM)
		err_hint(err, "the kernel refuses a new procfs in a user namespace while parts of "
			      "the host's /proc are covered by other mounts (a container's masked "
			      "/proc): unmask it (Docker: --security-opt systempaths=unconfined; "
			      "Podman: --security-opt unmask=ALL; Kubernetes: securityContext "
			      "procMount: Unmasked), or use --backend landlock (auto does)");
	return -e;
}

int mountns_unavailable(const struct mountns_plan *p, int e, struct stepbox_err *err)
{
	/* EPERM while every sysctl allows them, under a seccomp filter: the filter */
	bool sysctls_allow =
		sysctl_or("/proc/sys/user/max_user_namespaces", 1) > 0 &&
		sysctl_or("/proc/sys/kernel/unprivileged_userns_clone", 1) == 1 &&
		sysctl_or("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", 0) == 0;
	err_set(err, ERR_UNAVAILABLE, e, "cannot create %snamespaces",
		p->userns ? "user and mount " : "mount ");
	if (p->userns && e == ENOSPC)
		err_hint(err, "the limit on user namespaces is reached or 0 here: the sysctl "
			      "user.max_user_namespaces must be above 0");
	else if (p->userns && e == EPERM && geteuid() == 0)
		err_hint(err,
			 "root without CAP_SYS_ADMIN tried a user namespace: a container's "
			 "seccomp profile (Docker's default) or an LSM refuses it; allow unshare "
			 "there, or use --backend landlock");
	else if (p->userns && e == EPERM && sysctls_allow && harden_filtered())
		err_hint(err, "the sysctls allow user namespaces, so it is this process's seccomp "
			      "filter (a container's profile: Docker's and containerd's default "
			      "refuse unshare without CAP_SYS_ADMIN): run the container with a "
			      "profile that allows unshare and clone with CLONE_NEWUSER, or use "
			      "--backend landlock (auto does)");
	else if (p->userns)
		err_hint(err, "unprivileged user namespaces are off here, or a container's seccomp "
			      "profile refuses them: check the sysctls "
			      "user.max_user_namespaces (must be > 0), "
			      "kernel.unprivileged_userns_clone (Debian, must be 1) and "
			      "kernel.apparmor_restrict_unprivileged_userns (Ubuntu, must be 0)");
	else
		err_hint(err, "a container may forbid mount namespaces (its seccomp profile or "
			      "missing CAP_SYS_ADMIN)");
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
	if ((r = mountns_write_file(path, "deny")) < 0 && r != -ENOENT)
		return err_set(err, ERR_UNAVAILABLE, -r, "write '%s'", path);
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)child);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)p->uid, (unsigned)p->uid);
	if ((r = mountns_write_file(path, map)) < 0)
		return err_set(err, ERR_UNAVAILABLE, -r, "write '%s'", path);
	snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)child);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)p->gid, (unsigned)p->gid);
	if ((r = mountns_write_file(path, map)) < 0)
		return err_set(err, ERR_UNAVAILABLE, -r, "write '%s'", path);
	return 0;
}
