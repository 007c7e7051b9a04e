#include "launch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "landlock.h"
#include "mountns.h"

/* The child's steps, reported back through the exec pipe when one fails. */
enum child_step {
	STEP_SETSID,
	STEP_PDEATHSIG,
	STEP_CHDIR,
	STEP_FDS,
	STEP_CAPS,
	STEP_NNP,
	STEP_LANDLOCK,
	STEP_SECCOMP,
	STEP_SIGMASK,
	STEP_MOUNTNS,
	STEP_FORK,
	STEP_EXEC,
};

static const char *const step_names[] = {
	"start a new session", "set the parent-death signal", "enter the workdir",
	"close inherited file descriptors", "drop capabilities", "set no_new_privs",
	"enforce the Landlock ruleset", "load the seccomp filter", "restore the signal mask",
	"build the mount namespace", "start the command inside the namespaces",
	"execute the command",
};

struct child_report {
	int step;
	int errnum;
	char detail[256]; /* STEP_MOUNTNS: which step, on which grant */
};

/* Signals stepbox passes on to the command's process group. */
static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH,
				SIGCONT};

static void child_fail(int fd, enum child_step step, int errnum)
{
	struct child_report rep = {step, errnum, ""};
	ssize_t w = write(fd, &rep, sizeof(rep));
	(void)w;
	_exit(step == STEP_EXEC ? (errnum == ENOENT ? 127 : 126) : 125);
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
 *  5. Landlock
 *  6. seccomp last: it refuses calls the steps above may need
 *  7. the caller's signal mask back, then exec
 */
static void child_exec(const struct launch_spec *s, const char *file, const sigset_t *oldmask,
		       int fd)
{
	int r;
	if (chdir(s->workdir) < 0)
		child_fail(fd, STEP_CHDIR, errno);
	if ((r = harden_cloexec_fds()) < 0)
		child_fail(fd, STEP_FDS, -r);
	if ((r = harden_drop_caps()) < 0)
		child_fail(fd, STEP_CAPS, -r);
	if ((r = harden_no_new_privs()) < 0)
		child_fail(fd, STEP_NNP, -r);
	if (s->ruleset_fd >= 0 && (r = landlock_enforce(s->ruleset_fd, s->restrict_flags)) < 0)
		child_fail(fd, STEP_LANDLOCK, -r);
	if ((r = harden_seccomp(s->harden)) < 0)
		child_fail(fd, STEP_SECCOMP, -r);
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
static void child_start(pid_t parent, int fd)
{
	if (setsid() < 0)
		child_fail(fd, STEP_SETSID, errno);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		child_fail(fd, STEP_PDEATHSIG, errno);
	if (getppid() != parent)
		_exit(125);
}

/*
 * The mountns child is PID 1 of its namespace: once the maps are written
 * (sync_fd), it builds the new root, forks the command and stays as a minimal
 * init that reaps orphans. Its exit kills every process in the namespace, so
 * the command's tree dies with it, and with stepbox (parent-death signal).
 * The command's raw wait status goes back over status_fd.
 */
static void mountns_child(const struct launch_spec *s, const char *file, const sigset_t *oldmask,
			  int fd, int sync_fd, int status_fd)
{
	char c;
	if (read(sync_fd, &c, 1) != 1)
		_exit(125); /* the parent gave up */
	close(sync_fd);
	child_start(0, fd);
	const char *what = NULL, *path = NULL;
	int r = mountns_setup_root(s->mountns, &what, &path);
	if (r < 0) {
		struct child_report rep = {STEP_MOUNTNS, -r, ""};
		snprintf(rep.detail, sizeof(rep.detail), "cannot %s%s%s%s", what, path ? " '" : "",
			 path ? path : "", path ? "'" : "");
		ssize_t w = write(fd, &rep, sizeof(rep));
		(void)w;
		_exit(125);
	}
	pid_t cmd = fork();
	if (cmd < 0)
		child_fail(fd, STEP_FORK, errno);
	if (cmd == 0) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
			child_fail(fd, STEP_PDEATHSIG, errno);
		close(status_fd);
		child_exec(s, file, oldmask, fd);
	}
	close(fd); /* the parent's read ends when the command has exec'd */
	for (;;) {
		int st;
		pid_t w = waitpid(-1, &st, 0);
		if (w == cmd) {
			ssize_t n = write(status_fd, &st, sizeof(st));
			_exit(n == (ssize_t)sizeof(st) ? 0 : 125);
		}
		if (w < 0 && errno != EINTR)
			_exit(125);
	}
}

int launch_resolve(const char *argv0, const char *path_env, const char *workdir, char **out)
{
	*out = NULL;
	if (!*argv0)
		return -ENOENT;
	if (strchr(argv0, '/')) {
		*out = argv0[0] == '/' ? strdup(argv0) : strv_fmt("%s/%s", workdir, argv0);
		return *out ? 0 : -ENOMEM;
	}
	/* execvp's default when PATH is unset */
	const char *p = path_env ? path_env : "/bin:/usr/bin";
	char *denied = NULL;
	while (p) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		char dir[PATH_MAX];
		if (len == 0)
			snprintf(dir, sizeof(dir), "%s", workdir);
		else if (p[0] != '/')
			snprintf(dir, sizeof(dir), "%s/%.*s", workdir, (int)len, p);
		else
			snprintf(dir, sizeof(dir), "%.*s", (int)len, p);
		p = colon ? colon + 1 : NULL;
		char cand[PATH_MAX];
		if (snprintf(cand, sizeof(cand), "%s/%s", dir, argv0) >= (int)sizeof(cand))
			continue;
		struct stat st;
		if (stat(cand, &st) < 0 || S_ISDIR(st.st_mode))
			continue;
		if (access(cand, X_OK) == 0) {
			free(denied);
			*out = strdup(cand);
			return *out ? 0 : -ENOMEM;
		}
		if (!denied)
			denied = strdup(cand);
	}
	*out = denied;
	return denied ? -EACCES : -ENOENT;
}

