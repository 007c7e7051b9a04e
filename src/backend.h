/*
 * backend: which layers enforce a step here, decided in one place. A backend
 * is a set of layers over one policy:
 *   stacked   namespaces (mount, PID, IPC; a tmpfs root of binds) + Landlock
 *   landlock  Landlock alone (namespaces unusable here)
 *   mountns   namespaces alone (no Landlock here)
 * and the supervisor (src/supervise.c) with each, for what neither kernel
 * layer decides below Landlock ABI 9. auto takes the strongest the host
 * allows; a forced backend that cannot run is SANDBOX_UNAVAILABLE.
 */
#ifndef STEPBOX_BACKEND_H
#define STEPBOX_BACKEND_H

#include <stdbool.h>

#include "err.h"
#include "landlock.h"
#include "policy.h"
#include "strv.h"

struct backend {
	enum policy_backend name; /* never BACKEND_AUTO */
	bool ns;                  /* mount, PID, IPC namespaces and a tmpfs root */
	bool landlock;            /* a Landlock ruleset in the command */
	bool supervise;           /* socket addresses go to the supervisor */
	bool supervise_nofd;      /* ... which cannot copy the step's fds here (SUPERVISE_NO_GETFD) */
	bool refuse_sysv;         /* no IPC namespace: System V IPC refused */
};

/* The layers name stacks (no probing). */
void backend_layers(enum policy_backend name, struct backend *b);

/*
 * Choose the backend for cfg on this host (f: the Landlock probe) and fill b.
 * probe_ns: try the namespaces in a short-lived child (check, policy, doctor);
 * a run skips it, makes them for real, and falls back when they fail. 0, or
 * -errno with err saying what was tried, why each failed, and the one thing
 * that would help.
 */
int backend_choose(const struct stepbox_config *cfg, const struct landlock_features *f,
		   bool probe_ns, struct backend *b, struct stepbox_err *err);

/* Whether the namespaces can be made for cfg here: 0, or -errno with err. */
int backend_probe_ns(const struct stepbox_config *cfg, struct stepbox_err *err);

/* STEPBOX_LANDLOCK_ABI, or NULL when unset or empty. */
const char *backend_abi_cap(void);

/*
 * The protections b does not give on this host, by name (Landlock's feature
 * names for its layer; private-proc, private-tmp, pid-namespace for Landlock
 * alone; tcp and per-right for the namespaces alone), appended to out.
 */
int backend_missing(const struct backend *b, const struct landlock_features *f,
		    struct strv *out);

/* One line for -v: the layers in force. */
void backend_describe(const struct backend *b, const struct landlock_features *f, char *buf,
		      size_t cap);

#endif
