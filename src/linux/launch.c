#include "launch.h"
#include "clock.h"
#include "launch_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "command.h"
#include "harden.h"
#include "layers.h"
#include "netns.h"
#include "supervise.h"
#include "tracer.h"

#if defined(__SANITIZE_ADDRESS__)
#define STEPBOX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STEPBOX_ASAN 1
#endif
#endif

/* The child's steps, reported back through the exec pipe when one fails. */
enum child_step {
	STEP_SETSID,
	STEP_PDEATHSIG,
	STEP_CHDIR,
	STEP_FDS,
	STEP_CAPS,
	STEP_NNP,
	STEP_BACKEND, /* detail and hint: the backend's own words */
	STEP_SECCOMP,
	STEP_SIGMASK,
	STEP_LAYERS, /* the backend's namespaces: nothing ran */
	STEP_FORK,
	STEP_NOTIFY,
	STEP_LIMITS,
	STEP_NETNS,
	STEP_EXEC,
	STEP_LISTENER, /* not a failure: errnum is the supervisor's listener fd */
	STEP_PID,      /* not a failure: errnum is the command's pid (Landlock alone) */
};

static const char *const step_names[] = {
	"start a new session",
	"set the parent-death signal",
	"enter the workdir",
	"close inherited file descriptors",
	"drop capabilities",
	"set no_new_privs",
	"apply the sandbox",
	"load the seccomp filter",
	"restore the signal mask",
	"build the mount namespace",
	"start the command inside the namespaces",
	"install the supervisor's seccomp filter",
	"enter the step's cgroup and set its rlimits",
	"hand the proxy its listener in the step's network namespace",
	"execute the command",
};

struct child_report {
	int step;
	int errnum;
	char detail[256]; /* STEP_BACKEND, STEP_LAYERS: what failed, on which path */
	char hint[160];
	bool refused; /* STEP_LAYERS: the host refused them (backend_failure) */
};

/* Signals stepbox passes on to the command's process group. */
static const int forwarded[] = {SIGINT,  SIGTERM, SIGHUP,   SIGQUIT,
				SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT};

static void child_fail(int fd, enum child_step step, int errnum)
{
	struct child_report rep = {step, errnum, "", "", false};
	ssize_t w = write(fd, &rep, sizeof(rep));
	(void)w;
	_exit(step == STEP_EXEC ? (errnum == ENOENT ? 127 : 126) : 125);
}

/* The backend could not be applied: its words go back to the parent. */
static void backend_fail(int fd, const struct backend_failure *why)
{
	struct child_report rep = {why->layers ? STEP_LAYERS : STEP_BACKEND, why->errnum, "", "",
				   why->refused};
	memcpy(rep.detail, why->detail, sizeof(rep.detail));
	memcpy(rep.hint, why->hint, sizeof(rep.hint));
	ssize_t w = write(fd, &rep, sizeof(rep));
	(void)w;
	_exit(125);
}

/*
 * The supervisor's filter goes on last, with a new listener: its fd number
 * goes to the parent, which copies it (pidfd_getfd) and starts serving
 * before this process goes on; until then no supervised call may happen.
 * Where pidfd_getfd is refused, the listener itself goes over ack (then a
 * socket pair): that filter does not send sendmsg to the supervisor.
 */
static void hand_listener(const struct launch_spec *s, int fd, int ack)
{
	/*
	 * Where pidfd_getfd is refused, a sock_diag socket in this network
	 * namespace, the step's, goes with the listener: the supervisor reads the
	 * step's UNIX sockets there. Made before the supervisor's filter, which
	 * under --explain holds the network mode's socket refusals (AF_NETLINK
	 * among them) and which nobody serves until the listener is handed over.
	 */
	int diag = -1;
	if (s->supervise->no_getfd &&
	    (diag = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)) < 0)
		child_fail(fd, STEP_NOTIFY, errno);
	int l = harden_listener(s->harden, true);
	if (l == -EINVAL) /* before Linux 5.19: no killable wait */
		l = harden_listener(s->harden, false);
	if (l < 0)
		child_fail(fd, STEP_NOTIFY, -l);
	if (s->supervise->no_getfd) {
		int two[2] = {l, diag};
		union {
			char buf[CMSG_SPACE(sizeof(two))];
			struct cmsghdr align;
		} u;
		memset(&u, 0, sizeof(u));
		struct iovec iov = {"l", 1};
		struct msghdr m = {.msg_iov = &iov,
				   .msg_iovlen = 1,
				   .msg_control = u.buf,
				   .msg_controllen = sizeof(u.buf)};
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(two));
		memcpy(CMSG_DATA(c), two, sizeof(two));
		if (sendmsg(ack, &m, MSG_NOSIGNAL) != 1)
			child_fail(fd, STEP_NOTIFY, errno);
		close(two[1]);
	}
	struct child_report rep = {STEP_LISTENER, l, "", "", false};
	char c;
	if (write(fd, &rep, sizeof(rep)) != (ssize_t)sizeof(rep) || read(ack, &c, 1) != 1)
		_exit(125); /* the parent gave up */
	close(l);
	close(ack);
}

