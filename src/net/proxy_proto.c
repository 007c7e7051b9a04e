/*
 * proxy_proto: a connection's protocol, run on what its buffers hold: the
 * sniff of the first byte, the SOCKS5 and HTTP handshakes, the ClientHello
 * after a CONNECT, and plain HTTP, where every request's head is parsed,
 * its Host checked against the connection's one target, rewritten to
 * origin form and its body framed as it streams.
 */
#include "proxy_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static char *in_data(struct proxy_conn *p)
{
	return p->in.b + p->in.off;
}

static void in_consume(struct proxy_conn *p, size_t n)
{
	p->in.off += n;
	p->in.len -= n;
	if (p->in.len == 0)
		p->in.off = 0;
}

static void malformed(struct proxy *px, struct proxy_conn *p, int code, const char *why)
{
	proxy_refuse(px, p, "", 0, "malformed", code, why);
}

static void sniff(struct proxy *px, struct proxy_conn *p)
{
	unsigned char b0 = (unsigned char)in_data(p)[0];
	if (b0 == 5) {
		p->proto = PP_SOCKS;
		p->st = PS_SOCKS_GREET;
	} else if (b0 == 4) {
		p->proto = PP_SOCKS;
		malformed(px, p, 400, "SOCKS4 is not spoken here: use SOCKS5 (socks5h://)");
	} else {
		p->proto = PP_HTTP;
		p->st = PS_HTTP_HEAD;
	}
}

static void socks_greet(struct proxy *px, struct proxy_conn *p)
{
	struct proxy_socks_greeting g;
	int r = proxy_socks_greeting((const uint8_t *)in_data(p), p->in.len, &g);
	if (r == 0)
		return;
	if (r < 0)
		return malformed(px, p, 400, "a malformed SOCKS5 greeting");
	in_consume(p, (size_t)r);
	unsigned char m = px->cfg->secret ? (g.userpass ? 2 : 0xff) : (g.no_auth ? 0 : 0xff);
	const unsigned char reply[2] = {5, m};
	proxy_out_add(p, reply, sizeof(reply));
	if (m == 0xff) {
		proxy_event_refused(px, p, "", 0, px->cfg->secret ? "auth" : "malformed",
				    px->cfg->secret ? "the client offered no user and password"
						    : "the client offered no method without auth");
		return proxy_closing(px, p);
	}
	p->st = m == 2 ? PS_SOCKS_AUTH : PS_SOCKS_REQ;
}

static void socks_auth(struct proxy *px, struct proxy_conn *p)
{
	struct proxy_socks_auth a;
	int r = proxy_socks_auth((const uint8_t *)in_data(p), p->in.len, &a);
	if (r == 0)
		return;
	if (r < 0)
		return malformed(px, p, 400, "a malformed SOCKS5 user and password");
	const char *s = px->cfg->secret;
	/* both compared, whatever the first gives: the time says nothing */
	bool uok = proxy_ct_equal(a.user, a.ulen, "stepbox", 7);
	bool pok = proxy_ct_equal(a.pass, a.plen, s, strlen(s));
	bool ok = uok && pok;
	in_consume(p, (size_t)r);
	const unsigned char reply[2] = {1, ok ? 0 : 1};
	proxy_out_add(p, reply, sizeof(reply));
	if (!ok) {
		proxy_event_refused(px, p, "", 0, "auth", "a wrong user or password");
		return proxy_closing(px, p);
	}
	p->authed = true;
	p->st = PS_SOCKS_REQ;
}

static void socks_req(struct proxy *px, struct proxy_conn *p)
{
	struct proxy_socks_req q;
	int r = proxy_socks_request((const uint8_t *)in_data(p), p->in.len, &q);
	if (r == 0)
		return;
	if (r == -EPROTO) {
		proxy_socks_reply(p, 8);
		proxy_event_refused(px, p, "", 0, "malformed", "an unknown SOCKS5 address type");
		return proxy_closing(px, p);
	}
	if (r < 0)
		return malformed(px, p, 400, "a malformed SOCKS5 request");
	p->port = q.port;
	if (q.cmd != 1) {
		proxy_socks_reply(p, 7);
		proxy_event_refused(px, p, "", 0, "malformed",
				    q.cmd == 2   ? "SOCKS5 BIND is not allowed"
				    : q.cmd == 3 ? "SOCKS5 UDP ASSOCIATE is not allowed"
						 : "an unknown SOCKS5 command");
		return proxy_closing(px, p);
	}
	char name[256];
	size_t nlen = q.nlen;
	if (q.atyp == 3) {
		memcpy(name, q.name, q.nlen);
	} else {
		inet_ntop(q.atyp == 1 ? AF_INET : AF_INET6, q.addr, name, sizeof(name));
		nlen = strlen(name);
	}
	in_consume(p, (size_t)r);
	proxy_check_target(px, p, name, nlen, q.port, q.atyp != 3);
}

