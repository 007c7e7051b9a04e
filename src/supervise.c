#include "supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <arpa/inet.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <linux/fs.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/seccomp.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "harden.h"
#include "landlock.h"
#include "path.h"
#include "shm.h"
#include "stepview.h"
#include "strv.h"

/* Bounds on what a step can make the supervisor copy or hold. */
#define SUP_MAX_DATA (256u << 10) /* bytes a call may make us hold */
#define SUP_MAX_CONTROL 65536u
#define SUP_MAX_IOV 1024u
#define SUP_MAX_MMSG 1024u
#define SUP_MAX_WORKERS 64u
#define SUP_MAX_NAMES 4096u
#define SUP_MAX_SCM_FDS 253

/* Newer than Debian 12's headers; one number on every architecture. */
#define NR_FCHMODAT2 452
#define NR_SETXATTRAT 463
#define NR_REMOVEXATTRAT 466
#define NR_FILE_SETATTR 469
#define NR_FACCESSAT2 439

/*
 * An abstract name a process of the step bound, and the socket holding it;
 * len 0: any name that socket holds (without pidfd_getfd the kernel binds
 * it, from what the step's memory says by then).
 */
struct sup_name {
	char name[sizeof(((struct sockaddr_un *)0)->sun_path)];
	socklen_t len;
	ino_t ino;
};

/* A refusal, kept until the owner takes it (explain is not thread-safe). */
struct sup_denial {
	enum denial_op op;
	char program[16];
	pid_t pid;
	char *path; /* NULL for a TCP port */
	int port;
};

struct supervisor {
	pthread_mutex_t lock;
	unsigned refs; /* the owner, the dispatcher and each worker */
	int listener;
	int stop[2]; /* the owner closes stop[1] to end the dispatcher */
	struct strv write, unix_dirs;
	struct strv readable, writable, executable; /* Landlock alone's, for access(2) */
	bool by_mount;
	int *write_mnt, *unix_mnt, *all_mnt;
	size_t nwrite_mnt, nunix_mnt, nall_mnt;
	bool own_netns, host_names;
	bool no_getfd; /* pidfd_getfd refused: connects re-made, nothing sent for the step */
	int diag;      /* with it: sock_diag in the step's network namespace (dispatcher only) */
	bool broken; /* its credentials could not be narrowed: refuse everything */
	int net_ruleset;
	int shm_dir;  /* the step's own /dev/shm (Landlock alone), or -1 */
	bool judge;   /* --explain by the tracer: a call let go on is judged here */
	struct sup_denial *denied; /* what was refused, for --explain and the report */
	size_t ndenied, capdenied;
	struct sup_name *names;
	size_t nnames, capnames;
	unsigned workers;
	struct seccomp_notif_sizes sizes;
	pthread_t thread;
};

/* One notification being served. */
struct call {
	struct supervisor *s;
	struct seccomp_notif *req;
	struct stepview v; /* the calling thread, as its own process sees itself */
};

static void sup_unref(struct supervisor *s)
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
		free(s->denied[i].path);
	free(s->denied);
	free(s->names);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* ---- talking to the step ------------------------------------------------ */

static void respond(const struct call *c, long val, int errnum)
{
	struct seccomp_notif_resp resp;
	memset(&resp, 0, sizeof(resp));
	resp.id = c->req->id;
	resp.val = errnum ? 0 : val;
	resp.error = errnum ? -errnum : 0;
	/* ENOENT: the step gave up waiting (it was killed); nothing to tell */
	while (ioctl(c->s->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno == EINTR)
		;
}

static bool beneath_any(const struct strv *dirs, const char *path)
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
static bool allowed_place(const struct call *c, int fd, const char *path, bool unix_too)
{
	const struct supervisor *s = c->s;
	int id = s->by_mount ? mount_id(fd) : -1;
	if (s->by_mount && has_id(s->all_mnt, s->nall_mnt, id))
		return has_id(s->write_mnt, s->nwrite_mnt, id) ||
		       (unix_too && has_id(s->unix_mnt, s->nunix_mnt, id));
	/* not the namespace's: a host file the step was given (fds 0-2), by host path */
	return beneath_any(&s->write, path) || (unix_too && beneath_any(&s->unix_dirs, path));
}

static void note_denial(const struct call *c, enum denial_op op, const char *path, int port)
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
	pthread_mutex_lock(&s->lock);
	if (s->ndenied < DENIAL_KEEP &&
	    strv_grow(&s->denied, &s->capdenied, s->ndenied, sizeof(*s->denied), 16) == 0) {
		struct sup_denial *d = &s->denied[s->ndenied];
		d->op = op;
		d->pid = c->v.tid;
		d->port = port;
		snprintf(d->program, sizeof(d->program), "%s", comm);
		d->path = path ? strdup(path) : NULL;
		if (d->path || !path)
			s->ndenied++;
	}
	pthread_mutex_unlock(&s->lock);
}

/* ---- sockets ------------------------------------------------------------ */

/* One message of a send, or the address of a connect, copied from the step. */
struct net_msg {
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int target;         /* pinned pathname socket the address now names, or -1 */
	char *data;
	size_t len;
	char *control;
	size_t controllen;
	int *fds;           /* our copies of SCM_RIGHTS fds, closed after */
	size_t nfds, capfds;
	uint64_t len_addr;  /* sendmmsg: where the step reads msg_len */
};

struct net_op {
	struct call c;      /* req owned by the op */
	int sock;           /* our copy of the step's socket, or the one we made */
	int install;        /* without pidfd_getfd: the step's fd that sock replaces, or -1 */
	bool install_cloexec;
	int mem;            /* sendmmsg: the step's memory, to answer msg_len */
	int flags;
	bool tcp_rules;     /* perform in a thread under the step's TCP rules */
	bool sigpipe;       /* the step did not ask for MSG_NOSIGNAL */
	struct net_msg *m;
	size_t nm;
};

static void msg_release(struct net_msg *m)
{
	if (m->target >= 0)
		close(m->target);
	for (size_t i = 0; i < m->nfds; i++)
		close(m->fds[i]);
	free(m->fds);
	free(m->data);
	free(m->control);
}

static void op_free(struct net_op *op)
{
	for (size_t i = 0; i < op->nm; i++)
		msg_release(&op->m[i]);
	free(op->m);
	if (op->sock >= 0)
		close(op->sock);
	if (op->mem >= 0)
		close(op->mem);
	stepview_close(&op->c.v);
	free(op->c.req);
	free(op);
}

static int sock_domain(int fd)
{
	int d = -1;
	socklen_t l = sizeof(d);
	return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &d, &l) < 0 ? -errno : d;
}

/* The inode of the socket bound to an abstract name in our network namespace. */
static ino_t abstract_holder(const char *name, socklen_t len)
{
	int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return 0;
	struct {
		struct nlmsghdr h;
		struct unix_diag_req r;
	} req = {
		.h = {sizeof(req), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, 1, 0},
		.r = {.sdiag_family = AF_UNIX, .udiag_states = ~0u, .udiag_show = UDIAG_SHOW_NAME},
	};
	ino_t found = 0;
	if (send(nl, &req, sizeof(req), 0) != (ssize_t)sizeof(req)) {
		close(nl);
		return 0;
	}
	char buf[16384] __attribute__((aligned(8)));
	for (bool done = false; !done && !found;) {
		ssize_t n = recv(nl, buf, sizeof(buf), 0);
		if (n <= 0)
			break;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
				done = true;
				break;
			}
			struct unix_diag_msg *m = NLMSG_DATA(h);
			struct rtattr *a = (struct rtattr *)(m + 1);
			int rl = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
			for (; RTA_OK(a, rl); a = RTA_NEXT(a, rl)) {
				size_t al = RTA_PAYLOAD(a);
				if (a->rta_type == UNIX_DIAG_NAME && al == (size_t)len &&
				    memcmp(RTA_DATA(a), name, al) == 0)
					found = m->udiag_ino;
			}
		}
	}
	close(nl);
	return found;
}

