/*
 * notify: the least a supervisor of seccomp notifications can do, for
 * bench/bench.py: what the protected paths' live layer is measured against.
 * Traps the calls that layer traps (an open that writes or makes, and each
 * call that makes, moves or removes a name) and nothing else, and answers
 * each one:
 *
 *   continue  SECCOMP_USER_NOTIF_FLAG_CONTINUE: the round trip alone (the
 *             kernel then makes the call; no supervisor that judges a path
 *             may do this, since the step may change the path meanwhile)
 *   perform   an open made by us from the caller's cwd and handed back
 *             (SECCOMP_ADDFD_FLAG_SEND), the rest continued: one open of
 *             /proc/PID/cwd, one copy of the path, no check at all
 *
 * Both wake the supervisor on the caller's CPU where the kernel can
 * (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP), as stepbox does.
 *
 * usage: notify continue|perform COMMAND [ARG...]
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif
#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "notify: x86_64 or aarch64"
#endif

#define LOAD(f)                                                                                    \
	((struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, f)))
#define RET(v) ((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, (v)))

/* The calls that always go to the supervisor (names made, moved, removed). */
static const int named[] = {
#ifdef SYS_creat
	SYS_creat,
#endif
#ifdef SYS_mkdir
	SYS_mkdir,    SYS_rmdir,     SYS_unlink,   SYS_rename,
	SYS_link,     SYS_symlink,   SYS_mknod,
#endif
	SYS_mkdirat,  SYS_mknodat,   SYS_unlinkat, SYS_renameat2,
	SYS_linkat,   SYS_symlinkat, SYS_truncate,
#ifdef SYS_renameat
	SYS_renameat,
#endif
};

static int install(void)
{
	struct sock_filter f[64];
	size_t n = 0, nnamed = sizeof(named) / sizeof(named[0]);
	unsigned writes = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | __O_TMPFILE;
	f[n++] = LOAD(arch);
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0);
	f[n++] = RET(SECCOMP_RET_ALLOW);
	f[n++] = LOAD(nr);
	for (size_t i = 0; i < nnamed; i++) /* to the NOTIFY at the end */
		f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)named[i],
						    (unsigned char)(nnamed - i + 6), 0),
		n++;
#ifdef SYS_open
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_open, 0, 2);
	f[n++] = LOAD(args[1]);
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, writes, 4, 3);
#else
	for (int i = 0; i < 3; i++) /* no open(2): the offsets above kept */
		f[n++] = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, 0);
#endif
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 2);
	f[n++] = LOAD(args[2]);
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, writes, 1, 0);
	f[n++] = RET(SECCOMP_RET_ALLOW);
	f[n++] = RET(SECCOMP_RET_USER_NOTIF);
	struct sock_fprog prog = {(unsigned short)n, f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			    &prog);
}

/* Pass fd over sock (send) or take one (fd < 0): the fd, or -1. */
static int pass(int sock, int fd)
{
	char c = 0, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec io = {&c, 1};
	struct msghdr m = {
		.msg_iov = &io, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)};
	if (fd >= 0) {
		struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
		return sendmsg(sock, &m, 0) == 1 ? fd : -1;
	}
	if (recvmsg(sock, &m, 0) != 1 || !CMSG_FIRSTHDR(&m))
		return -1;
	memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof(int));
	return fd;
}

/* An open made for the caller: the new fd handed back, or its errno answered. */
static void perform_open(int listener, const struct seccomp_notif *n, struct seccomp_notif_resp *r)
{
	char path[4096], cwd[64];
	struct iovec local = {path, sizeof(path) - 1};
	struct iovec remote = {(void *)(uintptr_t)n->data.args[1], sizeof(path) - 1};
	ssize_t k = process_vm_readv(n->pid, &local, 1, &remote, 1, 0);
	path[k > 0 ? k : 0] = '\0';
	snprintf(cwd, sizeof(cwd), "/proc/%d/cwd", (int)n->pid);
	int dir = open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int fd = k > 0 && dir >= 0
			 ? openat((int)n->data.args[0] == AT_FDCWD ? dir : -1, path,
				  (int)n->data.args[2] | O_CLOEXEC, (mode_t)n->data.args[3])
			 : -1;
	int e = k > 0 ? errno : EFAULT;
	if (dir >= 0)
		close(dir);
	if (fd >= 0) {
		struct seccomp_notif_addfd add = {
			.id = n->id,
			.flags = SECCOMP_ADDFD_FLAG_SEND,
			.srcfd = (unsigned)fd,
			.newfd_flags = (n->data.args[2] & O_CLOEXEC) ? O_CLOEXEC : 0};
		int got = ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
		close(fd);
		if (got >= 0)
			return;
		e = errno;
	}
	r->error = -e;
	ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, r);
}

static void serve(int listener, bool perform)
{
	struct seccomp_notif_sizes sz;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
		return;
	struct seccomp_notif *n = calloc(1, sz.seccomp_notif);
	struct seccomp_notif_resp *r = calloc(1, sz.seccomp_notif_resp);
	ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, 1UL); /* SYNC_WAKE_UP, where there */
	for (; n && r;) {
		/* as stepbox's dispatcher waits: the listener hangs up when the command is gone */
		struct pollfd p = {listener, POLLIN, 0};
		if (poll(&p, 1, -1) < 0 || (p.revents & (POLLHUP | POLLERR | POLLNVAL)))
			break;
		memset(n, 0, sz.seccomp_notif);
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, n) < 0) {
			if (errno == EINTR || errno == ENOENT)
				continue; /* ENOENT: the caller was killed meanwhile */
			break;
		}
		memset(r, 0, sz.seccomp_notif_resp);
		r->id = n->id;
		if (perform && n->data.nr == SYS_openat && (int)n->data.args[0] == AT_FDCWD) {
			perform_open(listener, n, r);
			continue;
		}
		r->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, r);
	}
	free(n);
	free(r);
}

int main(int argc, char **argv)
{
	int sp[2];
	if (argc < 3 || (strcmp(argv[1], "continue") != 0 && strcmp(argv[1], "perform") != 0) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
		fprintf(stderr, "usage: notify continue|perform COMMAND [ARG...]\n");
		return 125;
	}
	pid_t pid = fork();
	if (pid == 0) {
		int listener = install();
		char c;
		if (listener < 0 || pass(sp[0], listener) < 0 || read(sp[0], &c, 1) != 1)
			_exit(125);
		close(listener);
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	int listener = pid > 0 ? pass(sp[1], -1) : -1;
	if (listener < 0 || write(sp[1], "g", 1) != 1)
		return 125;
	close(sp[0]);
	close(sp[1]);
	serve(listener, strcmp(argv[1], "perform") == 0);
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
