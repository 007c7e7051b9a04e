/*
 * mountns's plan, in the parent and pure (unit-tested): the grants made
 * mounts, in path order, then symlinks; and a built namespace's mounts
 * sorted by the plan (mountns_read_mounts). The probes and the id maps are
 * in mountns_probe.c, the child's new root in mountns_apply.c.
 */
#include "mountns.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "path.h"
#include "persist.h"
#include "pipes.h"

/*
 * What runc masks: kernel memory, keys, timers and scheduler internals,
 * triggers and hardware tables. Files get /dev/null, folders an empty
 * read-only tmpfs; the procfs itself is read-only, so /proc/sys and every
 * other writable entry refuse writes (EROFS) for root too.
 */
static const char *const proc_masks[] = {
	"/proc/acpi",        "/proc/asound",      "/proc/bus",           "/proc/config.gz",
	"/proc/driver",      "/proc/irq",         "/proc/kallsyms",      "/proc/kcore",
	"/proc/key-users",   "/proc/keys",        "/proc/kmsg",          "/proc/kpagecgroup",
	"/proc/kpagecount",  "/proc/kpageflags",  "/proc/latency_stats", "/proc/sched_debug",
	"/proc/scsi",        "/proc/slabinfo",    "/proc/sysrq-trigger", "/proc/timer_list",
	"/proc/timer_stats", "/proc/vmallocinfo",
};

/* The process's own descriptors, as every Linux system has them. */
static const struct {
	const char *path, *target;
} dev_links[] = {
	{"/dev/fd", "/proc/self/fd"},       {"/dev/stdin", "/proc/self/fd/0"},
	{"/dev/stdout", "/proc/self/fd/1"}, {"/dev/stderr", "/proc/self/fd/2"},
	{"/dev/ptmx", "pts/ptmx"}, /* the new devpts instance's multiplexer */
};

static int by_entry_path(const void *a, const void *b)
{
	return strcmp(((const struct mountns_entry *)a)->path,
		      ((const struct mountns_entry *)b)->path);
}

static int by_grant_path(const void *a, const void *b)
{
	return strcmp((*(const struct grant *const *)a)->path,
		      (*(const struct grant *const *)b)->path);
}

static int push(struct mountns_plan *p, size_t *cap, struct mountns_entry e)
{
	if (strv_grow(&p->v, cap, p->n, sizeof(*p->v), 64) < 0)
		return -ENOMEM;
	p->v[p->n++] = e;
	return 0;
}

/*
 * The kind of mount a granted path gets. /proc and /dev/pts are always made
 * anew (the host's would show its processes and terminals); a private place
 * (/tmp, /dev/shm) is a tmpfs of the step's own unless a grant names the
 * host's folder there too.
 */
static enum mountns_kind kind_of(const char *path, bool private_only)
{
	if (strcmp(path, "/proc") == 0)
		return MNT_PROC;
	if (strcmp(path, "/dev/pts") == 0)
		return MNT_DEVPTS;
	return private_only ? MNT_TMPFS : MNT_BIND;
}

/*
 * The folders to bind whole instead of entry by entry: the outermost split
 * folders (root's /etc), never / itself. Each holds entries hidden from the
 * sandbox, which get covered; the grants beneath it with no more access than
 * it has are inside the bind already. A few mounts instead of hundreds,
 * where Landlock holds too (its rules are on the allowed entries: a secret
 * the host replaces or adds while the step runs has none). Without it
 * (grants.bind_entries) a cover would be detached by the host's rename over
 * the secret, and a new one never covered: the entries are bound one by one.
 */
static const struct grant_split *split_over(const struct grants *g, const char *path)
{
	for (size_t i = 0; i < g->nsplits; i++)
		if (strcmp(g->splits[i].path, "/") != 0 && path_beneath(path, g->splits[i].path))
			return &g->splits[i];
	return NULL;
}

static bool outermost(const struct grants *g, const struct grant_split *s)
{
	for (size_t i = 0; i < g->nsplits; i++)
		if (&g->splits[i] != s && strcmp(g->splits[i].path, "/") != 0 &&
		    strcmp(g->splits[i].path, s->path) != 0 &&
		    path_beneath(s->path, g->splits[i].path))
			return false;
	return strcmp(s->path, "/") != 0;
}

static bool covered_by_split(const struct grants *g, const char *path, unsigned access)
{
	for (size_t i = 0; i < g->nsplits; i++)
		if (outermost(g, &g->splits[i]) && path_beneath(path, g->splits[i].path) &&
		    !(access & ~g->splits[i].access))
			return true;
	return false;
}

