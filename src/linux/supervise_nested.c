/*
 * The Landlock domains the step's processes take themselves (landrun, an
 * agent confining its tools, a nested stepbox), for the calls the
 * supervisor makes on the step's behalf: the protected paths' file calls,
 * and a connect, a send or a TCP bind. Made by a thread of ours with only
 * the step's rules, such a call would reach what the caller's own sandbox
 * refuses it (the supervisor a deputy that gives a confined process more
 * than its confinement allows); let go on to the kernel after a check by
 * name, it would meet a race on the path's memory.
 *
 * A domain is copied when it is taken (its ruleset fd, through
 * pidfd_getfd, while the caller waits in landlock_restrict_self) and laid
 * on two keepers, threads of ours that hold it: one born of the dispatcher
 * for sockets (no rules but the domains), one born of the performer for
 * files (the step's rights too). A keeper is started by the keeper of the
 * domain its taker was already under, if any, so it holds that one too, as
 * the kernel stacks them. The copy is laid before the caller's domain
 * exists: rules added to the ruleset later reach the step's domain, never
 * the keeper's.
 *
 * A process's domain cannot be read. Which keepers a call is made by is
 * found by the caller's line: its process, its parent, and so on up to the
 * step's init; the first that took a domain (as its process then was: pid
 * and start time) names them. A process forked before its parent took one
 * is counted in it too (stricter, never looser). Orphans go to a reaper:
 * the init, or a process of the step's that made itself a subreaper
 * (PR_SET_CHILD_SUBREAPER, trapped), which may sit above a domain's taker.
 * A reaper's children are noted when a domain is first taken beneath it
 * (for the init: the first domain); a child it got since may be an orphan
 * from anywhere beneath, and so may a line that cannot be read to the
 * init: what would be made for it is refused (OP_NESTED), and a domain
 * such a process takes is never laid (what its line asks is refused). A
 * domain that cannot be copied, one more than NESTED_MAX, or one taken
 * with more than REAPER_MAX subreapers, leaves the run broken: every such
 * call is refused.
 */
#include "supervise.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "landlock.h"
#include "path.h"
#include "supervise_int.h"

/* Landlock stacks 16 domains; leave room for the step's and a worker's TCP rules. */
#define NESTED_MAX 12
/* the subreapers of the step's own, noted (more: a domain then breaks the run) */
#define REAPER_MAX 32

enum keeper_job { K_IDLE, K_LAY, K_START, K_RUN, K_QUIT };

/* A thread holding a line of domains, and starting threads under them. */
struct keeper {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	enum keeper_job job; /* the dispatcher's one job, until the keeper ends it */
	int ruleset;         /* K_LAY: the copy to lay on */
	void *(*fn)(void *); /* K_START: a thread to start under the domains */
	void *arg;
	pthread_t *joinable; /* K_START: where a joinable thread's id goes, or NULL */
	int (*run)(void *);  /* K_RUN: a call to make here */
	int result;          /* 0 or -errno; K_RUN: run's */
	bool fs;             /* born of the performer (the step's rights): for file calls */
	mode_t umask;        /* ... the umask its creations meet, the performer's */
};

/* A process as it is named for good: its pid and its start time. */
struct proc_id {
	pid_t pid;
	unsigned long long start;
};

/* A process's children, as they were at one moment. */
struct kids {
	struct proc_id *v;
	size_t n, cap;
};

/*
 * A process that took a domain, and the keepers holding it: one born of the
 * dispatcher for the calls on sockets (no rules but the domains), one born
 * of the performer for the calls on files (the step's rights and the
 * domains; NULL without the protected paths' live layer). Neither, where
 * the taker's line could not be placed: what its line asks is refused.
 */
struct taker {
	struct proc_id p;
	struct keeper *k, *fs;
	bool lost;
};

/* A subreaper of the step's own: its children once a domain is beneath it. */
struct reaper {
	struct proc_id p;
	struct kids kids;
	bool noted;
};

