/*
 * harden: what every backend applies besides its filesystem rules. The
 * seccomp filters are compiled at build time (tools/seccomp-gen.c); the child
 * only makes the syscalls.
 */
#ifndef STEPBOX_HARDEN_H
#define STEPBOX_HARDEN_H

#include <linux/filter.h>
#include <stdbool.h>

#include "err.h"
#include "policy.h"

struct harden {
	struct sock_fprog prog; /* points at a constant, build-time filter */
};

/*
 * Pick the seccomp filter for cfg; traced: the variant that stops in
 * stepbox's tracer (only when one is attached: without it those calls would
 * fail with ENOSYS). 0 or -errno with err filled.
 */
int harden_prepare(struct harden *h, const struct stepbox_config *cfg, bool traced,
		   struct stepbox_err *err);
void harden_release(struct harden *h);

/*
 * Child-side steps, in the order launch calls them; each returns 0 or -errno
 * and allocates nothing.
 */
int harden_cloexec_fds(void); /* every fd but 0, 1, 2 closes at exec */
int harden_drop_caps(void);
int harden_no_new_privs(void);
int harden_seccomp(const struct harden *h);

/* The names of the syscalls the filter refuses, for docs and --verbose. */
extern const char *const *const harden_denied_syscalls;

#endif
