/*
 * limitcfg: the limits a policy and the flags ask for (memory, tasks, CPU
 * seconds, file size, open files, output, private tmpfs size): their names,
 * units, parsing and how they read for people. Portable: the Linux
 * enforcement is src/linux/limit.c, the Seatbelt backend's is src/macos/seatbelt.c.
 */
#ifndef STEPBOX_LIMITCFG_H
#define STEPBOX_LIMITCFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

enum limit_kind {
	LIMIT_MEMORY,     /* bytes */
	LIMIT_TASKS,      /* processes and threads */
	LIMIT_CPU,        /* CPU seconds, per process */
	LIMIT_FILE_SIZE,  /* bytes, per file written */
	LIMIT_OPEN_FILES, /* per process */
	LIMIT_OUTPUT,     /* bytes of stdout and stderr passed through */
	LIMIT_TMP,        /* bytes of each private tmpfs (/tmp, /dev/shm, HOME) */
	LIMIT_N
};

#define LIMIT_DEFAULT_TASKS 4096

/* What the policy and the flags asked (0: not asked). */
struct limit_config {
	uint64_t v[LIMIT_N];
	bool none; /* "limits": "none" / --no-limits: no defaults */
};

extern const char *const limitcfg_names[LIMIT_N];

/* The limit named by the len bytes of name, or -1. */
int limitcfg_find(const char *name, size_t len);
/* Whether kind counts bytes (and takes K, M, G, T). */
bool limitcfg_in_bytes(enum limit_kind kind);
/* Parse "512M", "2G", "4096" for kind (suffixes only for byte limits). */
int limitcfg_parse(enum limit_kind kind, const char *text, uint64_t *out);
/* --limit NAME=VALUE: the smaller of two values of one limit wins. */
int limitcfg_set_flag(struct limit_config *c, const char *assignment, struct stepbox_err *err);
/* A value from either source: the smaller stands. */
void limitcfg_merge(struct limit_config *c, enum limit_kind kind, uint64_t v);

/* A value for people: "512 MiB", "4096", "10 s". */
void limitcfg_human(uint64_t v, enum limit_kind kind, char *buf, size_t cap);

/*
 * Set kind's rlimit (memory: RLIMIT_DATA, tasks: RLIMIT_NPROC, cpu_s,
 * file_size, open_files; -EINVAL for the others) to v in this process: soft
 * v, hard v (CPU: a second more, SIGXCPU before SIGKILL); a lower hard limit
 * already there stands. 0 or -errno.
 */
int limitcfg_setrlimit(enum limit_kind kind, uint64_t v);

/*
 * A step killed by signal under the limits v (0: not set): the limit it
 * reached, by name, with stepbox's sentence in said; NULL when no limit
 * sends that signal (SIGXCPU: cpu_s, SIGXFSZ: file_size).
 */
const char *limitcfg_signalled(int signal, const uint64_t v[LIMIT_N], char *said, size_t cap);
#endif