/* The interpreter named by a "#!" line, or NULL. */
static char *shebang(const char *file)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	char buf[256];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 3 || buf[0] != '#' || buf[1] != '!')
		return NULL;
	buf[n] = '\0';
	char *p = buf + 2;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t len = strcspn(p, " \t\n");
	return len ? strndup(p, len) : NULL;
}

/*
 * Incident 1: PATH found the binary, the kernel refused it (126), and nothing
 * said why. Say which file, that the sandbox refused it, and how to grant it.
 */
static int explain_exec_failure(const struct launch_spec *s, const char *file, int errnum)
{
	char *canon = realpath(file, NULL);
	const char *shown = canon ? canon : file;
	/* Landlock answers EACCES; under mountns an ungranted file is not there */
	if ((errnum == EACCES || errnum == ENOENT) && canon &&
	    !grants_covers(s->grants, canon, GRANT_EXEC)) {
		char *dir = strdup(canon);
		char *slash = dir ? strrchr(dir, '/') : NULL;
		if (slash && slash != dir)
			*slash = '\0';
		fprintf(stderr,
			"stepbox: cannot execute '%s': the sandbox refused it: it lies outside "
			"every execute grant\n"
			"hint: grant its folder with --read %s (or a read_paths entry), or add it "
			"to SANDBOX_EXTRA_SYSTEM_PATHS\n",
			shown, dir ? dir : shown);
		free(dir);
		free(canon);
		return 126;
	}
	char *interp = canon ? shebang(canon) : NULL;
	char *icanon = interp ? realpath(interp, NULL) : NULL;
	if (interp && (errnum == EACCES || errnum == ENOENT)) {
		if (!icanon)
			fprintf(stderr,
				"stepbox: cannot execute '%s': its interpreter '%s' does not "
				"exist\n",
				shown, interp);
		else if (!grants_covers(s->grants, icanon, GRANT_EXEC)) {
			fprintf(stderr,
				"stepbox: cannot execute '%s': the sandbox refused its interpreter "
				"'%s': it lies outside every execute grant\n"
				"hint: grant it with --read or SANDBOX_EXTRA_SYSTEM_PATHS\n",
				shown, icanon);
			errnum = EACCES; /* a denial, whatever errno the backend gave */
		}
		else
			fprintf(stderr, "stepbox: cannot execute '%s': %s\n", shown,
				strerror(errnum));
	} else {
		fprintf(stderr, "stepbox: cannot execute '%s': %s\n", shown, strerror(errnum));
	}
	free(interp);
	free(icanon);
	free(canon);
	return errnum == ENOENT ? 127 : 126;
}

static void close_pair(int p[2])
{
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0)
			close(p[i]);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Kill what is left of the tree: the command's process group, then every
 * child of ours. stepbox is a child subreaper, so the orphans of each killed
 * process come back to it as children and die on the next round; this also
 * reaches descendants that left the process group with setsid.
 */
