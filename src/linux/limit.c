/* limit: see limit.h. */
#include "limit.h"
#include "strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harden.h"
#include "path.h"

/* ---- the step's cgroup ---- */

/* Read a small file whole; its length or -errno. */
static ssize_t slurp(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, cap - 1);
	int e = errno;
	close(fd);
	if (n < 0)
		return -e;
	buf[n] = '\0';
	return n;
}

static int put(const char *dir, const char *file, const char *value)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, value, strlen(value));
	int e = errno;
	close(fd);
	return n == (ssize_t)strlen(value) ? 0 : -(n < 0 ? e : EIO);
}

/* Whether the space-separated list holds word. */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || strchr(" ,\n", p[-1])) && strchr(" ,\n", p[n]))
			return true;
	return false;
}

/* What the hierarchies and stepbox's own place in them are. */
struct cg_host {
	char *v2;                 /* the cgroup2 folder stepbox is in, or NULL */
	char *v2_mount;           /* its mount point */
	char *v1[3];              /* pids, memory, cpu: the v1 folders it is in */
	bool root_v2, root_v1[3]; /* each of them is its hierarchy's root */
};

static const char *const v1_names[3] = {"pids", "memory", "cpu"};

/*
 * A hierarchy's mount point joined with stepbox's path in it (mountinfo's
 * root): allocated, or NULL when the mount does not show it.
 */
static char *place(const char *mnt, const char *root, const char *own)
{
	size_t rl = strlen(root);
	if (strcmp(root, "/") == 0)
		rl = 0;
	else if (strncmp(own, root, rl) != 0 || (own[rl] && own[rl] != '/'))
		return NULL; /* outside what this mount shows */
	const char *rest = strcmp(own + rl, "/") == 0 ? "" : own + rl;
	return strlen(mnt) + strlen(rest) < PATH_MAX ? strv_fmt("%s%s", mnt, rest) : NULL;
}

static void cg_host_release(struct cg_host *h)
{
	free(h->v2);
	free(h->v2_mount);
	for (int i = 0; i < 3; i++)
		free(h->v1[i]);
}

static void cg_find(struct cg_host *h, const char *mountinfo)
{
	memset(h, 0, sizeof(*h));
	const char *own_v2 = NULL, *own_v1[3] = {NULL, NULL, NULL};
	char *cg = path_read_file("/proc/self/cgroup", 64u << 20), *save = NULL;
	for (char *line = cg ? strtok_r(cg, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2 || c2[1] != '/' || strstr(c2, "/.."))
			continue;
		*c1 = *c2 = '\0';
		if (strcmp(line, "0") == 0 && c1[1] == '\0')
			own_v2 = c2 + 1;
		for (int i = 0; i < 3; i++)
			if (!own_v1[i] && has_word(c1 + 1, v1_names[i]))
				own_v1[i] = c2 + 1;
	}
	h->root_v2 = own_v2 && strcmp(own_v2, "/") == 0;
	for (int i = 0; i < 3; i++)
		h->root_v1[i] = own_v1[i] && strcmp(own_v1[i], "/") == 0;
	char *mi = NULL;
	if (own_v2 || own_v1[0] || own_v1[1] || own_v1[2])
		mi = mountinfo ? strdup(mountinfo)
			       : path_read_file("/proc/self/mountinfo", 64u << 20);
	for (char *line = mi ? strtok_r(mi, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct path_mount m;
		if (!path_mount_fields(line, &m) || !m.fstype || !m.super)
			continue;
		if (strcmp(m.fstype, "cgroup2") == 0 && !h->v2 && own_v2) {
			h->v2 = place(m.mnt, m.root, own_v2);
			if (h->v2 && !(h->v2_mount = strdup(m.mnt))) {
				free(h->v2);
				h->v2 = NULL;
			}
		} else if (strcmp(m.fstype, "cgroup") == 0) {
			for (int i = 0; i < 3; i++)
				if (!h->v1[i] && own_v1[i] && has_word(m.super, v1_names[i]))
					h->v1[i] = place(m.mnt, m.root, own_v1[i]);
		}
	}
	free(mi);
	free(cg);
}

/* Whether the only process in the cgroup folder dir is stepbox. */
static bool alone_in(const char *dir)
{
	char path[PATH_MAX + 16], buf[256];
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if (slurp(path, buf, sizeof(buf)) <= 0)
		return false;
	char *end;
	long pid = strtol(buf, &end, 10);
	return pid == (long)getpid() && (*end == '\0' || (*end == '\n' && end[1] == '\0'));
}

static bool writable(const char *dir, const char *file)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return access(path, W_OK) == 0;
}