/*
 * The deepest mount planned so far above path. They are planned in path
 * order, one a path, so each folder above it is searched for: a scan of all
 * of them for each was quadratic (seconds at 10,000 grants).
 */
static const struct mountns_entry *enclosing(const struct mountns_plan *p, const char *path)
{
	char up[PATH_MAX];
	if (p->n == 0 || snprintf(up, sizeof(up), "%s", path) >= (int)sizeof(up))
		return NULL;
	for (char *slash; strcmp(up, "/") != 0 && (slash = strrchr(up, '/'));) {
		slash[slash == up ? 1 : 0] = '\0';
		struct mountns_entry key = {.path = up};
		const struct mountns_entry *e =
			bsearch(&key, p->v, p->n, sizeof(*p->v), by_entry_path);
		if (e)
			return e;
	}
	return NULL;
}

static int plan_splits(struct mountns_plan *p, size_t *cap, const struct grants *g)
{
	if (g->bind_entries)
		return 0; /* its entries are bound one by one; what is hidden is not there */
	int r = 0;
	for (size_t i = 0; r == 0 && i < g->nsplits; i++)
		if (outermost(g, &g->splits[i]))
			r = push(p, cap,
				 (struct mountns_entry){MNT_BIND, g->splits[i].path, NULL,
							g->splits[i].access, true, false});
	/* what the walk left out beneath them, unless a grant names it exactly */
	for (size_t i = 0; r == 0 && i < g->nskipped; i++) {
		const char *path = g->skipped[i].path;
		if (path[0] == '/' && split_over(g, path) && !grants_covers(g, path, GRANT_READ))
			r = push(p, cap,
				 (struct mountns_entry){MNT_HIDE, path, NULL, 0, true, false});
	}
	return r;
}

/*
 * Whether a place the step writes holds path: a private tmpfs, a write
 * grant. Among the first n entries, the ones in path order.
 */
static bool written_above(const struct mountns_plan *p, size_t n, const char *path)
{
	struct mountns_plan sorted = *p;
	sorted.n = n;
	for (const struct mountns_entry *e = enclosing(&sorted, path); e;
	     e = enclosing(&sorted, e->path))
		if (e->kind == MNT_TMPFS ||
		    (e->kind == MNT_BIND && (e->access & GRANT_WRITE) && !(e->access & GRANT_DEV) &&
		     strcmp(e->path, "/") != 0)) /* -w / (allowed broad): everything is written */
			return true;
	return false;
}

#define FIFO_BUDGET 20000 /* entries looked at, in all the folders searched */
#define FIFO_BUDGET_TEXT "20,000"

/* The plan a pipe search fills: its first n entries are in path order. */
struct fifo_plan {
	struct mountns_plan *p;
	size_t *cap, n;
};

/* a mount of its own there (a write grant inside) is its grant's to judge */
static bool planned(void *arg, const char *path)
{
	const struct fifo_plan *f = arg;
	struct mountns_entry key = {.path = path};
	return bsearch(&key, f->p->v, f->n, sizeof(*f->p->v), by_entry_path) != NULL;
}

static int hide_fifo(void *arg, const char *path)
{
	struct fifo_plan *f = arg;
	int r = strv_push(&f->p->fifos, path);
	return r < 0 ? r
		     : push(f->p, f->cap,
			    (struct mountns_entry){MNT_PIPE, f->p->fifos.v[f->p->fifos.n - 1], NULL,
						   0, true, false});
}

/*
 * A named pipe (FIFO) in a read-only bind: the kernel opens one for writing
 * on a read-only mount (nothing on the file system changes). Landlock's
 * rules refuse it, but under stacked the rule of a place the step writes (a
 * private /tmp or HOME, a write grant) allows writing beneath it, a folder
 * bound there too: a step wrote into a host process's pipe in -r /tmp/x
 * (red-team pass 3). There each one at the start is hidden, and a grant
 * that is one is hidden whole. Under mountns alone no rule stands behind
 * any bind; searching every read grant at each start is too slow (/usr),
 * so only what they show of /run is searched, where the system's pipes are
 * (systemd's /run/initctl: a root step with -r / wrote it), and the rest
 * is documented (docs/security.md).
 */
