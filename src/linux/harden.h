/*
 * harden: what every backend applies besides its filesystem rules. The
 * seccomp filters are compiled at build time (tools/seccomp-gen.c) and
 * compose: the child installs each one its policy needs; the child only makes
 * the syscalls.
 */
#ifndef STEPBOX_HARDEN_H
#define STEPBOX_HARDEN_H

#include <linux/filter.h>
#include <stdbool.h>

#include "err.h"
#include "policy.h"

#define HARDEN_MAX_FILTERS 4

/* What the chosen layers need from seccomp besides the base filter. */
struct harden_opts {
	bool traced;                /* stops for stepbox's tracer (--explain without audit) */
	bool traced_lookups;        /* ... at lookups too (the namespaces: ungranted is absent) */
	bool traced_forks;          /* ... and at forks (a tasks limit by RLIMIT_NPROC) */
	bool refuse_sysv;           /* no PID or IPC namespace: the host's IPC and processes */
	bool refuse_unbounded_sysv; /* an IPC namespace whose System V IPC nothing bounds */
	bool supervise;             /* socket addresses and metadata calls go to the supervisor */
	bool supervise_nofd;        /* ... which cannot copy the step's fds (supervise.h) */
	bool supervise_alone;       /* ... and, Landlock alone, access(2) and /dev/shm's calls */
	bool explain_sockets;       /* ... and the sockets the network mode refuses (--explain) */
	bool supervise_guard;       /* ... and every call that makes, writes, moves or removes
				       a name (the protected paths' live layer) */
};

struct harden {
	struct sock_fprog filters[HARDEN_MAX_FILTERS]; /* constant, build-time arrays */
	unsigned n;
	struct sock_fprog notify; /* the supervisor's filter; len 0 when none */
};

/*
 * Pick the seccomp filters for cfg and o. traced must only be set when a
 * tracer is attached: without one SECCOMP_RET_TRACE calls fail with ENOSYS.
 */
void harden_prepare(struct harden *h, const struct stepbox_config *cfg,
		    const struct harden_opts *o);

/*
 * Child-side steps, in the order launch calls them; each returns 0 or -errno
 * and allocates nothing.
 */
int harden_cloexec_fds(void); /* every fd but 0, 1, 2 closes at exec */
int harden_drop_caps(void);
/* Whether the calling thread holds cap (CAP_*) in its effective set. */
bool harden_has_cap(int cap);

/* Whether a seccomp filter is in force on this process (/proc/self/status "Seccomp: 2"). */
bool harden_filtered(void);
/* How many seccomp filters this process is under (0 when none, or unknown). */
int harden_filter_count(void);
/*
 * Whether this process runs under gVisor (runsc): its Sentry answers the
 * calls, not Linux, and says so only through uname (the release 4.4.0 and
 * the version string every gVisor reports). The hints name it: what it
 * lacks (Landlock, seccomp user notification, the mount calls of the
 * namespace layers) is gVisor's, not an old kernel's.
 */
bool harden_gvisor(void);
int harden_no_new_privs(void);
int harden_seccomp(const struct harden *h); /* every filter but the supervisor's */
/*
 * The network proxy, in itself, after its Landlock domain: no capability,
 * no_new_privs, and the calls a proxy and glibc's resolver make
 * (harden_filter_proxy), each other one EPERM. 0 or -errno.
 */
int harden_confine_proxy(void);
/*
 * Install the supervisor's filter with a new listener: its fd (close-on-exec),
 * or -errno. Needs no_new_privs or CAP_SYS_ADMIN in the caller's namespace.
 * With wait_killable the notified task ignores all but fatal signals while the
 * supervisor performs the call for it (Linux 5.19), so a signal cannot make a
 * call that did happen look as if it did not.
 */
int harden_listener(const struct harden *h, bool wait_killable);

/* The names of the syscalls the base filter refuses, for docs and check. */
extern const char *const *const harden_denied_syscalls;
extern const char *const *const harden_sysv_syscalls;

#endif