/*
 * The security-critical order, in the process that becomes the command,
 * allocating nothing. Before it, the caller has started a new session (no
 * controlling terminal to type into, CVE-2017-5226) and set the parent-death
 * signal; a mountns child has also built and entered its new root.
 *  1. enter the workdir while the full path walk is still ours
 *  2. every inherited fd but 0-2 closes at exec
 *  3. capabilities (bounding set too) go, while CAP_SETPCAP still works
 *  4. no_new_privs: required by Landlock and seccomp for the unprivileged,
 *     and it makes setuid binaries inert
 *  5. the backend's own step in the command (Landlock alone: the ruleset)
 *  6. seccomp last: it refuses calls the steps above may need; the
 *     supervisor's filter (Landlock alone) after the others
 *  7. the caller's signal mask back, then exec
 */
static void child_exec(const struct launch_spec *s, const char *file, const sigset_t *oldmask,
		       int fd, int ack)
{
	int r;
	struct backend_failure why = {0};
	/* the output limit: stdout and stderr are stepbox's pipes */
	for (int i = 0; i < 2; i++)
		if (s->output[i] >= 0 && dup2(s->output[i], i + 1) < 0)
			child_fail(fd, STEP_FDS, errno);
	if (chdir(s->workdir) < 0)
		child_fail(fd, STEP_CHDIR, errno);
	if ((r = harden_cloexec_fds()) < 0)
		child_fail(fd, STEP_FDS, -r);
	if ((r = harden_drop_caps()) < 0)
		child_fail(fd, STEP_CAPS, -r);
	if ((r = harden_no_new_privs()) < 0)
		child_fail(fd, STEP_NNP, -r);
	if (s->backend->ops->apply(s->backend, BACKEND_IN_COMMAND, &why) < 0)
		backend_fail(fd, &why);
	if ((r = harden_seccomp(s->harden)) < 0)
		child_fail(fd, STEP_SECCOMP, -r);
	if (ack >= 0)
		hand_listener(s, fd, ack);
	if (sigprocmask(SIG_SETMASK, oldmask, NULL) < 0)
		child_fail(fd, STEP_SIGMASK, errno);
	execve(file, s->argv, s->envp);
	child_fail(fd, STEP_EXEC, errno);
}

/*
 * A new session, and death with the parent, checking it is not dead already.
 * parent is what getppid() must answer: 0 in a new PID namespace, where the
 * parent is not visible (and the sync pipe proved it alive a moment ago).
 */
static void child_start(pid_t parent, int fd, int death)
{
	if (setsid() < 0)
		child_fail(fd, STEP_SETSID, errno);
	if (prctl(PR_SET_PDEATHSIG, death) < 0)
		child_fail(fd, STEP_PDEATHSIG, errno);
	if (getppid() != parent)
		_exit(125);
}

/*
 * Without a PID namespace the init learns that stepbox died from this
 * signal (its parent-death signal; stepbox never forwards it) and kills the
 * whole tree itself before it goes: as a subreaper it has every orphan of
 * the step as its child.
 */
#define INIT_DEATH_SIGNAL (SIGRTMIN + 2)

static void init_kill_all(void)
{
	for (;;) {
		launch_kill_children(0);
		if (waitpid(-1, NULL, __WALL) < 0 && errno != EINTR)
			_exit(137);
	}
}

/* What the command's process needs from its init's memory. */
struct command_start {
	const struct launch_spec *s;
	const char *file;
	const sigset_t *oldmask;
	int fd, status_fd;
};

