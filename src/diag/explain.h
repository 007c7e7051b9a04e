/*
 * explain: what the sandbox denied during a run (--explain, --report, learn),
 * from either source: the tracer (src/diag/tracer.c), whose failed calls are
 * judged here (a failure counts as the sandbox's only when no grant allows
 * what the call needed; otherwise it was the file's own permissions), or the
 * kernel's audit records (src/diag/audit.c), added as they are. Then the list
 * said, as JSON, or merged into a policy (learn).
 */
#ifndef STEPBOX_EXPLAIN_H
#define STEPBOX_EXPLAIN_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "denial.h"
#include "grants.h"
#include "policy.h"

struct protect_record;

#define EXPLAIN_MAX DENIAL_KEEP /* denials kept; the rest are counted */

struct explain_denial {
	enum denial_op op;
	char program[16];
	pid_t pid;
	char *path;  /* canonical as far as it exists; NULL for network and signals */
	char *grant; /* the folder to grant (--read/--write), or NULL */
	int port;    /* connect, bind: the TCP port; signal: the target pid */
	int errnum;
	unsigned count; /* the same denial, again */
	bool sandbox;   /* false: the file's own permissions, not the sandbox */
	bool moot;      /* a miss of a command's name that then ran from another folder */
	bool cause;     /* the last before the command failed (explain_rank) */
	double last;    /* when last refused (CLOCK_MONOTONIC seconds) */
	/* OP_HOST: why the proxy refused it (denial_host's why), what the name
	 * resolved to, and its sentence; each NULL when not said */
	char *why, *addr, *detail;
	/* a protected path bound read-only: the unprotect entry that would allow it */
	char *unprotect;
};

/* One call the sandbox may have refused, as the tracer read it at its seccomp stop. */
struct explain_call {
	pid_t tid;
	enum denial_op op;
	char path[PATH_MAX];  /* the object, absolute as the tracee saw it; "" for none */
	char path2[PATH_MAX]; /* rename, link: the destination */
	int port;             /* connect, bind: the TCP port, or -1 (UNIX: path); signal: pid */
	const char *program;  /* the process's name, where it is gone by then; else NULL */
	double when;          /* the moment of the call, where it is judged later; else 0 */
};

struct tracer_call;

#define EXPLAIN_REAL_DIRS 8

struct explain {
	const char *source; /* "tracer" or "audit" */
	const struct grants *grants;
	const struct stepbox_config *cfg;
	const struct protect_record *prot; /* the protected paths (their live layer's refusals) */
	/*
	 * Renames and links are the supervisor's (Landlock alone): the tracer
	 * never sees a folder moved, so no folder is remembered as real.
	 */
	bool moves_unseen;
	struct explain_denial *v;
	size_t n, cap;
	size_t omitted;
	struct tracer_call *t;       /* the tracer's calls in progress, by thread */
	unsigned long forks_refused; /* forks the kernel refused with EAGAIN (RLIMIT_NPROC) */
	size_t nt, capt;
	struct strv open_dirs; /* folders every user may search, all the way down (a cache) */
	/*
	 * explain_may_fail: the folders of the last reads let through that no
	 * symlink led to (os.walk and a build read folder by folder, and open
	 * each folder beneath the one before).
	 */
	char *real_dirs[EXPLAIN_REAL_DIRS]; /* on the heap: a run without --explain touches none */
	unsigned real_next;                 /* the slot the next one takes (the oldest) */
};

void explain_init(struct explain *x, const struct grants *g, const struct stepbox_config *cfg);
void explain_release(struct explain *x);

/*
 * The call c failed with errnum (the tracer saw it at its exit): record it
 * when it was the sandbox's (no grant allows what it needed on its path, a
 * port off the lists, a signal across the sandbox), or as the file's own
 * permissions when every path is granted.
 */
void explain_judge(struct explain *x, const struct explain_call *c, int errnum);

/*
 * Whether c, read at its seccomp stop, could fail in a way explain_judge
 * would record: false only for a read of a file or folder that a grant
 * covers (through every symlink) and that every user may read, beneath
 * folders every user may search, outside /proc, /sys and /dev. Then neither
 * the sandbox nor the file's own permissions can refuse it, and the tracer
 * lets the call run without stopping at its exit. Any doubt is true.
 */
bool explain_may_fail(struct explain *x, const struct explain_call *c);

/*
 * Forget the folders explain_may_fail found real and searchable: the step
 * renames or deletes something (the tracer, at the call's seccomp stop), and
 * a folder remembered may be a symlink or another folder by its next read.
 */
void explain_forget_dirs(struct explain *x);

/*
 * The program at path was executed (the tracer saw its exec succeed): the
 * misses of the same name in other folders before it (a PATH search trying
 * ~/.cargo/bin/cargo before /usr/bin/cargo) did not matter. They are listed
 * apart, never offered as the fix, and learn leaves them out.
 */
void explain_ran(struct explain *x, const char *path);

/*
 * Add a denial the kernel reported (audit): path is the object Landlock
 * checked (for a create or delete, the folder); program may be "".
 */
void explain_add(struct explain *x, enum denial_op op, const char *program, pid_t pid,
		 const char *path, int port, double when);

/* The sink the layers report their refusals to: explain_add on x. */
struct denial_sink explain_sink(struct explain *x);

/*
 * The command ended with exit_code: mark the denial most likely its cause,
 * the last refused before it ended (of an exec or a lookup when the command
 * could not be run, 126 or 127), none when it succeeded, timed out or was
 * killed by a signal.
 */
void explain_rank(struct explain *x, int exit_code);

/* The list on stderr, deduplicated, capped, each with the grant that would allow it. */
void explain_print(FILE *out, const struct explain *x);

/*
 * learn: merge into policy (a policy file's JSON, report_policy_json) the
 * narrowest grants that would have allowed what the sandbox denied: the file
 * read or run itself, the folder a file was to be made in, a file of HOME as
 * a home_files entry, the ports. Never a hidden /etc entry, the shared
 * workflow cache, HOME itself or a folder holding keys: those go to refused,
 * each with why. Returns how many entries were added.
 */
struct json_t;
int explain_learn(const struct explain *x, struct json_t *policy, struct strv *refused);

/* The denials as a JSON array (the run report); the caller owns it. */
struct json_t *explain_json(const struct explain *x);

const char *explain_op_name(enum denial_op op);

#endif
