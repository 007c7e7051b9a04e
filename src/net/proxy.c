/*
 * proxy: the event loop (poll(2), one thread, every socket nonblocking),
 * each connection's I/O with backpressure (a side is read only while the
 * other side's buffer has room), the timeouts, and the proxy's process:
 * spawn and stop. The protocols are proxy_proto.c's, the checks
 * proxy_target.c's, the parsers proxy_http.c's, proxy_socks.c's and
 * proxy_tls.c's.
 */
#include "proxy.h"
#include "fdpass.h"
#include "proxy_int.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#ifdef __APPLE__
extern char **environ; /* unistd.h declares it on Linux (_GNU_SOURCE) */
#endif
#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0 /* macOS: SO_NOSIGPIPE is set on each socket instead */
#endif

unsigned long long proxy_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000 + (unsigned long long)ts.tv_nsec / 1000000;
}

static int fd_setup(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return -errno;
#ifdef SO_NOSIGPIPE
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one));
#endif
	return 0;
}

static void base64(const unsigned char *in, size_t n, char *out, size_t size)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;
	for (size_t i = 0; i < n && o + 5 < size; i += 3) {
		unsigned v = (unsigned)in[i] << 16;
		if (i + 1 < n)
			v |= (unsigned)in[i + 1] << 8;
		if (i + 2 < n)
			v |= in[i + 2];
		out[o++] = tab[v >> 18 & 63];
		out[o++] = tab[v >> 12 & 63];
		out[o++] = i + 1 < n ? tab[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? tab[v & 63] : '=';
	}
	out[o] = '\0';
}

/* In the buffer ready to go upstream; up_pending: and in the pipe after it. */
static size_t up_buffered(const struct proxy_conn *p)
{
	return p->st == PS_TUNNEL ? p->in.len : p->st == PS_HTTP ? p->fwd : 0;
}

static size_t up_pending(const struct proxy_conn *p)
{
	return up_buffered(p) + (p->st == PS_TUNNEL ? p->upp.held : 0);
}

/* For the client: the pipe's bytes, then the buffer's (our answers come after). */
static size_t down_pending(const struct proxy_conn *p)
{
	return p->dnp.held + p->out.len;
}

/* Every byte the connection holds, either way (pump: whether a round moved any). */
static size_t held(const struct proxy_conn *p)
{
	return p->in.len + p->upp.held + down_pending(p);
}

#ifdef __linux__
#define SPLICE_FLAGS (SPLICE_F_MOVE | SPLICE_F_NONBLOCK)

/*
 * The pipe of a bulk direction (pp->bulk) once its buffer b is empty, made
 * while fewer than PROXY_PIPES_MAX are open: true when it is there.
 */
static bool pipe_ready(struct proxy *px, struct proxy_pipe *pp, const struct proxy_buf *b)
{
	if (pp->open || !pp->bulk || pp->off || b->len || px->pipes >= PROXY_PIPES_MAX)
		return pp->open;
	int fd[2];
	if (pipe2(fd, O_NONBLOCK | O_CLOEXEC) < 0)
		return false;
	int cap = fcntl(fd[1], F_SETPIPE_SZ, PROXY_PIPE_SIZE);
	if (cap < 0)
		cap = fcntl(fd[1], F_GETPIPE_SZ);
	size_t size = cap > 0 ? (size_t)cap : 65536;
	*pp = (struct proxy_pipe){.r = fd[0], .w = fd[1], .cap = size, .open = true, .bulk = true};
	px->pipes++;
	return true;
}

static void pipe_close(struct proxy *px, struct proxy_pipe *pp);

/*
 * From fd into the pipe, only ever when it is empty (so nothing means fd
 * has nothing). A socket splice cannot read (EINVAL), or a filter that
 * refuses it: the pipe goes, and the buffer takes the next read.
 */
