#include "grants.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "canon.h"
#include "grantcheck.h"
#include "path.h"

#define RX (GRANT_READ | GRANT_EXEC)
#define DEVRW (GRANT_READ | GRANT_WRITE | GRANT_DEV)

/* Which layers a baseline entry is for. */
enum { BOTH, NS_ONLY };

/*
 * DESIGN.md, "What every command may touch". Under the namespaces /proc,
 * /dev/pts, /dev/shm and /tmp are made anew for the step (GRANT_PRIVATE):
 * nothing of the host's. Landlock alone has no private ones: the host's
 * /proc stays, only the step's own terminal is granted (grants_host.ttys)
 * besides /dev/ptmx, and /dev/shm and /tmp are not granted at all.
 */
static const struct {
	const char *path;
	unsigned access;
	int when;
} baseline[] = {
	{"/usr", RX, BOTH},
	{"/bin", RX, BOTH},
	{"/sbin", RX, BOTH},
	{"/lib", RX, BOTH},
	{"/lib32", RX, BOTH},
	{"/lib64", RX, BOTH},
	{"/libx32", RX, BOTH},
	{"/etc", GRANT_READ, BOTH},
	{"/proc", GRANT_READ, BOTH},
	{"/sys/devices/system/cpu", GRANT_READ, BOTH},
	{"/dev/null", DEVRW, BOTH},
	{"/dev/zero", DEVRW, BOTH},
	{"/dev/full", DEVRW, BOTH},
	{"/dev/random", DEVRW, BOTH},
	{"/dev/urandom", DEVRW, BOTH},
	{"/dev/tty", DEVRW, BOTH},
	{"/dev/ptmx", DEVRW, BOTH},
	{"/dev/pts", DEVRW | GRANT_PRIVATE, NS_ONLY},
	{"/dev/shm", GRANT_READ | GRANT_WRITE | GRANT_PRIVATE, NS_ONLY},
	{"/tmp", GRANT_READ | GRANT_WRITE | GRANT_EXEC | GRANT_PRIVATE, NS_ONLY},
};

/* The access of baseline entry i under host's layers; 0: not for them. */
static unsigned baseline_access(size_t i, const struct grants_host *host)
{
	if (baseline[i].when == NS_ONLY && !host->namespaces)
		return 0;
	if (strcmp(baseline[i].path, "/proc") == 0 && host->namespaces)
		return baseline[i].access | GRANT_PRIVATE;
	return baseline[i].access;
}

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

/*
 * A workdir or write grant that is one of these itself hands the step the
 * system (run from /, where systemd starts services, the default workdir made
 * every file writable). Folders beneath them are fine.
 */
static const char *const system_dirs[] = {
	"/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/boot", "/dev", "/proc", "/sys", "/var", "/run",
};

#define ETC_MAX_DEPTH 32
#define ETC_MAX_ENTRIES 200000

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
	g->v[g->n++] = (struct grant){path, requested, access, origin, exists, false, false, false, -1};
	return 0;
nomem:
	free(path);
	free(requested);
	return -ENOMEM;
}

/* Duplicates are dropped once at the end (dedupe_skipped): a scan here was O(n^2). */
static int skip(struct grants *g, const char *path, enum grant_origin origin, const char *why)
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
	int r = skip(g, path, origin, why);
	if (r == 0)
		g->skipped[g->nskipped - 1].missing = true;
	return r;
}

/* A folder a read grant covered but that holds hidden entries. */
static int add_split(struct grants *g, const char *path, unsigned access)
{
	if (g->nsplits >= STRV_MAX)
		return -E2BIG;
	if (strv_grow(&g->splits, &g->capsplits, g->nsplits, sizeof(*g->splits), 16) < 0)
		return -ENOMEM;
	char *p = strdup(path);
	if (!p)
		return -ENOMEM;
	g->splits[g->nsplits].path = p;
	g->splits[g->nsplits].access = access;
	g->nsplits++;
	return 0;
}

static int add_link(struct grants *g, int dfd, const char *name, const char *path)
{
	char target[PATH_MAX];
	ssize_t n = readlinkat(dfd, name, target, sizeof(target) - 1);
	if (n < 0)
		return 0;
	target[n] = '\0';
	if (g->nlinks >= STRV_MAX)
		return -E2BIG;
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

static bool world_readable(const struct stat *st)
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
	    !world_readable(&st))
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

/* A place the step may write, where a previous step may have planted symlinks. */
struct wloc {
	char *path;       /* canonical */
	const char *what; /* "write grant", "workdir", "persistent folder" */
	bool writable;    /* by this step (a shared persistent folder is read-only to it) */
};

