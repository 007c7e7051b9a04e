#include "harden.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "path.h"

/* harden_filter_* arrays compiled by tools/seccomp-gen.c at build time */
#include "seccomp_filters.h"

#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

const char *const *const harden_denied_syscalls = harden_filter_denied;
const char *const *const harden_sysv_syscalls = harden_filter_sysv;

#define FPROG(f)                                                                                   \
	{                                                                                          \
		sizeof(f) / sizeof((f)[0]), (struct sock_filter *)(f)                              \
	}
#define PROG(f) ((struct sock_fprog)FPROG(f))

void harden_prepare(struct harden *h, const struct stepbox_config *cfg, const struct harden_opts *o)
{
	memset(h, 0, sizeof(*h));
	/*
	 * Network by name: TCP streams only, as under a port list (no UDP, so no
	 * DNS of the step's own). listen() on an unbound socket is refused only on
	 * the host's loopback (Landlock alone): in its own network namespace an
	 * ephemeral port of the step's is its own.
	 */
	bool tcp = cfg->net == NET_TCP || (cfg->net == NET_HOSTS && o->supervise_alone);
	/*
	 * ... but in a network namespace of the step's own (the namespaces),
	 * where loopback is all there is, TCP and UDP: the resolver stepbox
	 * makes there answers the step's own lookups (proxy_dns.c).
	 */
	int net = cfg->net == NET_NONE ? 1 : tcp ? 2 : cfg->net == NET_HOSTS ? 3 : 0;
	int ipc = o->refuse_sysv ? 1 : o->refuse_unbounded_sysv ? 2 : 0;
	/* the network mode's socket refusals in the supervisor's filter, where
	 * --explain hears of them; never one without the other */
	int sock = o->supervise && o->explain_sockets ? net : 0;
	/* one filter: the base with the network mode's and Landlock alone's rules merged in */
	static const struct sock_fprog hardening[4][3][2] = {
		{{FPROG(harden_filter_base)},
		 {FPROG(harden_filter_base_alone)},
		 {FPROG(harden_filter_base_sysv)}},
		{{FPROG(harden_filter_base_net_none), FPROG(harden_filter_base_net_none_nosock)},
		 {FPROG(harden_filter_base_net_none_alone),
		  FPROG(harden_filter_base_net_none_alone_nosock)},
		 {FPROG(harden_filter_base_net_none_sysv),
		  FPROG(harden_filter_base_net_none_sysv_nosock)}},
		{{FPROG(harden_filter_base_net_tcp), FPROG(harden_filter_base_net_tcp_nosock)},
		 {FPROG(harden_filter_base_net_tcp_alone),
		  FPROG(harden_filter_base_net_tcp_alone_nosock)},
		 {FPROG(harden_filter_base_net_tcp_sysv),
		  FPROG(harden_filter_base_net_tcp_sysv_nosock)}},
		{{FPROG(harden_filter_base_net_ns), FPROG(harden_filter_base_net_ns_nosock)},
		 {FPROG(harden_filter_base_net_ns_alone),
		  FPROG(harden_filter_base_net_ns_alone_nosock)},
		 {FPROG(harden_filter_base_net_ns_sysv),
		  FPROG(harden_filter_base_net_ns_sysv_nosock)}},
	};
	h->filters[h->n++] = hardening[net][ipc][sock != 0];
	assert(h->filters[0].len > 0);
	static const struct sock_fprog trace[2][2] = {
		{FPROG(harden_filter_trace), FPROG(harden_filter_trace_forks)},
		{FPROG(harden_filter_trace_lookup), FPROG(harden_filter_trace_lookup_forks)},
	};
	/* the supervisor's: [without pidfd_getfd][listen() under a port list][Landlock
	 * alone: access(2) and /dev/shm's calls too (supervise.h)][the protected
	 * paths' live layer][the sockets refused] */
#define SOCKS(f)                                                                                   \
	{                                                                                          \
		FPROG(f), FPROG(f##_sock_none), FPROG(f##_sock_tcp), FPROG(f##_sock_ns)            \
	}
#define NOTIFY(f)                                                                                  \
	{                                                                                          \
		SOCKS(f##_unguarded), SOCKS(f)                                                     \
	}
	static const struct sock_fprog notify[2][2][2][2][4] = {
		{{NOTIFY(harden_filter_notify), NOTIFY(harden_filter_notify_alone)},
		 {NOTIFY(harden_filter_notify_listen), NOTIFY(harden_filter_notify_listen_alone)}},
		{{NOTIFY(harden_filter_notify_nofd), NOTIFY(harden_filter_notify_nofd_alone)},
		 {NOTIFY(harden_filter_notify_nofd_listen),
		  NOTIFY(harden_filter_notify_nofd_listen_alone)}},
	};
#undef NOTIFY
#undef SOCKS
	if (o->traced)
		h->filters[h->n++] = trace[o->traced_lookups][o->traced_forks];
	if (o->supervise)
		h->notify = notify[o->supervise_nofd][tcp][o->supervise_alone][o->supervise_guard]
				  [sock];
	assert(h->n <= HARDEN_MAX_FILTERS);
}

int harden_cloexec_fds(void)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3u, ~0u, 4u /* CLOSE_RANGE_CLOEXEC */) == 0)
		return 0;
