#include "netns.h"

#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
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

int netns_hand_listener(int handoff)
{
	int r = loopback_up();
	int l = r < 0 ? r : listen_loopback();
	if (l < 0)
		return l;
	r = fdpass_send(handoff, l, NETNS_TAG);
	close(l);
	return r;
}
