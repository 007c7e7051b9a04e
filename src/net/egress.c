#include "egress.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#ifdef __APPLE__
#include <sys/random.h> /* getentropy; glibc's is in unistd.h */
#endif

#include "proxy.h"

void egress_init(struct egress *e)
{
	memset(e, 0, sizeof(*e));
	e->proxy = -1;
	e->stop = e->handoff = e->events = -1;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/*
 * Closed on exec, at once where the system can (Linux); macOS has no
 * SOCK_CLOEXEC or pipe2, and there the flag is set after, before stepbox
 * forks anything.
 */
#ifdef SOCK_CLOEXEC
#define SOCK_CX SOCK_CLOEXEC
#else
#define SOCK_CX 0
#endif

static int cloexec(int fd)
{
	return fd >= 0 && !SOCK_CX && fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 ? -1 : fd;
}

static int cloexec_pipe(int p[2])
{
#ifdef __linux__
	return pipe2(p, O_CLOEXEC);
#else
	return pipe(p) < 0 || cloexec(p[0]) < 0 || cloexec(p[1]) < 0 ? -1 : 0;
#endif
}

/* A listener on the host's loopback, on a port the kernel picks. */
static int host_listener(unsigned short *port)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CX, 0);
	if (cloexec(s) < 0) {
		int e = errno;
		if (s >= 0)
			close(s);
		return -e;
	}
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 128) < 0 ||
	    getsockname(s, (struct sockaddr *)&a, &al) < 0) {
		int e = errno;
		close(s);
		return -e;
	}
	*port = ntohs(a.sin_port);
	return s;
}

/* 128 bits from the kernel, as hex: the per-run secret. */
static int make_secret(char out[33])
{
	unsigned char b[16];
	if (getentropy(b, sizeof(b)) < 0)
		return -errno;
	for (size_t i = 0; i < sizeof(b); i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	return 0;
}

static void add_port(struct egress_transparent *t, unsigned port)
{
	if (port == EGRESS_NETNS_PORT || t->nports == EGRESS_MAX_TPORTS)
		return;
	for (size_t i = 0; i < t->nports; i++)
		if (t->ports[i] == port)
			return;
	t->ports[t->nports++] = (unsigned short)port;
}

static void add_dns(struct egress_transparent *t, const char *text)
{
	struct sockaddr_storage sa = {0};
	struct sockaddr_in *in = (struct sockaddr_in *)&sa;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&sa;
	if (inet_pton(AF_INET, text, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(53);
	} else if (inet_pton(AF_INET6, text, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(53);
	} else {
		return; /* a scoped or malformed address: the step's resolver skips it too */
	}
	for (size_t i = 0; i < t->ndns; i++)
		if (memcmp(&t->dns[i], &sa, sizeof(sa)) == 0)
			return;
	if (t->ndns < EGRESS_MAX_DNS)
		t->dns[t->ndns++] = sa;
}

void egress_transparent_plan(struct egress_transparent *t, const struct hostrules *hosts,
			     const char *resolv)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; hosts && i < hosts->n; i++) {
		const struct hostrule *h = &hosts->v[i];
		if (h->kind == HOSTRULE_ADDR)
			continue; /* an address is reached through the proxy variables */
		if (h->port) {
			add_port(t, h->port);
		} else {
			add_port(t, 80);
			add_port(t, 443);
		}
	}
	/* glibc reads three nameservers; and 127.0.0.1, its default where the step finds none */
	FILE *f = resolv ? fopen(resolv, "re") : NULL;
	char line[512];
	size_t named = 0;
	while (f && named < 3 && fgets(line, sizeof(line), f)) {
		char word[16], addr[INET6_ADDRSTRLEN + 1];
		if (sscanf(line, " %15s %46s", word, addr) == 2 &&
		    strcmp(word, "nameserver") == 0) {
			add_dns(t, addr);
			named++;
		}
	}
	if (f)
		fclose(f);
	add_dns(t, "127.0.0.1");
}

/* The events file: unlinked, shared with the proxy, read after it ends. */
static int events_file(void)
{
	FILE *f = tmpfile();
	if (!f)
		return -errno;
	int fd = fcntl(fileno(f), F_DUPFD_CLOEXEC, 3);
	int e = errno;
	fclose(f);
	return fd >= 0 ? fd : -e;
}

/* How the proxy confines itself (egress_start's confine). */
struct confinement {
	int (*fn)(void *ctx);
	void *ctx;
};

static int started(struct egress *e, const struct stepbox_config *cfg, int listener,
		   const char *secret, int proxy_handoff, const struct confinement *c,
		   struct stepbox_err *err)
{
	int stop[2];
	if (cloexec_pipe(stop) < 0)
		return err_set(err, ERR_UNAVAILABLE, errno, "start the network proxy");
	struct proxy_cfg pc = {
		.allow = &cfg->net_hosts,
		.deny = &cfg->net_deny,
		.nlisten = listener >= 0 ? 1 : 0,
		.listen_fds = {listener},
		.handoff_fd = proxy_handoff,
		.secret = secret,
		.events_fd = e->events,
		.stop_fd = stop[0],
		.confine = c->fn,
		.confine_ctx = c->ctx,
	};
	e->proxy = proxy_spawn(&pc, err);
	close(stop[0]);
	if (e->proxy < 0) {
		close(stop[1]);
		return -EIO;
	}
	e->stop = stop[1];
	return 0;
}

int egress_start(struct egress *e, const struct stepbox_config *cfg, bool own_netns,
		 int (*confine)(void *ctx), void *confine_ctx, struct stepbox_err *err)
{
	const struct confinement c = {confine, confine_ctx};
	egress_init(e);
	e->own_netns = own_netns;
	int r = e->events = events_file();
	if (r < 0)
		return err_set(err, ERR_UNAVAILABLE, -r, "make the network proxy's record");
	if (own_netns) {
		int pair[2];
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CX, 0, pair) < 0 ||
		    cloexec(pair[0]) < 0 || cloexec(pair[1]) < 0)
			return err_set(err, ERR_UNAVAILABLE, errno, "start the network proxy");
		e->handoff = pair[1];
		e->port = EGRESS_NETNS_PORT;
		egress_transparent_plan(&e->transparent, &cfg->net_hosts, "/etc/resolv.conf");
		snprintf(e->url, sizeof(e->url), "http://127.0.0.1:%u", e->port);
		r = started(e, cfg, -1, NULL, pair[0], &c, err);
		close(pair[0]);
		return r;
	}
	char secret[33];
	int l = host_listener(&e->port);
	if (l < 0)
		return err_set(err, ERR_UNAVAILABLE, -l,
			       "listen on 127.0.0.1 for the network proxy");
	if ((r = make_secret(secret)) < 0) {
		close(l);
		return err_set(err, ERR_UNAVAILABLE, -r, "draw the network proxy's secret");
	}
	snprintf(e->url, sizeof(e->url), "http://stepbox:%s@127.0.0.1:%u", secret, e->port);
	r = started(e, cfg, l, secret, -1, &c, err);
	close(l);
	return r;
}

