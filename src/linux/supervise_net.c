#include "supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/seccomp.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
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
#include <unistd.h>

#include "landlock.h"
#include "stepview.h"
#include "strv.h"
#include "supervise_int.h"

/*
 * The supervisor's socket calls: connect, bind, sendto, sendmsg, sendmmsg
 * and listen, copied from the step, decided on the copy and performed by
 * the supervisor (supervise.h says what is allowed).
 */

/* Bounds on what a step can make the supervisor copy or hold. */
#define SUP_MAX_DATA (256u << 10) /* bytes a call may make us hold */
#define SUP_MAX_CONTROL 65536u
#define SUP_MAX_IOV 1024u
#define SUP_MAX_MMSG 1024u
#define SUP_MAX_WORKERS 64u
#define SUP_MAX_SCM_FDS 253

/* ---- sockets ------------------------------------------------------------ */

/* One message of a send, or the address of a connect, copied from the step. */
struct net_msg {
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int target; /* pinned pathname socket the address now names, or -1 */
	char *data;
	size_t len;
	char *control;
	size_t controllen;
	int *fds; /* our copies of SCM_RIGHTS fds, closed after */
	size_t nfds, capfds;
	uint64_t len_addr; /* sendmmsg: where the step reads msg_len */
};

struct net_op {
	struct call c; /* req owned by the op */
	int sock;      /* our copy of the step's socket, or the one we made */
	int install;   /* without pidfd_getfd: the step's fd that sock replaces, or -1 */
	bool install_cloexec;
	int mem; /* sendmmsg: the step's memory, to answer msg_len */
	int flags;
	bool tcp_rules; /* perform in a thread under the step's TCP rules */
	bool nested;    /* ... on a keeper's thread (supervise_nested.c) */
	bool sigpipe;   /* the step did not ask for MSG_NOSIGNAL */
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

/* An IP peer: v4, v6, or AF_UNSPEC for none. */
union ip_peer {
	sa_family_t family;
	struct sockaddr_in v4;
	struct sockaddr_in6 v6;
};

/*
 * The IP address m names, v4-mapped ones as v4, in a (AF_UNSPEC when none:
 * a disconnect, or too short), and as text in shown with its port.
 */
static void ip_named(const struct net_msg *m, union ip_peer *a, char *shown, size_t cap, int *port)
{
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&m->addr;
	memset(a, 0, sizeof(*a));
	a->family = AF_UNSPEC;
	snprintf(shown, cap, "an address");
	*port = -1;
	if (m->addrlen >= sizeof(struct sockaddr_in) && m->addr.ss_family == AF_INET) {
		memcpy(&a->v4, &m->addr, sizeof(a->v4));
	} else if (m->addrlen >= sizeof(struct sockaddr_in6) && a6->sin6_family == AF_INET6 &&
		   IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) {
		a->v4.sin_family = AF_INET;
		a->v4.sin_port = a6->sin6_port;
		memcpy(&a->v4.sin_addr, &a6->sin6_addr.s6_addr[12], 4);
	} else if (m->addrlen >= sizeof(struct sockaddr_in6) && a6->sin6_family == AF_INET6) {
		a->v6 = *a6;
	}
	if (a->family == AF_INET) {
		inet_ntop(AF_INET, &a->v4.sin_addr, shown, (socklen_t)cap);
		*port = ntohs(a->v4.sin_port);
	} else if (a->family == AF_INET6) {
		inet_ntop(AF_INET6, &a->v6.sin6_addr, shown, (socklen_t)cap);
		*port = ntohs(a->v6.sin6_port);
	}
}

/*
 * Network by name on the host's loopback: an IP address is allowed only as
 * the proxy's (v4, or v4-mapped on a v6 socket); AF_UNSPEC (a disconnect)
 * names nothing. Anything else is refused, a short address too (the kernel
 * takes a 24-byte sockaddr_in6, RFC 2133's, which ip_named does not read).
 */
static int decide_peer(struct net_op *op, const struct net_msg *m)
{
	const struct sockaddr_in *p = op->c.s->only_peer;
	union ip_peer a;
	char shown[INET6_ADDRSTRLEN];
	int port;
	if (m->addrlen >= sizeof(sa_family_t) && m->addr.ss_family == AF_UNSPEC)
		return 0;
	ip_named(m, &a, shown, sizeof(shown), &port);
	if (a.family == AF_INET && a.v4.sin_port == p->sin_port &&
	    a.v4.sin_addr.s_addr == p->sin_addr.s_addr)
		return 0;
	sup_note_denial(&op->c, OP_HOST, shown, port);
	return EACCES;
}

/*
 * The step's own network namespace has loopback alone (--net none, network
 * by name): a connect anywhere else fails there (ENETUNREACH) whatever we
 * do. Kept as a refusal so that --explain names it; the kernel answers.
 */
static void note_unreachable(struct net_op *op, const struct net_msg *m)
{
	union ip_peer a;
	char shown[INET6_ADDRSTRLEN];
	int port;
	ip_named(m, &a, shown, sizeof(shown), &port);
	bool loopback = a.family == AF_INET ? (ntohl(a.v4.sin_addr.s_addr) >> 24) == 127
					    : IN6_IS_ADDR_LOOPBACK(&a.v6.sin6_addr);
	/* stepbox's resolver, on the addresses the step's resolv.conf names (proxy_dns.c) */
	for (size_t i = 0; port == 53 && i < op->c.s->nresolvers; i++) {
		const struct sockaddr_storage *r = &op->c.s->resolvers[i];
		if (r->ss_family == AF_INET && a.family == AF_INET &&
		    ((const struct sockaddr_in *)r)->sin_addr.s_addr == a.v4.sin_addr.s_addr)
			return;
		if (r->ss_family == AF_INET6 && a.family == AF_INET6 &&
		    memcmp(&((const struct sockaddr_in6 *)r)->sin6_addr, &a.v6.sin6_addr, 16) == 0)
			return;
	}
	if (a.family != AF_UNSPEC && !loopback)
		sup_note_denial(&op->c, OP_HOST, shown, port);
}

/*
 * Decide where one message or connect may go, on our copy of its address.
 * A pathname is resolved as the step would, the socket pinned, checked, and
 * the address rewritten to /proc/self/fd/<pin>: what we checked is what we
 * reach. 0, or the errno the step gets.
 */
static int decide(struct net_op *op, struct net_msg *m, int domain)
{
	if ((domain == AF_INET || domain == AF_INET6) && op->c.s->only_peer && m->addrlen > 0)
		return decide_peer(op, m);
	if ((domain == AF_INET || domain == AF_INET6) && op->c.s->own_netns &&
	    op->c.req->data.nr == SYS_connect)
		note_unreachable(op, m);
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
			sup_note_denial(&op->c, OP_NOFD,
					"a connect to an abstract socket in the "
					"step's own network namespace",
					-1);
			return EACCES;
		}
		if (sup_abstract_ok(op->c.s, un->sun_path, (socklen_t)plen))
			return 0;
		char shown[sizeof(un->sun_path) + 1] = "@";
		memcpy(shown + 1, un->sun_path + 1, plen - 1);
		shown[plen] = '\0';
		sup_note_denial(&op->c, OP_CONNECT, shown, -1);
		return EPERM;
	}
	char path[sizeof(un->sun_path) + 1];
	memcpy(path, un->sun_path, plen);
	path[plen] = '\0';
	int fd = stepview_resolve(&op->c.v, AT_FDCWD, path, true);
	struct stat st;
	/* under the namespaces an ungranted socket is absent: the host's, named */
	if (fd == -ENOENT && op->c.s->by_mount && path[0] == '/' && lstat(path, &st) == 0 &&
	    S_ISSOCK(st.st_mode))
		sup_note_denial(&op->c, OP_CONNECT, path, -1);
	if (fd < 0)
		return -fd;
	char where[PATH_MAX];
	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		close(fd);
		return ECONNREFUSED; /* what connecting to a non-socket gives */
	}
	bool known = stepview_held_path(fd, where, sizeof(where)) == 0;
	if (!known || !sup_allowed_place(&op->c, fd, where, true)) {
		close(fd);
		sup_note_denial(&op->c, OP_CONNECT, known ? where : path, -1);
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
		r = stepview_read(&c->v, (uint64_t)(uintptr_t)iov[i].iov_base, m->data + at,
				  iov[i].iov_len);
		at += iov[i].iov_len;
	}
	m->len = total;
	*budget -= total;
	free(iov);
	return r;
}

