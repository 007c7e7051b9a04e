/*
 * proxy_target: what the proxy does with a target a client asked for: the
 * checks (deny, allow, the lookup in a thread, every address it resolves
 * to), the connect to the address it checked, and the refusals, each
 * answered to the client and written as one event.
 */
#include "proxy_int.h"
#include "jsonmem.h"
#include "clock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char *proto_name(enum proxy_proto p)
{
	return p == PP_SOCKS         ? "socks5"
	       : p == PP_HTTP        ? "http"
	       : p == PP_TRANSPARENT ? "transparent"
	       : p == PP_DNS         ? "dns"
				     : "connect";
}

/* Bytes from the step, fit for a log: printable ASCII kept, the rest as \xNN. */
void proxy_shown(const void *in, size_t len, char *out, size_t size)
{
	const unsigned char *b = in;
	size_t o = 0;
	for (size_t i = 0; i < len && o + 5 < size; i++) {
		if (b[i] < 0x20 || b[i] >= 0x7f || b[i] == '\\')
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", b[i]);
		else
			out[o++] = (char)b[i];
	}
	out[o] = '\0';
}

/* One event, a line; past the budget only counted (but the record's end: force). */
static void emit(struct proxy *px, json_t *o, bool force)
{
	if (!o)
		return;
	if (px->cfg->events_fd < 0) {
		json_decref(o);
		return;
	}
	if (px->events >= PROXY_MAX_EVENTS && !force) {
		px->dropped++;
		json_decref(o);
		return;
	}
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!s)
		return;
	size_t n = strlen(s);
	s[n] = '\n'; /* json_dumps' NUL becomes the line's end: one write, one line */
	for (size_t off = 0; off <= n;) {
		ssize_t w = write(px->cfg->events_fd, s + off, n + 1 - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	jsonmem_free(s); /* jansson's, not malloc's (stepbox installs its own) */
	px->events++;
}

static json_t *reached_event(const struct proxy_reached *h)
{
	return json_pack("{s:s, s:s, s:i, s:s, s:I, s:I, s:I}", "event", "reached", "name", h->name,
			 "port", (int)h->port, "addr", h->addr, "up", (json_int_t)h->up, "down",
			 (json_int_t)h->down, "connections", (json_int_t)h->connections);
}

void proxy_events_end(struct proxy *px)
{
	const struct proxy_reached_list *l = &px->reached;
	for (size_t i = 0; i < l->n; i++)
		emit(px, reached_event(&l->v[i]), true);
	if (l->others_hosts)
		emit(px,
		     json_pack("{s:s, s:I, s:I, s:I, s:I}", "event", "reached_others", "hosts",
			       (json_int_t)l->others_hosts, "up", (json_int_t)l->others.up, "down",
			       (json_int_t)l->others.down, "connections",
			       (json_int_t)l->others.connections),
		     true);
	if (px->dropped)
		emit(px,
		     json_pack("{s:s, s:I}", "event", "dropped", "count", (json_int_t)px->dropped),
		     true);
	proxy_reached_free(&px->reached);
	px->dropped = 0;
}

void proxy_event_refused(struct proxy *px, struct proxy_conn *p, const void *name, size_t nlen,
			 const char *why, const char *detail)
{
	/* a missing secret is another process's as often as the step's: a few, then counted */
	if (strcmp(why, "auth") == 0 && ++px->auth_refused > PROXY_AUTH_EVENTS) {
		px->dropped++;
		return;
	}
	char n[1024];
	proxy_shown(name, nlen, n, sizeof(n));
	json_t *o = json_pack("{s:s, s:s, s:s, s:i, s:s?, s:s, s:s, s:f}", "event", "refused",
			      "proto", proto_name(p->proto), "name", n, "port", (int)p->port,
			      "addr", p->addr[0] ? p->addr : NULL, "why", why, "detail", detail,
			      "t", clock_now_s());
	emit(px, o, false);
}

static void add_to(struct proxy_reached *h, uint64_t up, uint64_t down, unsigned long conns)
{
	h->up += up;
	h->down += down;
	h->connections += conns;
}

void proxy_reached_add(struct proxy_reached_list *l, const char *name, unsigned port,
		       const char *addr, uint64_t up, uint64_t down, unsigned long connections)
{
	size_t i = 0, least = 0;
	while (i < l->n && !(l->v[i].port == port && strcmp(l->v[i].name, name) == 0 &&
			     strcmp(l->v[i].addr, addr) == 0))
		i++;
	if (i < l->n)
		return add_to(&l->v[i], up, down, connections);
	struct proxy_reached *v =
		l->n < PROXY_MAX_REACHED ? realloc(l->v, (l->n + 1) * sizeof(*v)) : NULL;
	if (v) {
		l->v = v;
		i = l->n++;
	} else if (l->n == 0) {
		l->others_hosts++;
		return add_to(&l->others, up, down, connections);
	} else {
		/* full: the host that moved the fewest bytes joins the others */
		for (size_t k = 1; k < l->n; k++)
			if (l->v[k].up + l->v[k].down < l->v[least].up + l->v[least].down)
				least = k;
		struct proxy_reached *f = &l->v[least];
		l->others_hosts++;
		if (f->up + f->down >= up + down)
			return add_to(&l->others, up, down, connections);
		add_to(&l->others, f->up, f->down, f->connections);
		i = least;
	}
	struct proxy_reached *h = &l->v[i];
	memset(h, 0, sizeof(*h));
	snprintf(h->name, sizeof(h->name), "%s", name);
	snprintf(h->addr, sizeof(h->addr), "%s", addr);
	h->port = port;
	add_to(h, up, down, connections);
}

void proxy_reached_free(struct proxy_reached_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

void proxy_conn_reached(struct proxy *px, struct proxy_conn *p)
{
	if (px->reached_events < PROXY_MAX_EVENTS) {
		px->reached_events++;
		struct proxy_reached h = {
			.port = p->port, .up = p->up, .down = p->down, .connections = 1};
		snprintf(h.name, sizeof(h.name), "%s", p->name);
		snprintf(h.addr, sizeof(h.addr), "%s", p->addr);
		emit(px, reached_event(&h), true);
		return;
	}
	proxy_reached_add(&px->reached, p->name, p->port, p->addr, p->up, p->down, 1);
}

void proxy_out_add(struct proxy_conn *p, const void *b, size_t n)
{
	if (p->out.off + p->out.len + n > p->out.cap && p->out.off) {
		memmove(p->out.b, p->out.b + p->out.off, p->out.len);
		p->out.off = 0;
	}
	if (p->out.off + p->out.len + n > p->out.cap)
		return; /* our answers are short; a full buffer takes none */
	memcpy(p->out.b + p->out.off + p->out.len, b, n);
	p->out.len += n;
}

/* End the connection once what is queued for the client is sent. */
void proxy_closing(struct proxy *px, struct proxy_conn *p)
{
	if (p->ufd >= 0) {
		close(p->ufd);
		p->ufd = -1;
	}
	p->st = PS_CLOSING;
	p->deadline = px->now + 2000; /* to send the answer, and to read the client's end */
}

static void http_answer(struct proxy *px, struct proxy_conn *p, int code, const char *reason,
			const char *body)
{
	char head[512];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: "
			 "%zu\r\nConnection: close\r\n%s\r\n",
			 code, reason, strlen(body),
			 code == 407 ? "Proxy-Authenticate: Basic realm=\"stepbox\"\r\n" : "");
	proxy_out_add(p, head, (size_t)n);
	proxy_out_add(p, body, strlen(body));
	proxy_closing(px, p);
}

void proxy_socks_reply(struct proxy_conn *p, unsigned char code)
{
	const unsigned char r[10] = {5, code, 0, 1, 0, 0, 0, 0, 0, 0};
	proxy_out_add(p, r, sizeof(r));
}

/*
 * Refuse the target: one event, and the answer each protocol has for it
 * (a tunnel already answered is closed). code: 403, 407, 400, 502, 504.
 */
void proxy_refuse(struct proxy *px, struct proxy_conn *p, const void *name, size_t nlen,
		  const char *why, int code, const char *detail)
{
	if (why)
		proxy_event_refused(px, p, name, nlen, why, detail);
	if (p->st == PS_TLS_PEEK || p->st == PS_TUNNEL || p->st == PS_SNIFF ||
	    p->proto == PP_TRANSPARENT) {
		/* no protocol of ours to answer in: the connection ends */
		p->out.len = 0;
		proxy_closing(px, p);
		return;
	}
	if (p->proto == PP_SOCKS) {
		proxy_socks_reply(p, code == 403 ? 2 : code == 504 ? 4 : code == 502 ? 5 : 1);
		proxy_closing(px, p);
		return;
	}
	char body[1200], n[600];
	proxy_shown(name, nlen, n, sizeof(n));
	snprintf(body, sizeof(body), "stepbox: %s:%u refused: %s\n", n, p->port, detail);
	const char *reason = code == 403   ? "Forbidden"
			     : code == 407 ? "Proxy Authentication Required"
			     : code == 400 ? "Bad Request"
			     : code == 431 ? "Request Header Fields Too Large"
			     : code == 504 ? "Gateway Timeout"
					   : "Bad Gateway";
	http_answer(px, p, code, reason, body);
}

/* a and b equal, in a time that depends on b's length alone. */
bool proxy_ct_equal(const void *a, size_t al, const void *b, size_t bl)
{
	const unsigned char *x = a, *y = b;
	unsigned d = al != bl;
	for (size_t i = 0; i < bl; i++)
		d |= (unsigned)((i < al ? x[i] : 0) ^ y[i]);
	return d == 0;
}

bool proxy_http_auth_ok(struct proxy *px, const char *buf, const struct proxy_req *req)
{
	if (!px->cfg->secret)
		return true;
	if (req->proxy_auth < 0)
		return false;
	struct proxy_span v = req->h[req->proxy_auth].value;
	if (v.len < 6 || strncasecmp(buf + v.off, "basic ", 6) != 0)
		return false;
	return proxy_ct_equal(buf + v.off + 6, v.len - 6, px->auth, strlen(px->auth));
}

static bool is_self(struct proxy *px, const struct sockaddr_storage *sa)
{
	for (size_t i = 0; i < px->nself; i++) {
		const struct sockaddr_storage *s = &px->self[i];
		if (s->ss_family != sa->ss_family)
			continue;
		if (s->ss_family == AF_INET) {
			const struct sockaddr_in *a = (const void *)s, *b = (const void *)sa;
			if (a->sin_port == b->sin_port &&
			    (a->sin_addr.s_addr == INADDR_ANY ||
			     a->sin_addr.s_addr == b->sin_addr.s_addr))
				return true;
		} else if (s->ss_family == AF_INET6) {
			const struct sockaddr_in6 *a = (const void *)s, *b = (const void *)sa;
			if (a->sin6_port == b->sin6_port &&
			    (IN6_IS_ADDR_UNSPECIFIED(&a->sin6_addr) ||
			     memcmp(&a->sin6_addr, &b->sin6_addr, 16) == 0))
				return true;
		}
	}
	return false;
}

static void addr_text(const struct sockaddr_storage *sa, char *out, size_t size)
{
	const void *a = sa->ss_family == AF_INET
				? (const void *)&((const struct sockaddr_in *)sa)->sin_addr
				: (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
	if (!inet_ntop(sa->ss_family, a, out, (socklen_t)size))
		snprintf(out, size, "?");
}

static void set_port(struct sockaddr_storage *sa, unsigned port)
{
	if (sa->ss_family == AF_INET)
		((struct sockaddr_in *)sa)->sin_port = htons((uint16_t)port);
	else
		((struct sockaddr_in6 *)sa)->sin6_port = htons((uint16_t)port);
}

static void rule_text(const struct hostrule *h, char *out, size_t size)
{
	hostrule_format(h, out, size);
	if (h->preset)
		snprintf(out + strlen(out), size - strlen(out), " (of %s)", h->preset);
}

/*
 * Check each address the target stands for, and refuse the whole target if
 * one is denied, is the proxy itself, or is not public unless an address
 * rule lists it. 0 when all pass.
 */
static int check_addrs(struct proxy *px, struct proxy_conn *p)
{
	char d[600], r[300];
	for (size_t i = 0; i < p->naddr; i++) {
		const struct sockaddr *sa = (const struct sockaddr *)&p->addrs[i];
		addr_text(&p->addrs[i], p->addr, sizeof(p->addr));
		const struct hostrule *h = hostrules_deny_addr(px->cfg->deny, sa, p->port);
		if (h) {
			rule_text(h, r, sizeof(r));
			snprintf(d, sizeof(d), "%s is denied by deny_hosts entry '%s'", p->addr, r);
			return proxy_refuse(px, p, p->name, strlen(p->name), "denied", 403, d), -1;
		}
		if (is_self(px, &p->addrs[i])) {
			snprintf(d, sizeof(d), "%s:%u is this proxy: it never chains", p->addr,
				 p->port);
			return proxy_refuse(px, p, p->name, strlen(p->name), "denied", 403, d), -1;
		}
		enum hostrule_addr_class c = hostrule_addr_classify(sa);
		if (c != HOSTRULE_ADDR_PUBLIC &&
		    !hostrules_deny_addr(px->cfg->allow, sa, p->port)) {
			snprintf(d, sizeof(d),
				 "it resolves to %s, a %s address; only an address entry allows "
				 "that: add \"%s\" to hosts",
				 p->addr, hostrule_addr_class_name(c), p->addr);
			return proxy_refuse(px, p, p->name, strlen(p->name), "private_address", 403,
					    d),
			       -1;
		}
	}
	return 0;
}

void proxy_conn_connect_next(struct proxy *px, struct proxy_conn *p, int err)
{
	if (p->ufd >= 0) {
		close(p->ufd);
		p->ufd = -1;
	}
	while (p->ai < p->naddr) {
		struct sockaddr_storage *sa = &p->addrs[p->ai++];
		addr_text(sa, p->addr, sizeof(p->addr));
		int fd = socket(sa->ss_family, SOCK_STREAM, 0);
		if (fd < 0) {
			err = errno;
			continue;
		}
		if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 ||
		    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
			err = errno;
			close(fd);
			continue;
		}
		socklen_t sl = sa->ss_family == AF_INET ? sizeof(struct sockaddr_in)
							: sizeof(struct sockaddr_in6);
		p->ufd = fd;
		if (connect(fd, (struct sockaddr *)sa, sl) == 0) {
			proxy_conn_connected(px, p);
			return;
		}
		if (errno == EINPROGRESS || errno == EINTR) {
			p->st = PS_CONNECTING;
			p->deadline = px->now + px->handshake_ms;
			return;
		}
		err = errno;
		close(fd);
		p->ufd = -1;
	}
	char d[300];
	bool timeout = err == ETIMEDOUT;
	snprintf(d, sizeof(d), "cannot connect to %s: %s", p->addr[0] ? p->addr : "it",
		 strerror(err ? err : EHOSTUNREACH));
	p->addr[0] = '\0';
	proxy_refuse(px, p, p->name, strlen(p->name), NULL, timeout ? 504 : 502, d);
}

void proxy_conn_connected(struct proxy *px, struct proxy_conn *p)
{
	int one = 1;
	setsockopt(p->ufd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	p->connected = true;
	p->last = px->now;
	p->deadline = 0;
	if (p->proto == PP_SOCKS || p->proto == PP_CONNECT) {
		/* answered, then the client's first bytes looked at as a CONNECT's are */
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
		if (p->proto == PP_SOCKS)
			proxy_socks_reply(p, 0);
		else
			proxy_out_add(p, ok, sizeof(ok) - 1);
		p->st = PS_TLS_PEEK;
		p->deadline = px->now + px->handshake_ms;
	} else if (p->proto == PP_TRANSPARENT && p->port != 80) {
		/* as a CONNECT, with nothing to answer: TLS names the same host */
		p->st = PS_TLS_PEEK;
		p->deadline = px->now + px->handshake_ms;
	} else { /* plain HTTP, and port 80 reached directly: every request's Host checked */
		p->st = PS_HTTP;
		p->fwd = 0;
	}
	proxy_conn_advance(px, p);
}

void proxy_conn_resolved(struct proxy *px, struct proxy_conn *p, struct proxy_lookup *lk)
{
	p->lk = NULL;
	if (lk->n <= 0) {
		char d[300];
		snprintf(d, sizeof(d), "the name does not resolve (%s)",
			 lk->n == -ENOENT ? "no such name" : strerror(lk->n ? -lk->n : ENOENT));
		proxy_refuse(px, p, p->name, strlen(p->name), "resolve_failed", 502, d);
		return;
	}
	p->naddr = (size_t)lk->n < PROXY_MAX_ADDRS ? (size_t)lk->n : PROXY_MAX_ADDRS;
	for (size_t i = 0; i < p->naddr; i++) {
		p->addrs[i] = lk->out[i];
		if (p->addrs[i].ss_family != AF_INET && p->addrs[i].ss_family != AF_INET6)
			p->addrs[i].ss_family = AF_INET; /* 0.0.0.0: refused as unspecified */
		set_port(&p->addrs[i], p->port);
	}
	if (check_addrs(px, p) < 0)
		return;
	p->ai = 0;
	proxy_conn_connect_next(px, p, 0);
}

static int resolve_gai(const char *name, struct sockaddr_storage *out, size_t n)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res = NULL;
	int e = getaddrinfo(name, NULL, &hints, &res);
	if (e != 0)
		return e == EAI_NONAME ? -ENOENT : e == EAI_AGAIN ? -EAGAIN : -EIO;
	size_t k = 0;
	for (struct addrinfo *a = res; a && k < n; a = a->ai_next) {
		if ((a->ai_family != AF_INET && a->ai_family != AF_INET6) ||
		    a->ai_addrlen > sizeof(out[k]))
			continue;
		memset(&out[k], 0, sizeof(out[k]));
		memcpy(&out[k], a->ai_addr, a->ai_addrlen);
		k++;
	}
	freeaddrinfo(res);
	return k ? (int)k : -ENOENT;
}

static void *lookup_main(void *arg)
{
	struct proxy_lookup *lk = arg;
	const struct proxy_cfg *cfg = lk->px->cfg;
	lk->n = cfg->resolve ? cfg->resolve(cfg->resolve_ctx, lk->name, lk->out, PROXY_MAX_ADDRS)
			     : resolve_gai(lk->name, lk->out, PROXY_MAX_ADDRS);
	if (lk->n > PROXY_MAX_ADDRS)
		lk->n = PROXY_MAX_ADDRS;
	/* a pointer is shorter than PIPE_BUF: written whole */
	while (write(lk->px->lk_pipe[1], &lk, sizeof(lk)) < 0 && errno == EINTR)
		;
	return NULL;
}

/* Start the lookups waiting for a slot, PROXY_MAX_LOOKUPS threads at most. */
void proxy_conn_start_lookups(struct proxy *px)
{
	for (size_t i = 0; i < px->nconns && px->lookups < PROXY_MAX_LOOKUPS; i++) {
		struct proxy_conn *p = px->conns[i];
		if (p->dead || !p->queued)
			continue;
		p->queued = false;
		struct proxy_lookup *lk = calloc(1, sizeof(*lk));
		pthread_attr_t attr;
		pthread_t t;
		int e = lk ? pthread_attr_init(&attr) : ENOMEM;
		if (e == 0) {
			pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
			pthread_attr_setstacksize(&attr, 256 * 1024);
			lk->px = px;
			lk->p = p;
			snprintf(lk->name, sizeof(lk->name), "%s", p->name);
			e = pthread_create(&t, &attr, lookup_main, lk);
			pthread_attr_destroy(&attr);
		}
		if (e != 0) {
			free(lk);
			proxy_refuse(px, p, p->name, strlen(p->name), NULL, 502,
				     "the proxy cannot start a lookup");
			continue;
		}
		p->lk = lk;
		px->lookups++;
	}
}

/*
 * The target the client asked for, as raw bytes: refuse it, or go on to
 * the lookup (a name) or the connect (an address an address rule allows).
 */
void proxy_check_target(struct proxy *px, struct proxy_conn *p, const char *raw, size_t len,
			unsigned port, bool addr_only)
{
	char d[700], r[300], name[HOSTRULE_NAME_MAX];
	const char *why = NULL;
	struct sockaddr_storage sa;
	p->port = port;
	p->addr[0] = '\0';
	bool lit = len < sizeof(name) && !memchr(raw, '\0', len);
	if (lit) {
		memcpy(name, raw, len);
		name[len] = '\0';
		lit = hostrule_parse_addr(name, port, &sa) == 0;
	}
	if (lit) {
		p->is_addr = true;
		addr_text(&sa, p->name, sizeof(p->name));
		addr_text(&sa, p->addr, sizeof(p->addr));
		if (!hostrules_match_addr(px->cfg->allow, (struct sockaddr *)&sa, port)) {
			snprintf(d, sizeof(d),
				 "an address is reached only when an address entry lists it: add "
				 "\"%s%s%s%s%u\" to hosts, or ask for the host by name",
				 sa.ss_family == AF_INET6 ? "[" : "", p->name,
				 sa.ss_family == AF_INET6 ? "]" : "", ":", port);
			return proxy_refuse(px, p, raw, len, "ip_literal", 403, d);
		}
		p->addrs[0] = sa;
		p->naddr = 1;
		p->ai = 0;
		if (check_addrs(px, p) == 0)
			proxy_conn_connect_next(px, p, 0);
		return;
	}
	if (addr_only)
		return proxy_refuse(px, p, raw, len, "malformed", 400, "not an address");
	if (hostrule_name_normalise(raw, len, name, sizeof(name), &why) < 0) {
		bool ip = strcmp(why, "an IP address written as a name") == 0;
		snprintf(d, sizeof(d), "the name is %s", why);
		return proxy_refuse(px, p, raw, len, ip ? "ip_literal" : "bad_name", ip ? 403 : 400,
				    d);
	}
	snprintf(p->name, sizeof(p->name), "%s", name);
	const struct hostrule *h = hostrules_deny_name(px->cfg->deny, name, port);
	if (h) {
		rule_text(h, r, sizeof(r));
		snprintf(d, sizeof(d), "deny_hosts entry '%s' denies it", r);
		return proxy_refuse(px, p, name, strlen(name), "denied", 403, d);
	}
	if (!hostrules_match_name(px->cfg->allow, name, port)) {
		if (port == 80 || port == 443)
			snprintf(d, sizeof(d), "no hosts entry allows it: add \"%s\"", name);
		else
			snprintf(d, sizeof(d), "no hosts entry allows it: add \"%s:%u\"", name,
				 port);
		return proxy_refuse(px, p, name, strlen(name), "not_listed", 403, d);
	}
	p->st = PS_RESOLVING;
	p->queued = true;
	p->deadline = px->now + px->handshake_ms;
	proxy_conn_start_lookups(px);
}

void proxy_conn_transparent(struct proxy *px, struct proxy_conn *p)
{
	p->proto = PP_TRANSPARENT;
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	const char *name = NULL;
	if (getsockname(p->cfd, (struct sockaddr *)&sa, &sl) == 0 && sa.ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&sa;
		p->port = ntohs(in->sin_port);
		name = proxy_dns_map_name(&px->dns, (const uint8_t *)&in->sin_addr);
	}
	if (name) {
		proxy_check_target(px, p, name, strlen(name), p->port, false);
		return;
	}
	char a[64], d[300];
	addr_text(&sa, a, sizeof(a));
	snprintf(p->addr, sizeof(p->addr), "%s", a);
	snprintf(d, sizeof(d), "a connection to %s:%u, an address stepbox's resolver did not give",
		 a, p->port);
	proxy_refuse(px, p, a, strlen(a), "not_resolved", 403, d);
}

/* ---- the step's resolver (transparent mode, proxy_dns.c) ---------------- */

/* Whether the hosts allow name on one of the ports the proxy listens for. */
static bool allowed(const struct proxy *px, const char *name)
{
	for (size_t i = 0; i < px->nports; i++)
		if (hostrules_match_name(px->cfg->allow, name, px->ports[i]))
			return true;
	return false;
}

/* The answer to one query (its length, 0: none), a name refused said. */
static size_t decide(struct proxy *px, const uint8_t *b, size_t len, uint8_t *out, size_t cap)
{
	struct proxy_dns_query q;
	int rcode = proxy_dns_parse(b, len, &q);
	if (rcode < 0)
		return 0;
	if (rcode > 0)
		return proxy_dns_answer(b, &q, rcode, NULL, out, cap);
	char name[HOSTRULE_NAME_MAX], d[600];
	const char *why = NULL;
	/* the event's connection: none, a lookup of the name */
	struct proxy_conn ev = {.proto = PP_DNS};
	struct sockaddr_storage sa;
	if (hostrule_parse_addr(q.name, 0, &sa) == 0 ||
	    hostrule_name_normalise(q.name, strlen(q.name), name, sizeof(name), &why) < 0) {
		snprintf(d, sizeof(d), "the name is %s", why ? why : "an IP address");
		proxy_event_refused(px, &ev, q.name, strlen(q.name), "bad_name", d);
		return proxy_dns_answer(b, &q, PROXY_DNS_NXDOMAIN, NULL, out, cap);
	}
	if (hostrules_deny_name(px->cfg->deny, name, 0)) {
		proxy_event_refused(px, &ev, name, strlen(name), "denied",
				    "a lookup of a name deny_hosts denies");
		return proxy_dns_answer(b, &q, PROXY_DNS_NXDOMAIN, NULL, out, cap);
	}
	if (!allowed(px, name)) {
		snprintf(d, sizeof(d),
			 "a lookup by a client that resolves names itself; no hosts entry "
			 "allows it: add \"%s\"",
			 name);
		proxy_event_refused(px, &ev, name, strlen(name), "not_listed", d);
		return proxy_dns_answer(b, &q, PROXY_DNS_NXDOMAIN, NULL, out, cap);
	}
	if (q.qtype != PROXY_DNS_TYPE_A) /* AAAA, HTTPS, MX...: none, so the client asks for A */
		return proxy_dns_answer(b, &q, 0, NULL, out, cap);
	uint8_t addr[4];
	if (proxy_dns_map_addr(&px->dns, name, addr) < 0)
		return proxy_dns_answer(b, &q, PROXY_DNS_SERVFAIL, NULL, out, cap);
	return proxy_dns_answer(b, &q, 0, addr, out, cap);
}

void proxy_dns_stream(struct proxy *px, struct proxy_conn *p)
{
	while (!p->dead && p->in.len >= 2) {
		const uint8_t *b = (const uint8_t *)p->in.b + p->in.off;
		size_t len = (size_t)b[0] << 8 | b[1];
		if (len == 0 || len > 512) {
			p->dead = true;
			return;
		}
		if (p->in.len < 2 + len)
			return; /* the rest of it comes */
		struct proxy_buf *o = &p->out;
		if (o->off && o->off + o->len + 2 + 512 > o->cap) {
			memmove(o->b, o->b + o->off, o->len);
			o->off = 0;
		}
		if (o->off + o->len + 2 + 512 > o->cap)
			return; /* the answers before it go out first */
		uint8_t *a = (uint8_t *)o->b + o->off + o->len;
		size_t m = decide(px, b + 2, len, a + 2, 512);
		if (m == 0) {
			p->dead = true; /* not a query: no answer to give */
			return;
		}
		a[0] = (uint8_t)(m >> 8);
		a[1] = (uint8_t)m;
		o->len += 2 + m;
		p->in.off += 2 + len;
		p->in.len -= 2 + len;
		if (p->in.len == 0)
			p->in.off = 0;
		p->last = px->now;
		p->deadline = px->now + px->handshake_ms; /* the next one, or the close */
	}
}

void proxy_dns_serve(struct proxy *px, int fd)
{
	/* a few at a time: the connections are served between */
	for (int k = 0; k < 64; k++) {
		uint8_t b[512], out[512];
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(fd, b, sizeof(b), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return;
		size_t m = decide(px, b, (size_t)n, out, sizeof(out));
		if (m)
			sendto(fd, out, m, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&from,
			       fl);
	}
}
