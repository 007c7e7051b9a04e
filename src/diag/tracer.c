/* tracer: see tracer.h. */
#include "tracer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "path.h"
#include "strv.h"

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#define NATIVE_ARCH 0 /* other architectures: no call is decoded */
#endif

/* A thread's traced call, between its seccomp stop and its exit. */
struct tracer_call {
	struct explain_call c;
	bool pending;
	bool forking; /* a fork, to its exit: RLIMIT_NPROC's refusal is an EAGAIN there */
};

int tracer_seize(pid_t pid)
{
	long opts = PTRACE_O_TRACESECCOMP | PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEFORK |
		    PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC |
		    PTRACE_O_EXITKILL;
	return ptrace(PTRACE_SEIZE, pid, NULL, (void *)opts) < 0 ? -errno : 0;
}

int tracer_traceable(void)
{
	pid_t child = fork();
	if (child < 0)
		return -errno;
	if (child == 0) {
		pause();
		_exit(0);
	}
	int r = tracer_seize(child);
	kill(child, SIGKILL);
	while (waitpid(child, NULL, __WALL) < 0 && errno == EINTR)
		;
	return r;
}

static struct tracer_call *tracee(struct explain *x, pid_t tid)
{
	for (size_t i = 0; i < x->nt; i++)
		if (x->t[i].c.tid == tid)
			return &x->t[i];
	for (size_t i = 0; i < x->nt; i++)
		if (x->t[i].c.tid == 0) {
			x->t[i].c.tid = tid;
			return &x->t[i];
		}
	if (strv_grow(&x->t, &x->capt, x->nt, sizeof(*x->t), 8) < 0)
		return NULL;
	memset(&x->t[x->nt], 0, sizeof(x->t[0]));
	x->t[x->nt].c.tid = tid;
	return &x->t[x->nt++];
}

/* A NUL-terminated string from the tracee's memory. */
static bool read_string(pid_t tid, uint64_t addr, char *buf, size_t cap)
{
	size_t got = 0;
	while (got + 1 < cap) {
		/* page by page: a read may not cross into an unmapped page */
		size_t chunk = 4096 - ((addr + got) & 4095);
		if (chunk > cap - 1 - got)
			chunk = cap - 1 - got;
		struct iovec local = {buf + got, chunk};
		struct iovec remote = {(void *)(uintptr_t)(addr + got), chunk};
		ssize_t n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
		if (n <= 0)
			break;
		if (memchr(buf + got, '\0', (size_t)n))
			return true;
		got += (size_t)n;
	}
	buf[got] = '\0';
	return got > 0;
}

static void path_arg(pid_t tid, int dirfd, uint64_t addr, char *out, size_t cap)
{
	char raw[PATH_MAX];
	/* "" names dirfd itself (AT_EMPTY_PATH): no lookup of a name */
	if (!read_string(tid, addr, raw, sizeof(raw)) || !raw[0]) {
		out[0] = '\0';
		return;
	}
	path_of_tid(tid, dirfd, raw, out, cap);
}

static int sock_port(pid_t tid, uint64_t addr, uint64_t len, char *unix_path, size_t cap)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	if (len > sizeof(ss))
		len = sizeof(ss);
	struct iovec local = {&ss, len}, remote = {(void *)(uintptr_t)addr, len};
	if (process_vm_readv(tid, &local, 1, &remote, 1, 0) < 2)
		return -1;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	if (ss.ss_family == AF_UNIX && unix_path) {
		const char *p = ((struct sockaddr_un *)&ss)->sun_path;
		snprintf(unix_path, cap, "%s%s", p[0] ? "" : "@", p[0] ? p : p + 1);
	}
	return -1;
}

/*
 * How each traced call names its objects: the argument holding a path (and
 * the one holding its folder's fd, -1 for the cwd), a second path (rename,
 * link), the open flags, a socket address, a signal's target.
 */
enum arg_kind { K_PATH, K_OPEN, K_OPENAT2, K_SOCKET, K_SIGNAL };

struct decoder {
	long nr;
	enum arg_kind kind;
	enum denial_op op;                             /* K_OPEN: decided by the flags */
	signed char dirfd, path, dirfd2, path2, flags; /* argument indexes; -1: none */
	int fixed_flags;                               /* creat: what its flags are */
};

#define PATH1(n, o, d, p)                                                                          \
	{                                                                                          \
		n, K_PATH, o, d, p, -1, -1, -1, 0                                                  \
	}
#define PATH2(n, o, d, p, d2, p2)                                                                  \
	{                                                                                          \
		n, K_PATH, o, d, p, d2, p2, -1, 0                                                  \
	}
