#include "grants.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RX (GRANT_READ | GRANT_EXEC)
#define DEVRW (GRANT_READ | GRANT_WRITE | GRANT_DEV)

/* DESIGN.md, "What every command may touch". */
static const struct {
	const char *path;
	unsigned access;
} baseline[] = {
	{"/usr", RX},        {"/bin", RX},
	{"/sbin", RX},       {"/lib", RX},
	{"/lib32", RX},      {"/lib64", RX},
	{"/libx32", RX},     {"/etc", GRANT_READ},
	{"/proc", GRANT_READ}, {"/sys/devices/system/cpu", GRANT_READ},
	{"/dev/null", DEVRW}, {"/dev/zero", DEVRW},
	{"/dev/full", DEVRW}, {"/dev/random", DEVRW},
	{"/dev/urandom", DEVRW}, {"/dev/tty", DEVRW},
	{"/dev/pts", DEVRW}, {"/dev/ptmx", DEVRW},
	{"/dev/shm", GRANT_READ | GRANT_WRITE},
};

/*
 * A rule on /etc does not follow the symlinks inside it: on systemd-resolved
 * hosts /etc/resolv.conf points into /run, and granting /etc alone broke DNS
 * (field notes, incident 2). Each entry is resolved to its own target.
 */
static const char *const etc_explicit[] = {
	"/etc/resolv.conf", "/etc/hosts",         "/etc/nsswitch.conf", "/etc/ssl",
	"/etc/ca-certificates", "/etc/pki",       "/etc/localtime",     "/etc/passwd",
	"/etc/group",       "/etc/ld.so.cache",   "/etc/ld.so.conf",    "/etc/ld.so.conf.d",
	"/etc/alternatives", "/etc/fonts",        "/etc/os-release",    "/etc/mime.types",
	"/etc/debian_version", "/etc/gai.conf",
};

#define ETC_MAX_DEPTH 32
#define ETC_MAX_ENTRIES 200000
#define MAX_SYMLINKS 40

const char *grants_origin_name(enum grant_origin o)
{
	switch (o) {
	case ORIGIN_BASELINE:
		return "baseline";
	case ORIGIN_BASELINE_TARGET:
		return "baseline-target";
	case ORIGIN_EXTRA:
		return "SANDBOX_EXTRA_SYSTEM_PATHS";
	case ORIGIN_BROWSER:
		return "AGENT_BROWSER_EXECUTABLE_PATH";
	case ORIGIN_POLICY:
		return "policy";
	case ORIGIN_FLAG:
		return "flag";
	case ORIGIN_WORKDIR:
		return "workdir";
	case ORIGIN_PERSISTENT:
		return "persistent";
	}
	return "?";
}

const char *grants_access_name(unsigned a)
{
	static const char *const names[16] = {
		"none", "r", "x", "rx", "w", "rw", "wx", "rwx",
		"dev", "r+dev", "x+dev", "rx+dev", "w+dev", "rw+dev", "wx+dev", "rwx+dev",
	};
	return names[a & 15u];
}

void grants_release(struct grants *g)
{
	for (size_t i = 0; i < g->n; i++) {
		free(g->v[i].path);
		free(g->v[i].requested);
	}
	for (size_t i = 0; i < g->nskipped; i++) {
		free(g->skipped[i].path);
		free(g->skipped[i].reason);
	}
	for (size_t i = 0; i < g->nlinks; i++) {
		free(g->links[i].path);
		free(g->links[i].target);
	}
	free(g->links);
	free(g->v);
	free(g->skipped);
	free(g->workdir);
	free(g->persist);
	memset(g, 0, sizeof(*g));
}