#endif
	long max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 1 << 20)
		max = 1 << 20;
	for (int fd = 3; fd < max; fd++)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	return 0;
}

bool harden_filtered(void)
{
	char *text = path_read_file("/proc/self/status", 1 << 16);
	bool yes = text && strstr(text, "\nSeccomp:\t2") != NULL;
	free(text);
	return yes;
}

int harden_filter_count(void)
{
	char *text = path_read_file("/proc/self/status", 1 << 16);
	const char *f = text ? strstr(text, "\nSeccomp_filters:") : NULL;
	int n = f ? (int)strtol(f + 18, NULL, 10) : 0;
	free(text);
	return n;
}

bool harden_gvisor(void)
{
	struct utsname u;
	return uname(&u) == 0 && strcmp(u.release, "4.4.0") == 0 &&
	       strcmp(u.version, "#1 SMP Sun Jan 10 15:06:54 PST 2016") == 0;
}

bool harden_has_cap(int cap)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];
	return cap >= 0 && cap < 64 && syscall(SYS_capget, &hdr, data) == 0 &&
	       (data[cap / 32].effective & (1u << (cap % 32)));
}

int harden_drop_caps(void)
{
	/* asked here, in the child: inside a new user namespace it holds them all */
	bool can_setpcap = harden_has_cap(CAP_SETPCAP);
	if (can_setpcap) {
		/* root's execs gain no capabilities, and nothing can undo that */
		if (prctl(PR_SET_SECUREBITS,
			  SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
				  SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
				  SECBIT_NO_CAP_AMBIENT_RAISE |
				  SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) < 0)
			return -errno;
		for (int cap = 0; cap < 64; cap++) {
			if (prctl(PR_CAPBSET_DROP, cap) == 0)
				continue; /* dropping one already gone is no error */
			if (errno == EINVAL)
				break; /* past the kernel's last capability */
			return -errno;
		}
	}
	/* without CAP_SETPCAP the bounding set stays, but no_new_privs makes it
	 * unreachable: setuid bits and file capabilities are ignored at exec */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data) < 0)
		return -errno;
	return 0;
}

int harden_no_new_privs(void)
{
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ? -errno : 0;
}

int harden_confine_proxy(void)
{
	int r = harden_drop_caps();
	if (r == 0)
		r = harden_no_new_privs();
	struct sock_fprog f = PROG(harden_filter_proxy);
	if (r == 0 && syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &f) < 0)
		r = -errno;
	return r;
}

int harden_seccomp(const struct harden *h)
{
	for (unsigned i = 0; i < h->n; i++)
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &h->filters[i]) < 0)
			return -errno;
	return 0;
}

int harden_listener(const struct harden *h, bool wait_killable)
{
	unsigned long flags = SECCOMP_FILTER_FLAG_NEW_LISTENER;
	if (wait_killable)
		flags |= SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
	int fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &h->notify);
	if (fd < 0)
		return -errno;
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}
