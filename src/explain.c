#include "explain.h"
#include "path.h"

#include <jansson.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
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

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#define NATIVE_ARCH 0 /* other architectures: no call is decoded */
#endif

/* A traced call between its seccomp stop and its exit. */
struct explain_tracee {
	pid_t tid;
	bool pending;
	enum explain_op op;
	char path[PATH_MAX];  /* the object, absolute as the tracee saw it */
	char path2[PATH_MAX]; /* rename, link: the destination */
	bool existed;         /* create: whether the object was there already */
	int port;
};

const char *explain_op_name(enum explain_op op)
{
	static const char *const names[] = {"read", "write", "create", "delete", "rename", "link",
					    "truncate", "execute", "connect", "bind", "signal",
					    "change the metadata of", "use"};
	return names[op];
}

void explain_init(struct explain *x, const struct grants *g, const struct stepbox_config *cfg)
{
	memset(x, 0, sizeof(*x));
	x->source = "tracer";
	x->grants = g;
	x->cfg = cfg;
}

void explain_release(struct explain *x)
{
	for (size_t i = 0; i < x->n; i++) {
		free(x->v[i].path);
		free(x->v[i].grant);
	}
	free(x->v);
	free(x->t);
	memset(x, 0, sizeof(*x));
}

int explain_seize(pid_t pid)
{
	long opts = PTRACE_O_TRACESECCOMP | PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEFORK |
		    PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC |
		    PTRACE_O_EXITKILL;
	return ptrace(PTRACE_SEIZE, pid, NULL, (void *)opts) < 0 ? -errno : 0;
}

int explain_traceable(void)
{
	pid_t child = fork();
	if (child < 0)
		return -errno;
	if (child == 0) {
		pause();
		_exit(0);
	}
	int r = explain_seize(child);
	kill(child, SIGKILL);
	while (waitpid(child, NULL, __WALL) < 0 && errno == EINTR)
		;
	return r;
}

static struct explain_tracee *tracee(struct explain *x, pid_t tid)
{
	for (size_t i = 0; i < x->nt; i++)
		if (x->t[i].tid == tid)
			return &x->t[i];
	for (size_t i = 0; i < x->nt; i++)
		if (x->t[i].tid == 0) {
			x->t[i].tid = tid;
			return &x->t[i];
		}
	if (strv_grow(&x->t, &x->capt, x->nt, sizeof(*x->t), 8) < 0)
		return NULL;
	memset(&x->t[x->nt], 0, sizeof(x->t[0]));
	x->t[x->nt].tid = tid;
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

/* path made absolute against dirfd (or the cwd) as the tracee sees it. */
static void absolute(pid_t tid, int dirfd, const char *path, char *out, size_t cap)
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
		out[0] = '\0'; /* too long to be a path the kernel accepted */
}