/* Takes ownership of path and requested. */
static int add(struct grants *g, char *path, char *requested, unsigned access,
	       enum grant_origin origin, bool exists)
{
	if (!path || !requested)
		goto nomem;
	if (g->n >= STRV_MAX) {
		free(path);
		free(requested);
		return -E2BIG;
	}
	if (strv_grow(&g->v, &g->cap, g->n, sizeof(*g->v), 64) < 0)
		goto nomem;
	g->v[g->n++] = (struct grant){path, requested, access, origin, exists};
	return 0;
nomem:
	free(path);
	free(requested);
	return -ENOMEM;
}

static int skip(struct grants *g, const char *path, enum grant_origin origin, const char *why)
{
	for (size_t i = 0; i < g->nskipped; i++)
		if (strcmp(g->skipped[i].path, path) == 0)
			return 0;
	if (strv_grow(&g->skipped, &g->capskipped, g->nskipped, sizeof(*g->skipped), 16) < 0)
		return -ENOMEM;
	char *p = strdup(path), *r = strdup(why);
	if (!p || !r) {
		free(p);
		free(r);
		return -ENOMEM;
	}
	g->skipped[g->nskipped++] = (struct grant_skip){p, origin, r};
	return 0;
}

static int add_link(struct grants *g, int dfd, const char *name, const char *path)
{
	char target[PATH_MAX];
	ssize_t n = readlinkat(dfd, name, target, sizeof(target) - 1);
	if (n < 0)
		return 0;
	target[n] = '\0';
	if (strv_grow(&g->links, &g->caplinks, g->nlinks, sizeof(*g->links), 32) < 0)
		return -ENOMEM;
	char *p = strdup(path), *t = strdup(target);
	if (!p || !t) {
		free(p);
		free(t);
		return -ENOMEM;
	}
	g->links[g->nlinks].path = p;
	g->links[g->nlinks].target = t;
	g->nlinks++;
	return 0;
}

/* root + path, where root "/" adds nothing. */
static int host_path(const char *root, const char *path, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "%s%s", strcmp(root, "/") ? root : "", path);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

int grants_canon(const char *root, const char *path, char **out, bool *exists)
{
	/* pending: what is left to walk; done: the resolved prefix ("" is /) */
	char pending[PATH_MAX * 2], done[PATH_MAX], hp[PATH_MAX * 2];
	int links = 0;
	*out = NULL;
	if (strlen(path) >= PATH_MAX)
		return -ENAMETOOLONG;
	snprintf(pending, sizeof(pending), "%s", path);
	done[0] = '\0';
	*exists = true;
	char *p = pending;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char comp[NAME_MAX + 1];
		if (len > NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(comp, p, len);
		comp[len] = '\0';
		p += len;
		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			char *slash = strrchr(done, '/');
			if (slash)
				*slash = '\0';
			continue;
		}
		size_t dl = strlen(done);
		if (dl + 1 + len >= sizeof(done))
			return -ENAMETOOLONG;
		done[dl] = '/';
		memcpy(done + dl + 1, comp, len + 1);
		if (!*exists)
			continue; /* beneath a missing folder: keep the rest as written */
		struct stat st;
		if (host_path(root, done, hp, sizeof(hp)) < 0)
			return -ENAMETOOLONG;
		if (lstat(hp, &st) < 0) {
			if (errno != ENOENT)
				return -errno;
			*exists = false;
			continue;
		}
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			if (++links > MAX_SYMLINKS)
				return -ELOOP;
			ssize_t tl = readlink(hp, target, sizeof(target) - 1);
			if (tl < 0)
				return -errno;
			target[tl] = '\0';
			char rest[PATH_MAX * 2];
			if (snprintf(rest, sizeof(rest), "%s%s%s", target, *p ? "/" : "", p) >=
			    (int)sizeof(rest))
				return -ENAMETOOLONG;
			snprintf(pending, sizeof(pending), "%s", rest);
			p = pending;
			done[dl] = '\0'; /* drop the link itself */
			if (target[0] == '/')
				done[0] = '\0';
			continue;
		}
		if (*p && !S_ISDIR(st.st_mode))
			return -ENOTDIR;
	}
	*out = strdup(done[0] ? done : "/");
	return *out ? 0 : -ENOMEM;
}

