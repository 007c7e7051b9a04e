/*
 * layers: the Linux backends, each a stack of layers over one policy
 * (src/core/backend.h's operations):
 *   stacked   namespaces (mount, PID, IPC; a tmpfs root of binds) + Landlock
 *   landlock  Landlock alone (namespaces unusable here)
 *   mountns   namespaces alone (no Landlock here)
 *   none      no filesystem sandbox (debugging only)
 * and the supervisor (src/linux/supervise.c) with each, for what neither kernel
 * layer decides below Landlock ABI 9.
 */
#ifndef STEPBOX_LAYERS_H
#define STEPBOX_LAYERS_H

#include <stdint.h>
#include <sys/types.h>

#include "backend.h"
#include "landlock.h"
#include "mountns.h"

/* What the Linux backends were told about this host (backend.h). */
struct backend_host {
	struct landlock_features features;
	bool probe_ns;  /* try the namespaces in a short-lived child (check, policy, a fallback) */
	int supervisor; /* supervise_probe's answer, asked once */
	struct stepbox_err supervisor_err;
};

/* What a Linux backend's plan made (backend.h): read by the layers alone. */
struct backend_built {
	struct mountns_plan mountns; /* layers.ns */
	int ruleset;                 /* layers.landlock: the grants' ruleset, or -1 */
	int net_ruleset;             /* layers.landlock, TCP ports: the supervisor's own, or -1 */
	uint32_t restrict_flags;     /* landlock_restrict_self's */
};

/*
 * What launch asks of the planned layers around the clone of the step's
 * first process; each is nothing (0) without the namespaces.
 */
/*
 * The step's Landlock ruleset, under which the supervisor performs its file
 * calls (stacked: with the init's rules for the private mounts, which hold
 * more than the binds do: a pipe in a read grant is not written); -1 for
 * mountns, whose mounts alone bound the calls, as they bound the step.
 */
int layers_fs_ruleset(const struct backend *b);
/* Whether the step's Landlock ruleset lets a name move between folders (ABI 2's refer). */
bool layers_fs_refer(const struct backend *b);
/* The Landlock ruleset the supervisor connects under for the step (a port list), or -1. */
int layers_net_ruleset(const struct backend *b);
/* The clone flags that make b's namespaces. */
int layers_clone_flags(const struct backend *b);
/* In stepbox, once the child exists: its uid and gid maps. 0, or -errno with err. */
int layers_child_born(const struct backend *b, pid_t child, struct stepbox_err *err);
/* The clone of the child failed with errno e: err says why; true when it is the
 * host's refusal of the namespaces (a cause the probe names: auto may fall back). */
bool layers_clone_failed(const struct backend *b, int e, struct stepbox_err *err);
/* The mounts of the child's namespace by what the step may do there (supervisor). */
int layers_read_mounts(const struct backend *b, pid_t child, struct mountns_mounts *mm);
/* The hint for a failure of the namespaces' own step in the child (errnum, detail),
 * where the probe has words for it (mounts refused, a masked /proc); else none. */
void layers_failure_hint(int errnum, const char *detail, struct stepbox_err *err);

/* Probe the kernel for host (STEPBOX_LANDLOCK_ABI applied). 0, or -errno with err. */
int layers_host(struct backend_host *host, bool probe_ns, struct stepbox_err *err);

/* STEPBOX_LANDLOCK_ABI, or NULL when unset or empty. */
const char *layers_abi_cap(void);

/* Whether the namespaces can be made for cfg here: 0, or -errno with err. */
int layers_probe_ns(const struct stepbox_config *cfg, struct stepbox_err *err);

#endif
