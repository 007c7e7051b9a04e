/*
 * The performer: the one thread that makes the protected paths' live layer's
 * calls (supervise_guard.c) on the step's behalf, holding the step's rights
 * and no more, and the calls it makes (one pinned folder, one name).
 */
#include "supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "landlock.h"
#include "path.h"
#include "supervise_int.h"

/* ---- the performer: one thread under the step's Landlock ruleset ------- */

struct sup_performer {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int ruleset;
	bool ready, broken;
	int (*fn)(void *);
	void *arg;
	int result;
	int ask[2], answer[2];     /* the dispatcher's job, and its end */
	struct fifo_wait *waiting; /* FIFOs opened to write, waiting for a reader */
	bool inline_;              /* no thread: the dispatcher performs (the namespaces) */
	mode_t umask;              /* ... and meets stepbox's umask */
};

/* A FIFO opened to write with no reader yet: the open waits in a thread of its own. */
struct fifo_wait {
	struct sup_performer *p;
	int listener, obj, flags;
	uint64_t id;
	struct fifo_wait *next;
};

/*
 * The umask the performer's creations meet: 0 where it has a umask of its
 * own, else stepbox's (a container's seccomp profile may refuse unshare),
 * which each creation then takes back off the permission bits it made.
 */
static _Thread_local mode_t shared_umask;

static mode_t process_umask(void)
{
	char *status = path_read_file("/proc/thread-self/status", 1 << 16);
	const char *l = status ? strstr(status, "\nUmask:") : NULL;
	/* unread: every creation's mode is set after */
	mode_t u = l ? (mode_t)strtoul(l + 7, NULL, 8) & 0777 : 0777;
	free(status);
	return u;
}

static void *perform_loop(void *arg)
{
	struct sup_performer *p = arg;
	/*
	 * The step's credentials and rights: no capability, a umask of its own
	 * where it can have one (the step's is applied to each mode), the
	 * step's Landlock domain.
	 */
	bool ok = sup_drop_caps() == 0;
	if (unshare(CLONE_FS) == 0)
		umask(0);
	else
		shared_umask = process_umask();
	ok = ok && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
	     landlock_enforce(p->ruleset, 0) == 0;
	close(p->ruleset);
	pthread_mutex_lock(&p->lock);
	p->broken = !ok;
	p->ready = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	/*
	 * Asked and answered through pipes, whose wakeups are synchronous: the
	 * performer runs on the CPU of the dispatcher, which waits for it.
	 */
	char job;
	while (!p->broken && read(p->ask[0], &job, 1) == 1 && job == 'j') {
		pthread_mutex_lock(&p->lock); /* the FIFO waiters' list */
		p->result = p->fn(p->arg);
		pthread_mutex_unlock(&p->lock);
		if (write(p->answer[1], "a", 1) != 1)
			break;
	}
	return NULL;
}

int sup_performer_start(struct supervisor *s, int ruleset)
{
	struct sup_performer *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	if (ruleset < 0) {
		/*
		 * mountns: every call is made through a folder pinned in the
		 * step's mounts, which bound it as they bound the step (no
		 * Landlock holds either); the dispatcher (no capability) makes it,
		 * with no thread between.
		 */
		p->inline_ = p->ready = true;
		p->umask = process_umask();
		s->perf = p;
		return 0;
	}
	p->ask[0] = p->ask[1] = p->answer[0] = p->answer[1] = -1;
	p->umask = process_umask(); /* the dispatcher's, for sup_perform_names */
	if ((p->ruleset = fcntl(ruleset, F_DUPFD_CLOEXEC, 3)) < 0 || pipe2(p->ask, O_CLOEXEC) < 0 ||
	    pipe2(p->answer, O_CLOEXEC) < 0) {
		int e = -errno;
		for (int i = 0; i < 2; i++)
			if (p->ask[i] >= 0)
				close(p->ask[i]);
		if (p->ruleset >= 0)
			close(p->ruleset);
		free(p);
		return e;
	}
	int r = -pthread_create(&p->thread, NULL, perform_loop, p);
	if (r < 0) {
		close(p->ruleset);
		for (int i = 0; i < 2; i++)
			close(p->ask[i]), close(p->answer[i]);
		free(p);
		return r;
	}
	s->perf = p;
	/* a performer that could not be confined: the run does not start */
	pthread_mutex_lock(&p->lock);
	while (!p->ready)
		pthread_cond_wait(&p->cond, &p->lock);
	r = p->broken ? -EPERM : 0;
	pthread_mutex_unlock(&p->lock);
	if (r < 0)
		sup_performer_stop(s);
	return r;
}