struct wlocs {
	struct wloc *v; /* sorted by path once complete */
	size_t n, cap;
};

/* The state of one grants_build: what every resolution is checked against. */
struct build {
	struct grants *g;
	const struct grants_host *host;
	const struct stepbox_config *cfg;
	struct stepbox_err *err;
	size_t budget;          /* entries the walks may still visit */
	char *etc;              /* canonical /etc */
	struct strv devs;       /* canonical /dev and the other device mounts (walks_dev) */
	bool devices;           /* the walk leaves out device nodes, not secrets */
	bool yields;            /* the walk adds nothing in a place the step writes */
	char *home, *home_norm; /* canonical and normalized HOME, or NULL */
	struct wlocs all;       /* every write location (a browser inside is covered) */
	struct wlocs check;     /* those a crossed symlink must not lie in */
	const char *req;        /* the grant being resolved, for messages */
	enum grant_origin origin;
	bool refused; /* err holds a refusal that must reach the caller as is */
	struct strv dirs; /* real folders resolution has met (canon_memo) */
	size_t fds_left;  /* read grants' fds it may still hold (grants_host.open_fds) */
};

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
static const struct wloc *holder(const struct wlocs *l, const char *path)
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
 * Whether a walk leaves path to a write location: an entry of a read grant
 * split around /etc or /dev that lies in a place the step writes is that
 * place's (-r /dev -w /dev/shm), as it would be had the grant been one rule.
 * A read rule there would be refused by grantcheck_read_in_write_alone.
 */