static const struct decoder decoders[] = {
#ifdef SYS_open
	{SYS_open, K_OPEN, OP_READ, -1, 0, -1, -1, 1, 0},
	{SYS_creat, K_OPEN, OP_READ, -1, 0, -1, -1, -1, O_CREAT | O_WRONLY | O_TRUNC},
	PATH1(SYS_mkdir, OP_CREATE, -1, 0),
	PATH1(SYS_mknod, OP_CREATE, -1, 0),
	PATH1(SYS_symlink, OP_CREATE, -1, 1),
	PATH1(SYS_rmdir, OP_DELETE, -1, 0),
	PATH1(SYS_unlink, OP_DELETE, -1, 0),
	PATH2(SYS_rename, OP_RENAME, -1, 0, -1, 1),
	PATH2(SYS_link, OP_LINK, -1, 0, -1, 1),
#endif
	{SYS_openat, K_OPEN, OP_READ, 0, 1, -1, -1, 2, 0},
#ifdef SYS_openat2
	{SYS_openat2, K_OPENAT2, OP_READ, 0, 1, -1, -1, 2, 0},
#endif
	PATH1(SYS_execve, OP_EXECUTE, -1, 0),
	PATH1(SYS_execveat, OP_EXECUTE, 0, 1),
	PATH1(SYS_mkdirat, OP_CREATE, 0, 1),
	PATH1(SYS_mknodat, OP_CREATE, 0, 1),
	PATH1(SYS_symlinkat, OP_CREATE, 1, 2),
	PATH1(SYS_unlinkat, OP_DELETE, 0, 1),
#ifdef SYS_renameat
	PATH2(SYS_renameat, OP_RENAME, 0, 1, 2, 3),
#endif
	PATH2(SYS_renameat2, OP_RENAME, 0, 1, 2, 3),
	PATH2(SYS_linkat, OP_LINK, 0, 1, 2, 3),
	PATH1(SYS_truncate, OP_TRUNCATE, -1, 0),
/* lookups: traced under the namespaces only (harden_filter_trace_lookup) */
#ifdef SYS_stat
	PATH1(SYS_stat, OP_LOOKUP, -1, 0),
	PATH1(SYS_lstat, OP_LOOKUP, -1, 0),
	PATH1(SYS_access, OP_LOOKUP, -1, 0),
	PATH1(SYS_readlink, OP_LOOKUP, -1, 0),
#endif
	PATH1(SYS_newfstatat, OP_LOOKUP, 0, 1),
	PATH1(SYS_statx, OP_LOOKUP, 0, 1),
	PATH1(SYS_faccessat, OP_LOOKUP, 0, 1),
#ifdef SYS_faccessat2
	PATH1(SYS_faccessat2, OP_LOOKUP, 0, 1),
#endif
	PATH1(SYS_readlinkat, OP_LOOKUP, 0, 1),
	{SYS_connect, K_SOCKET, OP_CONNECT, -1, -1, -1, -1, -1, 0},
	{SYS_bind, K_SOCKET, OP_BIND, -1, -1, -1, -1, -1, 0},
	{SYS_kill, K_SIGNAL, OP_SIGNAL, -1, -1, -1, -1, -1, 0},
	{SYS_tkill, K_SIGNAL, OP_SIGNAL, -1, -1, -1, -1, -1, 0},
	{SYS_tgkill, K_SIGNAL, OP_SIGNAL, -1, -1, -1, -1, -1, 0},
};

/* Decode a call at its seccomp stop into c. Returns false for calls not explained. */
static bool decode(struct explain_call *c, const struct __ptrace_syscall_info *si)
{
	const uint64_t *a = si->seccomp.args;
	const struct decoder *d = NULL;
	for (size_t i = 0; !d && i < sizeof(decoders) / sizeof(*decoders); i++)
		if ((uint64_t)decoders[i].nr == si->seccomp.nr)
			d = &decoders[i];
	if (!d)
		return false;
	c->path[0] = c->path2[0] = '\0';
	c->port = -1;
	c->op = d->op;
	if (d->kind == K_SIGNAL) {
		c->port = (int)a[0];
		return true;
	}
	if (d->kind == K_SOCKET) {
		c->port = sock_port(c->tid, a[1], a[2], c->path, sizeof(c->path));
		return c->port >= 0 || c->path[0];
	}
	path_arg(c->tid, d->dirfd < 0 ? AT_FDCWD : (int)a[d->dirfd], a[d->path], c->path,
		 sizeof(c->path));
	if (d->path2 >= 0)
		path_arg(c->tid, d->dirfd2 < 0 ? AT_FDCWD : (int)a[d->dirfd2], a[d->path2],
			 c->path2, sizeof(c->path2));
	if (d->kind == K_PATH)
		return c->path[0] != '\0' || d->op != OP_LOOKUP; /* a lookup of "": an fstat */
	int flags = d->flags < 0 ? d->fixed_flags : (int)a[d->flags];
	if (d->kind == K_OPENAT2) { /* the flags are the first field of struct open_how */
		uint64_t how = 0;
		struct iovec local = {&how, sizeof(how)};
		struct iovec remote = {(void *)(uintptr_t)a[d->flags], sizeof(how)};
		if (process_vm_readv(c->tid, &local, 1, &remote, 1, 0) != sizeof(how))
			return false;
		flags = (int)how;
	}
	if (flags & O_PATH)
		return false; /* Landlock does not check O_PATH opens */
	struct stat st;
	if ((flags & O_CREAT) && stat(c->path, &st) < 0)
		c->op = OP_CREATE;
	else if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))
		c->op = OP_WRITE;
	else
		c->op = OP_READ;
	return true;
}

