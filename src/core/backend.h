/*
 * backend: one interface over every sandbox stepbox can apply, each backend
 * a struct of operations, chosen and described here and nowhere else:
 *   probe     can it enforce cfg on this host? (what auto tries in order);
 *             it fills the layer plan (struct backend_layers), which is all
 *             that run, launch, the report and doctor read of a backend
 *   plan      in stepbox, once the step's folders exist: everything apply
 *             needs (rulesets, the mount plan, the profile: the build's own
 *             struct backend_built, which nothing outside the backend reads)
 *   apply     in the step's own processes, before any of its code runs:
 *             BACKEND_IN_INIT in the step's first process (its new root),
 *             BACKEND_IN_COMMAND in the command's, just before exec
 *   describe  one line for -v and check; missing: what it cannot give here
 *   release   what plan made
 * The Linux build has stacked, landlock, mountns and none (src/linux/layers.c,
 * over landlock.c, mountns.c and supervise.c); the portable build has
 * seatbelt (src/macos/seatbelt.c). Adding a backend is adding its operations to
 * its build's table (backend_table).
 */
#ifndef STEPBOX_BACKEND_H
#define STEPBOX_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "err.h"
#include "grants.h"
#include "policy.h"
#include "strv.h"

/*
 * What the build's backends were told about this host (probed once per
 * command), and what a backend's plan made: each defined with the build's
 * backends (src/linux/layers.h, src/macos/seatbelt.h), opaque here.
 */
struct backend_host;
struct backend_built;

/*
 * The layer plan: what the chosen backend gives here, decided by its probe
 * and read by everything after it. The portable words for it: a layer a
 * build does not have is false there.
 */
struct backend_layers {
	bool ns;             /* namespaces: the step's own /proc, /tmp, /dev/shm, PIDs, IPC;
			      * ungranted paths absent */
	bool userns;         /* ... made through a user namespace (mapping the caller) */
	bool landlock;       /* per-right kernel rules (create, refer, truncate, TCP ports) */
	bool supervise;      /* socket addresses (and, without ns, metadata) go to the supervisor */
	bool supervise_nofd; /* ... which cannot copy the step's fds here (SUPERVISE_NO_GETFD) */
	bool outer_supervisor; /* nested: the sandbox stepbox runs in supervises instead, by
				* its grants (SUPERVISE_NESTED); supervise is false */
	bool refuse_sysv;      /* no IPC namespace: System V IPC refused */
	/* an IPC namespace whose System V limits cannot be set (a user namespace
	 * mapping the caller to itself) and no cgroup: System V IPC refused */
	bool unbounded_sysv;
	/*
	 * no private /dev/shm (Landlock alone) and no grant to write the host's:
	 * the supervisor serves POSIX shared memory and semaphores from a folder
	 * of the step's own (supervise.h)
	 */
	bool serve_shm;
};

/* What a plan is made from (each build reads its own). */
struct backend_input {
	const struct stepbox_config *cfg;
	const struct grants *grants;
	uint64_t tmp_size; /* the private /tmp and /dev/shm, bytes (namespaces) */
	int idmap_userns;  /* root's /etc idmapped (mountns_idmap_userns), or -1 */
	/* network by name on the host's loopback (egress.h): the proxy's port, or 0 */
	unsigned short proxy_port;
	const char *file; /* the command, resolved (Seatbelt's runner execs it) */
	char *const *argv;
	char *const *envp; /* its whole environment */
};

/* Why apply failed in the child: what it could not do, on which path. */
struct backend_failure {
	int errnum;
	bool layers;      /* the namespaces' own step failed: nothing ran */
	bool refused;     /* ... for a cause the probe names (the host refuses them):
			   * the one failure after which auto may take the next backend */
	char detail[256]; /* "cannot ...": what, on which path */
	char hint[160];
};

enum backend_stage {
	BACKEND_IN_INIT,    /* the step's first process, before the command forks */
	BACKEND_IN_COMMAND, /* the command's process, just before exec */
};