static bool yields_to_write(const struct build *b, const char *path)
{
	const struct wloc *w = b->yields ? holder(&b->all, path) : NULL;
	return w && w->writable;
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
	const struct wloc *w = holder(&b->check, link);
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

static int resolve(struct build *b, const char *req, enum grant_origin origin, char **canon,
		   bool *exists, struct canon_fd *held)
{
	b->req = req;
	b->origin = origin;
	return canon_memo(b->host->root, req, canon, exists, check_link, b, &b->dirs, held);
}

static bool is_system_top(const char *path)
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
	if (is_system_top(path))
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
		r = note_location(b, cfg->persist, "persistent folder", true,
				  !cfg->persist_shared);
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
 * Grant path (and what is beneath it) with access, leaving out everything that
 * is not world-readable: as root, DAC no longer protects /etc/shadow, SSH host
 * keys or /etc/ssl/private, so only an allow list of world-readable entries
 * keeps them out. A folder whose whole subtree is world-readable becomes one
 * rule (asked for as req); a folder holding a secret is not granted itself (a
 * rule would cover the secret) and its entries are granted one by one.
 * Symlinks get no rule: access through them is decided on their targets. Runs
 * at every launch as root, so it stats relative to an open folder. Returns 1
 * when path was granted whole, 0 when it was split or left out, or a negative
 * errno (-E2BIG past ETC_MAX_ENTRIES).
 */
static int walk_readable(struct build *b, int dfd, const char *name, const char *path,
			 const char *req, unsigned access, enum grant_origin origin, int depth,
			 unsigned char type)
{
	struct grants *g = b->g;
	struct stat st;
	/* not whole either: a rule on its folder would cover its device nodes */
	if (yields_to_write(b, path))
		return 0;
	/*
	 * A symlink hides nothing (its target has a rule of its own or none)
	 * and needs no rule: readdir's type spares its stat. Under the
	 * namespaces a split folder is bound whole, so its links are there,
	 * unless its entries are bound one by one (bind_entries).
	 */
	bool link = type == DT_LNK;
	if (!link && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (link || S_ISLNK(st.st_mode)) {
		int r = b->host->bind_entries ? add_link(g, dfd, name, path) : 0;
		return r < 0 ? r : 1;
	}
	if (b->devices && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
		return skip(g, path, origin, "a device node: a grant gives none but the baseline's");
	if (!b->devices && !world_readable(&st))
		return skip(g, path, origin, "not world-readable: hidden from the sandbox");
	if (!S_ISDIR(st.st_mode))
		return add(g, strdup(path), strdup(req), access, origin, true) < 0 ? -ENOMEM : 1;
	if (depth >= ETC_MAX_DEPTH)
		return skip(g, path, origin, "nested too deep to check what it holds");
	struct path_dir d;
	if (path_dir_open(&d, dfd, name) < 0)
		return skip(g, path, origin, "cannot be listed to check what it holds");
	size_t mark = g->n, skipmark = g->nskipped;
	bool whole = true;
	int r = 0;
	struct path_entry de;
	while (path_dir_next(&d, &de)) {
		if (b->budget == 0) {
			r = -E2BIG;
			break;
		}
		b->budget--;
		char child[PATH_MAX];
		if (snprintf(child, sizeof(child), "%s/%s", strcmp(path, "/") ? path : "",
			     de.name) >= (int)sizeof(child)) {
			whole = false; /* left out: the folder must not cover it */
			continue;
		}
		r = walk_readable(b, d.fd, de.name, child, child, access, origin, depth + 1,
				  de.type);
		if (r < 0)
			break;
		whole &= r == 1 && g->nskipped == skipmark;
	}
	/* a listing cut short may have missed a secret: the folder is not whole */
	whole &= d.err == 0;
	path_dir_close(&d);
	if (r < 0)
		return r;
	if (!whole)
		return add_split(g, path, access);
	/* all clean: one rule for the folder replaces its children's */
	while (g->n > mark) {
		g->n--;
		free(g->v[g->n].path);
		free(g->v[g->n].requested);
	}
	return add(g, strdup(path), strdup(req), access, origin, true) < 0 ? -ENOMEM : 1;
}

/*
 * Grant path showing only what others may read: whole, bound through an
 * idmapped mount, where the namespaces can make one on its file system
 * (nothing to walk at each launch); else by the walk. Returns as
 * walk_readable does.
 */
static int add_world_readable(struct build *b, int dfd, const char *name, const char *path,
			      const char *req, unsigned access, enum grant_origin origin,
			      unsigned char type)
{
	struct stat st;
	b->devices = false;
	if (!b->host->idmap || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    st.st_dev != b->host->idmap_dev || S_ISLNK(st.st_mode))
		return walk_readable(b, dfd, name, path, req, access, origin, 0, type);
	int r = add(b->g, strdup(path), strdup(req), access, origin, true);
	if (r < 0)
		return r;
	b->g->v[b->g->n - 1].world_readable_only = true;
	return 1;
}

/*
 * What a grant must be walked for. A read grant, where root's /etc is
 * walked: /etc's secrets. Under Landlock alone, any grant but the
 * baseline's devices: device nodes. The namespaces bind every grant nodev,
 * and Landlock has no such right: a rule on /dev, or on a folder that holds
 * it (-r /), opened the user's other terminals, and as root the consoles
 * (/dev/vcs) and disks.
 */
static bool walks_etc(const struct build *b, unsigned access)
{
	return b->host->hide_etc_secrets && !(access & GRANT_WRITE);
}

static bool walks_dev(const struct build *b, unsigned access)
{
	return !b->host->namespaces && !(access & GRANT_DEV);
}

/* A device folder (b->devs) that path is (0), lies in (1) or holds (2). */
static bool dev_near(const struct build *b, const char *path, int how)
{
	for (size_t i = 0; i < b->devs.n; i++) {
		const char *d = b->devs.v[i];
		if (how == 0 ? strcmp(path, d) == 0
			     : how == 1 ? path_beneath(path, d) : path_beneath(d, path))
			return true;
	}
	return false;
}

static bool walked(const struct build *b, const char *canon, unsigned access)
{
	return (walks_etc(b, access) &&
		(path_beneath(canon, b->etc) || path_beneath(b->etc, canon))) ||
	       (walks_dev(b, access) && (dev_near(b, canon, 1) || dev_near(b, canon, 2)));
}

/* Grant path with no rule on a device node in it (walks_dev). */
static int add_without_devices(struct build *b, int dfd, const char *name, const char *path,
			       const char *req, unsigned access, enum grant_origin origin,
			       unsigned char type)
{
	b->devices = true;
	return walk_readable(b, dfd, name, path, req, access, origin, 0, type);
}

/* An entry of a split folder: a rule, or for a symlink only its entry. */
static int add_entry(struct build *b, int dfd, const char *name, const char *path,
		     unsigned access, enum grant_origin origin)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (S_ISLNK(st.st_mode))
		return b->host->keep_links ? add_link(b->g, dfd, name, path) : 0;
	return add(b->g, strdup(path), strdup(path), access, origin, true);
}

/*
 * A grant of a folder that holds /etc or /dev (-r /), when they are walked:
 * each entry but the ones on the way becomes a rule of its own with the same
 * access, the way down continues, and /etc or /dev itself is walked.
 * Symlinks get no rule (their targets decide), only an entry for a mount
 * namespace to recreate.
 */
static int split_toward(struct build *b, int dfd, const char *name, const char *path,
			unsigned access, enum grant_origin origin)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return skip(b->g, path, origin, "cannot be listed to leave out what it holds");
	}
	bool etc = walks_etc(b, access), dev = walks_dev(b, access);
	int r = 0;
	struct dirent *de;
	while (r == 0 && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (b->budget == 0) {
			r = -E2BIG;
			break;
		}
		b->budget--;
		char child[PATH_MAX];
		if (snprintf(child, sizeof(child), "%s/%s", strcmp(path, "/") ? path : "",
			     de->d_name) >= (int)sizeof(child))
			continue; /* left out: only narrows */
		int dfd2 = dirfd(d);
		if (yields_to_write(b, child))
			continue;
		if (etc && strcmp(child, b->etc) == 0)
			r = add_world_readable(b, dfd2, de->d_name, child, child, access, origin,
					       de->d_type);
		else if (dev && dev_near(b, child, 0))
			r = add_without_devices(b, dfd2, de->d_name, child, child, access, origin,
						de->d_type);
		else if ((etc && path_beneath(b->etc, child)) || (dev && dev_near(b, child, 2)))
			r = split_toward(b, dfd2, de->d_name, child, access, origin);
		else
			r = add_entry(b, dfd2, de->d_name, child, access, origin);
		r = r < 0 ? r : 0;
	}
	closedir(d);
	return r;
}

