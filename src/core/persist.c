#include "persist.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "path.h"
#include "strv.h"

/* The holder's line: fixed size, rewritten in place, never truncated. */
#define RECORD_SIZE 128

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

/*
 * The holders' lines, each fixed size and rewritten in place: slot 0 the
 * last exclusive holder ("running: ..." until it ended, then "ended: ..."),
 * slot 1 the last shared one. Advisory: for the messages and for finding a
 * writer that was killed before it ended.
 */
static void read_slot(int fd, int slot, char *out, size_t cap)
{
	char buf[RECORD_SIZE + 1];
	ssize_t n = pread(fd, buf, RECORD_SIZE, (off_t)slot * RECORD_SIZE);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	size_t len = strlen(buf);
	while (len && buf[len - 1] == ' ')
		buf[--len] = '\0';
	snprintf(out, cap, "%s", buf);
}

/* Who holds fd's lock against a request of type: the matching slot, without its state. */
static void read_holder(int fd, short type, char *out, size_t cap)
{
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET};
	bool shared = fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type == F_RDLCK;
	char rec[RECORD_SIZE + 1];
	read_slot(fd, shared ? 1 : 0, rec, sizeof(rec));
	const char *colon = strstr(rec, ": ");
	snprintf(out, cap, "%s%s", colon && !shared ? colon + 2 : rec,
		 shared && rec[0] ? " and maybe others" : "");
}

