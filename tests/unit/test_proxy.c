/*
 * The proxy, end to end on 127.0.0.1 only: proxy_serve in a thread, a test
 * resolver mapping test names to the loopback servers this test runs (an
 * echo server and a byte source), each protocol's success and each of its
 * refusals beside a positive control, the events, the secret, and the
 * parsers alone (with a few thousand random and mutated inputs).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "egress.h"
#include "hostrule.h"
#include "path.h"
#include "proxy.h"
#include "proxy_int.h"
#include "tap.h"

#define BIG (32u << 20)

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

static int echo_port, source_port;

/* ---- the loopback servers ---- */

static int listen_any(int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof(a);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 512) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &l) < 0)
		return -1;
	*port = ntohs(a.sin_port);
	return fd;
}

static void *echo_conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t o = 0; o < n;) {
			ssize_t w = write(fd, buf + o, (size_t)(n - o));
			if (w <= 0)
				goto out;
			o += w;
		}
out:
	close(fd);
	return NULL;
}

/*
 * A patterned stream, byte k being k % 251: bytes moved out of order (the
 * buffer's and the pipe's, test_big) show. wrong_at: where n bytes read at
 * offset total first differ from it (plus one), or 0.
 */
static void write_pattern(int fd, size_t total)
{
	char buf[65536]; /* each writer its own: test_bulk_many runs many at once */
	for (size_t sent = 0; sent < total;) {
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (char)((sent + i) % 251);
		ssize_t w = write(fd, buf, sizeof(buf));
		if (w <= 0)
			break;
		sent += (size_t)w;
	}
}

static size_t wrong_at(const char *b, size_t n, size_t total)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)b[i] != (total + i) % 251)
			return total + i + 1;
	return 0;
}

static void *source_conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	write_pattern(fd, BIG);
	close(fd);
	return NULL;
}

struct server {
	int fd;
	void *(*fn)(void *);
};

static void *server_main(void *arg)
{
	struct server *s = arg;
	for (;;) {
		int c = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		pthread_t t;
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&at, 256 * 1024);
		if (pthread_create(&t, &at, s->fn, (void *)(intptr_t)c) != 0)
			close(c);
		pthread_attr_destroy(&at);
	}
	return NULL;
}

static void start_server(int *port, void *(*fn)(void *))
{
	static struct server s[4];
	static int n;
	s[n].fd = listen_any(port);
	s[n].fn = fn;
	pthread_t t;
	pthread_create(&t, NULL, server_main, &s[n]);
	pthread_detach(t);
	n++;
}

/* ---- the test resolver: nothing it returns is ever reached but loopback ---- */

static int addr4(struct sockaddr_storage *out, const char *text)
{
	memset(out, 0, sizeof(*out));
	struct sockaddr_in *a = (struct sockaddr_in *)out;
	a->sin_family = AF_INET;
	inet_pton(AF_INET, text, &a->sin_addr);
	return 1;
}

static int test_resolve(void *ctx, const char *name, struct sockaddr_storage *out, size_t n)
{
	(void)ctx;
	size_t l = strlen(name);
	if (n < 2)
		return -EINVAL;
	if (strcmp(name, "meta.test") == 0)
		return addr4(out, "169.254.169.254");
	if (strcmp(name, "private.test") == 0)
		return addr4(out, "10.1.2.3");
	if (strcmp(name, "mixed.test") == 0) /* one good address does not make a bad one good */
		return addr4(out, "127.0.0.1") + addr4(out + 1, "192.168.1.1");
	if (strcmp(name, "fail.test") == 0)
		return -ENOENT;
	if (strcmp(name, "echo.test") == 0 || strcmp(name, "source.test") == 0 ||
	    strcmp(name, "self.test") == 0 || strcmp(name, "localhost") == 0 ||
	    (l > 10 && strcmp(name + l - 10, ".wild.test") == 0))
		return addr4(out, "127.0.0.1");
	return -ENOENT;
}

/* ---- a proxy in a thread ---- */

struct tproxy {
	struct proxy_cfg cfg;
	struct hostrules allow, deny;
	int stop[2], ev[2], port;
	pthread_t t;
	int ret;
	char events[1 << 20];
	size_t nev, seen;
};

static void *tproxy_main(void *arg)
{
	struct tproxy *tp = arg;
	tp->ret = proxy_serve(&tp->cfg);
	return NULL;
}

/* A proxy's config (tproxy_start's), its thread not started yet. */
static void tproxy_prepare(struct tproxy *tp, const char *const *allow, const char *secret,
			   unsigned handshake_ms)
{
	memset(tp, 0, sizeof(*tp));
	struct stepbox_err err;
	char rule[300];
	for (const char *const *a = allow; *a; a++) {
		const char *pc = strstr(*a, "%d");
		int port = strstr(*a, "source") ? source_port : echo_port;
		if (pc)
			snprintf(rule, sizeof(rule), "%.*s%d%s", (int)(pc - *a), *a, port, pc + 2);
		else
			snprintf(rule, sizeof(rule), "%s", *a);
		if (hostrules_add(&tp->allow, rule, &err) < 0)
			printf("# bad rule %s: %s\n", rule, err.msg);
	}
	snprintf(rule, sizeof(rule), "denied.wild.test");
	hostrules_add(&tp->deny, rule, &err);
	if (pipe2(tp->stop, O_CLOEXEC) < 0 || pipe2(tp->ev, O_CLOEXEC | O_NONBLOCK) < 0)
		abort();
	fcntl(tp->ev[1], F_SETFL, 0);
	tp->cfg.allow = &tp->allow;
	tp->cfg.deny = &tp->deny;
	tp->cfg.listen_fds[0] = listen_any(&tp->port);
	tp->cfg.nlisten = 1;
	tp->cfg.secret = secret;
	tp->cfg.events_fd = tp->ev[1];
	tp->cfg.stop_fd = tp->stop[0];
	tp->cfg.handshake_ms = handshake_ms;
	tp->cfg.resolve = test_resolve;
}

static void tproxy_start(struct tproxy *tp, const char *const *allow, const char *secret,
			 unsigned handshake_ms)
{
	tproxy_prepare(tp, allow, secret, handshake_ms);
	pthread_create(&tp->t, NULL, tproxy_main, tp);
}

static void events_drain(struct tproxy *tp)
{
	ssize_t n;
	while (tp->nev + 1 < sizeof(tp->events) &&
	       (n = read(tp->ev[0], tp->events + tp->nev, sizeof(tp->events) - 1 - tp->nev)) > 0)
		tp->nev += (size_t)n;
	tp->events[tp->nev] = '\0';
}

/* Wait (2 s at most) for an event line holding all of a and b after the last one seen. */
static const char *event_wait(struct tproxy *tp, const char *a, const char *b)
{
	for (int i = 0; i < 200; i++) {
		events_drain(tp);
		for (char *line = tp->events + tp->seen; *line;) {
			char *end = strchr(line, '\n');
			if (!end)
				break;
			*end = '\0';
			bool ok = strstr(line, a) && (!b || strstr(line, b));
			*end = '\n';
			if (ok) {
				tp->seen = (size_t)(end + 1 - tp->events);
				return line;
			}
			line = end + 1;
		}
		usleep(10000);
	}
	printf("# no event with '%s' '%s' in:\n# %s\n", a, b ? b : "", tp->events + tp->seen);
	return NULL;
}

static int tproxy_stop(struct tproxy *tp)
{
	if (write(tp->stop[1], "x", 1) != 1)
		return -1;
	pthread_join(tp->t, NULL);
	events_drain(tp);
	close(tp->stop[0]);
	close(tp->stop[1]);
	close(tp->ev[0]);
	close(tp->ev[1]);
	for (size_t i = 0; i < tp->cfg.nlisten; i++)
		close(tp->cfg.listen_fds[i]);
	hostrules_free(&tp->allow);
	hostrules_free(&tp->deny);
	return tp->ret;
}

/* ---- client helpers ---- */