static void path_arg(pid_t tid, int dirfd, uint64_t addr, char *out, size_t cap)
{
	char raw[PATH_MAX];
	if (!read_string(tid, addr, raw, sizeof(raw))) {
		out[0] = '\0';
		return;
	}
	absolute(tid, dirfd, raw, out, cap);
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

/* Decode a call at its seccomp stop. Returns false for calls not explained. */
static bool decode(struct explain_tracee *t, const struct __ptrace_syscall_info *si)
{
	const uint64_t *a = si->seccomp.args;
	pid_t tid = t->tid;
	int flags = 0;
	t->path[0] = t->path2[0] = '\0';
	t->port = -1;
	switch (si->seccomp.nr) {
#ifdef SYS_open
	case SYS_open:
		flags = (int)a[1];
		path_arg(tid, AT_FDCWD, a[0], t->path, sizeof(t->path));
		goto open_flags;
	case SYS_creat:
		flags = O_CREAT | O_WRONLY | O_TRUNC;
		path_arg(tid, AT_FDCWD, a[0], t->path, sizeof(t->path));
		goto open_flags;
#endif
	case SYS_openat:
		flags = (int)a[2];
		path_arg(tid, (int)a[0], a[1], t->path, sizeof(t->path));
		goto open_flags;
#ifdef SYS_openat2
	case SYS_openat2: {
		uint64_t how = 0;
		struct iovec local = {&how, sizeof(how)}, remote = {(void *)(uintptr_t)a[2], sizeof(how)};
		if (process_vm_readv(tid, &local, 1, &remote, 1, 0) != sizeof(how))
			return false;
		flags = (int)how;
		path_arg(tid, (int)a[0], a[1], t->path, sizeof(t->path));
		goto open_flags;
	}
#endif
	case SYS_execve:
		path_arg(tid, AT_FDCWD, a[0], t->path, sizeof(t->path));
		t->op = OP_EXECUTE;
		return true;
	case SYS_execveat:
		path_arg(tid, (int)a[0], a[1], t->path, sizeof(t->path));
		t->op = OP_EXECUTE;
		return true;
#ifdef SYS_mkdir
	case SYS_mkdir:
	case SYS_mknod:
		path_arg(tid, AT_FDCWD, a[0], t->path, sizeof(t->path));
		t->op = OP_CREATE;
		return true;
	case SYS_symlink:
		path_arg(tid, AT_FDCWD, a[1], t->path, sizeof(t->path));
		t->op = OP_CREATE;
		return true;
	case SYS_rmdir:
	case SYS_unlink:
		path_arg(tid, AT_FDCWD, a[0], t->path, sizeof(t->path));
		t->op = OP_DELETE;
		return true;
	case SYS_rename:
	case SYS_link:
		path_arg(tid, AT_FDCWD, a[0], t->path, sizeof(t->path));
		path_arg(tid, AT_FDCWD, a[1], t->path2, sizeof(t->path2));
		t->op = si->seccomp.nr == SYS_rename ? OP_RENAME : OP_LINK;
		return true;
#endif
	case SYS_mkdirat:
	case SYS_mknodat:
		path_arg(tid, (int)a[0], a[1], t->path, sizeof(t->path));
		t->op = OP_CREATE;
		return true;
	case SYS_symlinkat:
		path_arg(tid, (int)a[1], a[2], t->path, sizeof(t->path));
		t->op = OP_CREATE;
		return true;
	case SYS_unlinkat:
		path_arg(tid, (int)a[0], a[1], t->path, sizeof(t->path));
		t->op = OP_DELETE;
		return true;
#ifdef SYS_renameat
	case SYS_renameat:
#endif
	case SYS_renameat2:
	case SYS_linkat:
		path_arg(tid, (int)a[0], a[1], t->path, sizeof(t->path));
		path_arg(tid, (int)a[2], a[3], t->path2, sizeof(t->path2));
		t->op = si->seccomp.nr == SYS_linkat ? OP_LINK : OP_RENAME;
		return true;
	case SYS_truncate:
		path_arg(tid, AT_FDCWD, a[0], t->path, sizeof(t->path));
		t->op = OP_TRUNCATE;
		return true;
	case SYS_connect:
	case SYS_bind:
		t->op = si->seccomp.nr == SYS_connect ? OP_CONNECT : OP_BIND;
		t->port = sock_port(tid, a[1], a[2], t->path, sizeof(t->path));
		return t->port >= 0 || t->path[0];
	case SYS_kill:
	case SYS_tkill:
		t->op = OP_SIGNAL;
		t->port = (int)a[0];
		return true;
	case SYS_tgkill:
		t->op = OP_SIGNAL;
		t->port = (int)a[0];
		return true;
	default:
		return false;
	}
open_flags:
	if (flags & O_PATH)
		return false; /* Landlock does not check O_PATH opens */
	{
		struct stat st;
		t->existed = stat(t->path, &st) == 0;
	}
	if ((flags & O_CREAT) && !t->existed)
		t->op = OP_CREATE;
	else if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))
		t->op = OP_WRITE;
	else
		t->op = OP_READ;
	return true;
}

/* The folder to grant for path: itself when it is one, else its parent. */
static char *grant_folder(const char *path, bool parent)
{
	char *dup = strdup(path);
	struct stat st;
	if (!dup)
		return NULL;
	/* a file read or run: the file itself, never the folder around it (HOME, keys) */
	if (!parent && stat(path, &st) == 0 && !S_ISDIR(st.st_mode))
		return dup;
	if (parent || stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		char *slash = strrchr(dup, '/');
		if (slash && slash != dup)
			*slash = '\0';
		else if (slash)
			slash[1] = '\0';
	}
	return dup;
}

