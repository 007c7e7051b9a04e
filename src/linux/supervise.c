#include "supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
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
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "harden.h"
#include "path.h"
#include "stepview.h"
#include "strv.h"
#include "supervise_int.h"

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SUP_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#else
#define SUP_NOTIF_SET_FLAGS SECCOMP_IOCTL_NOTIF_SET_FLAGS
#endif
#define SUP_NOTIF_SYNC_WAKE_UP 1UL /* SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP */

/*
 * The supervisor itself: its lifetime, what the step is answered, the
 * refusals kept and where an object may be written; the dispatcher, the
 * probe, start and stop. The calls are served in supervise_net.c (sockets)
 * and supervise_fs.c (metadata, set-id files, /dev/shm and access(2)).
 */

void sup_unref(struct supervisor *s)
{
	pthread_mutex_lock(&s->lock);
	bool last = --s->refs == 0;
	pthread_mutex_unlock(&s->lock);
	if (!last)
		return;
	if (s->net_ruleset >= 0)
		close(s->net_ruleset);
	if (s->shm_dir >= 0)
		close(s->shm_dir);
	if (s->diag >= 0)
		close(s->diag);
	strv_release(&s->write);
	strv_release(&s->unix_dirs);
	strv_release(&s->readable);
	strv_release(&s->writable);
	strv_release(&s->executable);
	free(s->write_mnt);
	free(s->unix_mnt);
	free(s->all_mnt);
	for (size_t i = 0; i < s->ndenied; i++)
		free(s->denied[i].path), free(s->denied[i].path2);
	free(s->denied);
	free(s->names);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* ---- talking to the step ------------------------------------------------ */

void sup_respond(const struct call *c, long val, int errnum)
{
	if (c->answered)
		return;
	struct seccomp_notif_resp resp;
	memset(&resp, 0, sizeof(resp));
	resp.id = c->req->id;
	resp.val = errnum ? 0 : val;
	resp.error = errnum ? -errnum : 0;
	/* ENOENT: the step gave up waiting (it was killed); nothing to tell */
	while (ioctl(c->s->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno == EINTR)
		;
}

#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif

int sup_hand_fd(struct call *c, int fd, int flags)
{
	struct seccomp_notif_addfd add = {
		.id = c->req->id,
		.flags = c->s->no_addfd_send ? 0 : SECCOMP_ADDFD_FLAG_SEND,
		.srcfd = (uint32_t)fd,
		.newfd_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0,
	};
	int newfd = ioctl(c->s->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
	if (newfd < 0 && errno == EINVAL && add.flags) {
		c->s->no_addfd_send = true; /* an older kernel: the answer sent apart */
		add.flags = 0;
		newfd = ioctl(c->s->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
	}
	c->answered = newfd >= 0 && add.flags;
	return newfd < 0 ? -errno : newfd;
}

bool sup_beneath_any(const struct strv *dirs, const char *path)
{
	for (size_t i = 0; i < dirs->n; i++)
		if (path_beneath(path, dirs->v[i]))
			return true;
	return false;
}

/* The id of the mount an object we hold lies on, or -1. */
static int mount_id(int fd)
{
	struct statx sx;
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) == 0 &&
	    (sx.stx_mask & STATX_MNT_ID))
		return (int)sx.stx_mnt_id;
	char p[64], buf[512];
	snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", fd); /* before Linux 5.8 */
	int f = open(p, O_RDONLY | O_CLOEXEC);
	ssize_t n = f >= 0 ? read(f, buf, sizeof(buf) - 1) : -1;
	if (f >= 0)
		close(f);
	buf[n > 0 ? n : 0] = '\0';
	char *m = strstr(buf, "mnt_id:");
	long id = m ? strtol(m + 7, NULL, 10) : -1;
	return id >= 0 && id < INT_MAX ? (int)id : -1;
}

static bool has_id(const int *v, size_t n, int id)
{
	for (size_t i = 0; id >= 0 && i < n; i++)
		if (v[i] == id)
			return true;
	return false;
}

bool sup_write_mount(const struct supervisor *s, int fd)
{
	return s->by_mount && has_id(s->write_mnt, s->nwrite_mnt, mount_id(fd));
}

/*
 * Whether the object we hold (fd, at path as the step sees it) lies where the
 * step may write, or (unix) beneath a unix_sockets entry. Under the
 * namespaces by the mount it lies on: a write grant's bind and what it
 * brought along, the private tmpfs and devpts (not a host folder bound in
 * them, and however the step renamed the folders it owns around the mount
 * points). An object on none of the namespace's mounts (a host file the step
 * was given as stdout) and everything under Landlock alone by path, as the
 * host sees it: the step renames nothing outside its write grants there.
 */
int sup_mount_says(const struct call *c, int fd, bool unix_too)
{
	const struct supervisor *s = c->s;
	int id = s->by_mount ? mount_id(fd) : -1;
	if (!s->by_mount || !has_id(s->all_mnt, s->nall_mnt, id))
		return -1;
	return has_id(s->write_mnt, s->nwrite_mnt, id) ||
	       (unix_too && has_id(s->unix_mnt, s->nunix_mnt, id));
}

bool sup_allowed_place(const struct call *c, int fd, const char *path, bool unix_too)
{
	const struct supervisor *s = c->s;
	int says = sup_mount_says(c, fd, unix_too);
	if (says >= 0)
		return says;
	/* not the namespace's: a host file the step was given (fds 0-2), by host path */
	return sup_beneath_any(&s->write, path) ||
	       (unix_too && sup_beneath_any(&s->unix_dirs, path));
}

/* One refusal (errnum 0) or failed call kept for the sink, with the process's name. */
static void keep(struct call *c, enum denial_op op, const char *path, const char *path2, int port,
		 int errnum)
{
	char p[64], comm[32] = "";
	snprintf(p, sizeof(p), "/proc/%d/comm", (int)c->v.tid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, comm, sizeof(comm) - 1);
		comm[n > 0 ? n : 0] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
		close(fd);
	}
	struct supervisor *s = c->s;
	c->noted++;
	pthread_mutex_lock(&s->lock);
	if (s->ndenied < DENIAL_KEEP &&
	    strv_grow(&s->denied, &s->capdenied, s->ndenied, sizeof(*s->denied), 16) == 0) {
		struct sup_denial *d = &s->denied[s->ndenied];
		d->op = op;
		d->pid = c->v.tid;
		d->port = port;
		d->errnum = errnum;
		d->when = clock_now_s();
		snprintf(d->program, sizeof(d->program), "%.15s", comm); /* TASK_COMM_LEN */
		d->path = path ? strdup(path) : NULL;
		d->path2 = path2 ? strdup(path2) : NULL;
		if ((d->path || !path) && (d->path2 || !path2))
			s->ndenied++;
		else
			free(d->path), free(d->path2);
	}
	pthread_mutex_unlock(&s->lock);
}

void sup_note_denial(struct call *c, enum denial_op op, const char *path, int port)
{
	keep(c, op, path, NULL, port, 0);
}

void sup_note_failed(struct call *c, enum denial_op op, const char *path, const char *path2,
		     int errnum)
{
	keep(c, op, path, path2, -1, errnum);
}

/* The calling thread's /proc/TID/status: its umask (else 022) and filters (else -1). */
static void read_status(struct call *c)
{
	if (c->status_read)
		return;
	char buf[4096];
	int fd = stepview_proc_open(&c->v, "status", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	const char *u = strstr(buf, "\nUmask:");
	const char *f = strstr(buf, "\nSeccomp_filters:");
	const char *t = strstr(buf, "\nTgid:");
	c->umask = u ? (mode_t)(strtoul(u + 8, NULL, 8) & 0777) : 022;
	c->filters = f ? (int)strtol(f + 18, NULL, 10) : -1;
	c->tgid = t ? (pid_t)strtol(t + 6, NULL, 10) : -1;
	c->status_read = true;
}

/*
 * The caller's umask: from the cache while the live layer traps umask(2)
 * (s->prot: every change is seen, sup_serve_umask), else its status. A
 * thread is known by its tid and its /proc entry's inode, which a pid
 * reused by another process does not keep; a fork, new to the cache,
 * reads its own.
 */
mode_t sup_step_umask(struct call *c)
{
	struct supervisor *s = c->s;
	char p[32];
	struct stat st;
	snprintf(p, sizeof(p), "/proc/%d", (int)c->v.tid);
	if (c->status_read || !s->prot || stat(p, &st) < 0) {
		read_status(c);
		return c->umask;
	}
	struct sup_umask *u = &s->umasks[(unsigned)c->v.tid % SUP_UMASKS];
	pthread_mutex_lock(&s->lock);
	bool hit = !s->umask_off && u->tid == c->v.tid && u->ino == st.st_ino;
	mode_t mask = u->mask;
	unsigned gen = s->umask_gen;
	pthread_mutex_unlock(&s->lock);
	if (hit)
		return mask;
	read_status(c);
	/* kept only when read from the caller (it still waits) and no umask came meanwhile */
	if (!stepview_waiting(&c->v))
		return c->umask;
	pthread_mutex_lock(&s->lock);
	if (!s->umask_off && gen == s->umask_gen)
		*u = (struct sup_umask){c->v.tid, st.st_ino, c->umask};
	pthread_mutex_unlock(&s->lock);
	return c->umask;
}

/*
 * umask(2), trapped while the cache is used: it is let go on, and the cache
 * emptied; until the new mask shows in the caller's status (the call made),
 * no read is kept: another thread sharing the mask may read the old one
 * meanwhile. One that never shows (the caller stopped before its call ran)
 * turns the cache off.
 */
void sup_serve_umask(struct call *c)
{
	struct supervisor *s = c->s;
	mode_t want = (mode_t)c->req->data.args[0] & 0777;
	pthread_mutex_lock(&s->lock);
	s->umask_gen++;
	memset(s->umasks, 0, sizeof(s->umasks));
	pthread_mutex_unlock(&s->lock);
	sup_go_on(c);
	bool seen = false;
	for (int i = 0; i < 200 && !seen; i++) {
		c->status_read = false;
		read_status(c);
		/* gone (no status): what it did shows in its mask's other holders' own */
		seen = c->tgid < 0 || c->umask == want;
		if (!seen)
			sched_yield();
	}
	pthread_mutex_lock(&s->lock);
	s->umask_gen++;
	memset(s->umasks, 0, sizeof(s->umasks)); /* what a worker kept meanwhile */
	s->umask_off |= !seen;
	pthread_mutex_unlock(&s->lock);
}

pid_t sup_step_tgid(struct call *c)
{
	read_status(c);
	return c->tgid;
}

int sup_step_filters(struct call *c)
{
	read_status(c);
	return c->filters;
}

/* ---- the dispatcher ----------------------------------------------------- */

/*
 * The thread that performs calls for the step holds the step's own
 * credentials: the caller's uid, gid and groups, and no effective
 * capability, so it resolves paths and opens /proc entries with no more
 * power than the step (a root step's /proc/1/root stays out of its reach).
 * Copying the step's fds and memory checks the permitted set (real
 * credentials), which the step's empty one is a subset of. Capabilities are
 * per thread; the rest of stepbox keeps its own.
 */
int sup_drop_caps(void)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &hdr, d) < 0)
		return -errno;
	d[0].effective = d[1].effective = 0;
	d[0].permitted = d[1].permitted = 0; /* for good: nothing to win back */
	d[0].inheritable = d[1].inheritable = 0;
	return syscall(SYS_capset, &hdr, d) < 0 ? -errno : 0;
}