/* The first HTTP request: CONNECT host:port, or a request with an absolute URI. */
static void http_head(struct proxy *px, struct proxy_conn *p)
{
	struct proxy_req req;
	const char *why = NULL;
	const char *b = in_data(p);
	int r = proxy_http_parse(b, p->in.len, &req, &why);
	if (r == 0)
		return;
	if (r < 0)
		return malformed(px, p, r == -E2BIG ? 431 : 400, why);
	bool connect = req.method.len == 7 && memcmp(b, "CONNECT", 7) == 0;
	struct proxy_span auth = req.target, path;
	p->proto = connect ? PP_CONNECT : PP_HTTP;
	if (!connect && proxy_absolute_uri(b + req.target.off, req.target.len, &auth, &path) < 0)
		return malformed(px, p, 400,
				 "a proxy takes CONNECT host:port, or a request to an absolute "
				 "http:// URI (https goes through CONNECT)");
	if (!connect)
		auth.off += req.target.off;
	char host[300];
	size_t hl;
	unsigned port;
	bool br;
	if (proxy_authority(b + auth.off, auth.len, connect ? 0 : 80, host, sizeof(host), &hl,
			    &port, &br) < 0)
		return malformed(px, p, 400,
				 connect ? "CONNECT takes host:port"
					 : "a malformed host in the URI");
	if (!proxy_http_auth_ok(px, b, &req)) {
		p->port = port;
		return proxy_refuse(px, p, host, hl, "auth", 407,
				    "this proxy takes the run's credentials (Proxy-Authorization)");
	}
	p->authed = true;
	if (connect)
		in_consume(p, (size_t)r);
	proxy_check_target(px, p, host, hl, port, false);
}

/*
 * Whether a tunnel's first bytes (not TLS) are HTTP's: a first line (after
 * any empty ones, which servers skip) holding "HTTP/", in any case and
 * whatever else it holds (a server may take a control byte for a space, or
 * keep it in the path). 1 yes, 0 no, -1 not known yet: text is waited for
 * to its line's end (within the handshake's time). A binary protocol opens
 * with a length (a NUL among its first four bytes, which no request line
 * begins with): a tunnel at once. A line that fills the buffer is taken as
 * HTTP's, for its parser to refuse: never a tunnel for a request whose
 * Host comes after it.
 */
static int http_first_line(const char *b, size_t len, bool full)
{
	if (memchr(b, '\0', len < 4 ? len : 4))
		return 0;
	size_t i = 0;
	while (i < len && (b[i] == '\r' || b[i] == '\n'))
		i++;
	const char *nl = memchr(b + i, '\n', len - i);
	size_t end = nl ? (size_t)(nl - b) : len;
	for (size_t k = i; k + 5 <= end; k++)
		if (strncasecmp(b + k, "HTTP/", 5) == 0)
			return 1;
	return nl ? 0 : full ? 1 : -1;
}