struct sup_nested {
	struct taker v[NESTED_MAX];
	size_t n;
	pid_t init;         /* the step's init (its parent is stepbox) */
	struct kids before; /* the init's children when the first domain was taken */
	struct reaper r[REAPER_MAX];
	size_t nr;
	bool reapers_lost; /* one more than REAPER_MAX was made */
};

static void *keep(void *arg)
{
	struct keeper *k = arg;
	/* the dispatcher's credentials (no capability): Landlock asks for no_new_privs */
	bool ok = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0;
	if (k->fs)
		sup_performer_adopt(k->umask);
	pthread_mutex_lock(&k->lock);
	for (;;) {
		while (k->job == K_IDLE)
			pthread_cond_wait(&k->cond, &k->lock);
		if (k->job == K_QUIT) {
			k->job = K_IDLE;
			pthread_cond_broadcast(&k->cond);
			break;
		}
		int r = -EPERM;
		if (k->job == K_LAY && ok) {
			r = landlock_enforce(k->ruleset, 0);
		} else if (k->job == K_RUN && ok) {
			r = k->run(k->arg);
		} else if (k->job == K_START && ok) {
			pthread_t t;
			pthread_attr_t attr;
			r = -pthread_attr_init(&attr);
			if (r == 0) {
				if (!k->joinable)
					pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
				r = -pthread_create(k->joinable ? k->joinable : &t, &attr, k->fn,
						    k->arg);
				pthread_attr_destroy(&attr);
			}
		}
		k->result = r;
		k->job = K_IDLE;
		pthread_cond_broadcast(&k->cond);
	}
	pthread_mutex_unlock(&k->lock);
	return NULL;
}

/* Give the keeper one job and wait for its end: its result. */
static int ask(struct keeper *k, enum keeper_job job)
{
	pthread_mutex_lock(&k->lock);
	k->job = job;
	pthread_cond_broadcast(&k->cond);
	while (k->job != K_IDLE)
		pthread_cond_wait(&k->cond, &k->lock);
	int r = k->result;
	pthread_mutex_unlock(&k->lock);
	return r;
}

static void keeper_free(struct keeper *k)
{
	ask(k, K_QUIT);
	pthread_join(k->thread, NULL);
	pthread_mutex_destroy(&k->lock);
	pthread_cond_destroy(&k->cond);
	free(k);
}

/* In the performer: a keeper born there (sup_performer_job). */
static int start_in_performer(void *arg)
{
	struct keeper *k = arg;
	k->umask = sup_performer_umask();
	return -pthread_create(&k->thread, NULL, keep, k);
}

/*
 * A keeper under parent's domains, the copy ruleset laid on it: 0 or
 * -errno. With no parent, born of the dispatcher, or for file calls (fs) of
 * the performer.
 */
static int keeper_new(struct supervisor *s, struct keeper *parent, bool fs, int ruleset,
		      struct keeper **out)
{
	struct keeper *k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	pthread_mutex_init(&k->lock, NULL);
	pthread_cond_init(&k->cond, NULL);
	k->fs = fs;
	int r;
	if (parent) {
		k->umask = parent->umask;
		parent->fn = keep;
		parent->arg = k;
		parent->joinable = &k->thread;
		r = ask(parent, K_START);
		parent->joinable = NULL;
	} else if (fs) {
		r = sup_performer_job(s, start_in_performer, k);
	} else {
		r = -pthread_create(&k->thread, NULL, keep, k);
	}
	if (r < 0) {
		pthread_mutex_destroy(&k->lock);
		pthread_cond_destroy(&k->cond);
		free(k);
		return r;
	}
	k->ruleset = ruleset;
	if ((r = ask(k, K_LAY)) < 0) {
		keeper_free(k);
		return r;
	}
	*out = k;
	return 0;
}