static int command_main(void *arg)
{
	const struct command_start *c = arg;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		child_fail(c->fd, STEP_PDEATHSIG, errno);
	close(c->status_fd);
	child_exec(c->s, c->file, c->oldmask, c->fd, -1);
	return 125;
}

/*
 * The init's child that becomes the command. It runs in the init's memory,
 * on a stack of its own, until its exec, and the init waits meanwhile (as
 * vfork and posix_spawn do): no copy of the page tables and no copy on
 * write after it, which cost about half a millisecond a fork on a VM.
 * child_exec allocates nothing and changes nothing of the init's but the
 * errno it leaves behind; the filters, the Landlock domain, capabilities,
 * descriptors and the working folder are the child's own (no CLONE_THREAD,
 * CLONE_FILES or CLONE_FS).
 */
static pid_t start_command(struct command_start *c)
{
#ifdef STEPBOX_ASAN
	/* AddressSanitizer cannot follow a switch to a stack it did not make */
	pid_t pid = fork();
	if (pid == 0)
		_exit(command_main(c));
	return pid;
#else
	const size_t size = 256 * 1024, guard = 4096;
	char *stack = mmap(NULL, size + guard, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	if (mprotect(stack, guard, PROT_NONE) < 0)
		return -1;
	return clone(command_main, stack + guard + size, CLONE_VM | CLONE_VFORK | SIGCHLD, c);
#endif
}

/*
 * The init's session and death signal. Without the namespaces it also
 * becomes the step's subreaper, its death signal held for init_reap.
 */
static void init_start(const struct launch_spec *s, int fd, pid_t parent)
{
	if (s->backend->layers.ns) {
		child_start(0, fd, SIGKILL);
		return;
	}
	/* held until init_reap's wait takes it: its default action is death */
	sigset_t death;
	sigemptyset(&death);
	sigaddset(&death, INIT_DEATH_SIGNAL);
	if (sigprocmask(SIG_BLOCK, &death, NULL) < 0)
		child_fail(fd, STEP_SIGMASK, errno);
	child_start(parent, fd, INIT_DEATH_SIGNAL);
	/* the listener needs no_new_privs without CAP_SYS_ADMIN; this never execs */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0 || harden_no_new_privs() < 0)
		child_fail(fd, STEP_NNP, errno);
}

/*
 * The init's wait: orphans reaped until the command (cmd) ends, its raw
 * wait status passed back over status_fd. Never returns.
 */
static void init_reap(pid_t cmd, int status_fd)
{
	sigset_t wait_for;
	sigemptyset(&wait_for);
	sigaddset(&wait_for, SIGCHLD);
	sigaddset(&wait_for, INIT_DEATH_SIGNAL);
	for (;;) {
		int st;
		pid_t w;
		while ((w = waitpid(-1, &st, WNOHANG | __WALL)) > 0) {
			if (w == cmd) {
				ssize_t n = write(status_fd, &st, sizeof(st));
				_exit(n == (ssize_t)sizeof(st) ? 0 : 125);
			}
		}
		if (w < 0 && errno == ECHILD)
			_exit(125);
		siginfo_t si;
		if (sigwaitinfo(&wait_for, &si) == INIT_DEATH_SIGNAL)
			init_kill_all(); /* stepbox is gone: so is the step */
	}
}

/*
 * The init: stepbox's child, the command's parent. With the namespaces it is
 * PID 1 of the new PID namespace: once the maps are written (sync_fd) it
 * builds the new root; its exit kills every process in the namespace, so the
 * command's tree dies with it, and with stepbox (parent-death signal).
 * Without them (Landlock alone) it is a subreaper outside the step's Landlock
 * domain (signals from the step cannot reach it from ABI 6), and it kills
 * the tree itself when stepbox dies. Either way it installs the supervisor's
 * filter for the command, forks it, reaps orphans, and passes the command's
 * raw wait status back over status_fd.
 */
