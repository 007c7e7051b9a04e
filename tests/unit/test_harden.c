/*
 * harden: the network proxy's own confinement (harden_confine_proxy), in a
 * child: each call the proxy and glibc's resolver make still works (the
 * positive controls: sockets of each kind it opens, a thread, a file read,
 * a lookup's ioctl), and each way out a flaw in its parsing could take is
 * EPERM: a new process or program, raw and packet sockets, a signal to
 * another process, a namespace, ptrace, a terminal's input; and no
 * capability is left.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "harden.h"
#include "tap.h"

extern char **environ;

static void *nothing(void *arg)
{
	return arg;
}

static bool opens(int family, int type, int protocol)
{
	int s = socket(family, type | SOCK_CLOEXEC, protocol);
	if (s >= 0)
		close(s);
	return s >= 0;
}

static bool refused(int r)
{
	return r < 0 && errno == EPERM;
}

/* The capabilities left: CapEff of /proc/self/status, or -1. */
static long long cap_eff(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	const char *l = strstr(buf, "\nCapEff:");
	return l ? strtoll(l + 8, NULL, 16) : -1;
}

/* 0, or the number of the first check that failed. */
static int confined(void)
{
	if (harden_confine_proxy() < 0)
		return 1;
	/* what it needs */
	if (!opens(AF_INET, SOCK_STREAM, 0) || !opens(AF_INET6, SOCK_STREAM, IPPROTO_TCP))
		return 2;
	if (!opens(AF_INET, SOCK_DGRAM, 0) || !opens(AF_UNIX, SOCK_STREAM, 0))
		return 3;
	if (!opens(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE))
		return 4; /* getaddrinfo's AI_ADDRCONFIG */
	pthread_t t;
	if (pthread_create(&t, NULL, nothing, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 5; /* the resolver's threads: clone3 ENOSYS, clone with CLONE_THREAD */
	int fd = open("/etc/hosts", O_RDONLY | O_CLOEXEC), waiting = 0;
	if (fd < 0 || ioctl(fd, FIONREAD, &waiting) < 0)
		return 6;
	close(fd);
	/* what it must not */
	if (!refused(socket(AF_PACKET, SOCK_RAW, 0)) || !refused(socket(AF_INET, SOCK_RAW, 1)))
		return 10;
	if (!refused(socket(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT)))
		return 11;
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	if (!refused(p))
		return 12;
	char *argv[] = {"/bin/true", NULL};
	if (!refused(execve("/bin/true", argv, environ)))
		return 13;
	if (!refused(kill(getppid(), 0)) || !refused(unshare(CLONE_NEWNS)))
		return 14;
	if (!refused((int)ptrace(PTRACE_TRACEME, 0, NULL, NULL)))
		return 15;
	char c = 'x';
	if (!refused(ioctl(STDIN_FILENO, TIOCSTI, &c)))
		return 16;
	if (cap_eff() != 0)
		return 17;
	return 0;
}

int main(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(confined());
	int status = -1;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		printf("# the confined proxy's check %d failed\n",
		       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return tap_done();
}