static int dial(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct timeval tv = {5, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void put(int fd, const void *b, size_t n)
{
	for (size_t o = 0; o < n;) {
		ssize_t w = send(fd, (const char *)b + o, n - o, MSG_NOSIGNAL);
		if (w <= 0)
			return;
		o += (size_t)w;
	}
}

static void puts_(int fd, const char *s)
{
	put(fd, s, strlen(s));
}

/* Read until buf holds want bytes, or needle, or the end: the length read. */
static size_t get(int fd, char *buf, size_t size, size_t want, const char *needle)
{
	size_t n = 0;
	while (n + 1 < size && n < want) {
		ssize_t r = read(fd, buf + n, size - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		buf[n] = '\0';
		if (needle && strstr(buf, needle))
			break;
	}
	buf[n] = '\0';
	return n;
}

/* Is the connection closed by the proxy (EOF or reset) within 5 s? */
static bool closed(int fd)
{
	char b[4096];
	ssize_t r;
	while ((r = read(fd, b, sizeof(b))) > 0)
		;
	return r == 0 || (r < 0 && errno != EAGAIN);
}

/* CONNECT target; the status, and the fd open (or -1). */
static int via_connect(struct tproxy *tp, const char *target, const char *extra, int *fdp)
{
	char req[1024], buf[4096];
	int fd = dial(tp->port);
	snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", target, target,
		 extra ? extra : "");
	puts_(fd, req);
	/* a byte at a time: what follows the head is the tunnel's, not ours */
	size_t n = 0;
	while (n + 1 < sizeof(buf) && read(fd, buf + n, 1) == 1) {
		buf[++n] = '\0';
		if (n >= 4 && memcmp(buf + n - 4, "\r\n\r\n", 4) == 0)
			break;
	}
	buf[n] = '\0';
	int code = 0;
	sscanf(buf, "HTTP/1.1 %d", &code);
	if (fdp)
		*fdp = fd;
	else
		close(fd);
	return code;
}

/* msg and a newline there and back (a tunnel waits for a text's first line) */
static bool echoes(int fd, const char *msg)
{
	char buf[4096], line[4096];
	snprintf(line, sizeof(line), "%s\n", msg);
	puts_(fd, line);
	return get(fd, buf, sizeof(buf), strlen(line), NULL) == strlen(line) &&
	       strcmp(buf, line) == 0;
}

static size_t hello(uint8_t *out, const char *sni, size_t slen)
{
	uint8_t body[600];
	size_t o = 0;
	body[o++] = 3, body[o++] = 3;
	memset(body + o, 0x42, 32), o += 32;
	body[o++] = 0;                                                 /* session id */
	body[o++] = 0, body[o++] = 2, body[o++] = 0x13, body[o++] = 1; /* one suite */
	body[o++] = 1, body[o++] = 0;                                  /* no compression */
	size_t ext = sni ? 9 + slen : 0;
	body[o++] = (uint8_t)(ext >> 8), body[o++] = (uint8_t)ext;
	if (sni) {
		body[o++] = 0, body[o++] = 0; /* server_name */
		body[o++] = (uint8_t)((slen + 5) >> 8), body[o++] = (uint8_t)(slen + 5);
		body[o++] = (uint8_t)((slen + 3) >> 8), body[o++] = (uint8_t)(slen + 3);
		body[o++] = 0;
		body[o++] = (uint8_t)(slen >> 8), body[o++] = (uint8_t)slen;
		memcpy(body + o, sni, slen), o += slen;
	}
	size_t n = 0;
	out[n++] = 22, out[n++] = 3, out[n++] = 1;
	out[n++] = (uint8_t)((o + 4) >> 8), out[n++] = (uint8_t)(o + 4);
	out[n++] = 1, out[n++] = 0, out[n++] = (uint8_t)(o >> 8), out[n++] = (uint8_t)o;
	memcpy(out + n, body, o);
	return n + o;
}

/* The rules of the main proxy; %d is the echo server's port (the source's for source). */
static const char *const rules[] = {"echo.test:%d",
				    "source.test:%d",
				    "*.wild.test:%d",
				    "meta.test:%d",
				    "private.test:%d",
				    "mixed.test:%d",
				    "fail.test:%d",
				    "localhost:%d",
				    "127.0.0.1",
				    "127.0.0.1:%d",
				    NULL};

static void test_connect(struct tproxy *tp)
{
	char t[300];
	int fd;
	const char *ev;
	snprintf(t, sizeof(t), "echo.test:%d", echo_port);
	CHECK(via_connect(tp, t, NULL, &fd) == 200);
	CHECK(echoes(fd, "ping through a tunnel"));
	close(fd);
	ev = event_wait(tp, "\"reached\"", "\"name\":\"echo.test\"");
	CHECK_HAS(ev, "\"up\":22");
	CHECK_HAS(ev, "\"down\":22");
	CHECK_HAS(ev, "\"addr\":\"127.0.0.1\"");

	/* case and a trailing dot are the same name */
	snprintf(t, sizeof(t), "ECHO.Test.:%d", echo_port);
	CHECK(via_connect(tp, t, NULL, &fd) == 200);
	CHECK(echoes(fd, "x"));
	close(fd);

	/* not listed, beside the positive control above */
	snprintf(t, sizeof(t), "other.test:%d", echo_port);
	CHECK(via_connect(tp, t, NULL, NULL) == 403);
	ev = event_wait(tp, "\"why\":\"not_listed\"", "other.test");
	CHECK_HAS(ev, "\"proto\":\"connect\"");
	CHECK_HAS(ev, "add \\\"other.test:");
	/* a listed name on another port */
	snprintf(t, sizeof(t), "echo.test:%d", echo_port + 1 == 65536 ? 1 : echo_port + 1);
	CHECK(via_connect(tp, t, NULL, NULL) == 403);
	CHECK(event_wait(tp, "not_listed", "echo.test") != NULL);

	/* the wildcard: below it yes, itself and look-alikes no, deny over allow */
	snprintf(t, sizeof(t), "a.b.wild.test:%d", echo_port);
	CHECK(via_connect(tp, t, NULL, &fd) == 200);
	CHECK(echoes(fd, "wild"));
	close(fd);
	snprintf(t, sizeof(t), "wild.test:%d", echo_port);
	CHECK(via_connect(tp, t, NULL, NULL) == 403);
	snprintf(t, sizeof(t), "evilwild.test:%d", echo_port);
	CHECK(via_connect(tp, t, NULL, NULL) == 403);
	snprintf(t, sizeof(t), "denied.wild.test:%d", echo_port);
	CHECK(via_connect(tp, t, NULL, NULL) == 403);
	CHECK(event_wait(tp, "\"why\":\"denied\"", "deny_hosts entry 'denied.wild.test'") != NULL);

	/* names that resolve to addresses no rule lists */
	snprintf(t, sizeof(t), "meta.test:%d", echo_port);
	CHECK(via_connect(tp, t, NULL, NULL) == 403);
	ev = event_wait(tp, "private_address", "meta.test");
	CHECK_HAS(ev, "\"addr\":\"169.254.169.254\"");
	CHECK_HAS(ev, "cloud-metadata");
	snprintf(t, sizeof(t), "private.test:%d", echo_port);
	CHECK(via_connect(tp, t, NULL, NULL) == 403);
	CHECK(event_wait(tp, "private_address", "10.1.2.3") != NULL);
	snprintf(t, sizeof(t), "mixed.test:%d", echo_port);
	CHECK(via_connect(tp, t, NULL, NULL) == 403);
	CHECK(event_wait(tp, "private_address", "192.168.1.1") != NULL);
	snprintf(t, sizeof(t), "fail.test:%d", echo_port);
	CHECK(via_connect(tp, t, NULL, NULL) == 502);
	CHECK(event_wait(tp, "resolve_failed", "fail.test") != NULL);

	/* the bypass list: NUL, percent, IP literals in disguise, v6, localhost */
	snprintf(t, sizeof(t), "echo.test%%00.evil:%d", echo_port);
	CHECK(via_connect(tp, t, NULL, NULL) == 400);
	CHECK(event_wait(tp, "bad_name", "percent-encoded") != NULL);
	snprintf(t, sizeof(t), "2130706433:%d", echo_port);
	CHECK(via_connect(tp, t, NULL, NULL) == 403);
	CHECK(event_wait(tp, "\"why\":\"ip_literal\"", "2130706433") != NULL);
	snprintf(t, sizeof(t), "0x7f000001:%d", echo_port);
	CHECK(via_connect(tp, t, NULL, NULL) == 403);
	snprintf(t, sizeof(t), "127.1:%d", echo_port);
	CHECK(via_connect(tp, t, NULL, NULL) == 403);
	snprintf(t, sizeof(t), "[::1]:%d", echo_port);
	CHECK(via_connect(tp, t, NULL, NULL) == 403);
	CHECK(event_wait(tp, "ip_literal", "::1") != NULL);
	snprintf(t, sizeof(t), "127.0.0.1:%d", echo_port); /* listed as an address */
	CHECK(via_connect(tp, t, NULL, &fd) == 200);
	CHECK(echoes(fd, "by address"));
	close(fd);
	snprintf(t, sizeof(t), "localhost:%d", echo_port); /* listed, and loopback is too */
	CHECK(via_connect(tp, t, NULL, &fd) == 200);
	close(fd);
	/* the proxy never chains to itself */
	snprintf(t, sizeof(t), "127.0.0.1:%d", tp->port);
	CHECK(via_connect(tp, t, NULL, NULL) == 403);
	/* malformed */
	CHECK(via_connect(tp, "echo.test", NULL, NULL) == 400);
	CHECK(via_connect(tp, "user@echo.test:1", NULL, NULL) == 400);
}

static void test_sni(struct tproxy *tp)
{
	char t[300];
	uint8_t h[700];
	char back[800];
	int fd;
	snprintf(t, sizeof(t), "echo.test:%d", echo_port);
	CHECK(via_connect(tp, t, NULL, &fd) == 200);
	size_t n = hello(h, "Echo.test", 9);
	put(fd, h, n);
	CHECK(get(fd, back, sizeof(back), n, NULL) == n && memcmp(back, h, n) == 0);
	close(fd);
	CHECK(via_connect(tp, t, NULL, &fd) == 200);
	n = hello(h, "evil.example", 12);
	put(fd, h, n);
	CHECK(closed(fd));
	close(fd);
	CHECK(event_wait(tp, "sni_mismatch", "evil.example") != NULL);
	/* a server name holding a NUL */
	CHECK(via_connect(tp, t, NULL, &fd) == 200);
	n = hello(h, "echo.test\0.evil", 15);
	put(fd, h, n);
	CHECK(closed(fd));
	close(fd);
	CHECK(event_wait(tp, "sni_mismatch", "\\\\x00") != NULL);
	/* no server name: allowed (the address is still the checked one) */
	CHECK(via_connect(tp, t, NULL, &fd) == 200);
	n = hello(h, NULL, 0);
	put(fd, h, n);
	CHECK(get(fd, back, sizeof(back), n, NULL) == n);
	close(fd);
	/* a record that lies about its length: malformed, closed */
	CHECK(via_connect(tp, t, NULL, &fd) == 200);
	put(fd, "\x16\x03\x01\xff\xff", 5);
	CHECK(closed(fd));
	close(fd);
	CHECK(event_wait(tp, "malformed", "length TLS does not allow") != NULL);
	/*
	 * HTTP through the tunnel: each request's Host is the target's, as
	 * plain HTTP's is (never another virtual host at the target's address);
	 * another protocol stays a tunnel
	 */
	char req[400];
	snprintf(req, sizeof(req), "GET /a HTTP/1.1\r\nHost: echo.test:%d\r\n\r\n", echo_port);
	CHECK(via_connect(tp, t, NULL, &fd) == 200);
	puts_(fd, req);
	CHECK(get(fd, back, sizeof(back), strlen(req), NULL) == strlen(req));
	puts_(fd, "GET /b HTTP/1.1\r\nHost: evil.example\r\n\r\n"); /* the next one */
	CHECK(closed(fd));
	close(fd);
	CHECK(event_wait(tp, "host_mismatch", "evil.example") != NULL);
	CHECK(via_connect(tp, t, NULL, &fd) == 200);
	puts_(fd, "GET /front HTTP/1.1\r\nHost: evil.example\r\n\r\n");
	CHECK(closed(fd));
	close(fd);
	CHECK(via_connect(tp, t, NULL, &fd) == 200);
	puts_(fd, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"); /* h2c's preface: no Host to check */
	CHECK(closed(fd));
	close(fd);
	CHECK(via_connect(tp, t, NULL, &fd) == 200);
	puts_(fd, "GET "); /* a line arriving slowly is waited for */
	usleep(20000);
	puts_(fd, "/c HTTP/1.1\r\nHost: evil.example\r\n\r\n");
	CHECK(closed(fd));
	close(fd);
	CHECK(via_connect(tp, t, NULL, &fd) == 200);
	CHECK(echoes(fd, "SSH-2.0-OpenSSH_9.2\r"));
	close(fd);
	/* what servers take for a request line too: an empty line first, any case, a dash */
	static const char *const lines[] = {"\r\nGET /f HTTP/1.1", "get /f HTTP/1.1",
					    "M-SEARCH * HTTP/1.1", "GET /\xff HTTP/1.1",
					    "GET /x HTTP/1.1\x0b", "GET\x0b/x\x0bHTTP/1.1",
					    "GET /\x01 HTTP/1.1",  "GET /\x1f HTTP/1.1"};
	for (size_t i = 0; i < sizeof(lines) / sizeof(*lines); i++) {
		CHECK(via_connect(tp, t, NULL, &fd) == 200);
		snprintf(req, sizeof(req), "%s\r\nHost: evil.example\r\n\r\n", lines[i]);
		puts_(fd, req);
		CHECK(closed(fd));
		close(fd);
	}
	/* a binary protocol (a length first: a NUL) is a tunnel at once */
	CHECK(via_connect(tp, t, NULL, &fd) == 200);
	put(fd, "\0\0\0\x08\x04\xd2\x16\x2f", 8);
	CHECK(get(fd, back, sizeof(back), 8, NULL) == 8 && memcmp(back, "\0\0\0\x08", 4) == 0);
	close(fd);
}

static void test_http(struct tproxy *tp)
{
	char req[2048], buf[8192];
	int fd = dial(tp->port);
	snprintf(req, sizeof(req),
		 "GET http://echo.test:%d/path?q=1 HTTP/1.1\r\nHost: echo.test:%d\r\n"
		 "Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eDp5\r\n"
		 "X-Keep: yes\r\n\r\n",
		 echo_port, echo_port);
	puts_(fd, req);
	get(fd, buf, sizeof(buf), sizeof(buf), "\r\n\r\n");
	snprintf(req, sizeof(req),
		 "GET /path?q=1 HTTP/1.1\r\nHost: echo.test:%d\r\nX-Keep: yes\r\n\r\n", echo_port);
	CHECK_STR(buf, req);
	/* a second request, chunked, on the same connection: framed and passed */
	snprintf(req, sizeof(req),
		 "POST http://echo.test:%d/up HTTP/1.1\r\nHost: ECHO.TEST:%d\r\n"
		 "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;x=y\r\n world\r\n0\r\n\r\n",
		 echo_port, echo_port);
	puts_(fd, req);
	get(fd, buf, sizeof(buf), sizeof(buf), "0\r\n\r\n");
	CHECK_HAS(buf, "POST /up HTTP/1.1\r\n");
	CHECK_HAS(buf, "5\r\nhello\r\n6;x=y\r\n world\r\n0\r\n\r\n");
	/* Content-Length */
	snprintf(req, sizeof(req),
		 "PUT /x HTTP/1.1\r\nHost: echo.test:%d\r\nContent-Length: 3\r\n\r\nabc",
		 echo_port);
	puts_(fd, req);
	get(fd, buf, sizeof(buf), strlen(req), NULL);
	CHECK_STR(buf, req);
	/* then another Host on the kept-alive connection: 403, closed */
	puts_(fd, "GET /x HTTP/1.1\r\nHost: other.test\r\n\r\n");
	get(fd, buf, sizeof(buf), sizeof(buf), NULL);
	CHECK_HAS(buf, "HTTP/1.1 403");
	close(fd);
	CHECK(event_wait(tp, "host_mismatch", "other.test") != NULL);

	/* an absolute URI to another host on the same connection */
	fd = dial(tp->port);
	snprintf(req, sizeof(req),
		 "GET http://echo.test:%d/ HTTP/1.1\r\nHost: echo.test:%d\r\n\r\n", echo_port,
		 echo_port);
	puts_(fd, req);
	get(fd, buf, sizeof(buf), sizeof(buf), "\r\n\r\n");
	CHECK_HAS(buf, "GET / HTTP/1.1");
	snprintf(req, sizeof(req),
		 "GET http://other.test:%d/ HTTP/1.1\r\nHost: echo.test:%d\r\n\r\n", echo_port,
		 echo_port);
	puts_(fd, req);
	get(fd, buf, sizeof(buf), sizeof(buf), NULL);
	CHECK_HAS(buf, "403 Forbidden");
	close(fd);
	CHECK(event_wait(tp, "host_mismatch", "other.test") != NULL);

	/* pipelined: two requests in one write, both framed and passed */
	fd = dial(tp->port);
	snprintf(req, sizeof(req),
		 "GET http://echo.test:%d/1 HTTP/1.1\r\nHost: echo.test:%d\r\n\r\n"
		 "GET http://echo.test:%d/2 HTTP/1.1\r\nHost: echo.test:%d\r\n\r\n",
		 echo_port, echo_port, echo_port, echo_port);
	puts_(fd, req);
	get(fd, buf, sizeof(buf), sizeof(buf), "/2 HTTP/1.1\r\nHost: echo.test");
	get(fd, buf + strlen(buf), sizeof(buf) - strlen(buf), sizeof(buf), "\r\n\r\n");
	CHECK_HAS(buf, "GET /1 HTTP/1.1\r\n");
	CHECK_HAS(buf, "GET /2 HTTP/1.1\r\n");
	/* then a CONNECT on it, to relay onwards: refused */
	puts_(fd, "CONNECT other.test:443 HTTP/1.1\r\nHost: other.test:443\r\n\r\n");
	get(fd, buf, sizeof(buf), sizeof(buf), NULL);
	CHECK_HAS(buf, "HTTP/1.1 400");
	CHECK_HAS(buf, "CONNECT on a connection");
	close(fd);

	/* smuggling shapes: refused before anything is sent */
	static const char *const bad[] = {
		"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n",
		"Content-Length: 3\r\nContent-Length: 4\r\n",
		"Transfer-Encoding: gzip, chunked\r\n",
		"Transfer-Encoding : chunked\r\n",
		" folded: x\r\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fd = dial(tp->port);
		snprintf(req, sizeof(req),
			 "POST http://echo.test:%d/ HTTP/1.1\r\nHost: echo.test:%d\r\n%s\r\n",
			 echo_port, echo_port, bad[i]);
		puts_(fd, req);
		get(fd, buf, sizeof(buf), sizeof(buf), NULL);
		CHECK_HAS(buf, "HTTP/1.1 400");
		close(fd);
	}
	/* a bare LF, and a request with no absolute URI */
	fd = dial(tp->port);
	puts_(fd, "GET http://echo.test/ HTTP/1.1\nHost: echo.test\n\n");
	get(fd, buf, sizeof(buf), sizeof(buf), NULL);
	CHECK_HAS(buf, "HTTP/1.1 400");
	close(fd);
	fd = dial(tp->port);
	puts_(fd, "GET / HTTP/1.1\r\nHost: echo.test\r\n\r\n");
	get(fd, buf, sizeof(buf), sizeof(buf), NULL);
	CHECK_HAS(buf, "absolute");
	close(fd);
	/* not listed, plain */
	fd = dial(tp->port);
	puts_(fd, "GET http://other.test/ HTTP/1.1\r\nHost: other.test\r\n\r\n");
	get(fd, buf, sizeof(buf), sizeof(buf), NULL);
	CHECK_HAS(buf, "HTTP/1.1 403");
	CHECK_HAS(buf, "add \"other.test\"");
	close(fd);
	CHECK(event_wait(tp, "\"proto\":\"http\"", "not_listed") != NULL);
	/* a head too large, and a million headers */
	fd = dial(tp->port);
	puts_(fd, "GET http://echo.test/ HTTP/1.1\r\n");
	static char big[20000];
	memset(big, 'a', sizeof(big) - 1);
	puts_(fd, "X: ");
	puts_(fd, big);
	get(fd, buf, sizeof(buf), sizeof(buf), NULL);
	CHECK_HAS(buf, "HTTP/1.1 431");
	close(fd);
	fd = dial(tp->port);
	puts_(fd, "GET http://echo.test/ HTTP/1.1\r\n");
	for (int i = 0; i < 200; i++)
		puts_(fd, "A: b\r\n");
	get(fd, buf, sizeof(buf), sizeof(buf), NULL);
	CHECK_HAS(buf, "too many headers");
	close(fd);
}

static int socks(struct tproxy *tp, const uint8_t *greet, size_t gl, const uint8_t *req, size_t rl,
		 uint8_t reply[10])
{
	int fd = dial(tp->port);
	char b[16];
	put(fd, greet, gl);
	if (get(fd, b, sizeof(b), 2, NULL) != 2 || (uint8_t)b[1] == 0xff) {
		reply[1] = 0xff;
		return fd;
	}
	put(fd, req, rl);
	memset(reply, 0xee, 10);
	get(fd, (char *)reply, 11, 10, NULL);
	return fd;
}

static size_t socks_name(uint8_t *r, uint8_t cmd, const char *name, size_t nl, int port)
{
	size_t o = 0;
	r[o++] = 5, r[o++] = cmd, r[o++] = 0, r[o++] = 3, r[o++] = (uint8_t)nl;
	memcpy(r + o, name, nl), o += nl;
	r[o++] = (uint8_t)(port >> 8), r[o++] = (uint8_t)port;
	return o;
}

static void test_socks(struct tproxy *tp)
{
	static const uint8_t greet[] = {5, 1, 0};
	uint8_t r[300], reply[12];
	int fd = socks(tp, greet, sizeof(greet), r, socks_name(r, 1, "echo.test", 9, echo_port),
		       reply);
	CHECK(reply[0] == 5 && reply[1] == 0);
	CHECK(echoes(fd, "socks ping"));
	close(fd);
	CHECK(event_wait(tp, "\"reached\"", "\"up\":11") != NULL);
	/* not listed: 0x02 */
	fd = socks(tp, greet, sizeof(greet), r, socks_name(r, 1, "other.test", 10, echo_port),
		   reply);
	CHECK(reply[1] == 2);
	close(fd);
	CHECK(event_wait(tp, "\"proto\":\"socks5\"", "not_listed") != NULL);
	/* a NUL inside the name, passing a suffix match if it were cut there */
	fd = socks(tp, greet, sizeof(greet), r,
		   socks_name(r, 1, "x.wild.test\0.evil.com", 21, echo_port), reply);
	CHECK(reply[1] != 0);
	close(fd);
	CHECK(event_wait(tp, "bad_name", "holds a NUL") != NULL);
	/* an address (ATYP 1): address rules only */
	uint8_t a4[10] = {5, 1, 0, 1, 127, 0, 0, 1, (uint8_t)(echo_port >> 8), (uint8_t)echo_port};
	fd = socks(tp, greet, sizeof(greet), a4, sizeof(a4), reply);
	CHECK(reply[1] == 0);
	CHECK(echoes(fd, "by address"));
	close(fd);
	uint8_t a4b[10] = {5, 1, 0, 1, 127, 0, 0, 2, 0, 80};
	fd = socks(tp, greet, sizeof(greet), a4b, sizeof(a4b), reply);
	CHECK(reply[1] == 2); /* "127.0.0.1" lists that address, not 127.0.0.2 */
	close(fd);
	uint8_t a6[22] = {5, 1, 0, 4, [19] = 1, (uint8_t)(echo_port >> 8), (uint8_t)echo_port};
	fd = socks(tp, greet, sizeof(greet), a6, sizeof(a6), reply);
	CHECK(reply[1] == 2);
	close(fd);
	CHECK(event_wait(tp, "ip_literal", "::1") != NULL);
	/* its first bytes looked at as a CONNECT's are: the ClientHello's name, 443's TLS */
	uint8_t h[700];
	char back[800];
	fd = socks(tp, greet, sizeof(greet), r, socks_name(r, 1, "echo.test", 9, echo_port), reply);
	size_t hn = hello(h, "evil.example", 12);
	put(fd, h, hn);
	CHECK(reply[1] == 0 && closed(fd));
	close(fd);
	CHECK(event_wait(tp, "\"proto\":\"socks5\"", "sni_mismatch") != NULL);
	fd = socks(tp, greet, sizeof(greet), r, socks_name(r, 1, "echo.test", 9, echo_port), reply);
	hn = hello(h, "echo.test", 9);
	put(fd, h, hn);
	CHECK(get(fd, back, sizeof(back), hn, NULL) == hn && memcmp(back, h, hn) == 0);
	close(fd);
	fd = socks(tp, greet, sizeof(greet), r, socks_name(r, 1, "echo.test", 9, echo_port), reply);
	puts_(fd, "GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n");
	CHECK(closed(fd));
	close(fd);
	/* BIND and UDP ASSOCIATE: 0x07 */
	fd = socks(tp, greet, sizeof(greet), r, socks_name(r, 2, "echo.test", 9, echo_port), reply);
	CHECK(reply[1] == 7);
	close(fd);
	fd = socks(tp, greet, sizeof(greet), r, socks_name(r, 3, "echo.test", 9, echo_port), reply);
	CHECK(reply[1] == 7);
	close(fd);
	/* 255 methods, none of them "no auth": refused, not overflowed */
	uint8_t many[257] = {5, 255};
	for (int i = 0; i < 255; i++)
		many[2 + i] = (uint8_t)(i + 1);
	fd = socks(tp, many, sizeof(many), r, 0, reply);
	CHECK(reply[1] == 0xff);
	close(fd);
	/* SOCKS4: refused */
	fd = dial(tp->port);
	put(fd, "\x04\x01\x00\x50\x7f\x00\x00\x01\x00", 9);
	CHECK(closed(fd));
	close(fd);
}

static void test_secret(void)
{
	static const char *const allow[] = {"echo.test:%d", "127.0.0.1", NULL};
	struct tproxy *tp = calloc(1, sizeof(*tp));
	tproxy_start(tp, allow, "s3cret", 0);
	char t[64];
	int fd;
	snprintf(t, sizeof(t), "echo.test:%d", echo_port);
	CHECK(via_connect(tp, t, NULL, NULL) == 407);
	CHECK(event_wait(tp, "\"why\":\"auth\"", NULL) != NULL);
	CHECK(via_connect(tp, t, "Proxy-Authorization: Basic c3RlcGJveDp3cm9uZw==\r\n", NULL) ==
	      407);
	/* base64("stepbox:s3cret") */
	CHECK(via_connect(tp, t, "Proxy-Authorization: Basic c3RlcGJveDpzM2NyZXQ=\r\n", &fd) ==
	      200);
	CHECK(echoes(fd, "authed"));
	close(fd);
	/* SOCKS5 with RFC 1929 */
	uint8_t req[64], reply[12];
	static const uint8_t greet[] = {5, 2, 0, 2};
	fd = dial(tp->port);
	put(fd, greet, sizeof(greet));
	char b[4];
	CHECK(get(fd, b, sizeof(b), 2, NULL) == 2 && b[1] == 2);
	put(fd, "\x01\x07stepbox\x06s3cret", 16);
	CHECK(get(fd, b, sizeof(b), 2, NULL) == 2 && b[0] == 1 && b[1] == 0);
	put(fd, req, socks_name(req, 1, "echo.test", 9, echo_port));
	CHECK(get(fd, (char *)reply, 11, 10, NULL) == 10 && reply[1] == 0);
	CHECK(echoes(fd, "socks authed"));
	close(fd);
	fd = dial(tp->port);
	put(fd, greet, sizeof(greet));
	get(fd, b, sizeof(b), 2, NULL);
	put(fd, "\x01\x07stepbox\x06s3creT", 16);
	CHECK(get(fd, b, sizeof(b), 2, NULL) == 2 && b[0] == 1 && b[1] == 1);
	CHECK(closed(fd));
	close(fd);
	CHECK(event_wait(tp, "\"why\":\"auth\"", "socks5") != NULL);
	/* no auth offered to a proxy with a secret */
	fd = dial(tp->port);
	put(fd, "\x05\x01\x00", 3);
	CHECK(get(fd, b, sizeof(b), 2, NULL) == 2 && (uint8_t)b[1] == 0xff);
	close(fd);
	CHECK(tproxy_stop(tp) == 0);
	free(tp);
}

/* Without the address rule, a name resolving to loopback is refused as private. */
/*
 * Others than the step on the host's loopback (where a secret is asked):
 * connections that never give it cannot hold every place, and their
 * refusals are written a few times, then counted, never crowding out the
 * step's record; the hosts reached are kept apart, the busiest by name.
 */
static void test_outsiders(void)
{
	static const char *const allow[] = {"echo.test:%d", "127.0.0.1", NULL};
	struct tproxy *tp = calloc(1, sizeof(*tp));
	tproxy_prepare(tp, allow, "s3cret", 0);
	tp->cfg.max_conns = 8;
	pthread_create(&tp->t, NULL, tproxy_main, tp);
	int held[8], fd;
	for (int i = 0; i < 8; i++)
		held[i] = dial(tp->port); /* open, silent: every place taken */
	usleep(50000);
	char t[64];
	snprintf(t, sizeof(t), "echo.test:%d", echo_port);
	/* base64("stepbox:s3cret") */
	CHECK(via_connect(tp, t, "Proxy-Authorization: Basic c3RlcGJveDpzM2NyZXQ=\r\n", &fd) ==
	      200);
	CHECK(echoes(fd, "the step's, with the secret"));
	close(fd);
	CHECK(closed(held[0])); /* the one that waited longest without it */
	for (int i = 0; i < 8; i++)
		close(held[i]);
	for (int i = 0; i < PROXY_AUTH_EVENTS + 4; i++)
		CHECK(via_connect(tp, t, NULL, NULL) == 407);
	CHECK(tproxy_stop(tp) == 0);
	size_t auth = 0;
	for (const char *e = tp->events; (e = strstr(e, "\"why\":\"auth\"")); e++)
		auth++;
	CHECK(auth == PROXY_AUTH_EVENTS);
	CHECK_HAS(tp->events, "{\"event\":\"dropped\",\"count\":4}");
	CHECK_HAS(tp->events, "\"name\":\"echo.test\"");
	free(tp);

	/* past PROXY_MAX_REACHED hosts, the fewest bytes summed: the busiest keeps its name */
	struct proxy_reached_list l = {0};
	char name[32];
	for (int i = 0; i < PROXY_MAX_REACHED; i++) {
		snprintf(name, sizeof(name), "h%d.test", i);
		proxy_reached_add(&l, name, 443, "192.0.2.1", 10 + (uint64_t)i, 0, 1);
	}
	proxy_reached_add(&l, "h0.test", 443, "192.0.2.1", 5, 0, 1); /* one already kept */
	proxy_reached_add(&l, "big.test", 443, "192.0.2.9", 1 << 20, 0, 1);
	proxy_reached_add(&l, "tiny.test", 443, "192.0.2.9", 1, 0, 1);
	bool big = false, h0 = false, h1 = false;
	for (size_t i = 0; i < l.n; i++) {
		big |= strcmp(l.v[i].name, "big.test") == 0;
		h0 |= strcmp(l.v[i].name, "h0.test") == 0;
		h1 |= strcmp(l.v[i].name, "h1.test") == 0;
	}
	CHECK(l.n == PROXY_MAX_REACHED && big && h0 && !h1); /* h1 moved 11 bytes, h0 15 */
	CHECK(l.others_hosts == 2 && l.others.up == 11 + 1 && l.others.connections == 2);
	proxy_reached_free(&l);
}

static void test_no_loopback_rule(void)
{
	static const char *const allow[] = {"echo.test:%d", NULL};
	struct tproxy *tp = calloc(1, sizeof(*tp));
	tproxy_start(tp, allow, NULL, 0);
	char t[64];
	snprintf(t, sizeof(t), "echo.test:%d", echo_port);
	CHECK(via_connect(tp, t, NULL, NULL) == 403);
	const char *ev = event_wait(tp, "private_address", "echo.test");
	CHECK_HAS(ev, "loopback");
	CHECK_HAS(ev, "add \\\"127.0.0.1\\\" to hosts");
	snprintf(t, sizeof(t), "127.0.0.1:%d", echo_port);
	CHECK(via_connect(tp, t, NULL, NULL) == 403);
	CHECK(event_wait(tp, "ip_literal", "127.0.0.1") != NULL);
	CHECK(tproxy_stop(tp) == 0);
	free(tp);
}

static void test_big(struct tproxy *tp)
{
	char t[64];
	int fd;
	snprintf(t, sizeof(t), "source.test:%d", source_port);
	CHECK(via_connect(tp, t, NULL, &fd) == 200);
	static char buf[65536];
	size_t total = 0, wrong = 0;
	ssize_t r;
	while ((r = read(fd, buf, sizeof(buf))) > 0) {
		if (!wrong)
			wrong = wrong_at(buf, (size_t)r, total);
		total += (size_t)r;
	}
	if (total != BIG || wrong)
		printf("# got %zu of %u bytes (errno %d), the first wrong at %zu\n", total, BIG,
		       errno, wrong ? wrong - 1 : 0);
	CHECK(total == BIG);
	CHECK(wrong == 0);
	close(fd);
	char want[64];
	snprintf(want, sizeof(want), "\"down\":%u", BIG);
	CHECK(event_wait(tp, "\"reached\"", want) != NULL);
}

static void *send_pattern(void *arg)
{
	int fd = (int)(intptr_t)arg;
	write_pattern(fd, BIG / 2);
	shutdown(fd, SHUT_WR);
	return NULL;
}

/* A bulk tunnel the other way: 16 MiB up to the echo, and back. */
static void test_big_up(struct tproxy *tp)
{
	char t[64];
	int fd;
	snprintf(t, sizeof(t), "echo.test:%d", echo_port);
	CHECK(via_connect(tp, t, NULL, &fd) == 200);
	pthread_t w;
	CHECK(pthread_create(&w, NULL, send_pattern, (void *)(intptr_t)fd) == 0);
	static char buf[65536];
	size_t total = 0, wrong = 0;
	ssize_t r;
	while ((r = read(fd, buf, sizeof(buf))) > 0) {
		if (!wrong)
			wrong = wrong_at(buf, (size_t)r, total);
		total += (size_t)r;
	}
	pthread_join(w, NULL);
	close(fd);
	if (total != BIG / 2 || wrong)
		printf("# back %zu of %u bytes, the first wrong at %zu\n", total, BIG / 2,
		       wrong ? wrong - 1 : 0);
	CHECK(total == BIG / 2 && wrong == 0);
	char up[64], down[64]; /* each way through its pipe, counted */
	snprintf(up, sizeof(up), "\"up\":%u", BIG / 2);
	snprintf(down, sizeof(down), "\"down\":%u", BIG / 2);
	CHECK(event_wait(tp, up, down) != NULL);
}

/*
 * More bulk tunnels at once than pipes (PROXY_PIPES_MAX): those past them
 * move through their buffers, every byte in its place; 4 MiB of each.
 */
static void test_bulk_many(struct tproxy *tp)
{
	enum { N = PROXY_PIPES_MAX + 4, EACH = 4 << 20 };
	int fds[N];
	size_t got[N] = {0}, wrong = 0;
	char t[64];
	snprintf(t, sizeof(t), "source.test:%d", source_port);
	for (int i = 0; i < N; i++) {
		CHECK(via_connect(tp, t, NULL, &fds[i]) == 200);
		puts_(fds[i], "x"); /* the client's first byte: a tunnel (a TLS one speaks first) */
	}
	static char buf[65536];
	for (bool more = true; more;) {
		more = false;
		for (int i = 0; i < N; i++) {
			if (got[i] >= EACH)
				continue;
			size_t want = EACH - got[i] < sizeof(buf) ? EACH - got[i] : sizeof(buf);
			ssize_t r = read(fds[i], buf, want);
			if (r <= 0) {
				got[i] = EACH + 1; /* ended early: counted wrong below */
				continue;
			}
			if (!wrong)
				wrong = wrong_at(buf, (size_t)r, got[i]);
			got[i] += (size_t)r;
			more = true;
		}
	}
	int whole = 0;
	for (int i = 0; i < N; i++) {
		whole += got[i] == EACH;
		close(fds[i]);
	}
	if (whole != N || wrong)
		printf("# %d of %d tunnels whole, the first wrong at %zu\n", whole, N,
		       wrong ? wrong - 1 : 0);
	CHECK(whole == N && wrong == 0);
}

#if defined(__x86_64__)
#define TEST_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define TEST_ARCH AUDIT_ARCH_AARCH64
#endif

#ifdef TEST_ARCH
/* The proxy's thread, splice(2) refused it by a filter of its own (this thread's alone). */
static void *tproxy_main_nosplice(void *arg)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TEST_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_splice, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};
	struct tproxy *tp = arg;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
		tp->ret = -errno;
		return NULL;
	}
	tp->ret = proxy_serve(&tp->cfg);
	return NULL;
}

