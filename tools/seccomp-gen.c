/*
 * seccomp-gen: build-time generator of stepbox's seccomp filters. libseccomp
 * compiles each filter here, once, and the launcher loads the resulting BPF
 * arrays at run time without generating anything (start-up cost, and no
 * allocation between fork and exec). Writes a C header to standard output.
 *
 * The filters compose: the child installs the base filter and whichever of
 * the others its policy needs, each on its own. The kernel runs every filter
 * on every call and keeps the strictest answer (KILL > ERRNO > USER_NOTIF >
 * TRACE > ALLOW), so a refusal in one is never undone by another, and each
 * filter stays small (the kernel caches the calls a filter always allows).
 *
 * base: what no step needs and no filesystem rule covers. Loading kernel
 * code, rebooting, swap, the clock, bpf and perf (kernel attack surface),
 * keyrings (shared across the user's sessions), mounts, handle-based opens
 * that bypass paths (the "shocker" escape), the kernel log, userfaultfd (an
 * exploit aid), io_uring (it runs connect, sendmsg and opens without the
 * syscalls the other filters and the supervisor see); new user namespaces
 * (every capability back inside one); TIOCSTI and TIOCLINUX (typing into the
 * caller's terminal, CVE-2017-5226). Every other syscall ABI (i386 through
 * int $0x80, x32) is refused outright with ENOSYS: their numbers differ
 * (i386 umount is 22, socketcall multiplexes every socket call behind a
 * pointer), and no rule written for the native ABI could hold there.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h> /* O_CREAT, __O_TMPFILE */
#undef F_NOTIFY    /* dnotify's fcntl: a name of the filters below */
#include <stdbool.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/fscrypt.h>
#include <linux/fsverity.h>
#include <linux/ioprio.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <termios.h>
#include <sys/resource.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const denied[] = {
	"init_module",
	"finit_module",
	"delete_module",
	"kexec_load",
	"kexec_file_load",
	"reboot",
	"swapon",
	"swapoff",
	"settimeofday",
	"clock_settime",
	"clock_adjtime",
	"adjtimex",
	"bpf",
	"perf_event_open",
	"keyctl",
	"add_key",
	"request_key",
	"mount",
	"umount2",
	"pivot_root",
	"fsopen",
	"fsconfig",
	"fsmount",
	"fspick",
	"open_tree",
	"move_mount",
	"mount_setattr",
	"open_by_handle_at",
	"syslog",
	"setns",
	"userfaultfd",
	"acct",
	"quotactl",
	"quotactl_fd",
	"iopl",
	"ioperm",
	"uselib",
	"vhangup",
	"io_uring_setup",
	"io_uring_enter",
	"io_uring_register",
	NULL,
};

/*
 * Calls newer than Debian 12's libseccomp (2.5.4) knows by name, by number.
 * Since 5.1 (424) new syscalls have one number on every architecture.
 */
#define NR_OPEN_TREE_ATTR 467
#define NR_FCHMODAT2 452
#define NR_FACCESSAT2 439
#define NR_SETXATTRAT 463
#define NR_REMOVEXATTRAT 466
#define NR_FILE_SETATTR 469
#define NR_LANDLOCK_RESTRICT_SELF 446

/* The largest extended attribute value a step may set (base_rules). */
#define XATTR_VALUE_MAX 4096

/*
 * System V IPC and POSIX message queues: shared across the host unless an IPC
 * namespace hides them (mq_open and mq_unlink act on the host's queues before
 * Landlock's open hook could refuse anything). The System V calls come first:
 * they alone are refused in an IPC namespace whose limits nothing sets (its
 * segments and queues are kernel memory only a cgroup charges, where POSIX
 * queues count against RLIMIT_MSGQUEUE).
 */
#define SYSV_ONLY 12
static const char *const sysv[] = {
	"shmget",          "shmat",     "shmdt",         "shmctl",    "msgget",
	"msgsnd",          "msgrcv",    "msgctl",        "semget",    "semop",
	"semtimedop",      "semctl",    "mq_open",       "mq_unlink", "mq_timedsend",
	"mq_timedreceive", "mq_notify", "mq_getsetattr", NULL,
};

/*
 * Calls that act on another process by pid with no hook Landlock has: its
 * limits, priority, scheduling, CPU affinity and I/O priority. Without a PID
 * namespace the host's processes are among the pids: only the caller itself
 * (pid 0) may be named.
 */
static const char *const self_only[] = {
	"prlimit64",      "sched_setaffinity", "sched_setscheduler",
	"sched_setparam", "sched_setattr",     NULL,
};

/*
 * Metadata calls: Landlock does not mediate them, so under Landlock alone the
 * supervisor allows them only beneath write grants (the namespace layers make
 * every other mount read-only, which refuses them with EROFS).
 */
static const char *const metadata[] = {
	"chmod",     "fchmod",    "fchmodat",    "chown",        "fchown",       "lchown",
	"fchownat",  "utime",     "utimes",      "futimesat",    "utimensat",    "setxattr",
	"lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr", NULL,
};

/*
 * With --explain, the calls whose failures Landlock or the network policy can
 * cause stop in stepbox's tracer (SECCOMP_RET_TRACE), and nothing else does.
 */