/* pid's parent and start time (/proc/PID/stat): 0, or -1 where it is gone. */
static int proc_stat(pid_t pid, pid_t *ppid, unsigned long long *start)
{
	char p[64], buf[1024];
	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	const char *e = strrchr(buf, ')'); /* the name may hold anything */
	int pp = 0;
	return e && sscanf(e + 1,
			   " %*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
			   "%*d %*d %llu",
			   &pp, start) == 2
		       ? (*ppid = pp, 0)
		       : -1;
}

static bool same(const struct proc_id *a, const struct proc_id *b)
{
	return a->pid == b->pid && a->start == b->start;
}

static bool kids_have(const struct kids *k, const struct proc_id *p)
{
	for (size_t i = 0; i < k->n; i++)
		if (same(&k->v[i], p))
			return true;
	return false;
}

static struct reaper *reaper_of(struct sup_nested *n, const struct proc_id *p)
{
	for (size_t i = 0; n && i < n->nr; i++)
		if (same(&n->r[i].p, p))
			return &n->r[i];
	return NULL;
}

/*
 * The taker of the innermost domain in the line of the process tgid (NULL:
 * none), or -ESRCH where the line may hold one not known: a child a reaper
 * got after a domain was taken beneath it (an orphan, maybe), a line that
 * does not reach the init, a taker lost. *init: the init, where it was
 * reached.
 */
static int line_of(struct sup_nested *n, pid_t tgid, const struct taker **t, pid_t *init)
{
	pid_t self = getpid(), pid = tgid;
	struct proc_id below = {-1, 0}; /* the line's process under pid */
	*t = NULL;
	for (int depth = 0; pid > 1 && depth < 64; depth++) {
		struct proc_id here = {pid, 0};
		pid_t ppid;
		if (proc_stat(pid, &ppid, &here.start) < 0)
			return -ESRCH;
		const struct reaper *r = depth > 0 ? reaper_of(n, &here) : NULL;
		if (r && r->noted && !kids_have(&r->kids, &below))
			return -ESRCH;
		for (size_t i = n ? n->n : 0; i-- > 0;) {
			if (same(&n->v[i].p, &here)) {
				*t = &n->v[i];
				return n->v[i].lost ? -ESRCH : 0;
			}
		}
		if (ppid == self) { /* pid is the init: below it, the command or an orphan */
			*init = pid;
			if (!n || n->n == 0 || depth == 0 || kids_have(&n->before, &below))
				return 0;
			return -ESRCH;
		}
		below = here;
		pid = ppid;
	}
	return -ESRCH;
}

/* The children of pid's threads now, into k: 0 or -errno. */
static int note_kids(pid_t pid, struct kids *k)
{
	char p[96];
	snprintf(p, sizeof(p), "/proc/%d/task", (int)pid);
	DIR *d = opendir(p);
	if (!d)
		return -errno;
	int r = 0;
	for (const struct dirent *e; r == 0 && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/proc/%d/task/%.16s/children", (int)pid, e->d_name);
		char *list = path_read_file(p, 1 << 20);
		if (!list) {
			r = errno == ENOENT ? 0
					    : -errno; /* a thread gone; no CONFIG_PROC_CHILDREN */
			continue;
		}
		char *w = list, *end;
		for (long kid; r == 0 && (kid = strtol(w, &end, 10), end != w); w = end) {
			struct proc_id c = {(pid_t)kid, 0};
			pid_t pp;
			if (proc_stat(c.pid, &pp, &c.start) < 0 || pp != pid)
				continue; /* gone since */
			r = strv_grow(&k->v, &k->cap, k->n, sizeof(*k->v), 8);
			if (r == 0)
				k->v[k->n++] = c;
		}
		free(list);
	}
	closedir(d);
	return r;
}

/*
 * A domain is being taken by the process tgid: the children of each
 * subreaper above it not noted yet (and of the init, at the first): 0 or
 * -errno.
 */
