/*
 * probe: what the kernel suite asks of a kernel that a busybox shell cannot:
 *   probe int80 NR        an i386 syscall through int $0x80 (x86_64): its result
 *   probe listen PATH     a UNIX stream socket listening at PATH, until killed
 *   probe connect PATH    connect to PATH: prints OK or the errno's name
 * Built static by tests/kernels/run.sh for the guests and the host.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static const char *errname(int e)
{
	switch (e) {
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ENOSYS: return "ENOSYS";
	default: return strerror(e);
	}
}

static int unix_addr(const char *path, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path))
		return -1;
	memcpy(a->sun_path, path, strlen(path));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	if (strcmp(argv[1], "int80") == 0) {
#if defined(__x86_64__)
		long nr = strtol(argv[2], NULL, 10), ret;
		__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(0), "c"(0), "d"(0)
				 : "memory", "r8", "r9", "r10", "r11");
		printf("%ld\n", ret);
		return 0;
#else
		puts("unsupported");
		return 0;
#endif
	}
	struct sockaddr_un a;
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	if (s < 0 || unix_addr(argv[2], &a) < 0)
		return 1;
	if (strcmp(argv[1], "listen") == 0) {
		if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 8) < 0)
			return 1;
		for (;;)
			pause();
	}
	if (strcmp(argv[1], "connect") == 0) {
		puts(connect(s, (struct sockaddr *)&a, sizeof(a)) == 0 ? "OK" : errname(errno));
		return 0;
	}
	return 2;
}
