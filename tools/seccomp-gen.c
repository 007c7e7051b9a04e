/*
 * seccomp-gen: build-time generator of stepbox's seccomp filters. libseccomp
 * compiles each variant here, once, and the launcher loads the resulting BPF
 * arrays at run time without generating anything (start-up cost, and no
 * allocation between fork and exec). Writes a C header to standard output.
 *
 * The rules: what no step needs and no filesystem rule covers. Loading
 * kernel code, rebooting, swap, the clock, bpf and perf (kernel attack
 * surface), keyrings (shared across the user's sessions), mounts,
 * handle-based opens that bypass paths (the "shocker" escape), the kernel
 * log, userfaultfd (an exploit aid); new user namespaces (every capability
 * back inside one); TIOCSTI and TIOCLINUX (typing into the caller's
 * terminal, CVE-2017-5226).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <linux/filter.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *const denied[] = {
	"init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
	"reboot", "swapon", "swapoff", "settimeofday", "clock_settime", "clock_adjtime",
	"adjtimex", "bpf", "perf_event_open", "keyctl", "add_key", "request_key",
	"mount", "umount2", "pivot_root", "fsopen", "fsconfig", "fsmount", "fspick",
	"open_tree", "move_mount", "mount_setattr", "open_by_handle_at", "syslog",
	"userfaultfd", "acct", "quotactl", "iopl", "ioperm", "uselib", "vhangup",
	NULL,
};

static void die(const char *what, int r)
{
	fprintf(stderr, "seccomp-gen: %s: %s\n", what, strerror(-r));
	exit(1);
}

enum variant { BASE, NET_NONE, NET_TCP };

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

/*
 * Network modes. Landlock covers only TCP bind and connect, so every other
 * way out is refused here: with "none" every socket family but AF_UNIX; with
 * TCP port lists everything but AF_UNIX and TCP streams (AF_INET/AF_INET6,
 * SOCK_STREAM, protocol 0 or IPPROTO_TCP), which refuses UDP, raw, SCTP and
 * MPTCP (a stream protocol Landlock's TCP rules do not see). io_uring can
 * create sockets without the socket syscall, so it goes too.
 * libseccomp rules are conjunctions and one argument cannot be compared twice
 * in a rule, so "not one of" is spelled as one rule per refused value.
 */
static void add_net_rules(scmp_filter_ctx ctx, enum variant v)
{
	const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
	int r;
	const char *uring[] = {"io_uring_setup", "io_uring_enter", "io_uring_register"};
	for (size_t i = 0; i < 3; i++) {
		int nr = seccomp_syscall_resolve_name(uring[i]);
		if (nr != __NR_SCMP_ERROR && (r = seccomp_rule_add(ctx, eperm, nr, 0)) < 0)
			die(uring[i], r);
	}
	if (v == NET_NONE) {
		if ((r = seccomp_rule_add(ctx, eperm, SCMP_SYS(socket), 1,
					  SCMP_A0(SCMP_CMP_NE, AF_UNIX, 0))) < 0 ||
		    (r = seccomp_rule_add(ctx, eperm, SCMP_SYS(socketpair), 1,
					  SCMP_A0(SCMP_CMP_NE, AF_UNIX, 0))) < 0)
			die("socket families", r);
		return;
	}
	/* families other than AF_UNIX, AF_INET, AF_INET6 */
	for (int fam = 0; fam <= AF_INET6; fam++) {
		if (fam == AF_UNIX || fam == AF_INET || fam == AF_INET6)
			continue;
		if ((r = seccomp_rule_add(ctx, eperm, SCMP_SYS(socket), 1,
					  SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)fam, 0))) < 0)
			die("socket family", r);
	}
	if ((r = seccomp_rule_add(ctx, eperm, SCMP_SYS(socket), 1,
				  SCMP_A0(SCMP_CMP_GT, AF_INET6, 0))) < 0 ||
	    (r = seccomp_rule_add(ctx, eperm, SCMP_SYS(socketpair), 1,
				  SCMP_A0(SCMP_CMP_NE, AF_UNIX, 0))) < 0)
		die("socket families", r);
	const int inet[] = {AF_INET, AF_INET6};
	for (size_t f = 0; f < 2; f++) {
		/* the type without SOCK_NONBLOCK and SOCK_CLOEXEC: stream only */
		for (int type = 0; type <= 0xf; type++) {
			if (type == SOCK_STREAM)
				continue;
			if ((r = seccomp_rule_add(ctx, eperm, SCMP_SYS(socket), 2,
						  SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)inet[f], 0),
						  SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, (scmp_datum_t)type))) < 0)
				die("socket type", r);
		}
		/* protocol 0 or IPPROTO_TCP only: not SCTP, not MPTCP */
		for (int proto = 1; proto < IPPROTO_TCP; proto++)
			if ((r = seccomp_rule_add(ctx, eperm, SCMP_SYS(socket), 2,
						  SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)inet[f], 0),
						  SCMP_A2(SCMP_CMP_EQ, (scmp_datum_t)proto, 0))) < 0)
				die("socket protocol", r);
		if ((r = seccomp_rule_add(ctx, eperm, SCMP_SYS(socket), 2,
					  SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)inet[f], 0),
					  SCMP_A2(SCMP_CMP_GT, IPPROTO_TCP, 0))) < 0)
			die("socket protocol", r);
	}
}