/* Copy the control data, replacing the step's SCM_RIGHTS fds by our copies. */
static int read_control(struct call *c, uint64_t addr, uint64_t len, struct net_msg *m)
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
static int read_msghdr(struct call *c, uint64_t addr, bool stream, size_t *budget,
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
		if ((r = stepview_read(&c->v, (uint64_t)(uintptr_t)h.msg_name, &m->addr,
				       h.msg_namelen)) < 0)
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
		.id = op->c.req->id,
		.flags = SECCOMP_ADDFD_FLAG_SETFD,
		.srcfd = (uint32_t)op->sock,
		.newfd = (uint32_t)op->install,
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
		if ((nr == SYS_connect ? connect : bind)(
			    op->sock, (const struct sockaddr *)&m->addr, m->addrlen) < 0)
			e = errno;
		int ie = e == 0 || e == EINPROGRESS ? install_sock(op) : 0;
		e = ie ? ie : e;
		/* refused by the step's port rules, which this thread obeys */
		if (e == EACCES && op->tcp_rules && m->addrlen >= sizeof(struct sockaddr_in))
			sup_note_port(&op->c, nr,
				      ntohs(((const struct sockaddr_in *)&m->addr)->sin_port),
				      op->nested);
	} else if (nr == SYS_sendmmsg) {
		size_t sent = 0;
		for (; sent < op->nm; sent++) {
			ssize_t n = send_one(op, &op->m[sent]);
			if (n < 0) {
				e = errno;
				break;
			}
			unsigned len = (unsigned)n;
			if (stepview_write(&op->c.v, op->mem, op->m[sent].len_addr, &len,
					   sizeof(len)) < 0) {
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
	sup_respond(&op->c, val, e);
}

static void *worker(void *arg)
{
	struct net_op *op = arg;
	struct supervisor *s = op->c.s;
	/* a TCP connect obeys the step's own rules: the same ruleset, here */
	if (op->tcp_rules &&
	    (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || landlock_enforce(s->net_ruleset, 0) < 0))
		sup_respond(&op->c, 0, EACCES);
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
	struct supervisor *s = op->c.s;
	int nr = op->c.req->data.nr;
	/* under the domains the caller's line took: on a thread their keeper starts */
	struct keeper *k = NULL;
	if (sup_nested_keeper(&op->c, &k) < 0) {
		sup_nested_refuse(&op->c, nr == SYS_connect ? "a connect"
					  : nr == SYS_bind  ? "a bind"
							    : "a send");
		op_free(op);
		return;
	}
	bool nested = op->nested = k != NULL;
	bool own_thread = nr == SYS_connect || op->tcp_rules || nested;
	bool blocking = !(op->flags & MSG_DONTWAIT) && (fl < 0 || !(fl & O_NONBLOCK));
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
		int r = nested ? -sup_nested_start(k, worker, op)
			       : pthread_create(&t, &attr, worker, op);
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
	sup_respond(&op->c, 0, EAGAIN);
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
			sup_note_denial(&op->c, OP_BIND, NULL, 0);
			e = EACCES;
		}
	}
	if (e == 0 && listen(op->sock, backlog) < 0)
		e = errno;
	sup_respond(&op->c, 0, e);
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
	sup_note_denial(&op->c, OP_BIND, shown, -1);
	return true;
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
	} else if (!sup_allowed_place(&op->c, dfd, where, false)) {
		char shown[PATH_MAX + NAME_MAX + 2];
		snprintf(shown, sizeof(shown), "%s/%s", strcmp(where, "/") ? where : "", name);
		sup_note_denial(&op->c, OP_CREATE, shown, -1);
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
		mode_t want = 0777 & ~sup_step_umask(&op->c);
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
		sup_note_denial(&op->c, OP_NOFD, "listen() under a TCP port list", -1);
		return -EACCES;
	}
	struct stepview_sock k;
	int r = stepview_socket(&op->c.v, op->c.s->diag, fd, &k);
	/*
	 * Where the step may take no host abstract name, a bind is made on a
	 * socket of ours, as a connect is, by serve_bind: left to the kernel, the
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
			sup_add_name(op->c.s, "", 0, (ino_t)k.ino);
		struct seccomp_notif_resp resp = {op->c.req->id, 0, 0,
						  SECCOMP_USER_NOTIF_FLAG_CONTINUE};
		ioctl(op->c.s->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
		return 1;
	}
	if (r == -EPROTONOSUPPORT ||
	    (r == 0 && k.family == AF_UNIX && (k.bound || k.type == SOCK_DGRAM) && !k.state_err)) {
		sup_note_denial(&op->c, OP_NOFD,
				r < 0 ? "a connect or bind on a socket of a kind "
					"stepbox cannot re-make"
				      : "a connect of a bound or datagram UNIX socket",
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

/* The op that serves c, owning its request and pidfd from here; NULL: answered. */
static struct net_op *net_op_new(struct call *c, int nr, const uint64_t *a)
{
	struct net_op *op = calloc(1, sizeof(*op));
	if (!op) {
		sup_respond(c, 0, ENOMEM);
		return NULL;
	}
	stepview_own_pidfd(&c->v); /* a SIGPIPE is sent through it, from the worker */
	op->c = *c;
	op->sock = -1;
	op->mem = -1;
	op->install = -1;
	/* the op owns the request and the view's fds from here */
	c->req = NULL;
	c->v.pidfd = c->v.root = c->v.cwd = -1;
	op->nm = nr == SYS_sendmmsg ? (a[2] < SUP_MAX_MMSG ? a[2] : SUP_MAX_MMSG) : 1;
	if (op->nm == 0) {
		sup_respond(&op->c, 0, 0);
		op_free(op);
		return NULL;
	}
	op->m = calloc(op->nm, sizeof(*op->m)); /* NULL: net_take's ENOMEM */
	if (!op->m)
		op->nm = 0; /* nothing for op_free to release */
	for (size_t i = 0; op->m && i < op->nm; i++)
		op->m[i].target = -1;
	return op;
}

