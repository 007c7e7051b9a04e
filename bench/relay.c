/*
 * relay PORT: the least a relay can do, for bench/proxy.py. Listens on
 * 127.0.0.1 (a port the kernel picks, printed on stdout), and joins each
 * connection to 127.0.0.1:PORT, one at a time: a thread a direction, each
 * moving bytes by blocking splice(2) through a pipe, as the proxy's bulk
 * directions do. Nothing else: no parsing, no policy, no event loop, no
 * bounds. What the proxy costs beyond it is the proxy's own.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

struct way {
	int from, to;
};

/* One direction to its end, then the other side told. */
static void *carry(void *arg)
{
	const struct way *w = arg;
	int p[2];
	if (pipe(p) < 0)
		return NULL;
	fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
	ssize_t n;
	while ((n = splice(w->from, NULL, p[1], NULL, 1 << 20, SPLICE_F_MOVE)) > 0) {
		ssize_t out = 0;
		while (n > 0 &&
		       (out = splice(p[0], NULL, w->to, NULL, (size_t)n, SPLICE_F_MOVE)) > 0)
			n -= out;
		if (n > 0)
			break;
	}
	shutdown(w->to, SHUT_WR);
	close(p[0]);
	close(p[1]);
	return NULL;
}

static struct sockaddr_in loopback(unsigned port)
{
	return (struct sockaddr_in){.sin_family = AF_INET,
				    .sin_port = htons((unsigned short)port),
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
}

int main(int argc, char **argv)
{
	unsigned port = argc == 2 ? (unsigned)strtoul(argv[1], NULL, 10) : 0;
	if (port == 0 || port > 65535) {
		fputs("usage: relay PORT\n", stderr);
		return 2;
	}
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = loopback(0);
	socklen_t al = sizeof(a);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 16) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &al) < 0) {
		perror("relay: listen");
		return 1;
	}
	printf("%u\n", ntohs(a.sin_port));
	fflush(stdout);
	for (;;) {
		int c = accept(l, NULL, NULL);
		if (c < 0)
			continue;
		int u = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in t = loopback(port);
		if (u >= 0 && connect(u, (struct sockaddr *)&t, sizeof(t)) == 0) {
			struct way up = {c, u}, down = {u, c};
			pthread_t th;
			if (pthread_create(&th, NULL, carry, &up) == 0) {
				carry(&down);
				pthread_join(th, NULL);
			}
		}
		if (u >= 0)
			close(u);
		close(c);
	}
}
