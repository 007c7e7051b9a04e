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
#include "egress.h"
#include "limit.h"
#include "persist.h"
#include "policy.h"
#include "protect.h"

/* What this host gives, as text or JSON; whether auto finds a usable backend. */
bool report_check(FILE *out, const struct backend_host *host, const struct stepbox_config *cfg,
		  bool json);

/* What a run's report tells. */
struct report_in {
	const struct stepbox_config *cfg;
	char *const *argv;
	const struct backend *backend;
	const struct env_result *env; /* the dropped variables, by name and reason, never values */
	const struct launch_result *res;
	const struct persist_lock *lock; /* how P was held, how long the step waited */
	const struct limit_plan *limits;
	const struct explain *x;           /* --explain's denials, or NULL */
	const struct egress *egress;       /* network by name: the hosts reached, or NULL */
	const struct protect_record *prot; /* the protected paths' findings, or NULL */
};

/*
 * Write the run report to path (atomically: a temporary file, then rename),
 * in dir: path's folder, resolved to a canonical path before the run.
 */
int report_run(const char *path, const char *dir, const struct report_in *in,
	       struct stepbox_err *err);

#endif
