#include "netns.h"

#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdpass.h"

/* lo is down in a new network namespace: 127.0.0.1 is unreachable until it is up. */
static int loopback_up(void)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", sizeof("lo"));
	int r = ioctl(s, SIOCGIFFLAGS, &ifr);
	if (r == 0 && !(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		r = ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	r = r < 0 ? -errno : 0;
	close(s);
	return r;
}

static int listen_loopback(void)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_port = htons(NETNS_PROXY_PORT),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 128) < 0) {
		int e = errno;
		close(s);
		return -e;
	}
	return s;
}

/* An address of the resolver's on loopback (RTM_NEWADDR), where it is not one already. */
static int add_to_loopback(const struct sockaddr_storage *sa)
{
	bool v6 = sa->ss_family == AF_INET6;
	const void *a = v6 ? (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr
			   : (const void *)&((const struct sockaddr_in *)sa)->sin_addr;
	size_t alen = v6 ? 16 : 4;
	if (!v6 && ((const uint8_t *)a)[0] == 127)
		return 0; /* 127.0.0.0/8 is loopback's whole */
	if (v6 && IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)a))
		return 0;
	struct {
		struct nlmsghdr n;
		struct ifaddrmsg i;
		char attrs[2 * RTA_SPACE(16)];
	} req;
	memset(&req, 0, sizeof(req));
	req.n.nlmsg_type = RTM_NEWADDR;
	req.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
	req.i.ifa_family = (unsigned char)sa->ss_family;
	req.i.ifa_prefixlen = (unsigned char)(alen * 8);
	req.i.ifa_flags = v6 ? IFA_F_NODAD : 0; /* usable at once */
	req.i.ifa_scope = RT_SCOPE_HOST;
	req.i.ifa_index = if_nametoindex("lo");
	struct rtattr *ra = (struct rtattr *)req.attrs;
	unsigned short types[2] = {IFA_LOCAL, IFA_ADDRESS};
	for (int k = 0; k < 2; k++) {
		ra->rta_type = types[k];
		ra->rta_len = (unsigned short)RTA_LENGTH(alen);
		memcpy(RTA_DATA(ra), a, alen);
		ra = (struct rtattr *)((char *)ra + RTA_SPACE(alen));
	}
	req.n.nlmsg_len = (unsigned)((char *)ra - (char *)&req);
	int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (s < 0)
		return -errno;
	int r = send(s, &req, req.n.nlmsg_len, 0) < 0 ? -errno : 0;
	struct {
		struct nlmsghdr n;
		struct nlmsgerr e;
	} ack;
	if (r == 0 && recv(s, &ack, sizeof(ack), 0) < (ssize_t)sizeof(ack))
		r = -EIO;
	if (r == 0 && ack.n.nlmsg_type == NLMSG_ERROR && ack.e.error && ack.e.error != -EEXIST)
		r = ack.e.error;
	close(s);
	return r;
}

/* A socket of type bound to sa (port in it), listening when a stream; then sent with tag. */
static int make_and_send(int handoff, const struct sockaddr_storage *sa, int type, char tag)
{
	int s = socket(sa->ss_family, type | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	int one = 1;
	socklen_t sl = sa->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						 : sizeof(struct sockaddr_in);
	int r = type == SOCK_STREAM ? setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one))
				    : 0;
	if (r == 0 && bind(s, (const struct sockaddr *)sa, sl) < 0)
		r = -1;
	if (r == 0 && type == SOCK_STREAM && listen(s, 128) < 0)
		r = -1;
	r = r < 0 ? -errno : fdpass_send(handoff, s, tag);
	close(s);
	return r;
}

int netns_hand_listener(int handoff, const struct egress_transparent *t)
{
	int r = loopback_up();
	int l = r < 0 ? r : listen_loopback();
	if (l < 0)
		return l;
	r = fdpass_send(handoff, l, NETNS_TAG);
	/*
	 * The transparent mode's, each where it can be made: one that cannot
	 * (a port taken, an address refused) leaves its clients failing as
	 * they would without it, never the run.
	 */
	for (size_t i = 0; r == 0 && t && i < t->ndns; i++) {
		if (add_to_loopback(&t->dns[i]) == 0) {
			make_and_send(handoff, &t->dns[i], SOCK_DGRAM, PROXY_HANDOFF_DNS);
			make_and_send(handoff, &t->dns[i], SOCK_STREAM, PROXY_HANDOFF_DNS_TCP);
		}
	}
	for (size_t i = 0; r == 0 && t && i < t->nports; i++) {
		struct sockaddr_storage any = {0};
		struct sockaddr_in *in = (struct sockaddr_in *)&any;
		in->sin_family = AF_INET;
		in->sin_port = htons(t->ports[i]);
		in->sin_addr.s_addr = htonl(INADDR_ANY);
		make_and_send(handoff, &any, SOCK_STREAM, PROXY_HANDOFF_TRANSPARENT);
	}
	/* the end of the list (the listener again, which the proxy closes) */
	if (r == 0)
		r = fdpass_send(handoff, l, PROXY_HANDOFF_END);
	close(l);
	return r;
}