/*
 * Whether req, as written, names canon with no symlink on the way: a hidden
 * entry is granted only when asked for by its own name. A link another step
 * planted in a folder it may write (shared/cfg -> /etc/shadow) would name
 * one otherwise, for a step that only asked for shared/cfg.
 */
static bool named_as_is(const struct build *b, const char *req, const char *canon)
{
	char text[PATH_MAX];
	return path_lexical(b->host->cwd, req, text, sizeof(text)) == 0 && strcmp(text, canon) == 0;
}

/*
 * A grant that walked() says to walk. One inside /etc is walked as the
 * baseline's /etc is, unless it names a hidden entry exactly (-r
 * /etc/shadow asks for that file, and gets it); one inside /dev leaves out
 * its device nodes, even one named; one that holds either is split around
 * them. Write grants are taken as given for /etc: a broad one is refused
 * unless allow_broad_grants, and then it is what was asked for. Takes
 * ownership of canon.
 */
static int add_walked(struct build *b, char *canon, const char *req, unsigned access,
		      enum grant_origin origin)
{
	char hp[PATH_MAX * 2];
	int r;
	if ((r = canon_host_path(b->host->root, canon, hp, sizeof(hp))) < 0) {
		free(canon);
		return r;
	}
	struct stat st;
	/* a read grant that is itself in a write location stays refused as asked */
	const struct wloc *w = holder(&b->all, canon);
	b->yields = !(access & GRANT_WRITE) && !(w && w->writable);
	if (walks_etc(b, access) && path_beneath(canon, b->etc)) {
		bool named = origin != ORIGIN_BASELINE && origin != ORIGIN_BASELINE_TARGET &&
			     named_as_is(b, req, canon) && lstat(hp, &st) == 0 &&
			     !world_readable(&st);
		if (named)
			return add(b->g, canon, strdup(req), access, origin, true);
		r = add_world_readable(b, AT_FDCWD, hp, canon, req, access, origin, DT_UNKNOWN);
	} else if (walks_dev(b, access) && dev_near(b, canon, 1)) {
		r = add_without_devices(b, AT_FDCWD, hp, canon, req, access, origin, DT_UNKNOWN);
	} else {
		r = split_toward(b, AT_FDCWD, hp, canon, access, origin);
	}
	free(canon);
	return r < 0 ? r : 0;
}

/*
 * Grant one requested path after resolving it. A missing read grant is
 * skipped (dropping an allow only narrows the sandbox); a missing write grant
 * is an error unless it is the workdir or persistent folder, created later.
 */
static int add_requested(struct build *b, const char *req, unsigned access,
			 enum grant_origin origin, bool create)
{
	struct grants *g = b->g;
	char *canon = NULL;
	bool exists = false;
	/* the baseline lists what a system may have; what it lacks is skipped */
	bool optional = !(access & GRANT_WRITE) || origin == ORIGIN_BASELINE;
	/* a read grant's fd serves its Landlock rule; a write grant's folder may be made anew */
	struct canon_fd held = {-1, false};
	bool hold = b->fds_left > 0 && !(access & GRANT_WRITE);
	int r = resolve(b, req, origin, &canon, &exists, hold ? &held : NULL);
	/* one that ends up split around /etc's secrets or devices is not one rule */
	bool split = exists && canon && walked(b, canon, access);
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
		return skip(g, req, origin, "made anew for the step: the host's is never bound in");
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
		r = add_walked(b, canon, req, access, origin);
	else
		r = add(g, canon, strdup(req), access, origin, exists);
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
			       "more than %d grants", req, ETC_MAX_ENTRIES, STRV_MAX);
	return r < 0 ? err_set(b->err, ERR_USAGE, -r, "grant '%s'", req) : 0;
}