/*
 * The socket the call is made on (our copy of the step's, or without
 * pidfd_getfd one made by nofd_take), its domain and whether it is a
 * stream. 0; 1: answered; -errno: the step's error.
 */
static int net_take(struct net_op *op, int nr, const uint64_t *a, int *domain, bool *stream)
{
	int r = op->m ? 0 : -ENOMEM;
	if (r == 0 && op->c.s->no_getfd && (r = nofd_take(op, nr, a[0])) == 1)
		return 1;
	else if (r == 0 && !op->c.s->no_getfd && (op->sock = stepview_fd(&op->c.v, a[0])) < 0)
		r = op->sock;
	*domain = r == 0 ? sock_domain(op->sock) : -1;
	if (r == 0 && *domain < 0)
		r = *domain;
	int type = 0;
	socklen_t tl = sizeof(type);
	if (r == 0 && getsockopt(op->sock, SOL_SOCKET, SO_TYPE, &type, &tl) < 0)
		r = -errno;
	*stream = type == SOCK_STREAM;
	return r;
}

/* sendmmsg's messages, and the step's memory, to answer each msg_len. */
static int read_mmsg(struct net_op *op, uint64_t addr, bool stream, size_t *budget)
{
	int r = 0;
	if ((op->mem = stepview_proc_open(&op->c.v, "mem", O_RDWR)) < 0 ||
	    !stepview_waiting(&op->c.v))
		r = op->mem < 0 ? op->mem : -ESRCH;
	for (size_t i = 0; r == 0 && i < op->nm; i++) {
		uint64_t at = addr + i * sizeof(struct mmsghdr);
		op->m[i].len_addr = at + offsetof(struct mmsghdr, msg_len);
		r = read_msghdr(&op->c, at, stream, budget, &op->m[i]);
		/* past the budget: send the messages that fit, as a short sendmmsg */
		if (i > 0 && (r == -EMSGSIZE || (r == 0 && *budget == 0 && i + 1 < op->nm))) {
			if (r < 0)
				msg_release(&op->m[i]);
			op->nm = r < 0 ? i : i + 1;
			r = 0;
		}
	}
	return r;
}

