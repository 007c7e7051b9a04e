#include "supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "protect.h"
#include "shm.h"
#include "stepview.h"
#include "supervise_int.h"

/*
 * What the supervisor decides on files: metadata calls and a file made with
 * a set-id bit (Landlock alone mediates neither), and under Landlock alone
 * the step's own /dev/shm and access(2).
 */

/* ---- metadata (Landlock alone) ------------------------------------------ */

enum meta_kind { M_CHMOD, M_CHOWN, M_TIMES, M_SETXATTR, M_RMXATTR, M_FLAGS, M_FSXATTR, M_SETATTR };

/* Where a metadata call names its object, and what it does. */
struct meta_call {
	enum meta_kind kind;
	int fd_arg;   /* the fd (an fd form), or the dirfd; -1: AT_FDCWD */
	int path_arg; /* the path, or -1 for an fd form */
	bool follow;
	int flags_arg; /* AT_* flags, or -1 */
};

/* Each metadata call the filter sends here, and where its arguments are. */
/* clang-format off: a table, read by its columns */
static const struct {
	int nr;
	struct meta_call shape;
} meta_calls[] = {
	/* nr                {kind,       fd, path, follow, flags} */
	{SYS_chmod, {M_CHMOD, -1, 0, true, -1}},
	{SYS_fchmod, {M_CHMOD, 0, -1, true, -1}},
	{SYS_fchmodat, {M_CHMOD, 0, 1, true, -1}},
	{NR_FCHMODAT2, {M_CHMOD, 0, 1, true, 3}},
	{SYS_chown, {M_CHOWN, -1, 0, true, -1}},
	{SYS_lchown, {M_CHOWN, -1, 0, false, -1}},
	{SYS_fchown, {M_CHOWN, 0, -1, true, -1}},
	{SYS_fchownat, {M_CHOWN, 0, 1, true, 4}},
	{SYS_utime, {M_TIMES, -1, 0, true, -1}},
	{SYS_utimes, {M_TIMES, -1, 0, true, -1}},
	{SYS_futimesat, {M_TIMES, 0, 1, true, -1}},
	{SYS_utimensat, {M_TIMES, 0, 1, true, 3}}, /* path -1 when NULL: meta_shape */
	{SYS_setxattr, {M_SETXATTR, -1, 0, true, -1}},
	{SYS_lsetxattr, {M_SETXATTR, -1, 0, false, -1}},
	{SYS_fsetxattr, {M_SETXATTR, 0, -1, true, -1}},
	{SYS_removexattr, {M_RMXATTR, -1, 0, true, -1}},
	{SYS_lremovexattr, {M_RMXATTR, -1, 0, false, -1}},
	{SYS_fremovexattr, {M_RMXATTR, 0, -1, true, -1}},
	{NR_SETXATTRAT, {M_SETXATTR, 0, 1, true, 2}},
	{NR_REMOVEXATTRAT, {M_RMXATTR, 0, 1, true, 2}},
	{NR_FILE_SETATTR, {M_SETATTR, 0, 1, true, 4}},
	{SYS_ioctl, {M_FLAGS, 0, -1, true, -1}}, /* M_FSXATTR: meta_shape */
};
/* clang-format on */

static bool meta_shape(int nr, const uint64_t *a, struct meta_call *m)
{
	for (size_t i = 0; i < sizeof(meta_calls) / sizeof(meta_calls[0]); i++) {
		if (meta_calls[i].nr != nr)
			continue;
		*m = meta_calls[i].shape;
		if (nr == SYS_utimensat && !a[1])
			m->path_arg = -1; /* futimens: the fd itself */
		if (nr == SYS_ioctl && (unsigned)a[1] == FS_IOC_FSSETXATTR)
			m->kind = M_FSXATTR;
		return true;
	}
	return false;
}