static void write_slot(int fd, bool shared, const char *state)
{
	char host[64] = "?", when[16] = "?", rec[RECORD_SIZE];
	if (gethostname(host, sizeof(host)) < 0)
		snprintf(host, sizeof(host), "?");
	host[sizeof(host) - 1] = '\0';
	time_t t = time(NULL);
	struct tm tm;
	if (localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
	int n = snprintf(rec, sizeof(rec), "%s%sstepbox pid %d on host %s since %s%s", state,
			 state[0] ? ": " : "", (int)getpid(), host, when,
			 shared ? " (shared)" : "");
	if (n < 0 || n >= (int)sizeof(rec) - 1)
		n = (int)sizeof(rec) - 2;
	memset(rec + n, ' ', sizeof(rec) - 1 - (size_t)n);
	rec[sizeof(rec) - 1] = '\n';
	/* advisory only: a failed write leaves the waiters' message vaguer */
	ssize_t w = pwrite(fd, rec, sizeof(rec), shared ? RECORD_SIZE : 0);
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
	return fstat(fd, &a) == 0 &&
	       fstatat(dfd, PERSIST_LOCK_NAME, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/*
 * Wait for the lock on fd: F_OFD_SETLKW, woken by SIGALRM to speak after a
 * second and to give up at the deadline. 0, 1 at the deadline, or -errno.
 * holder (of cap bytes) is read again from P's lock (in the folder dfd)
 * before it is said: a holder writes its line a moment after it took the
 * lock, and its lock file may not have been there when we first looked.
 */
static int wait_lock(int fd, int dfd, char *holder, size_t cap, struct flock *fl, const char *dir,
		     long wait_s, bool quiet, double start)
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
		double t = clock_now_s(), wake = said ? deadline : start + 1;
		if (deadline && deadline < wake)
			wake = deadline;
		if (wake && t >= wake) {
			if (deadline && t >= deadline) {
				r = 1;
				break;
			}
			int info = said ? -1
					: openat(dfd, PERSIST_LOCK_NAME,
						 O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
			if (info >= 0) {
				read_holder(info, fl->l_type, holder, cap);
				close(info);
			}
			if (!said && !quiet)
				fprintf(stderr,
					"stepbox: waiting for the workflow cache %s, held by %s\n",
					dir, holder[0] ? holder : "another step");
			said = true;
			continue;
		}
		arm(wake ? wake - t : 0);
		r = fcntl(fd, F_OFD_SETLKW, fl);
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

/* The last writer of the cache was killed mid-step: set aside what it left half done. */
static void say_killed(const char *dir, const struct persist_lock *lock, bool quiet)
{
	struct strv aside = STRV_INIT;
	int r = persist_repair(dir, &aside);
	if (!quiet || aside.n)
		err_warn("the last step to hold the workflow cache %s (%s) was killed before it "
			 "ended%s",
			 dir, lock->killed,
			 aside.n ? "; set aside its unfinished pip "
				   "installs, to be installed anew:"
			 : r < 0 ? ""
				 : "; what it installed may be "
				   "incomplete: reinstall what fails");
	for (size_t i = 0; i < aside.n; i++)
		fprintf(stderr, "stepbox:   %s\n", aside.v[i]);
	strv_release(&aside);
}

/* A folder of ours alone: not a link, ours, written by no one else. */
static bool ours_alone(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	       (st.st_mode & 022) == 0;
}

/*
 * The folder of the path locks, made 0700 if missing: in the user's
 * runtime folder (XDG_RUNTIME_DIR), in /run for root, else
 * /tmp/stepbox-locks-UID; taken only when it is ours alone. 0, or -1 when
 * none is (the path lock is then not taken: docs/persistence.md).
 */
static int locks_dir(char *out, size_t cap)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int n;
	if (xdg && xdg[0] == '/' && ours_alone(xdg))
		n = snprintf(out, cap, "%s/stepbox-locks", xdg);
	else if (geteuid() == 0)
		n = snprintf(out, cap, "/run/stepbox-locks");
	else
		n = snprintf(out, cap, "/tmp/stepbox-locks-%u", (unsigned)geteuid());
	if (n < 0 || (size_t)n >= cap || (mkdir(out, 0700) < 0 && errno != EEXIST))
		return -1;
	return ours_alone(out) ? 0 : -1;
}

/*
 * The path lock: the same lock on a file named after dir's path, outside
 * every place a step may reach. The lock in P is found by P's path; a step
 * that may rename P (Landlock alone cannot refuse it beneath a write grant)
 * could make a new P that the next step locks at once. Keyed by the path,
 * the next step waits for this one whatever became of the folder. Taken
 * first by every step, so no two wait on each other. Where no such folder
 * is, -1 and no wait (the lock in P stands alone, as before).
 */
static int path_lock(struct persist_lock *l, int dfd, const char *dir, long wait_s, bool quiet,
		     double start, struct stepbox_err *err)
{
	bool shared = l->shared;
	char path[PATH_MAX];
	uint64_t h = 14695981039346656037ULL; /* FNV-1a of the canonical path */
	for (const char *p = dir; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	if (locks_dir(path, sizeof(path) - 24) < 0)
		return -1;
	size_t n = strlen(path);
	snprintf(path + n, sizeof(path) - n, "/%016" PRIx64 ".lock", h);
	int fd =
		open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0600);
	if (fd < 0)
		return -1;
	struct flock fl = {.l_type = shared ? F_RDLCK : F_WRLCK, .l_whence = SEEK_SET};
	int r = fcntl(fd, F_OFD_SETLK, &fl) == 0 ? 0 : -errno;
	if (r == -EAGAIN || r == -EACCES) {
		/* who holds it, for the message: the lock in P says */
		int in_p = openat(dfd, PERSIST_LOCK_NAME,
				  O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (in_p >= 0) {
			read_holder(in_p, fl.l_type, l->holder, sizeof(l->holder));
			close(in_p);
		}
		r = wait_lock(fd, dfd, l->holder, sizeof(l->holder), &fl, dir, wait_s, quiet,
			      start);
	}
	if (r == 1) {
		err_set(err, ERR_UNAVAILABLE, 0,
			"the workflow cache '%s' is still held by %s after %ld s (--persist-wait)",
			dir, l->holder[0] ? l->holder : "another step", wait_s);
		err_hint(err, "another step is using it: wait longer, or run a step that only "
			      "uses what is installed with --persist-shared");
	}
	if (r != 0) {
		close(fd);
		return r == 1 ? -ETIMEDOUT : -1; /* a lock it could not take: as if none */
	}
	return fd;
}

int persist_lock(struct persist_lock *l, const char *dir, bool shared, long wait_s, bool quiet,
		 struct stepbox_err *err)
{
	memset(l, 0, sizeof(*l));
	l->fd = l->path_fd = -1;
	l->shared = shared;
	int dfd = path_open_nofollow(dir, O_DIRECTORY);
	if (dfd < 0)
		return err_set(err, ERR_UNAVAILABLE, -dfd, "open the persistent folder '%s'", dir);
	double start = clock_now_s();
	l->path_fd = path_lock(l, dfd, dir, wait_s, quiet, start, err);
	if (l->path_fd == -ETIMEDOUT) {
		close(dfd);
		l->path_fd = -1;
		return -ETIMEDOUT;
	}
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
			read_holder(l->fd, fl.l_type, l->holder, sizeof(l->holder));
			r = wait_lock(l->fd, dfd, l->holder, sizeof(l->holder), &fl, dir, wait_s,
				      quiet, start);
		}
		if (r == 1) {
			err_set(err, ERR_UNAVAILABLE, 0,
				"the workflow cache '%s' is still held by %s after %ld s "
				"(--persist-wait)",
				dir, l->holder[0] ? l->holder : "another step", wait_s);
			err_hint(err,
				 "another step is using it: wait longer, or run a step that only "
				 "uses what is installed with --persist-shared");
			r = -ETIMEDOUT;
		} else if (r < 0) {
			err_set(err, ERR_UNAVAILABLE, -r, "lock the persistent folder '%s'", dir);
			if (r == -ENOLCK)
				err_hint(err,
					 "its file system keeps no locks (an NFS mount without "
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
		return r < 0 ? r
			     : err_set(err, ERR_UNAVAILABLE, EAGAIN,
				       "lock the persistent "
				       "folder '%s'",
				       dir);
	}
	l->waited_s = clock_now_s() - start;
	if (l->waited_s < 0.001)
		l->waited_s = 0;
	if (!shared) {
		/* the last writer never said it ended: it was killed with its step */
		char last[RECORD_SIZE + 1];
		read_slot(l->fd, 0, last, sizeof(last));
		if (strncmp(last, "running: ", 9) == 0)
			snprintf(l->killed, sizeof(l->killed), "%s", last + 9);
	}
	write_slot(l->fd, shared, shared ? "" : "running");
	if (l->killed[0])
		say_killed(dir, l, quiet);
	return 0;
}

void persist_check_intact(const struct persist_lock *l, const char *dir)
{
	if (l->fd < 0)
		return;
	int dfd = path_open_nofollow(dir, O_DIRECTORY);
	bool same = dfd >= 0 && same_file(dfd, l->fd);
	if (dfd >= 0)
		close(dfd);
	if (!same)
		err_warn("the step removed or replaced '%s/%s': a step started meanwhile may have "
			 "written in the workflow cache beside this one",
			 dir, PERSIST_LOCK_NAME);
}

void persist_unlock(struct persist_lock *l)
{
	if (l->fd >= 0 && !l->shared)
		write_slot(l->fd, false, "ended");
	if (l->fd >= 0)
		close(l->fd);
	if (l->path_fd >= 0)
		close(l->path_fd);
	l->fd = l->path_fd = -1;
}

/*
 * pip writes a distribution's RECORD last: a dist-info folder without one is
 * an install that never finished, which pip would take as installed (and
 * refuse to uninstall). Renamed aside, never removed: pip installs it anew.
 */
int persist_repair(const char *dir, struct strv *set_aside)
{
	/* the step wrote P/python: a symlink it planted there is not followed */
	char site[PATH_MAX];
	int n = snprintf(site, sizeof(site), "%s/python", dir);
	int pfd = n < 0 || n >= (int)sizeof(site) ? -ENAMETOOLONG
						  : path_open_nofollow(site, O_DIRECTORY);
	struct path_dir lib, sp;
	struct path_entry py, de;
	int opened = pfd < 0 ? pfd : path_dir_open(&lib, pfd, "lib");
	if (pfd >= 0)
		close(pfd);
	if (opened < 0)
		return 0;
	int r = 0;
	while (r == 0 && path_dir_next(&lib, &py)) {
		if (strncmp(py.name, "python", 6) != 0)
			continue;
		pfd = openat(lib.fd, py.name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (pfd < 0)
			continue;
		if (path_dir_open(&sp, pfd, "site-packages") == 0) {
			while (r == 0 && path_dir_next(&sp, &de)) {
				size_t len = strlen(de.name);
				struct stat st;
				char rec[NAME_MAX + 16], aside[NAME_MAX + 32];
				if (len < 10 || strcmp(de.name + len - 10, ".dist-info") != 0 ||
				    snprintf(rec, sizeof(rec), "%s/RECORD", de.name) >=
					    (int)sizeof(rec) ||
				    fstatat(sp.fd, rec, &st, AT_SYMLINK_NOFOLLOW) == 0 ||
				    errno != ENOENT)
					continue;
				snprintf(aside, sizeof(aside), ".%s.stepbox-unfinished", de.name);
				if (renameat(sp.fd, de.name, sp.fd, aside) == 0)
					r = strv_push(set_aside, de.name);
			}
			path_dir_close(&sp);
		}
		close(pfd);
	}
	path_dir_close(&lib);
	return r;
}