/*
 * Where the step's cgroup2 folder goes: beneath <mount>/stepbox for root
 * (the hierarchy's root takes no part in the no-internal-process rule), or
 * beneath stepbox's own folder when that is delegated to it and holds no
 * other process (stepbox moves itself into a leaf first). parent gets the
 * folder whose subtree_control must enable the controllers.
 */
static bool v2_parent(const struct cg_host *h, const char *need, char *parent, bool *move_self,
		      char *why, size_t cap)
{
	char ctl[PATH_MAX + 32], buf[512];
	snprintf(ctl, sizeof(ctl), "%s/cgroup.controllers", h->v2_mount);
	if (slurp(ctl, buf, sizeof(buf)) < 0 || !has_word(buf, "pids") ||
	    (strstr(need, "memory") && !has_word(buf, "memory"))) {
		snprintf(why, cap, "the cgroup2 hierarchy has no %s controller", need);
		return false;
	}
	*move_self = false;
	if (geteuid() == 0 && writable(h->v2_mount, "cgroup.subtree_control")) {
		return snprintf(parent, PATH_MAX, "%s/stepbox", h->v2_mount) < PATH_MAX;
	}
	if (writable(h->v2, "cgroup.procs") && writable(h->v2, "cgroup.subtree_control") &&
	    writable(h->v2, ".")) {
		if (!alone_in(h->v2)) {
			snprintf(why, cap,
				 "stepbox's cgroup '%.60s' is delegated but holds other "
				 "processes",
				 h->v2 + strlen(h->v2_mount));
			return false;
		}
		snprintf(parent, PATH_MAX, "%s", h->v2);
		*move_self = true;
		return true;
	}
	snprintf(why, cap, "stepbox's cgroup is not delegated to it");
	return false;
}

/*
 * The cgroups of steps whose stepbox was killed (SIGKILL leaves no time to
 * remove them; its init ends the tree, but from inside): each named
 * PREFIXPID whose pid is gone is removed. rmdir refuses a cgroup that still
 * holds a task, and a pid that lives again only keeps its folder a while.
 */
