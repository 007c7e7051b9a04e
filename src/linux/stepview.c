#include "stepview.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>

#define SV_MAX_LINKS 40
#define SV_PROC_MAGIC 0x9fa0 /* PROC_SUPER_MAGIC */

#ifndef SECCOMP_IOCTL_NOTIF_ID_VALID
#define SECCOMP_IOCTL_NOTIF_ID_VALID SECCOMP_IOW(2, __u64)
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

int stepview_open(struct stepview *v, int listener, uint64_t id, pid_t tid)
{
	*v = (struct stepview){listener, id, -1, false, tid, -1, -1, -1, -1};
	return 0;
}

/*
 * The pidfds a thread keeps (the dispatcher: stepview_keep_pidfds), by tid:
 * each a round trip's pidfd_open and proof saved on every later call of the
 * same thread that copies an fd (a tar's fchown, fchmod and futimens of
 * each file). Only the thread that keeps them uses them; another is given
 * a copy of its own (stepview_own_pidfd).
 */
#define KEPT_PIDFDS 64
static __thread struct {
	bool on;
	pid_t tid[KEPT_PIDFDS];
	int fd[KEPT_PIDFDS];
} kept;

void stepview_keep_pidfds(bool on)
{
	for (size_t i = 0; i < KEPT_PIDFDS; i++) {
		if (kept.tid[i] > 0)
			close(kept.fd[i]);
		kept.tid[i] = 0;
	}
	kept.on = on;
}

/*
 * A pidfd of the thread tid, or of its process where tid is the process's
 * own (*named: either names tid alone while it lives); before Linux 6.9 one
 * of another thread's process (its leader), which may outlive tid.
 */
static int open_pidfd(pid_t tid, bool *named)
{
	int fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
	if (fd < 0)
		fd = (int)syscall(SYS_pidfd_open, tid, 0);
	*named = fd >= 0;
	if (fd >= 0)
		return fd;
	/* before Linux 6.9 a pidfd names a process: the thread's leader */
	pid_t tgid = -1;
	char p[64], line[128];
	snprintf(p, sizeof(p), "/proc/%d/status", (int)tid);
	FILE *f = fopen(p, "re");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "Tgid:", 5) == 0)
			tgid = (pid_t)strtol(line + 5, NULL, 10);
	if (f)
		fclose(f);
	return tgid > 0 ? (int)syscall(SYS_pidfd_open, tgid, 0) : -1;
}

/* A kept pidfd found dead (ESRCH): forgotten, so that the next call opens one. */
static void forget_pidfd(struct stepview *v)
{
	size_t i = (size_t)v->tid % KEPT_PIDFDS;
	if (!v->pidfd_kept || kept.tid[i] != v->tid || kept.fd[i] != v->pidfd)
		return;
	close(kept.fd[i]);
	kept.tid[i] = 0;
	v->pidfd = -1;
	v->pidfd_kept = false;
}

int stepview_pidfd(struct stepview *v)
{
	if (v->pidfd >= 0)
		return v->pidfd;
	size_t i = (size_t)v->tid % KEPT_PIDFDS;
	if (kept.on && kept.tid[i] == v->tid) {
		/* opened for this tid, proven its then: the same thread while it lives */
		v->pidfd = kept.fd[i];
		v->pidfd_kept = true;
		return v->pidfd;
	}
	bool named;
	v->pidfd = open_pidfd(v->tid, &named);
	if (v->pidfd < 0)
		return -ESRCH;
	/* the call still waits: the pid was the caller's when the pidfd was made */
	if (!stepview_waiting(v)) {
		close(v->pidfd);
		v->pidfd = -1;
		return -ESRCH;
	}
	if (kept.on && named) {
		if (kept.tid[i] > 0)
			close(kept.fd[i]);
		kept.tid[i] = v->tid;
		kept.fd[i] = v->pidfd;
		v->pidfd_kept = true;
	}
	return v->pidfd;
}