/* Where splice is refused, a bulk tunnel keeps its buffers: every byte still comes. */
static void test_no_splice(void)
{
	struct tproxy *tp = calloc(1, sizeof(*tp));
	tproxy_prepare(tp, rules, NULL, 0);
	pthread_create(&tp->t, NULL, tproxy_main_nosplice, tp);
	test_big_up(tp);
	CHECK(tproxy_stop(tp) == 0);
	free(tp);
}
#else
static void test_no_splice(void)
{
	printf("# splice refused: no filter written for this architecture\n");
}
#endif

static void test_many(struct tproxy *tp)
{
	enum { N = 200 };
	static int fds[N];
	char t[64], req[256], buf[256];
	int ok = 0;
	snprintf(t, sizeof(t), "echo.test:%d", echo_port);
	snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", t, t);
	for (int i = 0; i < N; i++) {
		fds[i] = dial(tp->port);
		puts_(fds[i], req);
	}
	for (int i = 0; i < N; i++)
		if (get(fds[i], buf, sizeof(buf), sizeof(buf), "\r\n\r\n") &&
		    strncmp(buf, "HTTP/1.1 200", 12) == 0)
			ok++;
	CHECK(ok == N);
	ok = 0;
	for (int i = 0; i < N; i++) {
		snprintf(req, sizeof(req), "conn %d\n", i);
		puts_(fds[i], req);
	}
	for (int i = 0; i < N; i++) {
		snprintf(req, sizeof(req), "conn %d\n", i);
		if (get(fds[i], buf, sizeof(buf), strlen(req), NULL) == strlen(req) &&
		    strcmp(buf, req) == 0)
			ok++;
		close(fds[i]);
	}
	CHECK(ok == N);
}