bool grants_covers(const struct grants *g, const char *path, unsigned access)
{
	unsigned have = 0;
	for (size_t i = 0; i < g->n; i++) {
		const char *gp = g->v[i].path;
		size_t gl = strlen(gp);
		bool beneath = strcmp(gp, "/") == 0 ||
			       (strncmp(path, gp, gl) == 0 && (path[gl] == '\0' || path[gl] == '/'));
		if (beneath)
			have |= g->v[i].access;
	}
	return (have & access) == access;
}

static bool world_readable(const struct stat *st)
{
	if (S_ISDIR(st->st_mode))
		return (st->st_mode & (S_IROTH | S_IXOTH)) == (S_IROTH | S_IXOTH);
	return st->st_mode & S_IROTH;
}

/*
 * Grant path (and what is beneath it) for reading, leaving out everything that
 * is not world-readable: as root, DAC no longer protects /etc/shadow, SSH host
 * keys or /etc/ssl/private, so only an allow list of world-readable entries
 * keeps them out. A folder whose whole subtree is world-readable becomes one
 * rule; a folder holding a secret is not granted itself (a rule would cover
 * the secret) and its entries are granted one by one. Symlinks get no rule:
 * access through them is decided on their targets. Runs at every launch as
 * root, so it stats relative to an open folder. Returns 1 when path was
 * granted whole, 0 when it was split or left out, or a negative errno.
 */
static int walk_readable(struct grants *g, int dfd, const char *name, const char *path,
			 enum grant_origin origin, int depth, size_t *budget, bool links)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (S_ISLNK(st.st_mode)) /* nothing to hide; the target has its own rule or none */
		return links && add_link(g, dfd, name, path) < 0 ? -ENOMEM : 1;
	if (!world_readable(&st))
		return skip(g, path, origin, "not world-readable: hidden from the sandbox");
	if (!S_ISDIR(st.st_mode))
		return add(g, strdup(path), strdup(path), GRANT_READ, origin, true) < 0 ? -ENOMEM
											 : 1;
	if (depth >= ETC_MAX_DEPTH)
		return skip(g, path, origin, "nested too deep to check for secrets");
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return skip(g, path, origin, "cannot be listed to check for secrets");
	}
	size_t mark = g->n, skipmark = g->nskipped, linkmark = g->nlinks;
	bool whole = true;
	int r = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (*budget == 0) {
			r = -E2BIG;
			break;
		}
		(*budget)--;
		char child[PATH_MAX];
		if (snprintf(child, sizeof(child), "%s/%s", strcmp(path, "/") ? path : "",
			     de->d_name) >= (int)sizeof(child))
			continue;
		r = walk_readable(g, dirfd(d), de->d_name, child, origin, depth + 1, budget, links);
		if (r < 0)
			break;
		whole &= r == 1 && g->nskipped == skipmark;
	}
	closedir(d);
	if (r < 0)
		return r;
	if (!whole)
		return 0;
	/* all clean: one rule for the folder replaces its children's and links */
	while (g->n > mark) {
		g->n--;
		free(g->v[g->n].path);
		free(g->v[g->n].requested);
	}
	while (g->nlinks > linkmark) {
		g->nlinks--;
		free(g->links[g->nlinks].path);
		free(g->links[g->nlinks].target);
	}
	return add(g, strdup(path), strdup(path), GRANT_READ, origin, true) < 0 ? -ENOMEM : 1;
}

static int add_world_readable(struct grants *g, const struct grants_host *host, const char *path,
			      enum grant_origin origin, size_t *budget)
{
	char hp[PATH_MAX * 2];
	if (host_path(host->root, path, hp, sizeof(hp)) < 0)
		return 0;
	return walk_readable(g, AT_FDCWD, hp, path, origin, 0, budget, host->keep_links);
}

