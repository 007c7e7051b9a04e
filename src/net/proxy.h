/*
 * proxy: the step's one way out when its policy names hosts (issue 34).
 * It runs outside the sandbox, as a process of its own that stepbox forks,
 * and serves on the listeners it is handed, sniffing each connection's
 * first byte: SOCKS5 (0x05, CONNECT only, names or addresses), else HTTP
 * (CONNECT host:port, then a tunnel; or a plain request with an absolute
 * URI, forwarded in origin form, every request's Host checked). For each
 * target it normalises the name, asks the deny rules then the allow rules,
 * resolves the name itself, refuses an address that is not public unless
 * an address rule lists it, and connects to the address it checked. Every
 * byte it reads comes from a hostile step: every input is bounded, nothing
 * it reads makes it allocate past its bounds. docs/network.md, "The proxy".
 */
#ifndef STEPBOX_PROXY_H
#define STEPBOX_PROXY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "err.h"
#include "hostrule.h"

/* The defaults of the bounds a proxy_cfg leaves 0. */
#define PROXY_DEFAULT_MAX_CONNS 256
#define PROXY_DEFAULT_BUFFER (17 * 1024) /* each direction; also the least taken */
#define PROXY_DEFAULT_IDLE_MS 120000     /* no byte either way */
/* a request's head, a lookup, a connect, a ClientHello */
#define PROXY_DEFAULT_HANDSHAKE_MS 10000
#define PROXY_HALF_OPEN_MS 30000 /* one side has ended: idle at most this long */
#define PROXY_HANDOFF_TAG 'p'
/* ... and the transparent mode's: a TCP listener for a port, the resolver's UDP socket */
#define PROXY_HANDOFF_TRANSPARENT 't'
#define PROXY_HANDOFF_DNS 'd'
#define PROXY_HANDOFF_DNS_TCP 'c'
#define PROXY_HANDOFF_END 'e' /* the last: what it carries is closed */
#define PROXY_MAX_LISTEN 24
/*
 * Refusal events written at most; past them one {"event":"dropped",
 * "count":N} at the end. As many "reached" events (one a connection) have
 * a budget of their own; past it the hosts are summed and written at the end.
 */
#define PROXY_MAX_EVENTS 10000
/* refusals for a missing or wrong secret written one by one; the rest only counted */
#define PROXY_AUTH_EVENTS 16
/* hosts reached kept apart in a list (the proxy's past its budget, the report's) */
#define PROXY_MAX_REACHED 1024

/* A host reached (its name, port and address), summed over its connections. */
struct proxy_reached {
	char name[256];
	unsigned port;
	char addr[64];
	uint64_t up, down;
	unsigned long connections;
};

/*
 * Hosts reached, each kept apart, PROXY_MAX_REACHED at most; past them the
 * one that moved the fewest bytes is summed into others, so that the host
 * a step sent the most to always keeps its name. Starts zeroed.
 */
struct proxy_reached_list {
	struct proxy_reached *v;
	size_t n;
	struct proxy_reached others; /* no name: the hosts summed, their connections */
	unsigned long others_hosts;
};

/* Add a host's bytes and connections (where memory runs out: into others). */
void proxy_reached_add(struct proxy_reached_list *l, const char *name, unsigned port,
		       const char *addr, uint64_t up, uint64_t down, unsigned long connections);
void proxy_reached_free(struct proxy_reached_list *l);