static ssize_t pipe_in(struct proxy *px, struct proxy_pipe *pp, int fd)
{
	ssize_t n = splice(fd, NULL, pp->w, NULL, pp->cap, SPLICE_FLAGS);
	if (n > 0)
		pp->held += (size_t)n;
	if (n < 0 && (errno == EINVAL || errno == ENOSYS || errno == EPERM)) {
		pipe_close(px, pp);
		pp->off = true;
		errno = EAGAIN;
	}
	return n;
}

static ssize_t pipe_out(struct proxy_pipe *pp, int fd)
{
	ssize_t n = splice(pp->r, NULL, fd, NULL, pp->held, SPLICE_FLAGS);
	if (n > 0)
		pp->held -= (size_t)n;
	return n;
}
#else
static bool pipe_ready(struct proxy *px, struct proxy_pipe *pp, const struct proxy_buf *b)
{
	(void)px, (void)pp, (void)b;
	return false; /* no splice: every byte through the buffers */
}

static ssize_t pipe_in(struct proxy *px, struct proxy_pipe *pp, int fd)
{
	(void)px, (void)pp, (void)fd;
	errno = ENOSYS;
	return -1;
}

static ssize_t pipe_out(struct proxy_pipe *pp, int fd)
{
	(void)pp, (void)fd;
	errno = ENOSYS;
	return -1;
}
#endif

static void pipe_close(struct proxy *px, struct proxy_pipe *pp)
{
	if (!pp->open)
		return;
	close(pp->r);
	close(pp->w);
	pp->open = false;
	pp->held = 0;
	px->pipes--;
}

static bool relaying(const struct proxy_conn *p)
{
	return p->st == PS_TLS_PEEK || p->st == PS_TUNNEL || p->st == PS_HTTP;
}

static bool want_client_read(const struct proxy_conn *p)
{
	if (p->st == PS_CLOSING)
		return p->c_shut && !p->c_eof; /* the lingering close: read and drop */
	if (p->c_eof || p->in.len >= p->in.cap || (p->upp.open && p->upp.held))
		return false;
	return p->st <= PS_DNS || relaying(p);
}

static bool want_up_read(const struct proxy_conn *p)
{
	bool room = p->dnp.open ? !p->dnp.held && !p->out.len : p->out.len < p->out.cap;
	return p->ufd >= 0 && p->connected && !p->u_eof && relaying(p) && room;
}

static void conn_free(struct proxy *px, struct proxy_conn *p)
{
	if (p->connected)
		proxy_conn_reached(px, p);
	if (p->lk)
		p->lk->p = NULL;
	if (p->cfd >= 0)
		close(p->cfd);
	if (p->ufd >= 0)
		close(p->ufd);
	pipe_close(px, &p->upp);
	pipe_close(px, &p->dnp);
	px->grown -= (p->in.cap - px->bufsize) + (p->out.cap - px->bufsize);
	free(p->in.b);
	free(p->out.b);
	free(p);
}

/*
 * A tunnel's buffer that a read filled grows to PROXY_GROWN_BUFFER, while
 * all the grown ones together stay under PROXY_GROWN_TOTAL: a bulk
 * transfer then costs a few syscalls a quarter MiB, not one a 17 KiB, and
 * a hundred idle tunnels still hold their small buffers.
 */
static void grow(struct proxy *px, struct proxy_buf *b)
{
	size_t more = PROXY_GROWN_BUFFER - b->cap;
	if (b->cap >= PROXY_GROWN_BUFFER || px->grown + more > PROXY_GROWN_TOTAL)
		return;
	char *nb = realloc(b->b, PROXY_GROWN_BUFFER);
	if (!nb)
		return;
	b->b = nb;
	b->cap = PROXY_GROWN_BUFFER;
	px->grown += more;
}

static void sweep(struct proxy *px)
{
	size_t k = 0;
	for (size_t i = 0; i < px->nconns; i++) {
		if (px->conns[i]->dead)
			conn_free(px, px->conns[i]);
		else
			px->conns[k++] = px->conns[i];
	}
	px->nconns = k;
}