/*
 * A daemon that keeps the resolver's configuration (systemd-resolved,
 * resolvconf, NetworkManager) replaces its file beneath /run by a rename
 * when the network changes. A rule or a bind on that file holds the old one
 * (Landlock refuses the new file, a bind shows the old text), and a step
 * that outlives a DHCP renewal loses DNS. So an /etc entry that resolves to
 * a file in a folder beneath /run (not /run itself, nor a user's /run/user,
 * nor a folder others may write) is granted by that folder, as its daemon
 * writes it. Not where /etc's secrets are hidden (root): the daemon may
 * write a secret there later (NetworkManager's system-connections), which
 * the folder's rule or bind would cover and a root step reads as its owner
 * (a second red-team pass); root keeps the file, and its old text after a
 * renewal. True with canon replaced by that folder.
 */
static bool by_daemon_folder(const struct build *b, char **canon)
{
	char dir[PATH_MAX], hp[PATH_MAX * 2];
	struct stat st;
	if (b->host->hide_etc_secrets || !path_beneath(*canon, "/run") ||
	    path_beneath(*canon, "/run/user") ||
	    !path_parent(*canon, dir, sizeof(dir)) || strcmp(dir, "/run") == 0 ||
	    canon_host_path(b->host->root, *canon, hp, sizeof(hp)) < 0 || lstat(hp, &st) < 0 ||
	    !S_ISREG(st.st_mode) || canon_host_path(b->host->root, dir, hp, sizeof(hp)) < 0 ||
	    lstat(hp, &st) < 0 || !S_ISDIR(st.st_mode) || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return false;
	char *d = strdup(dir);
	if (!d)
		return false;
	free(*canon);
	*canon = d;
	return true;
}

static int add_baseline(struct build *b)
{
	for (size_t i = 0; i < sizeof(baseline) / sizeof(baseline[0]); i++) {
		unsigned access = baseline_access(i, b->host);
		int r = 0;
		/* a private place is made anew at its path: the host's is irrelevant */
		if (access & GRANT_PRIVATE)
			r = add(b->g, strdup(baseline[i].path), strdup(baseline[i].path), access,
				ORIGIN_BASELINE, true);
		else if (access)
			r = add_requested(b, baseline[i].path, access, ORIGIN_BASELINE, false);
		if (r < 0 && b->refused)
			return r;
		if (r < 0)
			return err_set(b->err, ERR_UNAVAILABLE, -r, "baseline grant '%s'",
				       baseline[i].path);
	}
	for (size_t i = 0; b->host->cgroups && b->host->cgroups[i]; i++) {
		int r = add_requested(b, b->host->cgroups[i], GRANT_READ, ORIGIN_BASELINE, false);
		if (r < 0 && b->refused)
			return r;
	}
	/* Landlock alone: the step's own terminal, never the host's other ones */
	for (size_t i = 0; !b->host->namespaces && b->host->ttys && b->host->ttys[i]; i++) {
		int r = add_requested(b, b->host->ttys[i], DEVRW, ORIGIN_BASELINE, false);
		if (r < 0 && b->refused)
			return r;
	}
	for (size_t i = 0; i < sizeof(etc_explicit) / sizeof(etc_explicit[0]); i++) {
		char *canon = NULL, hp[PATH_MAX * 2];
		bool exists;
		int r = resolve(b, etc_explicit[i], ORIGIN_BASELINE_TARGET, &canon, &exists, NULL);
		if (b->refused) {
			free(canon);
			return r;
		}
		if (r < 0 || !exists || strcmp(canon, etc_explicit[i]) == 0) {
			/* missing, or not a symlink: already covered by /etc */
			free(canon);
			continue;
		}
		by_daemon_folder(b, &canon);
		if (!b->host->hide_etc_secrets) {
			r = add(b->g, canon, strdup(etc_explicit[i]), GRANT_READ,
				ORIGIN_BASELINE_TARGET, true);
		} else {
			r = canon_host_path(b->host->root, canon, hp, sizeof(hp));
			if (r == 0)
				r = add_world_readable(b, AT_FDCWD, hp, canon, canon, GRANT_READ,
						       ORIGIN_BASELINE_TARGET, DT_UNKNOWN);
			free(canon);
		}
		if (r < 0)
			return err_set(b->err, ERR_UNAVAILABLE, -r, "baseline grant '%s'",
				       etc_explicit[i]);
	}
	return 0;
}

/*
 * The browser's own folder holds its libraries and resources. A browser the
 * step installed into the persistent folder (or any write grant) is already
 * covered there: granting more would let that step choose what the next run
 * gets, so nothing is added, and it is never an error.
 */
static int add_browser(struct build *b, const char *exe)
{
	char norm[PATH_MAX], *canon = NULL;
	bool exists;
	const struct wloc *w = NULL;
	if (path_normalize(exe, norm, sizeof(norm)) == 0)
		w = holder(&b->all, norm);
	int r = w ? 0 : resolve(b, exe, ORIGIN_BROWSER, &canon, &exists, NULL);
	if (b->refused)
		return r;
	if (!w && r == 0 && exists)
		w = holder(&b->all, canon);
	if (w) {
		free(canon);
		char *why = strv_fmt("already covered by the %s '%s'", w->what, w->path);
		r = why ? skip(b->g, exe, ORIGIN_BROWSER, why) : -ENOMEM;
		free(why);
		return r < 0 ? err_set(b->err, ERR_USAGE, -r, "AGENT_BROWSER_EXECUTABLE_PATH") : 0;
	}
	if (r < 0 || !exists) {
		free(canon);
		r = skip(b->g, exe, ORIGIN_BROWSER, "does not exist");
		return r < 0 ? err_set(b->err, ERR_USAGE, -r, "AGENT_BROWSER_EXECUTABLE_PATH") : 0;
	}
	char *slash = strrchr(canon, '/');
	if (slash && slash != canon)
		*slash = '\0';
	r = add_requested(b, canon, RX, ORIGIN_BROWSER, false);
	free(canon);
	return r;
}

static int add_extras(struct build *b)
{
	const struct grants_host *host = b->host;
	if (host->extra_paths) {
		char *copy = strdup(host->extra_paths);
		if (!copy)
			return err_set(b->err, ERR_USAGE, ENOMEM, "SANDBOX_EXTRA_SYSTEM_PATHS");
		int r = 0;
		for (char *save = NULL, *p = strtok_r(copy, ":", &save); p && r == 0;
		     p = strtok_r(NULL, ":", &save)) {
			if (p[0] != '/')
				r = skip(b->g, p, ORIGIN_EXTRA, "not an absolute path");
			else
				r = add_requested(b, p, RX, ORIGIN_EXTRA, false);
		}
		free(copy);
		if (r < 0)
			return r;
	}
	if (host->browser_exe && host->browser_exe[0] == '/')
		return add_browser(b, host->browser_exe);
	return 0;
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
			if (g->v[i].has_fd)
				close(g->v[i].fd);
		} else {
			g->v[k++] = g->v[i];
		}
	}
	g->n = k;
	free(drop);
	return 0;
}

