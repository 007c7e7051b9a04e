#include "persist.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "path.h"

/* The holder's line: fixed size, rewritten in place, never truncated. */
#define RECORD_SIZE 128

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_alarm(int sig)
{
	(void)sig; /* only to interrupt F_OFD_SETLKW */
}

/* Arm SIGALRM in `after` seconds (0: disarm). */
static void arm(double after)
{
	struct itimerval it = {{0, 0}, {0, 0}};
	if (after > 0) {
		it.it_value.tv_sec = (time_t)after;
		it.it_value.tv_usec = (suseconds_t)((after - (double)(time_t)after) * 1e6);
		if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
			it.it_value.tv_usec = 1;
	}
	setitimer(ITIMER_REAL, &it, NULL);
}

static void read_holder(int fd, char *out, size_t cap)
{
	char buf[RECORD_SIZE + 1];
	ssize_t n = pread(fd, buf, RECORD_SIZE, 0);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	size_t len = strlen(buf);
	while (len && buf[len - 1] == ' ')
		buf[--len] = '\0';
	snprintf(out, cap, "%s", buf);
}

static void write_holder(int fd, bool shared)
{
	char host[64] = "?", when[16] = "?", rec[RECORD_SIZE];
	if (gethostname(host, sizeof(host)) < 0)
		snprintf(host, sizeof(host), "?");
	host[sizeof(host) - 1] = '\0';
	time_t t = time(NULL);
	struct tm tm;
	if (localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
	int n = snprintf(rec, sizeof(rec), "stepbox pid %d on host %s since %s%s", (int)getpid(),
			 host, when, shared ? " (shared)" : "");
	if (n < 0 || n >= (int)sizeof(rec) - 1)
		n = (int)sizeof(rec) - 2;
	memset(rec + n, ' ', sizeof(rec) - 1 - (size_t)n);
	rec[sizeof(rec) - 1] = '\n';
	/* advisory only: a failed write leaves the waiters' message vaguer */
	ssize_t w = pwrite(fd, rec, sizeof(rec), 0);
	(void)w;
}

/* Open (or create) the lock file in the pinned folder: a regular file, never a link. */
static int open_lock(int dfd, const char *dir, struct stepbox_err *err)
{
	int fd = openat(dfd, PERSIST_LOCK_NAME,
			O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0600);
	if (fd < 0) {
		int e = errno;
		err_set(err, ERR_UNAVAILABLE, e, "open the lock of the persistent folder '%s/%s'",
			dir, PERSIST_LOCK_NAME);
		if (e == ELOOP)
			err_hint(err, "it is a symlink, which a step may have planted: remove it");
		return -e;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		err_set(err, ERR_UNAVAILABLE, 0, "'%s/%s' is not a regular file", dir,
			PERSIST_LOCK_NAME);
		err_hint(err, "remove it: stepbox keeps its lock there");
		return -EINVAL;
	}
	return fd;
}

/* Still the file at the name? (a holder may have removed it before we got it) */
static bool same_file(int dfd, int fd)
{
	struct stat a, b;
	return fstat(fd, &a) == 0 && fstatat(dfd, PERSIST_LOCK_NAME, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/*
 * Wait for the lock on fd: F_OFD_SETLKW, woken by SIGALRM to speak after a
 * second and to give up at the deadline. 0, 1 at the deadline, or -errno.
 */
static int wait_lock(struct persist_lock *l, struct flock *fl, const char *dir, long wait_s,
		     bool quiet, double start)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm; /* no SA_RESTART: the wait must return */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	sigset_t alrm, oldmask;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &alrm, &oldmask);
	double deadline = wait_s >= 0 ? start + (double)wait_s : 0;
	bool said = false;
	int r;
	for (;;) {
		double t = now_s(), wake = said ? deadline : start + 1;
		if (deadline && deadline < wake)
			wake = deadline;
		if (wake && t >= wake) {
			if (deadline && t >= deadline) {
				r = 1;
				break;
			}
			if (!said && !quiet)
				fprintf(stderr, "stepbox: waiting for the workflow cache %s, held by %s\n",
					dir, l->holder[0] ? l->holder : "another step");
			said = true;
			continue;
		}
		arm(wake ? wake - t : 0);
		r = fcntl(l->fd, F_OFD_SETLKW, fl);
		arm(0);
		if (r == 0)
			break;
		if (errno != EINTR) {
			r = -errno;
			break;
		}
	}
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	sigaction(SIGALRM, &old, NULL);
	return r;
}

int persist_lock(struct persist_lock *l, const char *dir, bool shared, long wait_s, bool quiet,
		 struct stepbox_err *err)
{
	memset(l, 0, sizeof(*l));
	l->fd = -1;
	l->shared = shared;
	int dfd = path_open_nofollow(dir, O_DIRECTORY);
	if (dfd < 0)
		return err_set(err, ERR_UNAVAILABLE, -dfd, "open the persistent folder '%s'", dir);
	double start = now_s();
	int r = 0;
	/* a holder that removed the file frees a lock nobody else will see: try again */
	for (int tries = 0; tries < 100; tries++) {
		if ((l->fd = open_lock(dfd, dir, err)) < 0) {
			r = l->fd;
			break;
		}
		struct flock fl = {.l_type = shared ? F_RDLCK : F_WRLCK, .l_whence = SEEK_SET};
		r = fcntl(l->fd, F_OFD_SETLK, &fl) == 0 ? 0 : -errno;
		if (r == -EAGAIN || r == -EACCES) {
			read_holder(l->fd, l->holder, sizeof(l->holder));
			r = wait_lock(l, &fl, dir, wait_s, quiet, start);
		}
		if (r == 1) {
			err_set(err, ERR_UNAVAILABLE, 0,
				"the workflow cache '%s' is still held by %s after %ld s "
				"(--persist-wait)", dir, l->holder[0] ? l->holder : "another step",
				wait_s);
			err_hint(err, "another step is using it: wait longer, or run a step that only "
				      "uses what is installed with --persist-shared");
			r = -ETIMEDOUT;
		} else if (r < 0) {
			err_set(err, ERR_UNAVAILABLE, -r, "lock the persistent folder '%s'", dir);
			if (r == -ENOLCK)
				err_hint(err, "its file system keeps no locks (an NFS mount without "
					      "lockd?): mount it with locking");
		}
		if (r < 0 || same_file(dfd, l->fd))
			break;
		close(l->fd);
		l->fd = -1;
	}
	close(dfd);
	if (r < 0 || l->fd < 0) {
		persist_unlock(l);
		return r < 0 ? r : err_set(err, ERR_UNAVAILABLE, EAGAIN, "lock the persistent "
							     "folder '%s'", dir);
	}
	l->waited_s = now_s() - start;
	if (l->waited_s < 0.001)
		l->waited_s = 0;
	write_holder(l->fd, shared);
	return 0;
}

bool persist_intact(const struct persist_lock *l, const char *dir)
{
	if (l->fd < 0)
		return true;
	int dfd = path_open_nofollow(dir, O_DIRECTORY);
	bool same = dfd >= 0 && same_file(dfd, l->fd);
	if (dfd >= 0)
		close(dfd);
	return same;
}

void persist_unlock(struct persist_lock *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}