static void tls_peek(struct proxy *px, struct proxy_conn *p)
{
	const uint8_t *b = (const uint8_t *)in_data(p);
	char d[900], sni[300];
	if (b[0] != 22) {
		/* a client that speaks first and not TLS, on the port that is TLS's */
		if (p->port == 443)
			return proxy_refuse(px, p, p->name, strlen(p->name), "malformed", 400,
					    "port 443 takes TLS: the first bytes are not a "
					    "ClientHello");
		/*
		 * HTTP through the tunnel (port 80's, or any request line): each
		 * request's Host checked as plain HTTP's is, never another virtual
		 * host at the target's address
		 */
		int http = p->port == 80 ? 1
					 : http_first_line((const char *)b, p->in.len,
							   p->in.off + p->in.len >= p->in.cap);
		if (http < 0)
			return; /* the first line, then */
		p->st = http ? PS_HTTP : PS_TUNNEL;
		p->fwd = 0;
		p->deadline = 0;
		return;
	}
	struct proxy_hello h;
	const char *why = NULL;
	int r = proxy_tls_hello(b, p->in.len, &h, &why);
	if (r == 0 && p->in.off + p->in.len < p->in.cap)
		return;
	if (r <= 0) {
		snprintf(d, sizeof(d), "the ClientHello is %s", why ? why : "too large");
		return proxy_refuse(px, p, p->name, strlen(p->name), "malformed", 400, d);
	}
	if (h.sni) {
		char norm[HOSTRULE_NAME_MAX];
		int e = hostrule_name_normalise((const char *)h.name, h.nlen, norm, sizeof(norm),
						&why);
		if (e < 0 || p->is_addr || strcmp(norm, p->name) != 0) {
			proxy_shown(h.name, h.nlen, sni, sizeof(sni));
			snprintf(d, sizeof(d),
				 "the ClientHello names '%s' (server name indication), the "
				 "CONNECT '%s'",
				 sni, p->name);
			return proxy_refuse(px, p, p->name, strlen(p->name), "sni_mismatch", 403,
					    d);
		}
	}
	p->st = PS_TUNNEL;
	p->deadline = 0;
}

/*
 * Is the authority (a Host header, or an absolute URI's) the connection's
 * target? One without a port names the connection's (a client in a tunnel
 * to a port of its own may leave it out): the name is what must agree.
 */
static bool same_target(struct proxy_conn *p, const char *s, size_t len)
{
	char host[300], norm[HOSTRULE_NAME_MAX], text[64];
	size_t hl;
	unsigned port;
	bool br;
	struct sockaddr_storage sa;
	if (proxy_authority(s, len, p->port, host, sizeof(host), &hl, &port, &br) < 0 ||
	    port != p->port || memchr(host, '\0', hl))
		return false;
	if (hostrule_parse_addr(host, port, &sa) == 0) {
		const void *a = sa.ss_family == AF_INET
					? (const void *)&((struct sockaddr_in *)&sa)->sin_addr
					: (const void *)&((struct sockaddr_in6 *)&sa)->sin6_addr;
		return p->is_addr && inet_ntop(sa.ss_family, a, text, sizeof(text)) &&
		       strcmp(text, p->name) == 0;
	}
	return !p->is_addr && hostrule_name_normalise(host, hl, norm, sizeof(norm), NULL) == 0 &&
	       strcmp(norm, p->name) == 0;
}

/* Headers the proxy never forwards: its own, and a switch of protocol it would not follow. */
static bool dropped(const char *b, struct proxy_span name)
{
	return (name.len >= 6 && strncasecmp(b + name.off, "proxy-", 6) == 0) ||
	       (name.len == 7 && strncasecmp(b + name.off, "upgrade", 7) == 0);
}

/* The head in origin form, written over itself (it only shrinks): its new length. */
static size_t rewrite(char *b, const struct proxy_req *req, struct proxy_span path)
{
	char tmp[PROXY_HEAD_MAX + 16];
	size_t o = 0;
	memcpy(tmp, b, req->method.len + 1);
	o = req->method.len + 1;
	if (path.len == 0) {
		tmp[o++] = '/';
	} else {
		memcpy(tmp + o, b + path.off, path.len);
		o += path.len;
	}
	o += (size_t)snprintf(tmp + o, sizeof(tmp) - o, " HTTP/1.%d\r\n", req->minor);
	for (size_t i = 0; i < req->nheaders; i++) {
		const struct proxy_header *h = &req->h[i];
		if (dropped(b, h->name))
			continue;
		memcpy(tmp + o, b + h->line.off, h->line.len);
		o += h->line.len;
	}
	memcpy(tmp + o, "\r\n", 2);
	o += 2;
	memcpy(b, tmp, o);
	return o;
}

static void mismatch(struct proxy *px, struct proxy_conn *p, const char *s, size_t len)
{
	char d[1024], h[400], host[300];
	size_t hl;
	unsigned port;
	bool br;
	proxy_shown(s, len, h, sizeof(h));
	snprintf(d, sizeof(d), "a request on this connection asks for '%s'; it was opened to %s:%u",
		 h, p->name, p->port);
	if (proxy_authority(s, len, 80, host, sizeof(host), &hl, &port, &br) < 0)
		hl = 0;
	proxy_refuse(px, p, host, hl, "host_mismatch", 403, d);
}