static const char *const traced[] = {
	"open",     "openat",    "openat2", "creat",  "execve",  "execveat",  "mkdir",
	"mkdirat",  "mknod",     "mknodat", "rmdir",  "unlink",  "unlinkat",  "rename",
	"renameat", "renameat2", "link",    "linkat", "symlink", "symlinkat", "truncate",
	"connect",  "bind",      "kill",    "tkill",  "tgkill",  NULL,
};

/*
 * Under the namespaces an ungranted path is absent, so a lookup fails there
 * too (a shell's PATH search, os.path.exists): these stop as well, but never
 * a lookup of "" with AT_EMPTY_PATH (fstat on an fd, the commonest call).
 */
static const char *const traced_lookup[] = {"stat", "lstat", "access", "readlink", NULL};

static void die(const char *what, int r)
{
	fprintf(stderr, "seccomp-gen: %s: %s\n", what, strerror(-r));
	exit(1);
}

static uint32_t target_arch = 0; /* 0: this machine's (see main) */

/*
 * Layers merged into one filter (emit_harden) must name disjoint calls: then
 * each call meets the rules of one layer alone, as it did in a filter of its
 * own, and the merged filter decides as the separate ones did (with a call in
 * two, the kernel would have taken the stronger of two actions, which one
 * program cannot be relied on to do). The calls named so far, by layer.
 */
static struct {
	int nr, layer;
} named[512];
static size_t nnamed;
static int layer; /* the layer being added; 0: not a merge */

static void claim(int nr, const char *what)
{
	if (!layer)
		return;
	for (size_t i = 0; i < nnamed; i++) {
		if (named[i].nr != nr)
			continue;
		if (named[i].layer == layer)
			return;
		fprintf(stderr, "seccomp-gen: '%s' is in two merged layers: give it one\n", what);
		exit(1);
	}
	if (nnamed == sizeof(named) / sizeof(named[0])) {
		fprintf(stderr, "seccomp-gen: too many calls to check\n");
		exit(1);
	}
	named[nnamed].nr = nr;
	named[nnamed++].layer = layer;
}

static void add(scmp_filter_ctx ctx, uint32_t action, int nr, const char *what, unsigned n,
		const struct scmp_arg_cmp *cmp)
{
	claim(nr, what);
	int r = seccomp_rule_add_array(ctx, action, nr, n, cmp);
	if (r == -EFAULT && target_arch) {
		/* never a filter without the rule: the build fails, saying how to build */
		fprintf(stderr,
			"seccomp-gen: this libseccomp cannot place '%s' (number %d) for "
			"the target architecture; build seccomp-gen for the target and run "
			"it there (a meson cross file with an exe_wrapper, such as "
			"qemu-user), or use a libseccomp that knows the call\n",
			what, nr);
		exit(1);
	}
	if (r < 0)
		die(what, r);
}

static void add_names(scmp_filter_ctx ctx, uint32_t action, const char *const *names)
{
	for (size_t i = 0; names[i]; i++) {
		int nr = seccomp_syscall_resolve_name(names[i]);
		if (nr != __NR_SCMP_ERROR)
			add(ctx, action, nr, names[i], 0, NULL);
	}
}

static void base_rules(scmp_filter_ctx ctx)
{
	const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
	add_names(ctx, eperm, denied);
	add(ctx, eperm, NR_OPEN_TREE_ATTR, "open_tree_attr", 0, NULL);
	/* clone3 hides its flags behind a pointer: ENOSYS, and libc falls back
	 * to clone, whose flags the filter can see */
	struct scmp_arg_cmp newuser = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER);
	add(ctx, eperm, SCMP_SYS(unshare), "unshare", 1, &newuser);
	add(ctx, eperm, SCMP_SYS(clone), "clone", 1, &newuser);
	add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), "clone3", 0, NULL);
	/* openat2 hides its mode the same way (a set-id bit, below): libc's open
	 * uses openat */
	add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), "openat2", 0, NULL);
	/* fs-verity and fscrypt setters make a file immutable or encrypted: no
	 * step needs them, and Landlock does not see ioctls on files */
	const unsigned long fs_setters[] = {FS_IOC_ENABLE_VERITY, FS_IOC_SET_ENCRYPTION_POLICY,
					    FS_IOC_ADD_ENCRYPTION_KEY, FS_IOC_SETFSLABEL};
	for (size_t i = 0; i < sizeof(fs_setters) / sizeof(fs_setters[0]); i++) {
		struct scmp_arg_cmp c = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, fs_setters[i]);
		add(ctx, eperm, SCMP_SYS(ioctl), "fs setter ioctl", 1, &c);
	}
	struct scmp_arg_cmp sti = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI);
	struct scmp_arg_cmp linux_ = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX);
	add(ctx, eperm, SCMP_SYS(ioctl), "TIOCSTI", 1, &sti);
	add(ctx, eperm, SCMP_SYS(ioctl), "TIOCLINUX", 1, &linux_);
	/*
	 * An extended attribute's value past 4 KiB (what ext4 keeps in a block):
	 * a POSIX ACL on a tmpfs is kernel memory that neither the tmpfs size
	 * nor a cgroup charges, and 64 KiB ACLs on each inode of a 16 MiB /tmp
	 * held about 1 GiB; 4 KiB ones hold at most twice the tmpfs (one inode
	 * per page). E2BIG, as the kernel answers past its own bound.
	 * setxattrat hides the size behind a pointer: ENOSYS, libc has setxattr.
	 */
	struct scmp_arg_cmp big = SCMP_A3(SCMP_CMP_GT, XATTR_VALUE_MAX, 0);
	add(ctx, SCMP_ACT_ERRNO(E2BIG), SCMP_SYS(setxattr), "setxattr over 4 KiB", 1, &big);
	add(ctx, SCMP_ACT_ERRNO(E2BIG), SCMP_SYS(lsetxattr), "lsetxattr over 4 KiB", 1, &big);
	add(ctx, SCMP_ACT_ERRNO(E2BIG), SCMP_SYS(fsetxattr), "fsetxattr over 4 KiB", 1, &big);
	add(ctx, SCMP_ACT_ERRNO(ENOSYS), NR_SETXATTRAT, "setxattrat", 0, NULL);
}

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