static int note_reapers(struct sup_nested *n, pid_t tgid)
{
	if (n->reapers_lost)
		return -ENOSPC;
	int r = n->n == 0 ? note_kids(n->init, &n->before) : 0;
	pid_t self = getpid(), pid = tgid, ppid;
	for (int depth = 0; r == 0 && pid > 1 && pid != self && depth < 64; depth++) {
		struct proc_id here = {pid, 0};
		if (proc_stat(pid, &ppid, &here.start) < 0)
			return -ESRCH;
		struct reaper *rp = depth > 0 ? reaper_of(n, &here) : NULL;
		if (rp && !rp->noted) {
			r = note_kids(pid, &rp->kids);
			rp->noted = true;
		}
		pid = ppid;
	}
	return r;
}

/* Whether the live taker t has p above it. */
static bool taker_below(const struct taker *t, const struct proc_id *p)
{
	pid_t self = getpid(), pid = t->p.pid, ppid;
	for (int depth = 0; pid > 1 && pid != self && depth < 64; depth++) {
		struct proc_id here = {pid, 0};
		if (proc_stat(pid, &ppid, &here.start) < 0 || (depth == 0 && !same(&here, &t->p)))
			return false;
		if (depth > 0 && same(&here, p))
			return true;
		pid = ppid;
	}
	return false;
}

/* The process tgid made itself a subreaper: noted, its children too where a domain is beneath. */
static int note_subreaper(struct sup_nested *n, pid_t tgid)
{
	struct proc_id me = {tgid, 0};
	pid_t pp;
	if (tgid <= 0 || proc_stat(tgid, &pp, &me.start) < 0)
		return -ESRCH;
	if (reaper_of(n, &me))
		return 0;
	for (size_t i = n->nr; n->nr == REAPER_MAX && i-- > 0;) {
		struct proc_id now = {n->r[i].p.pid, 0};
		if (proc_stat(now.pid, &pp, &now.start) == 0 && same(&now, &n->r[i].p))
			continue; /* alive: kept */
		free(n->r[i].kids.v);
		n->r[i] = n->r[--n->nr];
	}
	if (n->nr == REAPER_MAX) {
		n->reapers_lost = true;
		return n->n ? -ENOSPC : 0;
	}
	struct reaper *r = &n->r[n->nr++];
	*r = (struct reaper){.p = me};
	for (size_t i = 0; i < n->n && !r->noted; i++) {
		if (taker_below(&n->v[i], &me)) {
			r->noted = true;
			return note_kids(tgid, &r->kids);
		}
	}
	return 0;
}

void sup_nested_subreaper(struct call *c)
{
	struct supervisor *s = c->s;
	const uint64_t *a = (const uint64_t *)c->req->data.args;
	if (!s->nested)
		s->nested = calloc(1, sizeof(*s->nested));
	/* clearing it keeps it noted: its children since may still be orphans */
	if (a[1] != 0 && !s->nested_broken &&
	    (!s->nested || note_subreaper(s->nested, sup_step_tgid(c)) < 0))
		s->nested_broken = true;
	sup_go_on(c);
}

