/*
 * stepview: a supervised step as it sees itself, for the supervisor that
 * acts on its behalf: its memory, its fds and its paths. Every copy is
 * proven fresh by the step's call still pending (a pid can be reused), and
 * every path is resolved in the step's root, from its cwd or dirfd, one
 * component at a time: nothing is resolved in the supervisor's own context.
 */
#ifndef STEPBOX_STEPVIEW_H
#define STEPBOX_STEPVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct stepview {
	int listener;         /* the supervisor's listener: proves the call still waits */
	uint64_t id;          /* the notification */
	int pidfd;            /* the calling thread's process (stepview_pidfd), or -1 */
	bool pidfd_kept;      /* pidfd is the thread's cache's (stepview_keep_pidfds): not ours */
	pid_t tid;            /* the calling thread, in our PID namespace */
	long ns_tgid, ns_tid; /* the same in the step's PID namespace (its /proc/self), or -1 */
	int root, cwd;        /* its root and cwd, opened once for the call's walks, or -1 */
};

/*
 * Fill v for the thread tid whose call id waits on listener. Nothing is
 * opened yet: what a call needs is opened when it is first asked for. 0 or
 * -errno; close with stepview_close (also after a failure).
 */
int stepview_open(struct stepview *v, int listener, uint64_t id, pid_t tid);
/*
 * A pidfd of the caller's process (a thread pidfd where the kernel has
 * them), opened once for the call and proven the caller's by its call still
 * waiting after. Borrowed (closed by stepview_close), or -ESRCH.
 */
int stepview_pidfd(struct stepview *v);
/* The same, opened for this call alone: v's own, for another thread to use. */
int stepview_own_pidfd(struct stepview *v);
void stepview_close(struct stepview *v);
/*
 * Keep the pidfds this thread opens, by tid, for the calls that follow
 * (on), or close them all (off). A thread's tid names it alone while it
 * lives: a pidfd kept for one that has died answers ESRCH, and is opened
 * again for the tid's new owner.
 */
void stepview_keep_pidfds(bool on);

/* Whether the step still waits for the answer to its call. */
bool stepview_waiting(const struct stepview *v);

/* Copy len bytes of the step's memory: 0, -EFAULT, or -ESRCH when the call is gone. */
int stepview_read(const struct stepview *v, uint64_t addr, void *buf, size_t len);
/* A NUL-terminated string of the step's: 0, -EFAULT, -ENAMETOOLONG, -ESRCH. */
int stepview_read_str(const struct stepview *v, uint64_t addr, char *buf, size_t cap);
/*
 * Write into the step's memory through mem, its /proc/<tid>/mem opened while
 * its call was pending, and only while it still waits. 0 or -EFAULT.
 */
int stepview_write(const struct stepview *v, int mem, uint64_t addr, const void *buf, size_t len);

/* Our own copy of one of the step's fds (not an O_PATH one: -EBADF, as the kernel). */
int stepview_fd(struct stepview *v, uint64_t fd);
/*
 * What one of the step's fds is, read from its /proc entries where the fd
 * itself cannot be copied (pidfd_getfd refused): enough to make a socket of
 * the same kind, and what a connect on it would meet. A snapshot: the step
 * may have put another fd there since.
 */
struct stepview_sock {
	int family, type, protocol;
	bool cloexec, nonblock;
	bool bound;    /* AF_UNIX: it has a name (moving one is not possible) */
	int state_err; /* what connect answers it as it is: EISCONN, EALREADY, EINVAL, or 0 */
	unsigned long ino;
};
/*
 * diag: a NETLINK_SOCK_DIAG socket in the step's network namespace (UNIX
 * sockets are looked up there). 0; -EBADF, -ENOTSOCK as the kernel;
 * -EPROTONOSUPPORT for a kind not known here.
 */
int stepview_socket(const struct stepview *v, int diag, uint64_t fd, struct stepview_sock *k);

/* Open /proc/<tid>/what: the step's cwd, root, mem or one of its fds. fd or -errno. */
int stepview_proc_open(const struct stepview *v, const char *what, int flags);

/*
 * Resolve path from dirfd (the step's; AT_FDCWD: its cwd) in the step's root:
 * an O_PATH fd of the object (of the symlink itself when !follow and the last
 * component is one), or -errno. Magic links are followed only in the calling
 * process's own /proc entry (-EACCES elsewhere).
 */
int stepview_resolve(struct stepview *v, uint64_t dirfd, const char *path, bool follow);

/*
 * The path of an object we hold, as its mount shows it (a mount of the step's
 * namespace: as the step sees it); " (deleted)" taken off. 0, or -EACCES for
 * an object with no place ("socket:[..]").
 */
int stepview_held_path(int fd, char *buf, size_t cap);

#endif