/*
 * TCP Fast Open connects inside sendto/sendmsg, where Landlock's connect
 * hook never runs: with a network policy those flags are refused.
 */
static void fastopen_rules(scmp_filter_ctx ctx)
{
	const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
	struct scmp_arg_cmp a3 = SCMP_A3(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN);
	struct scmp_arg_cmp a2 = SCMP_A2(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN);
	add(ctx, eperm, SCMP_SYS(sendto), "sendto MSG_FASTOPEN", 1, &a3);
	add(ctx, eperm, SCMP_SYS(sendmsg), "sendmsg MSG_FASTOPEN", 1, &a2);
	add(ctx, eperm, SCMP_SYS(sendmmsg), "sendmmsg MSG_FASTOPEN", 1, &a3);
}

/*
 * Network modes. Landlock covers only TCP bind and connect, so every other
 * way out is refused here: with "none" every socket family but AF_UNIX; with
 * TCP port lists everything but AF_UNIX and TCP streams (AF_INET/AF_INET6,
 * SOCK_STREAM, protocol 0 or IPPROTO_TCP), which refuses UDP, raw, SCTP and
 * MPTCP (a stream protocol Landlock's TCP rules do not see).
 * libseccomp rules are conjunctions and one argument cannot be compared twice
 * in a rule, so "not one of" is spelled as one rule per refused value.
 */
/*
 * The hardening filter's network layer. NS: network by name in a network
 * namespace of the step's own (loopback alone): TCP and UDP, which reach
 * nothing but the proxy and the resolver stepbox made there (proxy_dns.c);
 * never a family the namespace does not hold (vsock, for one, reaches the
 * hypervisor from any namespace).
 */
enum net_layer { NET_LAYER_NONE, NET_LAYER_NO_NET, NET_LAYER_TCP, NET_LAYER_NS };

static void socket_rules(scmp_filter_ctx ctx, enum net_layer mode, uint32_t action)
{
	struct scmp_arg_cmp not_unix = SCMP_A0(SCMP_CMP_NE, AF_UNIX, 0);
	bool udp = mode == NET_LAYER_NS;
	if (mode == NET_LAYER_NO_NET) {
		add(ctx, action, SCMP_SYS(socket), "socket", 1, &not_unix);
		return;
	}
	/* families other than AF_UNIX, AF_INET, AF_INET6 */
	for (int fam = 0; fam <= AF_INET6; fam++) {
		if (fam == AF_UNIX || fam == AF_INET || fam == AF_INET6)
			continue;
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)fam, 0);
		add(ctx, action, SCMP_SYS(socket), "socket family", 1, &c);
	}
	struct scmp_arg_cmp above = SCMP_A0(SCMP_CMP_GT, AF_INET6, 0);
	add(ctx, action, SCMP_SYS(socket), "socket families", 1, &above);
	const int inet[] = {AF_INET, AF_INET6};
	for (size_t f = 0; f < 2; f++) {
		/* the type without SOCK_NONBLOCK and SOCK_CLOEXEC: stream only (NS: and datagrams)
		 */
		for (int type = 0; type <= 0xf; type++) {
			if (type == SOCK_STREAM || (udp && type == SOCK_DGRAM))
				continue;
			struct scmp_arg_cmp c[2] = {
				SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)inet[f], 0),
				SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, (scmp_datum_t)type)};
			add(ctx, action, SCMP_SYS(socket), "socket type", 2, c);
		}
		/* protocol 0 or IPPROTO_TCP only (NS: or UDP): not SCTP, not MPTCP, not ICMP */
		int last = udp ? IPPROTO_UDP : IPPROTO_TCP;
		for (int proto = 1; proto < last; proto++) {
			if (proto == IPPROTO_TCP)
				continue;
			struct scmp_arg_cmp c[2] = {SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)inet[f], 0),
						    SCMP_A2(SCMP_CMP_EQ, (scmp_datum_t)proto, 0)};
			add(ctx, action, SCMP_SYS(socket), "socket protocol", 2, c);
		}
		struct scmp_arg_cmp c[2] = {SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)inet[f], 0),
					    SCMP_A2(SCMP_CMP_GT, (scmp_datum_t)last, 0)};
		add(ctx, action, SCMP_SYS(socket), "socket protocol", 2, c);
	}
}

/*
 * sockets: the socket refusals are here; without, the supervisor's filter
 * holds them (emit, N_SOCK_*), so that --explain hears of each.
 */
