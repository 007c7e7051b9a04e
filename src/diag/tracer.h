/*
 * tracer: the --explain source that needs no privilege. The seccomp filter
 * stops the calls Landlock and the network policy govern
 * (SECCOMP_RET_TRACE, and nothing else stops); stepbox, outside the
 * sandbox, traces the step's tree, reads each such call at its seccomp stop
 * with PTRACE_GET_SYSCALL_INFO (architecture-independent) and its paths from
 * the tracee's memory, and at the call's exit hands a failure to
 * explain_judge. docs/diagnostics.md says what it costs.
 */
#ifndef STEPBOX_TRACER_H
#define STEPBOX_TRACER_H

#include <stdbool.h>
#include <sys/types.h>

#include "explain.h"

/*
 * How long the tracer keeps looking for the next stop before it sleeps: a
 * file-heavy step stops again within microseconds, and a sleep and its
 * wake-up cost more than the looks (bench/: about a fifth of the tracer's
 * cost on the file-heavy workload). A step that computes costs at most
 * this much of stepbox's CPU time per stop.
 */
#define TRACER_SPIN_S 50e-6
/* The longest the tracer serves stops before the wait loop looks at its deadlines and signals. */
#define TRACER_SLICE_S 10e-3

/* Trace pid and everything it starts. 0 or -errno. */
int tracer_seize(pid_t pid);

/*
 * Whether this process may trace a child of its own here: 0, or -errno
 * (Yama's ptrace_scope 3, a container's seccomp profile refusing ptrace).
 */
int tracer_traceable(void);

/*
 * Handle a wait status of a traced task, judging failed calls into x (and
 * forgetting a task that ended). Returns true when it was a ptrace stop (the
 * task was resumed), false when the task ended or was not traced.
 */
bool tracer_stop(struct explain *x, pid_t pid, int status);

#endif
