/* limitcfg: see limitcfg.h. */
#include "limitcfg.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

const char *const limitcfg_names[LIMIT_N] = {"memory",     "tasks",  "cpu_s", "file_size",
					     "open_files", "output", "tmp"};

/* PID_MAX_LIMIT, fs.nr_open's ceiling, 30 days; bytes to 2^60 */
static const uint64_t maxima[LIMIT_N] = {1ULL << 60, 4194304,    2592000,   1ULL << 60,
					 1048576,    1ULL << 60, 1ULL << 60};

bool limitcfg_in_bytes(enum limit_kind k)
{
	return k == LIMIT_MEMORY || k == LIMIT_FILE_SIZE || k == LIMIT_OUTPUT || k == LIMIT_TMP;
}

int limitcfg_parse(enum limit_kind kind, const char *text, uint64_t *out)
{
	if (!text || *text < '0' || *text > '9')
		return -EINVAL;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno)
		return -ERANGE;
	unsigned shift = 0;
	if (*end && limitcfg_in_bytes(kind)) {
		const char *units = "KMGT", *u = strchr(units, *end & ~0x20);
		if (!u || !*u)
			return -EINVAL;
		shift = 10 * (unsigned)(u - units + 1);
		end++;
		if (end[0] == 'i' && (end[1] == 'B' || end[1] == 'b'))
			end += 2;
	}
	if (*end)
		return -EINVAL;
	if (v == 0 || v > (maxima[kind] >> shift))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}

void limitcfg_merge(struct limit_config *c, enum limit_kind kind, uint64_t v)
{
	if (!c->v[kind] || v < c->v[kind])
		c->v[kind] = v;
}

int limitcfg_find(const char *name, size_t len)
{
	for (int k = 0; k < LIMIT_N; k++)
		if (strlen(limitcfg_names[k]) == len && strncmp(limitcfg_names[k], name, len) == 0)
			return k;
	return -1;
}

int limitcfg_set_flag(struct limit_config *c, const char *assignment, struct stepbox_err *err)
{
	const char *eq = strchr(assignment, '=');
	int k = eq ? limitcfg_find(assignment, (size_t)(eq - assignment)) : -1;
	if (k < 0)
		return err_set(err, ERR_USAGE, 0,
			       "--limit '%s': expected NAME=VALUE with NAME one of memory, tasks, "
			       "cpu_s, file_size, open_files, output, tmp",
			       assignment);
	uint64_t v;
	if (limitcfg_parse((enum limit_kind)k, eq + 1, &v) < 0)
		return err_set(err, ERR_USAGE, 0, "--limit %s: '%s' is not %s from 1 to %" PRIu64,
			       limitcfg_names[k], eq + 1,
			       limitcfg_in_bytes((enum limit_kind)k)
				       ? "a size (bytes, or with K, M, G, T)"
				       : "a whole number",
			       maxima[k]);
	limitcfg_merge(c, (enum limit_kind)k, v);
	return 0;
}

void limitcfg_human(uint64_t v, enum limit_kind k, char *buf, size_t cap)
{
	static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
	if (!limitcfg_in_bytes(k)) {
		snprintf(buf, cap, "%" PRIu64 "%s", v, k == LIMIT_CPU ? " s" : "");
		return;
	}
	int u = 0;
	double d = (double)v;
	while (d >= 1024 && u < 4) {
		d /= 1024;
		u++;
	}
	if (u == 0 || d == (double)(uint64_t)d)
		snprintf(buf, cap, "%.0f %s", d, units[u]);
	else
		snprintf(buf, cap, "%.1f %s", d, units[u]);
}

int limitcfg_setrlimit(enum limit_kind kind, uint64_t v)
{
	static const int res[LIMIT_N] = {
		[LIMIT_MEMORY] = RLIMIT_DATA,       [LIMIT_TASKS] = RLIMIT_NPROC,
		[LIMIT_CPU] = RLIMIT_CPU,           [LIMIT_FILE_SIZE] = RLIMIT_FSIZE,
		[LIMIT_OPEN_FILES] = RLIMIT_NOFILE,
	};
	if (kind > LIMIT_OPEN_FILES)
		return -EINVAL; /* output and tmp are no rlimit */
	int resource = res[kind];
	/* CPU: SIGXCPU at the limit, SIGKILL a second later */
	struct rlimit r = {(rlim_t)v, (rlim_t)v + (kind == LIMIT_CPU)}, now;
	/* a hard limit already below is stricter: kept (raising it needs CAP_SYS_RESOURCE) */
	if (getrlimit(resource, &now) == 0 && now.rlim_max != RLIM_INFINITY) {
		r.rlim_cur = r.rlim_cur < now.rlim_max ? r.rlim_cur : now.rlim_max;
		r.rlim_max = r.rlim_max < now.rlim_max ? r.rlim_max : now.rlim_max;
	}
	return setrlimit(resource, &r) < 0 ? -errno : 0;
}

const char *limitcfg_signalled(int signal, const uint64_t v[LIMIT_N], char *said, size_t cap)
{
	if (signal == SIGXCPU && v[LIMIT_CPU]) {
		snprintf(said, cap,
			 "the step reached its CPU time limit (%" PRIu64 " s per process)",
			 v[LIMIT_CPU]);
		return "cpu_s";
	}
	if (signal == SIGXFSZ && v[LIMIT_FILE_SIZE]) {
		char h[48];
		limitcfg_human(v[LIMIT_FILE_SIZE], LIMIT_FILE_SIZE, h, sizeof(h));
		snprintf(said, cap, "the step reached its file size limit (%s per file)", h);
		return "file_size";
	}
	return NULL;
}