static void net_rules(scmp_filter_ctx ctx, enum net_layer mode, bool sockets)
{
	const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
	fastopen_rules(ctx);
	struct scmp_arg_cmp not_unix = SCMP_A0(SCMP_CMP_NE, AF_UNIX, 0);
	add(ctx, eperm, SCMP_SYS(socketpair), "socketpair", 1, &not_unix);
	if (sockets)
		socket_rules(ctx, mode, eperm);
}

/*
 * The supervisor's calls (src/linux/supervise.c). Every call that names a socket
 * address in memory: connect, bind, sendto with an address (arg 4 is a
 * register the kernel reuses, so a NULL there is final), sendmsg and
 * sendmmsg (their address is inside the message, always in memory).
 */
static void notify_net_rules(scmp_filter_ctx ctx)
{
	add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(connect), "connect", 0, NULL);
	add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(bind), "bind", 0, NULL);
	struct scmp_arg_cmp addr = SCMP_A4(SCMP_CMP_NE, 0, 0);
	add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(sendto), "sendto", 1, &addr);
	add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(sendmsg), "sendmsg", 0, NULL);
	add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(sendmmsg), "sendmmsg", 0, NULL);
}

/*
 * The same where pidfd_getfd is refused (a container's seccomp profile): the
 * supervisor cannot hold the step's socket, so it re-makes it for a connect
 * (supervise_net.c) and sends nothing for the step. What makes an addressed send
 * harmless then is that no socket of the step can send to an address: a
 * stream or seqpacket socket ignores it (or refuses it), TCP Fast Open is
 * refused by flag, UDP exists only with --net allow; a UNIX datagram socket
 * (SOCK_RAW is its synonym) is the one that would reach any listening path,
 * so making one is sent to the supervisor, which refuses it and says why.
 */
static void notify_nofd_net_rules(scmp_filter_ctx ctx)
{
	add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(connect), "connect", 0, NULL);
	add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(bind), "bind", 0, NULL);
	const int dgram[] = {SOCK_DGRAM, SOCK_RAW};
	for (size_t i = 0; i < 2; i++) {
		/* the kernel reads an int: the upper half of the register is not looked at */
		struct scmp_arg_cmp c[2] = {
			SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, AF_UNIX),
			SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, (scmp_datum_t)dgram[i])};
		add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(socket), "socket AF_UNIX datagram", 2, c);
		add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(socketpair), "socketpair AF_UNIX datagram", 2,
		    c);
	}
}

static void notify_meta_rules(scmp_filter_ctx ctx)
{
	add_names(ctx, SCMP_ACT_NOTIFY, metadata);
	add(ctx, SCMP_ACT_NOTIFY, NR_FCHMODAT2, "fchmodat2", 0, NULL);
	add(ctx, SCMP_ACT_NOTIFY, NR_SETXATTRAT, "setxattrat", 0, NULL);
	add(ctx, SCMP_ACT_NOTIFY, NR_REMOVEXATTRAT, "removexattrat", 0, NULL);
	add(ctx, SCMP_ACT_NOTIFY, NR_FILE_SETATTR, "file_setattr", 0, NULL);
	/* chattr: inode flags and project ids are metadata too */
	struct scmp_arg_cmp fl = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, FS_IOC_SETFLAGS);
	struct scmp_arg_cmp fl32 = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, FS_IOC32_SETFLAGS);
	struct scmp_arg_cmp fsx = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, FS_IOC_FSSETXATTR);
	struct scmp_arg_cmp ver = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, FS_IOC_SETVERSION);
	struct scmp_arg_cmp ver32 = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, FS_IOC32_SETVERSION);
	add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(ioctl), "FS_IOC_SETFLAGS", 1, &fl);
	add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(ioctl), "FS_IOC32_SETFLAGS", 1, &fl32);
	add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(ioctl), "FS_IOC_FSSETXATTR", 1, &fsx);
	add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(ioctl), "FS_IOC_SETVERSION", 1, &ver);
	add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(ioctl), "FS_IOC32_SETVERSION", 1, &ver32);
}

/*
 * A file made with a set-user-ID or set-group-ID bit: beneath a write grant
 * it is the host's file too, where it would run with its owner's rights (a
 * root step's: root's). chmod goes to the supervisor with the metadata calls
 * (it refuses those bits on anything but a folder); a file created with
 * them goes too, to be refused and explained. The mode is the kernel's
 * umode_t: its low bits alone are looked at.
 */
static void notify_setid_rules(scmp_filter_ctx ctx)
{
	/* open and openat read the mode only to create: with O_CREAT or O_TMPFILE */
	const struct {
		int nr;
		const char *name;
		unsigned mode_arg;
		int flags_arg; /* -1: always creates */
	} makers[] = {{SCMP_SYS(creat), "creat", 1, -1},
		      {SCMP_SYS(open), "open", 2, 1},
		      {SCMP_SYS(openat), "openat", 3, 2},
		      {SCMP_SYS(mknod), "mknod", 1, -1},
		      {SCMP_SYS(mknodat), "mknodat", 2, -1}};
	const scmp_datum_t bits[] = {S_ISUID, S_ISGID};
	const scmp_datum_t creating[] = {O_CREAT, __O_TMPFILE};
	for (size_t i = 0; i < sizeof(makers) / sizeof(makers[0]); i++)
		for (size_t k = 0; k < 2; k++)
			for (size_t f = 0; f < (makers[i].flags_arg < 0 ? 1u : 2u); f++) {
				struct scmp_arg_cmp c[2] = {
					{makers[i].mode_arg, SCMP_CMP_MASKED_EQ, bits[k], bits[k]},
					{(unsigned)makers[i].flags_arg, SCMP_CMP_MASKED_EQ,
					 creating[f], creating[f]}};
				add(ctx, SCMP_ACT_NOTIFY, makers[i].nr, makers[i].name,
				    makers[i].flags_arg < 0 ? 1 : 2, c);
			}
}