static void serve(struct supervisor *s, struct seccomp_notif *req)
{
	struct call c = {.s = s, .req = req, .tgid = -1};
	if (stepview_open(&c.v, s->listener, req->id, (pid_t)req->pid) < 0) {
		sup_respond(&c, 0, ESRCH);
	} else {
		int nr = req->data.nr;
		if (s->broken) {
			sup_respond(&c, 0, EPERM);
		} else if (nr == SYS_socket && (req->data.args[0] & 0xffffffffu) != AF_UNIX) {
			sup_refuse_socket(&c);
		} else if (nr == SYS_socket || nr == SYS_socketpair) {
			/* without pidfd_getfd: a UNIX datagram socket (harden_filter_notify_nofd)
			 */
			sup_note_denial(&c, OP_NOFD, "a UNIX datagram socket", -1);
			sup_respond(&c, 0, EACCES);
		} else if (sup_setid_make(req)) {
			sup_serve_setid_make(
				&c); /* harden_filter_notify: a file with a set-id bit */
		} else if (nr == SYS_open || nr == SYS_openat || nr == SYS_link ||
			   nr == SYS_linkat || nr == SYS_unlink || nr == SYS_unlinkat) {
			sup_serve_shm(&c); /* Landlock alone (harden_filter_notify*_alone) */
		} else if (nr == NR_LANDLOCK_RESTRICT_SELF) {
			/*
			 * Before the domain exists (supervise_int.h). Under Landlock
			 * alone the command takes the step's own domain after this
			 * filter and before its hardening ones: fewer filters than
			 * the step's is stepbox's own setup. A nested one is copied
			 * before it exists (supervise_nested.c).
			 */
			int filters = sup_step_filters(&c);
			if (filters < 0 || filters >= s->step_filters)
				sup_nested_taken(&c);
			sup_go_on(&c);
		} else if (nr == SYS_prctl) {
			sup_nested_subreaper(&c); /* PR_SET_CHILD_SUBREAPER */
		} else if (nr == SYS_umask) {
			sup_serve_umask(&c); /* the live layer's umask cache */
		} else if (s->prot && sup_guarded(nr)) {
			sup_serve_guard(&c); /* the protected paths, live */
		} else if (nr == SYS_connect || nr == SYS_bind || nr == SYS_sendto ||
			   nr == SYS_sendmsg || nr == SYS_sendmmsg || nr == SYS_listen) {
			sup_serve_net(&c); /* takes req and the pidfd */
		} else if (nr == SYS_access || nr == SYS_faccessat || nr == NR_FACCESSAT2) {
			sup_serve_access(&c); /* Landlock alone (harden_filter_notify*_alone) */
		} else {
			sup_serve_meta(&c);
		}
	}
	stepview_close(&c.v);
	free(c.req);
}

