/*
 * report: what stepbox prints about a run rather than what it does: the
 * effective policy (stepbox policy), the kernel's features (stepbox check),
 * the environment (stepbox env) and the JSON run report (--report).
 */
#ifndef STEPBOX_REPORT_H
#define STEPBOX_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "backend.h"
#include "env.h"
#include "explain.h"
#include "grants.h"
#include "landlock.h"
#include "launch.h"
#include "limit.h"
#include "persist.h"
#include "policy.h"
#include "protect.h"

/* What this host gives, as text or JSON; whether auto finds a usable backend. */
bool report_check(FILE *out, const struct backend_host *host, const struct stepbox_config *cfg,
		  bool json);

/*
 * Write the run report to path (atomically: a temporary file, then rename),
 * in dir: path's folder, resolved to a canonical path before the run.
 * env gives the dropped variables, by name and reason, never their values;
 * lock how the persistent folder was held and how long the step waited;
 * prot the protected paths' findings ("protected", "unprotected"), or NULL.
 */
int report_run(const char *path, const char *dir, const struct stepbox_config *cfg,
	       char *const *argv, const struct backend *backend, const struct env_result *env,
	       const struct launch_result *res, const struct persist_lock *lock,
	       const struct limit_plan *limits, const struct explain *x,
	       const struct protect_record *prot, struct stepbox_err *err);

#endif