/*
 * Full, where a secret is asked (the host's loopback: another process of
 * the host may connect): the connection that has waited longest without
 * giving it is ended, so that such connections cannot hold every place the
 * step's need. Its place is free after this round's sweep: true when one
 * was ended.
 */
static bool evict_unauthed(struct proxy *px)
{
	struct proxy_conn *v = NULL;
	for (size_t i = 0; px->cfg->secret && i < px->nconns; i++) {
		struct proxy_conn *p = px->conns[i];
		if (!p->dead && !p->authed && (p->st <= PS_SOCKS_REQ || p->st == PS_CLOSING) &&
		    (!v || p->deadline < v->deadline))
			v = p;
	}
	if (v)
		v->dead = true;
	return v != NULL;
}

static void accept_all(struct proxy *px, int lfd, enum proxy_listen kind)
{
	for (;;) {
		if (px->nconns >= px->max_conns && evict_unauthed(px))
			return; /* the next round takes the waiting connection */
		int fd = accept(lfd, NULL, NULL);
		if (fd < 0 && errno == EINTR)
			continue;
		if (fd < 0)
			return;
		struct proxy_conn *p = NULL;
		/* past max_conns a connection is closed at once: an answer, not a wait */
		if (px->nconns < px->max_conns && fd_setup(fd) == 0)
			p = calloc(1, sizeof(*p));
		if (p) {
			p->in.b = malloc(px->bufsize);
			p->out.b = malloc(px->bufsize);
		}
		if (!p || !p->in.b || !p->out.b) {
			if (p) {
				free(p->in.b);
				free(p->out.b);
				free(p);
			}
			close(fd);
			continue;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		p->cfd = fd;
		p->ufd = -1;
		p->in.cap = p->out.cap = px->bufsize;
		p->st = PS_SNIFF;
		p->last = px->now;
		p->deadline = px->now + px->handshake_ms;
		px->conns[px->nconns++] = p;
		if (kind == PROXY_LISTEN_TRANSPARENT) {
			proxy_conn_transparent(px, p);
		} else if (kind == PROXY_LISTEN_DNS_TCP) {
			p->st = PS_DNS;
			p->proto = PP_DNS;
		}
	}
}

static void compact(struct proxy_buf *b)
{
	if (b->off && b->off + b->len >= b->cap) {
		memmove(b->b, b->b + b->off, b->len);
		b->off = 0;
	}
}

static bool again(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

static void read_client(struct proxy *px, struct proxy_conn *p)
{
	if (p->st == PS_CLOSING) {
		char drop[4096];
		ssize_t n = recv(p->cfd, drop, sizeof(drop), 0);
		if (n == 0 || (n < 0 && !again()))
			p->dead = true;
		return;
	}
	ssize_t n;
	if (p->st == PS_TUNNEL && pipe_ready(px, &p->upp, &p->in)) {
		n = pipe_in(px, &p->upp, p->cfd);
	} else {
		compact(&p->in);
		size_t room = p->in.cap - p->in.off - p->in.len;
		n = recv(p->cfd, p->in.b + p->in.off + p->in.len, room, 0);
		if (n > 0 && (size_t)n == room && p->st == PS_TUNNEL) {
			grow(px, &p->in);
			p->upp.bulk = true;
		}
		if (n > 0)
			p->in.len += (size_t)n;
	}
	if (n > 0) {
		p->last = px->now;
	} else if (n == 0) {
		p->c_eof = true;
		if (!relaying(p)) /* it left before its request was whole */
			p->dead = true;
	} else if (!again()) {
		p->dead = true;
	}
}

static void read_up(struct proxy *px, struct proxy_conn *p)
{
	/* what comes back is relayed as it is, in a tunnel and in plain HTTP */
	bool as_is = p->st == PS_TUNNEL || p->st == PS_HTTP;
	ssize_t n;
	if (as_is && pipe_ready(px, &p->dnp, &p->out)) {
		n = pipe_in(px, &p->dnp, p->ufd);
	} else {
		compact(&p->out);
		size_t room = p->out.cap - p->out.off - p->out.len;
		n = recv(p->ufd, p->out.b + p->out.off + p->out.len, room, 0);
		if (n > 0 && (size_t)n == room && as_is) {
			grow(px, &p->out);
			p->dnp.bulk = true;
		}
		if (n > 0)
			p->out.len += (size_t)n;
	}
	if (n > 0) {
		p->down += (unsigned long long)n;
		p->last = px->now;
	} else if (n == 0) {
		p->u_eof = true;
	} else if (!again()) {
		p->dead = true;
	}
}

static void write_up(struct proxy *px, struct proxy_conn *p)
{
	size_t n = up_buffered(p);
	if (!up_pending(p) || p->ufd < 0 || p->u_shut)
		return;
	ssize_t w =
		n ? send(p->ufd, p->in.b + p->in.off, n, MSG_NOSIGNAL) : pipe_out(&p->upp, p->ufd);
	if (w < 0) {
		if (!again())
			p->dead = true;
		return;
	}
	if (n) {
		p->in.off += (size_t)w;
		p->in.len -= (size_t)w;
		if (p->st == PS_HTTP)
			p->fwd -= (size_t)w;
		if (p->in.len == 0)
			p->in.off = 0;
	}
	p->up += (unsigned long long)w;
	p->last = px->now;
}

static void write_client(struct proxy *px, struct proxy_conn *p)
{
	if (!down_pending(p))
		return;
	bool piped = p->dnp.held > 0;
	ssize_t w = piped ? pipe_out(&p->dnp, p->cfd)
			  : send(p->cfd, p->out.b + p->out.off, p->out.len, MSG_NOSIGNAL);
	if (w < 0) {
		if (!again())
			p->dead = true;
		return;
	}
	if (!piped) {
		p->out.off += (size_t)w;
		p->out.len -= (size_t)w;
		if (p->out.len == 0)
			p->out.off = 0;
	}
	p->last = px->now;
}

/* After I/O: pass each end on, and end the connection when both sides have. */
static void settle(struct proxy_conn *p)
{
	if (p->dead)
		return;
	/*
	 * Our answer sent, the client's side is read to its end before the
	 * close: closing with its bytes unread would send a reset, and a reset
	 * can discard the answer before the client reads it.
	 */
	if (p->st == PS_CLOSING) {
		if (down_pending(p) == 0 && !p->c_shut) {
			shutdown(p->cfd, SHUT_WR);
			p->c_shut = true;
		}
		if (p->c_eof && down_pending(p) == 0)
			p->dead = true;
		return;
	}
	if (p->st == PS_TLS_PEEK && (p->c_eof || (p->u_eof && down_pending(p) == 0)))
		p->dead = true;
	if (p->st == PS_DNS && p->c_eof && down_pending(p) == 0) /* every answer sent */
		p->dead = true;
	if (p->st != PS_TUNNEL && p->st != PS_HTTP)
		return;
	if (p->c_eof && up_pending(p) == 0 && !p->u_shut) {
		shutdown(p->ufd, SHUT_WR);
		p->u_shut = true;
	}
	if (p->u_eof && down_pending(p) == 0) {
		if (p->st == PS_HTTP) { /* the server ended: so does the client's connection */
			p->dead = true;
			return;
		}
		if (!p->c_shut) {
			shutdown(p->cfd, SHUT_WR);
			p->c_shut = true;
		}
	}
	if (p->c_eof && p->u_eof && down_pending(p) == 0 && up_pending(p) == 0)
		p->dead = true;
}

/*
 * Move what can move now, and again while a round moves bytes (at most 32
 * rounds, each end read and written once a round, nonblocking): a poll round
 * for each buffer's worth held a transfer to a third of a direct one.
 */
static void pump(struct proxy *px, struct proxy_conn *p)
{
	for (int k = 0; k < 32 && !p->dead; k++) {
		unsigned long long moved = p->up + p->down;
		size_t had = held(p);
		if (k && want_client_read(p))
			read_client(px, p);
		if (k && !p->dead && want_up_read(p))
			read_up(px, p);
		if (!p->dead)
			proxy_conn_advance(px, p);
		if (!p->dead && up_pending(p))
			write_up(px, p);
		if (!p->dead && down_pending(p))
			write_client(px, p);
		if (p->up + p->down == moved && held(p) == had)
			break;
	}
	settle(p);
}

static unsigned long long expiry(const struct proxy *px, const struct proxy_conn *p)
{
	if (p->st != PS_TUNNEL && p->st != PS_HTTP)
		return p->deadline ? p->deadline : p->last + px->idle_ms;
	unsigned lim = px->idle_ms;
	if ((p->c_eof || p->u_eof) && lim > PROXY_HALF_OPEN_MS)
		lim = PROXY_HALF_OPEN_MS;
	unsigned long long e = p->last + lim;
	return p->deadline && p->deadline < e ? p->deadline : e;
}

/* Where each pollfd of a round belongs. */
struct slot {
	struct proxy_conn *p;
	bool up;
};

/* The pollfds of one round: stop, the lookups, the listeners, then the connections. */
static size_t poll_set(struct proxy *px, struct pollfd *pfd, struct slot *slot, int *timeout)
{
	const struct proxy_cfg *cfg = px->cfg;
	size_t n = 0;
	pfd[n++] = (struct pollfd){.fd = cfg->stop_fd, .events = POLLIN};
	pfd[n++] = (struct pollfd){.fd = px->lk_pipe[0], .events = POLLIN};
	for (size_t i = 0; i < cfg->nlisten; i++)
		pfd[n++] = (struct pollfd){.fd = cfg->listen_fds[i], .events = POLLIN};
	unsigned long long next = ~0ULL;
	for (size_t i = 0; i < px->nconns; i++) {
		struct proxy_conn *p = px->conns[i];
		short ce = (short)((want_client_read(p) ? POLLIN : 0) |
				   (down_pending(p) ? POLLOUT : 0));
		short ue = 0;
		if (p->ufd >= 0 && p->st == PS_CONNECTING)
			ue = POLLOUT;
		else if (p->ufd >= 0)
			ue = (short)((want_up_read(p) ? POLLIN : 0) |
				     (up_pending(p) && !p->u_shut ? POLLOUT : 0));
		/* an fd asked nothing is left out: its hang-up would only spin the loop */
		if (ce) {
			slot[n] = (struct slot){p, false};
			pfd[n++] = (struct pollfd){.fd = p->cfd, .events = ce};
		}
		if (ue) {
			slot[n] = (struct slot){p, true};
			pfd[n++] = (struct pollfd){.fd = p->ufd, .events = ue};
		}
		unsigned long long e = expiry(px, p);
		if (e < next)
			next = e;
	}
	*timeout = next == ~0ULL ? -1 : next <= px->now ? 0 : (int)(next - px->now);
	return n;
}

static void on_conn_event(struct proxy *px, struct proxy_conn *p, bool up, short re)
{
	if (p->dead)
		return;
	if (up && p->st == PS_CONNECTING) {
		int e = 0;
		socklen_t el = sizeof(e);
		if (getsockopt(p->ufd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
			e = errno;
		if (e == 0)
			proxy_conn_connected(px, p);
		else
			proxy_conn_connect_next(px, p, e);
		return;
	}
	bool asked_in = up ? want_up_read(p) : want_client_read(p);
	if (re & (POLLIN | POLLHUP | POLLERR)) {
		if (asked_in)
			up ? read_up(px, p) : read_client(px, p);
		else if (re & (POLLHUP | POLLERR))
			p->dead = true;
	}
	if (!p->dead && (re & POLLOUT))
		up ? write_up(px, p) : write_client(px, p);
}

static void lookups_done(struct proxy *px)
{
	struct proxy_lookup *lk;
	while (read(px->lk_pipe[0], &lk, sizeof(lk)) == (ssize_t)sizeof(lk)) {
		px->lookups--;
		if (lk->p && !lk->p->dead)
			proxy_conn_resolved(px, lk->p, lk);
		else if (lk->p)
			lk->p->lk = NULL;
		free(lk);
	}
}

static int serve_loop(struct proxy *px, struct pollfd *pfd, struct slot *slot)
{
	const struct proxy_cfg *cfg = px->cfg;
	for (;;) {
		int timeout;
		px->now = proxy_now_ms();
		size_t n = poll_set(px, pfd, slot, &timeout);
		int r = poll(pfd, (nfds_t)n, timeout);
		if (r < 0 && errno != EINTR)
			return -errno;
		px->now = proxy_now_ms();
		if (r > 0 && pfd[0].revents)
			return 0;
		if (r > 0 && pfd[1].revents)
			lookups_done(px);
		for (size_t i = 0; r > 0 && i < cfg->nlisten; i++) {
			if (!pfd[2 + i].revents)
				continue;
			if (cfg->listen_kind[i] == PROXY_LISTEN_DNS)
				proxy_dns_serve(px, cfg->listen_fds[i]);
			else
				accept_all(px, cfg->listen_fds[i], cfg->listen_kind[i]);
		}
		for (size_t i = 2 + cfg->nlisten; r > 0 && i < n; i++)
			if (pfd[i].revents)
				on_conn_event(px, slot[i].p, slot[i].up, pfd[i].revents);
		for (size_t i = 0; i < px->nconns; i++) {
			struct proxy_conn *p = px->conns[i];
			pump(px, p);
			if (!p->dead && expiry(px, p) <= px->now)
				proxy_conn_timeout(px, p);
			settle(p);
		}
		proxy_conn_start_lookups(px);
		sweep(px);
	}
}

static int setup(struct proxy *px, const struct proxy_cfg *cfg)
{
	px->cfg = cfg;
	px->max_conns = cfg->max_conns ? cfg->max_conns : PROXY_DEFAULT_MAX_CONNS;
	px->bufsize =
		cfg->max_buffer > PROXY_DEFAULT_BUFFER ? cfg->max_buffer : PROXY_DEFAULT_BUFFER;
	if (px->bufsize > 1 << 20)
		px->bufsize = 1 << 20;
	px->idle_ms = cfg->idle_ms ? cfg->idle_ms : PROXY_DEFAULT_IDLE_MS;
	px->handshake_ms = cfg->handshake_ms ? cfg->handshake_ms : PROXY_DEFAULT_HANDSHAKE_MS;
	px->lk_pipe[0] = px->lk_pipe[1] = -1;
	if (!cfg->allow || cfg->nlisten > PROXY_MAX_LISTEN || px->max_conns > 65536)
		return -EINVAL;
	if (cfg->secret) {
		char plain[300];
		int n = snprintf(plain, sizeof(plain), "stepbox:%s", cfg->secret);
		if (n < 0 || (size_t)n >= sizeof(plain))
			return -EINVAL;
		base64((const unsigned char *)plain, (size_t)n, px->auth, sizeof(px->auth));
	}
	for (size_t i = 0; i < cfg->nlisten; i++) {
		socklen_t sl = sizeof(px->self[0]);
		if (fd_setup(cfg->listen_fds[i]) < 0)
			return -errno;
		struct sockaddr_storage *self = &px->self[px->nself];
		if (getsockname(cfg->listen_fds[i], (struct sockaddr *)self, &sl) < 0)
			continue;
		/* the transparent mode's are in the step's namespace: never ours to reach */
		if (cfg->listen_kind[i] == PROXY_LISTEN_PROXY)
			px->nself++;
		else if (cfg->listen_kind[i] == PROXY_LISTEN_TRANSPARENT)
			px->ports[px->nports++] =
				ntohs(self->ss_family == AF_INET6
					      ? ((struct sockaddr_in6 *)self)->sin6_port
					      : ((struct sockaddr_in *)self)->sin_port);
	}
	if (pipe(px->lk_pipe) < 0)
		return -errno;
	if (fd_setup(px->lk_pipe[0]) < 0 || fcntl(px->lk_pipe[1], F_SETFD, FD_CLOEXEC) < 0)
		return -errno;
	px->conns = calloc(px->max_conns, sizeof(*px->conns));
	return px->conns ? 0 : -ENOMEM;
}

int proxy_serve(const struct proxy_cfg *cfg)
{
	struct proxy px = {0};
	int r = setup(&px, cfg);
	size_t maxfd = 2 + cfg->nlisten + 2 * px.max_conns;
	struct pollfd *pfd = r == 0 ? calloc(maxfd, sizeof(*pfd)) : NULL;
	struct slot *slot = pfd ? calloc(maxfd, sizeof(*slot)) : NULL;
	if (r == 0 && !slot)
		r = -ENOMEM;
	if (r == 0)
		r = serve_loop(&px, pfd, slot);
	for (size_t i = 0; i < px.nconns; i++)
		px.conns[i]->dead = true;
	sweep(&px);
	if (cfg->quick_exit) {
		proxy_events_end(&px);
		_exit(r == 0 ? 0 : 1); /* the hosts reached are written */
	}
	/* the lookups still running write to the pipe: wait for each */
	if (px.lk_pipe[0] >= 0)
		fcntl(px.lk_pipe[0], F_SETFL, fcntl(px.lk_pipe[0], F_GETFL) & ~O_NONBLOCK);
	while (px.lookups)
		lookups_done(&px);
	proxy_events_end(&px);
	proxy_dns_map_free(&px.dns);
	if (px.lk_pipe[0] >= 0) {
		close(px.lk_pipe[0]);
		close(px.lk_pipe[1]);
	}
	free(px.conns);
	free(pfd);
	free(slot);
	return r;
}

static bool kept(const struct proxy_cfg *cfg, int fd)
{
	for (size_t i = 0; i < cfg->nlisten; i++)
		if (cfg->listen_fds[i] == fd)
			return true;
	return fd == cfg->events_fd || fd == cfg->stop_fd || (fd == cfg->handoff_fd && fd > 0);
}

/* Every fd from first up (a soft limit raised after they were opened leaves some there). */
/* Every fd from first up: close_range, or one by one to RLIMIT_NOFILE where there is none. */
static void close_above(int first)
{
#if defined(__linux__) && defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
	if (close_range((unsigned)first, ~0U, 0) == 0)
		return;
#endif
	struct rlimit rl;
	int max = 65536;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < (rlim_t)max)
		max = (int)rl.rlim_cur;
	for (int fd = first; fd < max; fd++)
		close(fd);
}

/*
 * In the child: every fd but cfg's closed, stdio on /dev/null. Those below
 * the highest kept one one by one, the rest at once: a loop to
 * RLIMIT_NOFILE (20,000 in a CI shell, a million under systemd) held the
 * proxy's start, and a short step's end, for milliseconds.
 */
static void close_others(const struct proxy_cfg *cfg)
{
	int top = 3;
	for (size_t i = 0; i < cfg->nlisten; i++)
		top = cfg->listen_fds[i] >= top ? cfg->listen_fds[i] + 1 : top;
	top = cfg->events_fd >= top ? cfg->events_fd + 1 : top;
	top = cfg->stop_fd >= top ? cfg->stop_fd + 1 : top;
	top = cfg->handoff_fd >= top ? cfg->handoff_fd + 1 : top;
	for (int fd = 0; fd < top; fd++)
		if (!kept(cfg, fd))
			close(fd);
	close_above(top);
	for (int fd = 0; fd < 3; fd++) {
		if (kept(cfg, fd))
			continue;
		int nul = open("/dev/null", O_RDWR);
		if (nul >= 0 && nul != fd) {
			dup2(nul, fd);
			close(nul);
		}
	}
}

/* Die with the parent (Linux); false when the parent is already gone. */
static bool tie_to_parent(pid_t parent)
{
#ifdef __linux__
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return false;
#endif
	return getppid() == parent;
}

/*
 * The listeners made in the step's network namespace, before it runs, up to
 * the one tagged PROXY_HANDOFF_END; the socket closed. 0 or -errno.
 */
static int take_handoff(struct proxy_cfg *mine, int fd)
{
	static const char tags[] = {PROXY_HANDOFF_TAG, PROXY_HANDOFF_TRANSPARENT,
				    PROXY_HANDOFF_DNS, PROXY_HANDOFF_DNS_TCP,
				    PROXY_HANDOFF_END, '\0'};
	int r = 0;
	while (r == 0) {
		char tag = 0;
		int l = mine->nlisten < PROXY_MAX_LISTEN ? fdpass_recv_any(fd, tags, &tag) : -E2BIG;
		if (l < 0) {
			r = l;
		} else if (tag == PROXY_HANDOFF_END) {
			close(l);
			break;
		} else {
			mine->listen_kind[mine->nlisten] =
				tag == PROXY_HANDOFF_DNS           ? PROXY_LISTEN_DNS
				: tag == PROXY_HANDOFF_DNS_TCP     ? PROXY_LISTEN_DNS_TCP
				: tag == PROXY_HANDOFF_TRANSPARENT ? PROXY_LISTEN_TRANSPARENT
								   : PROXY_LISTEN_PROXY;
			mine->listen_fds[mine->nlisten++] = l;
		}
	}
	close(fd);
	return r;
}

pid_t proxy_spawn(const struct proxy_cfg *cfg, struct stepbox_err *err)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		return err_set(err, ERR_UNAVAILABLE, errno, "cannot start the network proxy");
	if (pid > 0)
		return pid;
	if (!tie_to_parent(parent))
		_exit(1);
#ifdef __linux__
	prctl(PR_SET_NAME, "stepbox-proxy"); /* as ps and /proc show it */
#endif
	signal(SIGPIPE, SIG_IGN);
	/*
	 * None of the caller's variables (its tokens among them: the step was
	 * given only what its policy routes): the proxy parses every byte the
	 * step sends, and needs none of them to resolve and connect.
	 */
	static char *no_env[] = {NULL};
	for (char **e = environ; e && *e; e++)
		memset(*e, 0, strlen(*e)); /* gone from its memory too (and /proc/PID/environ) */
	environ = no_env;
	close_others(cfg);
	struct proxy_cfg mine = *cfg;
	mine.quick_exit = true;
	if (cfg->handoff_fd > 0 && take_handoff(&mine, cfg->handoff_fd) < 0)
		_exit(1);
	if (cfg->confine && cfg->confine(cfg->confine_ctx) < 0)
		_exit(1); /* never serving unconfined when confinement was asked */
	_exit(proxy_serve(&mine) == 0 ? 0 : 1);
}

int proxy_stop(pid_t pid, int stop_fd_write_end)
{
	if (stop_fd_write_end >= 0) {
		while (write(stop_fd_write_end, "x", 1) < 0 && errno == EINTR)
			;
		close(stop_fd_write_end);
	}
	int status = 0;
	/*
	 * It ends within a millisecond or so, and writes its last events (the
	 * hosts reached, for the report) as it ends: on a host that a fork bomb
	 * keeps busy it may take seconds, and killed sooner it would say
	 * nothing. 8 s, then 2 s more of looking, then it is killed.
	 */
#ifdef __linux__
	/* its end, heard at once (a pidfd is readable when the process ends) */
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd >= 0) {
		struct pollfd w = {pfd, POLLIN, 0};
		while (poll(&w, 1, 8000) < 0 && errno == EINTR)
			;
		close(pfd);
	}
#endif
	/* looked at soon, then less often */
	long waited_us = 0;
	for (long step_us = 100; waited_us < 2000000;
	     step_us = step_us < 10000 ? step_us * 2 : step_us) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
		if (r < 0 && errno != EINTR)
			return -errno;
		struct timespec ts = {0, step_us * 1000};
		nanosleep(&ts, NULL);
		waited_us += step_us;
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return -ECHILD;
}