int stepview_own_pidfd(struct stepview *v)
{
	if (v->pidfd_kept) {
		v->pidfd = -1; /* the cache's may be a dead thread's: one opened and proven now */
		v->pidfd_kept = false;
	}
	bool on = kept.on;
	kept.on = false;
	int fd = stepview_pidfd(v);
	kept.on = on;
	return fd;
}

void stepview_close(struct stepview *v)
{
	if (v->pidfd_kept)
		v->pidfd = -1; /* the cache's */
	v->pidfd_kept = false;
	int *fds[] = {&v->pidfd, &v->root, &v->cwd};
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

bool stepview_waiting(const struct stepview *v)
{
	uint64_t id = v->id;
	return ioctl(v->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/*
 * process_vm_readv, or where a container's seccomp profile refuses it
 * (containerd's default without CAP_SYS_PTRACE), the same read through
 * /proc/<tid>/mem, which the same ptrace check guards.
 */
static ssize_t read_mem(const struct stepview *v, uint64_t addr, void *buf, size_t len)
{
	/* buf is where the copy goes: what it holds before is never read */
	// cppcheck-suppress ctuuninitvar
	struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
	ssize_t n = process_vm_readv(v->tid, &local, 1, &remote, 1, 0);
	if (n >= 0 || (errno != EPERM && errno != ENOSYS) || addr > INT64_MAX)
		return n;
	int fd = stepview_proc_open(v, "mem", O_RDONLY);
	if (fd < 0)
		return -1;
	n = pread(fd, buf, len, (off_t)addr);
	close(fd);
	return n;
}

/*
 * Copy len bytes of the step's memory. The pid in the notification may have
 * been reused by the time the copy is made: the id still being valid after
 * the copy proves the copy came from the step.
 */
int stepview_read(const struct stepview *v, uint64_t addr, void *buf, size_t len)
{
	if (len == 0)
		return 0;
	if (read_mem(v, addr, buf, len) != (ssize_t)len)
		return -EFAULT;
	return stepview_waiting(v) ? 0 : -ESRCH;
}

/*
 * Write into the step's memory through mem, its /proc/<tid>/mem opened while
 * its call was still pending: the fd holds that process's memory itself, so
 * however long the call lasted, a pid reused meanwhile (a step can recycle
 * its pids at will) is never written to. Only while the step still waits.
 */
int stepview_write(const struct stepview *v, int mem, uint64_t addr, const void *buf, size_t len)
{
	if (mem < 0 || addr > INT64_MAX || !stepview_waiting(v))
		return -EFAULT;
	return pwrite(mem, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -EFAULT;
}

/* A NUL-terminated string of the step's, read a page at a time. */
int stepview_read_str(const struct stepview *v, uint64_t addr, char *buf, size_t cap)
{
	size_t got = 0;
	while (got < cap) {
		size_t page = 4096 - ((addr + got) & 4095);
		size_t want = page < cap - got ? page : cap - got;
		ssize_t n = read_mem(v, addr + got, buf + got, want);
		if (n <= 0)
			return -EFAULT;
		char *nul = memchr(buf + got, '\0', (size_t)n);
		got += (size_t)n;
		if (nul)
			return stepview_waiting(v) ? 0 : -ESRCH;
	}
	return -ENAMETOOLONG;
}

/* Our own copy of one of the step's fds (not O_PATH ones: EBADF, as the kernel). */
int stepview_fd(struct stepview *v, uint64_t fd)
{
	if (fd > INT_MAX)
		return -EBADF;
	int pidfd = stepview_pidfd(v);
	if (pidfd < 0)
		return pidfd;
	int r = (int)syscall(SYS_pidfd_getfd, pidfd, (int)fd, 0);
	if (r < 0 && errno == ESRCH && v->pidfd_kept) {
		forget_pidfd(v); /* kept for a thread since gone: the tid's new owner's */
		if ((pidfd = stepview_pidfd(v)) < 0)
			return pidfd;
		r = (int)syscall(SYS_pidfd_getfd, pidfd, (int)fd, 0);
	}
	if (r < 0)
		return -errno;
	if (!stepview_waiting(v)) {
		close(r);
		return -ESRCH;
	}
	return r;
}

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

/*
 * The first line of /proc/<tid>/net/<table> for socket ino, in line; false if
 * none. The tcp tables hold no name a step chooses; in the unix table a
 * socket's path may hold a newline and a whole line of the step's making, so
 * what it says of a UNIX socket is only a hint (see stepview_socket).
 */
static bool net_line(const struct stepview *v, const char *table, unsigned long ino, char *line,
		     size_t cap)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/net/%s", (int)v->tid, table);
	FILE *f = fopen(p, "re");
	bool found = false, unix_ = strcmp(table, "unix") == 0;
	while (f && !found && fgets(line, (int)cap, f)) {
		unsigned long i = 0;
		found = (unix_ ? sscanf(line, "%*s %*s %*s %*s %*s %*s %lu", &i)
			       : sscanf(line, "%*s %*s %*s %*s %*s %*s %*s %*s %*s %lu", &i)) ==
				1 &&
			i == ino;
	}
	if (f)
		fclose(f);
	return found;
}

/*
 * A UNIX socket of the step's, by inode, from the kernel's sock_diag through
 * diag (a NETLINK_SOCK_DIAG socket in the step's network namespace): its
 * type, state and whether it has a name, none of which the step can forge
 * (unlike /proc/net/unix: see stepview_socket). -ENOENT without unix_diag.
 */
static int unix_diag(int diag, unsigned long ino, unsigned *type, unsigned *state, bool *bound)
{
	struct {
		struct nlmsghdr h;
		struct unix_diag_req r;
	} req = {
		.h = {sizeof(req), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST, 0, 0},
		.r = {.sdiag_family = AF_UNIX,
		      .udiag_ino = (unsigned)ino,
		      .udiag_show = UDIAG_SHOW_NAME,
		      .udiag_cookie = {INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE}},
	};
	if (diag < 0 || ino > UINT32_MAX)
		return -EPROTONOSUPPORT;
	static uint32_t seq;
	req.h.nlmsg_seq = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);
	if (send(diag, &req, sizeof(req), 0) != (ssize_t)sizeof(req))
		return -errno;
	char buf[8192] __attribute__((aligned(8)));
	for (;;) {
		ssize_t n = recv(diag, buf, sizeof(buf), 0);
		if (n <= 0)
			return n < 0 ? -errno : -EPROTO;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != req.h.nlmsg_seq)
				continue; /* an answer to a request given up on */
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);
				return e->error ? e->error : -EPROTO;
			}
			if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
			    h->nlmsg_len < NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
				return -EPROTO;
			const struct unix_diag_msg *m = NLMSG_DATA(h);
			if (m->udiag_ino != ino)
				return -EPROTO;
			*type = m->udiag_type;
			*state = m->udiag_state;
			*bound = false;
			const struct rtattr *a = (const struct rtattr *)(m + 1);
			int rl = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
			for (; RTA_OK(a, rl); a = RTA_NEXT(a, rl))
				*bound |= a->rta_type == UNIX_DIAG_NAME;
			return 0;
		}
	}
}