struct backend;

struct backend_ops {
	enum policy_backend name;
	int (*probe)(struct backend *b, const struct stepbox_config *cfg, struct stepbox_err *err);
	int (*plan)(struct backend *b, const struct backend_input *in, struct stepbox_err *err);
	/* 0, or -errno with *why filled; allocates nothing BACKEND_IN_COMMAND */
	int (*apply)(const struct backend *b, enum backend_stage stage,
		     struct backend_failure *why);
	void (*describe)(const struct backend *b, char *buf, size_t cap);
	int (*missing)(const struct backend *b, struct strv *out);
	void (*release)(struct backend *b);
};

/* A backend auto passed over for the one in force, and why (its refusal). */
struct backend_tried {
	enum policy_backend name;
	bool at_start; /* it was chosen and failed to start (backend_fall_back) */
	struct stepbox_err why;
};

/* The most auto can try: every backend of the table but none. */
#define BACKEND_TRIED_MAX 3

/* The backend chosen for a step, and what its plan made. */
struct backend {
	const struct backend_ops *ops;
	enum policy_backend name; /* ops->name: never BACKEND_AUTO */
	const struct backend_host *host;
	/* what auto tried before this one, in table order (-v, the report) */
	struct backend_tried tried[BACKEND_TRIED_MAX];
	size_t ntried;
	struct backend_layers layers; /* the probe's: what everything after reads */
	struct backend_built *built;  /* the plan's, the backend's own; NULL before */
};

/* The backends of this build, strongest first (auto's order), NULL-ended. */
extern const struct backend_ops *const backend_table[];

/* name's operations in this build, or NULL. */
const struct backend_ops *backend_find(enum policy_backend name);

/*
 * Choose the backend for cfg on host and fill b (nothing planned yet): the
 * one cfg names, or auto's first whose probe passes. 0, or -errno with err
 * saying what was tried, why each failed, and the one thing that would help.
 */
int backend_choose(const struct stepbox_config *cfg, const struct backend_host *host,
		   struct backend *b, struct stepbox_err *err);

/*
 * auto's one second chance: the backend it chose (b) failed to start for a
 * cause the probe names (the host refused the namespaces: why), so nothing
 * ran. b's failure is recorded in b->tried and b becomes the next backend
 * of the table whose probe passes, made for real this time (host->probe_ns
 * is set). 0, or -errno with err naming every attempt. Only for auto: a
 * backend the policy named that fails is the run's answer (125), and so is
 * any other failure to build a layer the host gives (a mount point raced).
 * b must be released (backend_release) before.
 */
int backend_fall_back(const struct stepbox_config *cfg, struct backend_host *host,
		      struct backend *b, const struct stepbox_err *why, struct stepbox_err *err);

/* b for name's operations, unprobed (ops NULL when not in this build). */
void backend_init(struct backend *b, enum policy_backend name, const struct backend_host *host);

int backend_plan(struct backend *b, const struct backend_input *in, struct stepbox_err *err);
void backend_release(struct backend *b);
void backend_describe(const struct backend *b, char *buf, size_t cap);
int backend_missing(const struct backend *b, struct strv *out);
/* -v's lines: the backend in force, and what this host cannot give. */
void backend_say(FILE *out, const struct backend *b, size_t ngrants);

/*
 * The build's word when auto found nothing (e: each backend's refusal, in
 * table order, n of them): defined with the build's backends.
 */
int backend_none_usable(const struct backend_host *host, const struct stepbox_err *e, size_t n,
			struct stepbox_err *err);

/* From now on a probe tries for real what it would otherwise take on trust
 * (Linux: the namespaces, made in a short-lived child): after a failed start. */
void backend_host_probe_all(struct backend_host *host);

/* The same, for a backend this build does not have. */
int backend_not_here(enum policy_backend name, struct stepbox_err *err);

#endif