static void test_slow(void)
{
	static const char *const allow[] = {"echo.test:%d", "127.0.0.1", NULL};
	struct tproxy *tp = calloc(1, sizeof(*tp));
	tproxy_start(tp, allow, NULL, 300);
	int fd = dial(tp->port);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	puts_(fd, "GET http://echo.test/ HTTP/1.1\r\nHo");
	CHECK(closed(fd));
	clock_gettime(CLOCK_MONOTONIC, &b);
	double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	CHECK(s > 0.2 && s < 3);
	close(fd);
	/* a tunnel whose client never sends its first bytes */
	char t[64];
	snprintf(t, sizeof(t), "echo.test:%d", echo_port);
	CHECK(via_connect(tp, t, NULL, &fd) == 200);
	CHECK(closed(fd));
	close(fd);
	CHECK(tproxy_stop(tp) == 0);
	free(tp);
}

static void test_parsers(void)
{
	struct proxy_req req;
	const char *why = NULL;
	const char *h = "GET http://a.example/x HTTP/1.1\r\nHost: a.example\r\nContent-Length: "
			"12\r\n\r\nbody";
	CHECK(proxy_http_parse(h, strlen(h), &req, &why) == (int)strlen(h) - 4);
	CHECK(req.has_length && req.length == 12 && req.host == 0 && req.minor == 1);
	CHECK(proxy_http_parse(h, 20, &req, &why) == 0);
	CHECK(proxy_http_parse("GET / HTTP/2.0\r\n\r\n", 18, &req, &why) == -EINVAL);
	CHECK(proxy_http_parse("GET  / HTTP/1.1\r\n\r\n", 19, &req, &why) == -EINVAL);
	CHECK(proxy_http_parse("GET / HTTP/1.1\r\nA:\x01\r\n\r\n", 24, &req, &why) == -EINVAL);
	CHECK(proxy_http_parse("GET / HTTP/1.1\r\nA: \r\nB\r\n\r\n", 26, &req, &why) == -EINVAL);
	h = "GET / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n";
	CHECK(proxy_http_parse(h, strlen(h), &req, &why) == -EINVAL);
	CHECK_HAS(why, "HTTP/1.0");

	char host[300];
	size_t hl;
	unsigned port;
	bool br;
	CHECK(proxy_authority("a.b:8080", 8, 0, host, sizeof(host), &hl, &port, &br) == 0 &&
	      port == 8080 && strcmp(host, "a.b") == 0);
	CHECK(proxy_authority("a.b", 3, 0, host, sizeof(host), &hl, &port, &br) == -EINVAL);
	CHECK(proxy_authority("a.b", 3, 80, host, sizeof(host), &hl, &port, &br) == 0 &&
	      port == 80);
	CHECK(proxy_authority("[::1]:22", 8, 0, host, sizeof(host), &hl, &port, &br) == 0 && br &&
	      strcmp(host, "::1") == 0);
	CHECK(proxy_authority("::1:22", 6, 0, host, sizeof(host), &hl, &port, &br) == -EINVAL);
	CHECK(proxy_authority("a@b:1", 5, 0, host, sizeof(host), &hl, &port, &br) == -EINVAL);
	CHECK(proxy_authority("a:0", 3, 0, host, sizeof(host), &hl, &port, &br) == -EINVAL);
	CHECK(proxy_authority("a:65536", 7, 0, host, sizeof(host), &hl, &port, &br) == -EINVAL);
	CHECK(proxy_authority("a\0b:1", 5, 0, host, sizeof(host), &hl, &port, &br) == 0 && hl == 3);
	struct proxy_span au, pa;
	CHECK(proxy_absolute_uri("http://h/p?q", 12, &au, &pa) == 0 && au.off == 7 && au.len == 1 &&
	      pa.len == 4);
	CHECK(proxy_absolute_uri("https://h/", 10, &au, &pa) == -EINVAL);
	CHECK(proxy_absolute_uri("http://h/#f", 11, &au, &pa) == -EINVAL);

	struct proxy_chunk c = {0};
	bool done = false;
	const char *body = "4\r\nwiki\r\n0\r\nT: v\r\n\r\nNEXT";
	CHECK(proxy_chunk_feed(&c, body, strlen(body), &done, &why) == (long)strlen(body) - 4 &&
	      done);
	memset(&c, 0, sizeof(c));
	long n = 0;
	done = false;
	for (size_t i = 0; i < strlen(body) && !done; i++) /* a byte at a time */
		n += proxy_chunk_feed(&c, body + i, 1, &done, &why);
	CHECK(n == (long)strlen(body) - 4);
	memset(&c, 0, sizeof(c));
	CHECK(proxy_chunk_feed(&c, "4\nwiki", 6, &done, &why) == -EINVAL);
	memset(&c, 0, sizeof(c));
	CHECK(proxy_chunk_feed(&c, "2\r\nabc\r\n", 8, &done, &why) == -EINVAL);
	memset(&c, 0, sizeof(c));
	CHECK(proxy_chunk_feed(&c, "ffffffffffffffffff\r\n", 20, &done, &why) == -EINVAL);

	struct proxy_socks_greeting g;
	CHECK(proxy_socks_greeting((const uint8_t *)"\x05\x02\x00\x02", 4, &g) == 4 && g.no_auth &&
	      g.userpass);
	CHECK(proxy_socks_greeting((const uint8_t *)"\x05\x03\x00", 3, &g) == 0);
	CHECK(proxy_socks_greeting((const uint8_t *)"\x04", 1, &g) == -EINVAL);
	struct proxy_socks_req sr;
	CHECK(proxy_socks_request((const uint8_t *)"\x05\x01\x00\x03\x03"
						   "a.b\x01\xbb",
				  10, &sr) == 10 &&
	      sr.nlen == 3 && sr.port == 443);
	CHECK(proxy_socks_request((const uint8_t *)"\x05\x01\x00\x09", 4, &sr) == -EPROTO);
	CHECK(proxy_socks_request((const uint8_t *)"\x05\x01\x00\x03\x00\x01\xbb", 7, &sr) ==
	      -EINVAL);

	uint8_t hb[700];
	struct proxy_hello ch;
	size_t hn = hello(hb, "files.example.org", 17);
	CHECK(proxy_tls_hello(hb, hn, &ch, &why) == (int)hn && ch.sni && ch.nlen == 17 &&
	      memcmp(ch.name, "files.example.org", 17) == 0);
	CHECK(proxy_tls_hello(hb, hn - 1, &ch, &why) == 0);
	hn = hello(hb, NULL, 0);
	CHECK(proxy_tls_hello(hb, hn, &ch, &why) == (int)hn && !ch.sni);
	/* the same hello split over two records */
	hn = hello(hb, "a.example", 9);
	uint8_t two[800];
	size_t half = (hn - 5) / 2;
	memcpy(two, hb, 5);
	two[3] = (uint8_t)(half >> 8), two[4] = (uint8_t)half;
	memcpy(two + 5, hb + 5, half);
	memcpy(two + 5 + half, hb, 5);
	two[5 + half + 3] = (uint8_t)((hn - 5 - half) >> 8);
	two[5 + half + 4] = (uint8_t)(hn - 5 - half);
	memcpy(two + 10 + half, hb + 5 + half, hn - 5 - half);
	CHECK(proxy_tls_hello(two, hn + 5, &ch, &why) == (int)hn + 5 && ch.sni && ch.nlen == 9);
	CHECK(proxy_tls_hello((const uint8_t *)"GET /", 5, &ch, &why) == -EINVAL);
	hb[3] = 0x50; /* a record claiming more than 16 KiB */
	CHECK(proxy_tls_hello(hb, hn, &ch, &why) == -EINVAL);
}

