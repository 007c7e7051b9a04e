/*
 * launch: fork, apply the sandbox in the child in one fixed order, exec,
 * then wait, forwarding signals and enforcing the timeout on the whole tree.
 */
#ifndef STEPBOX_LAUNCH_H
#define STEPBOX_LAUNCH_H

#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "err.h"
#include "grants.h"
#include "explain.h"
#include "harden.h"
#include "limit.h"
#include "supervise.h"

struct launch_spec {
	char *const *argv;                        /* the command */
	char *const *envp;                        /* its whole environment */
	const char *workdir;                      /* canonical; the child starts here */
	const struct backend *backend;            /* chosen and planned: applied in the step */
	const struct supervise_config *supervise; /* the supervisor, or NULL */
	struct explain *explain;                  /* --explain: the tracer's record, or NULL */
	const struct denial_sink *denials; /* --explain: where the layers' refusals go, or NULL */
	const struct harden *harden;
	const struct grants *grants;     /* to explain an exec denial */
	long timeout_s;                  /* 0: none */
	long grace_s;                    /* after a passed-on SIGTERM/INT/HUP, then the tree dies */
	const struct limit_plan *limits; /* joined and set before the command forks */
	/*
	 * Network by name under the namespaces: a UNIX socket over which the
	 * init, in the step's network namespace, sends the proxy its listener
	 * (netns.h); 0 for none (stdin is never one).
	 */
	int net_handoff;
	/* ... and the transparent mode's sockets it makes there and sends too, or NULL */
	const struct egress_transparent *net_transparent;
	/*
	 * A child of stepbox's that is not the step's: the network proxy, or
	 * 0. The tree's end leaves it alone: stopped after (egress_stop), it
	 * writes the hosts reached by the connections it still had.
	 */
	pid_t spare;
	/*
	 * The output limit: write ends that become the command's stdout and
	 * stderr, or -1. launch_run always closes them (its children hold
	 * the only other copies), so the reader sees the end with the tree's.
	 */
	int output[2];
};

struct launch_result {
	int exit_code; /* what stepbox exits with (stepbox(1), EXIT STATUS) */
	int status;    /* the command's own exit status, or -1 */
	int signal;    /* the signal that killed it, or 0 */
	bool timed_out;
	bool graced;          /* killed after --grace, a stop signal having been passed on */
	bool started;         /* the command was exec'd */
	bool ns_refused;      /* the host refused the namespaces, for a cause the probe
			       * names (nothing ran): auto may take the next backend */
	pid_t child;          /* stepbox's child: the init */
	pid_t domain_creator; /* the process that entered the Landlock domain */
	double duration_s;
	long tasks_seen;            /* the step's tasks before stepbox killed it (rlimits), or -1 */
	uint64_t output_dropped;    /* bytes the output limit dropped */
	struct stepbox_err not_run; /* exit 126, 127: why the command could not run */
};

/*
 * Run the command and wait for its whole process tree. Returns 0 once the
 * command started or could not be executed (res says how it ended; for an
 * exec failure, 126 or 127, res->not_run says why), or a negative errno
 * with err filled when the sandbox could not be applied (exit 125).
 */
int launch_run(const struct launch_spec *s, struct launch_result *res, struct stepbox_err *err);

#endif