static void kill_tree(pid_t pgid)
{
	for (int round = 0; round < 10000; round++) {
		kill(-pgid, SIGKILL);
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
		FILE *f = fopen(path, "re");
		if (f) {
			int pid;
			while (fscanf(f, "%d", &pid) == 1)
				kill(pid, SIGKILL);
			fclose(f);
		}
		if (waitpid(-1, NULL, __WALL) < 0 && errno == ECHILD)
			return;
	}
}

/*
 * Reap what has changed: ptrace stops go to the tracer, the command's exit is
 * recorded. Returns true once the command (pid) has ended.
 */
static bool reap(pid_t pid, int status_fd, struct explain *x, int *status)
{
	int st;
	pid_t w;
	bool done = false;
	while ((w = waitpid(-1, &st, WNOHANG | __WALL)) > 0) {
		if (x && explain_stop(x, w, st))
			continue;
		if (w == pid) {
			*status = st;
			done = true;
			/* mountns: the command's own status, from its init */
			int cst;
			if (status_fd >= 0 && read(status_fd, &cst, sizeof(cst)) == sizeof(cst))
				*status = cst;
		}
	}
	return done;
}

static int wait_loop(const struct launch_spec *s, pid_t pid, const sigset_t *set,
		     int status_fd, struct launch_result *res)
{
	double deadline = s->timeout_s ? now_s() + (double)s->timeout_s : 0;
	int status = 0, wait_errno = 0;
	/* reap before waiting: a SIGCHLD may have come and gone already */
	while (!reap(pid, status_fd, s->explain, &status)) {
		siginfo_t si;
		int sig;
		if (deadline) {
			double left = deadline - now_s();
			if (left <= 0) {
				res->timed_out = true;
				break;
			}
			struct timespec ts = {(time_t)left,
					      (long)((left - (double)(time_t)left) * 1e9)};
			sig = sigtimedwait(set, &si, &ts);
		} else {
			sig = sigwaitinfo(set, &si);
		}
		if (sig < 0 && errno == EINTR)
			continue;
		if (sig < 0) {
			if (errno == EAGAIN)
				res->timed_out = true;
			else
				wait_errno = errno;
			break;
		}
		if (sig != SIGCHLD)
			kill(-pid, sig);
	}
	kill_tree(pid);
	if (wait_errno) { /* never report a status we did not see */
		fprintf(stderr, "stepbox: lost track of the command: %s; killed its process tree\n",
			strerror(wait_errno));
		res->exit_code = 125;
	} else if (res->timed_out) {
		fprintf(stderr, "stepbox: timed out after %ld s: killed the command's process tree\n",
			s->timeout_s);
		res->exit_code = 124;
	} else if (WIFSIGNALED(status)) {
		res->signal = WTERMSIG(status);
		res->exit_code = 128 + res->signal;
	} else {
		res->status = WEXITSTATUS(status);
		res->exit_code = res->status;
	}
	return 0;
}

