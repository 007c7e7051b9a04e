#include "grants.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "canon.h"
#include "grantcheck.h"
#include "grants_int.h"
#include "path.h"

/*
 * A workdir or write grant that is one of these itself hands the step the
 * system (run from /, where systemd starts services, the default workdir made
 * every file writable). Folders beneath them are fine.
 */
static const char *const system_dirs[] = {
	"/usr",    "/etc",  "/bin", "/sbin", "/lib", "/lib32", "/lib64",
	"/libx32", "/boot", "/dev", "/proc", "/sys", "/var",   "/run",
};

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
		"none", "r",     "x",     "rx",     "w",     "rw",     "wx",     "rwx",
		"dev",  "r+dev", "x+dev", "rx+dev", "w+dev", "rw+dev", "wx+dev", "rwx+dev",
	};
	return names[a & 15u];
}

static int by_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

void grants_close_fds(struct grants *g)
{
	int *fds = malloc(g->n * sizeof(*fds) + 1);
	size_t n = 0;
	for (size_t i = 0; i < g->n; i++) {
		if (!g->v[i].has_fd)
			continue;
		if (fds)
			fds[n++] = g->v[i].fd;
		else
			close(g->v[i].fd);
		g->v[i].has_fd = false;
	}
	/* opened one after the other: a few close_range calls end them all */
	if (n > 1)
		qsort(fds, n, sizeof(*fds), by_int);
	path_close_fds(fds, n);
	free(fds);
}

void grants_release(struct grants *g)
{
	grants_close_fds(g);
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
	for (size_t i = 0; i < g->nsplits; i++)
		free(g->splits[i].path);
	free(g->splits);
	free(g->links);
	free(g->v);
	free(g->skipped);
	free(g->workdir);
	free(g->persist);
	strv_release(&g->protected_ro);
	strv_release(&g->protected_pins);
	memset(g, 0, sizeof(*g));
}

/* Takes ownership of path and requested. */
int gb_add(struct grants *g, char *path, char *requested, unsigned access, enum grant_origin origin,
	   bool exists)
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
	g->v[g->n++] =
		(struct grant){path, requested, access, origin, exists, false, false, false, -1};
	return 0;
nomem:
	free(path);
	free(requested);
	return -ENOMEM;
}

/* Duplicates are dropped once at the end (dedupe): a scan here was O(n^2). */
int gb_skip(struct grants *g, const char *path, enum grant_origin origin, const char *why)
{
	if (g->nskipped >= STRV_MAX)
		return -E2BIG;
	if (strv_grow(&g->skipped, &g->capskipped, g->nskipped, sizeof(*g->skipped), 16) < 0)
		return -ENOMEM;
	char *p = strdup(path), *r = strdup(why);
	if (!p || !r) {
		free(p);
		free(r);
		return -ENOMEM;
	}
	struct grant_skip *sk = &g->skipped[g->nskipped++];
	sk->path = p;
	sk->origin = origin;
	sk->reason = r;
	sk->missing = false; /* skip_missing says */
	return 0;
}

static int skip_missing(struct grants *g, const char *path, enum grant_origin origin,
			const char *why)
{
	int r = gb_skip(g, path, origin, why);
	if (r == 0)
		g->skipped[g->nskipped - 1].missing = true;
	return r;
}

bool gb_world_readable(const struct stat *st)
{
	if (S_ISDIR(st->st_mode))
		return (st->st_mode & (S_IROTH | S_IXOTH)) == (S_IROTH | S_IXOTH);
	return st->st_mode & S_IROTH;
}

/*
 * Whether others may reach path from top, as on an idmapped mount whose
 * owners are all unmapped: every folder on the way searchable by others,
 * path itself world-readable.
 */