/* The canonical form of path, its missing tail kept as written (grants_canon). */
static void canonical(const char *path, char *out, size_t cap)
{
	char *c = NULL;
	bool exists;
	snprintf(out, cap, "%s", grants_canon("/", path, &c, &exists) == 0 ? c : path);
	free(c);
}

static bool is_write(const struct explain_denial *d)
{
	return d->op != OP_READ && d->op != OP_EXECUTE;
}

static bool same(const struct explain_denial *d, enum explain_op op, const char *path, int port)
{
	return d->op == op && d->port == port &&
	       ((!d->path && !path) || (d->path && path && strcmp(d->path, path) == 0));
}

static void record(struct explain *x, const struct explain_tracee *t, const char *path,
		   int errnum, bool sandbox, char *grant, const char *program)
{
	for (size_t i = 0; i < x->n; i++) {
		if (same(&x->v[i], t->op, path, t->port)) {
			x->v[i].count++;
			free(grant);
			return;
		}
	}
	if (x->n >= EXPLAIN_MAX) {
		x->omitted++;
		free(grant);
		return;
	}
	if (strv_grow(&x->v, &x->cap, x->n, sizeof(*x->v), 16) < 0) {
		free(grant);
		x->omitted++;
		return;
	}
	struct explain_denial *d = &x->v[x->n++];
	memset(d, 0, sizeof(*d));
	d->op = t->op;
	d->pid = t->tid;
	d->path = path ? strdup(path) : NULL;
	d->grant = grant;
	d->port = t->port;
	d->errnum = errnum;
	d->count = 1;
	d->sandbox = sandbox;
	if (program) {
		snprintf(d->program, sizeof(d->program), "%s", program);
		return;
	}
	char comm[64];
	snprintf(comm, sizeof(comm), "/proc/%d/comm", (int)t->tid);
	int fd = open(comm, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, d->program, sizeof(d->program) - 1) : -1;
	if (fd >= 0)
		close(fd);
	d->program[n > 0 ? n : 0] = '\0';
	char *nl = strchr(d->program, '\n');
	if (nl)
		*nl = '\0';
}

static bool listed_port(const struct policy_ports *p, int port)
{
	for (unsigned i = 0; i < p->n; i++)
		if (p->v[i] == port)
			return true;
	return false;
}

/*
 * The call failed with errnum: was it the sandbox? For the filesystem, yes
 * when no grant allows what the call needed on that path (Landlock answers
 * EACCES or EXDEV; under mountns an ungranted path is absent, ENOENT, and a
 * read-only grant EROFS). A failure on a granted path is the file's own mode.
 */
static void judge(struct explain *x, struct explain_tracee *t, int errnum)
{
	const struct grants *g = x->grants;
	if (t->op == OP_CONNECT || t->op == OP_BIND) {
		if (t->port < 0) /* UNIX sockets: abstract ones are scoped */
			record(x, t, t->path, errnum, errnum == EPERM, NULL, NULL);
		else if (x->cfg->net != NET_ALLOW &&
			 !listed_port(t->op == OP_CONNECT ? &x->cfg->connect_tcp : &x->cfg->bind_tcp,
				      t->port))
			record(x, t, NULL, errnum, true, NULL, NULL);
		return;
	}
	if (t->op == OP_SIGNAL) {
		if (errnum == EPERM)
			record(x, t, NULL, errnum, true, NULL, NULL);
		return;
	}
	unsigned need = t->op == OP_READ	  ? GRANT_READ
			: t->op == OP_EXECUTE ? GRANT_EXEC
					      : GRANT_WRITE;
	/* creating, deleting, renaming and linking change the folder */
	bool parent = t->op == OP_CREATE || t->op == OP_DELETE || t->op == OP_RENAME ||
		      t->op == OP_LINK;
	/* rename and link: the call is the sandbox's when either side is not granted */
	const char *paths[2] = {t->path, t->path2};
	char canon[2][PATH_MAX];
	bool covered[2] = {true, true}, real[2] = {false, false};
	for (int i = 0; i < 2; i++) {
		if (!paths[i][0])
			continue;
		char target[PATH_MAX];
		canonical(paths[i], canon[i], sizeof(canon[i]));
		memcpy(target, canon[i], sizeof(target)); /* the same size, NUL-terminated */
		if (parent) {
			char *slash = strrchr(target, '/');
			if (slash && slash != target)
				*slash = '\0';
		}
		covered[i] = grants_covers(g, target, need);
		struct stat st;
		/* ENOENT is the sandbox only for a path that exists outside it (mountns);
		 * for a create, the folder it was to be made in */
		real[i] = !(errnum == ENOENT && (covered[i] || lstat(target, &st) < 0));
	}
	bool any_denied = false;
	for (int i = 0; i < 2; i++)
		if (paths[i][0] && real[i] && !covered[i]) {
			record(x, t, canon[i], errnum, true, grant_folder(canon[i], parent), NULL);
			any_denied = true;
		}
	/* all granted: the file's own permissions (EXDEV there: a move across mounts) */
	if (!any_denied && real[0] && paths[0][0] && errnum != EXDEV && errnum != ENOENT)
		record(x, t, canon[0], errnum, false, NULL, NULL);
}

