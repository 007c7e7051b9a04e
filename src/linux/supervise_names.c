/*
 * supervise_names: the abstract UNIX socket names the step holds, so that a
 * connect reaches only a name the step bound; and a refused socket named by
 * its kind for --explain (supervise_int.h).
 */
#include <errno.h>
#include <netinet/in.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "strv.h"
#include "supervise_int.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

#define SUP_MAX_NAMES 4096u /* abstract names remembered */

/* The inode of the socket bound to an abstract name in our network namespace. */
static ino_t abstract_holder(const char *name, socklen_t len)
{
	int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return 0;
	struct {
		struct nlmsghdr h;
		struct unix_diag_req r;
	} req = {
		.h = {sizeof(req), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, 1, 0},
		.r = {.sdiag_family = AF_UNIX, .udiag_states = ~0u, .udiag_show = UDIAG_SHOW_NAME},
	};
	ino_t found = 0;
	if (send(nl, &req, sizeof(req), 0) != (ssize_t)sizeof(req)) {
		close(nl);
		return 0;
	}
	char buf[16384] __attribute__((aligned(8)));
	for (bool done = false; !done && !found;) {
		ssize_t n = recv(nl, buf, sizeof(buf), 0);
		if (n <= 0)
			break;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
				done = true;
				break;
			}
			struct unix_diag_msg *m = NLMSG_DATA(h);
			struct rtattr *a = (struct rtattr *)(m + 1);
			int rl = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
			for (; RTA_OK(a, rl); a = RTA_NEXT(a, rl)) {
				size_t al = RTA_PAYLOAD(a);
				if (a->rta_type == UNIX_DIAG_NAME && al == (size_t)len &&
				    memcmp(RTA_DATA(a), name, al) == 0)
					found = m->udiag_ino;
			}
		}
	}
	close(nl);
	return found;
}

/*
 * An abstract name may be reached when a process of the step bound it and a
 * socket of the step still holds it (a host process may take a name the step
 * let go of). In a network namespace of its own every name is the step's.
 */
bool sup_abstract_ok(struct supervisor *s, const char *name, socklen_t len)
{
	if (s->own_netns)
		return true;
	ino_t held = abstract_holder(name, len);
	bool ok = false;
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; held && !ok && i < s->nnames; i++)
		ok = s->names[i].ino == held &&
		     (s->names[i].len == 0 ||
		      (s->names[i].len == len && memcmp(s->names[i].name, name, len) == 0));
	pthread_mutex_unlock(&s->lock);
	return ok;
}

void sup_add_name(struct supervisor *s, const char *name, socklen_t len, ino_t ino)
{
	pthread_mutex_lock(&s->lock);
	if (s->nnames < SUP_MAX_NAMES &&
	    strv_grow(&s->names, &s->capnames, s->nnames, sizeof(*s->names), 16) == 0) {
		struct sup_name *n = &s->names[s->nnames++];
		n->len = len;
		memcpy(n->name, name, len);
		n->ino = ino;
	}
	pthread_mutex_unlock(&s->lock);
}

void sup_remember_name(struct supervisor *s, int sock)
{
	struct sockaddr_un a;
	socklen_t al = sizeof(a);
	struct stat st;
	if (getsockname(sock, (struct sockaddr *)&a, &al) < 0 || fstat(sock, &st) < 0 ||
	    al <= offsetof(struct sockaddr_un, sun_path) + 1 || a.sun_path[0] != '\0')
		return;
	sup_add_name(s, a.sun_path, al - (socklen_t)offsetof(struct sockaddr_un, sun_path),
		     st.st_ino);
}

/*
 * A socket the network mode refuses (harden_filter_notify*_sock_*, only
 * those are sent): refused, always, and named by what it would have been.
 */
void sup_refuse_socket(struct call *c)
{
	const uint64_t *a = (const uint64_t *)c->req->data.args;
	int fam = (int)a[0], type = (int)(a[1] & 0xf), proto = (int)a[2];
	const char *family = a[0] == AF_INET      ? "IPv4"
			     : a[0] == AF_INET6   ? "IPv6"
			     : a[0] == AF_NETLINK ? "netlink"
			     : a[0] == AF_PACKET  ? "packet"
						  : NULL;
	const char *kind = type == SOCK_DGRAM && (proto == 0 || proto == IPPROTO_UDP)    ? " UDP"
			   : type == SOCK_DGRAM && proto == IPPROTO_ICMP                 ? " ICMP"
			   : type == SOCK_DGRAM && proto == IPPROTO_ICMPV6               ? " ICMPv6"
			   : type == SOCK_RAW                                            ? " raw"
			   : proto == IPPROTO_SCTP                                       ? " SCTP"
			   : proto == IPPROTO_MPTCP                                      ? " MPTCP"
			   : type == SOCK_STREAM && (proto == 0 || proto == IPPROTO_TCP) ? " TCP"
											 : "";
	char what[64];
	if (family && (a[0] == AF_INET || a[0] == AF_INET6))
		snprintf(what, sizeof(what), "%s%s", family, kind);
	else if (family)
		snprintf(what, sizeof(what), "%s", family);
	else
		snprintf(what, sizeof(what), "family %d", fam);
	sup_note_denial(c, OP_SOCKET, what, -1);
	sup_respond(c, 0, EPERM);
}