void sup_performer_stop(struct supervisor *s)
{
	struct sup_performer *p = s->perf;
	if (!p)
		return;
	if (!p->inline_ && write(p->ask[1], "q", 1) != 1)
		close(p->ask[1]), p->ask[1] = -1; /* its read ends the loop */
	pthread_mutex_lock(&p->lock);
	/* a writer still waiting for a reader: one comes, and the call is gone */
	for (struct fifo_wait *w = p->waiting; w; w = w->next) {
		char via[64];
		snprintf(via, sizeof(via), "/proc/self/fd/%d", w->obj);
		int fd = open(via, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0)
			close(fd);
	}
	while (p->waiting)
		pthread_cond_wait(&p->cond, &p->lock);
	pthread_mutex_unlock(&p->lock);
	if (!p->inline_) {
		pthread_join(p->thread, NULL);
		for (int i = 0; i < 2; i++) {
			if (p->ask[i] >= 0)
				close(p->ask[i]);
			close(p->answer[i]);
		}
	}
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free(p);
	s->perf = NULL;
}

/* fn(arg) made by the dispatcher; the lock the caller took is let go. */
static int here(struct sup_performer *p, int (*fn)(void *), void *arg)
{
	shared_umask = p->umask;
	int r = fn(arg);
	pthread_mutex_unlock(&p->lock);
	return r;
}

/*
 * Whether the step's Landlock ruleset gives every right but making devices
 * in the folder dir: a write grant's. Under the namespaces, by its mount: a
 * write grant's is read-write and nodev, every other place (a read grant, a
 * protected path bound read-only, /dev, /proc) another mount. Under
 * Landlock alone, by its path (the step's view is ours): beneath a write
 * grant, where Landlock can deny nothing narrower, and from where the step
 * can move nothing out of its write grants.
 */
static bool write_grant_folder(struct call *c, int dir, const char *known)
{
	char where[PATH_MAX];
	if (c->s->by_mount)
		return sup_write_mount(c->s, dir);
	if (known)
		return sup_beneath_any(&c->s->write, known);
	return stepview_held_path(dir, where, sizeof(where)) == 0 &&
	       sup_beneath_any(&c->s->write, where);
}

/*
 * There the call is held as the ruleset would hold it (a new file, folder
 * or symlink, a rename, an unlink), and the dispatcher makes it without the
 * round trip; anywhere else, and any other call, goes to the performer. So
 * does a rename where the ruleset has no refer (ABI 1: the kernel refuses
 * one between folders, EXDEV).
 */
int sup_perform_names(struct call *c, int (*fn)(void *), void *arg, int dir, const char *where,
		      int dir2, const char *where2)
{
	struct sup_performer *p = c->s->perf;
	if (!p || c->fsk || p->inline_ || !write_grant_folder(c, dir, where) ||
	    (dir2 >= 0 && (!c->s->fs_refer || !write_grant_folder(c, dir2, where2))))
		return sup_perform(c, fn, arg);
	pthread_mutex_lock(&p->lock);
	while (!p->ready)
		pthread_cond_wait(&p->cond, &p->lock);
	if (p->broken) {
		pthread_mutex_unlock(&p->lock);
		return -EACCES;
	}
	return here(p, fn, arg);
}