/*
 * Whether c, decoded at its seccomp stop, may take a folder from its name:
 * rmdir, a rename of a folder, an exchange (whose source may be a link). A
 * file's unlink or rename cannot: a folder's name outlives them.
 */
static bool moves_folder(const struct explain_call *c, const struct __ptrace_syscall_info *si)
{
	const uint64_t *a = si->seccomp.args;
	struct stat st;
	if (c->op == OP_DELETE) {
#ifdef SYS_unlink
		if (si->seccomp.nr == SYS_unlink)
			return false;
#endif
		return si->seccomp.nr != SYS_unlinkat || (a[2] & AT_REMOVEDIR);
	}
	if (c->op != OP_RENAME)
		return false;
	if (si->seccomp.nr == SYS_renameat2 && (a[4] & RENAME_EXCHANGE))
		return true;
	return c->path[0] == '\0' || lstat(c->path, &st) < 0 || S_ISDIR(st.st_mode);
}

/* clone, fork, vfork (harden_filter_trace*_forks); clone3 is ENOSYS in the base filter */
static bool is_fork(uint64_t nr)
{
#ifdef SYS_fork
	if (nr == SYS_fork || nr == SYS_vfork)
		return true;
#endif
	return nr == SYS_clone;
}

bool tracer_stop(struct explain *x, pid_t pid, int status)
{
	if (!WIFSTOPPED(status)) {
		/* a task gone: its slot serves the next (a build starts thousands) */
		for (size_t i = 0; (WIFEXITED(status) || WIFSIGNALED(status)) && i < x->nt; i++)
			if (x->t[i].c.tid == pid)
				x->t[i].c.tid = 0;
		return false;
	}
	int sig = WSTOPSIG(status);
	int event = status >> 16;
	struct __ptrace_syscall_info si;
	if (event == PTRACE_EVENT_SECCOMP) {
		struct tracer_call *t = tracee(x, pid);
		long n = ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(si), &si);
		bool seen = t && n > 0 && si.op == PTRACE_SYSCALL_INFO_SECCOMP &&
			    si.arch == NATIVE_ARCH;
		bool ours = seen && decode(&t->c, &si);
		if (ours && moves_folder(&t->c, &si))
			explain_forget_dirs(x); /* its name may be a link by the next read */
		ours = ours && explain_may_fail(x, &t->c);
		bool forking = seen && is_fork(si.seccomp.nr);
		if (t) {
			t->pending = ours;
			t->forking = forking;
		}
		/* to the call's exit when a failure there would be judged, else straight on */
		ptrace(ours || forking ? PTRACE_SYSCALL : PTRACE_CONT, pid, NULL, NULL);
		return true;
	}
	if (sig == (SIGTRAP | 0x80)) { /* syscall-exit-stop */
		struct tracer_call *t = tracee(x, pid);
		long n = ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(si), &si);
		if (t && t->pending && n > 0 && si.op == PTRACE_SYSCALL_INFO_EXIT &&
		    si.exit.is_error) {
			int e = (int)-si.exit.rval;
			if (e == EACCES || e == EPERM || e == EXDEV || e == ENOENT || e == EROFS ||
			    e == EBUSY)
				explain_judge(x, &t->c, e);
		}
		if (t && t->forking && n > 0 && si.op == PTRACE_SYSCALL_INFO_EXIT &&
		    si.exit.is_error && si.exit.rval == -EAGAIN)
			x->forks_refused++;
		if (t)
			t->pending = t->forking = false;
		ptrace(PTRACE_CONT, pid, NULL, NULL);
		return true;
	}
	if (event == PTRACE_EVENT_STOP) {
		/* group-stop (SIGSTOP and friends): stay stopped until SIGCONT */
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
			ptrace(PTRACE_LISTEN, pid, NULL, NULL);
		else
			ptrace(PTRACE_CONT, pid, NULL, NULL);
		return true;
	}
	if (event == PTRACE_EVENT_EXEC) {
		/* the exec decoded at its seccomp stop ran: misses of its name elsewhere did not
		 * matter */
		struct tracer_call *t = tracee(x, pid);
		if (t && t->c.op == OP_EXECUTE && t->c.path[0])
			explain_ran(x, t->c.path);
	}
	if (event) { /* fork, clone, exec: new tasks are traced already */
		ptrace(PTRACE_CONT, pid, NULL, NULL);
		return true;
	}
	/* a signal for the tracee: deliver it */
	ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig);
	return true;
}
