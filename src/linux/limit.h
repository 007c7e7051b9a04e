/*
 * limit: what a step may consume, enforced by the strongest mechanism the
 * host offers, and the word when a limit ends or stops a step.
 *
 * A cgroup of the step's own bounds the whole tree (memory, tasks): a child
 * of a cgroup2 hierarchy stepbox may write (root's, or a delegated one that
 * stepbox's process is alone in), else of the cgroup v1 pids and memory
 * hierarchies it may write (root). Without one, rlimits: RLIMIT_NPROC counts
 * the step's tasks inside its user namespace (Linux 5.14 counts per user
 * namespace), or the user's tasks without one; RLIMIT_DATA bounds each
 * process. CPU time, file size and open files are rlimits everywhere; the
 * output cap is a pipe stepbox reads; the private /tmp and /dev/shm are
 * size-capped tmpfs. A limit that was asked for and cannot be enforced here
 * is SANDBOX_UNAVAILABLE; a default that cannot be is said (check, -v, the
 * report) and skipped.
 */
#ifndef STEPBOX_LIMIT_H
#define STEPBOX_LIMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"
#include "limitcfg.h"

enum limit_how {
	LIMIT_OFF,        /* neither asked nor defaulted */
	LIMIT_UNENFORCED, /* a default this host cannot enforce (why says so) */
	LIMIT_CGROUP,     /* the step's cgroup: the whole tree */
	LIMIT_NPROC_NS,   /* RLIMIT_NPROC in the step's own user namespace */
	LIMIT_NPROC_USER, /* RLIMIT_NPROC over all the user's tasks */
	LIMIT_RLIMIT,     /* an rlimit of each process */
	LIMIT_PIPE,       /* stepbox passes the output through */
	LIMIT_TMPFS,      /* the size of the private tmpfs */
};

struct limit_plan {
	uint64_t v[LIMIT_N];
	bool asked[LIMIT_N];
	enum limit_how how[LIMIT_N];
	char why[256];  /* why the cgroup is not used, when it is not */
	int cg_version; /* 0 (none), 1 or 2 */
	/* the step's cgroup: one folder (v2), or pids and memory (v1); NULL */
	char *cg_dir[2];
	int cg_procs[2]; /* where a task joins: cgroup.procs (v2), tasks (v1); -1 */
	int cg_fd;       /* cgroup2: the step's folder, for CLONE_INTO_CGROUP; -1 */
	/*
	 * The caller's own cgroup folders, where a step reads its limits (node,
	 * the JVM): cgroup2's, v1's memory and cpu ones; NULL for a hierarchy's
	 * root (its folder lists every other service's) or none.
	 */
	char *own[3];
	uint64_t others;        /* LIMIT_NPROC_USER: the user's tasks when the step started */
	uint64_t forks_refused; /* RLIMIT_NPROC: forks refused, as the tracer saw them */
	/* filled by limit_finish */
	const char *reached; /* the limit the step reached, by name, or NULL */
	char said[256];      /* stepbox's sentence about it */
	uint64_t output_dropped;
};

/*
 * Decide how each limit is enforced for a step under these layers. With
 * create, the step's cgroup is made and set (run); without, it is only
 * probed (check, policy). userns: the step gets a user namespace of its own;
 * private_tmp: it gets a private /tmp; mountinfo: the text of
 * /proc/self/mountinfo where the caller has read it, else NULL (read here).
 * 0, or -errno with err when an asked limit cannot be enforced here.
 * limit_release undoes what was made.
 */
int limit_plan(const struct limit_config *c, bool userns, bool private_tmp, bool create,
	       const char *mountinfo, struct limit_plan *p, struct stepbox_err *err);

/*
 * limit_join moves pid (0: the caller) into the step's cgroup, before the
 * step's command is forked (unless the init was born there:
 * limit_cgroup_fd). A process's move takes a lock over every thread group
 * of the host (forks wait while it is held) after an RCU grace period
 * (about a millisecond here): on cgroup v1 the single-threaded init moves
 * itself instead (its one thread, through tasks, which takes neither:
 * limit_joins_itself); on cgroup2 stepbox moves the init while it sets
 * itself up. limit_enter sets the
 * rlimits in the child, as late as it can (an open_files limit must not
 * refuse the sandbox's own descriptors). Allocate nothing. 0 or -errno.
 */
int limit_join(const struct limit_plan *p, pid_t pid);
bool limit_joins_itself(const struct limit_plan *p);
int limit_enter(const struct limit_plan *p);

/*
 * Remove the cgroups beside the step's that steps killed with their stepbox
 * left behind (SIGKILL leaves no time to remove them): nothing depends on
 * it, so stepbox does it while the init sets itself up.
 */
void limit_sweep(const struct limit_plan *p);

/*
 * cgroup2: the step's cgroup folder, for clone3's CLONE_INTO_CGROUP (Linux
 * 5.7), which spares the move into it (an RCU grace period, about half a
 * millisecond); -1 on cgroup v1 or without a cgroup.
 */
int limit_cgroup_fd(const struct limit_plan *p);

/*
 * The tasks stepbox counts for a limit it cannot read back (rlimits): the
 * most of looks counts 25 ms apart, or -1 where no rlimit counts tasks
 * (looks 0: 0 where one does).
 */
long limit_count_tasks(const struct limit_plan *p, pid_t init, bool pidns, int looks);

/*
 * After the tree is gone: which limit the step reached, from the cgroup's
 * events, the exit code (128+SIGXCPU, 128+SIGXFSZ), the tasks counted
 * before stepbox killed it (or -1) and the largest process's peak RSS; said
 * on stderr unless quiet.
 */
void limit_finish(struct limit_plan *p, int exit_code, long tasks_seen, long maxrss_kb, bool quiet);

/* Kill what is left in the step's cgroup, remove it, and free the plan. */
void limit_release(struct limit_plan *p);

/* A limit's value for people: "512 MiB", "4096", "10 s". */
void limit_value(const struct limit_plan *p, enum limit_kind k, char *buf, size_t cap);
/* One line per limit for check and -v: the value and how it is enforced. */
void limit_describe(const struct limit_plan *p, char *buf, size_t cap);
struct json_t *limit_json(const struct limit_plan *p);

/*
 * The output cap: a pipe for the command's stdout and stderr (fds[0] read,
 * fds[1] write), copied to stepbox's own until the cap, then a marker.
 */
struct limit_pump;
int limit_pump_start(struct limit_pump **out, int rd_out, int rd_err, uint64_t cap,
		     struct stepbox_err *err);
/* Wait for both pipes' end; the bytes dropped. NULL is a no-op. */
uint64_t limit_pump_stop(struct limit_pump *pm);

#endif