/* family, type and protocol from sockfs's name of the socket */
static void sock_kind(struct stepview_sock *k, const char *name)
{
	static const struct {
		const char *name;
		int family, type, protocol;
	} kinds[] = {
		{"UNIX-STREAM", AF_UNIX, SOCK_STREAM, 0},
		{"UNIX", AF_UNIX, 0, 0},
		{"TCP", AF_INET, SOCK_STREAM, IPPROTO_TCP},
		{"TCPv6", AF_INET6, SOCK_STREAM, IPPROTO_TCP},
		{"UDP", AF_INET, SOCK_DGRAM, IPPROTO_UDP},
		{"UDPv6", AF_INET6, SOCK_DGRAM, IPPROTO_UDP},
		{"PING", AF_INET, SOCK_DGRAM, IPPROTO_ICMP},
		{"PINGv6", AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6},
		{"MPTCP", AF_INET, SOCK_STREAM, IPPROTO_MPTCP},
		{"MPTCPv6", AF_INET6, SOCK_STREAM, IPPROTO_MPTCP},
	};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(name, kinds[i].name) == 0) {
			k->family = kinds[i].family;
			k->type = kinds[i].type;
			k->protocol = kinds[i].protocol;
		}
}

/* close-on-exec and non-blocking, from the fd's fdinfo */
static void sock_flags(const struct stepview *v, uint64_t fd, struct stepview_sock *k)
{
	char p[64], line[512];
	unsigned flags = 0;
	snprintf(p, sizeof(p), "/proc/%d/fdinfo/%d", (int)v->tid, (int)fd);
	FILE *f = fopen(p, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "flags: %o", &flags) == 1)
			break;
	if (f)
		fclose(f);
	k->cloexec = (flags & O_CLOEXEC) != 0;
	k->nonblock = (flags & O_NONBLOCK) != 0;
}

