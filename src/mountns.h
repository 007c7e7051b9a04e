/*
 * mountns: the backend for kernels without Landlock. A mount and PID
 * namespace (and a user namespace when unprivileged, a network namespace for
 * --net none), a new root on tmpfs where each grant is bind-mounted with the
 * flags its access allows, and nothing else. What is not granted does not
 * exist inside (ENOENT); writes to read-only grants fail with EROFS.
 */
#ifndef STEPBOX_MOUNTNS_H
#define STEPBOX_MOUNTNS_H

#include <stdbool.h>
#include <sys/types.h>

#include "err.h"
#include "grants.h"
#include "policy.h"

struct mountns_plan {
	int clone_flags;     /* CLONE_NEW* for this caller and policy */
	bool userns;         /* unprivileged: map our uid and gid */
	uid_t uid;           /* the caller's, mapped to itself */
	gid_t gid;
	const struct grants *grants;
};

/* Decide the namespaces for cfg and the calling user. */
void mountns_plan(struct mountns_plan *p, const struct stepbox_config *cfg,
		  const struct grants *g);

/*
 * Whether this kernel lets the caller create the namespaces (tried in a
 * short-lived child). 0, or a negative errno with err explaining what to
 * change (sysctls, AppArmor) in its hint.
 */
int mountns_probe(const struct mountns_plan *p, struct stepbox_err *err);

/* Fill err for namespaces that failed with errno e: what, and what to change. */
int mountns_unavailable(const struct mountns_plan *p, int e, struct stepbox_err *err);

/* In the parent, once the child exists: write its uid and gid maps. */
int mountns_write_maps(const struct mountns_plan *p, pid_t child, struct stepbox_err *err);

/*
 * In the cloned child (PID 1 of the new namespace), after the maps are
 * written: build the new root and pivot into it. Allocates, so it runs before
 * anything that needs a clean child. 0, or a negative errno and *what names
 * the step and *path the grant that failed (both static or from the plan).
 */
int mountns_setup_root(const struct mountns_plan *p, const char **what, const char **path);

#endif