static uint32_t rnd_state = 2463534242u;
static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state;
}

/* Every parser on one input: nothing read past it, every answer inside it. */
static void parse_all(const uint8_t *b, size_t n, int *bad)
{
	static struct proxy_req req;
	const char *why;
	int r = proxy_http_parse((const char *)b, n, &req, &why);
	if (r > (int)n || (r > 0 && req.target.off + req.target.len > n))
		(*bad)++;
	struct proxy_socks_greeting g;
	struct proxy_socks_auth a;
	struct proxy_socks_req q;
	if (proxy_socks_greeting(b, n, &g) > (int)n || proxy_socks_auth(b, n, &a) > (int)n ||
	    proxy_socks_request(b, n, &q) > (int)n)
		(*bad)++;
	struct proxy_hello h;
	r = proxy_tls_hello(b, n, &h, &why);
	if (r > (int)n || h.nlen > sizeof(h.name))
		(*bad)++;
	struct proxy_chunk c = {0};
	bool done;
	if (proxy_chunk_feed(&c, (const char *)b, n, &done, &why) > (long)n)
		(*bad)++;
	struct proxy_dns_query dq;
	uint8_t ans[512];
	int rc = proxy_dns_parse(b, n, &dq);
	if ((rc == 0 && (!dq.parsed || dq.qend > n || strlen(dq.name) > 253)) ||
	    (rc >= 0 && proxy_dns_answer(b, &dq, rc, NULL, ans, sizeof(ans)) > 12 + n))
		(*bad)++;
	char out[HOSTRULE_NAME_MAX], host[300];
	hostrule_name_normalise((const char *)b, n, out, sizeof(out), &why);
	size_t hl;
	unsigned port;
	bool br;
	if (proxy_authority((const char *)b, n, 80, host, sizeof(host), &hl, &port, &br) == 0 &&
	    hl >= sizeof(host))
		(*bad)++;
}