/*
 * Copy what a connect, bind or send names in the step's memory (its
 * address, data and control data) into op's messages. 0 or -errno.
 */
static int net_copy(struct net_op *op, int nr, const uint64_t *a, bool stream)
{
	size_t budget = SUP_MAX_DATA;
	struct net_msg *m = op->m;
	int r = 0;
	if (nr == SYS_connect || nr == SYS_bind) {
		if (a[2] > sizeof(m->addr))
			r = -EINVAL;
		else if ((r = stepview_read(&op->c.v, a[1], &m->addr, a[2])) == 0)
			m->addrlen = (socklen_t)a[2];
	} else if (nr == SYS_sendto) {
		op->flags = (int)a[3];
		if (a[5] > sizeof(m->addr))
			r = -EINVAL;
		else if (a[2] > budget && !stream)
			r = -EMSGSIZE;
		else if (!(m->data = malloc(a[2] > budget ? budget : a[2] ? a[2] : 1)))
			r = -ENOMEM;
		else if ((r = stepview_read(&op->c.v, a[1], m->data,
					    a[2] > budget ? budget : a[2])) == 0 &&
			 (r = stepview_read(&op->c.v, a[4], &m->addr, a[5])) == 0) {
			m->len = a[2] > budget ? budget : a[2];
			m->addrlen = (socklen_t)a[5];
		}
	} else if (nr == SYS_sendmsg) {
		op->flags = (int)a[2];
		r = read_msghdr(&op->c, a[1], stream, &budget, m);
	} else { /* sendmmsg */
		op->flags = (int)a[3];
		r = read_mmsg(op, a[1], stream, &budget);
	}
	return r;
}