/*
 * Grant one requested path after resolving it. A missing read grant is
 * skipped (dropping an allow only narrows the sandbox); a missing write grant
 * is an error unless it is the workdir or persistent folder, created later.
 */
static int add_requested(struct grants *g, const struct grants_host *host, const char *req,
			 unsigned access, enum grant_origin origin, bool create,
			 struct stepbox_err *err)
{
	char *canon = NULL;
	bool exists = false;
	/* the baseline lists what a system may have; what it lacks is skipped */
	bool optional = !(access & GRANT_WRITE) || origin == ORIGIN_BASELINE;
	int r = grants_canon(host->root, req, &canon, &exists);
	if (r < 0) {
		if (optional && r != -ENOMEM)
			return skip(g, req, origin, strerror(-r));
		return err_set(err, ERR_USAGE, -r, "cannot resolve %s path '%s'",
			       grants_origin_name(origin), req);
	}
	if (!exists && !create) {
		free(canon);
		if (optional)
			return skip(g, req, origin, "does not exist");
		err_set(err, ERR_USAGE, ENOENT, "write path '%s'", req);
		err_hint(err, "create the folder first, or drop it from the write grants");
		return -ENOENT;
	}
	r = add(g, canon, strdup(req), access, origin, exists);
	return r < 0 ? err_set(err, ERR_USAGE, -r, "grant '%s'", req) : 0;
}

static int add_baseline(struct grants *g, const struct grants_host *host, struct stepbox_err *err)
{
	size_t budget = ETC_MAX_ENTRIES;
	for (size_t i = 0; i < sizeof(baseline) / sizeof(baseline[0]); i++) {
		int r;
		if (host->hide_etc_secrets && strcmp(baseline[i].path, "/etc") == 0)
			r = add_world_readable(g, host, "/etc", ORIGIN_BASELINE, &budget);
		else
			r = add_requested(g, host, baseline[i].path, baseline[i].access,
					  ORIGIN_BASELINE, false, err);
		if (r < 0)
			return err_set(err, ERR_UNAVAILABLE, -r, "baseline grant '%s'",
				       baseline[i].path);
	}
	for (size_t i = 0; i < sizeof(etc_explicit) / sizeof(etc_explicit[0]); i++) {
		char *canon = NULL;
		bool exists;
		if (grants_canon(host->root, etc_explicit[i], &canon, &exists) < 0 || !exists) {
			free(canon);
			continue;
		}
		int r = 0;
		/* an entry that is not a symlink is already covered by /etc */
		if (strcmp(canon, etc_explicit[i]) == 0)
			;
		else if (host->hide_etc_secrets)
			r = add_world_readable(g, host, canon, ORIGIN_BASELINE_TARGET, &budget);
		else
			r = add(g, strdup(canon), strdup(etc_explicit[i]), GRANT_READ,
				ORIGIN_BASELINE_TARGET, true);
		free(canon);
		if (r < 0)
			return err_set(err, ERR_UNAVAILABLE, -r, "baseline grant '%s'",
				       etc_explicit[i]);
	}
	return 0;
}