/* fn(arg) in the performer (or the dispatcher, inline_): its result, or -EACCES. */
static int in_performer(struct sup_performer *p, int (*fn)(void *), void *arg)
{
	if (!p)
		return -EACCES;
	pthread_mutex_lock(&p->lock);
	while (!p->ready)
		pthread_cond_wait(&p->cond, &p->lock);
	int r = -EACCES; /* fail closed */
	if (p->inline_)
		return here(p, fn, arg);
	bool broken = p->broken;
	pthread_mutex_unlock(&p->lock);
	if (broken)
		return r;
	p->fn = fn;
	p->arg = arg;
	char done;
	if (write(p->ask[1], "j", 1) != 1 || read(p->answer[0], &done, 1) != 1)
		return r;
	return p->result;
}

/*
 * Run fn(arg) in the performer: its result, or -EACCES when it could not be
 * confined. A caller in the line of a Landlock domain the step took (a
 * nested sandbox) has it run by that domain's keeper, born of the
 * performer, which holds the step's rights and the domain's
 * (supervise_nested.c); the performer's lock held, as for its own calls.
 */
int sup_perform(struct call *c, int (*fn)(void *), void *arg)
{
	struct sup_performer *p = c->s->perf;
	if (!c->fsk)
		return in_performer(p, fn, arg);
	if (!p)
		return -EACCES;
	pthread_mutex_lock(&p->lock);
	int r = sup_nested_run(c->fsk, fn, arg);
	pthread_mutex_unlock(&p->lock);
	return r;
}

int sup_performer_job(struct supervisor *s, int (*fn)(void *), void *arg)
{
	return in_performer(s->perf, fn, arg);
}

mode_t sup_performer_umask(void)
{
	return shared_umask;
}

void sup_performer_adopt(mode_t umask_)
{
	shared_umask = umask_;
}

/* ---- the calls, performed on a pinned folder and one name -------------- */

/* The permission bits of what the performer just made, where stepbox's umask took some off. */
static int fix_mode(int fd, mode_t mode)
{
	struct stat st;
	char via[64];
	snprintf(via, sizeof(via), "/proc/self/fd/%d", fd);
	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode) || (st.st_mode & 0777) == (mode & 0777))
		return 0;
	return fchmodat(AT_FDCWD, via, (st.st_mode & 07000) | (mode & 0777), 0) < 0 ? -errno : 0;
}