static int cover_fifos(struct mountns_plan *p, size_t *cap, size_t nbinds, bool run_only)
{
	struct fifo_plan plan = {p, cap, nbinds};
	struct pipes_search search = {planned, hide_fifo, &plan, FIFO_BUDGET};
	int r = 0;
	for (size_t i = 0; r == 0 && i < nbinds; i++) {
		struct mountns_entry *e = &p->v[i];
		if (e->kind != MNT_BIND || (e->access & GRANT_WRITE))
			continue;
		/* mountns alone: the grant in /run, or /run in the grant (unless a mount of its
		 * own) */
		const char *top = e->path;
		if (run_only && path_beneath("/run", e->path) && strcmp(e->path, "/run") != 0) {
			if (planned(&plan, "/run"))
				continue;
			top = "/run";
		} else if (run_only ? !path_beneath(e->path, "/run")
				    : !written_above(p, nbinds, e->path)) {
			continue;
		}
		struct stat st;
		if (lstat(e->path, &st) == 0 && S_ISFIFO(st.st_mode)) {
			err_warn("hiding '%s': a named pipe, which a read-only grant cannot keep "
				 "the "
				 "step from writing here",
				 e->path);
			e->kind = MNT_PIPE;
			continue;
		}
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s", top);
		r = pipes_find(&search, AT_FDCWD, top, path);
		if (r > 0) {
			/* said by pipes_say_unsearched: once for each grant, then with -v */
			char *said = strv_fmt(
				"'%s' was not searched whole for named pipes (%s): one there could "
				"be written, read-only as the grant is%s; `find '%s' -type p` "
				"lists those there now",
				top,
				r == 1 ? "over " FIFO_BUDGET_TEXT " entries in all"
				       : "a folder in it could not be listed, or lies "
					 "over " PIPES_DEPTH_TEXT " folders deep",
				run_only ? ""
					 : ", since it lies beneath a place the step writes (keep "
					   "it out of /tmp, HOME and the write grants, or grant "
					   "it read-write)",
				top);
			if (!said || strv_push(&p->unsearched, top) < 0) {
				free(said);
				r = -ENOMEM;
			} else {
				r = strv_push_owned(&p->unsearched_why, said) < 0 ? -ENOMEM : 0;
			}
		}
	}
	return r;
}

/*
 * The persistent folder P, and each folder between it and the write bind
 * holding it, is a mount point of its own: the kernel refuses to rename or
 * remove a mount point of the caller's namespace (EBUSY). Without it the
 * step moved P away from under its lock and made a new one, which the next
 * --persist step locked at once and used beside it. Entries in path order
 * on entry; pushed ones follow, for the caller to sort.
 */
static int pin_persist(struct mountns_plan *p, size_t *cap, const char *persist)
{
	char up[PATH_MAX];
	size_t sorted = p->n;
	if (!persist || snprintf(up, sizeof(up), "%s", persist) >= (int)sizeof(up))
		return 0;
	for (;;) {
		struct mountns_entry key = {.path = up};
		const struct mountns_entry *self =
			bsearch(&key, p->v, sorted, sizeof(*p->v), by_entry_path);
		const struct mountns_entry *e = enclosing(p, up);
		if (!e || e->kind != MNT_BIND || !(e->access & GRANT_WRITE))
			return 0; /* not in a place the step may rename in */
		if (!self) {
			int r = strv_push(&p->pins, up);
			/* the string stays where it is when the vector grows */
			if (r == 0)
				r = push(p, cap,
					 (struct mountns_entry){MNT_BIND, p->pins.v[p->pins.n - 1],
								NULL, e->access, false, false});
			if (r < 0)
				return r;
		}
		char *slash = strrchr(up, '/');
		if (!slash || slash == up)
			return 0;
		*slash = '\0';
		if (strcmp(up, e->path) == 0)
			return 0; /* the write bind itself: a mount point already */
	}
}

/* The write bind above path among the first n (sorted) entries, or NULL. */
static const struct mountns_entry *write_bind_above(const struct mountns_plan *p, size_t n,
						    const char *path, bool *exact)
{
	struct mountns_plan sorted = *p;
	sorted.n = n;
	struct mountns_entry key = {.path = path};
	*exact = bsearch(&key, p->v, n, sizeof(*p->v), by_entry_path) != NULL;
	const struct mountns_entry *e = enclosing(&sorted, path);
	return e && e->kind == MNT_BIND && (e->access & GRANT_WRITE) && !(e->access & GRANT_DEV)
		       ? e
		       : NULL;
}

