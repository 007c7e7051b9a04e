/*
 * netns: the step's own network namespace, when its way out is the proxy
 * (network by name). The namespace holds loopback only; the proxy listens
 * on it through a socket made there and handed out, so nothing but the
 * step can reach the proxy, and the proxy is all the step can reach.
 */
#ifndef STEPBOX_NETNS_H
#define STEPBOX_NETNS_H

#include <stdint.h>

#include "egress.h"
#include "proxy.h"

/* The proxy's address inside the step's namespace: loopback, this port. */
#define NETNS_PROXY_PORT EGRESS_NETNS_PORT

/*
 * In the child, inside its new network namespace and before anything of the
 * step runs: bring loopback up, listen on 127.0.0.1:NETNS_PROXY_PORT, and
 * send that listener over handoff (a UNIX socket whose other end the proxy
 * holds), then close it here. With t, the transparent mode's too, in this
 * order: a UDP socket on each of t->dns (an address not on loopback is added
 * to it first), a TCP listener on each of t->ports on every address, each
 * where it can be made; then PROXY_HANDOFF_END. Allocates nothing (it
 * runs in a clone). Returns 0 or a negative errno.
 */
int netns_hand_listener(int handoff, const struct egress_transparent *t);

/* The tag the listener is sent with (fdpass_recv's). */
#define NETNS_TAG PROXY_HANDOFF_TAG

#endif