static int add_extras(struct grants *g, const struct grants_host *host, struct stepbox_err *err)
{
	if (host->extra_paths) {
		char *copy = strdup(host->extra_paths);
		if (!copy)
			return err_set(err, ERR_USAGE, ENOMEM, "SANDBOX_EXTRA_SYSTEM_PATHS");
		int r = 0;
		for (char *save = NULL, *p = strtok_r(copy, ":", &save); p && r == 0;
		     p = strtok_r(NULL, ":", &save)) {
			if (p[0] != '/')
				r = skip(g, p, ORIGIN_EXTRA, "not an absolute path");
			else
				r = add_requested(g, host, p, RX, ORIGIN_EXTRA, false, err);
		}
		free(copy);
		if (r < 0)
			return r;
	}
	if (host->browser_exe && host->browser_exe[0] == '/') {
		/* the browser's own folder holds its libraries and resources */
		char *canon = NULL;
		bool exists;
		if (grants_canon(host->root, host->browser_exe, &canon, &exists) == 0 && exists) {
			char *slash = strrchr(canon, '/');
			if (slash && slash != canon)
				*slash = '\0';
			int r = add_requested(g, host, canon, RX, ORIGIN_BROWSER, false, err);
			free(canon);
			return r;
		}
		free(canon);
		return skip(g, host->browser_exe, ORIGIN_BROWSER, "does not exist");
	}
	return 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* The persistent folder: --persist / persistent_dir, or the write path named
 * .sandbox-cache; two different candidates are an error. */
static int find_persist(const struct stepbox_config *cfg, const struct grants_host *host,
			char **out, struct stepbox_err *err)
{
	const struct strv *lists[] = {&cfg->write_policy, &cfg->write_flag};
	char *found = NULL;
	bool exists;
	if (cfg->persist && grants_canon(host->root, cfg->persist, &found, &exists) < 0)
		return err_set(err, ERR_USAGE, EINVAL, "cannot resolve persistent folder '%s'",
			       cfg->persist);
	for (size_t l = 0; l < 2; l++) {
		for (size_t i = 0; i < lists[l]->n; i++) {
			const char *w = lists[l]->v[i];
			if (strcmp(base_name(w), ".sandbox-cache") != 0)
				continue;
			char *c = NULL;
			if (grants_canon(host->root, w, &c, &exists) < 0)
				continue;
			if (found && strcmp(found, c) != 0) {
				err_set(err, ERR_USAGE, 0,
					"two persistent folders: '%s' and '%s'", found, c);
				err_hint(err, "a step has one persistent folder: keep one "
					      "--persist / persistent_dir / .sandbox-cache grant");
				free(found);
				free(c);
				return -EINVAL;
			}
			free(found);
			found = c;
		}
	}
	*out = found;
	return 0;
}

static int by_path_access(const void *a, const void *b)
{
	const struct grant *x = *(const struct grant *const *)a, *y = *(const struct grant *const *)b;
	int c = strcmp(x->path, y->path);
	if (c == 0)
		c = (x->access > y->access) - (x->access < y->access);
	return c ? c : (x > y) - (x < y); /* ties: the earlier grant first */
}

/*
 * The same path with the same access asked twice is one grant, and the first
 * origin stands. Sorting makes this O(n log n): policies may hold 10,000 paths.
 */
static int dedupe(struct grants *g)
{
	if (g->n < 2)
		return 0;
	const struct grant **idx = malloc(g->n * sizeof(*idx));
	bool *drop = calloc(g->n, sizeof(*drop));
	if (!idx || !drop) {
		free(idx);
		free(drop);
		return -ENOMEM;
	}
	for (size_t i = 0; i < g->n; i++)
		idx[i] = &g->v[i];
	qsort(idx, g->n, sizeof(*idx), by_path_access);
	for (size_t i = 1; i < g->n; i++)
		if (strcmp(idx[i]->path, idx[i - 1]->path) == 0 && idx[i]->access == idx[i - 1]->access)
			drop[idx[i] - g->v] = true;
	free(idx);
	size_t k = 0;
	for (size_t i = 0; i < g->n; i++) {
		if (drop[i]) {
			free(g->v[i].path);
			free(g->v[i].requested);
		} else {
			g->v[k++] = g->v[i];
		}
	}
	g->n = k;
	free(drop);
	return 0;
}

int grants_build(const struct stepbox_config *cfg, const struct grants_host *host,
		 struct grants *g, struct stepbox_err *err)
{
	memset(g, 0, sizeof(*g));
	int r = add_baseline(g, host, err);
	if (r == 0)
		r = add_extras(g, host, err);
	if (r == 0)
		r = find_persist(cfg, host, &g->persist, err);
	const struct {
		const struct strv *list;
		unsigned access;
		enum grant_origin origin;
	} reqs[] = {
		{&cfg->read_policy, RX, ORIGIN_POLICY},
		{&cfg->read_flag, RX, ORIGIN_FLAG},
		{&cfg->write_policy, RX | GRANT_WRITE, ORIGIN_POLICY},
		{&cfg->write_flag, RX | GRANT_WRITE, ORIGIN_FLAG},
	};
	for (size_t l = 0; r == 0 && l < sizeof(reqs) / sizeof(reqs[0]); l++) {
		for (size_t i = 0; r == 0 && i < reqs[l].list->n; i++) {
			const char *p = reqs[l].list->v[i];
			bool is_persist = reqs[l].access & GRANT_WRITE &&
					  strcmp(base_name(p), ".sandbox-cache") == 0;
			r = add_requested(g, host, p, reqs[l].access, reqs[l].origin, is_persist,
					  err);
		}
	}
	if (r == 0 && g->persist)
		r = add_requested(g, host, g->persist, RX | GRANT_WRITE, ORIGIN_PERSISTENT, true,
				  err);
	if (r == 0) {
		const char *wd = cfg->workdir ? cfg->workdir : host->cwd;
		bool exists;
		r = grants_canon(host->root, wd, &g->workdir, &exists);
		if (r < 0)
			err_set(err, ERR_USAGE, -r, "cannot resolve workdir '%s'", wd);
		else
			r = add_requested(g, host, wd,
					  cfg->workdir_readonly ? RX : RX | GRANT_WRITE,
					  ORIGIN_WORKDIR, true, err);
	}
	if (r == 0 && (r = dedupe(g)) < 0)
		err_set(err, ERR_USAGE, -r, "grants");
	if (r < 0)
		grants_release(g);
	return r;
}

int grants_mkdir_p(const char *path, unsigned leaf_mode)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(buf, c ? 0755 : (mode_t)leaf_mode) < 0 && errno != EEXIST)
			return -errno;
		*p = c;
		if (!c)
			break;
	}
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/* https://bford.info/cachedir/ : backup tools that honour it skip the folder */
static const char cachedir_tag[] = "Signature: 8a477f597d28d172789f06886806bc55\n"
				   "# This file is a cache directory tag created by stepbox.\n"
				   "# It marks the workflow's persistent tool folder: installed\n"
				   "# tools and caches that can be downloaded again.\n";