static uint64_t num(json_t *o, const char *key)
{
	json_int_t v = json_integer_value(json_object_get(o, key));
	return v > 0 ? (uint64_t)v : 0;
}

json_t *egress_reached_json(const struct egress *e)
{
	const struct proxy_reached_list *l = &e->reached;
	json_t *a = json_array();
	for (size_t i = 0; a && i < l->n; i++) {
		const struct proxy_reached *h = &l->v[i];
		json_array_append_new(a, json_pack("{s:s, s:i, s:s, s:I, s:I, s:i}", "host",
						   h->name, "port", (int)h->port, "address",
						   h->addr, "bytes_up", (json_int_t)h->up,
						   "bytes_down", (json_int_t)h->down, "connections",
						   (int)h->connections));
	}
	json_t *h = json_pack("{s:o, s:I}", "reached", a, "refused", (json_int_t)e->refused);
	if (h && l->others_hosts)
		json_object_set_new(h, "reached_others",
				    json_pack("{s:I, s:I, s:I, s:I}", "hosts",
					      (json_int_t)l->others_hosts, "bytes_up",
					      (json_int_t)l->others.up, "bytes_down",
					      (json_int_t)l->others.down, "connections",
					      (json_int_t)l->others.connections));
	if (h && e->dropped)
		json_object_set_new(h, "refusals_unrecorded", json_integer((json_int_t)e->dropped));
	return h;
}

static const char *str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* One line of the proxy's record. */
static void take_event(struct egress *e, const char *line, const struct denial_sink *sink)
{
	json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, NULL);
	const char *ev = o ? str(o, "event") : NULL;
	const char *name = o ? str(o, "name") : NULL;
	int port = o ? (int)json_integer_value(json_object_get(o, "port")) : 0;
	if (ev && strcmp(ev, "refused") == 0) {
		e->refused++;
		struct denial_host h = {str(o, "proto"),
					name ? name : "",
					port,
					str(o, "addr"),
					str(o, "why"),
					str(o, "detail"),
					json_real_value(json_object_get(o, "t"))};
		if (sink && sink->host && h.why)
			sink->host(sink->ctx, &h);
	} else if (ev && strcmp(ev, "reached") == 0 && name) {
		const char *addr = str(o, "addr");
		proxy_reached_add(&e->reached, name, (unsigned)port, addr ? addr : "", num(o, "up"),
				  num(o, "down"), num(o, "connections"));
	} else if (ev && strcmp(ev, "reached_others") == 0) {
		struct proxy_reached *h = &e->reached.others;
		e->reached.others_hosts += num(o, "hosts");
		h->up += num(o, "up");
		h->down += num(o, "down");
		h->connections += num(o, "connections");
	} else if (ev && strcmp(ev, "dropped") == 0) {
		e->dropped += num(o, "count");
		e->refused += num(o, "count");
	}
	json_decref(o);
}

static void read_events(struct egress *e, const struct denial_sink *sink)
{
	if (lseek(e->events, 0, SEEK_SET) < 0)
		return;
	int fd = fcntl(e->events, F_DUPFD_CLOEXEC, 3);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0)
		take_event(e, line, sink);
	free(line);
	fclose(f);
}

void egress_stop(struct egress *e, const struct denial_sink *sink)
{
	close_fd(&e->handoff);
	if (e->proxy > 0) {
		/* a hang-up ends it: never a write that a proxy gone already makes SIGPIPE */
		close_fd(&e->stop);
		proxy_stop(e->proxy, -1);
		e->proxy = -1;
	}
	close_fd(&e->stop);
	if (e->events >= 0)
		read_events(e, sink);
	close_fd(&e->events);
}

void egress_say_unrecorded(const struct egress *e, FILE *f)
{
	if (e->dropped)
		fprintf(f,
			"stepbox: explain: the proxy refused %lu more connection%s than it "
			"recorded one by one (it records %d, and %d refusals for a missing "
			"secret); the report counts them (hosts.refusals_unrecorded)\n",
			e->dropped, e->dropped == 1 ? "" : "s", PROXY_MAX_EVENTS,
			PROXY_AUTH_EVENTS);
}

void egress_release(struct egress *e)
{
	egress_stop(e, NULL);
	proxy_reached_free(&e->reached);
	e->dropped = 0;
}
