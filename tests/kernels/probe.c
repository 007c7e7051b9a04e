/*
 * probe: what the kernel suite asks of a kernel that a busybox shell cannot:
 *   probe int80 NR        an i386 syscall through int $0x80 (x86_64): its result
 *   probe listen PATH     a UNIX stream socket listening at PATH, until killed
 *   probe connect PATH    connect to PATH: prints OK or the errno's name
 *   probe forge DIR       forge a /proc/net/unix line (see forge): stream, datagram
 *   probe deny-getfd CMD...  run CMD with pidfd_getfd refused (EPERM), as
 *                         Docker's default seccomp profile refuses it
 *   probe deny-getfd-vmread CMD...  process_vm_readv refused too (containerd)
 *   probe deny-ptrace CMD...  ptrace refused (EPERM), as a profile without CAP_SYS_PTRACE
 *   probe deny-mount CMD...  run CMD with mount refused (EPERM), as in a user
 *                         namespace that Ubuntu's AppArmor leaves no capability
 *   probe deny-landlock CMD...  landlock_create_ruleset refused (EPERM), as an
 *                         older container profile that does not know it
 *   probe deny-mount-setattr CMD...  mount_setattr missing (ENOSYS), as before
 *                         Linux 5.12
 * Built static by tests/kernels/run.sh for the guests and the host.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438 /* the same on every architecture */
#endif

static const char *errname(int e)
{
	switch (e) {
	case EACCES:
		return "EACCES";
	case EPERM:
		return "EPERM";
	case ENOENT:
		return "ENOENT";
	case ECONNREFUSED:
		return "ECONNREFUSED";
	case ENOSYS:
		return "ENOSYS";
	default:
		return strerror(e);
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

/*
 * forge DIR: an attack on a supervisor that reads /proc/net/unix. Bind
 * sockets in DIR whose paths hold a newline and a line claiming that the
 * stream socket s is a datagram one (type 0802), until that line comes first;
 * then connect s to AF_UNSPEC, and print what s is: "stream" (held),
 * "datagram" (a datagram socket was made for it), or "not arranged".
 */
static int forge(int s, const char *dir)
{
	struct stat st;
	if (fstat(s, &st) < 0 || chdir(dir) < 0)
		return 1;
	char want[64], line[4096];
	snprintf(want, sizeof(want), " 0802 01 %lu", (unsigned long)st.st_ino);
	for (int i = 0; i < 200; i++) {
		struct sockaddr_un b = {.sun_family = AF_UNIX};
		snprintf(b.sun_path, sizeof(b.sun_path),
			 "forge%d\n0000000000000000: 00000002 00000000 00000000 0802 01 %lu", i,
			 (unsigned long)st.st_ino);
		int f = socket(AF_UNIX, SOCK_STREAM, 0);
		if (f < 0 || bind(f, (struct sockaddr *)&b, sizeof(b)) < 0)
			return 1;
		/* the first line naming s's inode must be ours */
		FILE *t = fopen("/proc/self/net/unix", "r");
		char ino[32];
		snprintf(ino, sizeof(ino), " %lu", (unsigned long)st.st_ino);
		bool first_is_ours = false, seen = false;
		while (t && !seen && fgets(line, sizeof(line), t)) {
			char *nl = strchr(line, '\n');
			if (nl)
				*nl = '\0';
			size_t n = strlen(line), k = strlen(ino);
			if (n >= k && strcmp(line + n - k, ino) == 0) {
				seen = true;
				first_is_ours = strstr(line, want) != NULL;
			}
		}
		if (t)
			fclose(t);
		if (first_is_ours) {
			struct sockaddr unspec = {.sa_family = AF_UNSPEC};
			connect(s, &unspec, sizeof(unspec));
			int type = 0;
			socklen_t tl = sizeof(type);
			getsockopt(s, SOL_SOCKET, SO_TYPE, &type, &tl);
			puts(type == SOCK_STREAM  ? "stream"
			     : type == SOCK_DGRAM ? "datagram"
						  : "other");
			return 0;
		}
	}
	puts("not arranged");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *mode;
		unsigned nr, nr2; /* a second call refused with it, or 0 */
		unsigned err;
	} deny[] = {
		{"deny-getfd", __NR_pidfd_getfd, 0, EPERM},
		/* containerd's default without CAP_SYS_PTRACE refuses both */
		{"deny-getfd-vmread", __NR_pidfd_getfd, __NR_process_vm_readv, EPERM},
		{"deny-mount", __NR_mount, 0, EPERM},
		{"deny-ptrace", __NR_ptrace, 0, EPERM},
		{"deny-landlock", 444 /* landlock_create_ruleset, on every architecture */, 0,
		 EPERM},
		{"deny-mount-setattr", 442 /* on every architecture */, 0, ENOSYS},
	};
	unsigned refused = 0, refused2 = 0, err = 0;
	for (size_t i = 0; argc > 2 && i < sizeof(deny) / sizeof(deny[0]); i++)
		if (strcmp(argv[1], deny[i].mode) == 0) {
			refused = deny[i].nr;
			refused2 = deny[i].nr2 ? deny[i].nr2 : deny[i].nr;
			err = deny[i].err;
		}
	if (refused) {
		struct sock_filter f[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, refused, 1, 0),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, refused2, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | err),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
			perror("probe: seccomp");
			return 2;
		}
		execvp(argv[2], argv + 2);
		perror("probe: exec");
		return 127;
	}
	if (argc != 3)
		return 2;
	if (strcmp(argv[1], "int80") == 0) {
#if defined(__x86_64__)
		long nr = strtol(argv[2], NULL, 10), ret;
		__asm__ volatile("int $0x80"
				 : "=a"(ret)
				 : "a"(nr), "b"(0), "c"(0), "d"(0)
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
	if (strcmp(argv[1], "forge") == 0)
		return forge(s, argv[2]);
	return 2;
}