static bool open_to_others(const char *top, const char *path)
{
	char buf[PATH_MAX];
	struct stat st;
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf) || lstat(buf, &st) < 0 ||
	    !gb_world_readable(&st))
		return false;
	size_t stop = strcmp(top, "/") == 0 ? 1 : strlen(top);
	for (char *slash; (slash = strrchr(buf, '/')) && (size_t)(slash - buf) >= stop;) {
		*slash = '\0';
		if (lstat(buf[0] ? buf : "/", &st) < 0 || !(st.st_mode & S_IXOTH))
			return false;
	}
	return true;
}

bool grants_covers(const struct grants *g, const char *path, unsigned access)
{
	unsigned have = 0;
	for (size_t i = 0; i < g->n; i++) {
		const struct grant *gr = &g->v[i];
		/* a private place (the namespaces' /tmp) holds nothing of the host's path */
		if ((gr->access & GRANT_PRIVATE) || !path_beneath(path, gr->path))
			continue;
		if (!gr->world_readable_only || open_to_others(gr->path, path))
			have |= gr->access;
	}
	return (have & access) == access;
}

bool grants_hidden(const struct grants *g, const char *path)
{
	for (size_t i = 0; i < g->nskipped; i++)
		if (strcmp(g->skipped[i].path, path) == 0)
			return true;
	/* what does not exist hides nothing (a file a step tried to create) */
	struct stat st;
	for (size_t i = 0; i < g->n; i++)
		if (g->v[i].world_readable_only && path_beneath(path, g->v[i].path) &&
		    lstat(path, &st) == 0 && !open_to_others(g->v[i].path, path))
			return true;
	return false;
}