static void init_child(const struct launch_spec *s, const char *file, const sigset_t *oldmask,
		       int fd, int sync_fd, int status_fd, int ack, pid_t parent, bool joined)
{
	char c;
	if (sync_fd >= 0 && read(sync_fd, &c, 1) != 1)
		_exit(125); /* the parent gave up */
	if (sync_fd >= 0)
		close(sync_fd);
	/* network by name: loopback up, the proxy's listener made here and handed out */
	int r = s->net_handoff > 0 ? netns_hand_listener(s->net_handoff, s->net_transparent) : 0;
	if (r < 0)
		child_fail(fd, STEP_NETNS, -r);
	/* into the step's cgroup first (unless born there, or stepbox moves it):
	 * nothing of the step may run outside it */
	r = s->limits && !joined ? limit_join(s->limits, 0) : 0;
	if (r < 0)
		child_fail(fd, STEP_LIMITS, -r);
	init_start(s, fd, parent);
	/* the backend's step in the init: the namespaces' new root (stacked: and
	 * the Landlock domain the command inherits) */
	struct backend_failure why = {0};
	if (s->backend->ops->apply(s->backend, BACKEND_IN_INIT, &why) < 0)
		backend_fail(fd, &why);
	/*
	 * The supervisor's filter, inherited by the command, goes on last (the
	 * root's building chmods: a supervised call the supervisor, with no
	 * capability, must not be asked to perform for this init).
	 */
	if (ack >= 0)
		hand_listener(s, fd, ack);
	/* the cgroup and rlimits hold the init too: it is counted, and forks nothing else */
	if (s->limits && (r = limit_enter(s->limits)) < 0)
		child_fail(fd, STEP_LIMITS, -r);
	struct command_start cs = {s, file, oldmask, fd, status_fd};
	pid_t cmd = start_command(&cs);
	if (cmd < 0)
		child_fail(fd, STEP_FORK, errno);
	if (!s->backend->layers.ns) {
		/* for --explain's audit records: the domain's creator */
		struct child_report rep = {STEP_PID, (int)cmd, "", "", false};
		if (write(fd, &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
			init_kill_all();
	}
	close(fd); /* the parent's read ends when the command has exec'd */
	init_reap(cmd, status_fd);
}

static bool may_exec(const void *grants, const char *canon)
{
	return grants_covers(grants, canon, GRANT_EXEC);
}

static void close_pair(int p[2])
{
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0)
			close(p[i]);
}

/*
 * Read the child's report from the exec pipe (EOF: the command was exec'd).
 * With the tracer, the command's own execve stops in it, so ptrace stops are
 * served meanwhile; an exit is only peeked at (WNOWAIT), for launch_wait.
 */
static ssize_t await_exec(int fd, struct child_report *rep, struct explain *x)
{
	ssize_t n;
	for (;;) {
		if (x) {
			struct pollfd p = {fd, POLLIN, 0};
			if (poll(&p, 1, 2) == 0) {
				siginfo_t si;
				memset(&si, 0, sizeof(si));
				while (waitid(P_ALL, 0, &si,
					      WEXITED | WSTOPPED | WNOHANG | WNOWAIT | __WALL) ==
					       0 &&
				       si.si_pid && si.si_code == CLD_TRAPPED) {
					int st;
					pid_t w = waitpid(si.si_pid, &st, WNOHANG | __WALL);
					if (w <= 0 || !tracer_stop(x, w, st))
						break;
					memset(&si, 0, sizeof(si));
				}
				continue;
			}
		}
		n = read(fd, rep, sizeof(*rep));
		if (n >= 0 || errno != EINTR)
			return n;
	}
}

/* The pipes between stepbox and its child; -1 where a run needs none. */
struct pipes {
	int report[2]; /* child to parent: a child_report, or EOF once exec'd */
	int sync[2];   /* parent to child: the maps are written, the tracer attached */
	int status[2]; /* init to parent: the command's wait status (namespaces) */
	int ack[2];    /* parent to child: the supervisor holds the listener */
};

static void pipes_close(struct pipes *p)
{
	close_pair(p->report);
	close_pair(p->sync);
	close_pair(p->status);
	close_pair(p->ack);
}

/* Every sandbox runs its command under an init; --backend none does not. */
static bool uses_init(const struct launch_spec *s)
{
	return s->backend->layers.ns || s->backend->layers.landlock || s->supervise;
}

static int pipes_open(struct pipes *p, const struct launch_spec *s, struct stepbox_err *err)
{
	memset(p, 0xff, sizeof(*p)); /* every fd -1 */
	int r = pipe2(p->report, O_CLOEXEC);
	/* the child waits on sync until its maps are written and it is traced */
	if (r == 0 && (s->backend->layers.ns || s->explain))
		r = pipe2(p->sync, O_CLOEXEC);
	if (r == 0 && uses_init(s))
		r = pipe2(p->status, O_CLOEXEC);
	if (r == 0 && s->supervise)
		r = s->supervise->no_getfd
			    ? socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p->ack)
			    : pipe2(p->ack, O_CLOEXEC);
	if (r < 0) {
		int e = errno;
		pipes_close(p);
		return err_set(err, ERR_UNAVAILABLE, e, "create the pipes to the child");
	}
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* In the child: never returns. */
static void child_main(const struct launch_spec *s, const char *file, const sigset_t *oldmask,
		       struct pipes *p, pid_t parent, bool joined)
{
	close_fd(&p->report[0]);
	close_fd(&p->ack[1]);
	close_fd(&p->sync[1]);
	close_fd(&p->status[0]);
	if (!uses_init(s)) { /* --backend none */
		char c;
		if (p->sync[0] >= 0 && read(p->sync[0], &c, 1) != 1)
			_exit(125); /* the parent gave up */
		child_start(parent, p->report[1], SIGKILL);
		int r = s->limits && !joined ? limit_join(s->limits, 0) : 0;
		if (r == 0 && s->limits)
			r = limit_enter(s->limits);
		if (r < 0)
			child_fail(p->report[1], STEP_LIMITS, -r);
		child_exec(s, file, oldmask, p->report[1], p->ack[0]);
	}
	init_child(s, file, oldmask, p->report[1], p->sync[0], p->status[1], p->ack[0], parent,
		   joined);
}

/*
 * The listener and the sock_diag socket the child sent over ack (a socket
 * pair where pidfd_getfd is refused): the listener, with *diag; or -1.
 */
static int receive_listener(int ack, int *diag)
{
	int two[2] = {-1, -1};
	union {
		char buf[CMSG_SPACE(sizeof(two))];
		struct cmsghdr align;
	} u;
	char c;
	struct iovec iov = {&c, 1};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = u.buf,
			   .msg_controllen = sizeof(u.buf)};
	ssize_t n;
	while ((n = recvmsg(ack, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	struct cmsghdr *cm = n == 1 ? CMSG_FIRSTHDR(&m) : NULL;
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(sizeof(two))) {
		memcpy(two, CMSG_DATA(cm), sizeof(two));
	} else {
		if (cm && cm->cmsg_type == SCM_RIGHTS) /* not ours: never leak what came */
			for (int *f = (int *)CMSG_DATA(cm);
			     (char *)(f + 1) <= (char *)cm + cm->cmsg_len; f++)
				close(*f);
		if (n >= 0)
			errno = EPROTO;
	}
	*diag = two[1];
	return two[0];
}

/* Copy the child's listener (fd number n in its table) and start serving it. */
static int take_listener(const struct launch_spec *s, pid_t pid, int n, int ack,
			 struct supervisor **sup, struct stepbox_err *err)
{
	int l = -1, e = 0, diag = -1;
	if (s->supervise->no_getfd) {
		l = receive_listener(ack, &diag);
		e = errno;
	} else {
		int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
		l = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, n, 0);
		e = errno;
		if (pidfd >= 0)
			close(pidfd);
	}
	if (l < 0 || (s->supervise->no_getfd && diag < 0)) {
		if (l >= 0)
			close(l);
		return err_set(err, ERR_UNAVAILABLE, e, "take the supervisor's listener");
	}
	/* the namespaces are built and the command not yet forked: their mounts */
	struct supervise_config c = *s->supervise;
	c.diag_fd = diag;
	struct mountns_mounts mm = {0};
	int r = layers_read_mounts(s->backend, pid, &mm);
	if (r < 0) {
		close(l);
		if (diag >= 0)
			close(diag);
		return err_set(err, ERR_UNAVAILABLE, -r, "read the namespace's mounts");
	}
	c.write_mnt = mm.write;
	c.nwrite_mnt = mm.nwrite;
	c.unix_mnt = mm.unix_;
	c.nunix_mnt = mm.nunix;
	c.all_mnt = mm.all;
	c.nall_mnt = mm.nall;
	/*
	 * stepbox holds the listener: the command may start while the
	 * supervisor's thread does. Until the thread serves, a supervised call
	 * waits; if it cannot start, the tree is killed before any is answered.
	 */
	if (write(ack, "x", 1) != 1)
		r = err_set(err, ERR_UNAVAILABLE, EPIPE, "start the supervisor");
	else
		r = supervise_start(sup, &c, l, err);
	mountns_mounts_release(&mm);
	return r;
}

/* A step of the child's that failed, said in err: -errno (-EINVAL for none). */
static int child_failed(struct child_report *rep, struct launch_result *res,
			struct stepbox_err *err)
{
	const char *what = rep->step >= 0 && rep->step < STEP_LISTENER ? step_names[rep->step]
								       : "set up the child";
	rep->detail[sizeof(rep->detail) - 1] = rep->hint[sizeof(rep->hint) - 1] = '\0';
	res->ns_refused = rep->step == STEP_LAYERS && rep->refused;
	if (rep->step == STEP_LAYERS)
		err_set(err, ERR_UNAVAILABLE, rep->errnum, "namespaces: %.250s", rep->detail);
	else if (rep->step == STEP_BACKEND)
		err_set(err, ERR_UNAVAILABLE, rep->errnum, "%.250s", rep->detail);
	else
		err_set(err, ERR_UNAVAILABLE, rep->errnum, "cannot %s", what);
	if (rep->hint[0])
		err_hint(err, "%s", rep->hint);
	if (rep->step == STEP_LAYERS)
		layers_failure_hint(rep->errnum, rep->detail, err);
	return -(rep->errnum ? rep->errnum : EINVAL);
}

/*
 * Until the command is exec'd: write the maps, attach the tracer, serve the
 * listener. 0 once the command runs (or its exec failed: res says so);
 * -errno with err when the sandbox could not be applied.
 */
static int start_child(const struct launch_spec *s, pid_t pid, struct pipes *p, const char *file,
		       bool join, struct supervisor **sup, struct launch_result *res,
		       struct stepbox_err *err)
{
	int r = 0;
	if (p->sync[1] >= 0) {
		r = layers_child_born(s->backend, pid, err);
		if (r == 0 && s->explain && (r = tracer_seize(pid)) < 0) {
			err_set(err, ERR_UNAVAILABLE, -r, "--explain: cannot trace the command");
			err_hint(err,
				 "a ptrace restriction (Yama ptrace_scope 3, a container) forbids "
				 "it; run without --explain");
		}
		if (r == 0 && write(p->sync[1], "x", 1) != 1)
			r = err_set(err, ERR_UNAVAILABLE, EPIPE, "start the child");
		close_fd(&p->sync[1]);
		if (r < 0)
			return r;
	}
	/*
	 * Into the step's cgroup while the child sets itself up (the new root,
	 * the filters): it forks the command only after the supervisor's ack,
	 * sent below once the move is done, so the move's RCU grace period is
	 * waited out beside that work instead of before it.
	 */
	if (join && (r = limit_join(s->limits, pid)) < 0)
		return err_set(err, ERR_UNAVAILABLE, -r, "move the step into its cgroup");
	if (s->limits)
		limit_sweep(s->limits); /* meanwhile, off the start's path */
	struct child_report rep;
	ssize_t n;
	while ((n = await_exec(p->report[0], &rep, s->explain)) == (ssize_t)sizeof(rep) &&
	       (rep.step == STEP_PID || (rep.step == STEP_LISTENER && p->ack[1] >= 0))) {
		if (rep.step == STEP_PID) {
			res->domain_creator = rep.errnum;
			continue;
		}
		r = take_listener(s, pid, rep.errnum, p->ack[1], sup, err);
		close_fd(&p->ack[1]);
		if (r < 0)
			return r;
	}
	if (n != (ssize_t)sizeof(rep))
		return 0; /* EOF: exec'd */
	if (rep.step == STEP_EXEC) {
		command_exec_failure(may_exec, s->grants, file, rep.errnum, &res->not_run);
		res->exit_code = err_exit_code(&res->not_run);
		return 0;
	}
	return child_failed(&rep, res, err);
}

/* clone3's arguments (linux/sched.h, whose names clash with glibc's <sched.h>) */
struct clone3_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
		set_tid_size, cgroup;
};
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/*
 * The init, in its new namespaces if any (with --backend none, the command's
 * process). On cgroup2 it is born in the step's cgroup (born_in; Linux 5.7):
 * no move into it later, whose RCU grace period costs about half a
 * millisecond. Where clone3 cannot (cgroup v1, an older kernel, a refusal),
 * a plain clone or fork, and the child or stepbox moves it (start_child).
 * Like the clone into namespaces, clone3 skips libc's fork handling: the
 * child allocates only with no other thread of stepbox's able to hold
 * malloc's lock (the output pump allocates nothing; the supervisor starts
 * after it).
 */