/*
 * The protected paths that exist at the start (protect.h, in the grants):
 * each bound read-only onto itself inside its write grant (writes fail
 * with EROFS, a rename onto it with EBUSY), and each folder between it and
 * the grant bound onto itself, as P's are: a mount point cannot be renamed
 * away, so no .git is swapped for another beneath the step. Paths not in a
 * write bind (a grant read-only there already) need nothing. Entries in
 * path order on entry; pushed ones follow, for the caller to sort.
 */
static int pin_protected(struct mountns_plan *p, size_t *cap, const struct grants *g)
{
	size_t sorted = p->n;
	int r = 0;
	for (size_t i = 0; r == 0 && i < g->protected_pins.n; i++) {
		bool exact;
		const char *path = g->protected_pins.v[i];
		const struct mountns_entry *e = write_bind_above(p, sorted, path, &exact);
		if (e && !exact)
			r = push(p, cap,
				 (struct mountns_entry){MNT_BIND, path, NULL, e->access, true,
							false});
	}
	for (size_t i = 0; r == 0 && i < g->protected_ro.n; i++) {
		bool exact;
		const char *path = g->protected_ro.v[i];
		if (write_bind_above(p, sorted, path, &exact) && !exact)
			r = push(p, cap,
				 (struct mountns_entry){MNT_BIND, path, NULL,
							GRANT_READ | GRANT_EXEC, true, false});
	}
	return r;
}

/*
 * The grants' mounts, in path order: one per path, with the union of every
 * grant's access there, none where a bind above shows it already. *proc:
 * a new procfs is among them (its masks follow).
 */
static int plan_grants(struct mountns_plan *p, size_t *cap, const struct grants *g, bool *proc)
{
	const struct grant **v = malloc((g->n ? g->n : 1) * sizeof(*v));
	size_t *idmapped = malloc((g->n ? g->n : 1) * sizeof(*idmapped));
	if (!v || !idmapped) {
		free(v);
		free(idmapped);
		return -ENOMEM;
	}
	for (size_t i = 0; i < g->n; i++)
		v[i] = &g->v[i];
	qsort(v, g->n, sizeof(*v), by_grant_path);
	int r = 0;
	size_t nidmap = 0;
	for (size_t i = 0; r == 0 && i < g->n;) {
		/* one mount per path: the union of every grant's access */
		size_t j = i;
		unsigned access = 0;
		bool private_only = true, idmap = true;
		for (; j < g->n && strcmp(v[j]->path, v[i]->path) == 0; j++) {
			access |= v[j]->access;
			private_only &= (v[j]->access & GRANT_PRIVATE) != 0;
			idmap &= v[j]->world_readable_only;
		}
		const char *path = v[i]->path;
		i = j;
		if (strcmp(path, "/dev/ptmx") == 0)
			continue; /* a link into the new devpts, below */
		if (!g->bind_entries && covered_by_split(g, path, access))
			continue;
		/* inside an idmapped bind that allows as much: there already, hidden alike */
		bool inside = false;
		for (size_t k = 0; idmap && k < nidmap; k++)
			inside |= path_beneath(path, p->v[idmapped[k]].path) &&
				  !(access & ~p->v[idmapped[k]].access);
		if (inside)
			continue;
		enum mountns_kind k = kind_of(path, private_only);
		/*
		 * Beneath a plain bind of the same access, with no split between:
		 * its recursive bind shows it already, alike (/usr/bin in /usr).
		 * Only the same access: a grant asking less is a mount of its own.
		 */
		const struct mountns_entry *up = enclosing(p, path);
		if (k == MNT_BIND && !idmap && up && up->kind == MNT_BIND && !up->idmap &&
		    up->access == access && !split_over(g, path))
			continue;
		if (idmap) /* path order: an idmapped folder comes before what it holds */
			idmapped[nidmap++] = p->n;
		*proc |= k == MNT_PROC;
		/* a read grant gone by the time it is bound is dropped only where that
		 * narrows: not inside a bind that allows more (-w W -r W/.git) */
		bool optional = !(access & GRANT_WRITE) &&
				!(up && up->kind == MNT_BIND && (up->access & ~access));
		r = push(p, cap,
			 (struct mountns_entry){k, path, NULL, access, optional,
						idmap && k == MNT_BIND});
	}
	free(v);
	free(idmapped);
	return r;
}

/*
 * The mounts beyond the grants' own, after them (p->v in path order on
 * entry): P's pins, the protected paths and theirs, the named pipes
 * hidden, the split folders bound whole, the lock covered, the message
 * queues, /proc's masks.
 */