static void wlocs_release(struct wlocs *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int wlocs_push(struct wlocs *l, const char *path, const char *what, bool writable)
{
	if (l->n >= STRV_MAX)
		return -E2BIG;
	if (strv_grow(&l->v, &l->cap, l->n, sizeof(*l->v), 16) < 0)
		return -ENOMEM;
	char *p = strdup(path);
	if (!p)
		return -ENOMEM;
	l->v[l->n].path = p;
	l->v[l->n].writable = writable;
	l->v[l->n++].what = what;
	return 0;
}

static int by_wloc(const void *a, const void *b)
{
	return strcmp(((const struct wloc *)a)->path, ((const struct wloc *)b)->path);
}

/*
 * The location in l that holds path (path itself or one of its folders), or
 * NULL: one binary search per component, so checking every crossed symlink of
 * 10,000 grants against 10,000 write grants stays O(n log n).
 */
const struct wloc *gb_holder(const struct wlocs *l, const char *path)
{
	char buf[PATH_MAX];
	if (l->n == 0)
		return NULL;
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return &l->v[0]; /* cannot happen (canonical paths fit); fail closed */
	for (;;) {
		struct wloc key = {buf, NULL, false};
		const struct wloc *w = bsearch(&key, l->v, l->n, sizeof(*l->v), by_wloc);
		if (w || strcmp(buf, "/") == 0)
			return w;
		char *slash = strrchr(buf, '/');
		if (slash == buf)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
}

/*
 * canon_links callback: a symlink crossed inside a place the step may
 * write is refused, whatever the grant. A step plants ~/.ssh as run/x, or
 * replaces a folder that a later grant goes through, and the next run, which
 * resolves as the caller before any sandbox exists, would grant the target.
 */
static int check_link(void *arg, const char *link, const char *target)
{
	struct build *b = arg;
	const struct wloc *w = gb_holder(&b->check, link);
	if (!w)
		return 0;
	b->refused = true;
	err_set(b->err, ERR_USAGE, 0,
		"%s path '%s' goes through the symlink '%s' -> '%s', which lies in the %s '%s'",
		grants_origin_name(b->origin), b->req, link, target, w->what, w->path);
	err_hint(b->err,
		 "a step can plant symlinks where it may write to redirect the next run's "
		 "grants; remove '%s', or name the real path if it is the one you mean",
		 link);
	return -ELOOP;
}

int gb_resolve(struct build *b, const char *req, enum grant_origin origin, char **canon,
	       bool *exists, struct canon_fd *held)
{
	b->req = req;
	b->origin = origin;
	return canon_memo(b->host->root, req, canon, exists, check_link, b, &b->dirs, held);
}

bool gb_system_top(const char *path)
{
	for (size_t i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++)
		if (strcmp(path, system_dirs[i]) == 0)
			return true;
	return false;
}

bool grants_system_folder(const char *path)
{
	for (size_t i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++)
		if (path_beneath(path, system_dirs[i]))
			return true;
	return strcmp(path, "/") == 0;
}

/* Why path is too broad to be a workdir or write grant, or NULL when it is not. */
static const char *broad_kind(const struct build *b, const char *path)
{
	if (strcmp(path, "/") == 0)
		return "the whole file system";
	if (gb_system_top(path))
		return "a top-level system folder";
	/* every user's scratch: `cd /tmp && stepbox run` wrote the host's whole
	 * /tmp, where the step's own /tmp is private */
	static const char *const shared_scratch[] = {"/tmp", "/var/tmp", "/dev/shm", "/run/lock",
						     "/var/lock"};
	for (size_t i = 0; i < sizeof(shared_scratch) / sizeof(shared_scratch[0]); i++)
		if (strcmp(path, shared_scratch[i]) == 0)
			return "a scratch folder every user of this host shares";
	if ((b->home && strcmp(path, b->home) == 0) ||
	    (b->home_norm && strcmp(path, b->home_norm) == 0))
		return "the caller's HOME";
	return NULL;
}

/*
 * A workdir or write location, before any grant is added: refuse it when it
 * is broad (as asked and as resolved: -w /lib64 is refused though it resolves
 * to /usr/lib64), then remember it. With allow_broad_grants a broad one is
 * taken as given: not checked for planted symlinks either, since a step that
 * may write / or HOME has every way out anyway.
 */
static int note_location(struct build *b, const char *asked, const char *what, bool write,
			 bool writable)
{
	char norm[PATH_MAX], *canon = NULL;
	bool exists;
	/* unresolvable: the grant itself reports it below */
	if (path_normalize(asked, norm, sizeof(norm)) < 0 ||
	    canon_path(b->host->root, asked, &canon, &exists) < 0)
		return 0;
	const char *why = broad_kind(b, norm);
	bool as_asked = why != NULL;
	if (!why)
		why = broad_kind(b, canon);
	int r = 0;
	if (why && !b->cfg->allow_broad_grants) {
		if (as_asked)
			err_set(b->err, ERR_USAGE, 0, "refusing the %s '%s': it is %s", what, asked,
				why);
		else
			err_set(b->err, ERR_USAGE, 0,
				"refusing the %s '%s': it resolves to '%s', %s", what, asked, canon,
				why);
		err_hint(b->err, "give the step its own folder with -C DIR, or set "
				 "allow_broad_grants (policy) or --allow-broad-grants to take "
				 "it as given");
		r = -EPERM;
	} else if (write) {
		r = wlocs_push(&b->all, canon, what, writable);
		if (r == 0 && !why)
			r = wlocs_push(&b->check, canon, what, writable);
		if (r < 0)
			err_set(b->err, ERR_USAGE, -r, "%s '%s'", what, asked);
	}
	free(canon);
	return r;
}

/*
 * Phase one: every place the step may write (write grants, the persistent
 * folder, a writable workdir) is known before any grant is resolved, so each
 * resolution after, the write grants' own included, is checked against all.
 */
static int note_locations(struct build *b)
{
	const struct stepbox_config *cfg = b->cfg;
	const struct strv *lists[] = {&cfg->write_policy, &cfg->write_flag};
	int r = 0;
	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; r == 0 && i < lists[l]->n; i++)
			r = note_location(b, lists[l]->v[i], "write grant", true, true);
	if (r == 0 && cfg->persist)
		r = note_location(b, cfg->persist, "persistent folder", true, !cfg->persist_shared);
	/*
	 * The baseline writes no host folder: its device files are not folders,
	 * and its writable folders (/tmp, /dev/shm) are private tmpfs under the
	 * namespaces and not granted under Landlock alone.
	 */
	if (r < 0)
		return r;
	const char *wd = cfg->workdir ? cfg->workdir : b->host->cwd;
	bool exists;
	r = canon_path(b->host->root, wd, &b->g->workdir, &exists);
	if (r < 0)
		return err_set(b->err, ERR_USAGE, -r, "cannot resolve workdir '%s'", wd);
	r = note_location(b, wd, cfg->workdir_readonly ? "read-only workdir" : "workdir",
			  !cfg->workdir_readonly, true);
	if (r < 0)
		return r;
	if (b->all.n > 1)
		qsort(b->all.v, b->all.n, sizeof(*b->all.v), by_wloc);
	if (b->check.n > 1)
		qsort(b->check.v, b->check.n, sizeof(*b->check.v), by_wloc);
	return 0;
}

/*
 * Grant one requested path after resolving it. A missing read grant is
 * skipped (dropping an allow only narrows the sandbox); a missing write grant
 * is an error unless it is the workdir or persistent folder, created later.
 */
int gb_add_requested(struct build *b, const char *req, unsigned access, enum grant_origin origin,
		     bool create)
{
	struct grants *g = b->g;
	char *canon = NULL;
	bool exists = false;
	/* the baseline lists what a system may have; what it lacks is skipped */
	bool optional = !(access & GRANT_WRITE) || origin == ORIGIN_BASELINE;
	/* a read grant's fd serves its Landlock rule; a write grant's folder may be made anew */
	struct canon_fd held = {-1, false};
	bool hold = b->fds_left > 0 && !(access & GRANT_WRITE);
	int r = gb_resolve(b, req, origin, &canon, &exists, hold ? &held : NULL);
	/* one that ends up split around /etc's secrets or devices is not one rule */
	bool split = exists && canon && gb_walked(b, canon, access);
	/*
	 * The namespaces make /proc and /dev/pts anew for the step: a host entry
	 * bound into them (-r /proc/PID) would show a host process, whose memory
	 * and environment a root step without Landlock could read.
	 */
	bool anew = exists && canon && b->host->namespaces &&
		    ((path_beneath(canon, "/dev/pts") && strcmp(canon, "/dev/pts") != 0) ||
		     (path_beneath(canon, "/proc") && strcmp(canon, "/proc") != 0));
	if (held.fd >= 0 && (r < 0 || b->refused || split || anew)) {
		close(held.fd);
		held.fd = -1;
	}
	if (b->refused)
		return r;
	if (r < 0) {
		if (optional && r != -ENOMEM)
			return skip_missing(g, req, origin, strerror(-r));
		return err_set(b->err, ERR_USAGE, -r, "cannot resolve %s path '%s'",
			       grants_origin_name(origin), req);
	}
	if (anew) {
		free(canon);
		return gb_skip(g, req, origin,
			       "made anew for the step: the host's is never bound in");
	}
	if (!exists && !create) {
		free(canon);
		if (optional)
			return skip_missing(g, req, origin, "does not exist");
		err_set(b->err, ERR_USAGE, ENOENT, "write path '%s'", req);
		err_hint(b->err, "create the folder first, or drop it from the write grants");
		return -ENOENT;
	}
	if (split)
		r = gb_add_walked(b, canon, req, access, origin);
	else
		r = gb_add(g, canon, strdup(req), access, origin, exists);
	if (held.fd >= 0 && r == 0) {
		struct grant *last = &g->v[g->n - 1];
		last->has_fd = true;
		last->fd = held.fd;
		last->fd_dir = held.dir;
		b->fds_left--;
	} else if (held.fd >= 0) {
		close(held.fd);
	}
	if (r == -E2BIG)
		return err_set(b->err, ERR_USAGE, E2BIG,
			       "grant '%s': more than %d entries to check for /etc secrets, or "
			       "more than %d grants",
			       req, ETC_MAX_ENTRIES, STRV_MAX);
	return r < 0 ? err_set(b->err, ERR_USAGE, -r, "grant '%s'", req) : 0;
}

/* Say where the policy file named what failed: "..., in policy 'f', line 3, ...". */
static void err_where(struct stepbox_err *err, const char *where)
{
	size_t len = strlen(err->msg);
	if (len + 4 < sizeof(err->msg))
		snprintf(err->msg + len, sizeof(err->msg) - len, " (%s)", where);
}

/* The persistent folder: --persist / persistent_dir, or the write path named
 * .sandbox-cache; two different candidates are an error. */
static int find_persist(const struct stepbox_config *cfg, const struct grants_host *host,
			char **out, struct stepbox_err *err)
{
	const struct strv *lists[] = {&cfg->write_policy, &cfg->write_flag};
	char *found = NULL;
	bool exists;
	if (cfg->persist && canon_path(host->root, cfg->persist, &found, &exists) < 0)
		return err_set(err, ERR_USAGE, EINVAL, "cannot resolve persistent folder '%s'",
			       cfg->persist);
	for (size_t l = 0; l < 2; l++) {
		for (size_t i = 0; i < lists[l]->n; i++) {
			const char *w = lists[l]->v[i];
			if (strcmp(path_base(w), ".sandbox-cache") != 0)
				continue;
			char *c = NULL;
			if (canon_path(host->root, w, &c, &exists) < 0)
				continue;
			if (found && strcmp(found, c) != 0) {
				err_set(err, ERR_USAGE, 0, "two persistent folders: '%s' and '%s'",
					found, c);
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

/*
 * Sort v (n entries of size bytes) through cmp, which takes pointers to
 * entries and breaks ties by address (the earlier entry first), and drop
 * each entry that is same() as the one before it, release() freeing what it
 * holds: the earlier one stands. Sorting makes this O(n log n): policies may
 * hold 10,000 paths, and a scan for duplicates as each is added was O(n^2).
 */
static int dedupe(void *v, size_t *n, size_t size, int (*cmp)(const void *, const void *),
		  bool (*same)(const void *, const void *), void (*release)(void *))
{
	if (*n < 2)
		return 0;
	char *base = v;
	const void **idx = malloc(*n * sizeof(*idx));
	bool *drop = calloc(*n, sizeof(*drop));
	if (!idx || !drop) {
		free(idx);
		free(drop);
		return -ENOMEM;
	}
	for (size_t i = 0; i < *n; i++)
		idx[i] = base + i * size;
	qsort(idx, *n, sizeof(*idx), cmp);
	for (size_t i = 1; i < *n; i++)
		if (same(idx[i], idx[i - 1]))
			drop[((const char *)idx[i] - base) / size] = true;
	free(idx);
	size_t k = 0;
	for (size_t i = 0; i < *n; i++) {
		if (drop[i]) {
			release(base + i * size);
			continue;
		}
		if (k != i)
			memcpy(base + k * size, base + i * size, size);
		k++;
	}
	*n = k;
	free(drop);
	return 0;
}

static int by_path_access(const void *a, const void *b)
{
	const struct grant *x = *(const struct grant *const *)a,
			   *y = *(const struct grant *const *)b;
	int c = strcmp(x->path, y->path);
	if (c == 0)
		c = (x->access > y->access) - (x->access < y->access);
	return c ? c : (x > y) - (x < y); /* ties: the earlier grant first */
}

/* The same path with the same access asked twice is one grant, and the first origin stands. */
static bool same_grant(const void *a, const void *b)
{
	const struct grant *x = a, *y = b;
	return strcmp(x->path, y->path) == 0 && x->access == y->access;
}

static void release_grant(void *a)
{
	struct grant *gr = a;
	free(gr->path);
	free(gr->requested);
	if (gr->has_fd)
		close(gr->fd);
}

static int by_skip_path(const void *a, const void *b)
{
	const struct grant_skip *x = *(const struct grant_skip *const *)a,
				*y = *(const struct grant_skip *const *)b;
	int c = strcmp(x->path, y->path);
	return c ? c : (x > y) - (x < y);
}

/* A path skipped twice (/etc walked for the baseline and for -r /) is said once. */
static bool same_skip(const void *a, const void *b)
{
	return strcmp(((const struct grant_skip *)a)->path, ((const struct grant_skip *)b)->path) ==
	       0;
}

static void release_skip(void *a)
{
	struct grant_skip *sk = a;
	free(sk->path);
	free(sk->reason);
}

/*
 * A workdir that does not exist is made, but only the folder itself: -C with
 * a typo must not leave a tree of folders behind, wherever it points.
 */
static int workdir_parent(const struct grants *g, const struct grants_host *host, bool allow_broad,
			  struct stepbox_err *err)
{
	for (size_t i = 0; i < g->n; i++) {
		const struct grant *gr = &g->v[i];
		if (gr->origin != ORIGIN_WORKDIR || gr->exists)
			continue;
		char parent[PATH_MAX], hp[PATH_MAX * 2];
		struct stat st;
		if (!path_parent(gr->path, parent, sizeof(parent)) ||
		    canon_host_path(host->root, parent, hp, sizeof(hp)) < 0)
			return 0;
		bool there = stat(hp, &st) == 0 && S_ISDIR(st.st_mode);
		/*
		 * A typo in -C, run as root, made /usr/local/<typo> and left it:
		 * never a new folder in / or a top-level system folder, nor
		 * anywhere beneath one but /var and /run, which hold services'
		 * own state (/var/lib/svc/runs/7 is made as asked)
		 */
		bool system = strcmp(parent, "/") == 0 || gb_system_top(parent) ||
			      (grants_system_folder(parent) && !path_beneath(parent, "/var") &&
			       !path_beneath(parent, "/run"));
		if (there && system && !allow_broad) {
			err_set(err, ERR_USAGE, 0,
				"refusing to create the workdir '%s' in the system folder '%s'",
				gr->path, parent);
			err_hint(err,
				 "check the path; a step's folder belongs elsewhere, or create "
				 "'%s' yourself if you mean it",
				 gr->path);
			return -EPERM;
		}
		if (there)
			return 0;
		err_set(err, ERR_USAGE, ENOENT, "workdir '%s': its folder '%s'", gr->path, parent);
		err_hint(err,
			 "stepbox creates a missing workdir, not the folders above it: check "
			 "the path, or create '%s' first",
			 parent);
		return -ENOENT;
	}
	return 0;
}

/* Canonical /etc and HOME, which every grant is compared with. */
static int build_init(struct build *b)
{
	const char *home = b->host->home ? b->host->home : getenv("HOME");
	bool exists;
	char norm[PATH_MAX];
	if (canon_path(b->host->root, "/etc", &b->etc, &exists) < 0 && !(b->etc = strdup("/etc")))
		return err_set(b->err, ERR_USAGE, ENOMEM, "grants");
	/* /dev, and under Landlock alone every other device mount, as resolved */
	const char *const *more = b->host->dev_mounts;
	for (size_t i = 0; i == 0 || (more && more[i - 1]); i++) {
		const char *d = i == 0 ? "/dev" : more[i - 1];
		char *c = NULL;
		if (canon_path(b->host->root, d, &c, &exists) < 0)
			c = strdup(d);
		if (c && strv_find(&b->devs, c) >= 0)
			free(c);
		else if (!c || strv_push_owned(&b->devs, c) < 0)
			return err_set(b->err, ERR_USAGE, ENOMEM, "grants");
	}
	/* a HOME that is relative or unresolvable names no folder to protect */
	if (home && home[0] == '/' && path_normalize(home, norm, sizeof(norm)) == 0 &&
	    canon_path(b->host->root, home, &b->home, &exists) == 0 &&
	    !(b->home_norm = strdup(norm)))
		return err_set(b->err, ERR_USAGE, ENOMEM, "grants");
	return 0;
}

int grants_build(const struct stepbox_config *cfg, const struct grants_host *host, struct grants *g,
		 struct stepbox_err *err)
{
	memset(g, 0, sizeof(*g));
	g->bind_entries = host->bind_entries;
	struct build b = {.g = g, .host = host, .cfg = cfg, .err = err, .budget = ETC_MAX_ENTRIES};
	struct rlimit nofile;
	/*
	 * What the soft limit leaves, less room for the grants landlock_build
	 * opens itself (the rest, up to 256 open at a time) and the launch's own.
	 */
	const rlim_t reserve = 512;
	if (host->open_fds && getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur > reserve)
		b.fds_left =
			nofile.rlim_cur == RLIM_INFINITY ? 1u << 20 : nofile.rlim_cur - reserve;
	int r = build_init(&b);
	if (r == 0)
		r = find_persist(cfg, host, &g->persist, err);
	if (r == 0)
		r = note_locations(&b);
	if (r == 0)
		r = gb_add_baseline(&b);
	if (r == 0)
		r = gb_add_extras(&b);
	const struct {
		const struct strv *list;
		unsigned access;
		enum grant_origin origin;
	} reqs[] = {
		{&cfg->read_policy, RX, ORIGIN_POLICY},
		{&cfg->read_flag, RX, ORIGIN_FLAG},
		{&cfg->write_policy, RX | GRANT_WRITE, ORIGIN_POLICY},
		{&cfg->write_flag, RX | GRANT_WRITE, ORIGIN_FLAG},
		{&cfg->unix_policy, GRANT_CONNECT, ORIGIN_POLICY},
		{&cfg->unix_flag, GRANT_CONNECT, ORIGIN_FLAG},
	};
	for (size_t l = 0; r == 0 && l < sizeof(reqs) / sizeof(reqs[0]); l++) {
		for (size_t i = 0; r == 0 && i < reqs[l].list->n; i++) {
			const char *p = reqs[l].list->v[i];
			bool is_persist = reqs[l].access & GRANT_WRITE &&
					  strcmp(path_base(p), ".sandbox-cache") == 0;
			unsigned access = is_persist && cfg->persist_shared ? RX : reqs[l].access;
			r = gb_add_requested(&b, p, access, reqs[l].origin, is_persist);
			if (r < 0 && reqs[l].list == &cfg->write_policy && i < cfg->write_where.n)
				err_where(err, cfg->write_where.v[i]);
		}
	}
	if (r == 0)
		r = gb_add_home_files(&b);
	/* as asked, so a symlink on the way to --persist is checked too */
	if (r == 0 && g->persist)
		r = gb_add_requested(&b, cfg->persist ? cfg->persist : g->persist,
				     cfg->persist_shared ? RX : RX | GRANT_WRITE, ORIGIN_PERSISTENT,
				     true);
	if (r == 0)
		r = gb_add_requested(&b, cfg->workdir ? cfg->workdir : host->cwd,
				     cfg->workdir_readonly ? RX : RX | GRANT_WRITE, ORIGIN_WORKDIR,
				     true);
	if (r == 0)
		r = workdir_parent(g, host, cfg->allow_broad_grants, err);
	if (r == 0)
		r = gb_add_home(&b);
	if (r == 0 && ((r = dedupe(g->v, &g->n, sizeof(*g->v), by_path_access, same_grant,
				   release_grant)) < 0 ||
		       (r = dedupe(g->skipped, &g->nskipped, sizeof(*g->skipped), by_skip_path,
				   same_skip, release_skip)) < 0))
		err_set(err, ERR_USAGE, -r, "grants");
	if (r == 0)
		r = grantcheck_missing_read_in_write(g, host, err);
	if (r == 0 && !host->namespaces)
		r = grantcheck_read_in_write_alone(g, err);
	free(b.etc);
	strv_release(&b.devs);
	free(b.home);
	free(b.home_norm);
	wlocs_release(&b.all);
	wlocs_release(&b.check);
	strv_release(&b.dirs);
	if (r < 0)
		grants_release(g);
	return r;
}

bool grants_should_hide_etc(void)
{
	/* root reads everything; a user in extra groups reads group-only files */
	return geteuid() == 0 || getegid() == 0 || getgroups(0, NULL) > 0;
}