/*
 * An abstract name may be reached when a process of the step bound it and a
 * socket of the step still holds it (a host process may take a name the step
 * let go of). In a network namespace of its own every name is the step's.
 */
static bool abstract_ok(struct supervisor *s, const char *name, socklen_t len)
{
	if (s->own_netns)
		return true;
	ino_t held = abstract_holder(name, len);
	bool ok = false;
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; held && !ok && i < s->nnames; i++)
		ok = s->names[i].ino == held &&
		     (s->names[i].len == 0 ||
		      (s->names[i].len == len && memcmp(s->names[i].name, name, len) == 0));
	pthread_mutex_unlock(&s->lock);
	return ok;
}

static void add_name(struct supervisor *s, const char *name, socklen_t len, ino_t ino)
{
	pthread_mutex_lock(&s->lock);
	if (s->nnames < SUP_MAX_NAMES &&
	    strv_grow(&s->names, &s->capnames, s->nnames, sizeof(*s->names), 16) == 0) {
		struct sup_name *n = &s->names[s->nnames++];
		n->len = len;
		memcpy(n->name, name, len);
		n->ino = ino;
	}
	pthread_mutex_unlock(&s->lock);
}

static void remember_name(struct supervisor *s, int sock)
{
	struct sockaddr_un a;
	socklen_t al = sizeof(a);
	struct stat st;
	if (getsockname(sock, (struct sockaddr *)&a, &al) < 0 || fstat(sock, &st) < 0 ||
	    al <= offsetof(struct sockaddr_un, sun_path) + 1 || a.sun_path[0] != '\0')
		return;
	add_name(s, a.sun_path, al - (socklen_t)offsetof(struct sockaddr_un, sun_path), st.st_ino);
}

/*
 * Decide where one message or connect may go, on our copy of its address.
 * A pathname is resolved as the step would, the socket pinned, checked, and
 * the address rewritten to /proc/self/fd/<pin>: what we checked is what we
 * reach. 0, or the errno the step gets.
 */
static int decide(struct net_op *op, struct net_msg *m, int domain)
{
	if (domain != AF_UNIX || m->addrlen <= offsetof(struct sockaddr_un, sun_path) ||
	    m->addr.ss_family != AF_UNIX)
		return 0; /* no unix address: the kernel judges it on our copy */
	if (m->addrlen > sizeof(struct sockaddr_un))
		return EINVAL; /* as unix_validate_addr says, before anything reads it */
	struct sockaddr_un *un = (struct sockaddr_un *)&m->addr;
	size_t plen = m->addrlen - offsetof(struct sockaddr_un, sun_path);
	if (un->sun_path[0] == '\0') {
		/* a socket we make is in our network namespace, not the step's own */
		if (op->install >= 0 && op->c.s->own_netns) {
			note_denial(&op->c, OP_NOFD, "a connect to an abstract socket in the step's "
				    "own network namespace", -1);
			return EACCES;
		}
		if (abstract_ok(op->c.s, un->sun_path, (socklen_t)plen))
			return 0;
		char shown[sizeof(un->sun_path) + 1] = "@";
		memcpy(shown + 1, un->sun_path + 1, plen - 1);
		shown[plen] = '\0';
		note_denial(&op->c, OP_CONNECT, shown, -1);
		return EPERM;
	}
	char path[sizeof(un->sun_path) + 1];
	memcpy(path, un->sun_path, plen);
	path[plen] = '\0';
	int fd = stepview_resolve(&op->c.v, AT_FDCWD, path, true);
	if (fd < 0)
		return -fd;
	struct stat st;
	char where[PATH_MAX];
	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		close(fd);
		return ECONNREFUSED; /* what connecting to a non-socket gives */
	}
	bool known = stepview_held_path(fd, where, sizeof(where)) == 0;
	if (!known || !allowed_place(&op->c, fd, where, true)) {
		close(fd);
		note_denial(&op->c, OP_CONNECT, known ? where : path, -1);
		return EACCES;
	}
	m->target = fd;
	memset(un->sun_path, 0, sizeof(un->sun_path));
	int n = snprintf(un->sun_path, sizeof(un->sun_path), "/proc/self/fd/%d", fd);
	m->addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)n + 1);
	return 0;
}

/*
 * Copy the step's iovecs into one buffer of at most *budget bytes, which it
 * spends. More than that: a stream sends the first *budget bytes (a short
 * write, as a full socket buffer gives), a datagram is EMSGSIZE.
 */
static int read_iov(const struct call *c, uint64_t iov_addr, uint64_t iovlen, bool stream,
		    size_t *budget, struct net_msg *m)
{
	if (iovlen > SUP_MAX_IOV)
		return -EMSGSIZE;
	struct iovec *iov = calloc(iovlen ? iovlen : 1, sizeof(*iov));
	if (!iov)
		return -ENOMEM;
	int r = stepview_read(&c->v, iov_addr, iov, iovlen * sizeof(*iov));
	size_t total = 0;
	for (size_t i = 0; r == 0 && i < iovlen; i++) {
		size_t room = *budget - total;
		if (iov[i].iov_len > room && !stream)
			r = -EMSGSIZE;
		iov[i].iov_len = iov[i].iov_len > room ? room : iov[i].iov_len;
		total += iov[i].iov_len;
	}
	if (r == 0 && !(m->data = malloc(total ? total : 1)))
		r = -ENOMEM;
	size_t at = 0;
	for (size_t i = 0; r == 0 && i < iovlen; i++) {
		r = stepview_read(&c->v, (uint64_t)(uintptr_t)iov[i].iov_base, m->data + at, iov[i].iov_len);
		at += iov[i].iov_len;
	}
	m->len = total;
	*budget -= total;
	free(iov);
	return r;
}

/* Copy the control data, replacing the step's SCM_RIGHTS fds by our copies. */
static int read_control(const struct call *c, uint64_t addr, uint64_t len, struct net_msg *m)
{
	if (!addr || !len)
		return 0;
	if (len > SUP_MAX_CONTROL)
		return -ENOBUFS;
	if (!(m->control = calloc(1, len)))
		return -ENOMEM;
	m->controllen = len;
	int r = stepview_read(&c->v, addr, m->control, len);
	struct msghdr h = {.msg_control = m->control, .msg_controllen = len};
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&h); r == 0 && cm; cm = CMSG_NXTHDR(&h, cm)) {
		/* the step wrote cmsg_len: it must lie within what was copied, as
		 * the kernel's __scm_send checks, or it is EINVAL */
		size_t at = (size_t)((char *)cm - m->control);
		if (cm->cmsg_len < sizeof(*cm) || cm->cmsg_len > len - at)
			return -EINVAL;
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (n > SUP_MAX_SCM_FDS)
			return -EINVAL; /* the kernel's SCM_MAX_FD */
		int *fds = (int *)CMSG_DATA(cm);
		for (size_t i = 0; r == 0 && i < n; i++) {
			if (strv_grow(&m->fds, &m->capfds, m->nfds, sizeof(int), n) < 0) {
				r = -ENOMEM;
				break;
			}
			int ours = stepview_fd(&c->v, (uint64_t)(unsigned)fds[i]);
			if (ours < 0) {
				r = ours;
				break;
			}
			m->fds[m->nfds++] = ours;
			fds[i] = ours;
		}
	}
	return r;
}