struct proxy_cfg {
	const struct hostrules *allow, *deny; /* borrowed; deny may be NULL */
	/*
	 * Bound sockets (made nonblocking), each of a kind: PROXY_LISTEN_PROXY
	 * (a listening TCP socket the step's clients are pointed at),
	 * PROXY_LISTEN_TRANSPARENT (a listening TCP socket on a port the hosts
	 * name, in the step's own network namespace: a connection is carried to
	 * the name the resolver gave its address for), PROXY_LISTEN_DNS (a UDP
	 * socket at the step's resolver's address: proxy_dns.c) and
	 * PROXY_LISTEN_DNS_TCP (a listening TCP socket there: the same queries,
	 * each after its length, RFC 1035 4.2.2).
	 */
	int listen_fds[PROXY_MAX_LISTEN];
	enum proxy_listen {
		PROXY_LISTEN_PROXY,
		PROXY_LISTEN_TRANSPARENT,
		PROXY_LISTEN_DNS,
		PROXY_LISTEN_DNS_TCP
	} listen_kind[PROXY_MAX_LISTEN];
	size_t nlisten;
	/*
	 * NULL: whoever reaches a listener is the step (a listener in its own
	 * network namespace). Else the run's secret: HTTP clients send
	 * Proxy-Authorization: Basic base64("stepbox:SECRET"), SOCKS5 clients
	 * user "stepbox" and password SECRET (RFC 1929); compared in constant
	 * time, a wrong one refused (407, SOCKS auth failure) and reported.
	 */
	const char *secret;
	/*
	 * proxy_spawn only: a UNIX socket over which more listeners come
	 * (fdpass, tagged with their kind: PROXY_HANDOFF_TAG, _TRANSPARENT,
	 * _DNS; from the step's own network namespace), up to one tagged
	 * PROXY_HANDOFF_END, taken before serving; or -1. 0 is never one.
	 */
	int handoff_fd;
	int events_fd; /* one JSON object a line (docs/network.md), or -1 */
	int stop_fd;   /* the loop ends when this is readable or hung up */
	/* bounds; 0 takes the PROXY_DEFAULT_* above */
	size_t max_conns;  /* connections at once; past it a new one is closed */
	size_t max_buffer; /* bytes of each direction's buffer, per connection */
	unsigned idle_ms, handshake_ms;
	/*
	 * Test hook: resolve name into up to n addresses (their ports are the
	 * proxy's to set); returns how many, or -errno. Called from a thread
	 * of the proxy's own, so it must be thread-safe. NULL: getaddrinfo.
	 */
	int (*resolve)(void *ctx, const char *name, struct sockaddr_storage *out, size_t n);
	void *resolve_ctx;
	/*
	 * proxy_spawn only: confine the proxy's own process (in the child, its
	 * fds closed, before it serves); 0, or -errno and it does not serve.
	 * NULL: none. The Linux build's is landlock_confine_proxy.
	 */
	int (*confine)(void *ctx);
	void *confine_ctx;
	/*
	 * proxy_spawn's: once the last events are written, the process ends
	 * at once, its lookups still running with it (a resolver that does not
	 * answer would hold the end for its timeout); proxy_serve in a thread
	 * waits for each.
	 */
	bool quick_exit;
};

/*
 * Serve until cfg->stop_fd is readable or hangs up, in the calling thread:
 * 0 when stopped (every connection closed, every event written), -errno
 * on a failure of its own (no memory for its tables, poll failing). It
 * never changes the process's signal dispositions: when events_fd is a
 * pipe, the caller ignores SIGPIPE (proxy_spawn's child does).
 */
int proxy_serve(const struct proxy_cfg *cfg);

/*
 * Fork the proxy. The child closes every fd but cfg's (stdin, stdout and
 * stderr become /dev/null), asks to die with its parent, ignores SIGPIPE,
 * runs proxy_serve and _exits (0, or 1 on its failure). Returns the child's
 * pid, or -errno with err filled. Fork before starting threads of one's own.
 */
pid_t proxy_spawn(const struct proxy_cfg *cfg, struct stepbox_err *err);

/*
 * Ask the proxy to end (a byte to stop_fd_write_end, which is then
 * closed) and wait for it; it is killed after 2 s. 0 when it exited 0,
 * -ECHILD for another ending, -errno on a failure to wait.
 */
int proxy_stop(pid_t pid, int stop_fd_write_end);

#endif