bool explain_stop(struct explain *x, pid_t pid, int status)
{
	if (!WIFSTOPPED(status))
		return false;
	int sig = WSTOPSIG(status);
	int event = status >> 16;
	struct __ptrace_syscall_info si;
	if (event == PTRACE_EVENT_SECCOMP) {
		struct explain_tracee *t = tracee(x, pid);
		long n = ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(si), &si);
		bool ours = t && n > 0 && si.op == PTRACE_SYSCALL_INFO_SECCOMP &&
			    si.arch == NATIVE_ARCH && decode(t, &si);
		if (t)
			t->pending = ours;
		/* to the call's exit when it is ours to judge, else straight on */
		ptrace(ours ? PTRACE_SYSCALL : PTRACE_CONT, pid, NULL, NULL);
		return true;
	}
	if (sig == (SIGTRAP | 0x80)) { /* syscall-exit-stop */
		struct explain_tracee *t = tracee(x, pid);
		long n = ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(si), &si);
		if (t && t->pending && n > 0 && si.op == PTRACE_SYSCALL_INFO_EXIT &&
		    si.exit.is_error) {
			int e = (int)-si.exit.rval;
			if (e == EACCES || e == EPERM || e == EXDEV || e == ENOENT || e == EROFS)
				judge(x, t, e);
		}
		if (t)
			t->pending = false;
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
	if (event) { /* fork, clone, exec: new tasks are traced already */
		ptrace(PTRACE_CONT, pid, NULL, NULL);
		return true;
	}
	/* a signal for the tracee: deliver it */
	ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig);
	return true;
}

static void describe(FILE *out, const struct explain_denial *d)
{
	fprintf(out, "  %s[%d] %s ", d->program[0] ? d->program : "?", (int)d->pid,
		explain_op_name(d->op));
	if (d->op == OP_SIGNAL)
		fprintf(out, "process %d", d->port);
	else if (d->path && d->port < 0)
		fprintf(out, "'%s'", d->path);
	else
		fprintf(out, "tcp port %d", d->port);
	if (d->count > 1)
		fprintf(out, " (%u times)", d->count);
	fputs(": ", out);
}

void explain_add(struct explain *x, enum explain_op op, const char *program, pid_t pid,
		 const char *path, int port)
{
	struct explain_tracee t;
	memset(&t, 0, sizeof(t));
	t.tid = pid;
	t.op = op;
	t.port = port;
	bool fs = op != OP_CONNECT && op != OP_BIND && op != OP_SIGNAL && op != OP_NOFD;
	record(x, &t, path, op == OP_SIGNAL || op == OP_CONNECT ? EPERM : EACCES, true,
	       fs && path ? grant_folder(path, false) : NULL, program);
}

/* A read of a file beneath HOME: its path relative to HOME in rel. */
static bool home_file(const struct explain_denial *d, const char *home, char *rel, size_t cap)
{
	struct stat st;
	if (!home || !d->path || is_write(d) || !path_beneath(d->path, home) ||
	    strcmp(d->path, home) == 0 || stat(d->path, &st) < 0 || S_ISDIR(st.st_mode))
		return false;
	snprintf(rel, cap, "%s", d->path + strlen(home) + (strcmp(home, "/") ? 1 : 0));
	return true;
}