/*
 * Landlock alone: POSIX shared memory and semaphores. glibc makes them in
 * /dev/shm, a path no program chooses, which Landlock alone cannot give the
 * step a private copy of; the supervisor serves those calls from a folder of
 * the step's own and lets every other one go on (Landlock judges it). The
 * calls glibc makes there, by their shape, so that plain reads and what
 * walks a tree by folder fds (rm -r, find) never stop: each names an
 * absolute path from AT_FDCWD; shm_open and sem_open open with O_NOFOLLOW |
 * O_CLOEXEC, sem_open makes a new semaphore under a temporary name (O_CREAT
 * | O_EXCL), links it to its name and unlinks the temporary one;
 * shm_unlink and sem_unlink unlink.
 */
static void notify_shm_rules(scmp_filter_ctx ctx)
{
	/* the kernel reads the dirfd as an int: the upper half of the register is not looked at */
	struct scmp_arg_cmp cwd = SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, (uint32_t)AT_FDCWD);
	const scmp_datum_t shapes[] = {O_CREAT | O_EXCL, O_NOFOLLOW | O_CLOEXEC};
	for (size_t k = 0; k < 2; k++) {
		struct scmp_arg_cmp open_c = SCMP_A1(SCMP_CMP_MASKED_EQ, shapes[k], shapes[k]);
		struct scmp_arg_cmp openat_c[2] = {
			cwd, SCMP_A2(SCMP_CMP_MASKED_EQ, shapes[k], shapes[k])};
		add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(open), "open", 1, &open_c);
		add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(openat), "openat", 2, openat_c);
	}
	add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(link), "link", 0, NULL);
	add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(linkat), "linkat", 1, &cwd);
	add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(unlink), "unlink", 0, NULL);
	/* not rmdir's form: AT_REMOVEDIR */
	struct scmp_arg_cmp file[2] = {cwd, SCMP_A2(SCMP_CMP_MASKED_EQ, AT_REMOVEDIR, 0)};
	add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(unlinkat), "unlinkat", 2, file);
}

/*
 * The protected paths' live layer, on every backend with a supervisor (the
 * namespaces bind what exists read-only; a name made during the step is
 * theirs to refuse too). Every call that makes,
 * writes, moves or removes a name goes to the supervisor, which matches the
 * name and performs the call (supervise_guard.c); an open by its flags only,
 * so that a read never stops. openat2 hides its flags in memory: the base
 * filter answers it ENOSYS, and libc falls back to openat.
 */
static void notify_guard_rules(scmp_filter_ctx ctx)
{
	const scmp_datum_t writes[] = {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, __O_TMPFILE};
	for (size_t k = 0; k < sizeof(writes) / sizeof(writes[0]); k++) {
		struct scmp_arg_cmp open_c = SCMP_A1(SCMP_CMP_MASKED_EQ, writes[k], writes[k]);
		struct scmp_arg_cmp openat_c = SCMP_A2(SCMP_CMP_MASKED_EQ, writes[k], writes[k]);
		add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(open), "open", 1, &open_c);
		add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(openat), "openat", 1, &openat_c);
	}
	static const char *const names[] = {
		"creat",    "mkdir",   "mkdirat",   "mknod",    "mknodat",   "unlink",
		"unlinkat", "rmdir",   "rename",    "renameat", "renameat2", "link",
		"linkat",   "symlink", "symlinkat", "truncate", NULL};
	add_names(ctx, SCMP_ACT_NOTIFY, names);
	/* each change of a umask, so that the supervisor may keep them (sup_step_umask) */
	add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(umask), "umask", 0, NULL);
}

/*
 * A notification goes to the listener of the filter that asked for it, and a
 * task gets one listener per filter: so the supervisor's calls are one
 * filter, with listen() under a port list (Landlock has no hook for it: an
 * unbound socket that listens takes an ephemeral port nobody allowed), and
 * /dev/shm's calls and access(2) under Landlock alone.
 */
enum filter { F_TRACE, F_TRACE_LOOKUP, F_NOTIFY };
enum { T_FORKS = 1 }; /* trace filters: the forks too (a tasks limit by RLIMIT_NPROC) */
/*
 * N_ALONE: Landlock alone. N_GUARD: the protected paths' live layer (all
 * but "_unguarded": a policy that protects nothing). N_SOCK_NONE,
 * N_SOCK_TCP, N_SOCK_NS: the network mode's socket
 * refusals, taken out of the hardening filter (--explain: an ERRNO there
 * outranks the notification, and nothing would hear of the call); the
 * supervisor refuses every one it is sent.
 */
enum {
	N_NOFD = 1,
	N_LISTEN = 2,
	N_ALONE = 4,
	N_GUARD = 8,
	N_SOCK_NONE = 16,
	N_SOCK_TCP = 32,
	N_SOCK_NS = 64
};