/*
 * Read the child's report from the exec pipe (EOF: the command was exec'd).
 * With the tracer, the command's own execve stops in it, so ptrace stops are
 * served meanwhile; an exit is only peeked at (WNOWAIT), for wait_loop.
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
				while (waitid(P_ALL, 0, &si, WEXITED | WSTOPPED | WNOHANG | WNOWAIT | __WALL) == 0 &&
				       si.si_pid && si.si_code == CLD_TRAPPED) {
					int st;
					pid_t w = waitpid(si.si_pid, &st, WNOHANG | __WALL);
					if (w <= 0 || !explain_stop(x, w, st))
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

int launch_run(const struct launch_spec *s, struct launch_result *res, struct stepbox_err *err)
{
	memset(res, 0, sizeof(*res));
	res->status = -1;
	char *path_env = NULL;
	for (char *const *e = s->envp; *e; e++)
		if (strncmp(*e, "PATH=", 5) == 0)
			path_env = *e + 5;
	char *file = NULL;
	int r = launch_resolve(s->argv[0], path_env, s->workdir, &file);
	if (r == -ENOENT) {
		fprintf(stderr, "stepbox: command not found: '%s'\n", s->argv[0]);
		res->exit_code = 127;
		return 0;
	}
	if (r == -EACCES) {
		fprintf(stderr, "stepbox: cannot execute '%s': %s\n", file, strerror(EACCES));
		free(file);
		res->exit_code = 126;
		return 0;
	}
	if (r < 0)
		return err_set(err, ERR_UNAVAILABLE, -r, "resolve '%s'", s->argv[0]);

	/* signals wait in the mask until the loop takes them: no handler races */
	sigset_t set, oldmask;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&set, forwarded[i]);
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		free(file);
		return err_set(err, ERR_UNAVAILABLE, errno, "create exec pipe");
	}
	/* orphaned descendants come back to us, so the whole tree can be killed */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	int sync[2] = {-1, -1}, status[2] = {-1, -1};
	/* the child waits on sync until its maps are written and it is traced */
	if ((s->mountns || s->explain) && pipe2(sync, O_CLOEXEC) < 0) {
		int e = errno;
		close_pair(pfd);
		free(file);
		return err_set(err, ERR_UNAVAILABLE, e, "create the start pipe");
	}
	if (s->mountns && pipe2(status, O_CLOEXEC) < 0) {
		int e = errno;
		close_pair(pfd);
		close_pair(sync);
		free(file);
		return err_set(err, ERR_UNAVAILABLE, e, "create namespace pipes");
	}
	sigprocmask(SIG_BLOCK, &set, &oldmask);
	pid_t parent = getpid();
	double start = now_s();
	pid_t pid = s->mountns ? (pid_t)syscall(SYS_clone, SIGCHLD | s->mountns->clone_flags, NULL,
						 NULL, NULL, NULL)
			       : fork();
	if (pid < 0) {
		int e = errno;
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		close_pair(pfd);
		close_pair(sync);
		close_pair(status);
		free(file);
		if (s->mountns)
			return mountns_unavailable(s->mountns, e, err);
		return err_set(err, ERR_UNAVAILABLE, e, "fork");
	}
	if (pid == 0) {
		close(pfd[0]);
		if (!s->mountns) {
			char c;
			if (sync[0] >= 0 && read(sync[0], &c, 1) != 1)
				_exit(125); /* the parent gave up */
			child_start(parent, pfd[1]);
			child_exec(s, file, &oldmask, pfd[1]);
		}
		close(sync[1]);
		close(status[0]);
		mountns_child(s, file, &oldmask, pfd[1], sync[0], status[1]);
	}
	close(pfd[1]);
	if (sync[1] >= 0) {
		close(sync[0]);
		if (status[1] >= 0)
			close(status[1]);
		r = s->mountns ? mountns_write_maps(s->mountns, pid, err) : 0;
		if (r == 0 && s->explain && (r = explain_seize(pid)) < 0) {
			err_set(err, ERR_UNAVAILABLE, -r, "--explain: cannot trace the command");
			err_hint(err, "a ptrace restriction (Yama ptrace_scope 3, a container) forbids "
				      "it; run without --explain");
		}
		if (r < 0 || write(sync[1], "x", 1) != 1) {
			close(sync[1]);
			close(pfd[0]);
			close(status[0]);
			kill_tree(pid);
			sigprocmask(SIG_SETMASK, &oldmask, NULL);
			free(file);
			return r < 0 ? r : err_set(err, ERR_UNAVAILABLE, EPIPE, "start the namespaces");
		}
		close(sync[1]);
	}
	struct child_report rep;
	ssize_t n = await_exec(pfd[0], &rep, s->explain);
	close(pfd[0]);
	if (n == (ssize_t)sizeof(rep)) {
		kill_tree(pid);
		close(status[0]);
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		if (rep.step == STEP_EXEC) {
			res->exit_code = explain_exec_failure(s, file, rep.errnum);
			free(file);
			return 0;
		}
		free(file);
		const char *what = rep.step >= 0 && rep.step <= STEP_EXEC ? step_names[rep.step]
									   : "set up the child";
		if (rep.step == STEP_MOUNTNS)
			err_set(err, ERR_UNAVAILABLE, rep.errnum, "mountns: %.250s", rep.detail);
		else
			err_set(err, ERR_UNAVAILABLE, rep.errnum, "cannot %s", what);
		if (rep.step == STEP_LANDLOCK)
			err_hint(err, "try a lower STEPBOX_LANDLOCK_ABI, or check `stepbox check`");
		return -rep.errnum;
	}
	free(file);
	res->started = true;
	res->child = pid;
	r = wait_loop(s, pid, &set, status[0], res);
	if (status[0] >= 0)
		close(status[0]);
	res->duration_s = now_s() - start;
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	return r;
}