/* One request's head at b (parsed), checked and rewritten; false when refused. */
static bool http_request(struct proxy *px, struct proxy_conn *p, char *b, struct proxy_req *req,
			 size_t avail)
{
	struct proxy_span target = req->target, auth, path = req->target;
	if (req->method.len == 7 && memcmp(b, "CONNECT", 7) == 0)
		return malformed(px, p, 400, "CONNECT on a connection forwarding plain HTTP"),
		       false;
	if (b[target.off] != '/' && !(target.len == 1 && b[target.off] == '*')) {
		if (proxy_absolute_uri(b + target.off, target.len, &auth, &path) < 0)
			return malformed(px, p, 400, "a request target that is not http://"), false;
		auth.off += target.off;
		path.off += target.off;
		if (!same_target(p, b + auth.off, auth.len))
			return mismatch(px, p, b + auth.off, auth.len), false;
	}
	if (req->host < 0)
		return malformed(px, p, 400, "a request without Host"), false;
	struct proxy_span hv = req->h[req->host].value;
	if (!same_target(p, b + hv.off, hv.len))
		return mismatch(px, p, b + hv.off, hv.len), false;
	size_t old = req->head_len, now = rewrite(b, req, path);
	memmove(b + now, b + old, avail - old);
	p->in.len -= old - now;
	p->fwd += now;
	p->in_body = req->chunked || (req->has_length && req->length > 0);
	p->chunked = req->chunked;
	p->body_left = req->length;
	memset(&p->ch, 0, sizeof(p->ch));
	return true;
}

/* Plain HTTP: frame and check what the client sent, as far as it goes. */
static void http_stream(struct proxy *px, struct proxy_conn *p)
{
	struct proxy_req req;
	while (p->st == PS_HTTP && p->fwd < p->in.len) {
		char *b = in_data(p) + p->fwd;
		size_t avail = p->in.len - p->fwd;
		const char *why = NULL;
		if (p->in_body && p->chunked) {
			bool done = false;
			long n = proxy_chunk_feed(&p->ch, b, avail, &done, &why);
			if (n < 0)
				return malformed(px, p, 400, why);
			p->fwd += (size_t)n;
			p->in_body = !done;
			continue;
		}
		if (p->in_body) {
			size_t n = avail < p->body_left ? avail : (size_t)p->body_left;
			p->fwd += n;
			p->body_left -= n;
			p->in_body = p->body_left > 0;
			continue;
		}
		int r = proxy_http_parse(b, avail, &req, &why);
		if (r == 0) {
			if (!p->deadline) /* a head arriving slowly has the handshake's time */
				p->deadline = px->now + px->handshake_ms;
			return;
		}
		p->deadline = 0;
		if (r < 0)
			return malformed(px, p, r == -E2BIG ? 431 : 400, why);
		if (!http_request(px, p, b, &req, avail))
			return;
	}
}

void proxy_conn_advance(struct proxy *px, struct proxy_conn *p)
{
	for (;;) {
		enum proxy_state was = p->st;
		size_t had = p->in.len;
		if (p->dead || p->in.len == 0)
			return;
		switch (p->st) {
		case PS_SNIFF:
			sniff(px, p);
			break;
		case PS_HTTP_HEAD:
			http_head(px, p);
			break;
		case PS_SOCKS_GREET:
			socks_greet(px, p);
			break;
		case PS_SOCKS_AUTH:
			socks_auth(px, p);
			break;
		case PS_SOCKS_REQ:
			socks_req(px, p);
			break;
		case PS_TLS_PEEK:
			tls_peek(px, p);
			break;
		case PS_DNS:
			proxy_dns_stream(px, p);
			break;
		case PS_HTTP:
			http_stream(px, p);
			return;
		default:
			return;
		}
		if (p->st == was && p->in.len == had)
			return;
	}
}

void proxy_conn_timeout(struct proxy *px, struct proxy_conn *p)
{
	char d[200];
	switch (p->st) {
	case PS_RESOLVING:
		if (p->lk)
			p->lk->p = NULL;
		p->lk = NULL;
		p->queued = false;
		snprintf(d, sizeof(d), "the name did not resolve within %u ms", px->handshake_ms);
		return proxy_refuse(px, p, p->name, strlen(p->name), "resolve_failed", 504, d);
	case PS_CONNECTING:
		return proxy_conn_connect_next(px, p, ETIMEDOUT);
	default:
		p->dead = true; /* a slow head, a silent client, an idle tunnel */
	}
}