/*
 * With --explain, the calls whose failures Landlock or the network policy can
 * cause stop in stepbox's tracer (SECCOMP_RET_TRACE), and nothing else does.
 * socket() is not here: its refusals are rules above, and it cannot be both.
 */
static const char *const traced[] = {
	"open", "openat", "openat2", "creat", "execve", "execveat", "mkdir", "mkdirat",
	"mknod", "mknodat", "rmdir", "unlink", "unlinkat", "rename", "renameat", "renameat2",
	"link", "linkat", "symlink", "symlinkat", "truncate", "connect", "bind", "kill",
	"tkill", "tgkill", NULL,
};

static void add_trace_rules(scmp_filter_ctx ctx)
{
	for (size_t i = 0; traced[i]; i++) {
		int nr = seccomp_syscall_resolve_name(traced[i]), r;
		if (nr != __NR_SCMP_ERROR && (r = seccomp_rule_add(ctx, SCMP_ACT_TRACE(0), nr, 0)) < 0)
			die(traced[i], r);
	}
}

static void emit(const char *name, enum variant v, bool trace)
{
	const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int r;
	if (!ctx)
		die("seccomp_init", -ENOMEM);
	/* 32-bit and x32 entry points get the same rules instead of a kill */
	if (seccomp_arch_native() == SCMP_ARCH_X86_64) {
		if ((r = seccomp_arch_add(ctx, SCMP_ARCH_X86)) < 0 && r != -EEXIST)
			die("arch x86", r);
		if ((r = seccomp_arch_add(ctx, SCMP_ARCH_X32)) < 0 && r != -EEXIST)
			die("arch x32", r);
	}
	for (size_t i = 0; denied[i]; i++) {
		int nr = seccomp_syscall_resolve_name(denied[i]);
		if (nr != __NR_SCMP_ERROR && (r = seccomp_rule_add(ctx, eperm, nr, 0)) < 0)
			die(denied[i], r);
	}
	/* clone3 hides its flags behind a pointer: ENOSYS, and libc falls back
	 * to clone, whose flags the filter can see */
	if ((r = seccomp_rule_add(ctx, eperm, SCMP_SYS(unshare), 1,
				  SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER))) < 0 ||
	    (r = seccomp_rule_add(ctx, eperm, SCMP_SYS(clone), 1,
				  SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER))) < 0 ||
	    (r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0)) < 0 ||
	    (r = seccomp_rule_add(ctx, eperm, SCMP_SYS(ioctl), 1,
				  SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI))) < 0 ||
	    (r = seccomp_rule_add(ctx, eperm, SCMP_SYS(ioctl), 1,
				  SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX))) < 0)
		die("argument rules", r);
	if (v != BASE)
		add_net_rules(ctx, v);
	if (trace)
		add_trace_rules(ctx);

	FILE *tmp = tmpfile();
	if (!tmp || (r = seccomp_export_bpf(ctx, fileno(tmp))) < 0)
		die("export", tmp ? r : -errno);
	rewind(tmp);
	printf("static const struct sock_filter %s[] = {\n", name);
	struct sock_filter f;
	size_t n = 0;
	while (fread(&f, sizeof(f), 1, tmp) == 1) {
		printf("\t{0x%04x, %u, %u, 0x%08x},\n", f.code, f.jt, f.jf, f.k);
		n++;
	}
	printf("};\n\n");
	if (n == 0 || n > BPF_MAXINSNS)
		die("filter size", -E2BIG);
	fclose(tmp);
	seccomp_release(ctx);
}

int main(void)
{
	printf("/* Generated by tools/seccomp-gen.c at build time. Do not edit. */\n\n");
	printf("static const char *const harden_filter_denied[] = {\n");
	for (size_t i = 0; denied[i]; i++)
		printf("\t\"%s\",\n", denied[i]);
	printf("\tNULL,\n};\n\n");
	emit("harden_filter_base", BASE, false);
	emit("harden_filter_net_none", NET_NONE, false);
	emit("harden_filter_net_tcp", NET_TCP, false);
	emit("harden_filter_base_traced", BASE, true);
	emit("harden_filter_net_none_traced", NET_NONE, true);
	emit("harden_filter_net_tcp_traced", NET_TCP, true);
	return 0;
}