/* A DNS query for name (labels from its dots), type, class IN. */
static size_t dns_query(uint8_t *b, const char *name, unsigned type)
{
	static const uint8_t head[12] = {0xab, 0xcd, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
	memcpy(b, head, sizeof(head));
	size_t n = sizeof(head);
	for (const char *p = name; *p;) {
		size_t l = strcspn(p, ".");
		b[n++] = (uint8_t)l;
		memcpy(b + n, p, l);
		n += l;
		p += l + (p[l] == '.');
	}
	b[n++] = 0;
	b[n++] = (uint8_t)(type >> 8);
	b[n++] = (uint8_t)type;
	b[n++] = 0;
	b[n++] = 1;
	return n;
}

/* One answer read from a resolver's TCP connection: its length, or -1 at the end. */
static int dns_read(int fd, uint8_t *a, size_t cap)
{
	uint8_t l[2];
	if (recv(fd, l, 2, MSG_WAITALL) != 2)
		return -1;
	size_t n = (size_t)l[0] << 8 | l[1];
	return n <= cap && recv(fd, a, n, MSG_WAITALL) == (ssize_t)n ? (int)n : -1;
}

/* A query put after its length, as a client sends it over TCP. */
static size_t dns_framed(uint8_t *b, const char *name)
{
	size_t n = dns_query(b + 2, name, 1);
	b[0] = (uint8_t)(n >> 8);
	b[1] = (uint8_t)n;
	return n + 2;
}

/*
 * The step's resolver over TCP (transparent mode): queries after their
 * lengths, two in one write and one in pieces, each answered in turn; an
 * unlisted name NXDOMAIN and said; a length of 0 or past 512 ends the
 * connection.
 */
static void test_dns_tcp(void)
{
	struct tproxy *tp = calloc(1, sizeof(*tp));
	const char *const none[] = {NULL};
	tproxy_prepare(tp, none, NULL, 0);
	int dport = 0, tport = 0;
	tp->cfg.listen_fds[1] = listen_any(&dport);
	tp->cfg.listen_kind[1] = PROXY_LISTEN_DNS_TCP;
	tp->cfg.listen_fds[2] = listen_any(&tport); /* the names are allowed on its port */
	tp->cfg.listen_kind[2] = PROXY_LISTEN_TRANSPARENT;
	tp->cfg.nlisten = 3;
	char rule[64];
	struct stepbox_err err;
	snprintf(rule, sizeof(rule), "files.example.org:%d", tport);
	CHECK(hostrules_add(&tp->allow, rule, &err) == 0);
	pthread_create(&tp->t, NULL, tproxy_main, tp);
	uint8_t q[1200], a[600];
	int fd = dial(dport);
	size_t n = dns_framed(q, "files.example.org");
	n += dns_framed(q + n, "other.example.org");
	CHECK(fd >= 0 && send(fd, q, n, 0) == (ssize_t)n);
	int m = dns_read(fd, a, sizeof(a));
	CHECK(m > 16 && (a[3] & 15) == 0 && a[7] == 1 && a[m - 4] == 127 && a[m - 3] == 77);
	m = dns_read(fd, a, sizeof(a));
	CHECK(m >= 12 && (a[3] & 15) == 3 && a[7] == 0);
	CHECK(event_wait(tp, "other.example.org", "not_listed") != NULL);
	/* a query in three pieces: its length's first byte, the rest of it, the query */
	n = dns_framed(q, "files.example.org");
	CHECK(send(fd, q, 1, 0) == 1);
	usleep(20000);
	CHECK(send(fd, q + 1, 1, 0) == 1);
	usleep(20000);
	CHECK(send(fd, q + 2, n - 2, 0) == (ssize_t)(n - 2));
	m = dns_read(fd, a, sizeof(a));
	CHECK(m > 16 && (a[3] & 15) == 0 && a[7] == 1 && a[m - 4] == 127);
	/* a length of 0: the end */
	CHECK(send(fd, "\0\0", 2, 0) == 2);
	CHECK(dns_read(fd, a, sizeof(a)) == -1);
	close(fd);
	fd = dial(dport);
	CHECK(fd >= 0 && send(fd, "\x02\x58", 2, 0) == 2); /* 600 */
	CHECK(dns_read(fd, a, sizeof(a)) == -1);
	close(fd);
	CHECK(tproxy_stop(tp) == 0);
	free(tp);
}

/* proxy_dns.c: a query read, each malformed one answered as such or not at all, the map. */
static void test_dns(void)
{
	uint8_t q[600], a[512];
	struct proxy_dns_query dq;
	size_t n = dns_query(q, "Files.Example.org", 1);
	CHECK(proxy_dns_parse(q, n, &dq) == 0 && strcmp(dq.name, "Files.Example.org") == 0 &&
	      dq.qtype == 1 && dq.id == 0xabcd && dq.rd && dq.qend == n);
	static const uint8_t addr[4] = {127, 77, 0, 1};
	size_t m = proxy_dns_answer(q, &dq, 0, addr, a, sizeof(a));
	/* QR and RA, RD echoed, NOERROR, one question and one answer, the address last */
	CHECK(m == n + 16 && a[0] == 0xab && a[2] == 0x81 && a[3] == 0x80 && a[5] == 1 &&
	      a[7] == 1 && memcmp(a + m - 4, addr, 4) == 0 && memcmp(a + 12, q + 12, n - 12) == 0);
	m = proxy_dns_answer(q, &dq, 3, NULL, a, sizeof(a));
	CHECK(m == n && (a[3] & 15) == 3 && a[7] == 0);
	CHECK(proxy_dns_answer(q, &dq, 0, addr, a, n) == 0); /* too small: nothing */
	/* refusals: FORMERR (1), NOTIMP (4), or no answer (-1) */
	CHECK(proxy_dns_parse(q, 11, &dq) == -1);
	q[2] |= 0x80; /* an answer */
	CHECK(proxy_dns_parse(q, n, &dq) == -1);
	q[2] = 0x01 | (2 << 3); /* a STATUS query */
	CHECK(proxy_dns_parse(q, n, &dq) == 4);
	q[2] = 0x01;
	q[5] = 2; /* two questions */
	CHECK(proxy_dns_parse(q, n, &dq) == 1);
	q[5] = 1;
	CHECK(proxy_dns_parse(q, n - 1, &dq) == 1); /* the class cut */
	n = dns_query(q, "a.example", 1);
	q[12] = 0xc0; /* a compression pointer where a label goes */
	CHECK(proxy_dns_parse(q, n, &dq) == 1);
	n = dns_query(q, "a.example", 1);
	q[16] = '.'; /* a dot inside the label "example" (its length at 14) */
	CHECK(proxy_dns_parse(q, n, &dq) == 1);
	q[16] = 0; /* a NUL there */
	CHECK(proxy_dns_parse(q, n, &dq) == 1);
	n = dns_query(q, "a.example", 1);
	q[n - 1] = 3; /* class CHAOS */
	CHECK(proxy_dns_parse(q, n, &dq) == 4 && dq.parsed);
	/* a name of 253 characters is read, one of 255 is not */
	char longname[300];
	memset(longname, 'a', sizeof(longname));
	for (int i = 63; i < 300; i += 64)
		longname[i] = '.';
	longname[253] = '\0';
	n = dns_query(q, longname, 1);
	CHECK(proxy_dns_parse(q, n, &dq) == 0 && strlen(dq.name) == 253);
	longname[253] = 'a';
	longname[255] = '\0';
	n = dns_query(q, longname, 1);
	CHECK(proxy_dns_parse(q, n, &dq) == 1);
	/* the map: one address a name, the same again, none past the bound */
	struct proxy_dns_map map = {0};
	uint8_t x[4], y[4], z[4];
	CHECK(proxy_dns_map_addr(&map, "a.example", x) == 0 && x[0] == 127 && x[1] == 77 &&
	      x[2] == 0 && x[3] == 1);
	CHECK(proxy_dns_map_addr(&map, "b.example", y) == 0 && y[3] == 2);
	CHECK(proxy_dns_map_addr(&map, "a.example", z) == 0 && memcmp(x, z, 4) == 0);
	CHECK(strcmp(proxy_dns_map_name(&map, y), "b.example") == 0);
	static const uint8_t none[4] = {127, 77, 0, 9}, other[4] = {127, 0, 0, 1};
	CHECK(!proxy_dns_map_name(&map, none) && !proxy_dns_map_name(&map, other));
	char nm[32];
	int r = 0;
	for (int i = 2; r == 0 && i < PROXY_DNS_MAX_NAMES + 5; i++) {
		snprintf(nm, sizeof(nm), "n%d.example", i);
		r = proxy_dns_map_addr(&map, nm, z);
	}
	CHECK(r == -ENOSPC && map.n == PROXY_DNS_MAX_NAMES);
	proxy_dns_map_free(&map);
}

/* egress: what the init makes for the transparent mode, from the hosts and a resolv.conf */
static void test_transparent_plan(void)
{
	struct hostrules r = {0};
	struct stepbox_err err = {0};
	const char *entries[] = {"a.example", "b.example:22", "10.0.0.0/8:5432", "c.example:3128",
				 "*.d.example:443"};
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
		CHECK(hostrules_add(&r, entries[i], &err) == 0);
	char path[] = "/tmp/stepbox-resolv-XXXXXX";
	int fd = mkstemp(path);
	const char *conf = "# a comment\nsearch example\nnameserver 10.1.2.3\n"
			   "nameserver fe80::1%eth0\nnameserver ::1\nnameserver 10.9.9.9\n"
			   "nameserver 10.8.8.8\n";
	CHECK(fd >= 0 && write(fd, conf, strlen(conf)) == (ssize_t)strlen(conf));
	if (fd >= 0)
		close(fd);
	struct egress_transparent t;
	egress_transparent_plan(&t, &r, path);
	/* 80 and 443 for a bare name, 22; an address entry and the proxy's own 3128 not */
	CHECK(t.nports == 3 && t.ports[0] == 80 && t.ports[1] == 443 && t.ports[2] == 22);
	/* the first three nameservers as glibc reads them (a scoped one skipped), and 127.0.0.1 */
	CHECK(t.ndns == 3);
	const struct sockaddr_in *a = (const struct sockaddr_in *)&t.dns[0];
	const struct sockaddr_in6 *b = (const struct sockaddr_in6 *)&t.dns[1];
	const struct sockaddr_in *c = (const struct sockaddr_in *)&t.dns[2];
	CHECK(a->sin_family == AF_INET && a->sin_addr.s_addr == htonl(0x0a010203) &&
	      ntohs(a->sin_port) == 53);
	CHECK(b->sin6_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&b->sin6_addr));
	CHECK(c->sin_family == AF_INET && c->sin_addr.s_addr == htonl(INADDR_LOOPBACK));
	unlink(path);
	egress_transparent_plan(&t, NULL, "/nonexistent/resolv.conf");
	CHECK(t.nports == 0 && t.ndns == 1);
	hostrules_free(&r);
}