/* Without a PID or IPC namespace: the host's IPC, and its processes by pid. */
static void alone_rules(scmp_filter_ctx ctx)
{
	const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
	add_names(ctx, eperm, sysv);
	struct scmp_arg_cmp not_self = SCMP_A0(SCMP_CMP_NE, 0, 0);
	for (size_t i = 0; self_only[i]; i++) {
		int nr = seccomp_syscall_resolve_name(self_only[i]);
		if (nr != __NR_SCMP_ERROR)
			add(ctx, eperm, nr, self_only[i], 1, &not_self);
	}
	/* setpriority(PRIO_PROCESS, 0, ...) only: not a group, not a user's processes */
	struct scmp_arg_cmp not_process = SCMP_A0(SCMP_CMP_NE, PRIO_PROCESS, 0);
	struct scmp_arg_cmp not_zero = SCMP_A1(SCMP_CMP_NE, 0, 0);
	add(ctx, eperm, SCMP_SYS(setpriority), "setpriority which", 1, &not_process);
	add(ctx, eperm, SCMP_SYS(setpriority), "setpriority who", 1, &not_zero);
	struct scmp_arg_cmp io_not_process = SCMP_A0(SCMP_CMP_NE, IOPRIO_WHO_PROCESS, 0);
	add(ctx, eperm, SCMP_SYS(ioprio_set), "ioprio_set which", 1, &io_not_process);
	add(ctx, eperm, SCMP_SYS(ioprio_set), "ioprio_set who", 1, &not_zero);
}

/* In an IPC namespace whose System V limits nothing sets: System V IPC alone. */
static void unbounded_sysv_rules(scmp_filter_ctx ctx)
{
	for (size_t i = 0; i < SYSV_ONLY; i++) {
		int nr = seccomp_syscall_resolve_name(sysv[i]);
		if (nr != __NR_SCMP_ERROR)
			add(ctx, SCMP_ACT_ERRNO(EPERM), nr, sysv[i], 0, NULL);
	}
}

/* A filter whose calls not named meet def (the allow-lists: a refusal) */
static scmp_filter_ctx new_ctx(uint32_t def, bool judge_arch)
{
	scmp_filter_ctx ctx = seccomp_init(def);
	int r;
	if (!ctx)
		die("seccomp_init", -ENOMEM);
	/*
	 * A cross build: the target's ABI alone. Rules name calls by this
	 * machine's numbers (SCMP_SYS) or names, and libseccomp translates each
	 * to the target's number, leaving out calls the target does not have.
	 */
	if (target_arch && target_arch != seccomp_arch_native() &&
	    ((r = seccomp_arch_add(ctx, target_arch)) < 0 ||
	     (r = seccomp_arch_remove(ctx, SCMP_ARCH_NATIVE)) < 0))
		die("target architecture", r);
	/* only the hardening filter judges the ABI; the others leave that to it */
	uint32_t badarch = judge_arch ? SCMP_ACT_ERRNO(ENOSYS) : SCMP_ACT_ALLOW;
	if ((r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, badarch)) < 0)
		die("bad-arch action", r);
	return ctx;
}

static void export(scmp_filter_ctx ctx, const char *name)
{
	int r;
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

/*
 * The hardening filter the step's command installs: the base, with the
 * network mode's rules and Landlock alone's merged in, one filter for each
 * combination. Each filter installed costs its JIT compile (150 to 300 us
 * on a 2-core VM), and every call runs every filter: one is cheaper than
 * three, and decides the same (the layers name disjoint calls, see claim).
 */
/* What the hardening filter adds for the IPC the step would share or could not bound. */
enum ipc_layer { IPC_OWN, IPC_ALONE, IPC_UNBOUNDED_SYSV };

static void emit_harden(const char *name, enum net_layer net, enum ipc_layer ipc, bool sockets)
{
	scmp_filter_ctx ctx = new_ctx(SCMP_ACT_ALLOW, true);
	nnamed = 0;
	layer = 1;
	base_rules(ctx);
	layer = 2;
	if (net != NET_LAYER_NONE)
		net_rules(ctx, net, sockets);
	layer = 3;
	if (ipc == IPC_ALONE)
		alone_rules(ctx);
	else if (ipc == IPC_UNBOUNDED_SYSV)
		unbounded_sysv_rules(ctx);
	layer = 0;
	export(ctx, name);
}

/*
 * Landlock alone: access(2) is not Landlock's to answer, and alone it says
 * "readable" of what the step cannot open; the supervisor answers instead.
 * Under the namespaces what is not granted is not there: the kernel's
 * answer holds, and costs no round trip.
 */
static void notify_access_rules(scmp_filter_ctx ctx)
{
	static const char *const access_calls[] = {"access", "faccessat", NULL};
	add_names(ctx, SCMP_ACT_NOTIFY, access_calls);
	add(ctx, SCMP_ACT_NOTIFY, NR_FACCESSAT2, "faccessat2", 0, NULL);
}

/*
 * Under the namespaces an ungranted path is absent, so a lookup fails there
 * too (a shell's PATH search, os.path.exists, ls): those stop as well. Only
 * lookups from the cwd (AT_FDCWD, as the compared low 32 bits of the folder's
 * fd) or by the old calls that have no folder argument: a walk's lookups
 * relative to a folder it opened (find, fts, rm -r) would cost a stop each,
 * and fstat's AT_EMPTY_PATH names no path at all.
 */
static void trace_lookup_rules(scmp_filter_ctx ctx)
{
	add_names(ctx, SCMP_ACT_TRACE(0), traced_lookup);
	const struct scmp_arg_cmp cwd =
		SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, (uint32_t)AT_FDCWD);
	static const char *const at_calls[] = {"faccessat", "readlinkat", NULL};
	for (size_t i = 0; at_calls[i]; i++)
		add(ctx, SCMP_ACT_TRACE(0), seccomp_syscall_resolve_name(at_calls[i]), at_calls[i],
		    1, &cwd);
	add(ctx, SCMP_ACT_TRACE(0), NR_FACCESSAT2, "faccessat2", 1, &cwd);
	/* the flags: newfstatat's fourth argument, statx's third */
	const struct scmp_arg_cmp fstatat[2] = {cwd, SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, 0)};
	const struct scmp_arg_cmp statx[2] = {cwd, SCMP_A2(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, 0)};
	add(ctx, SCMP_ACT_TRACE(0), SCMP_SYS(newfstatat), "newfstatat", 2, fstatat);
	add(ctx, SCMP_ACT_TRACE(0), SCMP_SYS(statx), "statx", 2, statx);
}

