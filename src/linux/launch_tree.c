/*
 * launch's wait, in stepbox: the command's process tree waited for, with
 * the signals passed on, the timeout and the grace enforced and the tasks
 * bounded by an rlimit counted, and what is left of the tree killed.
 */
#include "clock.h"
#include "launch_int.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "tracer.h"

int launch_kill_children(pid_t spare)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char path[300];
		snprintf(path, sizeof(path), "/proc/self/task/%.256s/children", de->d_name);
		FILE *f = fopen(path, "re");
		int pid;
		while (f && fscanf(f, "%d", &pid) == 1) {
			if (pid == spare)
				continue;
			kill(pid, SIGKILL);
			n++;
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

/*
 * Kill what is left of the tree, however deep and however fast it forks.
 * stepbox is a child subreaper, so the orphans of each killed process come
 * back to it as children: each round kills every child there is and reaps
 * one, until none is left. A child's pid cannot be reused before stepbox
 * reaps it, so nothing outside the tree is ever signalled (a process group
 * id could be, once its leader is reaped: only live_pgid, whose leader is
 * still unreaped, is signalled as a group). Under a PID namespace the init
 * is the only child: its death takes the namespace with it.
 */
void launch_kill_tree(pid_t live_pgid, pid_t spare)
{
	if (live_pgid > 0)
		kill(-live_pgid, SIGKILL);
	for (;;) {
		if (launch_kill_children(spare) == 0 && spare > 0)
			return; /* the spare alone is left (its end is its owner's to wait for) */
		pid_t w = waitpid(-1, NULL, __WALL);
		if (w == spare)
			spare = 0; /* it ended on its own, and is reaped */
		if (w < 0 && errno != EINTR)
			return; /* ECHILD: nothing left */
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
	double look_until = 0, first = 0; /* after a ptrace stop: the next comes soon */
	while ((w = waitpid(-1, &st, WNOHANG | __WALL)) >= 0) {
		if (w == 0 && look_until && clock_now_s() < look_until)
			continue;
		if (w == 0)
			break;
		if (x && tracer_stop(x, w, st)) {
			double t = clock_now_s();
			first = first ? first : t;
			/* a step that stops without end still gets its timeout and signals */
			if (t - first > TRACER_SLICE_S)
				break;
			look_until = t + TRACER_SPIN_S;
			continue;
		}
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

/* What the wait keeps from one signal to the next. */
struct waiting {
	double deadline;            /* the timeout's end, or 0 */
	double grace_end;           /* a stop signal was passed on: the tree's last moment */
	int stop_sig;               /* that signal */
	double next_look, interval; /* the next count of the step's tasks (0: none), and after */
	long peak;                  /* the most tasks counted, or -1 */
};

/* A signal of set, waited for until wake (0: no end); -1 with errno as sigtimedwait's. */
static int wait_signal(const sigset_t *set, double wake)
{
	siginfo_t si;
	if (!wake)
		return sigwaitinfo(set, &si);
	double left = wake - clock_now_s();
	left = left > 0 ? left : 0;
	struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
	return sigtimedwait(set, &si, &ts);
}

/* Count the step's tasks if a look is due: the most it had, more seldom each time. */
static void look_at_tasks(const struct launch_spec *s, pid_t pid, struct waiting *w)
{
	if (!w->next_look || clock_now_s() < w->next_look)
		return;
	int e = errno; /* sigtimedwait's, which the walk of /proc would change */
	long n = limit_count_tasks(s->limits, pid, s->backend->layers.ns, 1);
	w->peak = n > w->peak ? n : w->peak;
	w->interval = w->interval * 1.5 < 1 ? w->interval * 1.5 : 1;
	w->next_look = clock_now_s() + w->interval;
	errno = e;
}

/* How the step ended, in res and on stderr, its tree gone. */
static void report_end(const struct launch_spec *s, int status, int wait_errno, int stop_sig,
		       struct launch_result *res)
{
	if (wait_errno) { /* never report a status we did not see */
		fprintf(stderr, "stepbox: lost track of the command: %s; killed its process tree\n",
			strerror(wait_errno));
		res->exit_code = 125;
	} else if (res->timed_out) {
		fprintf(stderr,
			"stepbox: timed out after %ld s: killed the command's process tree\n",
			s->timeout_s);
		res->exit_code = 124;
	} else if (res->graced) {
		fprintf(stderr,
			"stepbox: the command still ran %ld s after SIG%s was passed on "
			"(--grace): killed its process tree\n",
			s->grace_s, sigabbrev_np(stop_sig));
		res->signal = SIGKILL;
		res->exit_code = 128 + SIGKILL;
	} else if (WIFSIGNALED(status)) {
		res->signal = WTERMSIG(status);
		res->exit_code = 128 + res->signal;
	} else {
		res->status = WEXITSTATUS(status);
		res->exit_code = res->status;
	}
}

int launch_wait(const struct launch_spec *s, pid_t pid, const sigset_t *set, int status_fd,
		struct launch_result *res)
{
	struct waiting w = {.deadline = s->timeout_s ? clock_now_s() + (double)s->timeout_s : 0,
			    .interval = 0.02,
			    .peak = -1};
	int status = 0, wait_errno = 0;
	bool reaped;
	/*
	 * Tasks bounded by an rlimit, which the kernel does not report reached:
	 * with a timeout, the most the step had is looked for now and then
	 * (every 20 ms at first, half as often again each time, then each second: a
	 * bomb peaks in its first few hundred ms), since a fork bomb at its limit may
	 * burn down before the timeout says why it ended.
	 */
	bool pidns = s->backend->layers.ns;
	if (w.deadline && s->limits && limit_count_tasks(s->limits, pid, pidns, 0) == 0)
		w.next_look = clock_now_s() + w.interval;
	/* reap before waiting: a SIGCHLD may have come and gone already */
	while (!(reaped = reap(pid, status_fd, s->explain, &status))) {
		double until = w.deadline;
		if (w.grace_end && (!until || w.grace_end < until))
			until = w.grace_end;
		if (until && until - clock_now_s() <= 0) {
			res->timed_out = until == w.deadline;
			res->graced = !res->timed_out;
			break;
		}
		double wake = w.next_look && (!until || w.next_look < until) ? w.next_look : until;
		int sig = wait_signal(set, wake);
		look_at_tasks(s, pid, &w);
		if (sig < 0 && errno == EINTR)
			continue;
		if (sig < 0 && errno == EAGAIN)
			continue; /* the loop's head decides which deadline passed */
		if (sig < 0) {
			wait_errno = errno;
			break;
		}
		if (sig == SIGCHLD)
			continue;
		kill(-pid, sig); /* its leader is not reaped: the group is still ours */
		/* the engine wants the step gone: it gets its grace, then the tree dies */
		if ((sig == SIGTERM || sig == SIGINT || sig == SIGHUP) && !w.grace_end) {
			w.grace_end = clock_now_s() + (double)s->grace_s;
			w.stop_sig = sig;
		}
	}
	if ((res->timed_out || res->graced) && s->limits) {
		long n = limit_count_tasks(s->limits, pid, pidns, 60); /* up to 1.5 s */
		res->tasks_seen = n > w.peak ? n : w.peak;
	} else {
		res->tasks_seen = -1;
	}
	launch_kill_tree(reaped ? 0 : pid, s->spare);
	report_end(s, status, wait_errno, w.stop_sig, res);
	return 0;
}