/* utime, utimes, futimesat, utimensat: the times as the call gives them, set on fd. */
static int meta_times(struct call *c, int fd, bool is_fd_form, bool is_link, const char *via)
{
	const uint64_t *a = (const uint64_t *)c->req->data.args;
	int nr = c->req->data.nr;
	int r = 0;
	struct timespec ts[2];
	struct timespec *tp = ts;
	uint64_t at = nr == SYS_utime || nr == SYS_utimes ? a[1] : a[2];
	if (!at) {
		tp = NULL;
	} else if (nr == SYS_utime) {
		struct {
			long actime, modtime;
		} ub;
		if ((r = stepview_read(&c->v, at, &ub, sizeof(ub))) < 0)
			return r;
		ts[0] = (struct timespec){ub.actime, 0};
		ts[1] = (struct timespec){ub.modtime, 0};
	} else if (nr == SYS_utimes || nr == SYS_futimesat) {
		struct timeval tv[2];
		if ((r = stepview_read(&c->v, at, tv, sizeof(tv))) < 0)
			return r;
		for (int i = 0; i < 2; i++)
			ts[i] = (struct timespec){tv[i].tv_sec, tv[i].tv_usec * 1000};
	} else if ((r = stepview_read(&c->v, at, ts, sizeof(ts))) < 0) {
		return r;
	}
	if (is_fd_form)
		r = futimens(fd, tp);
	else if (is_link)
		r = utimensat(fd, "", tp, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
	else
		r = utimensat(AT_FDCWD, via, tp, 0);
	return r < 0 ? -errno : 0;
}

/* The xattr calls, setxattrat's and removexattrat's too: set or removed on fd. */
static int meta_xattr(struct call *c, enum meta_kind kind, int fd, bool is_fd_form, bool is_link,
		      const char *via)
{
	const uint64_t *a = (const uint64_t *)c->req->data.args;
	int nr = c->req->data.nr;
	int r = 0;
	char name[256];
	uint64_t name_at = nr == NR_SETXATTRAT || nr == NR_REMOVEXATTRAT ? a[3] : a[1];
	if ((r = stepview_read_str(&c->v, name_at, name, sizeof(name))) < 0)
		return r == -ENAMETOOLONG ? -ERANGE : r;
	if (is_link)
		return -EPERM; /* user xattrs are for files and folders only */
	if (kind == M_RMXATTR) {
		r = is_fd_form ? fremovexattr(fd, name) : removexattr(via, name);
		return r < 0 ? -errno : 0;
	}
	uint64_t val_at = a[2], size = a[3];
	int flags = (int)a[4];
	if (nr == NR_SETXATTRAT) {
		struct {
			uint64_t value;
			uint32_t size, flags;
		} xa;
		if (a[5] < sizeof(xa))
			return -EINVAL;
		if ((r = stepview_read(&c->v, a[4], &xa, sizeof(xa))) < 0)
			return r;
		val_at = xa.value;
		size = xa.size;
		flags = (int)xa.flags;
	}
	if (size > 65536)
		return -E2BIG;
	char *val = malloc(size ? size : 1);
	if (!val)
		return -ENOMEM;
	if ((r = stepview_read(&c->v, val_at, val, size)) == 0)
		r = is_fd_form ? fsetxattr(fd, name, val, size, flags)
			       : setxattr(via, name, val, size, flags);
	free(val);
	return r < 0 ? -errno : 0;
}

/* Do the call on the object we hold (fd: a real fd for fd forms, else O_PATH). */
static int meta_do(struct call *c, const struct meta_call *mc, int fd, bool is_fd_form,
		   bool is_link)
{
	const uint64_t *a = (const uint64_t *)c->req->data.args;
	int nr = c->req->data.nr;
	char via[64];
	snprintf(via, sizeof(via), "/proc/self/fd/%d", fd);
	int r = 0;
	switch (mc->kind) {
	case M_CHMOD: {
		mode_t mode = (mode_t)(nr == SYS_chmod || nr == SYS_fchmod ? a[1] : a[2]);
		if (is_link)
			return -EOPNOTSUPP; /* a symlink's mode cannot change */
		r = is_fd_form ? fchmod(fd, mode) : chmod(via, mode);
		break;
	}
	case M_CHOWN: {
		int i = nr == SYS_fchownat ? 2 : 1;
		uid_t u = (uid_t)a[i];
		gid_t g = (gid_t)a[i + 1];
		r = is_fd_form ? fchown(fd, u, g) : fchownat(fd, "", u, g, AT_EMPTY_PATH);
		break;
	}
	case M_TIMES:
		return meta_times(c, fd, is_fd_form, is_link, via);
	case M_SETXATTR:
	case M_RMXATTR:
		return meta_xattr(c, mc->kind, fd, is_fd_form, is_link, via);
	case M_FLAGS: {
		/* inode flags or generation: an int, whichever of these it is */
		unsigned long cmd = (unsigned)a[1];
		if (cmd != FS_IOC_SETFLAGS && cmd != FS_IOC32_SETFLAGS &&
		    cmd != FS_IOC_SETVERSION && cmd != FS_IOC32_SETVERSION)
			return -ENOTTY;
		int v;
		if ((r = stepview_read(&c->v, a[2], &v, sizeof(v))) < 0)
			return r;
		r = ioctl(fd, cmd, &v);
		break;
	}
	case M_FSXATTR: {
		struct fsxattr fx;
		if ((r = stepview_read(&c->v, a[2], &fx, sizeof(fx))) < 0)
			return r;
		r = ioctl(fd, FS_IOC_FSSETXATTR, &fx);
		break;
	}
	case M_SETATTR: {
		char attr[256];
		if (a[3] > sizeof(attr))
			return -E2BIG;
		if ((r = stepview_read(&c->v, a[2], attr, a[3])) < 0)
			return r;
		r = (int)syscall(NR_FILE_SETATTR, fd, "", attr, (size_t)a[3],
				 AT_EMPTY_PATH | (is_link ? AT_SYMLINK_NOFOLLOW : 0));
		break;
	}
	}
	return r < 0 ? -errno : 0;
}

/*
 * The object of an fd form through the step's magic link: O_PATH (for an
 * O_PATH fd of the step's, which pidfd_getfd cannot copy, or without
 * pidfd_getfd at all). An inode-flag ioctl needs an open file: a regular
 * file or folder is opened again through the pinned object, read-only
 * (the flags belong to the inode, not to the open file).
 */
static int nofd_meta_fd(const struct call *c, int stepfd, enum meta_kind kind, bool *fd_form)
{
	char what[32];
	snprintf(what, sizeof(what), "fd/%d", stepfd);
	int fd = stepview_proc_open(&c->v, what, O_PATH);
	*fd_form = false;
	if (fd < 0 || (kind != M_FLAGS && kind != M_FSXATTR))
		return fd == -ENOENT ? -EBADF : fd;
	struct stat st;
	int open_fd = -1, e = ENOTTY;
	if (fstat(fd, &st) < 0) {
		e = errno;
	} else if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
		char via[64];
		snprintf(via, sizeof(via), "/proc/self/fd/%d", fd);
		open_fd = open(via, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		e = errno;
	}
	close(fd);
	*fd_form = open_fd >= 0;
	return open_fd >= 0 ? open_fd : -e;
}

void sup_serve_meta(struct call *c)
{
	const uint64_t *a = (const uint64_t *)c->req->data.args;
	struct meta_call mc;
	if (!meta_shape(c->req->data.nr, a, &mc)) {
		sup_respond(c, 0, ENOSYS);
		return;
	}
	int flags = mc.flags_arg >= 0 ? (int)a[mc.flags_arg] : 0;
	bool follow = mc.follow && !(flags & AT_SYMLINK_NOFOLLOW);
	char path[PATH_MAX];
	bool fd_form = mc.path_arg < 0;
	int r = 0;
	if (!fd_form && (r = stepview_read_str(&c->v, a[mc.path_arg], path, sizeof(path))) == 0 &&
	    !path[0]) {
		/* AT_EMPTY_PATH with "": the dirfd is the object */
		fd_form = (flags & AT_EMPTY_PATH) != 0;
		r = fd_form ? 0 : -ENOENT;
	}
	int fd = -1;
	if (r == 0 && fd_form) {
		/*
		 * fchmod and the other fd forms act on an open file: our copy of
		 * it. A utimensat or fchownat on "" may name an O_PATH fd, which
		 * pidfd_getfd cannot copy: the step's magic link reaches it.
		 */
		fd = c->s->no_getfd ? -EBADF : stepview_fd(&c->v, a[mc.fd_arg]);
		if (fd == -EBADF && (int)a[mc.fd_arg] >= 0 &&
		    (c->s->no_getfd ||
		     (mc.kind != M_CHMOD && mc.kind != M_FLAGS && mc.kind != M_FSXATTR))) {
			fd = nofd_meta_fd(c, (int)a[mc.fd_arg], mc.kind, &fd_form);
		}
		r = fd < 0 ? fd : 0;
		/*
		 * An O_PATH fd copied whole (pidfd_getfd copies those too): named
		 * by "", the kernel acts on it as on a path (fchownat, utimensat),
		 * where an fd call (fchown, futimens) would be EBADF.
		 */
		int fl = r == 0 && mc.path_arg >= 0 ? fcntl(fd, F_GETFL) : 0;
		if (fl > 0 && (fl & O_PATH))
			fd_form = false;
	} else if (r == 0) {
		uint64_t dirfd = mc.fd_arg >= 0 ? a[mc.fd_arg] : (uint64_t)(unsigned)AT_FDCWD;
		fd = stepview_resolve(&c->v, dirfd, path, follow);
		r = fd < 0 ? fd : 0;
	}
	char where[PATH_MAX] = "";
	struct stat st;
	/* in a write grant's mount a change of times or owner needs no path (a tar's each file) */
	int mnt = r == 0 ? sup_mount_says(c, fd, false) : -1;
	bool by_mount = mnt == 1 && mc.kind != M_CHMOD;
	bool known = r == 0 && (by_mount || stepview_held_path(fd, where, sizeof(where)) == 0);
	if (r == 0 && (!known || fstat(fd, &st) < 0 ||
		       !(mnt >= 0 ? mnt : sup_allowed_place(c, fd, where, false)))) {
		sup_note_denial(c, OP_METADATA, known ? where : fd_form ? "?" : path, -1);
		r = -EACCES;
	}
	/* a set-id bit: on a folder it only passes the group on (notify_setid_rules) */
	int nr = c->req->data.nr;
	mode_t mode = (mode_t)(nr == SYS_chmod || nr == SYS_fchmod ? a[1] : a[2]);
	if (r == 0 && mc.kind == M_CHMOD && (mode & (S_ISUID | S_ISGID)) && !S_ISDIR(st.st_mode)) {
		sup_note_denial(c, OP_SETID, where, -1);
		r = -EPERM;
	}
	/* a protected path's mode (chmod +x of a hook): the live layer's (Landlock alone) */
	const char *rule;
	if (r == 0 && mc.kind == M_CHMOD && c->s->prot &&
	    (sup_match_object(c, fd, where, PROTECT_MAKE).verdict != PROTECT_FREE ||
	     protect_inode(c->s->prot, st.st_dev, st.st_ino, &rule))) {
		sup_note_denial(c, OP_PROTECTED, where, -1);
		r = -EACCES;
	}
	if (r == 0)
		r = meta_do(c, &mc, fd, fd_form, S_ISLNK(st.st_mode));
	if (fd >= 0)
		close(fd);
	sup_respond(c, 0, -r);
}

/* Whether a call makes a file with a set-id bit (notify_setid_rules' shape). */
bool sup_setid_make(const struct seccomp_notif *req)
{
	const uint64_t *a = (const uint64_t *)req->data.args;
	int nr = req->data.nr;
	mode_t bits = S_ISUID | S_ISGID;
	if (nr == SYS_creat || nr == SYS_mknod)
		return a[1] & bits;
	if (nr == SYS_mknodat)
		return a[2] & bits;
	if (nr != SYS_open && nr != SYS_openat)
		return false;
	bool at = nr == SYS_openat;
	return (a[at + 1] & (O_CREAT | __O_TMPFILE)) && (a[at + 2] & bits);
}

/* A file made with a set-id bit (notify_setid_rules): refused, and said. */
void sup_serve_setid_make(struct call *c)
{
	const uint64_t *a = (const uint64_t *)c->req->data.args;
	int nr = c->req->data.nr;
	int path_arg = nr == SYS_openat || nr == SYS_mknodat ? 1 : 0;
	char path[PATH_MAX];
	if (stepview_read_str(&c->v, a[path_arg], path, sizeof(path)) < 0)
		snprintf(path, sizeof(path), "?");
	sup_note_denial(c, OP_SETID, path, -1);
	sup_respond(c, 0, EPERM);
}

/* ---- /dev/shm (Landlock alone) ------------------------------------------ */

/* Let the call go on: the kernel performs it, and Landlock judges it. */
void sup_go_on(const struct call *c)
{
	struct seccomp_notif_resp resp = {.id = c->req->id,
					  .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE};
	while (ioctl(c->s->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno == EINTR)
		;
}

/*
 * --explain by the tracer: a call sent here never stops in it, so one let
 * go on is judged here as Landlock will judge it, by the folder it writes
 * in (parent: the folder path lies in), or the file it reads or writes.
 */
static void judge(struct call *c, enum denial_op op, uint64_t dirfd, const char *path, bool parent)
{
	if (!c->s->judge)
		return;
	char dir[PATH_MAX];
	const char *at = path;
	if (parent) {
		const char *slash = strrchr(path, '/');
		if (!slash)
			at = ".";
		else if (slash == path)
			at = "/";
		else
			at = dir, snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	}
	int fd = stepview_resolve(&c->v, dirfd, at, parent);
	char where[PATH_MAX];
	if (fd >= 0 && stepview_held_path(fd, where, sizeof(where)) == 0 &&
	    !(op == OP_READ ? sup_beneath_any(&c->s->readable, where)
			    : sup_allowed_place(c, fd, where, false)))
		sup_note_denial(c, op, where, -1);
	if (fd >= 0)
		close(fd);
}

/* What a file in the step's /dev/shm may be opened with; anything else is Landlock's. */
#define SHM_OPEN_FLAGS                                                                             \
	(O_ACCMODE | O_CREAT | O_EXCL | O_TRUNC | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_APPEND | \
	 O_NOCTTY | O_LARGEFILE)

/* Refused, and said, where a domain of the step's own holds the caller (supervise_nested.c). */
static bool shm_nested(struct call *c, const char *path)
{
	struct keeper *k;
	if (sup_nested_keeper(c, &k) == 0 && !k)
		return false;
	sup_nested_refuse(c, path);
	return true;
}

/*
 * open, openat, link, linkat, unlink and unlinkat (harden_filter_notify*_alone):
 * on /dev/shm/NAME, performed in the step's own folder from our copy of the
 * path (no second look at the step's memory), the new file with the step's
 * umask and given to the step as its own fd; any other path goes on, and so
 * does every call where the step was granted the host's /dev/shm (no folder).
 * Once a process of the step took a Landlock domain of its own, whose rules
 * for /dev/shm no folder of ours holds, nothing is made there for the step.
 */
void sup_serve_shm(struct call *c)
{
	const uint64_t *a = (const uint64_t *)c->req->data.args;
	int nr = c->req->data.nr;
	bool at = nr == SYS_openat || nr == SYS_linkat || nr == SYS_unlinkat;
	uint64_t dirfd = at ? a[0] : (uint64_t)(unsigned)AT_FDCWD;
	char p1[PATH_MAX], p2[PATH_MAX];
	const char *n1 = NULL, *n2 = NULL;
	bool two = nr == SYS_link || nr == SYS_linkat;
	bool read1 = stepview_read_str(&c->v, a[at], p1, sizeof(p1)) == 0;
	bool read2 = two && stepview_read_str(&c->v, a[at ? 3 : 1], p2, sizeof(p2)) == 0;
	if (read1 && c->s->shm_dir >= 0)
		n1 = shm_name(p1);
	if (read2 && c->s->shm_dir >= 0)
		n2 = shm_name(p2);
	/* the protected paths' check takes the copies read here: one look at the step's memory */
	const char *g1 = read1 ? p1 : NULL, *g2 = read2 ? p2 : NULL;
	/* glibc's shapes (notify_shm_rules): the protected paths' filter sends others too */
	if ((int)dirfd != AT_FDCWD || (nr == SYS_unlinkat && (a[2] & AT_REMOVEDIR)))
		n1 = n2 = NULL;
	if (nr == SYS_open || nr == SYS_openat) {
		int flags = (int)a[at + 1];
		bool shaped = (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL) ||
			      (flags & (O_NOFOLLOW | O_CLOEXEC)) == (O_NOFOLLOW | O_CLOEXEC);
		if (!n1 || !shaped || (flags & ~SHM_OPEN_FLAGS)) {
			bool writes = (flags & (O_CREAT | O_TRUNC | __O_TMPFILE)) ||
				      (flags & O_ACCMODE) != O_RDONLY;
			if (c->s->prot && writes)
				sup_serve_guard_read(c, g1, g2); /* it says what Landlock refused */
			else if (flags & O_CREAT)
				judge(c, OP_CREATE, dirfd, p1, true);
			else if (writes)
				judge(c, OP_WRITE, dirfd, p1, false);
			else
				judge(c, OP_READ, dirfd, p1, false);
			if (!c->s->prot || !writes)
				sup_go_on(c);
			return;
		}
		if (shm_nested(c, p1))
			return;
		mode_t mode = (mode_t)a[at + 2] & 0777 & ~sup_step_umask(c);
		int fd = openat(c->s->shm_dir, n1,
				(flags & SHM_OPEN_FLAGS) | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd < 0) {
			sup_respond(c, 0, errno);
			return;
		}
		int newfd = sup_hand_fd(c, fd, flags);
		close(fd);
		sup_respond(c, newfd, newfd < 0 ? -newfd : 0);
		return;
	}
	if (((two && n1 && n2) || (!two && n1)) && shm_nested(c, two ? p2 : p1))
		return;
	if (two && n1 && n2 && !(nr == SYS_linkat && (a[4] & AT_EMPTY_PATH))) {
		sup_respond(c, 0, linkat(c->s->shm_dir, n1, c->s->shm_dir, n2, 0) < 0 ? errno : 0);
		return;
	}
	if (!two && n1) {
		sup_respond(c, 0, unlinkat(c->s->shm_dir, n1, 0) < 0 ? errno : 0);
		return;
	}
	if (c->s->prot) {
		sup_serve_guard_read(
			c, g1, g2); /* the protected paths', which says what Landlock refused */
	} else if (two) {
		/* the new name's folder is where Landlock's rule is met first */
		judge(c, OP_LINK, at ? a[2] : (uint64_t)(unsigned)AT_FDCWD, p2, true);
		sup_go_on(c);
	} else {
		judge(c, OP_DELETE, dirfd, p1, true);
		sup_go_on(c);
	}
}

/* ---- access (Landlock alone) ------------------------------------------- */

/*
 * Landlock does not mediate access(2): alone, the kernel answers by the
 * file's mode, and calls a file readable that the step cannot open (HOME's
 * ~/.gitconfig). libgit2 and git skip an unreadable config file by asking
 * access(R_OK) first; told "readable", they open it and take the EACCES as
 * fatal (cargo with a git dependency). The answer here is the kernel's own,
 * made with the step's credentials on the object the step names, and
 * EACCES for a right that no grant beneath which the object lies gives.
 * Searching a folder is not a right Landlock restricts. An object with no
 * path (a pipe's magic link) gets the kernel's answer. Nothing is noted as
 * a denial: an access call is a question, the open that may follow is what
 * --explain names.
 */
void sup_serve_access(struct call *c)
{
	const uint64_t *a = (const uint64_t *)c->req->data.args;
	int nr = c->req->data.nr;
	bool at = nr != SYS_access;
	uint64_t dirfd = at ? a[0] : (uint64_t)(unsigned)AT_FDCWD;
	int mode = (int)(at ? a[2] : a[1]);
	int flags = nr == NR_FACCESSAT2 ? (int)a[3] : 0;
	char path[PATH_MAX];
	int r = stepview_read_str(&c->v, at ? a[1] : a[0], path, sizeof(path));
	if (r == 0 && ((mode & ~(R_OK | W_OK | X_OK)) ||
		       (flags & ~(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))))
		r = -EINVAL;
	int fd = -1;
	if (r == 0 && !path[0] && !(flags & AT_EMPTY_PATH)) {
		r = -ENOENT;
	} else if (r == 0 && !path[0]) {
		/* "" with AT_EMPTY_PATH: the dirfd is the object */
		char what[32];
		snprintf(what, sizeof(what), "fd/%d", (int)dirfd);
		fd = (int)dirfd < 0 ? -EBADF : stepview_proc_open(&c->v, what, O_PATH);
		r = fd == -ENOENT ? -EBADF : fd < 0 ? fd : 0;
	} else if (r == 0) {
		fd = stepview_resolve(&c->v, dirfd, path, !(flags & AT_SYMLINK_NOFOLLOW));
		r = fd < 0 ? fd : 0;
	}
	if (r == 0 && faccessat(fd, "", mode, AT_EMPTY_PATH | (flags & AT_EACCESS)) < 0)
		r = -errno;
	char where[PATH_MAX];
	struct stat st;
	if (r == 0 && mode != F_OK && stepview_held_path(fd, where, sizeof(where)) == 0 &&
	    fstat(fd, &st) == 0) {
		/* the right the grants lack, first: that is the refusal --explain names */
		enum denial_op op =
			(mode & R_OK) && !sup_beneath_any(&c->s->readable, where)   ? OP_READ
			: (mode & W_OK) && !sup_beneath_any(&c->s->writable, where) ? OP_WRITE
			: (mode & X_OK) && !S_ISDIR(st.st_mode) &&
					!sup_beneath_any(&c->s->executable, where)
				? OP_EXECUTE
				: OP_LOOKUP;
		if (op != OP_LOOKUP) {
			sup_note_denial(c, op, where, -1);
			r = -EACCES;
		}
	}
	if (fd >= 0)
		close(fd);
	sup_respond(c, 0, -r);
}