static pid_t clone_init(const struct launch_spec *s, bool *born_in)
{
	int cg = s->limits ? limit_cgroup_fd(s->limits) : -1;
	if (cg >= 0) {
		struct clone3_args a = {
			.flags = (uint64_t)layers_clone_flags(s->backend) | CLONE_INTO_CGROUP,
			.exit_signal = SIGCHLD,
			.cgroup = (uint64_t)cg,
		};
		pid_t pid = (pid_t)syscall(SYS_clone3, &a, sizeof(a));
		if (pid >= 0) {
			*born_in = true;
			return pid;
		}
	}
	if (!s->backend->layers.ns)
		return fork();
	return (pid_t)syscall(SYS_clone, SIGCHLD | layers_clone_flags(s->backend), NULL, NULL, NULL,
			      NULL);
}

/* orphaned descendants come back to us, so the whole tree can be killed */
static int become_subreaper(struct stepbox_err *err)
{
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == 0)
		return 0;
	int r = err_set(err, ERR_UNAVAILABLE, errno, "become the tree's subreaper");
	if (harden_gvisor())
		err_hint(err, "gVisor (runsc) does not implement PR_SET_CHILD_SUBREAPER, "
			      "without which the step's whole tree cannot be killed");
	return r;
}

static int run_tree(const struct launch_spec *s, struct launch_result *res, struct stepbox_err *err)
{
	memset(res, 0, sizeof(*res));
	res->status = -1;
	res->tasks_seen = -1;
	char *file = NULL;
	int r = command_find(s->argv[0], s->envp, s->workdir, &file, &res->not_run);
	if (r < 0 && res->not_run.kind != ERR_UNAVAILABLE) {
		res->exit_code = err_exit_code(&res->not_run);
		return 0;
	}
	if (r < 0) {
		*err = res->not_run;
		return r;
	}
	struct pipes p;
	if ((r = pipes_open(&p, s, err)) < 0) {
		free(file);
		return r;
	}
	if ((r = become_subreaper(err)) < 0) {
		pipes_close(&p);
		free(file);
		return r;
	}
	/* signals wait in the mask until the loop takes them: no handler races */
	sigset_t set, oldmask;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&set, forwarded[i]);
	sigprocmask(SIG_BLOCK, &set, &oldmask);
	pid_t parent = getpid();
	double start = clock_now_s();
	bool born_in = false;
	/* an init born outside the step's cgroup is moved there by stepbox (start_child),
	 * or on cgroup v1 moves itself */
	bool may_move = s->limits && p.ack[1] >= 0 && !limit_joins_itself(s->limits);
	pid_t pid = clone_init(s, &born_in);
	if (pid == 0)
		child_main(s, file, &oldmask, &p, parent, born_in || may_move);
	struct supervisor *sup = NULL;
	if (pid < 0) {
		int e = errno;
		res->ns_refused = layers_clone_failed(s->backend, e, err);
		r = -e;
	} else {
		close_fd(&p.report[1]);
		close_fd(&p.sync[0]);
		close_fd(&p.status[1]);
		close_fd(&p.ack[0]);
		r = start_child(s, pid, &p, file, may_move && !born_in, &sup, res, err);
		if (r < 0 || res->exit_code) {
			launch_kill_tree(pid, s->spare);
		} else {
			res->started = true;
			res->child = pid;
			if (!res->domain_creator)
				res->domain_creator = pid; /* with the namespaces, the init */
			r = launch_wait(s, pid, &set, p.status[0], res);
			res->duration_s = clock_now_s() - start;
		}
	}
	/* the tree is gone: nothing is left to supervise */
	supervise_stop(sup, s->denials);
	pipes_close(&p);
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	free(file);
	return r;
}

int launch_run(const struct launch_spec *s, struct launch_result *res, struct stepbox_err *err)
{
	int r = run_tree(s, res, err);
	for (int i = 0; i < 2; i++)
		if (s->output[i] >= 0)
			close(s->output[i]);
	return r;
}