void explain_print(FILE *out, const struct explain *x)
{
	char home[PATH_MAX] = "", rel[PATH_MAX];
	const char *h = getenv("HOME");
	if (h && h[0] == '/')
		canonical(h, home, sizeof(home));
	size_t sandbox = 0, other = 0;
	for (size_t i = 0; i < x->n; i++)
		x->v[i].sandbox ? sandbox++ : other++;
	if (!sandbox)
		fprintf(out, "stepbox: explain: the sandbox denied nothing\n");
	else
		fprintf(out, "stepbox: explain: the sandbox denied %zu access%s (from the %s):\n",
			sandbox, sandbox == 1 ? "" : "es",
			strcmp(x->source, "audit") ? "tracer" : "kernel's audit records");
	/* what tools merely probe (/proc, /sys) after the denials that matter */
	for (size_t k = 0; k < 2 * x->n; k++) {
		const struct explain_denial *d = &x->v[k % x->n];
		bool probe = d->path && (path_beneath(d->path, "/proc") || path_beneath(d->path, "/sys"));
		if (!d->sandbox || probe != (k >= x->n))
			continue;
		describe(out, d);
		if (d->op == OP_CONNECT || d->op == OP_BIND) {
			if (d->port >= 0)
				fprintf(out, "not allowed by the network policy; allow with --net "
					     "tcp:%d or network.%s_tcp\n",
					d->port, d->op == OP_CONNECT ? "connect" : "bind");
			else
				fprintf(out, "a socket outside the sandbox\n");
		} else if (d->op == OP_SIGNAL) {
			fprintf(out, "a process outside the sandbox\n");
		} else if (d->op == OP_NOFD) {
			fprintf(out, "not possible here: this host refuses pidfd_getfd (a container's "
				     "seccomp profile), which the supervisor needs for it; allow "
				     "pidfd_getfd there\n");
		} else {
			if (d->path && grants_hidden(x->grants, d->path))
				fprintf(out, "hidden on purpose: not world-readable\n");
			else if (d->path && is_write(d) && x->cfg->persist_shared &&
				 x->grants->persist && path_beneath(d->path, x->grants->persist))
				fprintf(out, "the workflow cache is shared read-only in this step; "
					     "install in a step that holds it (--persist)\n");
			else if (is_write(d) && d->grant && grants_system_folder(d->grant))
				fprintf(out, "a system folder, which a step never writes; write in "
					     "the workdir or another write grant\n");
			else if (home_file(d, home[0] && strcmp(home, "/") ? home : NULL, rel,
					   sizeof(rel)))
				fprintf(out, "a file of HOME, which holds nothing of the user's unless "
					     "granted; grant it read-only with --home-file %s\n", rel);
			else
				fprintf(out, "outside every %s grant; grant with %s %s\n",
					d->op == OP_READ ? "read" : d->op == OP_EXECUTE ? "execute" : "write",
					is_write(d) ? "--write" : "--read",
					d->grant ? d->grant : d->path);
		}
	}
	if (x->omitted)
		fprintf(out, "  ... and %zu more not listed\n", x->omitted);
	if (other) {
		fprintf(out, "stepbox: explain: %zu failure%s came from file permissions, not the "
			     "sandbox:\n", other, other == 1 ? "" : "s");
		for (size_t i = 0; i < x->n; i++) {
			if (x->v[i].sandbox)
				continue;
			describe(out, &x->v[i]);
			fprintf(out, "%s\n", strerror(x->v[i].errnum));
		}
	}
}

static json_t *ports(const struct policy_ports *have, const struct explain *x, enum explain_op op);

/* Append s to the array under key in o (made if missing) unless there; 1 if added. */
static int add_unique(json_t *o, const char *key, const char *s)
{
	json_t *a = json_object_get(o, key);
	if (!a) {
		a = json_array();
		if (!a || json_object_set_new(o, key, a) < 0)
			return 0;
	}
	size_t i;
	json_t *e;
	json_array_foreach(a, i, e)
		if (json_is_string(e) && strcmp(json_string_value(e), s) == 0)
			return 0;
	return json_array_append_new(a, json_string(s)) == 0;
}