/* a UNIX socket's type, whether it is bound, and what a connect would say */
static int sock_unix(const struct stepview *v, int diag, struct stepview_sock *k)
{
	char line[512];
	unsigned type = 0, state = 0, uflags = 0;
	int r = unix_diag(diag, k->ino, &type, &state, &k->bound);
	/*
	 * Without the kernel's unix_diag (a module not loaded, as in a bare
	 * initramfs): /proc's table, which the step can forge lines of. A
	 * forged line can only choose among what is made below, stream or
	 * seqpacket, which send nowhere but to their peer; a datagram socket
	 * is never made, whatever a table says.
	 */
	int end = 0;
	if (r == -ENOENT || r == -EINVAL || r == -EOPNOTSUPP) {
		if (!net_line(v, "unix", k->ino, line, sizeof(line)) ||
		    sscanf(line, "%*s %*s %*s %x %x %x %*u%n", &uflags, &type, &state, &end) != 3)
			return -EPROTONOSUPPORT;
		k->bound = line[end] == ' ' && line[end + 1] != '\n' && line[end + 1] != '\0';
		/* the table's St (SS_CONNECTED 3) and listening flag, as diag's states */
		state = uflags & 0x10000 ? 10 : state == 3 ? 1 : 7;
		if (type == SOCK_DGRAM)
			return -EPROTONOSUPPORT; /* unproven either way: not re-made */
	} else if (r < 0) {
		return r;
	}
	/* only a kind the filter lets a step make; a datagram one is refused */
	if (type != SOCK_STREAM && type != SOCK_SEQPACKET && type != SOCK_DGRAM)
		return -EPROTONOSUPPORT;
	k->type = (int)type;
	/* as unix_stream_connect: a listening socket is EINVAL, a connected one EISCONN */
	if (k->type != SOCK_DGRAM)
		k->state_err = state == 10 /* TCP_LISTEN */       ? EINVAL
			       : state == 1 /* TCP_ESTABLISHED */ ? EISCONN
								  : 0;
	return 0;
}

int stepview_socket(const struct stepview *v, int diag, uint64_t fd, struct stepview_sock *k)
{
	if (fd > INT_MAX)
		return -EBADF;
	*k = (struct stepview_sock){.family = -1};
	char p[64], name[32] = "", line[512];
	struct stat st;
	snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)v->tid, (int)fd);
	if (stat(p, &st) < 0)
		return errno == ENOENT ? -EBADF : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -ENOTSOCK;
	k->ino = (unsigned long)st.st_ino;
	/* sockfs names each socket after its protocol: "UNIX-STREAM", "TCPv6" */
	ssize_t n = getxattr(p, "system.sockprotoname", name, sizeof(name) - 1);
	if (n < 0)
		return -errno;
	name[n] = '\0';
	sock_kind(k, name);
	if (k->family < 0)
		return -EPROTONOSUPPORT;
	sock_flags(v, fd, k);
	if (k->family == AF_UNIX) {
		int r = sock_unix(v, diag, k);
		if (r < 0)
			return r;
	} else if (k->type == SOCK_STREAM && k->protocol == IPPROTO_TCP &&
		   net_line(v, k->family == AF_INET ? "tcp" : "tcp6", k->ino, line, sizeof(line))) {
		/* listed: not a fresh socket (a bound one is not listed); as inet_stream_connect */
		unsigned tst = 0;
		if (sscanf(line, "%*s %*s %*s %x", &tst) == 1 && tst != 7 /* TCP_CLOSE */)
			k->state_err = tst == 2 /* TCP_SYN_SENT */ ? EALREADY : EISCONN;
	}
	return stepview_waiting(v) ? 0 : -ESRCH;
}