static int plan_covers(struct mountns_plan *p, size_t *cap, const struct grants *g, bool proc)
{
	size_t before = p->n;
	int r = pin_persist(p, cap, g->persist);
	if (r == 0 && p->n > before)
		qsort(p->v, p->n, sizeof(*p->v), by_entry_path);
	before = p->n;
	if (r == 0)
		r = pin_protected(p, cap, g);
	if (r == 0 && p->n > before)
		qsort(p->v, p->n, sizeof(*p->v), by_entry_path);
	if (r == 0)
		r = cover_fifos(p, cap, p->n, g->bind_entries);
	if (r == 0)
		r = plan_splits(p, cap, g);
	/* the lock of the persistent folder: the step can neither open nor remove it */
	if (r == 0 && g->persist) {
		p->lock_path = strv_fmt("%s/%s", g->persist, PERSIST_LOCK_NAME);
		r = p->lock_path ? push(p, cap,
					(struct mountns_entry){MNT_HIDE, p->lock_path, NULL, 0,
							       true, false})
				 : -ENOMEM;
	}
	/* the IPC namespace's own queues, where Landlock can see (and allow) them */
	if (r == 0)
		r = push(p, cap,
			 (struct mountns_entry){MNT_MQUEUE, "/dev/mqueue", NULL, 0, false, false});
	for (size_t i = 0; r == 0 && proc && i < sizeof(proc_masks) / sizeof(proc_masks[0]); i++)
		r = push(p, cap,
			 (struct mountns_entry){MNT_MASK, proc_masks[i], NULL, 0, true, false});
	return r;
}

/* The symlinks, after every mount: the grants', the split folders', /dev's. */
static int plan_links(struct mountns_plan *p, size_t *cap, const struct grants *g)
{
	int r = 0;
	for (size_t i = 0; r == 0 && i < g->n; i++) {
		const struct grant *gr = &g->v[i];
		/* asked for through a symlink: the link too (not a spelling with . or ..) */
		if (strcmp(gr->requested, gr->path) != 0 && path_plain(gr->requested))
			r = push(p, cap,
				 (struct mountns_entry){MNT_SYMLINK, gr->requested, gr->path, 0,
							true, false});
	}
	for (size_t i = 0; r == 0 && i < g->nlinks; i++)
		if (g->bind_entries || !split_over(g, g->links[i].path))
			r = push(p, cap,
				 (struct mountns_entry){MNT_SYMLINK, g->links[i].path,
							g->links[i].target, 0, true, false});
	for (size_t i = 0; r == 0 && i < sizeof(dev_links) / sizeof(dev_links[0]); i++)
		r = push(p, cap,
			 (struct mountns_entry){MNT_SYMLINK, dev_links[i].path, dev_links[i].target,
						0, true, false});
	return r;
}

/*
 * Mounts first, in path order (a folder before what is mounted inside it),
 * then symlinks, each made only where nothing is: a grant asked for through a
 * symlink (/lib64 -> usr/lib64 on merged-/usr) gets that symlink; symlinks in
 * folders granted entry by entry (root's /etc) are recreated; /dev gets its
 * usual links.
 */
static int plan_mounts(struct mountns_plan *p, const struct grants *g)
{
	size_t cap = 0;
	bool proc = false;
	int r = plan_grants(p, &cap, g, &proc);
	if (r == 0)
		r = plan_covers(p, &cap, g, proc);
	if (r < 0)
		return r;
	qsort(p->v, p->n, sizeof(*p->v), by_entry_path);
	p->nmounts = p->n;
	return plan_links(p, &cap, g);
}

/* Private tmpfs: never the host's, and never larger than the tmp limit. */
/* The fewest inodes a private tmpfs gets, whatever its size. */
#define TMP_MIN_INODES 1024

void mountns_set_tmp_size(struct mountns_plan *p, uint64_t bytes)
{
	char size[64];
	uint64_t inodes = bytes / 4096 > TMP_MIN_INODES ? bytes / 4096 : TMP_MIN_INODES;
	if (bytes)
		snprintf(size, sizeof(size), "size=%" PRIu64 ",nr_inodes=%" PRIu64, bytes, inodes);
	else
		snprintf(size, sizeof(size), "size=25%%");
	snprintf(p->tmpfs_opts[0], sizeof(p->tmpfs_opts[0]), "mode=1777,%s", size);
	snprintf(p->tmpfs_opts[1], sizeof(p->tmpfs_opts[1]), "mode=0700,%s", size);
	p->tmp_bytes = bytes;
}