static int by_skip_path(const void *a, const void *b)
{
	const struct grant_skip *x = *(const struct grant_skip *const *)a,
				*y = *(const struct grant_skip *const *)b;
	int c = strcmp(x->path, y->path);
	return c ? c : (x > y) - (x < y);
}

/* A path skipped twice (/etc walked for the baseline and for -r /) is said once. */
static int dedupe_skipped(struct grants *g)
{
	if (g->nskipped < 2)
		return 0;
	const struct grant_skip **idx = malloc(g->nskipped * sizeof(*idx));
	bool *drop = calloc(g->nskipped, sizeof(*drop));
	if (!idx || !drop) {
		free(idx);
		free(drop);
		return -ENOMEM;
	}
	for (size_t i = 0; i < g->nskipped; i++)
		idx[i] = &g->skipped[i];
	qsort(idx, g->nskipped, sizeof(*idx), by_skip_path);
	for (size_t i = 1; i < g->nskipped; i++)
		if (strcmp(idx[i]->path, idx[i - 1]->path) == 0)
			drop[idx[i] - g->skipped] = true;
	free(idx);
	size_t k = 0;
	for (size_t i = 0; i < g->nskipped; i++) {
		if (drop[i]) {
			free(g->skipped[i].path);
			free(g->skipped[i].reason);
		} else {
			g->skipped[k++] = g->skipped[i];
		}
	}
	g->nskipped = k;
	free(drop);
	return 0;
}

/*
 * A workdir that does not exist is made, but only the folder itself: -C with
 * a typo must not leave a tree of folders behind, wherever it points.
 */
