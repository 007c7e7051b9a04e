/*
 * denial: how a layer says what it refused, without knowing who listens.
 * The supervisor (and the layers to come: a proxy, protected paths) hand
 * each refusal to a sink that diagnostics (explain) gives them; no layer
 * includes explain.h, so the arrows run from diagnostics down to the layers.
 */
#ifndef STEPBOX_DENIAL_H
#define STEPBOX_DENIAL_H

#include <sys/types.h>

/* Refusals a layer keeps before its owner takes them; the rest are dropped. */
#define DENIAL_KEEP 200

/*
 * What was refused. OP_NOFD: a use of sockets the supervisor refuses only
 * because this host refuses it pidfd_getfd (path says which); no grant
 * would allow it.
 */
enum denial_op {
	OP_READ,
	OP_WRITE,
	OP_CREATE,
	OP_DELETE,
	OP_RENAME,
	OP_LINK,
	OP_TRUNCATE,
	OP_EXECUTE,
	OP_CONNECT,
	OP_BIND,
	OP_SIGNAL,
	OP_METADATA,
	OP_NOFD,
	OP_SETID,
	OP_HOST,      /* a host by name (struct denial_host) */
	OP_LOOKUP,    /* stat, access, readlink: under the namespaces an ungranted path is absent */
	OP_SOCKET,    /* a socket the network mode refuses (path: its kind, "IPv4 UDP") */
	OP_PROTECTED, /* a protected path the live layer refused (path: it, canonical) */
	OP_NESTED     /* a call the supervisor makes for the step, refused for a Landlock
			 domain a process of the step took itself (path: the call) */
};

/*
 * A way out by name the proxy refused (egress.h): the host as the step asked
 * for it (normalised; an address when it gave one), its port, the address
 * it resolved to (or NULL), why (not_listed, denied, private_address,
 * sni_mismatch, host_mismatch, bad_name, ip_literal, auth, malformed,
 * resolve_failed; direct for a connect around the proxy), and detail, a
 * sentence or NULL.
 */
struct denial_host {
	const char *proto; /* connect, http, socks5, direct */
	const char *name;
	int port;
	const char *addr;
	const char *why;
	const char *detail;
	double when; /* when it was refused: CLOCK_MONOTONIC seconds, 0 if unknown */
};

/*
 * Where refusals go: add(ctx, ...) once for each, from the thread that owns
 * the sink (a layer keeps its own until then). program: the process's name;
 * path: canonical as far as it exists, or NULL; port: the TCP port of a
 * connect or bind, a signal's target pid, or -1; when: the moment of the
 * refusal on CLOCK_MONOTONIC (the same clock in every process of the host),
 * so that diagnostics can tell which came last before a command failed.
 */
/*
 * A call a layer made on the step's behalf (the protected paths' live
 * layer) that failed: not a refusal yet, but what the tracer would have
 * seen fail, judged as it judges the step's own (errnum: the step's).
 */
struct denial_failed {
	enum denial_op op;
	const char *program;
	pid_t pid;
	const char *path, *path2; /* absolute as the step named them; "" for none */
	int errnum;
	double when;
};

struct denial_sink {
	void (*add)(void *ctx, enum denial_op op, const char *program, pid_t pid, const char *path,
		    int port, double when);
	void (*host)(void *ctx, const struct denial_host *h);
	void (*failed)(void *ctx, const struct denial_failed *f);
	void *ctx;
};

#endif