int grants_prepare_dirs(const struct grants *g, struct stepbox_err *err)
{
	int r;
	if (g->persist) {
		r = grants_mkdir_p(g->persist, 0700);
		if (r < 0)
			return err_set(err, ERR_UNAVAILABLE, -r, "create persistent folder '%s'",
				       g->persist);
		char tag[PATH_MAX + 16];
		snprintf(tag, sizeof(tag), "%s/CACHEDIR.TAG", g->persist);
		/* O_EXCL: never overwrite a file the user put there */
		int fd = open(tag, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd >= 0) {
			ssize_t w = write(fd, cachedir_tag, sizeof(cachedir_tag) - 1);
			close(fd);
			if (w != (ssize_t)sizeof(cachedir_tag) - 1)
				return err_set(err, ERR_UNAVAILABLE, EIO, "write '%s'", tag);
		} else if (errno != EEXIST) {
			return err_set(err, ERR_UNAVAILABLE, errno, "create '%s'", tag);
		}
	}
	r = grants_mkdir_p(g->workdir, 0755);
	if (r < 0)
		return err_set(err, ERR_UNAVAILABLE, -r, "create workdir '%s'", g->workdir);
	return 0;
}

bool grants_should_hide_etc(void)
{
	/* root reads everything; a user in extra groups reads group-only files */
	return geteuid() == 0 || getegid() == 0 || getgroups(0, NULL) > 0;
}