static void emit(const char *name, enum filter which, unsigned notify)
{
	scmp_filter_ctx ctx = new_ctx(SCMP_ACT_ALLOW, false);
	if (which == F_TRACE || which == F_TRACE_LOOKUP) {
		add_names(ctx, SCMP_ACT_TRACE(0), traced);
		if (which == F_TRACE_LOOKUP)
			trace_lookup_rules(ctx);
		/*
		 * RLIMIT_NPROC refuses a fork (EAGAIN) and tells no one: its result
		 * is the only evidence of a tasks limit reached and survived (a
		 * cgroup counts them itself, in pids.events). clone3 is ENOSYS.
		 */
		static const char *const forks[] = {"clone", "fork", "vfork", NULL};
		if (notify & T_FORKS)
			add_names(ctx, SCMP_ACT_TRACE(0), forks);
	} else {
		if (notify & N_NOFD)
			notify_nofd_net_rules(ctx);
		else
			notify_net_rules(ctx);
		notify_meta_rules(ctx);
		notify_setid_rules(ctx);
		/*
		 * A Landlock domain of the step's own (landrun, a nested sandbox):
		 * the live layer's calls are then the kernel's to judge by its
		 * rules too (supervise_guard.c), and what the supervisor makes for
		 * the step is made under a copy of it (supervise_nested.c).
		 */
		add(ctx, SCMP_ACT_NOTIFY, NR_LANDLOCK_RESTRICT_SELF, "landlock_restrict_self", 0,
		    NULL);
		/* ... and the subreapers above a domain, where its orphans go */
		struct scmp_arg_cmp subreaper =
			SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, PR_SET_CHILD_SUBREAPER);
		add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(prctl), "prctl", 1, &subreaper);
		if (notify & N_LISTEN)
			add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(listen), "listen", 0, NULL);
		if (notify & (N_SOCK_NONE | N_SOCK_TCP | N_SOCK_NS))
			socket_rules(ctx,
				     notify & N_SOCK_NONE  ? NET_LAYER_NO_NET
				     : notify & N_SOCK_TCP ? NET_LAYER_TCP
							   : NET_LAYER_NS,
				     SCMP_ACT_NOTIFY);
		if (notify & N_ALONE) {
			notify_shm_rules(ctx);
			notify_access_rules(ctx);
		}
		if (notify & N_GUARD)
			notify_guard_rules(ctx);
	}
	export(ctx, name);
}

/*
 * The network proxy (src/net): it runs outside the sandbox, as the caller,
 * and every byte it reads comes from the step. Beside its Landlock domain
 * (files read-only, TCP to the hosts' ports) it keeps the calls a proxy and
 * glibc's resolver make, and nothing else: a flaw in its parsing turned
 * into code would find no new process or program, no mount, module,
 * keyring, bpf, ptrace, raw or packet socket, no signal to another
 * process, no terminal input to inject. Anything else is EPERM.
 */
static const char *const proxy_calls[] = {
	/* memory and threads (the resolver's lookups run in threads) */
	"brk",
	"mmap",
	"munmap",
	"mprotect",
	"mremap",
	"madvise",
	"futex",
	"set_robust_list",
	"rseq",
	"exit",
	"exit_group",
	"sched_yield",
	"sched_getaffinity",
	"gettid",
	"getpid",
	"rt_sigaction",
	"rt_sigprocmask",
	"rt_sigreturn",
	"sigaltstack",
	"restart_syscall",
	"clock_gettime",
	"clock_getres",
	"gettimeofday",
	"time",
	"nanosleep",
	"clock_nanosleep",
	/* files (Landlock's: the resolver's configuration, read-only) */
	"read",
	"write",
	"readv",
	"writev",
	"pread64",
	"openat",
	"open",
	"close",
	"fstat",
	"newfstatat",
	"stat",
	"lstat",
	"statx",
	"lseek",
	"fcntl",
	"dup",
	"dup2",
	"dup3",
	"readlink",
	"readlinkat",
	"access",
	"faccessat",
	"uname",
	"getrandom",
	"pipe2",
	"splice", /* a bulk direction through a pipe (proxy.c) */
	"getuid",
	"geteuid",
	"getgid",
	"getegid",
	/* waiting */
	"poll",
	"ppoll",
	"select",
	"pselect6",
	"epoll_create1",
	"epoll_ctl",
	"epoll_wait",
	"epoll_pwait",
	/* sockets (their families below) */
	"connect",
	"accept",
	"accept4",
	"bind",
	"getsockname",
	"getpeername",
	"getsockopt",
	"setsockopt",
	"sendto",
	"recvfrom",
	"sendmsg",
	"recvmsg",
	"sendmmsg",
	"recvmmsg",
	"shutdown",
	NULL,
};