/* Open /proc/<tid>/what in our view: the step's cwd, root or one of its fds. */
int stepview_proc_open(const struct stepview *v, const char *what, int flags)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/%s", (int)v->tid, what);
	int fd = open(p, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static void step_ids(struct stepview *v)
{
	char p[64], line[256];
	snprintf(p, sizeof(p), "/proc/%d/status", (int)v->tid);
	FILE *f = fopen(p, "re");
	v->ns_tgid = v->ns_tid = -1;
	while (f && fgets(line, sizeof(line), f)) {
		long *slot = strncmp(line, "NStgid:", 7) == 0  ? &v->ns_tgid
			     : strncmp(line, "NSpid:", 6) == 0 ? &v->ns_tid
							       : NULL;
		if (!slot)
			continue;
		char *last = strrchr(line, '\t');
		*slot = last ? strtol(last + 1, NULL, 10) : -1;
	}
	if (f)
		fclose(f);
}

/* ---- resolving a path as the step would -------------------------------- */

static bool same_file(int a, int b)
{
	struct stat x, y;
	return fstat(a, &x) == 0 && fstat(b, &y) == 0 && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

/* one walk of stepview_resolve: cur is the folder it is in, beneath root */
struct sv_walk {
	struct stepview *v;
	int root, cur;
	int links;
	long proc_pid; /* the /proc/<pid> entry the walk is in, if any */
	bool follow;
	char pending[PATH_MAX * 2];
	char *p;
};

/*
 * The step's root or cwd (what: "root", "cwd"), opened once for the call
 * (held in *slot until stepview_close): every walk of one call starts
 * from the same folders, as the kernel's would. Borrowed, or -errno.
 */
static int step_dir(const struct stepview *v, int *slot, const char *what)
{
	if (*slot < 0)
		*slot = stepview_proc_open(v, what, O_PATH | O_DIRECTORY);
	return *slot;
}

/*
 * Where a walk of path from dirfd starts: the step's root or cwd
 * (borrowed), or its dirfd (opened: *owned).
 */
static int walk_start(struct stepview *v, uint64_t dirfd, const char *path, int root, int *owned)
{
	*owned = -1;
	if (path[0] == '/')
		return root;
	if ((int)dirfd == AT_FDCWD)
		return step_dir(v, &v->cwd, "cwd");
	char what[32];
	snprintf(what, sizeof(what), "fd/%d", (int)dirfd);
	*owned = dirfd > INT_MAX ? -EBADF : stepview_proc_open(v, what, O_PATH | O_DIRECTORY);
	return *owned;
}

static int walk_up(struct sv_walk *w)
{
	if (same_file(w->cur, w->root))
		return 0; /* the step's root is its top */
	int up = openat(w->cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (up < 0)
		return -errno;
	close(w->cur);
	w->cur = up;
	return 0;
}

/*
 * comp, in procfs's top folder: notes the process entry it enters, and
 * puts self and thread-self in front of what is left; true for those.
 */
static bool walk_proc_top(struct sv_walk *w, const char *comp)
{
	struct stepview *v = w->v;
	/* which process's entry the walk enters (a number, or not one) */
	char *end;
	long n = strtol(comp, &end, 10);
	w->proc_pid = *end == '\0' && end != comp ? n : -1;
	if (strcmp(comp, "self") != 0 && strcmp(comp, "thread-self") != 0)
		return false;
	/* the step's own entry, in its procfs's numbering */
	if (v->ns_tgid < 0)
		step_ids(v);
	char rest[PATH_MAX * 2];
	if (comp[0] == 's')
		snprintf(rest, sizeof(rest), "%ld%s", v->ns_tgid, w->p);
	else
		snprintf(rest, sizeof(rest), "%ld/task/%ld%s", v->ns_tgid, v->ns_tid, w->p);
	snprintf(w->pending, sizeof(w->pending), "%s", rest);
	w->p = w->pending;
	return true;
}

/* the magic link fd (comp in cur): the kernel's to follow, in the step's own entry only */
static int walk_magic(struct sv_walk *w, int fd, const char *comp)
{
	struct stepview *v = w->v;
	/*
	 * A magic link: the kernel follows it to its object. Only in
	 * the calling process's own entry: another process's root or
	 * cwd may lie in a mount namespace the step cannot see.
	 */
	if (v->ns_tgid < 0)
		step_ids(v);
	if (w->proc_pid < 0 || (w->proc_pid != v->ns_tgid && w->proc_pid != v->ns_tid)) {
		close(fd);
		return -EACCES;
	}
	close(fd);
	fd = openat(w->cur, comp, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(w->cur);
	w->cur = fd;
	return 0;
}

/* the symlink fd (comp in cur): its target in front of what is left */
static int walk_link(struct sv_walk *w, int fd, const char *comp, bool procfs)
{
	if (++w->links > SV_MAX_LINKS) {
		close(fd);
		return -ELOOP;
	}
	char target[PATH_MAX];
	ssize_t tl = readlinkat(fd, "", target, sizeof(target) - 1);
	if (tl < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	target[tl] = '\0';
	if (procfs && (target[0] == '/' || strstr(target, ":[")))
		return walk_magic(w, fd, comp);
	close(fd);
	char rest[PATH_MAX * 2];
	if (snprintf(rest, sizeof(rest), "%s%s", target, w->p) >= (int)sizeof(rest))
		return -ENAMETOOLONG;
	snprintf(w->pending, sizeof(w->pending), "%s", rest);
	w->p = w->pending;
	if (target[0] == '/') {
		close(w->cur);
		if ((w->cur = dup(w->root)) < 0)
			return -errno;
	}
	return 0;
}

/* one name of the walk, opened relative to cur without following it */
static int walk_comp(struct sv_walk *w, const char *comp, bool last)
{
	if (strcmp(comp, ".") == 0)
		return 0;
	if (strcmp(comp, "..") == 0)
		return walk_up(w);
	struct statfs sf;
	struct stat st;
	bool procfs = fstatfs(w->cur, &sf) == 0 && sf.f_type == SV_PROC_MAGIC;
	bool proc_top = procfs && fstat(w->cur, &st) == 0 && st.st_ino == 1;
	if (proc_top && walk_proc_top(w, comp))
		return 0;
	int fd = openat(w->cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		int r = -errno;
		if (fd >= 0)
			close(fd);
		return r;
	}
	if (!S_ISLNK(st.st_mode) || (last && !w->follow)) {
		close(w->cur);
		w->cur = fd;
		return !last && !S_ISDIR(st.st_mode) ? -ENOTDIR : 0;
	}
	return walk_link(w, fd, comp, procfs);
}

/*
 * The common case in one call, where it means what the walk would: an
 * absolute path in the step's root (RESOLVE_IN_ROOT: ".." and absolute
 * symlinks stay in it), or a relative one with no ".." and no symlink; never
 * a magic link, and never an object in procfs (there /proc/self is the
 * step's, which only the walk knows). A name that is not there, reached
 * with no symlink (absolute, or relative from a folder outside procfs), is
 * not there for the walk either: each component before the missing one was
 * a plain name (a symlink stops openat2 with ELOOP first), and procfs's
 * only names that differ for the step are its self and thread-self
 * symlinks. SV_WALK: walk.
 */
#define SV_WALK (-EAGAIN)
static int resolve_fast(int root, int start, const char *path, bool follow)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW),
			       .resolve = RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS};
	bool abs = path[0] == '/';
	if (abs) {
		how.resolve |= RESOLVE_IN_ROOT;
	} else {
		for (const char *c = path; *c; c += strcspn(c, "/"), c += *c == '/')
			if (c[0] == '.' && c[1] == '.' && (c[2] == '/' || !c[2]))
				return SV_WALK;
	}
	int fd = (int)syscall(SYS_openat2, abs ? root : start, path, &how, sizeof(how));
	struct statfs sf;
	/* a missing name with no symlink before it (one stops openat2 with ELOOP first) */
	if (fd < 0 && errno == ENOENT)
		return abs || (fstatfs(start, &sf) == 0 && sf.f_type != SV_PROC_MAGIC) ? -ENOENT
										       : SV_WALK;
	if (fd < 0 && errno == ELOOP && abs) {
		/* symlinks: the kernel follows them in the step's root (".." stays in it) */
		how.resolve &= ~(uint64_t)RESOLVE_NO_SYMLINKS;
		fd = (int)syscall(SYS_openat2, root, path, &how, sizeof(how));
	}
	if (fd >= 0 && (fstatfs(fd, &sf) < 0 || sf.f_type == SV_PROC_MAGIC)) {
		close(fd);
		fd = -1;
	}
	return fd < 0 ? SV_WALK : fd;
}

/*
 * Resolve path from dirfd (the step's; AT_FDCWD: its cwd) in the step's
 * root: in one openat2 where that means the same (resolve_fast), else
 * following symlinks ourselves so that every component is opened relative
 * to the one before (O_NOFOLLOW): nothing is resolved in our own context.
 * /proc/self and /proc/thread-self mean the step, not us; the step's magic
 * links (/proc/PID/fd/N, cwd, root) are followed by the kernel to the
 * object they stand for. Returns an O_PATH fd of the object (of the
 * symlink itself when !follow and the last component is one), or -errno.
 */
int stepview_resolve(struct stepview *v, uint64_t dirfd, const char *path, bool follow)
{
	struct sv_walk w = {.v = v, .proc_pid = -1, .follow = follow};
	if (!*path)
		return -ENOENT;
	if (snprintf(w.pending, sizeof(w.pending), "%s", path) >= (int)sizeof(w.pending))
		return -ENAMETOOLONG;
	/* the root: for an absolute path, and the walk (a relative path's fast way needs none) */
	w.root = path[0] == '/' ? step_dir(v, &v->root, "root") : -1;
	if (path[0] == '/' && w.root < 0)
		return w.root;
	int owned, start = walk_start(v, dirfd, path, w.root, &owned);
	if (start < 0)
		return start;
	int fast = resolve_fast(w.root, start, path, follow);
	if (fast == SV_WALK && w.root < 0 && (w.root = step_dir(v, &v->root, "root")) < 0)
		fast = w.root;
	if (fast != SV_WALK) {
		if (owned >= 0)
			close(owned);
		return fast;
	}
	w.cur = owned >= 0 ? owned : dup(start);
	if (w.cur < 0)
		return -errno;
	int r = 0;
	w.p = w.pending;
	while (r == 0) {
		while (*w.p == '/')
			w.p++;
		if (!*w.p)
			break;
		char comp[NAME_MAX + 1];
		size_t len = strcspn(w.p, "/");
		if (len > NAME_MAX) {
			r = -ENAMETOOLONG;
			break;
		}
		memcpy(comp, w.p, len);
		comp[len] = '\0';
		w.p += len;
		r = walk_comp(&w, comp, *w.p == '\0');
	}
	if (r < 0) {
		if (w.cur >= 0)
			close(w.cur);
		return r;
	}
	return w.cur;
}

/* The path of an object we hold, as the step sees it (d_path of its mount). */
int stepview_held_path(int fd, char *buf, size_t cap)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(p, buf, cap - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	/*
	 * An unlinked file keeps the path it had, marked; where it was decides.
	 * Only an unlinked one: "w (deleted)" is a name anyone may give a folder
	 * beside the write grant w (it read as w, red-team pass 3).
	 */
	static const char del[] = " (deleted)";
	size_t dl = sizeof(del) - 1;
	struct stat st;
	if ((size_t)n > dl && strcmp(buf + n - dl, del) == 0 && fstat(fd, &st) == 0 &&
	    st.st_nlink == 0)
		buf[n - dl] = '\0';
	return buf[0] == '/' ? 0 : -EACCES; /* "socket:[..]", "anon_inode:": no place */
}
