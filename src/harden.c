#include "harden.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * What no step needs and no filesystem rule covers: loading kernel code,
 * rebooting, swap, the clock, bpf and perf (kernel attack surface), keyrings
 * (shared across the user's sessions), mounts, handle-based opens that bypass
 * paths (the "shocker" escape), the kernel log, userfaultfd (an exploit aid).
 */
const char *const harden_denied_syscalls[] = {
	"init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
	"reboot", "swapon", "swapoff", "settimeofday", "clock_settime", "clock_adjtime",
	"adjtimex", "bpf", "perf_event_open", "keyctl", "add_key", "request_key",
	"mount", "umount2", "pivot_root", "fsopen", "fsconfig", "fsmount", "fspick",
	"open_tree", "move_mount", "mount_setattr", "open_by_handle_at", "syslog",
	"userfaultfd", "acct", "quotactl", "iopl", "ioperm", "uselib", "vhangup",
	NULL,
};

static int add_rules(scmp_filter_ctx ctx, struct stepbox_err *err)
{
	const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
	int r;
	for (size_t i = 0; harden_denied_syscalls[i]; i++) {
		int nr = seccomp_syscall_resolve_name(harden_denied_syscalls[i]);
		if (nr == __NR_SCMP_ERROR)
			continue; /* not on this architecture */
		r = seccomp_rule_add(ctx, eperm, nr, 0);
		if (r < 0)
			return err_set(err, ERR_UNAVAILABLE, -r, "seccomp rule for %s",
				       harden_denied_syscalls[i]);
	}
	/*
	 * A new user namespace gives back every capability inside it and a
	 * fresh attack surface. clone3 hides its flags behind a pointer, so it
	 * answers ENOSYS and libc falls back to clone, whose flags we can see.
	 */
	r = seccomp_rule_add(ctx, eperm, SCMP_SYS(unshare), 1,
			     SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
	if (r == 0)
		r = seccomp_rule_add(ctx, eperm, SCMP_SYS(clone), 1,
				     SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	/* typing into a terminal from inside the sandbox (CVE-2017-5226) */
	if (r == 0)
		r = seccomp_rule_add(ctx, eperm, SCMP_SYS(ioctl), 1,
				     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI));
	if (r == 0)
		r = seccomp_rule_add(ctx, eperm, SCMP_SYS(ioctl), 1,
				     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX));
	if (r < 0)
		return err_set(err, ERR_UNAVAILABLE, -r, "seccomp argument rules");
	return 0;
}

/* libseccomp writes BPF to an fd; read it back so the child only loads it. */
static int export_bpf(scmp_filter_ctx ctx, struct sock_fprog *prog, struct stepbox_err *err)
{
	int fd = memfd_create("stepbox-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return err_set(err, ERR_UNAVAILABLE, errno, "memfd for seccomp filter");
	int r = seccomp_export_bpf(ctx, fd);
	struct stat st;
	if (r < 0) {
		r = err_set(err, ERR_UNAVAILABLE, -r, "export seccomp filter");
		goto out_close;
	}
	if (fstat(fd, &st) < 0 || st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) ||
	    st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS) {
		r = err_set(err, ERR_UNAVAILABLE, EINVAL, "exported seccomp filter has a bad size");
		goto out_close;
	}
	struct sock_filter *insns = malloc((size_t)st.st_size);
	if (!insns || pread(fd, insns, (size_t)st.st_size, 0) != st.st_size) {
		free(insns);
		r = err_set(err, ERR_UNAVAILABLE, EIO, "read seccomp filter");
		goto out_close;
	}
	prog->filter = insns;
	prog->len = (unsigned short)(st.st_size / sizeof(struct sock_filter));
	r = 0;
out_close:
	close(fd);
	return r;
}

int harden_prepare(struct harden *h, const struct stepbox_config *cfg, struct stepbox_err *err)
{
	(void)cfg; /* the network modes will add socket rules here */
	memset(h, 0, sizeof(*h));
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];
	if (syscall(SYS_capget, &hdr, data) == 0)
		h->can_setpcap = data[0].effective & (1u << CAP_SETPCAP);

	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return err_set(err, ERR_UNAVAILABLE, ENOMEM, "seccomp_init");
	int r = 0;
	/* 32-bit and x32 entry points get the same rules instead of a kill */
	if (seccomp_arch_native() == SCMP_ARCH_X86_64) {
		const uint32_t extra[] = {SCMP_ARCH_X86, SCMP_ARCH_X32};
		for (size_t i = 0; i < 2 && r == 0; i++) {
			r = seccomp_arch_add(ctx, extra[i]);
			if (r == -EEXIST)
				r = 0;
		}
		if (r < 0)
			r = err_set(err, ERR_UNAVAILABLE, -r, "seccomp architectures");
	}
	if (r == 0)
		r = add_rules(ctx, err);
	if (r == 0)
		r = export_bpf(ctx, &h->prog, err);
	seccomp_release(ctx);
	return r;
}

void harden_release(struct harden *h)
{
	free(h->prog.filter);
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

int harden_drop_caps(const struct harden *h)
{
	if (h->can_setpcap) {
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
	 * unreachable: setuid and file capabilities are ignored at exec */
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

int harden_seccomp(const struct harden *h)
{
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &h->prog) < 0 ? -errno : 0;
}