static void emit_proxy(const char *name)
{
	scmp_filter_ctx ctx = new_ctx(SCMP_ACT_ERRNO(EPERM), true);
	add_names(ctx, SCMP_ACT_ALLOW, proxy_calls);
	/* threads only (never a process): clone3 hides its flags, ENOSYS sends libc to clone */
	struct scmp_arg_cmp thread = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD);
	add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), "clone", 1, &thread);
	add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), "clone3", 0, NULL);
	/* limits read, never set */
	struct scmp_arg_cmp query = SCMP_A2(SCMP_CMP_EQ, 0, 0);
	add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), "prlimit64", 1, &query);
	/* UNIX (nscd, systemd-resolved), IP, and the routing netlink getaddrinfo asks */
	const int families[] = {AF_UNIX, AF_INET, AF_INET6};
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		/* streams, datagrams and sequenced packets: never raw */
		const int types[] = {SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET};
		for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
			struct scmp_arg_cmp c[2] = {
				SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)families[i], 0),
				SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, (scmp_datum_t)types[t])};
			add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), "socket", 2, c);
		}
	}
	struct scmp_arg_cmp route[2] = {SCMP_A0(SCMP_CMP_EQ, AF_NETLINK, 0),
					SCMP_A2(SCMP_CMP_EQ, NETLINK_ROUTE, 0)};
	add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), "socket netlink", 2, route);
	/* ioctl: how much is waiting, blocking, close-on-exec, a terminal's mode, an interface's
	 * index */
	const unsigned long ioctls[] = {FIONREAD, FIONBIO,      FIOCLEX,    FIONCLEX,
					TCGETS,   SIOCGIFINDEX, SIOCGIFNAME};
	for (size_t i = 0; i < sizeof(ioctls) / sizeof(ioctls[0]); i++) {
		struct scmp_arg_cmp c = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, ioctls[i]);
		add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), "ioctl", 1, &c);
	}
	export(ctx, name);
}

static void names(const char *var, const char *const *list)
{
	printf("static const char *const %s[] = {\n", var);
	for (size_t i = 0; list[i]; i++)
		printf("\t\"%s\",\n", list[i]);
	printf("\tNULL,\n};\n\n");
}

int main(int argc, char **argv)
{
	/* the target, in libseccomp's spelling (x86_64, aarch64, riscv64, ...) */
	if (argc > 1 && !(target_arch = seccomp_arch_resolve_name(argv[1]))) {
		fprintf(stderr, "seccomp-gen: unknown architecture '%s'\n", argv[1]);
		return 1;
	}
	printf("/* Generated by tools/seccomp-gen.c at build time. Do not edit. */\n\n");
	names("harden_filter_denied", denied);
	names("harden_filter_sysv", sysv);
	names("harden_filter_metadata", metadata);
	static const char *const nets[] = {"", "_net_none", "_net_tcp", "_net_ns"};
	static const char *const ipcs[] = {"", "_alone", "_sysv"};
	for (int net = NET_LAYER_NONE; net <= NET_LAYER_NS; net++)
		for (int ipc = IPC_OWN; ipc <= IPC_UNBOUNDED_SYSV; ipc++)
			for (int sockets = 1; sockets >= (net != NET_LAYER_NONE ? 0 : 1);
			     sockets--) {
				char name[80];
				snprintf(name, sizeof(name), "harden_filter_base%s%s%s", nets[net],
					 ipcs[ipc], sockets ? "" : "_nosock");
				emit_harden(name, (enum net_layer)net, (enum ipc_layer)ipc,
					    sockets);
			}
	emit_proxy("harden_filter_proxy");
	emit("harden_filter_trace", F_TRACE, 0);
	emit("harden_filter_trace_lookup", F_TRACE_LOOKUP, 0);
	emit("harden_filter_trace_forks", F_TRACE, T_FORKS);
	emit("harden_filter_trace_lookup_forks", F_TRACE_LOOKUP, T_FORKS);
	static const unsigned socks[] = {0, N_SOCK_NONE, N_SOCK_TCP, N_SOCK_NS};
	for (unsigned k = 0; k < 4; k++)
		for (unsigned n = 0; n < 16; n++) {
			char name[96];
			snprintf(name, sizeof(name), "harden_filter_notify%s%s%s%s%s",
				 n & N_NOFD ? "_nofd" : "", n & N_LISTEN ? "_listen" : "",
				 n & N_ALONE ? "_alone" : "", n & N_GUARD ? "" : "_unguarded",
				 socks[k] == N_SOCK_NONE  ? "_sock_none"
				 : socks[k] == N_SOCK_TCP ? "_sock_tcp"
				 : socks[k] == N_SOCK_NS  ? "_sock_ns"
							  : "");
			emit(name, F_NOTIFY, n | socks[k]);
		}
	return 0;
}
