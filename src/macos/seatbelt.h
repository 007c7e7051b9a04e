/*
 * seatbelt: the macOS backend. The same policy, grants, environment routing
 * and persistent folder as on Linux (the portable modules), enforced by the
 * Seatbelt profile src/core/sbpl.c writes, which /usr/bin/sandbox-exec applies
 * before it executes the command. POSIX only: it builds and its launcher is
 * tested on Linux too (tests/seatbelt), where there is no sandbox-exec and
 * a run is SANDBOX_UNAVAILABLE.
 *
 * What a Mac cannot give is said, never faked: Seatbelt has no cgroup, PID
 * namespace or private /tmp, so an asked memory, tasks, output or tmp limit
 * is SANDBOX_UNAVAILABLE (cpu_s, file_size and open_files are rlimits); the
 * step's tree is its process group (a setsid'd daemon leaves it); --explain
 * says where the denials are (the unified log) instead of reading them.
 * --report is written in the Linux backends' keys where they mean the same.
 */
#ifndef STEPBOX_SEATBELT_H
#define STEPBOX_SEATBELT_H

#include <stdbool.h>
#include <stdio.h>

#include "backend.h"
#include "env.h"
#include "err.h"
#include "grants.h"
#include "policy.h"
#include "strv.h"

/* Where sandbox-exec is (a test build names a stand-in: tests/seatbelt). */
#ifndef STEPBOX_SANDBOX_EXEC
#define STEPBOX_SANDBOX_EXEC "/usr/bin/sandbox-exec"
#endif

/* What the Seatbelt backend was told about this host (backend.h). */
struct backend_host {
	const char *runner; /* what applies a profile (sandbox-exec) */
};

/* What its plan made (backend.h): the profile and the runner's command line. */
struct backend_built {
	char *profile;           /* the profile, as sandbox-exec -p takes it */
	struct strv runner_argv; /* the runner's command line, the command's after it */
	char *const *envp;       /* the command's environment */
};

struct seatbelt_ctx {
	struct backend_host host;
	struct backend backend; /* chosen and planned by seatbelt_run */
	struct grants grants;
	struct env_result env;
	char *report_dir; /* --report's folder, canonical before the run */
};

/*
 * Build the grants and the environment for cfg (inherited: the caller's),
 * touching nothing on disk: what `policy`, `env` and `run` share. 0, or
 * -errno with err (exit 125).
 */
int seatbelt_prepare(const struct stepbox_config *cfg, char *const *inherited,
		     struct seatbelt_ctx *ctx, struct stepbox_err *err);
void seatbelt_release(struct seatbelt_ctx *ctx);

/*
 * Create the folders, take the workflow cache, run argv under the profile
 * and wait for it (timeout, passed-on signals, --grace), then end its
 * process group. stepbox's exit status: the command's, 124, 126, 127,
 * 128+N, or 125 (said on stderr) when the sandbox could not be applied.
 */
int seatbelt_run(const struct stepbox_config *cfg, struct seatbelt_ctx *ctx, char *const *argv);

/* `stepbox check`: what this backend gives here; whether it can run cfg's limits. */
bool seatbelt_check(FILE *out, const struct stepbox_config *cfg, bool json);

#endif