/* One struct msghdr of the step's into m. */
static int read_msghdr(const struct call *c, uint64_t addr, bool stream, size_t *budget,
		       struct net_msg *m)
{
	struct msghdr h;
	int r = stepview_read(&c->v, addr, &h, sizeof(h));
	if (r < 0)
		return r;
	if (h.msg_name && h.msg_namelen) {
		if (h.msg_namelen > sizeof(m->addr))
			return -EINVAL;
		m->addrlen = h.msg_namelen;
		if ((r = stepview_read(&c->v, (uint64_t)(uintptr_t)h.msg_name, &m->addr, h.msg_namelen)) < 0)
			return r;
	}
	if ((r = read_iov(c, (uint64_t)(uintptr_t)h.msg_iov, h.msg_iovlen, stream, budget, m)) < 0)
		return r;
	return read_control(c, (uint64_t)(uintptr_t)h.msg_control, h.msg_controllen, m);
}

static ssize_t send_one(const struct net_op *op, const struct net_msg *m)
{
	struct iovec iov = {m->data, m->len};
	struct msghdr h = {
		.msg_name = m->addrlen ? (void *)&m->addr : NULL,
		.msg_namelen = m->addrlen,
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = m->control,
		.msg_controllen = m->controllen,
	};
	/* never a SIGPIPE for us: the step gets it when it asked for it */
	return sendmsg(op->sock, &h, op->flags | MSG_NOSIGNAL);
}

/*
 * Without pidfd_getfd: the socket we made takes the place of the step's, as
 * dup2 (SECCOMP_ADDFD_FLAG_SETFD). 0 (also with the step's own socket, where
 * nothing is to be put), or the errno.
 */
static int install_sock(const struct net_op *op)
{
	struct seccomp_notif_addfd add = {
		.id = op->c.req->id, .flags = SECCOMP_ADDFD_FLAG_SETFD,
		.srcfd = (uint32_t)op->sock, .newfd = (uint32_t)op->install,
		.newfd_flags = op->install_cloexec ? O_CLOEXEC : 0,
	};
	/* the ioctl returns the fd it installed (newfd): only -1 is a failure */
	return op->install < 0 || ioctl(op->c.s->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add) >= 0
		       ? 0
		       : errno;
}

/* Perform the call on our copies and answer the step. */
static void perform(struct net_op *op)
{
	int nr = op->c.req->data.nr;
	long val = 0;
	int e = 0;
	if (nr == SYS_connect || nr == SYS_bind) {
		const struct net_msg *m = &op->m[0];
		if ((nr == SYS_connect ? connect : bind)(op->sock, (const struct sockaddr *)&m->addr,
							 m->addrlen) < 0)
			e = errno;
		int ie = e == 0 || e == EINPROGRESS ? install_sock(op) : 0;
		e = ie ? ie : e;
		/* refused by the step's port rules, which this thread obeys */
		if (e == EACCES && op->tcp_rules && m->addrlen >= sizeof(struct sockaddr_in))
			note_denial(&op->c, nr == SYS_connect ? OP_CONNECT : OP_BIND, NULL,
				    ntohs(((const struct sockaddr_in *)&m->addr)->sin_port));
	} else if (nr == SYS_sendmmsg) {
		size_t sent = 0;
		for (; sent < op->nm; sent++) {
			ssize_t n = send_one(op, &op->m[sent]);
			if (n < 0) {
				e = errno;
				break;
			}
			unsigned len = (unsigned)n;
			if (stepview_write(&op->c.v, op->mem, op->m[sent].len_addr, &len, sizeof(len)) < 0) {
				e = EFAULT;
				break;
			}
		}
		if (sent > 0) { /* as the kernel: a later failure is not reported */
			val = (long)sent;
			e = 0;
		}
	} else {
		ssize_t n = send_one(op, &op->m[0]);
		if (n < 0)
			e = errno;
		val = n;
	}
	if (e == EPIPE && op->sigpipe)
		syscall(SYS_pidfd_send_signal, op->c.v.pidfd, SIGPIPE, NULL, 0);
	respond(&op->c, val, e);
}

static void *worker(void *arg)
{
	struct net_op *op = arg;
	struct supervisor *s = op->c.s;
	/* a TCP connect obeys the step's own rules: the same ruleset, here */
	if (op->tcp_rules && (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
			      landlock_enforce(s->net_ruleset, 0) < 0))
		respond(&op->c, 0, EACCES);
	else
		perform(op);
	op_free(op);
	pthread_mutex_lock(&s->lock);
	s->workers--;
	pthread_mutex_unlock(&s->lock);
	sup_unref(s);
	return NULL;
}

/*
 * The dispatcher never blocks: a connect, and a send on a blocking socket,
 * run on a thread of their own, so one slow peer stalls only its own call
 * and stepbox always gets back to the timeout. A send on a non-blocking
 * socket runs here, with MSG_DONTWAIT whatever the step flips meanwhile.
 * With every worker busy a call is EAGAIN.
 */
static void run_op(struct net_op *op)
{
	int fl = fcntl(op->sock, F_GETFL);
	bool own_thread = op->c.req->data.nr == SYS_connect || op->tcp_rules;
	bool blocking = !(op->flags & MSG_DONTWAIT) && (fl < 0 || !(fl & O_NONBLOCK));
	struct supervisor *s = op->c.s;
	if (!own_thread && !blocking) {
		op->flags |= MSG_DONTWAIT;
		perform(op);
		op_free(op);
		return;
	}
	pthread_mutex_lock(&s->lock);
	bool room = s->workers < SUP_MAX_WORKERS;
	if (room) {
		s->workers++;
		s->refs++;
	}
	pthread_mutex_unlock(&s->lock);
	pthread_t t;
	pthread_attr_t attr;
	if (room && pthread_attr_init(&attr) == 0) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		int r = pthread_create(&t, &attr, worker, op);
		pthread_attr_destroy(&attr);
		if (r == 0)
			return;
	}
	if (room) {
		pthread_mutex_lock(&s->lock);
		s->workers--;
		s->refs--;
		pthread_mutex_unlock(&s->lock);
	}
	respond(&op->c, 0, EAGAIN);
	op_free(op);
}

/*
 * listen(), under a port list: Landlock has no hook for it, and an unbound
 * TCP socket that listens binds an ephemeral port the policy never allowed
 * (the host could then connect in). A bound one was checked when it bound.
 */
static void serve_listen(struct net_op *op, int domain, int backlog)
{
	int e = 0;
	if (domain == AF_INET || domain == AF_INET6) {
		struct sockaddr_storage a;
		socklen_t al = sizeof(a);
		if (getsockname(op->sock, (struct sockaddr *)&a, &al) < 0)
			e = errno;
		else if ((domain == AF_INET ? ((struct sockaddr_in *)&a)->sin_port
					    : ((struct sockaddr_in6 *)&a)->sin6_port) == 0) {
			note_denial(&op->c, OP_BIND, NULL, 0);
			e = EACCES;
		}
	}
	if (e == 0 && listen(op->sock, backlog) < 0)
		e = errno;
	respond(&op->c, 0, e);
	op_free(op);
}

/*
 * Whether a bind of a UNIX socket to addr would take a name of the step's
 * choosing among the host's abstract names, where the policy does not let
 * it (noted for --explain). Such a name is a place host clients connect to:
 * a step there could squat a service's (X11's, a notify socket) and be sent
 * its clients' requests. Only --net allow, where it may listen on TCP too,
 * lets it take one; in a network namespace of its own every name is its
 * own; a name the kernel picks (autobind) cannot be a service's.
 */
static bool squats(struct net_op *op, const struct sockaddr_storage *addr, socklen_t len)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)addr;
	if (op->c.s->own_netns || op->c.s->host_names || addr->ss_family != AF_UNIX ||
	    len <= sizeof(sa_family_t) || len > sizeof(*un) || un->sun_path[0] != '\0')
		return false;
	char shown[sizeof(un->sun_path) + 1] = "@";
	size_t plen = len - offsetof(struct sockaddr_un, sun_path);
	memcpy(shown + 1, un->sun_path + 1, plen - 1);
	shown[plen] = '\0';
	note_denial(&op->c, OP_BIND, shown, -1);
	return true;
}