void sup_nested_taken(struct call *c)
{
	struct supervisor *s = c->s;
	const uint64_t *a = (const uint64_t *)c->req->data.args;
	s->landlock_nested = true;
	/* -1 with flags alone makes no domain (ABI 7: the log flags for what runs after) */
	if (s->nested_broken || (int)a[0] == -1)
		return;
	int fd = s->no_getfd ? -EPERM : stepview_fd(&c->v, a[0]);
	if (fd == -EBADF)
		return; /* no such fd: the kernel refuses the call too, and no domain is made */
	struct sup_nested *n = s->nested ? s->nested : calloc(1, sizeof(*n));
	struct proc_id me = {sup_step_tgid(c), 0};
	struct keeper *k = NULL, *fs = NULL;
	pid_t pp;
	int r = fd < 0 ? fd : !n ? -ENOMEM : n->n == NESTED_MAX ? -E2BIG : 0;
	if (r == 0 && (me.pid <= 0 || proc_stat(me.pid, &pp, &me.start) < 0))
		r = -ESRCH;
	const struct taker *outer = NULL;
	bool lost = false;
	if (r == 0 && (r = line_of(n, me.pid, &outer, &n->init)) == -ESRCH && n->n > 0) {
		lost = true; /* its line placed nowhere: never laid, what it asks refused */
		r = 0;
	}
	if (r == 0)
		r = note_reapers(n, me.pid);
	if (r == 0 && !lost)
		r = keeper_new(s, outer ? outer->k : NULL, false, fd, &k);
	if (r == 0 && !lost && s->perf &&
	    (r = keeper_new(s, outer ? outer->fs : NULL, true, fd, &fs)) < 0)
		keeper_free(k);
	if (fd >= 0)
		close(fd);
	s->nested = n;
	if (r == 0) {
		n->v[n->n++] = (struct taker){me, k, fs, lost};
	} else if (r != -EBADFD) {
		/* not a ruleset (EBADFD) the kernel refuses as we did, and makes no domain */
		s->nested_broken = true;
	}
}

/* The taker whose line the caller is in (*t, NULL: none): 0, or -ESRCH. */
static int caller_taker(struct call *c, const struct taker **t)
{
	*t = NULL;
	if (c->s->nested_broken)
		return -ESRCH;
	struct sup_nested *n = c->s->nested;
	pid_t init;
	if (!n || n->n == 0)
		return 0;
	return line_of(n, sup_step_tgid(c), t, &init);
}

int sup_nested_keeper(struct call *c, struct keeper **k)
{
	const struct taker *t;
	int r = caller_taker(c, &t);
	*k = t ? t->k : NULL;
	return r;
}

int sup_nested_fs_keeper(struct call *c, struct keeper **k)
{
	const struct taker *t;
	int r = caller_taker(c, &t);
	*k = t ? t->fs : NULL;
	return r < 0 || !t || t->fs ? r : -ESRCH;
}

int sup_nested_run(struct keeper *k, int (*fn)(void *), void *arg)
{
	k->run = fn;
	k->arg = arg;
	return ask(k, K_RUN);
}

void sup_nested_refuse(struct call *c, const char *what)
{
	sup_note_denial(c, OP_NESTED, what, -1);
	sup_respond(c, 0, EACCES);
}

void sup_note_port(struct call *c, int nr, int port, bool nested)
{
	const struct supervisor *s = c->s;
	const struct policy_ports *listed = &s->ports[nr == SYS_bind];
	bool ours = !s->port_list;
	for (unsigned i = 0; i < listed->n && !ours; i++)
		ours = listed->v[i] == port;
	if (nested && ours) {
		char shown[48];
		snprintf(shown, sizeof(shown), "a %s port %d",
			 nr == SYS_bind ? "bind of TCP" : "connect to TCP", port);
		sup_note_denial(c, OP_NESTED, shown, -1);
	} else {
		sup_note_denial(c, nr == SYS_connect ? OP_CONNECT : OP_BIND, NULL, port);
	}
}

int sup_nested_start(struct keeper *k, void *(*fn)(void *), void *arg)
{
	k->fn = fn;
	k->arg = arg;
	return ask(k, K_START);
}

void sup_nested_stop(struct supervisor *s)
{
	struct sup_nested *n = s->nested;
	for (size_t i = n ? n->n : 0; i-- > 0;) {
		if (n->v[i].k) /* the inner first: each was started by its outer's */
			keeper_free(n->v[i].k);
		if (n->v[i].fs)
			keeper_free(n->v[i].fs);
	}
	for (size_t i = 0; n && i < n->nr; i++)
		free(n->r[i].kids.v);
	if (n)
		free(n->before.v);
	free(n);
	s->nested = NULL;
}