/* A folder holding what looks like keys or credentials, by name (not beneath). */
static bool holds_keys(const char *dir)
{
	static const char *const names[] = {"id_rsa", "id_ed25519", "id_ecdsa", "id_dsa",
					    "credentials", ".netrc", ".pgpass", "authorized_keys"};
	static const char *const ends[] = {".pem", ".key", ".p12", ".pfx", ".kdbx", ".gpg"};
	struct path_dir d;
	struct path_entry e;
	bool yes = false;
	if (path_dir_open(&d, AT_FDCWD, dir) < 0)
		return false;
	while (!yes && path_dir_next(&d, &e)) {
		size_t len = strlen(e.name);
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
			yes |= strcmp(e.name, names[k]) == 0;
		for (size_t k = 0; k < sizeof(ends) / sizeof(ends[0]); k++)
			yes |= len > strlen(ends[k]) && strcmp(e.name + len - strlen(ends[k]), ends[k]) == 0;
	}
	path_dir_close(&d);
	return yes;
}

int explain_learn(const struct explain *x, json_t *policy, struct strv *refused)
{
	char home[PATH_MAX] = "";
	const char *h = getenv("HOME");
	if (h && h[0] == '/' && strcmp(h, "/") != 0)
		canonical(h, home, sizeof(home));
	int added = 0;
	for (size_t i = 0; i < x->n; i++) {
		const struct explain_denial *d = &x->v[i];
		if (!d->sandbox || !d->grant)
			continue;
		struct stat st;
		bool dir = stat(d->grant, &st) == 0 && S_ISDIR(st.st_mode);
		char *why = NULL;
		if (grants_hidden(x->grants, d->grant))
			why = strv_fmt("%s: hidden on purpose (not world-readable)", d->grant);
		else if (x->cfg->persist_shared && x->grants->persist &&
			 path_beneath(d->grant, x->grants->persist))
			why = strv_fmt("%s: the workflow cache is shared in this step", d->grant);
		else if (home[0] && strcmp(d->grant, home) == 0)
			why = strv_fmt("%s: HOME itself; grant the file it needs", d->grant);
		else if (is_write(d) && grants_system_folder(d->grant))
			why = strv_fmt("%s: a system folder", d->grant);
		else if (dir && holds_keys(d->grant))
			why = strv_fmt("%s: holds keys or credentials", d->grant);
		if (why) {
			if (strv_find(refused, why) < 0)
				strv_push(refused, why);
			free(why);
			continue;
		}
		if (!is_write(d) && !dir && home[0] && path_beneath(d->grant, home))
			added += add_unique(policy, "home_files", d->grant + strlen(home) + 1);
		else
			added += add_unique(policy, is_write(d) ? "write_paths" : "read_paths", d->grant);
	}
	if (x->cfg->net == NET_TCP) {
		json_t *net = json_pack("{s:o, s:o}", "connect_tcp",
					ports(&x->cfg->connect_tcp, x, OP_CONNECT), "bind_tcp",
					ports(&x->cfg->bind_tcp, x, OP_BIND));
		json_t *old = json_object_get(policy, "network");
		added += !json_equal(old, net);
		json_object_set_new(policy, "network", net);
	}
	return added;
}

static json_t *ports(const struct policy_ports *have, const struct explain *x, enum explain_op op)
{
	json_t *a = json_array();
	for (unsigned i = 0; a && i < have->n; i++)
		json_array_append_new(a, json_integer(have->v[i]));
	for (size_t i = 0; a && i < x->n; i++) {
		const struct explain_denial *d = &x->v[i];
		bool dup = false;
		for (size_t k = 0; k < json_array_size(a); k++)
			dup |= json_integer_value(json_array_get(a, k)) == d->port;
		if (d->sandbox && d->op == op && d->port >= 0 && !dup)
			json_array_append_new(a, json_integer(d->port));
	}
	return a;
}

json_t *explain_json(const struct explain *x)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < x->n; i++) {
		const struct explain_denial *d = &x->v[i];
		json_t *o = json_pack("{s:s, s:i, s:s, s:b, s:i, s:s}", "program", d->program, "pid",
				      (int)d->pid, "operation", explain_op_name(d->op), "sandbox",
				      d->sandbox, "count", (int)d->count, "error",
				      strerror(d->errnum));
		if (d->path)
			json_object_set_new(o, "path", json_string(d->path));
		if (d->port >= 0)
			json_object_set_new(o, d->op == OP_SIGNAL ? "target_pid" : "port",
					    json_integer(d->port));
		if (d->grant)
			json_object_set_new(o, "grant", json_pack("{s:s}", is_write(d) ? "write_paths"
											 : "read_paths",
								  d->grant));
		json_array_append_new(a, o);
	}
	return a;
}