/* The calling thread's umask (/proc/TID/status), or 022. */
static mode_t step_umask(const struct call *c)
{
	char buf[2048];
	int fd = stepview_proc_open(&c->v, "status", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	const char *u = strstr(buf, "\nUmask:");
	return u ? (mode_t)(strtoul(u + 8, NULL, 8) & 0777) : 022;
}

/*
 * A pathname bind where the step may take no name among the host's abstract
 * ones (squats): left to the kernel, a thread of the step could turn the
 * name it showed into an abstract one before the kernel reads it again. So
 * it is made here, on the step's socket (op->sock), from the copy: in the
 * folder resolved as the step sees it, which must be a place the step may
 * write (as Landlock's MAKE_SOCK or a read-only mount would refuse it), with
 * the step's umask. 0, or the step's errno.
 */
static int bind_path(struct net_op *op, const struct net_msg *m)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)&m->addr;
	char path[sizeof(un->sun_path) + 1], where[PATH_MAX], via[sizeof(un->sun_path)];
	size_t plen = m->addrlen - offsetof(struct sockaddr_un, sun_path);
	memcpy(path, un->sun_path, plen);
	path[plen] = '\0'; /* the kernel's name ends at the first NUL */
	char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return EINVAL;
	if (slash)
		*slash = '\0';
	int dfd = stepview_resolve(&op->c.v, AT_FDCWD, !slash ? "." : path[0] ? path : "/", true);
	if (dfd < 0)
		return -dfd;
	int e = 0;
	if (stepview_held_path(dfd, where, sizeof(where)) < 0) {
		e = EACCES;
	} else if (!allowed_place(&op->c, dfd, where, false)) {
		char shown[PATH_MAX + NAME_MAX + 2];
		snprintf(shown, sizeof(shown), "%s/%s", strcmp(where, "/") ? where : "", name);
		note_denial(&op->c, OP_CREATE, shown, -1);
		e = EACCES;
	} else if (snprintf(via, sizeof(via), "/proc/self/fd/%d/%s", dfd, name) >=
		   (int)sizeof(via)) {
		e = ENAMETOOLONG;
	} else {
		struct sockaddr_un a = {.sun_family = AF_UNIX};
		memcpy(a.sun_path, via, strlen(via) + 1);
		if (bind(op->sock, (const struct sockaddr *)&a, sizeof(a)) < 0)
			e = errno;
	}
	if (e == 0) {
		/* its mode as the step's umask makes it (ours may differ); never through a link */
		mode_t want = 0777 & ~step_umask(&op->c);
		int s = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		if (s >= 0 && fstat(s, &st) == 0 && S_ISSOCK(st.st_mode) &&
		    (st.st_mode & 0777) != want) {
			snprintf(via, sizeof(via), "/proc/self/fd/%d", s);
			chmod(via, want);
		}
		if (s >= 0)
			close(s);
	}
	close(dfd);
	return e;
}

/*
 * Without pidfd_getfd: the supervisor cannot hold the step's socket, so a
 * connect is made on a new socket of the same kind (family, type, protocol,
 * O_NONBLOCK), connected where the same checks allow, and put in place of the
 * step's with SECCOMP_IOCTL_NOTIF_ADDFD (SETFD); options set on the old one
 * before the connect do not follow. A bind is left to the kernel (a name is
 * the only thing it gives, and Landlock judges the rest in the step's
 * context); the socket an abstract bind names is recorded by inode. listen()
 * under a port list cannot be checked (whether the socket is bound needs it)
 * and is refused. 0 with op->sock made; 1: answered; -errno: the step's error.
 */
