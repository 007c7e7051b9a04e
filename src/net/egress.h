/*
 * egress: the step's way out by name (NET_HOSTS). The proxy (proxy.h) runs
 * in a process of its own outside the sandbox for the step's lifetime;
 * egress starts it where the backend can hold the step to it, points the
 * step's clients at it, and when the step is over hands what it refused to
 * a denial sink and what it reached to the report.
 *
 * Two ways in, by what the backend gives (docs/network.md):
 *  - a network namespace of the step's own (stacked, mountns): the init
 *    makes the proxy's listener there on loopback and hands it out over
 *    e->handoff (netns.h); loopback is all the namespace has, so nothing
 *    else is reachable and nothing else can reach the proxy;
 *  - the host's loopback (Landlock alone, Seatbelt): a listener on
 *    127.0.0.1 with a per-run secret every request must carry, the step's
 *    connects held to that address and port by the layers.
 */
#ifndef STEPBOX_EGRESS_H
#define STEPBOX_EGRESS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "denial.h"
#include "err.h"
#include "hostrule.h"
#include "policy.h"
#include "proxy.h"

/* The port the proxy listens on inside the step's own network namespace. */
#define EGRESS_NETNS_PORT 3128

/*
 * What the init makes in the step's own network namespace for clients that
 * ignore the proxy variables (the transparent mode, proxy_dns.c): a UDP
 * socket and a TCP listener on port 53 at each address the step's resolver
 * asks (the host's /etc/resolv.conf's nameservers, which the init adds to
 * loopback, and 127.0.0.1, glibc's default), and a TCP listener on each
 * port the hosts name, on every address.
 */
#define EGRESS_MAX_DNS 4
#define EGRESS_MAX_TPORTS 8
struct egress_transparent {
	struct sockaddr_storage dns[EGRESS_MAX_DNS];
	size_t ndns;
	unsigned short ports[EGRESS_MAX_TPORTS];
	size_t nports;
};

/*
 * The transparent mode's sockets for hosts (their name entries' ports: 80
 * and 443 where one names none; not EGRESS_NETNS_PORT) and the resolver
 * file resolv (its "nameserver" lines; NULL or unreadable: 127.0.0.1
 * alone). Pure but for reading resolv.
 */
void egress_transparent_plan(struct egress_transparent *t, const struct hostrules *hosts,
			     const char *resolv);

struct egress {
	pid_t proxy;    /* the proxy's process, or -1 */
	int stop;       /* the write end of its stop pipe, or -1 */
	int handoff;    /* own_netns: the init's end of the handoff socket, or -1 */
	int events;     /* the proxy's events file, read after the step, or -1 */
	bool own_netns; /* the step reaches the proxy in its own network namespace */
	struct egress_transparent transparent; /* own_netns: what the init makes besides */
	unsigned short port;                   /* the proxy's port, as the step reaches it */
	char url[160];                         /* http://[stepbox:SECRET@]127.0.0.1:PORT */
	/* what it reached, after egress_stop */
	struct proxy_reached_list reached;
	unsigned long refused;
	unsigned long dropped; /* refusals the proxy counted but did not record */
};

/* Nothing started: every fd -1 (egress_stop on it is a no-op). */
void egress_init(struct egress *e);

/*
 * Start the proxy for cfg's hosts. own_netns: the listener comes from the
 * step's network namespace (pass e->handoff to launch as net_handoff);
 * else one on the host's loopback with a secret in e->url. confine (NULL:
 * none) confines the proxy's process before it serves (proxy_cfg.confine).
 * 0, or a negative errno with err saying what failed and what to do.
 */
int egress_start(struct egress *e, const struct stepbox_config *cfg, bool own_netns,
		 int (*confine)(void *ctx), void *confine_ctx, struct stepbox_err *err);

/*
 * Stop the proxy once the step's tree is gone; each refusal it recorded goes
 * to sink (when not NULL), what was reached into e->reached.
 */
void egress_stop(struct egress *e, const struct denial_sink *sink);

/*
 * The report's "hosts" (after egress_stop): {"reached": [each host, port and
 * address, with its bytes each way and connections], "refused": N}, and
 * where there were any, "reached_others" (the hosts past those kept apart,
 * summed) and "refusals_unrecorded" (past the record's budget).
 */
json_t *egress_reached_json(const struct egress *e);

/* --explain's line for refusals the proxy counted and did not record (none: nothing). */
void egress_say_unrecorded(const struct egress *e, FILE *f);

/* Free what egress_stop gathered. */
void egress_release(struct egress *e);

#endif
