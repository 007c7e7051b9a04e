#include "harden.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* harden_filter_* arrays compiled by tools/seccomp-gen.c at build time */
#include "seccomp_filters.h"

const char *const *const harden_denied_syscalls = harden_filter_denied;

int harden_prepare(struct harden *h, const struct stepbox_config *cfg, bool traced,
		   struct stepbox_err *err)
{
	(void)err;
	memset(h, 0, sizeof(*h));
#define USE(f) (h->prog.filter = (struct sock_filter *)(f), h->prog.len = sizeof(f) / sizeof((f)[0]))
	/* with --explain, the same filter that also stops for stepbox's tracer */
	switch (cfg->net) {
	case NET_NONE:
		if (traced)
			USE(harden_filter_net_none_traced);
		else
			USE(harden_filter_net_none);
		break;
	case NET_TCP:
		if (traced)
			USE(harden_filter_net_tcp_traced);
		else
			USE(harden_filter_net_tcp);
		break;
	case NET_ALLOW:
		if (traced)
			USE(harden_filter_base_traced);
		else
			USE(harden_filter_base);
		break;
	}
#undef USE
	return 0;
}

void harden_release(struct harden *h)
{
	memset(h, 0, sizeof(*h));
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

int harden_drop_caps(void)
{
	/* asked here, in the child: inside a new user namespace it holds them all */
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];
	bool can_setpcap = syscall(SYS_capget, &hdr, data) == 0 &&
			   (data[0].effective & (1u << CAP_SETPCAP));
	if (can_setpcap) {
		/* root's execs gain no capabilities, and nothing can undo that */
		if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
						     SECBIT_NO_SETUID_FIXUP |
						     SECBIT_NO_SETUID_FIXUP_LOCKED |
						     SECBIT_KEEP_CAPS_LOCKED |
						     SECBIT_NO_CAP_AMBIENT_RAISE |
						     SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) < 0)
			return -errno;
		for (int cap = 0; cap < 64; cap++) {
			if (prctl(PR_CAPBSET_READ, cap) < 0)
				break; /* past the kernel's last capability */
			if (prctl(PR_CAPBSET_DROP, cap) < 0)
				return -errno;
		}
	}
	/* without CAP_SETPCAP the bounding set stays, but no_new_privs makes it
	 * unreachable: setuid bits and file capabilities are ignored at exec */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data) < 0)
		return -errno;
	return 0;
}

int harden_no_new_privs(void)
{
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ? -errno : 0;
}

int harden_seccomp(const struct harden *h)
{
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &h->prog) < 0 ? -errno : 0;
}