static void test_random(void)
{
	static uint8_t seeds[7][800];
	size_t sl[7];
	const char *h = "POST http://a.example:81/x HTTP/1.1\r\nHost: a.example:81\r\n"
			"Transfer-Encoding: chunked\r\n\r\n";
	memcpy(seeds[0], h, sl[0] = strlen(h));
	const char *ck = "4\r\nwiki\r\n5;e=1\r\npedia\r\n0\r\nX: y\r\n\r\n";
	memcpy(seeds[1], ck, sl[1] = strlen(ck));
	sl[2] = hello(seeds[2], "files.example.org", 17);
	sl[3] = socks_name(seeds[3], 1, "a.example", 9, 443);
	memcpy(seeds[4], "\x05\x03\x00\x01\x02", sl[4] = 5);
	memcpy(seeds[5], "\x01\x07stepbox\x06s3cret", sl[5] = 16);
	sl[6] = dns_query(seeds[6], "files.example.org", 28);
	static uint8_t buf[20000];
	int bad = 0;
	for (int i = 0; i < 6000; i++) {
		size_t n;
		if (i % 3 == 0) {
			n = rnd() % 700;
			for (size_t k = 0; k < n; k++)
				buf[k] = (uint8_t)rnd();
		} else {
			int s = (int)(rnd() % 7);
			n = sl[s];
			memcpy(buf, seeds[s], n);
			for (int m = (int)(rnd() % 4); m >= 0; m--) {
				size_t at = rnd() % (n + 1);
				switch (rnd() % 4) {
				case 0: /* flip */
					if (at < n)
						buf[at] = (uint8_t)rnd();
					break;
				case 1: /* cut */
					n = at;
					break;
				case 2: /* a special byte */
					if (at < n)
						buf[at] = "\0\r\n%:;\xff\x16"[rnd() % 8];
					break;
				default: /* duplicate a run */
					if (n + 64 < sizeof(buf) && at < n) {
						memmove(buf + at + 32, buf + at, n - at);
						n += 32;
					}
				}
			}
		}
		parse_all(buf, n, &bad);
	}
	CHECK(bad == 0);
}