static void *dispatch(void *arg)
{
	struct supervisor *s = arg;
	if (sup_drop_caps() < 0)
		s->broken = true; /* fail closed: every call refused */
	stepview_keep_pidfds(true);
	for (;;) {
		struct pollfd p[2] = {{s->listener, POLLIN, 0}, {s->stop[0], POLLIN, 0}};
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		if (p[0].revents & (POLLHUP | POLLERR | POLLNVAL))
			break; /* every process that had the filter is gone */
		struct seccomp_notif *req = calloc(1, s->sizes.seccomp_notif);
		if (!req)
			break;
		if (ioctl(s->listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0) {
			free(req);
			if (errno == EINTR || errno == ENOENT)
				continue;
			break;
		}
		serve(s, req);
	}
	stepview_keep_pidfds(false);
	sup_performer_stop(s);
	sup_nested_stop(s);
	close(s->listener);
	sup_unref(s);
	return NULL;
}

/* The step's TCP rules, for the connects made for it: 0 or -errno. */
static int copy_tcp_rules(struct supervisor *s, const struct supervise_config *cfg)
{
	s->port_list = cfg->connect_ports && cfg->bind_ports;
	if (s->port_list) {
		s->ports[0] = *cfg->connect_ports;
		s->ports[1] = *cfg->bind_ports;
	}
	if (cfg->net_ruleset >= 0 &&
	    (s->net_ruleset = fcntl(cfg->net_ruleset, F_DUPFD_CLOEXEC, 3)) < 0)
		return -errno;
	return 0;
}

/* Whether a new listener is refused because one holds the chain (EBUSY). */
static bool listener_taken(void)
{
	if (!harden_filtered())
		return false;
	pid_t pid = fork();
	if (pid == 0) {
		struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		struct sock_fprog prog = {1, &allow};
		_exit(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
				      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
					      SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog) < 0 &&
				      errno == EBUSY
			      ? 1
			      : 0);
	}
	int st;
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1;
}