static int nofd_take(struct net_op *op, int nr, uint64_t fd)
{
	if (nr == SYS_listen) {
		note_denial(&op->c, OP_NOFD, "listen() under a TCP port list", -1);
		return -EACCES;
	}
	struct stepview_sock k;
	int r = stepview_socket(&op->c.v, op->c.s->diag, fd, &k);
	/*
	 * Where the step may take no host abstract name, a bind is made on a
	 * socket of ours, as a connect is, by serve_net: left to the kernel, the
	 * address and the fd are read again, and a UNIX socket with an abstract
	 * name could be swapped in. Not a UNIX autobind (the family alone):
	 * nothing can turn that into a name of the step's choosing.
	 */
	bool unix_bind = nr == SYS_bind && r == 0 && k.family == AF_UNIX;
	const uint64_t *a = (const uint64_t *)op->c.req->data.args;
	if (nr == SYS_bind && !op->c.s->own_netns && !op->c.s->host_names &&
	    !(unix_bind && a[2] == sizeof(sa_family_t))) {
		if (r == 0 && k.bound)
			return -EINVAL;
	} else if (nr == SYS_bind) {
		if (unix_bind)
			add_name(op->c.s, "", 0, (ino_t)k.ino);
		struct seccomp_notif_resp resp = {op->c.req->id, 0, 0,
						  SECCOMP_USER_NOTIF_FLAG_CONTINUE};
		ioctl(op->c.s->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
		return 1;
	}
	if (r == -EPROTONOSUPPORT || (r == 0 && k.family == AF_UNIX &&
				      (k.bound || k.type == SOCK_DGRAM) && !k.state_err)) {
		note_denial(&op->c, OP_NOFD, r < 0 ? "a connect or bind on a socket of a kind "
				    "stepbox cannot re-make" : "a connect of a bound or datagram UNIX socket",
			    -1);
		return -EACCES;
	}
	if (r < 0 || k.state_err)
		return r < 0 ? r : -k.state_err;
	op->sock = socket(k.family, k.type | SOCK_CLOEXEC | (k.nonblock ? SOCK_NONBLOCK : 0),
			  k.protocol);
	if (op->sock < 0)
		return -errno;
	/*
	 * In a network namespace of the step's own, a socket we make lives in
	 * ours, the host's: bound here at once to a name the kernel picks, so
	 * the step cannot bind it to one of its choosing among the host's
	 * abstract names (squatting a host service's).
	 */
	sa_family_t autobind = AF_UNIX;
	if (k.family == AF_UNIX && op->c.s->own_netns &&
	    bind(op->sock, (const struct sockaddr *)&autobind, sizeof(autobind)) < 0)
		return -errno;
	op->install = (int)fd;
	op->install_cloexec = k.cloexec;
	return 0;
}

/* connect, bind, sendto, sendmsg, sendmmsg, listen: copy, decide, perform. */
static void serve_net(struct call *c)
{
	const uint64_t *a = (const uint64_t *)c->req->data.args;
	int nr = c->req->data.nr;
	struct net_op *op = calloc(1, sizeof(*op));
	if (!op) {
		respond(c, 0, ENOMEM);
		return;
	}
	op->c = *c;
	op->sock = -1;
	op->mem = -1;
	op->install = -1;
	/* the op owns the request and pidfd from here */
	c->req = NULL;
	c->v.pidfd = -1;
	int r = 0;
	op->nm = nr == SYS_sendmmsg ? (a[2] < SUP_MAX_MMSG ? a[2] : SUP_MAX_MMSG) : 1;
	if (op->nm == 0) {
		respond(&op->c, 0, 0);
		op_free(op);
		return;
	}
	if (!(op->m = calloc(op->nm, sizeof(*op->m))))
		r = -ENOMEM;
	for (size_t i = 0; op->m && i < op->nm; i++)
		op->m[i].target = -1;
	if (r == 0 && op->c.s->no_getfd && (r = nofd_take(op, nr, a[0])) == 1) {
		op_free(op);
		return;
	} else if (r == 0 && !op->c.s->no_getfd && (op->sock = stepview_fd(&op->c.v, a[0])) < 0) {
		r = op->sock;
	}
	int domain = r == 0 ? sock_domain(op->sock) : -1;
	if (r == 0 && domain < 0)
		r = domain;
	int type = 0;
	socklen_t tl = sizeof(type);
	if (r == 0 && getsockopt(op->sock, SOL_SOCKET, SO_TYPE, &type, &tl) < 0)
		r = -errno;
	bool stream = type == SOCK_STREAM;
	size_t budget = SUP_MAX_DATA;
	if (r == 0 && nr == SYS_listen) {
		serve_listen(op, domain, (int)a[1]);
		return;
	}
	struct net_msg *m = op->m;
	if (r == 0 && (nr == SYS_connect || nr == SYS_bind)) {
		if (a[2] > sizeof(m->addr))
			r = -EINVAL;
		else if ((r = stepview_read(&op->c.v, a[1], &m->addr, a[2])) == 0)
			m->addrlen = (socklen_t)a[2];
	} else if (r == 0 && nr == SYS_sendto) {
		op->flags = (int)a[3];
		if (a[5] > sizeof(m->addr))
			r = -EINVAL;
		else if (a[2] > budget && !stream)
			r = -EMSGSIZE;
		else if (!(m->data = malloc(a[2] > budget ? budget : a[2] ? a[2] : 1)))
			r = -ENOMEM;
		else if ((r = stepview_read(&op->c.v, a[1], m->data, a[2] > budget ? budget : a[2])) == 0 &&
			 (r = stepview_read(&op->c.v, a[4], &m->addr, a[5])) == 0) {
			m->len = a[2] > budget ? budget : a[2];
			m->addrlen = (socklen_t)a[5];
		}
	} else if (r == 0 && nr == SYS_sendmsg) {
		op->flags = (int)a[2];
		r = read_msghdr(&op->c, a[1], stream, &budget, m);
	} else if (r == 0) { /* sendmmsg */
		op->flags = (int)a[3];
		if ((op->mem = stepview_proc_open(&op->c.v, "mem", O_RDWR)) < 0 ||
		    !stepview_waiting(&op->c.v))
			r = op->mem < 0 ? op->mem : -ESRCH;
		for (size_t i = 0; r == 0 && i < op->nm; i++) {
			uint64_t at = a[1] + i * sizeof(struct mmsghdr);
			op->m[i].len_addr = at + offsetof(struct mmsghdr, msg_len);
			r = read_msghdr(&op->c, at, stream, &budget, &op->m[i]);
			/* past the budget: send the messages that fit, as a short sendmmsg */
			if (i > 0 && (r == -EMSGSIZE || (r == 0 && budget == 0 && i + 1 < op->nm))) {
				if (r < 0)
					msg_release(&op->m[i]);
				op->nm = r < 0 ? i : i + 1;
				r = 0;
			}
		}
	}
	op->sigpipe = !(op->flags & MSG_NOSIGNAL);
	if (r == 0 && nr == SYS_bind) {
		/*
		 * An abstract name (or an autobind) is bound here and recorded, so
		 * the step may later connect to it. Any other bind the kernel does
		 * in the step's own context, with its Landlock rules, mounts and
		 * umask: the only thing that could differ from what we read is an
		 * unrecorded abstract name, which then refuses the step's connects.
		 * Where the step may take no host abstract name (squats), no UNIX
		 * bind is left to the kernel: a pathname one is bind_path's.
		 */
		const struct sockaddr_un *un = (const struct sockaddr_un *)&m->addr;
		bool abstract = domain == AF_UNIX && m->addr.ss_family == AF_UNIX &&
				(m->addrlen == sizeof(sa_family_t) ||
				 (m->addrlen > sizeof(sa_family_t) && un->sun_path[0] == '\0'));
		bool restricted = !op->c.s->own_netns && !op->c.s->host_names;
		if (domain == AF_UNIX && squats(op, &m->addr, m->addrlen)) {
			respond(&op->c, 0, EACCES);
		} else if (domain == AF_UNIX && restricted && !abstract) {
			/* what the kernel would refuse is refused here: never left to it */
			bool path = m->addr.ss_family == AF_UNIX && m->addrlen > sizeof(sa_family_t) &&
				    m->addrlen <= sizeof(struct sockaddr_un);
			int e = path ? bind_path(op, m) : EINVAL;
			respond(&op->c, 0, e ? e : install_sock(op));
		} else if (restricted && domain != AF_UNIX) {
			/*
			 * Left to the kernel, it would look up the fd again: a thread
			 * of the step swapping a UNIX socket into it, with an abstract
			 * name in the address, took a host name. Made here on our copy,
			 * by a worker under the step's own TCP rules.
			 */
			op->tcp_rules = op->c.s->net_ruleset >= 0;
			run_op(op);
			return;
		} else if (!abstract) {
			struct seccomp_notif_resp resp = {op->c.req->id, 0, 0,
							  SECCOMP_USER_NOTIF_FLAG_CONTINUE};
			ioctl(op->c.s->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
		} else if (bind(op->sock, (const struct sockaddr *)&m->addr, m->addrlen) < 0) {
			respond(&op->c, 0, errno);
		} else {
			remember_name(op->c.s, op->sock);
			respond(&op->c, 0, 0);
		}
		op_free(op);
		return;
	}
	for (size_t i = 0; r == 0 && i < op->nm; i++)
		r = -decide(op, &op->m[i], domain);
	if (r < 0) {
		respond(&op->c, 0, -r);
		op_free(op);
		return;
	}
	op->tcp_rules = nr == SYS_connect && op->c.s->net_ruleset >= 0 &&
			(domain == AF_INET || domain == AF_INET6);
	run_op(op);
}

/* ---- metadata (Landlock alone) ------------------------------------------ */

enum meta_kind { M_CHMOD, M_CHOWN, M_TIMES, M_SETXATTR, M_RMXATTR, M_FLAGS, M_FSXATTR, M_SETATTR };

/* Where a metadata call names its object, and what it does. */
struct meta_call {
	enum meta_kind kind;
	int fd_arg;   /* the fd (an fd form), or the dirfd; -1: AT_FDCWD */
	int path_arg; /* the path, or -1 for an fd form */
	bool follow;
	int flags_arg; /* AT_* flags, or -1 */
};

static bool meta_shape(int nr, const uint64_t *a, struct meta_call *m)
{
	*m = (struct meta_call){M_CHMOD, -1, -1, true, -1};
	switch (nr) {
	case SYS_chmod: m->path_arg = 0; return true;
	case SYS_fchmod: m->fd_arg = 0; return true;
	case SYS_fchmodat: m->fd_arg = 0; m->path_arg = 1; return true;
	case NR_FCHMODAT2: m->fd_arg = 0; m->path_arg = 1; m->flags_arg = 3; return true;
	case SYS_chown: m->kind = M_CHOWN; m->path_arg = 0; return true;
	case SYS_lchown: m->kind = M_CHOWN; m->path_arg = 0; m->follow = false; return true;
	case SYS_fchown: m->kind = M_CHOWN; m->fd_arg = 0; return true;
	case SYS_fchownat:
		m->kind = M_CHOWN; m->fd_arg = 0; m->path_arg = 1; m->flags_arg = 4;
		return true;
	case SYS_utime: case SYS_utimes: m->kind = M_TIMES; m->path_arg = 0; return true;
	case SYS_futimesat: m->kind = M_TIMES; m->fd_arg = 0; m->path_arg = 1; return true;
	case SYS_utimensat:
		m->kind = M_TIMES; m->fd_arg = 0; m->path_arg = a[1] ? 1 : -1; m->flags_arg = 3;
		return true;
	case SYS_setxattr: m->kind = M_SETXATTR; m->path_arg = 0; return true;
	case SYS_lsetxattr: m->kind = M_SETXATTR; m->path_arg = 0; m->follow = false; return true;
	case SYS_fsetxattr: m->kind = M_SETXATTR; m->fd_arg = 0; return true;
	case SYS_removexattr: m->kind = M_RMXATTR; m->path_arg = 0; return true;
	case SYS_lremovexattr: m->kind = M_RMXATTR; m->path_arg = 0; m->follow = false; return true;
	case SYS_fremovexattr: m->kind = M_RMXATTR; m->fd_arg = 0; return true;
	case NR_SETXATTRAT:
		m->kind = M_SETXATTR; m->fd_arg = 0; m->path_arg = 1; m->flags_arg = 2;
		return true;
	case NR_REMOVEXATTRAT:
		m->kind = M_RMXATTR; m->fd_arg = 0; m->path_arg = 1; m->flags_arg = 2;
		return true;
	case NR_FILE_SETATTR:
		m->kind = M_SETATTR; m->fd_arg = 0; m->path_arg = 1; m->flags_arg = 4;
		return true;
	case SYS_ioctl:
		m->kind = (unsigned)a[1] == FS_IOC_FSSETXATTR ? M_FSXATTR : M_FLAGS;
		m->fd_arg = 0;
		return true;
	}
	return false;
}

/* Do the call on the object we hold (fd: a real fd for fd forms, else O_PATH). */
static int meta_do(struct call *c, const struct meta_call *mc, int fd, bool is_fd_form,
		   bool is_link)
{
	const uint64_t *a = (const uint64_t *)c->req->data.args;
	int nr = c->req->data.nr;
	char via[64];
	snprintf(via, sizeof(via), "/proc/self/fd/%d", fd);
	int r = 0;
	switch (mc->kind) {
	case M_CHMOD: {
		mode_t mode = (mode_t)(nr == SYS_chmod || nr == SYS_fchmod ? a[1] : a[2]);
		if (is_link)
			return -EOPNOTSUPP; /* a symlink's mode cannot change */
		r = is_fd_form ? fchmod(fd, mode) : chmod(via, mode);
		break;
	}
	case M_CHOWN: {
		int i = nr == SYS_fchownat ? 2 : 1;
		uid_t u = (uid_t)a[i];
		gid_t g = (gid_t)a[i + 1];
		r = is_fd_form ? fchown(fd, u, g) : fchownat(fd, "", u, g, AT_EMPTY_PATH);
		break;
	}
	case M_TIMES: {
		struct timespec ts[2];
		struct timespec *tp = ts;
		uint64_t at = nr == SYS_utime || nr == SYS_utimes ? a[1] : a[2];
		if (!at) {
			tp = NULL;
		} else if (nr == SYS_utime) {
			struct { long actime, modtime; } ub;
			if ((r = stepview_read(&c->v, at, &ub, sizeof(ub))) < 0)
				return r;
			ts[0] = (struct timespec){ub.actime, 0};
			ts[1] = (struct timespec){ub.modtime, 0};
		} else if (nr == SYS_utimes || nr == SYS_futimesat) {
			struct timeval tv[2];
			if ((r = stepview_read(&c->v, at, tv, sizeof(tv))) < 0)
				return r;
			for (int i = 0; i < 2; i++)
				ts[i] = (struct timespec){tv[i].tv_sec, tv[i].tv_usec * 1000};
		} else if ((r = stepview_read(&c->v, at, ts, sizeof(ts))) < 0) {
			return r;
		}
		if (is_fd_form)
			r = futimens(fd, tp);
		else if (is_link)
			r = utimensat(fd, "", tp, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
		else
			r = utimensat(AT_FDCWD, via, tp, 0);
		break;
	}
	case M_SETXATTR:
	case M_RMXATTR: {
		char name[256];
		uint64_t name_at = nr == NR_SETXATTRAT || nr == NR_REMOVEXATTRAT ? a[3] : a[1];
		if ((r = stepview_read_str(&c->v, name_at, name, sizeof(name))) < 0)
			return r == -ENAMETOOLONG ? -ERANGE : r;
		if (is_link)
			return -EPERM; /* user xattrs are for files and folders only */
		if (mc->kind == M_RMXATTR) {
			r = is_fd_form ? fremovexattr(fd, name) : removexattr(via, name);
			break;
		}
		uint64_t val_at = a[2], size = a[3];
		int flags = (int)a[4];
		if (nr == NR_SETXATTRAT) {
			struct { uint64_t value; uint32_t size, flags; } xa;
			if (a[5] < sizeof(xa))
				return -EINVAL;
			if ((r = stepview_read(&c->v, a[4], &xa, sizeof(xa))) < 0)
				return r;
			val_at = xa.value;
			size = xa.size;
			flags = (int)xa.flags;
		}
		if (size > 65536)
			return -E2BIG;
		char *val = malloc(size ? size : 1);
		if (!val)
			return -ENOMEM;
		if ((r = stepview_read(&c->v, val_at, val, size)) == 0)
			r = is_fd_form ? fsetxattr(fd, name, val, size, flags)
				       : setxattr(via, name, val, size, flags);
		free(val);
		break;
	}
	case M_FLAGS: {
		/* inode flags or generation: an int, whichever of these it is */
		unsigned long cmd = (unsigned)a[1];
		if (cmd != FS_IOC_SETFLAGS && cmd != FS_IOC32_SETFLAGS && cmd != FS_IOC_SETVERSION &&
		    cmd != FS_IOC32_SETVERSION)
			return -ENOTTY;
		int v;
		if ((r = stepview_read(&c->v, a[2], &v, sizeof(v))) < 0)
			return r;
		r = ioctl(fd, cmd, &v);
		break;
	}
	case M_FSXATTR: {
		struct fsxattr fx;
		if ((r = stepview_read(&c->v, a[2], &fx, sizeof(fx))) < 0)
			return r;
		r = ioctl(fd, FS_IOC_FSSETXATTR, &fx);
		break;
	}
	case M_SETATTR: {
		char attr[256];
		if (a[3] > sizeof(attr))
			return -E2BIG;
		if ((r = stepview_read(&c->v, a[2], attr, a[3])) < 0)
			return r;
		r = (int)syscall(NR_FILE_SETATTR, fd, "", attr, (size_t)a[3],
				 AT_EMPTY_PATH | (is_link ? AT_SYMLINK_NOFOLLOW : 0));
		break;
	}
	}
	return r < 0 ? -errno : 0;
}

/*
 * The object of an fd form through the step's magic link: O_PATH (for an
 * O_PATH fd of the step's, which pidfd_getfd cannot copy, or without
 * pidfd_getfd at all). An inode-flag ioctl needs an open file: a regular
 * file or folder is opened again through the pinned object, read-only
 * (the flags belong to the inode, not to the open file).
 */
static int nofd_meta_fd(const struct call *c, int stepfd, enum meta_kind kind, bool *fd_form)
{
	char what[32];
	snprintf(what, sizeof(what), "fd/%d", stepfd);
	int fd = stepview_proc_open(&c->v, what, O_PATH);
	*fd_form = false;
	if (fd < 0 || (kind != M_FLAGS && kind != M_FSXATTR))
		return fd == -ENOENT ? -EBADF : fd;
	struct stat st;
	int open_fd = -1, e = ENOTTY;
	if (fstat(fd, &st) < 0) {
		e = errno;
	} else if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
		char via[64];
		snprintf(via, sizeof(via), "/proc/self/fd/%d", fd);
		open_fd = open(via, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		e = errno;
	}
	close(fd);
	*fd_form = open_fd >= 0;
	return open_fd >= 0 ? open_fd : -e;
}

static void serve_meta(struct call *c)
{
	const uint64_t *a = (const uint64_t *)c->req->data.args;
	struct meta_call mc;
	if (!meta_shape(c->req->data.nr, a, &mc)) {
		respond(c, 0, ENOSYS);
		return;
	}
	int flags = mc.flags_arg >= 0 ? (int)a[mc.flags_arg] : 0;
	bool follow = mc.follow && !(flags & AT_SYMLINK_NOFOLLOW);
	char path[PATH_MAX];
	bool fd_form = mc.path_arg < 0;
	int r = 0;
	if (!fd_form && (r = stepview_read_str(&c->v, a[mc.path_arg], path, sizeof(path))) == 0 && !path[0]) {
		/* AT_EMPTY_PATH with "": the dirfd is the object */
		fd_form = (flags & AT_EMPTY_PATH) != 0;
		r = fd_form ? 0 : -ENOENT;
	}
	int fd = -1;
	if (r == 0 && fd_form) {
		/*
		 * fchmod and the other fd forms act on an open file: our copy of
		 * it. A utimensat or fchownat on "" may name an O_PATH fd, which
		 * pidfd_getfd cannot copy: the step's magic link reaches it.
		 */
		fd = c->s->no_getfd ? -EBADF : stepview_fd(&c->v, a[mc.fd_arg]);
		if (fd == -EBADF && (int)a[mc.fd_arg] >= 0 &&
		    (c->s->no_getfd ||
		     (mc.kind != M_CHMOD && mc.kind != M_FLAGS && mc.kind != M_FSXATTR))) {
			fd = nofd_meta_fd(c, (int)a[mc.fd_arg], mc.kind, &fd_form);
		}
		r = fd < 0 ? fd : 0;
		/*
		 * An O_PATH fd copied whole (pidfd_getfd copies those too): named
		 * by "", the kernel acts on it as on a path (fchownat, utimensat),
		 * where an fd call (fchown, futimens) would be EBADF.
		 */
		int fl = r == 0 && mc.path_arg >= 0 ? fcntl(fd, F_GETFL) : 0;
		if (fl > 0 && (fl & O_PATH))
			fd_form = false;
	} else if (r == 0) {
		uint64_t dirfd = mc.fd_arg >= 0 ? a[mc.fd_arg] : (uint64_t)(unsigned)AT_FDCWD;
		fd = stepview_resolve(&c->v, dirfd, path, follow);
		r = fd < 0 ? fd : 0;
	}
	char where[PATH_MAX];
	struct stat st;
	bool known = r == 0 && stepview_held_path(fd, where, sizeof(where)) == 0;
	if (r == 0 && (!known || fstat(fd, &st) < 0 || !allowed_place(c, fd, where, false))) {
		note_denial(c, OP_METADATA, known ? where : fd_form ? "?" : path, -1);
		r = -EACCES;
	}
	/* a set-id bit: on a folder it only passes the group on (notify_setid_rules) */
	int nr = c->req->data.nr;
	mode_t mode = (mode_t)(nr == SYS_chmod || nr == SYS_fchmod ? a[1] : a[2]);
	if (r == 0 && mc.kind == M_CHMOD && (mode & (S_ISUID | S_ISGID)) && !S_ISDIR(st.st_mode)) {
		note_denial(c, OP_SETID, where, -1);
		r = -EPERM;
	}
	if (r == 0)
		r = meta_do(c, &mc, fd, fd_form, S_ISLNK(st.st_mode));
	if (fd >= 0)
		close(fd);
	respond(c, 0, -r);
}

/* Whether an open makes a file with a set-id bit (notify_setid_rules' shape). */
static bool setid_make(const struct seccomp_notif *req)
{
	bool at = req->data.nr == SYS_openat;
	uint64_t flags = req->data.args[at + 1], mode = req->data.args[at + 2];
	return (flags & (O_CREAT | __O_TMPFILE)) && (mode & (S_ISUID | S_ISGID));
}

/* A file made with a set-id bit (notify_setid_rules): refused, and said. */
static void serve_setid_make(struct call *c)
{
	const uint64_t *a = (const uint64_t *)c->req->data.args;
	int nr = c->req->data.nr;
	int path_arg = nr == SYS_openat || nr == SYS_mknodat ? 1 : 0;
	char path[PATH_MAX];
	if (stepview_read_str(&c->v, a[path_arg], path, sizeof(path)) < 0)
		snprintf(path, sizeof(path), "?");
	note_denial(c, OP_SETID, path, -1);
	respond(c, 0, EPERM);
}

/* ---- /dev/shm (Landlock alone) ------------------------------------------ */

/* Let the call go on: the kernel performs it, and Landlock judges it. */
static void go_on(const struct call *c)
{
	struct seccomp_notif_resp resp = {.id = c->req->id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE};
	while (ioctl(c->s->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno == EINTR)
		;
}

/*
 * --explain by the tracer: a call sent here never stops in it, so one let
 * go on is judged here as Landlock will judge it, by the folder it writes
 * in (parent: the folder path lies in), or the file it reads or writes.
 */
static void judge(struct call *c, enum denial_op op, uint64_t dirfd, const char *path,
		  bool parent)
{
	if (!c->s->judge)
		return;
	char dir[PATH_MAX];
	const char *at = path;
	if (parent) {
		const char *slash = strrchr(path, '/');
		if (!slash)
			at = ".";
		else if (slash == path)
			at = "/";
		else
			at = dir, snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	}
	int fd = stepview_resolve(&c->v, dirfd, at, parent);
	char where[PATH_MAX];
	if (fd >= 0 && stepview_held_path(fd, where, sizeof(where)) == 0 &&
	    !(op == OP_READ ? beneath_any(&c->s->readable, where) : allowed_place(c, fd, where, false)))
		note_denial(c, op, where, -1);
	if (fd >= 0)
		close(fd);
}

/* What a file in the step's /dev/shm may be opened with; anything else is Landlock's. */
#define SHM_OPEN_FLAGS                                                                     \
	(O_ACCMODE | O_CREAT | O_EXCL | O_TRUNC | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK |    \
	 O_APPEND | O_NOCTTY | O_LARGEFILE)

/*
 * open, openat, link, linkat, unlink and unlinkat (harden_filter_notify*_alone):
 * on /dev/shm/NAME, performed in the step's own folder from our copy of the
 * path (no second look at the step's memory), the new file with the step's
 * umask and given to the step as its own fd; any other path goes on, and so
 * does every call where the step was granted the host's /dev/shm (no folder).
 */
static void serve_shm(struct call *c)
{
	const uint64_t *a = (const uint64_t *)c->req->data.args;
	int nr = c->req->data.nr;
	bool at = nr == SYS_openat || nr == SYS_linkat || nr == SYS_unlinkat;
	uint64_t dirfd = at ? a[0] : (uint64_t)(unsigned)AT_FDCWD;
	char p1[PATH_MAX], p2[PATH_MAX];
	const char *n1 = NULL, *n2 = NULL;
	bool two = nr == SYS_link || nr == SYS_linkat;
	if (stepview_read_str(&c->v, a[at], p1, sizeof(p1)) == 0 && c->s->shm_dir >= 0)
		n1 = shm_name(p1);
	if (two && stepview_read_str(&c->v, a[at ? 3 : 1], p2, sizeof(p2)) == 0 &&
	    c->s->shm_dir >= 0)
		n2 = shm_name(p2);
	if (nr == SYS_open || nr == SYS_openat) {
		int flags = (int)a[at + 1];
		if (!n1 || (flags & ~SHM_OPEN_FLAGS)) {
			if (flags & O_CREAT)
				judge(c, OP_CREATE, dirfd, p1, true);
			else if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))
				judge(c, OP_WRITE, dirfd, p1, false);
			else
				judge(c, OP_READ, dirfd, p1, false);
			go_on(c);
			return;
		}
		mode_t mode = (mode_t)a[at + 2] & 0777 & ~step_umask(c);
		int fd = openat(c->s->shm_dir, n1, (flags & SHM_OPEN_FLAGS) | O_NOFOLLOW | O_CLOEXEC,
				mode);
		if (fd < 0) {
			respond(c, 0, errno);
			return;
		}
		struct seccomp_notif_addfd add = {
			.id = c->req->id, .srcfd = (uint32_t)fd,
			.newfd_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0,
		};
		int newfd = ioctl(c->s->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
		int e = errno;
		close(fd);
		respond(c, newfd, newfd < 0 ? e : 0);
		return;
	}
	if (two && n1 && n2 && !(nr == SYS_linkat && (a[4] & AT_EMPTY_PATH))) {
		respond(c, 0, linkat(c->s->shm_dir, n1, c->s->shm_dir, n2, 0) < 0 ? errno : 0);
		return;
	}
	if (!two && n1) {
		respond(c, 0, unlinkat(c->s->shm_dir, n1, 0) < 0 ? errno : 0);
		return;
	}
	if (two) {
		/* the new name's folder is where Landlock's rule is met first */
		judge(c, OP_LINK, at ? a[2] : (uint64_t)(unsigned)AT_FDCWD, p2, true);
	} else {
		judge(c, OP_DELETE, dirfd, p1, true);
	}
	go_on(c);
}

/* ---- access (Landlock alone) ------------------------------------------- */

/*
 * Landlock does not mediate access(2): alone, the kernel answers by the
 * file's mode, and calls a file readable that the step cannot open (HOME's
 * ~/.gitconfig). libgit2 and git skip an unreadable config file by asking
 * access(R_OK) first; told "readable", they open it and take the EACCES as
 * fatal (cargo with a git dependency). The answer here is the kernel's own,
 * made with the step's credentials on the object the step names, and
 * EACCES for a right that no grant beneath which the object lies gives.
 * Searching a folder is not a right Landlock restricts. An object with no
 * path (a pipe's magic link) gets the kernel's answer. Nothing is noted as
 * a denial: an access call is a question, the open that may follow is what
 * --explain names.
 */
static void serve_access(struct call *c)
{
	const uint64_t *a = (const uint64_t *)c->req->data.args;
	int nr = c->req->data.nr;
	bool at = nr != SYS_access;
	uint64_t dirfd = at ? a[0] : (uint64_t)(unsigned)AT_FDCWD;
	int mode = (int)(at ? a[2] : a[1]);
	int flags = nr == NR_FACCESSAT2 ? (int)a[3] : 0;
	char path[PATH_MAX];
	int r = stepview_read_str(&c->v, at ? a[1] : a[0], path, sizeof(path));
	if (r == 0 && ((mode & ~(R_OK | W_OK | X_OK)) ||
		       (flags & ~(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))))
		r = -EINVAL;
	int fd = -1;
	if (r == 0 && !path[0] && !(flags & AT_EMPTY_PATH)) {
		r = -ENOENT;
	} else if (r == 0 && !path[0]) {
		/* "" with AT_EMPTY_PATH: the dirfd is the object */
		char what[32];
		snprintf(what, sizeof(what), "fd/%d", (int)dirfd);
		fd = (int)dirfd < 0 ? -EBADF : stepview_proc_open(&c->v, what, O_PATH);
		r = fd == -ENOENT ? -EBADF : fd < 0 ? fd : 0;
	} else if (r == 0) {
		fd = stepview_resolve(&c->v, dirfd, path, !(flags & AT_SYMLINK_NOFOLLOW));
		r = fd < 0 ? fd : 0;
	}
	if (r == 0 && faccessat(fd, "", mode, AT_EMPTY_PATH | (flags & AT_EACCESS)) < 0)
		r = -errno;
	char where[PATH_MAX];
	struct stat st;
	if (r == 0 && mode != F_OK && stepview_held_path(fd, where, sizeof(where)) == 0 &&
	    fstat(fd, &st) == 0 &&
	    (((mode & R_OK) && !beneath_any(&c->s->readable, where)) ||
	     ((mode & W_OK) && !beneath_any(&c->s->writable, where)) ||
	     ((mode & X_OK) && !S_ISDIR(st.st_mode) && !beneath_any(&c->s->executable, where))))
		r = -EACCES;
	if (fd >= 0)
		close(fd);
	respond(c, 0, -r);
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
static int drop_caps_here(void)
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
	struct call c = {s, req, {0}};
	if (stepview_open(&c.v, s->listener, req->id, (pid_t)req->pid) < 0) {
		respond(&c, 0, ESRCH);
	} else {
		int nr = req->data.nr;
		if (s->broken) {
			respond(&c, 0, EPERM);
		} else if (nr == SYS_socket || nr == SYS_socketpair) {
			/* without pidfd_getfd: a UNIX datagram socket (harden_filter_notify_nofd) */
			note_denial(&c, OP_NOFD, "a UNIX datagram socket", -1);
			respond(&c, 0, EACCES);
		} else if ((nr == SYS_open || nr == SYS_openat) && setid_make(req)) {
			serve_setid_make(&c);
		} else if (nr == SYS_open || nr == SYS_openat || nr == SYS_link ||
			   nr == SYS_linkat || nr == SYS_unlink || nr == SYS_unlinkat) {
			serve_shm(&c); /* Landlock alone (harden_filter_notify*_alone) */
		} else if (nr == SYS_creat || nr == SYS_mknod || nr == SYS_mknodat) {
			serve_setid_make(&c); /* only with a set-id bit (harden_filter_notify) */
		} else if (nr == SYS_connect || nr == SYS_bind || nr == SYS_sendto ||
			 nr == SYS_sendmsg || nr == SYS_sendmmsg || nr == SYS_listen) {
			serve_net(&c); /* takes req and the pidfd */
		} else if (nr == SYS_access || nr == SYS_faccessat || nr == NR_FACCESSAT2) {
			serve_access(&c); /* Landlock alone (harden_filter_notify*_alone) */
		} else {
			serve_meta(&c);
		}
	}
	stepview_close(&c.v);
	free(c.req);
}

static void *dispatch(void *arg)
{
	struct supervisor *s = arg;
	if (drop_caps_here() < 0)
		s->broken = true; /* fail closed: every call refused */
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
	close(s->listener);
	sup_unref(s);
	return NULL;
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
			err_hint(err, "gVisor (runsc) does not implement seccomp user notification, "
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
		err_set(err, ERR_UNAVAILABLE, EPERM, "pidfd_getfd is refused here (a container's "
			"seccomp profile: Docker's and containerd's default refuse it)");
		err_hint(err, "the supervisor then re-makes each connect's socket and refuses UNIX "
			      "datagram sockets and listen() under a port list; allow pidfd_getfd "
			      "in the container's seccomp profile for all of it");
		return SUPERVISE_NO_GETFD;
	}
	if (listener_taken()) {
		err_set(err, ERR_UNAVAILABLE, EBUSY, "nested in another sandbox whose supervisor "
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
		s->stop[0] = s->stop[1] = -1;
		s->net_ruleset = -1;
		s->shm_dir = -1;
		s->judge = cfg->judge;
		s->own_netns = cfg->own_netns;
		s->host_names = cfg->host_names;
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
	if (r == 0 && cfg->net_ruleset >= 0 &&
	    (s->net_ruleset = fcntl(cfg->net_ruleset, F_DUPFD_CLOEXEC, 3)) < 0)
		r = -errno;
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
	for (size_t i = 0; sink && i < s->ndenied; i++)
		sink->add(sink->ctx, s->denied[i].op, s->denied[i].program, s->denied[i].pid,
			  s->denied[i].path, s->denied[i].port);
	pthread_mutex_unlock(&s->lock);
	sup_unref(s);
}