/* A bind, its address copied: answered here, by a worker, or left to the kernel. */
static void serve_bind(struct net_op *op, int domain)
{
	/*
	 * An abstract name (or an autobind) is bound here and recorded, so
	 * the step may later connect to it. Any other bind the kernel does
	 * in the step's own context, with its Landlock rules, mounts and
	 * umask: the only thing that could differ from what we read is an
	 * unrecorded abstract name, which then refuses the step's connects.
	 * Where the step may take no host abstract name (squats), no UNIX
	 * bind is left to the kernel: a pathname one is bind_path's.
	 */
	const struct net_msg *m = &op->m[0];
	const struct sockaddr_un *un = (const struct sockaddr_un *)&m->addr;
	bool abstract = domain == AF_UNIX && m->addr.ss_family == AF_UNIX &&
			(m->addrlen == sizeof(sa_family_t) ||
			 (m->addrlen > sizeof(sa_family_t) && un->sun_path[0] == '\0'));
	bool restricted = !op->c.s->own_netns && !op->c.s->host_names;
	struct keeper *k = NULL;
	if (domain == AF_UNIX && squats(op, &m->addr, m->addrlen)) {
		sup_respond(&op->c, 0, EACCES);
	} else if (domain == AF_UNIX && restricted && !abstract &&
		   (sup_nested_keeper(&op->c, &k) < 0 || k)) {
		/* bind_path's folder rules are ours alone (supervise_nested.c) */
		sup_nested_refuse(&op->c, "a UNIX socket's bind");
	} else if (domain == AF_UNIX && restricted && !abstract) {
		/* what the kernel would refuse is refused here: never left to it */
		bool path = m->addr.ss_family == AF_UNIX && m->addrlen > sizeof(sa_family_t) &&
			    m->addrlen <= sizeof(struct sockaddr_un);
		int e = path ? bind_path(op, m) : EINVAL;
		sup_respond(&op->c, 0, e ? e : install_sock(op));
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
		sup_respond(&op->c, 0, errno);
	} else {
		sup_remember_name(op->c.s, op->sock);
		sup_respond(&op->c, 0, 0);
	}
	op_free(op);
}

/* connect, bind, sendto, sendmsg, sendmmsg, listen: copy, decide, perform. */
void sup_serve_net(struct call *c)
{
	const uint64_t *a = (const uint64_t *)c->req->data.args;
	int nr = c->req->data.nr;
	struct net_op *op = net_op_new(c, nr, a);
	if (!op)
		return;
	int domain = -1;
	bool stream = false;
	int r = net_take(op, nr, a, &domain, &stream);
	if (r == 1) {
		op_free(op);
		return;
	}
	if (r == 0 && nr == SYS_listen) {
		serve_listen(op, domain, (int)a[1]);
		return;
	}
	if (r == 0)
		r = net_copy(op, nr, a, stream);
	op->sigpipe = !(op->flags & MSG_NOSIGNAL);
	if (r == 0 && nr == SYS_bind) {
		serve_bind(op, domain);
		return;
	}
	for (size_t i = 0; r == 0 && i < op->nm; i++)
		r = -decide(op, &op->m[i], domain);
	if (r < 0) {
		sup_respond(&op->c, 0, -r);
		op_free(op);
		return;
	}
	op->tcp_rules = nr == SYS_connect && op->c.s->net_ruleset >= 0 &&
			(domain == AF_INET || domain == AF_INET6);
	run_op(op);
}