int supervise_probe(struct stepbox_err *err)
{
	struct seccomp_notif_sizes sz;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0) {
		err_set(err, ERR_UNAVAILABLE, errno, "seccomp user notification is missing");
		if (harden_gvisor())
			err_hint(
				err,
				"gVisor (runsc) does not implement seccomp user notification, "
				"which every backend's supervisor needs: run stepbox where Linux "
				"answers the step's calls (a runc or crun container, or the host)");
		else
			err_hint(err, "the supervisor needs Linux 5.6 or newer");
		return -ENOSYS;
	}
	/* a bad pidfd is EBADF; ENOSYS and EPERM come before it is looked at */
	if (syscall(SYS_pidfd_getfd, -1, 0, 0) < 0 && errno == ENOSYS) {
		err_set(err, ERR_UNAVAILABLE, ENOSYS, "pidfd_getfd is missing");
		err_hint(err, "the supervisor needs Linux 5.6 or newer");
		return -ENOSYS;
	}
	if (errno == EPERM) {
		/* not a failure: the supervisor works without it, doing less (nofd_take) */
		err_set(err, ERR_UNAVAILABLE, EPERM,
			"pidfd_getfd is refused here (a container's "
			"seccomp profile: Docker's and containerd's default refuse it)");
		err_hint(err, "the supervisor then re-makes each connect's socket and refuses UNIX "
			      "datagram sockets and listen() under a port list; allow pidfd_getfd "
			      "in the container's seccomp profile for all of it");
		return SUPERVISE_NO_GETFD;
	}
	if (listener_taken()) {
		err_set(err, ERR_UNAVAILABLE, EBUSY,
			"nested in another sandbox whose supervisor "
			"holds this process's seccomp filters (the kernel allows one)");
		err_hint(err, "whatever holds the listener (an outer stepbox, a runtime's "
			      "interception) decides this step's UNIX socket connects and metadata "
			      "changes, by its own rules");
		return SUPERVISE_NESTED;
	}
	return 0;
}