int sup_job_open(void *arg)
{
	struct job *j = arg;
	int flags = j->flags | O_CLOEXEC;
	bool fix = (flags & (O_CREAT | __O_TMPFILE)) && (j->mode & shared_umask);
	bool made = (flags & __O_TMPFILE) || (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
	if (fix && !made) {
		/* made here, or there already: only what is made here is given its mode */
		j->fd = openat(j->dir, j->name, flags | O_EXCL, j->mode);
		if (j->fd >= 0)
			made = true;
		else if (errno == EEXIST)
			flags &= ~O_CREAT;
		else
			return -errno;
	}
	if (j->fd < 0)
		j->fd = openat(j->dir, j->name, flags, j->mode);
	if (j->fd < 0)
		return -errno;
	int r = fix && made ? fix_mode(j->fd, j->mode) : 0;
	if (r < 0) {
		close(j->fd);
		j->fd = -1;
	}
	return r;
}

/* mkdir and mknod: what was made, given its mode where stepbox's umask took bits off. */
static int made_mode(const struct job *j)
{
	if (!(j->mode & shared_umask))
		return 0;
	int fd = openat(j->dir, j->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	int r = fd < 0 ? -errno : fix_mode(fd, j->mode);
	if (fd >= 0)
		close(fd);
	return r;
}

/*
 * Whether name in dir is a mount point where dir's mount is (the step's
 * namespace): the kernel refuses to move or remove one (EBUSY) only in the
 * caller's own namespace, and the performer is not in the step's. A grant
 * or a protected path bound read-only inside a write grant would otherwise
 * be moved away from under its bind.
 */
static bool busy(int dir, const char *name)
{
	struct statx d, n;
	return statx(dir, "", AT_EMPTY_PATH, STATX_MNT_ID, &d) == 0 &&
	       statx(dir, name, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &n) == 0 &&
	       (d.stx_mask & n.stx_mask & STATX_MNT_ID) && d.stx_mnt_id != n.stx_mnt_id;
}

int sup_job_call(void *arg)
{
	struct job *j = arg;
	int r = 0;
	switch (j->nr) {
	case SYS_mkdir:
	case SYS_mkdirat:
		r = mkdirat(j->dir, j->name, j->mode);
		return r < 0 ? -errno : made_mode(j);
	case SYS_mknod:
	case SYS_mknodat:
		r = mknodat(j->dir, j->name, j->mode, (dev_t)j->arg);
		return r < 0 ? -errno : made_mode(j);
	case SYS_unlink:
	case SYS_unlinkat:
	case SYS_rmdir:
		if (busy(j->dir, j->name))
			return -EBUSY;
		r = unlinkat(j->dir, j->name, j->flags);
		break;
	case SYS_rename:
	case SYS_renameat:
	case SYS_renameat2:
		if (busy(j->dir, j->name) || busy(j->dir2, j->name2))
			return -EBUSY;
		r = (int)syscall(SYS_renameat2, j->dir, j->name, j->dir2, j->name2, j->flags);
		break;
	case SYS_link:
	case SYS_linkat:
		r = linkat(j->dir, j->name, j->dir2, j->name2, j->flags);
		break;
	case SYS_symlink:
	case SYS_symlinkat:
		r = symlinkat(j->name2, j->dir, j->name);
		break;
	case SYS_truncate:
		r = truncate(j->name, (off_t)j->arg);
		break;
	default:
		r = -1, errno = ENOSYS;
	}
	return r < 0 ? -errno : 0;
}

/* ---- a FIFO opened to write: its reader waited for off the performer ----- */

static void *fifo_wait(void *arg)
{
	struct fifo_wait *w = arg;
	char via[64];
	snprintf(via, sizeof(via), "/proc/self/fd/%d", w->obj);
	int fd = open(via, w->flags | O_CLOEXEC); /* until a reader opens it */
	struct seccomp_notif_resp resp = {.id = w->id};
	if (fd < 0) {
		resp.error = -errno;
	} else {
		struct seccomp_notif_addfd add = {
			.id = w->id,
			.srcfd = (uint32_t)fd,
			.newfd_flags = (w->flags & O_CLOEXEC) ? O_CLOEXEC : 0,
		};
		int newfd = ioctl(w->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
		resp.val = newfd < 0 ? 0 : newfd;
		resp.error = newfd < 0 ? -errno : 0;
		close(fd);
	}
	ioctl(w->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp); /* the call may be gone */
	close(w->obj);
	close(w->listener);
	struct sup_performer *p = w->p;
	pthread_mutex_lock(&p->lock);
	for (struct fifo_wait **at = &p->waiting; *at; at = &(*at)->next)
		if (*at == w) {
			*at = w->next;
			break;
		}
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	free(w);
	return NULL;
}

/* In the performer (its lock held): the waiting thread, born with its rights. */
static int fifo_spawn(void *arg)
{
	struct fifo_wait *w = arg;
	pthread_attr_t attr;
	pthread_t t;
	if (pthread_attr_init(&attr) != 0)
		return -ENOMEM;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	int r = -pthread_create(&t, &attr, fifo_wait, w);
	pthread_attr_destroy(&attr);
	if (r == 0) {
		w->next = w->p->waiting;
		w->p->waiting = w;
	}
	return r;
}

int sup_perform_fifo(struct call *c, int obj, int flags)
{
	struct fifo_wait *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	*w = (struct fifo_wait){c->s->perf, -1, -1, flags, c->req->id, NULL};
	int r = w->p ? 0 : -EACCES;
	if (r == 0 && ((w->obj = fcntl(obj, F_DUPFD_CLOEXEC, 3)) < 0 ||
		       (w->listener = fcntl(c->s->listener, F_DUPFD_CLOEXEC, 3)) < 0))
		r = -errno;
	if (r == 0)
		r = sup_perform(c, fifo_spawn, w);
	if (r == 0)
		return -EINPROGRESS;
	if (w->obj >= 0)
		close(w->obj);
	if (w->listener >= 0)
		close(w->listener);
	free(w);
	return r;
}