static long rss_kib(pid_t pid)
{
	char path[64], line[256];
	long rss = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &rss) == 1)
			break;
	if (f)
		fclose(f);
	return rss;
}

static void test_spawn(void)
{
	struct hostrules allow = {0};
	struct stepbox_err err;
	int stop[2], lp;
	char rule[64];
	snprintf(rule, sizeof(rule), "echo.test:%d", echo_port);
	CHECK(hostrules_add(&allow, rule, &err) == 0);
	CHECK(hostrules_add(&allow, "127.0.0.1", &err) == 0);
	CHECK(pipe2(stop, O_CLOEXEC) == 0);
	struct proxy_cfg cfg = {.allow = &allow,
				.events_fd = -1,
				.stop_fd = stop[0],
				.nlisten = 1,
				.resolve = test_resolve};
	cfg.listen_fds[0] = listen_any(&lp);
	pid_t pid = proxy_spawn(&cfg, &err);
	CHECK(pid > 0);
	usleep(100000);
	long rss0 = rss_kib(pid);
	/*
	 * None of the caller's variables left in the proxy's memory (what it
	 * parses is the step's): its environment block all zeros; the control,
	 * this process's own, holds variables
	 */
	for (int self = 0; self < 2; self++) {
		char envp[64], *env = NULL;
		size_t envlen = 0;
		snprintf(envp, sizeof(envp), "/proc/%d/environ", self ? (int)getpid() : (int)pid);
		int efd = open(envp, O_RDONLY | O_CLOEXEC);
		CHECK(efd >= 0 && path_read_fd(efd, 1 << 20, &env, &envlen) == 0);
		CHECK(self ? memchr(env, '=', envlen) != NULL : memchr(env, '=', envlen) == NULL);
		if (efd >= 0)
			close(efd);
		free(env);
	}
	close(stop[0]);
	int fd = dial(lp);
	char buf[512];
	puts_(fd, "CONNECT other.test:443 HTTP/1.1\r\n\r\n");
	get(fd, buf, sizeof(buf), sizeof(buf), NULL);
	CHECK_HAS(buf, "HTTP/1.1 403");
	close(fd);
	/* 100 tunnels at once, each with a full buffer's worth in flight: the RSS */
	enum { N = 100 };
	static int fds[N];
	static char chunk[64 * 1024];
	char t[64];
	snprintf(t, sizeof(t), "CONNECT echo.test:%d HTTP/1.1\r\n\r\n", echo_port);
	for (int i = 0; i < N; i++) {
		fds[i] = dial(lp);
		puts_(fds[i], t);
	}
	int ok = 0;
	for (int i = 0; i < N; i++) {
		size_t n = 0;
		while (n < 39 && read(fds[i], buf + n, 1) == 1)
			n++;
		ok += n == 39;
		fcntl(fds[i], F_SETFL, O_NONBLOCK);
		for (int k = 0; k < 8; k++) /* fill what the kernel and the proxy hold */
			if (send(fds[i], chunk, sizeof(chunk), MSG_NOSIGNAL) < 0)
				break;
	}
	CHECK(ok == N);
	usleep(300000);
	long rss = rss_kib(pid);
	printf("# the proxy's RSS: %ld KiB at its start (the test's pages it inherits), %ld KiB "
	       "with %d busy tunnels\n",
	       rss0, rss, N);
#ifndef SANITIZED /* ASan's shadow memory and quarantine are not the proxy's */
	CHECK(rss0 > 0 && rss > 0 && rss - rss0 < 6 * 1024);
#endif
	for (int i = 0; i < N; i++)
		close(fds[i]);
	CHECK(proxy_stop(pid, stop[1]) == 0);
	close(cfg.listen_fds[0]);
	hostrules_free(&allow);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	start_server(&echo_port, echo_conn);
	start_server(&source_port, source_conn);
	test_parsers();
	test_dns();
	test_dns_tcp();
	test_transparent_plan();
	test_random();
	struct tproxy *tp = calloc(1, sizeof(*tp));
	tproxy_start(tp, rules, NULL, 0);
	test_connect(tp);
	test_sni(tp);
	test_http(tp);
	test_socks(tp);
	test_big(tp);
	test_big_up(tp);
	test_bulk_many(tp);
	test_many(tp);
	CHECK(tproxy_stop(tp) == 0);
	free(tp);
	test_no_splice();
	test_no_loopback_rule();
	test_secret();
	test_outsiders();
	test_slow();
	test_spawn();
	return tap_done();
}