static int copy_ids(int **to, size_t *nto, const int *from, size_t n)
{
	if (n && !(*to = malloc(n * sizeof(int))))
		return -ENOMEM;
	if (n)
		memcpy(*to, from, n * sizeof(int));
	*nto = n;
	return 0;
}

int supervise_start(struct supervisor **out, const struct supervise_config *cfg, int listener,
		    struct stepbox_err *err)
{
	*out = NULL;
	struct supervisor *s = calloc(1, sizeof(*s));
	int r = s ? 0 : -ENOMEM;
	if (!s && cfg->diag_fd >= 0)
		close(cfg->diag_fd);
	if (s) {
		s->listener = listener;
		/*
		 * Linux 6.6+: the dispatcher woken on the CPU of the call it is
		 * sent, which waits for it anyway: no wakeup across CPUs each call
		 * (on a VM an IPI is a VM exit). Older kernels refuse: as before.
		 */
		ioctl(listener, SUP_NOTIF_SET_FLAGS, SUP_NOTIF_SYNC_WAKE_UP);
		s->stop[0] = s->stop[1] = -1;
		s->net_ruleset = -1;
		s->shm_dir = -1;
		s->judge = cfg->judge;
		s->own_netns = cfg->own_netns;
		for (size_t i = 0; i < cfg->nresolvers && i < 4; i++)
			s->resolvers[s->nresolvers++] = cfg->resolvers[i];
		s->host_names = cfg->host_names;
		if (cfg->only_peer) {
			s->peer = *cfg->only_peer;
			s->only_peer = &s->peer;
		}
		s->no_getfd = cfg->no_getfd;
		s->diag = cfg->diag_fd;
		s->refs = 2; /* the owner and the dispatcher */
		pthread_mutex_init(&s->lock, NULL);
	}
	for (size_t i = 0; r == 0 && i < cfg->nwrite; i++)
		r = strv_push(&s->write, cfg->write_dirs[i]);
	for (size_t i = 0; r == 0 && i < cfg->nunix; i++)
		r = strv_push(&s->unix_dirs, cfg->unix_dirs[i]);
	for (size_t i = 0; r == 0 && i < cfg->nread; i++)
		r = strv_push(&s->readable, cfg->read_dirs[i]);
	for (size_t i = 0; r == 0 && i < cfg->nwritable; i++)
		r = strv_push(&s->writable, cfg->writable_dirs[i]);
	for (size_t i = 0; r == 0 && i < cfg->nexec; i++)
		r = strv_push(&s->executable, cfg->exec_dirs[i]);
	s->by_mount = cfg->by_mount;
	if (r == 0)
		r = copy_ids(&s->write_mnt, &s->nwrite_mnt, cfg->write_mnt, cfg->nwrite_mnt);
	if (r == 0)
		r = copy_ids(&s->unix_mnt, &s->nunix_mnt, cfg->unix_mnt, cfg->nunix_mnt);
	if (r == 0)
		r = copy_ids(&s->all_mnt, &s->nall_mnt, cfg->all_mnt, cfg->nall_mnt);
	if (r == 0)
		r = copy_tcp_rules(s, cfg);
	s->prot = cfg->protect;
	s->step_filters = cfg->step_filters;
	s->fs_refer = cfg->fs_refer;
	if (r == 0 && cfg->protect)
		r = sup_performer_start(s, cfg->fs_ruleset);
	if (r == 0 && cfg->shm_dir >= 0 &&
	    (s->shm_dir = fcntl(cfg->shm_dir, F_DUPFD_CLOEXEC, 3)) < 0)
		r = -errno;
	if (r == 0 && syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &s->sizes) < 0)
		r = -errno;
	if (r == 0 && s->sizes.seccomp_notif < sizeof(struct seccomp_notif))
		s->sizes.seccomp_notif = sizeof(struct seccomp_notif);
	if (r == 0 && pipe2(s->stop, O_CLOEXEC) < 0)
		r = -errno;
	if (r == 0 && (r = -pthread_create(&s->thread, NULL, dispatch, s)) == 0) {
		*out = s;
		return 0;
	}
	if (s) {
		if (s->stop[0] >= 0) {
			close(s->stop[0]);
			close(s->stop[1]);
		}
		s->refs = 1;
		sup_unref(s);
	}
	close(listener);
	return err_set(err, ERR_UNAVAILABLE, -r, "start the supervisor");
}

void supervise_stop(struct supervisor *s, const struct denial_sink *sink)
{
	if (!s)
		return;
	close(s->stop[1]);
	pthread_join(s->thread, NULL);
	close(s->stop[0]);
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; sink && i < s->ndenied; i++) {
		const struct sup_denial *d = &s->denied[i];
		if (!d->errnum) {
			sink->add(sink->ctx, d->op, d->program, d->pid, d->path, d->port, d->when);
		} else if (sink->failed) {
			struct denial_failed f = {d->op,
						  d->program,
						  d->pid,
						  d->path ? d->path : "",
						  d->path2 ? d->path2 : "",
						  d->errnum,
						  d->when};
			sink->failed(sink->ctx, &f);
		}
	}
	pthread_mutex_unlock(&s->lock);
	sup_unref(s);
}