static int workdir_parent(const struct grants *g, const struct grants_host *host,
			  bool allow_broad, struct stepbox_err *err)
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
		bool system = strcmp(parent, "/") == 0 || is_system_top(parent) ||
			      (grants_system_folder(parent) && !path_beneath(parent, "/var") &&
			       !path_beneath(parent, "/run"));
		if (there && system && !allow_broad) {
			err_set(err, ERR_USAGE, 0,
				"refusing to create the workdir '%s' in the system folder '%s'",
				gr->path, parent);
			err_hint(err, "check the path; a step's folder belongs elsewhere, or create "
				      "'%s' yourself if you mean it", gr->path);
			return -EPERM;
		}
		if (there)
			return 0;
		err_set(err, ERR_USAGE, ENOENT, "workdir '%s': its folder '%s'", gr->path, parent);
		err_hint(err, "stepbox creates a missing workdir, not the folders above it: check "
			      "the path, or create '%s' first", parent);
		return -ENOENT;
	}
	return 0;
}

/* grants.h: by the names keys and credentials go by, in dir itself (not beneath). */
bool grants_holds_keys(const char *dir)
{
	static const char *const names[] = {"id_rsa", "id_ed25519", "id_ecdsa", "id_dsa",
					    "credentials", ".netrc", ".pgpass", "authorized_keys"};
	static const char *const ends[] = {".pem", ".key", ".p12", ".pfx", ".kdbx", ".gpg"};
	struct path_dir d;
	struct path_entry e;
	bool yes = false;
	if (path_dir_open(&d, AT_FDCWD, dir) < 0)
		return false;
	while (!yes && path_dir_next(&d, &e)) {
		size_t len = strlen(e.name);
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
			yes |= strcmp(e.name, names[k]) == 0;
		for (size_t k = 0; k < sizeof(ends) / sizeof(ends[0]); k++)
			yes |= len > strlen(ends[k]) && strcmp(e.name + len - strlen(ends[k]), ends[k]) == 0;
	}
	path_dir_close(&d);
	return yes;
}