int mountns_plan(struct mountns_plan *p, const struct stepbox_config *cfg, const struct grants *g)
{
	memset(p, 0, sizeof(*p));
	mountns_set_tmp_size(p, 0);
	p->clone_flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC;
	p->idmap_userns = -1;
	/*
	 * Root that may mount needs no user namespace; root without
	 * CAP_SYS_ADMIN (a container's) gets one, mapping itself, as anyone else.
	 */
	p->userns = mountns_userns();
	if (p->userns)
		p->clone_flags |= CLONE_NEWUSER;
	/* a new network namespace has only a loopback device, and it is down */
	if (cfg->net == NET_NONE || cfg->net == NET_HOSTS)
		p->clone_flags |= CLONE_NEWNET;
	p->uid = geteuid();
	p->gid = getegid();
	int r = g ? plan_mounts(p, g) : 0;
	if (r < 0)
		mountns_release(p);
	return r;
}

void mountns_release(struct mountns_plan *p)
{
	free(p->lock_path);
	p->lock_path = NULL;
	strv_release(&p->fifos);
	strv_release(&p->unsearched);
	strv_release(&p->unsearched_why);
	strv_release(&p->pins);
	free(p->v);
	p->v = NULL;
	p->n = p->nmounts = 0;
}

/* The last mount entry whose path is exactly path (mounts are in path order). */
static const struct mountns_entry *mount_at(const struct mountns_plan *p, const char *path)
{
	size_t lo = 0, hi = p->nmounts;
	while (lo < hi) { /* the first entry past path */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(p->v[mid].path, path) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && strcmp(p->v[lo - 1].path, path) == 0 ? &p->v[lo - 1] : NULL;
}

/*
 * The deepest entry of the plan that covers a mount point, or NULL: the
 * point itself, then each folder above it, each found by binary search (a
 * policy may hold 10,000 grants, and every mount asks).
 */
static const struct mountns_entry *covering(const struct mountns_plan *p, const char *inside)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", inside) >= (int)sizeof(buf))
		return NULL;
	for (;;) {
		const struct mountns_entry *e = mount_at(p, buf);
		if (e)
			return e;
		char *slash = strrchr(buf, '/');
		if (!slash || (slash == buf && buf[1] == '\0'))
			return NULL;
		slash[slash == buf ? 1 : 0] = '\0';
	}
}

static int push_id(int **v, size_t *n, size_t *cap, int id)
{
	if (strv_grow(v, cap, *n, sizeof(int), 32) < 0)
		return -ENOMEM;
	(*v)[(*n)++] = id;
	return 0;
}

int mountns_read_mounts(const struct mountns_plan *p, pid_t init, struct mountns_mounts *mm)
{
	memset(mm, 0, sizeof(*mm));
	char path[64], *line = NULL;
	size_t cap = 0;
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)init);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	int r = 0;
	/* whole lines: a mount's source is anyone's text, and a line cut short
	 * would read as a made-up mount (remount_all) */
	while (r == 0 && getline(&line, &cap, f) > 0) {
		/* mount points as init sees them */
		struct path_mount m;
		if (!path_mount_fields(line, &m))
			continue;
		const char *mp = m.mnt;
		long n = strtol(m.id, NULL, 10);
		int mid = n > 0 && n < INT_MAX ? (int)n : -1;
		r = push_id(&mm->all, &mm->nall, &mm->capall, mid);
		const struct mountns_entry *e = covering(p, mp);
		if (r < 0 || !e)
			continue;
		bool priv = e->kind == MNT_TMPFS || e->kind == MNT_DEVPTS || e->kind == MNT_MQUEUE;
		bool wr = e->kind == MNT_BIND && (e->access & GRANT_WRITE) &&
			  !(e->access & GRANT_DEV);
		bool ux = e->kind == MNT_BIND && (e->access & GRANT_CONNECT);
		/* a private mount counts as itself only, not a host folder bound in it */
		if (priv && strcmp(mp, e->path) != 0)
			continue;
		if (priv || wr)
			r = push_id(&mm->write, &mm->nwrite, &mm->capwrite, mid);
		else if (ux)
			r = push_id(&mm->unix_, &mm->nunix, &mm->capunix, mid);
	}
	if (r == 0 && ferror(f))
		r = -EIO;
	free(line);
	fclose(f);
	if (r < 0)
		mountns_mounts_release(mm);
	return r;
}

void mountns_mounts_release(struct mountns_mounts *mm)
{
	free(mm->write);
	free(mm->unix_);
	free(mm->all);
	memset(mm, 0, sizeof(*mm));
}
