/*
 * layers: the Linux backends, each a stack of layers over one policy
 * (src/backend.h's operations):
 *   stacked   namespaces (mount, PID, IPC; a tmpfs root of binds) + Landlock
 *   landlock  Landlock alone (namespaces unusable here)
 *   mountns   namespaces alone (no Landlock here)
 *   none      no filesystem sandbox (debugging only)
 * and the supervisor (src/supervise.c) with each, for what neither kernel
 * layer decides below Landlock ABI 9.
 */
#ifndef STEPBOX_LAYERS_H
#define STEPBOX_LAYERS_H

#include "backend.h"

/* Probe the kernel for host (STEPBOX_LANDLOCK_ABI applied). 0, or -errno with err. */
int layers_host(struct backend_host *host, bool probe_ns, struct stepbox_err *err);

/* STEPBOX_LANDLOCK_ABI, or NULL when unset or empty. */
const char *layers_abi_cap(void);

/* Whether the namespaces can be made for cfg here: 0, or -errno with err. */
int layers_probe_ns(const struct stepbox_config *cfg, struct stepbox_err *err);

#endif