/* home_files / --home-file: the user's own files, handed over read-only one by one. */
static int add_home_files(struct build *b)
{
	const struct {
		const struct strv *list;
		enum grant_origin origin;
	} lists[] = {{&b->cfg->home_policy, ORIGIN_POLICY}, {&b->cfg->home_flag, ORIGIN_FLAG}};
	for (size_t l = 0; l < 2; l++) {
		for (size_t i = 0; i < lists[l].list->n; i++) {
			if (!b->home_norm)
				return err_set(b->err, ERR_USAGE, 0, "home file '%s': HOME is not set to "
					       "an absolute path", lists[l].list->v[i]);
			const char *name = lists[l].list->v[i];
			char *path = strv_fmt("%s/%s", b->home_norm, name);
			int r = path ? 0 : -ENOMEM;
			/* files one by one: HOME itself, or a folder holding keys, hands
			 * them all over */
			char norm[PATH_MAX];
			if (r == 0 && path_normalize(path, norm, sizeof(norm)) == 0 &&
			    strcmp(norm, b->home_norm) == 0) {
				err_set(b->err, ERR_USAGE, 0, "home file '%s' is HOME itself", name);
				err_hint(b->err, "name the files the step needs one by one "
					 "(--home-file .gitconfig)");
				r = -EPERM;
			}
			if (r == 0 && grants_holds_keys(path)) {
				err_set(b->err, ERR_USAGE, 0, "home file '%s': '%s' is a folder "
					"holding keys or credentials", name, path);
				err_hint(b->err, "name the files the step needs one by one (--home-file "
					 "%s/config, --home-file %s/known_hosts), never the keys",
					 name, name);
				r = -EPERM;
			}
			if (r == 0)
				r = add_requested(b, path, GRANT_READ, lists[l].origin, false);
			free(path);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/*
 * Under the namespaces HOME is a private folder of the step's own: present
 * (tools expect it), holding nothing of the user's but the files a grant
 * names (bound into it), and gone after the run. Not where a grant covers
 * HOME already, or HOME is / or a system folder (a service user's).
 */
static int add_home(struct build *b)
{
	const char *home = b->home;
	if (!b->host->namespaces || !home || strcmp(home, "/") == 0 || is_system_top(home))
		return 0;
	for (size_t i = 0; i < b->g->n; i++)
		if (!(b->g->v[i].access & GRANT_PRIVATE) && path_beneath(home, b->g->v[i].path))
			return 0;
	return add(b->g, strdup(home), strdup(home),
		   GRANT_PRIVATE | GRANT_READ | GRANT_WRITE | GRANT_EXEC, ORIGIN_BASELINE, true);
}

/* Canonical /etc and HOME, which every grant is compared with. */
static int build_init(struct build *b)
{
	const char *home = b->host->home ? b->host->home : getenv("HOME");
	bool exists;
	char norm[PATH_MAX];
	if (canon_path(b->host->root, "/etc", &b->etc, &exists) < 0 &&
	    !(b->etc = strdup("/etc")))
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

int grants_build(const struct stepbox_config *cfg, const struct grants_host *host,
		 struct grants *g, struct stepbox_err *err)
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
		b.fds_left = nofile.rlim_cur == RLIM_INFINITY ? 1u << 20 : nofile.rlim_cur - reserve;
	int r = build_init(&b);
	if (r == 0)
		r = find_persist(cfg, host, &g->persist, err);
	if (r == 0)
		r = note_locations(&b);
	if (r == 0)
		r = add_baseline(&b);
	if (r == 0)
		r = add_extras(&b);
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
			r = add_requested(&b, p, access, reqs[l].origin, is_persist);
			if (r < 0 && reqs[l].list == &cfg->write_policy && i < cfg->write_where.n)
				err_where(err, cfg->write_where.v[i]);
		}
	}
	if (r == 0)
		r = add_home_files(&b);
	/* as asked, so a symlink on the way to --persist is checked too */
	if (r == 0 && g->persist)
		r = add_requested(&b, cfg->persist ? cfg->persist : g->persist,
				  cfg->persist_shared ? RX : RX | GRANT_WRITE, ORIGIN_PERSISTENT, true);
	if (r == 0)
		r = add_requested(&b, cfg->workdir ? cfg->workdir : host->cwd,
				  cfg->workdir_readonly ? RX : RX | GRANT_WRITE, ORIGIN_WORKDIR,
				  true);
	if (r == 0)
		r = workdir_parent(g, host, cfg->allow_broad_grants, err);
	if (r == 0)
		r = add_home(&b);
	if (r == 0 && ((r = dedupe(g)) < 0 || (r = dedupe_skipped(g)) < 0))
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

/*
 * mkdir -p that never follows a symlink: a previous step may have replaced a
 * folder on the way with a link since the grants were resolved, and stepbox
 * runs as the caller here. Returns an O_PATH fd of the folder, or -errno with
 * err naming the component that failed.
 */
static int make_dir(const char *path, mode_t mode, const char *what, struct stepbox_err *err)
{
	char bad[PATH_MAX];
	int fd = path_mkdir_nofollow(path, mode, bad, sizeof(bad));
	if (fd == -ELOOP) {
		err_set(err, ERR_USAGE, 0, "create %s '%s': '%s' is a symlink", what, path, bad);
		err_hint(err, "stepbox never follows a symlink where it creates its folders; a "
			      "previous step may have planted it: remove it");
		return -ELOOP;
	}
	if (fd == -ENOTDIR || fd == -EEXIST) {
		/* -C FILE: the user's words to fix, not the sandbox's */
		err_set(err, ERR_USAGE, 0, "%s '%s': '%s' is not a folder", what, path,
			bad[0] ? bad : path);
		err_hint(err, "give a folder (or a path to make one): -C DIR, --persist DIR");
		return -ENOTDIR;
	}
	if (fd < 0)
		return err_set(err, ERR_UNAVAILABLE, -fd, "create %s '%s' (at '%s')", what, path,
			       bad[0] ? bad : path);
	return fd;
}

int grants_prepare_dirs(const struct grants *g, struct stepbox_err *err)
{
	if (g->persist) {
		int dfd = make_dir(g->persist, 0700, "persistent folder", err);
		if (dfd < 0)
			return dfd;
		/* O_EXCL | O_NOFOLLOW: never overwrite or follow what is there; one is enough */
		int fd = openat(dfd, "CACHEDIR.TAG", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
							     O_CLOEXEC | O_NOCTTY, 0644);
		int e = errno;
		close(dfd);
		if (fd >= 0) {
			ssize_t w = write(fd, cachedir_tag, sizeof(cachedir_tag) - 1);
			close(fd);
			if (w != (ssize_t)sizeof(cachedir_tag) - 1)
				return err_set(err, ERR_UNAVAILABLE, EIO, "write '%s/CACHEDIR.TAG'",
					       g->persist);
		} else if (e != EEXIST) {
			return err_set(err, ERR_UNAVAILABLE, e, "create '%s/CACHEDIR.TAG'",
				       g->persist);
		}
	}
	int fd = make_dir(g->workdir, 0755, "workdir", err);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

bool grants_should_hide_etc(void)
{
	/* root reads everything; a user in extra groups reads group-only files */
	return geteuid() == 0 || getegid() == 0 || getgroups(0, NULL) > 0;
}
