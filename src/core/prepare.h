/*
 * prepare: what every command builds from a policy before anything is made,
 * the same in both builds: the grants (as the host's layers can give them),
 * the step's environment, and the report's folder. run (Linux) and
 * seatbelt (macOS) fill in what only their host knows first (a grants_host
 * of their layers); the rest is here, once.
 */
#ifndef STEPBOX_PREPARE_H
#define STEPBOX_PREPARE_H

#include "env.h"
#include "err.h"
#include "grants.h"
#include "policy.h"

/* Where a prepared step's parts go; each is released by its owner on failure too. */
struct prepare_out {
	struct grants *grants;
	struct env_result *env;
	char **report_dir; /* --report's folder, canonical before the run; NULL without one */
};

/*
 * Fill host's fields that read the caller (the current folder, HOME,
 * SANDBOX_EXTRA_SYSTEM_PATHS, AGENT_BROWSER_EXECUTABLE_PATH, whether /etc's
 * secrets are hidden, unless the caller decided it: hide_etc < 0 asks),
 * then build the grants, the environment (inherited: the caller's) and the
 * report's folder, touching nothing on disk. 0, or -errno with err.
 */
int prepare_step(const struct stepbox_config *cfg, struct grants_host *host, int hide_etc,
		 char *const *inherited, const struct prepare_out *out, struct stepbox_err *err);

#endif