static void sweep(const char *parent, const char *prefix)
{
	DIR *d = opendir(parent);
	struct dirent *e;
	size_t n = strlen(prefix);
	while (d && (e = readdir(d))) {
		char *end;
		if (strncmp(e->d_name, prefix, n) != 0 || e->d_name[n] < '1' || e->d_name[n] > '9')
			continue;
		long pid = strtol(e->d_name + n, &end, 10);
		if (*end || pid <= 0 || pid > INT_MAX || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		char dir[PATH_MAX];
		if (snprintf(dir, sizeof(dir), "%s/%s", parent, e->d_name) < (int)sizeof(dir))
			rmdir(dir);
	}
	if (d)
		closedir(d);
}

static int mkdir_leaf(const char *dir)
{
	if (mkdir(dir, 0755) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	/* a stepbox that had this pid died without removing it: empty, so stale */
	if (rmdir(dir) < 0 || mkdir(dir, 0755) < 0)
		return -errno;
	return 0;
}

/* Where a step's cgroup would go: the hierarchy (2, 1; 0 for none). */
struct cg_place {
	int version;
	char parent[PATH_MAX]; /* cgroup2: whose subtree_control enables the controllers */
	bool move_self;        /* cgroup2 delegated: stepbox moves into a leaf first */
};

static int cg_v2_make(struct limit_plan *p, const struct cg_host *h, const char *need,
		      const struct cg_place *at)
{
	char leaf[PATH_MAX + 32], pid[32];
	const char *parent = at->parent;
	bool move_self = at->move_self;
	int r = 0;
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	if (move_self) {
		/* no process may stay where controllers are enabled for children */
		snprintf(leaf, sizeof(leaf), "%s/stepbox-supervisor", parent);
		if ((mkdir(leaf, 0755) < 0 && errno != EEXIST) ||
		    (r = put(leaf, "cgroup.procs", pid)) < 0)
			r = r ? r : -errno;
	} else if (mkdir(parent, 0755) < 0 && errno != EEXIST) {
		r = -errno;
	} else {
		r = put(h->v2_mount, "cgroup.subtree_control", need);
	}
	if (r == 0)
		r = put(parent, "cgroup.subtree_control", need);
	if (r == 0 && !(p->cg_dir[0] = strv_fmt("%s/step-%s", parent, pid)))
		r = -ENOMEM;
	if (r == 0)
		r = mkdir_leaf(p->cg_dir[0]);
	if (r < 0) {
		snprintf(p->why, sizeof(p->why), "cannot make a cgroup beneath '%.80s': %s", parent,
			 strerror(-r));
		free(p->cg_dir[0]);
		p->cg_dir[0] = NULL;
		return r;
	}
	return 0;
}

static int cg_v1_make(struct limit_plan *p, const struct cg_host *h, bool mem)
{
	for (int i = 0; i < (mem ? 2 : 1); i++) {
		p->cg_dir[i] = strv_fmt("%s/stepbox-%ld", h->v1[i], (long)getpid());
		int r = p->cg_dir[i] ? mkdir_leaf(p->cg_dir[i]) : -ENOMEM;
		if (r < 0) {
			snprintf(p->why, sizeof(p->why), "cannot make '%.100s': %s",
				 p->cg_dir[i] ? p->cg_dir[i] : h->v1[i], strerror(-r));
			free(p->cg_dir[i]);
			p->cg_dir[i] = NULL;
			return r;
		}
	}
	return 0;
}

static void cg_remove(struct limit_plan *p);

static int cg_set(struct limit_plan *p)
{
	char v[32];
	int r = 0;
	const char *pids = p->cg_dir[0], *mem = p->cg_version == 2 ? p->cg_dir[0] : p->cg_dir[1];
	if (p->v[LIMIT_TASKS]) {
		snprintf(v, sizeof(v), "%" PRIu64, p->v[LIMIT_TASKS]);
		r = put(pids, "pids.max", v);
	}
	if (r == 0 && p->v[LIMIT_MEMORY] && mem) {
		snprintf(v, sizeof(v), "%" PRIu64, p->v[LIMIT_MEMORY]);
		if (p->cg_version == 2) {
			r = put(mem, "memory.max", v);
			/* no swap beyond the limit, and an OOM ends the step as a whole */
			if (r == 0 && (r = put(mem, "memory.swap.max", "0")) == -ENOENT)
				r = 0; /* no swap accounting */
			if (r == 0 && (r = put(mem, "memory.oom.group", "1")) == -ENOENT)
				r = 0; /* before Linux 4.19 */
		} else {
			r = put(mem, "memory.limit_in_bytes", v);
			if (r == 0 && (r = put(mem, "memory.memsw.limit_in_bytes", v)) == -ENOENT)
				r = 0; /* no swap accounting */
		}
	}
	for (int i = 0; r == 0 && i < 2; i++) {
		if (!p->cg_dir[i])
			continue;
		char path[PATH_MAX + 16];
		snprintf(path, sizeof(path), "%s/%s", p->cg_dir[i],
			 p->cg_version == 1 ? "tasks" : "cgroup.procs");
		p->cg_procs[i] = open(path, O_WRONLY | O_CLOEXEC);
		if (p->cg_procs[i] < 0)
			r = -errno;
	}
	if (r == 0 && p->cg_version == 2 &&
	    (p->cg_fd = open(p->cg_dir[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		r = -errno;
	if (r < 0)
		snprintf(p->why, sizeof(p->why), "cannot set the limits of '%.80s': %.40s",
			 p->cg_dir[0], strerror(-r));
	return r;
}

/* Where a step's cgroup would be made (at), making nothing; why says what is missing. */
static void cg_probe(const struct cg_host *h, const char *need, bool mem, struct cg_place *at,
		     char *why, size_t cap)
{
	at->version = 0;
	if (h->v2 && v2_parent(h, need, at->parent, &at->move_self, why, cap)) {
		at->version = 2;
		return;
	}
	for (int i = 0; i < (mem ? 2 : 1); i++) {
		if (h->v1[i] && writable(h->v1[i], "."))
			continue;
		/* a cgroup2 without the controllers says less than a v1 that has them */
		if (h->v1[i])
			snprintf(why, cap,
				 "stepbox may not make cgroups here (root may, or a "
				 "delegated cgroup2)");
		else if (!h->v2)
			snprintf(why, cap, "no cgroup hierarchy with the %s controller",
				 i ? "memory" : "pids");
		return;
	}
	at->version = 1;
}

static uint64_t ram_bytes(void)
{
	struct sysinfo si;
	if (sysinfo(&si) < 0)
		return 0;
	return (uint64_t)si.totalram * si.mem_unit;
}

/*
 * The tasks a procfs lists, threads counted as RLIMIT_NPROC counts them (a
 * zombie lists no task, and still counts until it is reaped); only uid's
 * unless uid is -1.
 */
static long count_tasks(const char *proc, uid_t uid)
{
	DIR *d = opendir(proc);
	if (!d)
		return -1;
	long n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		char task[400];
		struct stat st;
		snprintf(task, sizeof(task), "%s/%.256s/task", proc, de->d_name);
		if (stat(task, &st) == 0 && (uid == (uid_t)-1 || st.st_uid == uid))
			n += st.st_nlink > 3 ? (long)st.st_nlink - 2 : 1;
		else if (uid == (uid_t)-1)
			n++; /* gone meanwhile, or a zombie's folder: it was there */
	}
	closedir(d);
	return n;
}

/* Every task of the host, as /proc/loadavg counts them ("0.00 0.01 0.05 1/234 5678"), or -1. */
static long host_tasks(void)
{
	char buf[128];
	if (slurp("/proc/loadavg", buf, sizeof(buf)) <= 0)
		return -1;
	const char *slash = strchr(buf, '/');
	char *end;
	long n = slash ? strtol(slash + 1, &end, 10) : -1;
	return slash && end != slash + 1 && n > 0 ? n : -1;
}

/* the values asked for, and the defaults where none was */
static void plan_values(const struct limit_config *c, bool private_tmp, struct limit_plan *p)
{
	memset(p, 0, sizeof(*p));
	p->cg_procs[0] = p->cg_procs[1] = p->cg_fd = -1;
	for (int k = 0; k < LIMIT_N; k++) {
		p->v[k] = c->v[k];
		p->asked[k] = c->v[k] != 0;
	}
	if (!c->none) {
		uint64_t ram = ram_bytes();
		if (!p->v[LIMIT_TASKS])
			p->v[LIMIT_TASKS] = LIMIT_DEFAULT_TASKS;
		/* what no ordinary build reaches, and a quarter of the host left */
		if (!p->v[LIMIT_MEMORY])
			p->v[LIMIT_MEMORY] = ram / 4 * 3;
		if (!p->v[LIMIT_TMP] && private_tmp)
			p->v[LIMIT_TMP] = ram / 4;
	}
}

/* the caller's own cgroup folders, and the step's cgroup if it needs one */
static void plan_cgroup(struct limit_plan *p, bool mem, bool tasks, bool create,
			const char *mountinfo)
{
	struct cg_host h;
	cg_find(&h, mountinfo);
	/* the caller's own folders the step reads its limits in: never a root's */
	if (h.v2 && !h.root_v2)
		p->own[0] = strdup(h.v2);
	for (int i = 1; i < 3; i++)
		if (h.v1[i] && !h.root_v1[i])
			p->own[i] = strdup(h.v1[i]);
	if (mem || tasks) {
		/* the cgroup takes both; a tree's pids limit is its fork-bomb guard */
		const char *need = mem ? "+pids +memory" : "+pids";
		struct cg_place at;
		cg_probe(&h, need, mem, &at, p->why, sizeof(p->why));
		p->cg_version = at.version;
		if (at.version && create) {
			int r = at.version == 2 ? cg_v2_make(p, &h, need, &at)
						: cg_v1_make(p, &h, mem);
			if (r == 0)
				r = cg_set(p);
			if (r < 0) { /* why says what failed: rlimits, then */
				cg_remove(p);
				p->cg_version = 0;
			}
		}
	}
	cg_host_release(&h);
}

static int plan_tasks(struct limit_plan *p, bool userns, struct stepbox_err *err)
{
	if (p->cg_version)
		p->how[LIMIT_TASKS] = LIMIT_CGROUP;
	else if (geteuid() != 0 && userns)
		p->how[LIMIT_TASKS] = LIMIT_NPROC_NS;
	else if (geteuid() != 0)
		p->how[LIMIT_TASKS] = LIMIT_NPROC_USER;
	else if (p->asked[LIMIT_TASKS]) {
		err_set(err, ERR_UNAVAILABLE, 0,
			"limits: tasks %" PRIu64 " cannot be enforced here: %s, and root's "
			"processes are not counted by RLIMIT_NPROC",
			p->v[LIMIT_TASKS], p->why);
		err_hint(err, "mount a cgroup hierarchy with the pids controller, or drop "
			      "the tasks limit");
		limit_release(p);
		return -EPERM;
	} else {
		p->how[LIMIT_TASKS] = LIMIT_UNENFORCED;
	}
	return 0;
}

static int plan_rlimits(struct limit_plan *p, bool mem, struct stepbox_err *err)
{
	/*
	 * Per process, RLIMIT_DATA counts address space reserved, not memory
	 * used (a sanitizer's shadow, a runtime's arenas): asked for, it is
	 * that; as a default it would break such programs, so it is not.
	 */
	if (mem)
		p->how[LIMIT_MEMORY] = p->cg_version            ? LIMIT_CGROUP
				       : p->asked[LIMIT_MEMORY] ? LIMIT_RLIMIT
								: LIMIT_UNENFORCED;
	for (int k = LIMIT_CPU; k <= LIMIT_OPEN_FILES; k++)
		if (p->v[k])
			p->how[k] = LIMIT_RLIMIT;
	if (p->v[LIMIT_OPEN_FILES]) {
		struct rlimit rl;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && p->v[LIMIT_OPEN_FILES] > rl.rlim_max &&
		    !harden_has_cap(CAP_SYS_RESOURCE)) {
			err_set(err, ERR_UNAVAILABLE, 0,
				"limits: open_files %" PRIu64
				" is above this user's hard limit (%llu)",
				p->v[LIMIT_OPEN_FILES], (unsigned long long)rl.rlim_max);
			err_hint(err,
				 "ask for %llu or less, or raise the hard limit (ulimit -Hn, "
				 "LimitNOFILE=)",
				 (unsigned long long)rl.rlim_max);
			limit_release(p);
			return -EPERM;
		}
	}
	return 0;
}

static int plan_tmp(struct limit_plan *p, bool private_tmp, struct stepbox_err *err)
{
	if (p->v[LIMIT_TMP] && private_tmp) {
		p->how[LIMIT_TMP] = LIMIT_TMPFS;
	} else if (p->asked[LIMIT_TMP]) {
		err_set(err, ERR_UNAVAILABLE, 0,
			"limits: tmp %" PRIu64 " asks for a private /tmp, and Landlock alone has "
			"none (no mount namespace here)",
			p->v[LIMIT_TMP]);
		err_hint(err, "use a backend with namespaces (stepbox check says why they are "
			      "not available), or drop the tmp limit");
		limit_release(p);
		return -EPERM;
	}
	return 0;
}

int limit_plan(const struct limit_config *c, bool userns, bool private_tmp, bool create,
	       const char *mountinfo, struct limit_plan *p, struct stepbox_err *err)
{
	plan_values(c, private_tmp, p);
	bool mem = p->v[LIMIT_MEMORY] != 0, tasks = p->v[LIMIT_TASKS] != 0;
	plan_cgroup(p, mem, tasks, create, mountinfo);
	if (tasks && plan_tasks(p, userns, err) < 0)
		return -EPERM;
	if (plan_rlimits(p, mem, err) < 0)
		return -EPERM;
	if (p->v[LIMIT_OUTPUT])
		p->how[LIMIT_OUTPUT] = LIMIT_PIPE;
	if (plan_tmp(p, private_tmp, err) < 0)
		return -EPERM;
	if (create && p->how[LIMIT_TASKS] == LIMIT_NPROC_USER) {
		/*
		 * The user's other tasks count too: the step gets its share on
		 * top. Asked for, that is the user's tasks, counted (a walk of
		 * /proc: about a millisecond on a busy host); the default only
		 * guards against a fork bomb, and takes every task of the host
		 * (one read of /proc/loadavg) as the bound instead.
		 */
		long now = p->asked[LIMIT_TASKS] ? count_tasks("/proc", getuid()) : host_tasks();
		p->others = now > 0 ? (uint64_t)now : 0;
	}
	return 0;
}

int limit_cgroup_fd(const struct limit_plan *p)
{
	return p->cg_version == 2 ? p->cg_fd : -1;
}

int limit_join(const struct limit_plan *p, pid_t pid)
{
	char id[24];
	int n = snprintf(id, sizeof(id), "%d", (int)pid);
	for (int i = 0; i < 2; i++)
		if (p->cg_procs[i] >= 0 && write(p->cg_procs[i], id, (size_t)n) != n)
			return -errno;
	return 0;
}

/*
 * cgroup v1: a thread that moves itself through tasks takes no lock over
 * every thread group of the host, so no grace period is waited for (the
 * kernel's "cgroup: Optimize single thread migration", upstream and in the
 * stable series; an older kernel waits as for a process's move).
 */
bool limit_joins_itself(const struct limit_plan *p)
{
	return p->cg_version == 1;
}

void limit_sweep(const struct limit_plan *p)
{
	for (int i = 0; i < 2; i++) {
		char parent[PATH_MAX];
		if (p->cg_dir[i] && path_parent(p->cg_dir[i], parent, sizeof(parent)))
			sweep(parent, p->cg_version == 2 ? "step-" : "stepbox-");
	}
}

int limit_enter(const struct limit_plan *p)
{
	for (int k = 0; k <= LIMIT_OPEN_FILES; k++) {
		bool rl = p->how[k] == LIMIT_RLIMIT || p->how[k] == LIMIT_NPROC_NS ||
			  p->how[k] == LIMIT_NPROC_USER;
		if (!rl)
			continue;
		int r = limitcfg_setrlimit((enum limit_kind)k,
					   p->v[k] + (k == LIMIT_TASKS ? p->others : 0));
		if (r < 0)
			return r;
	}
	return 0;
}

/* Whether n tasks counted are near the tasks limit (two thirds): forks were likely refused. */
static bool near_tasks_limit(const struct limit_plan *p, long n)
{
	uint64_t of = p->v[LIMIT_TASKS] + (p->how[LIMIT_TASKS] == LIMIT_NPROC_NS ? 0 : p->others);
	return n >= 0 && (uint64_t)n * 3 >= of * 2;
}

/*
 * Whether the user's tasks are at limit (RLIMIT_NPROC) now, by the kernel's
 * own count: a child of ours takes that limit and forks, and EAGAIN is the
 * refusal the step's forks meet. A walk of /proc under a fork bomb sees a
 * moment's tasks, and under load fewer than the kernel counts. The child
 * calls only what is safe after a fork of a process with threads.
 */
static bool at_nproc_limit(uint64_t limit)
{
	pid_t pid = fork();
	if (pid < 0)
		return errno == EAGAIN;
	if (pid == 0) {
		struct rlimit rl = {(rlim_t)limit, (rlim_t)limit};
		if (setrlimit(RLIMIT_NPROC, &rl) < 0)
			_exit(2);
		pid_t g = fork();
		if (g == 0)
			_exit(0);
		if (g < 0)
			_exit(errno == EAGAIN ? 1 : 2);
		waitpid(g, NULL, 0);
		_exit(0);
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return false;
	return WIFEXITED(st) && WEXITSTATUS(st) == 1;
}

long limit_count_tasks(const struct limit_plan *p, pid_t init, bool pidns, int looks)
{
	char path[64];
	uid_t uid = (uid_t)-1;
	if (p->how[LIMIT_TASKS] == LIMIT_NPROC_USER) {
		snprintf(path, sizeof(path), "/proc");
		uid = getuid();
	} else if (p->how[LIMIT_TASKS] == LIMIT_NPROC_NS && pidns) {
		/* the namespace's own procfs lists each of its processes, zombies too */
		snprintf(path, sizeof(path), "/proc/%ld/root/proc", (long)init);
	} else {
		return -1;
	}
	if (looks == 0)
		return 0; /* it would count */
	/*
	 * A tree at its limit keeps losing and forking tasks, and procfs lists a
	 * task a moment after the kernel counts it: the most of several looks,
	 * 25 ms apart, until one finds it near the limit, or 8 in a row find no
	 * more than before (a tree that is not growing: the kill it waits for,
	 * a timeout's or a cancellation's, is not held 1.5 s for a count).
	 */
	long most = -1;
	uint64_t limit = p->v[LIMIT_TASKS] + p->others; /* limit_enter's, for the user's count */
	for (int i = 0, same = 0; i < looks && same < 8 && !near_tasks_limit(p, most); i++) {
		if (i)
			nanosleep(&(struct timespec){0, 25000000}, NULL);
		long n = p->how[LIMIT_TASKS] == LIMIT_NPROC_USER && at_nproc_limit(limit)
				 ? (long)limit
				 : count_tasks(path, uid);
		if (n > most) {
			most = n;
			same = 0;
		} else {
			same++;
		}
	}
	return most;
}

/* The number after key in a cgroup events file ("key N" lines), or 0. */
static uint64_t event(const char *dir, const char *file, const char *key)
{
	char path[PATH_MAX + 32], buf[1024];
	if (!dir)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (slurp(path, buf, sizeof(buf)) <= 0)
		return 0;
	size_t n = strlen(key);
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, key, n) == 0 && l[n] == ' ')
			return strtoull(l + n + 1, NULL, 10);
	return 0;
}

void limit_finish(struct limit_plan *p, int exit_code, long tasks_seen, long maxrss_kb, bool quiet)
{
	/* killed by a signal, or a shell saying a child of its was (128+N) */
	int signal = exit_code > 128 && exit_code < 128 + 65 ? exit_code - 128 : 0;
	bool failed = exit_code != 0;
	char v[48];
	const char *mem = p->cg_version == 2 ? p->cg_dir[0] : p->cg_dir[1];
	uint64_t oom = p->cg_version == 2 ? event(mem, "memory.events", "oom_kill")
					  : event(mem, "memory.oom_control", "oom_kill");
	uint64_t refused = p->cg_version ? event(p->cg_dir[0], "pids.events", "max") : 0;
	p->reached = NULL;
	if (oom && p->how[LIMIT_MEMORY] == LIMIT_CGROUP) {
		limitcfg_human(p->v[LIMIT_MEMORY], LIMIT_MEMORY, v, sizeof(v));
		p->reached = "memory";
		snprintf(p->said, sizeof(p->said),
			 "the step reached its memory limit (%s, the whole tree): the kernel "
			 "killed %" PRIu64 " of its processes",
			 v, oom);
	} else if (refused && p->how[LIMIT_TASKS] == LIMIT_CGROUP) {
		p->reached = "tasks";
		snprintf(p->said, sizeof(p->said),
			 "the step reached its tasks limit (%" PRIu64 "): %" PRIu64
			 " fork%s refused",
			 p->v[LIMIT_TASKS], refused, refused == 1 ? " was" : "s were");
	} else if (p->forks_refused && (p->how[LIMIT_TASKS] == LIMIT_NPROC_NS ||
					p->how[LIMIT_TASKS] == LIMIT_NPROC_USER)) {
		p->reached = "tasks";
		snprintf(p->said, sizeof(p->said),
			 "the step reached its tasks limit (%" PRIu64 "): %" PRIu64
			 " fork%s refused",
			 p->v[LIMIT_TASKS], p->forks_refused,
			 p->forks_refused == 1 ? " was" : "s were");
	} else if (p->how[LIMIT_TASKS] == LIMIT_NPROC_NS && near_tasks_limit(p, tasks_seen)) {
		/* a sample: a tree at its limit keeps losing and forking tasks */
		p->reached = "tasks";
		snprintf(p->said, sizeof(p->said),
			 "the step had up to %ld tasks, near its tasks limit (%" PRIu64
			 "): forks were likely refused",
			 tasks_seen, p->v[LIMIT_TASKS]);
	} else if (near_tasks_limit(p, tasks_seen)) {
		p->reached = "tasks";
		snprintf(p->said, sizeof(p->said),
			 "the user had up to %ld tasks while the step ran, near the step's tasks "
			 "limit (%" PRIu64 ") on top of the %" PRIu64 " the user had when it "
			 "started: forks were likely refused",
			 tasks_seen, p->v[LIMIT_TASKS], p->others);
	} else if ((p->reached = limitcfg_signalled(signal, p->v, p->said, sizeof(p->said)))) {
		/* said */
	} else if (failed && p->how[LIMIT_MEMORY] == LIMIT_RLIMIT && maxrss_kb > 0 &&
		   (uint64_t)maxrss_kb * 1024 * 10 >= p->v[LIMIT_MEMORY] * 9) {
		char used[48];
		limitcfg_human(p->v[LIMIT_MEMORY], LIMIT_MEMORY, v, sizeof(v));
		limitcfg_human((uint64_t)maxrss_kb * 1024, LIMIT_MEMORY, used, sizeof(used));
		p->reached = "memory";
		snprintf(p->said, sizeof(p->said),
			 "a process of the step used %s, at its memory limit (%s per process): "
			 "an allocation was refused",
			 used, v);
	} else if (p->output_dropped) {
		limitcfg_human(p->v[LIMIT_OUTPUT], LIMIT_OUTPUT, v, sizeof(v));
		p->reached = "output";
		snprintf(p->said, sizeof(p->said),
			 "the step's output reached its limit (%s): %" PRIu64 " bytes were dropped",
			 v, p->output_dropped);
	}
	if (p->reached && !quiet)
		fprintf(stderr, "stepbox: %s\n", p->said);
}

/* Kill what is left in the step's cgroup and remove it. */
static void cg_remove(struct limit_plan *p)
{
	for (int i = 0; i < 2; i++) {
		if (p->cg_procs[i] >= 0)
			close(p->cg_procs[i]);
		p->cg_procs[i] = -1;
	}
	if (p->cg_fd >= 0)
		close(p->cg_fd);
	p->cg_fd = -1;
	for (int i = 0; i < 2; i++) {
		if (!p->cg_dir[i])
			continue;
		/* the tree is gone; whatever escaped its kill dies with the cgroup */
		if (p->cg_version == 2)
			put(p->cg_dir[i], "cgroup.kill", "1");
		for (int tries = 0; tries < 200 && rmdir(p->cg_dir[i]) < 0 && errno == EBUSY;
		     tries++) {
			char path[PATH_MAX + 16], buf[4096];
			snprintf(path, sizeof(path), "%s/cgroup.procs", p->cg_dir[i]);
			char *end;
			if (slurp(path, buf, sizeof(buf)) < 0)
				buf[0] = '\0';
			for (char *s = buf; *s; s = end) {
				long pid = strtol(s, &end, 10);
				if (end == s)
					break;
				if (pid > 0)
					kill((pid_t)pid, SIGKILL);
			}
			nanosleep(&(struct timespec){0, 1000000}, NULL);
		}
		free(p->cg_dir[i]);
		p->cg_dir[i] = NULL;
	}
}

void limit_release(struct limit_plan *p)
{
	cg_remove(p);
	for (int i = 0; i < 3; i++) {
		free(p->own[i]);
		p->own[i] = NULL;
	}
}

static const char *how_name(const struct limit_plan *p, enum limit_kind k)
{
	switch (p->how[k]) {
	case LIMIT_CGROUP:
		return p->cg_version == 2 ? "cgroup2, the whole tree" : "cgroup v1, the whole tree";
	case LIMIT_NPROC_NS:
		return "RLIMIT_NPROC, the step's user namespace";
	case LIMIT_NPROC_USER:
		return "RLIMIT_NPROC, with the user's other tasks";
	case LIMIT_RLIMIT:
		return "rlimit, per process";
	case LIMIT_PIPE:
		return "passed through stepbox";
	case LIMIT_TMPFS:
		return "tmpfs size of /tmp, /dev/shm and HOME";
	case LIMIT_UNENFORCED:
		return "not enforced here";
	default:
		return "none";
	}
}

void limit_value(const struct limit_plan *p, enum limit_kind k, char *buf, size_t cap)
{
	limitcfg_human(p->v[k], k, buf, cap);
}

void limit_describe(const struct limit_plan *p, char *buf, size_t cap)
{
	struct strbuf sb;
	strbuf_init(&sb, buf, cap);
	for (int k = 0; k < LIMIT_N; k++) {
		if (p->how[k] == LIMIT_OFF)
			continue;
		char v[48];
		limitcfg_human(p->v[k], (enum limit_kind)k, v, sizeof(v));
		strbuf_add(&sb, "%s%s %s (%s%s)", sb.len ? ", " : "", limitcfg_names[k], v,
			   how_name(p, (enum limit_kind)k), p->asked[k] ? "" : ", default");
	}
	if (!sb.len)
		strbuf_add(&sb, "none");
	if (!p->cg_version && p->why[0])
		strbuf_add(&sb, "; no cgroup: %s", p->why);
}

json_t *limit_json(const struct limit_plan *p)
{
	json_t *o = json_object();
	for (int k = 0; k < LIMIT_N; k++) {
		if (p->how[k] == LIMIT_OFF)
			continue;
		json_object_set_new(o, limitcfg_names[k],
				    json_pack("{s:I, s:b, s:s}", "value", (json_int_t)p->v[k],
					      "asked", p->asked[k], "enforced_by",
					      how_name(p, (enum limit_kind)k)));
	}
	return json_pack("{s:o, s:o, s:o, s:o}", "limits", o, "cgroup",
			 p->cg_version ? json_integer(p->cg_version) : json_null(), "no_cgroup_why",
			 !p->cg_version && p->why[0] ? json_string(p->why) : json_null(),
			 "limit_reached", p->reached ? json_string(p->reached) : json_null());
}
