#include "mountns.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"
#include "harden.h"
#include "path.h"
#include "persist.h"
#include "pipes.h"

/* The scratch mount the new root is built in, and where the host root goes. */
#define BASE "/tmp"
#define NEWROOT "/newroot"
#define OLDROOT "/oldroot"
#define HIDDEN "/hidden" /* an empty file of mode 0 on the scratch root */


/*
 * What runc masks: kernel memory, keys, timers and scheduler internals,
 * triggers and hardware tables. Files get /dev/null, folders an empty
 * read-only tmpfs; the procfs itself is read-only, so /proc/sys and every
 * other writable entry refuse writes (EROFS) for root too.
 */
static const char *const proc_masks[] = {
	"/proc/acpi", "/proc/asound", "/proc/bus", "/proc/config.gz", "/proc/driver",
	"/proc/irq", "/proc/kallsyms", "/proc/kcore", "/proc/key-users", "/proc/keys",
	"/proc/kmsg", "/proc/kpagecgroup", "/proc/kpagecount", "/proc/kpageflags",
	"/proc/latency_stats", "/proc/sched_debug", "/proc/scsi", "/proc/slabinfo",
	"/proc/sysrq-trigger", "/proc/timer_list", "/proc/timer_stats", "/proc/vmallocinfo",
};

/* The process's own descriptors, as every Linux system has them. */
static const struct {
	const char *path, *target;
} dev_links[] = {
	{"/dev/fd", "/proc/self/fd"},
	{"/dev/stdin", "/proc/self/fd/0"},
	{"/dev/stdout", "/proc/self/fd/1"},
	{"/dev/stderr", "/proc/self/fd/2"},
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
 * Mounts first, in path order (a folder before what is mounted inside it),
 * then symlinks, each made only where nothing is: a grant asked for through a
 * symlink (/lib64 -> usr/lib64 on merged-/usr) gets that symlink; symlinks in
 * folders granted entry by entry (root's /etc) are recreated; /dev gets its
 * usual links.
 */
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
		    strcmp(g->splits[i].path, s->path) != 0 && path_beneath(s->path, g->splits[i].path))
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
		const struct mountns_entry *e = bsearch(&key, p->v, p->n, sizeof(*p->v), by_entry_path);
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
			r = push(p, cap, (struct mountns_entry){MNT_BIND, g->splits[i].path, NULL,
								 g->splits[i].access, true, false});
	/* what the walk left out beneath them, unless a grant names it exactly */
	for (size_t i = 0; r == 0 && i < g->nskipped; i++) {
		const char *path = g->skipped[i].path;
		if (path[0] == '/' && split_over(g, path) && !grants_covers(g, path, GRANT_READ))
			r = push(p, cap, (struct mountns_entry){MNT_HIDE, path, NULL, 0, true, false});
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
		     : push(f->p, f->cap, (struct mountns_entry){MNT_PIPE,
								  f->p->fifos.v[f->p->fifos.n - 1],
								  NULL, 0, true, false});
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
		/* mountns alone: the grant in /run, or /run in the grant (unless a mount of its own) */
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
			err_warn("hiding '%s': a named pipe, which a read-only grant cannot keep the "
				 "step from writing here", e->path);
			e->kind = MNT_PIPE;
			continue;
		}
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s", top);
		r = pipes_find(&search, AT_FDCWD, top, path);
		if (r > 0) {
			err_warn("'%s' was not searched whole for named pipes (%s): one there could "
				 "be written, read-only as the grant is%s", top,
				 r == 1 ? "over " FIFO_BUDGET_TEXT " entries in all"
					: "a folder in it could not be listed, or lies over "
					  PIPES_DEPTH_TEXT " folders deep",
				 run_only ? "" : ", since it lies beneath a place the step writes; keep "
						 "it out of /tmp, HOME and the write grants, or grant "
						 "it read-write");
			r = 0;
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
		const struct mountns_entry *self = bsearch(&key, p->v, sorted, sizeof(*p->v),
							   by_entry_path);
		const struct mountns_entry *e = enclosing(p, up);
		if (!e || e->kind != MNT_BIND || !(e->access & GRANT_WRITE))
			return 0; /* not in a place the step may rename in */
		if (!self) {
			int r = strv_push(&p->pins, up);
			/* the string stays where it is when the vector grows */
			if (r == 0)
				r = push(p, cap, (struct mountns_entry){MNT_BIND, p->pins.v[p->pins.n - 1],
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

static int plan_mounts(struct mountns_plan *p, const struct grants *g)
{
	size_t cap = 0;
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
	bool proc = false;
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
		proc |= k == MNT_PROC;
		/* a read grant gone by the time it is bound is dropped only where that
		 * narrows: not inside a bind that allows more (-w W -r W/.git) */
		bool optional = !(access & GRANT_WRITE) &&
				!(up && up->kind == MNT_BIND && (up->access & ~access));
		r = push(p, &cap, (struct mountns_entry){k, path, NULL, access, optional,
							 idmap && k == MNT_BIND});
	}
	free(v);
	free(idmapped);
	size_t before = p->n;
	if (r == 0 && (r = pin_persist(p, &cap, g->persist)) == 0 && p->n > before)
		qsort(p->v, p->n, sizeof(*p->v), by_entry_path);
	if (r == 0)
		r = cover_fifos(p, &cap, p->n, g->bind_entries);
	if (r == 0)
		r = plan_splits(p, &cap, g);
	/* the lock of the persistent folder: the step can neither open nor remove it */
	if (r == 0 && g->persist) {
		p->lock_path = strv_fmt("%s/%s", g->persist, PERSIST_LOCK_NAME);
		r = p->lock_path ? push(p, &cap, (struct mountns_entry){MNT_HIDE, p->lock_path, NULL,
									 0, true, false})
				 : -ENOMEM;
	}
	/* the IPC namespace's own queues, where Landlock can see (and allow) them */
	if (r == 0)
		r = push(p, &cap, (struct mountns_entry){MNT_MQUEUE, "/dev/mqueue", NULL, 0, false, false});
	for (size_t i = 0; r == 0 && proc && i < sizeof(proc_masks) / sizeof(proc_masks[0]); i++)
		r = push(p, &cap, (struct mountns_entry){MNT_MASK, proc_masks[i], NULL, 0, true, false});
	if (r < 0)
		return r;
	qsort(p->v, p->n, sizeof(*p->v), by_entry_path);
	p->nmounts = p->n;
	for (size_t i = 0; r == 0 && i < g->n; i++) {
		const struct grant *gr = &g->v[i];
		/* asked for through a symlink: the link too (not a spelling with . or ..) */
		if (strcmp(gr->requested, gr->path) != 0 && path_plain(gr->requested))
			r = push(p, &cap, (struct mountns_entry){MNT_SYMLINK, gr->requested,
								 gr->path, 0, true, false});
	}
	for (size_t i = 0; r == 0 && i < g->nlinks; i++)
		if (g->bind_entries || !split_over(g, g->links[i].path))
			r = push(p, &cap, (struct mountns_entry){MNT_SYMLINK, g->links[i].path,
								 g->links[i].target, 0, true, false});
	for (size_t i = 0; r == 0 && i < sizeof(dev_links) / sizeof(dev_links[0]); i++)
		r = push(p, &cap, (struct mountns_entry){MNT_SYMLINK, dev_links[i].path,
							 dev_links[i].target, 0, true, false});
	return r;
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

bool mountns_userns(void)
{
	return geteuid() != 0 || !harden_has_cap(CAP_SYS_ADMIN);
}

int mountns_plan(struct mountns_plan *p, const struct stepbox_config *cfg,
		 const struct grants *g)
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
	if (cfg->net == NET_NONE)
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
	strv_release(&p->pins);
	free(p->v);
	p->v = NULL;
	p->n = p->nmounts = 0;
}


/* The child that holds the new user namespace until its maps are written. */
static int idmap_holder(void *arg)
{
	char c;
	/* shares our descriptors: returns once the parent closes the write end */
	return (int)read(*(int *)arg, &c, 1);
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, text, strlen(text));
	int r = n == (ssize_t)strlen(text) ? 0 : n < 0 ? -errno : -EIO;
	close(fd);
	return r;
}

int mountns_idmap_userns(const char *probe, dev_t *dev)
{
	/*
	 * One id, the highest a map may name, for itself: no file system owner
	 * is ever that id, so every owner shows as unmapped.
	 */
	static const char map[] = "4294967294 4294967294 1\n";
	static char stack[8192] __attribute__((aligned(16)));
	struct stat st;
	if (stat(probe, &st) < 0)
		return -errno;
	*dev = st.st_dev;
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	/* CLONE_VM: nothing to copy; the child only blocks on the pipe */
	pid_t pid = clone(idmap_holder, stack + sizeof(stack),
			  CLONE_NEWUSER | CLONE_VM | CLONE_FILES | SIGCHLD, &pipefd[0]);
	int r = pid < 0 ? -errno : 0, ns = -1;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	if (r == 0)
		r = write_file(path, map);
	snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
	if (r == 0)
		r = write_file(path, map);
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	if (r == 0 && (ns = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		r = -errno;
	close(pipefd[1]);
	if (pid > 0)
		while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
			;
	close(pipefd[0]);
	/* the file system, and every mount beneath probe, must take the idmap */
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (__u64)ns};
	int t = r == 0 ? open_tree(AT_FDCWD, probe, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
							  AT_RECURSIVE)
		       : -1;
	if (r == 0 && t < 0)
		r = -errno;
	if (r == 0 && mount_setattr(t, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0)
		r = -errno;
	if (t >= 0)
		close(t);
	if (r < 0 && ns >= 0)
		close(ns);
	return r < 0 ? r : ns;
}

/* A sysctl's number, or dflt where it does not exist (or cannot be read). */
static long sysctl_or(const char *path, long dflt)
{
	char *text = path_read_file(path, 1 << 16);
	long v = text ? strtol(text, NULL, 10) : dflt;
	free(text);
	return v;
}

/*
 * The first steps of every new root, the probe's and a run's alike: nothing
 * propagates back to the host, and a scratch tmpfs becomes the root with the
 * host's at OLDROOT, the new root a second tmpfs inside it. No grant and no
 * path a step may write is involved, so a failure here is the host's word
 * (a namespace without the right to mount, a chroot whose root is no mount
 * point): the one kind auto falls back for. 0, or -errno with *what.
 */
static int scratch_root(const char **what)
{
	*what = "make the mounts private";
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	*what = "mount the scratch tmpfs on " BASE;
	if (mount("tmpfs", BASE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
		return -errno;
	*what = "prepare the new root in " BASE;
	if (chdir(BASE) < 0 || mkdir(BASE NEWROOT, 0755) < 0 || mkdir(BASE OLDROOT, 0755) < 0 ||
	    mount("tmpfs", BASE NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
		return -errno;
	*what = "pivot into the scratch root";
	if (syscall(SYS_pivot_root, BASE, BASE OLDROOT) < 0 || chdir("/") < 0)
		return -errno;
	return 0;
}

/* gVisor's mount namespaces, measured (runsc 20221219, docs/containers.md) */
#define GVISOR_MOUNTS_HINT                                                                      \
	"gVisor (runsc) makes mount namespaces but not the root stepbox builds in them "        \
	"(pivot_root and MS_PRIVATE: EINVAL; open_tree, move_mount, mount_setattr: not "        \
	"implemented; a bind cannot be made read-only): run stepbox where Linux answers the "   \
	"step's calls (a runc or crun container, or the host)"

/* A new procfs that the host refuses (a masked /proc): the probe's second question. */
static bool proc_refused(int e)
{
	return e == EPERM || e == EACCES;
}

/*
 * The probe's PID 1: the scratch root and a new procfs in it, as a run
 * makes them. 0; 128 + errno when the procfs is refused; PROBE_MOUNT +
 * errno when the namespace refuses mounts at all (a namespace made without
 * capabilities: Ubuntu's AppArmor restriction, or a filter refusing mount);
 * PROBE_ROOT + errno when the scratch root cannot be made otherwise.
 */
#define PROBE_ROOT 64
#define PROBE_MOUNT 192
static int probe_proc(void)
{
	const char *what;
	int r = scratch_root(&what);
	if (r < 0)
		return (-r == EPERM || -r == EACCES) && strstr(what, "pivot") == NULL
			       ? PROBE_MOUNT + (-r & 0x3f)
			       : PROBE_ROOT + (-r & 0x3f);
	if (mkdir(NEWROOT "/proc", 0555) < 0)
		return PROBE_ROOT + (errno & 0x3f);
	return mount("proc", NEWROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
		     NULL) < 0 ? 128 + (errno & 0x3f) : 0;
}

/*
 * Make the namespaces in a child, and in its PID 1 a new procfs: a
 * container's masked /proc lets the namespaces be made and then refuses
 * the procfs, and check must say what run will meet.
 */
int mountns_probe(const struct mountns_plan *p, struct stepbox_err *err)
{
	pid_t pid = fork();
	if (pid < 0)
		return err_set(err, ERR_UNAVAILABLE, errno, "fork to probe namespaces");
	if (pid == 0) {
		if (unshare(p->clone_flags) < 0)
			_exit(errno & 0x3f);
		/* mapped as a run's init is: an unmapped uid can create nothing */
		int r = mountns_write_maps(p, getpid(), NULL);
		if (r < 0)
			_exit(-r & 0x3f);
		pid_t init = fork();
		if (init == 0)
			_exit(probe_proc());
		int st;
		if (init < 0 || waitpid(init, &st, 0) < 0)
			_exit(0);
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 0);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	int e = WIFEXITED(st) ? WEXITSTATUS(st) : EINVAL;
	if (e >= PROBE_MOUNT)
		return mountns_mount_refused(e - PROBE_MOUNT, err);
	if (e >= 128)
		return mountns_proc_failed(e - 128, err);
	if (e >= PROBE_ROOT) {
		err_set(err, ERR_UNAVAILABLE, e - PROBE_ROOT, "namespaces: cannot make a new root");
		if (harden_gvisor())
			err_hint(err, "%s", GVISOR_MOUNTS_HINT);
		else
			err_hint(err, "pivot_root is refused here: a chroot whose root is not a mount "
				      "point (bind it onto itself first) or a security module; or use "
				      "--backend landlock (auto does)");
		return -(e - PROBE_ROOT);
	}
	return e == 0 ? 0 : mountns_unavailable(p, e, err);
}

int mountns_mount_refused(int e, struct stepbox_err *err)
{
	err_set(err, ERR_UNAVAILABLE, e, "namespaces: the new mount namespace refuses mounts");
	if (harden_gvisor())
		err_hint(err, "%s", GVISOR_MOUNTS_HINT);
	else if (sysctl_or("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", 0) == 1)
		err_hint(err, "Ubuntu's AppArmor makes unprivileged user namespaces without "
			      "capabilities (kernel.apparmor_restrict_unprivileged_userns=1): give "
			      "stepbox an AppArmor profile with the 'userns,' rule, or set the sysctl "
			      "to 0; or use --backend landlock (auto does)");
	else
		err_hint(err, "a security module or a seccomp filter refuses mount() in the new "
			      "namespace; allow it there, or use --backend landlock (auto does)");
	return -e;
}

int mountns_proc_failed(int e, struct stepbox_err *err)
{
	err_set(err, ERR_UNAVAILABLE, e, "namespaces: cannot mount a new /proc");
	if (e == EPERM)
		err_hint(err, "the kernel refuses a new procfs in a user namespace while parts of "
			      "the host's /proc are covered by other mounts (a container's masked "
			      "/proc): unmask it (Docker: --security-opt systempaths=unconfined; "
			      "Podman: --security-opt unmask=ALL; Kubernetes: securityContext "
			      "procMount: Unmasked), or use --backend landlock (auto does)");
	return -e;
}

int mountns_unavailable(const struct mountns_plan *p, int e, struct stepbox_err *err)
{
	/* EPERM while every sysctl allows them, under a seccomp filter: the filter */
	bool sysctls_allow =
		sysctl_or("/proc/sys/user/max_user_namespaces", 1) > 0 &&
		sysctl_or("/proc/sys/kernel/unprivileged_userns_clone", 1) == 1 &&
		sysctl_or("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", 0) == 0;
	err_set(err, ERR_UNAVAILABLE, e, "cannot create %snamespaces",
		p->userns ? "user and mount " : "mount ");
	if (p->userns && e == ENOSPC)
		err_hint(err, "the limit on user namespaces is reached or 0 here: the sysctl "
			      "user.max_user_namespaces must be above 0");
	else if (p->userns && e == EPERM && geteuid() == 0)
		err_hint(err, "root without CAP_SYS_ADMIN tried a user namespace: a container's "
			      "seccomp profile (Docker's default) or an LSM refuses it; allow unshare "
			      "there, or use --backend landlock");
	else if (p->userns && e == EPERM && sysctls_allow && harden_filtered())
		err_hint(err, "the sysctls allow user namespaces, so it is this process's seccomp "
			      "filter (a container's profile: Docker's and containerd's default "
			      "refuse unshare without CAP_SYS_ADMIN): run the container with a "
			      "profile that allows unshare and clone with CLONE_NEWUSER, or use "
			      "--backend landlock (auto does)");
	else if (p->userns)
		err_hint(err, "unprivileged user namespaces are off here, or a container's seccomp "
			      "profile refuses them: check the sysctls "
			      "user.max_user_namespaces (must be > 0), "
			      "kernel.unprivileged_userns_clone (Debian, must be 1) and "
			      "kernel.apparmor_restrict_unprivileged_userns (Ubuntu, must be 0)");
	else
		err_hint(err, "a container may forbid mount namespaces (its seccomp profile or "
			      "missing CAP_SYS_ADMIN)");
	return -e;
}

int mountns_write_maps(const struct mountns_plan *p, pid_t child, struct stepbox_err *err)
{
	if (!p->userns)
		return 0;
	char path[64], map[64];
	int r;
	/* an unprivileged writer may map only itself, and only after setgroups is denied */
	snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)child);
	if ((r = write_file(path, "deny")) < 0 && r != -ENOENT)
		return err_set(err, ERR_UNAVAILABLE, -r, "write '%s'", path);
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)child);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)p->uid, (unsigned)p->uid);
	if ((r = write_file(path, map)) < 0)
		return err_set(err, ERR_UNAVAILABLE, -r, "write '%s'", path);
	snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)child);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)p->gid, (unsigned)p->gid);
	if ((r = write_file(path, map)) < 0)
		return err_set(err, ERR_UNAVAILABLE, -r, "write '%s'", path);
	return 0;
}

/*
 * The tmpfs mounts that are ours: the new root and the private ones. Mount
 * points and symlinks are only ever made on these, never in a granted (host)
 * folder, even if a grant vanished between resolution and mounting, and
 * through no symlink: a host folder on the way is one a step beside this
 * one may write, and a link swapped in there could lead a mkdir anywhere.
 * known is the last folder found to be ours, known_fd that folder opened
 * (what is made goes in there, by name): entries come in path order, so
 * most share it.
 */
struct ours {
	dev_t dev[8];
	size_t n;
	char known[PATH_MAX];
	int known_fd; /* -1: none */
};

static bool dev_ours(const struct ours *o, dev_t dev)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->dev[i] == dev)
			return true;
	return false;
}

static int add_ours(struct ours *o, const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	if (o->n < sizeof(o->dev) / sizeof(o->dev[0]))
		o->dev[o->n++] = st.st_dev;
	return 0;
}

static void forget_known(struct ours *o)
{
	if (o->known_fd >= 0)
		close(o->known_fd);
	o->known_fd = -1;
	o->known[0] = '\0';
}

/* fd, a folder opened through no symlink, if it is on our tmpfs; else -EXDEV (closed) */
static int keep_ours(int fd, const struct ours *o)
{
	struct stat st;
	if (fd < 0)
		return fd;
	int r = fstat(fd, &st) < 0 ? -errno : dev_ours(o, st.st_dev) ? fd : -EXDEV;
	if (r < 0)
		close(fd);
	return r;
}

/* mkdir -p of dir, on one of our tmpfs mounts only: known is dir after. */
static int ensure_dir(const char *dir, struct ours *o)
{
	if (o->known_fd >= 0 && strcmp(dir, o->known) == 0)
		return 0;
	int fd = keep_ours(path_open_nofollow(dir, O_DIRECTORY), o);
	if (fd == -ENOENT) {
		char up[PATH_MAX];
		if (!path_parent(dir, up, sizeof(up)))
			return -ENAMETOOLONG;
		int r = ensure_dir(up, o); /* ours: so is what is made in it */
		if (r < 0)
			return r;
		const char *name = strrchr(dir, '/') + 1;
		if (mkdirat(o->known_fd, name, 0755) < 0 && errno != EEXIST)
			return -errno;
		fd = openat(o->known_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		fd = keep_ours(fd < 0 ? -errno : fd, o);
	}
	if (fd < 0)
		return fd;
	forget_known(o);
	o->known_fd = fd;
	snprintf(o->known, sizeof(o->known), "%s", dir);
	return 0;
}

static int make_parents(const char *path, struct ours *o)
{
	char dir[PATH_MAX];
	return path_parent(path, dir, sizeof(dir)) ? ensure_dir(dir, o) : -ENAMETOOLONG;
}

/*
 * A folder grant needs a folder mount point, a file grant a file one: binding
 * one onto the other either fails or hides the wrong thing, so the type of the
 * mount point is made from the source's, and an existing one must match.
 * Made first and looked at only when it is there already: most are new.
 */
static int mount_point(const char *dst, bool dir, struct ours *o)
{
	int r = make_parents(dst, o); /* on our tmpfs, or nothing is made */
	const char *name = strrchr(dst, '/') + 1;
	if (r == 0 && dir)
		r = mkdirat(o->known_fd, name, 0755) < 0 ? -errno : 0;
	if (r == 0 && !dir) {
		int fd = openat(o->known_fd, name,
				O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		r = fd < 0 ? -errno : close(fd);
	}
	struct stat st;
	if (r < 0 && lstat(dst, &st) == 0)
		return S_ISDIR(st.st_mode) == dir ? 0 : -ENOTDIR;
	return r;
}

/*
 * Flags a bind mount keeps whatever we ask: the kernel locks them in a user
 * namespace, and a remount that drops one fails. Read from the mount's own
 * options in mountinfo ("rw,nosuid,nodev,relatime"), the line at hand.
 */
static unsigned long locked_flags(const char *opts)
{
	static const struct {
		const char *name;
		unsigned long flag;
	} known[] = {
		{"ro", MS_RDONLY},	   {"nosuid", MS_NOSUID},     {"nodev", MS_NODEV},
		{"noexec", MS_NOEXEC},	   {"noatime", MS_NOATIME},   {"nodiratime", MS_NODIRATIME},
		{"relatime", MS_RELATIME},
	};
	unsigned long f = 0;
	for (const char *p = opts; *p;) {
		size_t len = strcspn(p, ",");
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (strlen(known[i].name) == len && strncmp(p, known[i].name, len) == 0)
				f |= known[i].flag;
		p += len;
		if (*p == ',')
			p++;
	}
	return f;
}

/*
 * A device node on a read-only mount still reads and writes (the driver
 * does, not the filesystem), but its mode, owner and times cannot change:
 * a root step cannot chmod the host's /dev/null.
 */
static unsigned long access_flags(unsigned access)
{
	unsigned long f = MS_NOSUID;
	if (!(access & GRANT_WRITE) || (access & GRANT_DEV))
		f |= MS_RDONLY;
	if (!(access & GRANT_EXEC))
		f |= MS_NOEXEC;
	if (!(access & GRANT_DEV))
		f |= MS_NODEV;
	return f;
}

/* The deepest entry of the plan that covers a mount point, or NULL. */
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

/*
 * A submount a recursive bind brought along that this user cannot reach by
 * its path: a folder above it is not searchable by this user, and its owner
 * lies outside the user namespace (podman's storage in a root-only
 * /var/lib/containers). Its flags cannot be set, and need not be: the step,
 * with this user's rights and no capability over that owner, cannot reach it
 * either.
 */
static bool unreachable(const char *mp)
{
	char parent[PATH_MAX];
	return path_parent(mp, parent, sizeof(parent)) &&
	       faccessat(AT_FDCWD, parent, X_OK, AT_EACCESS) < 0 && errno == EACCES;
}

/*
 * Without mount_setattr: each grant's bind as made, its mount id (found
 * race-free: record_bound) and the plan's entry. remount_all gives every
 * mount the access of the nearest bind above it in the mount tree, never
 * of the path mountinfo shows: a step beside this one may have renamed a
 * folder on that path (a read grant's mount shown beneath a write grant's
 * name took the write grant's flags).
 */
struct bound_set {
	struct bound {
		long id;
		const struct mountns_entry *e;
	} *v;
	size_t n, cap;
};

static int by_bound_id(const void *a, const void *b)
{
	long x = ((const struct bound *)a)->id, y = ((const struct bound *)b)->id;
	return (x > y) - (x < y);
}

/* A mount of the new root, as its mountinfo line gave it. */
struct mount_line {
	long id, parent;
	char *mp;            /* unescaped, under NEWROOT */
	const char *grant;   /* the grant's path (the plan's), for an error */
	unsigned long has;   /* MS_ flags it has (mountinfo's options) */
	unsigned long flags; /* MS_ flags its grant wants, with those it has; 0: ours */
	bool submount;       /* a submount a grant's bind brought along */
	signed char cut;     /* place_cut, -1: not known yet */
};

static int by_id(const void *a, const void *b)
{
	long x = (*(struct mount_line *const *)a)->id, y = (*(struct mount_line *const *)b)->id;
	return (x > y) - (x < y);
}

static int by_place(const void *a, const void *b)
{
	const struct mount_line *x = *(struct mount_line *const *)a, *y = *(struct mount_line *const *)b;
	if (x->parent != y->parent)
		return (x->parent > y->parent) - (x->parent < y->parent);
	return strcmp(x->mp, y->mp);
}

/* The mounts of a new root, looked up by id and by (parent, mount point). */
struct mount_index {
	struct mount_line **ids, **places;
	size_t n;
};

static struct mount_line *mount_by_id(const struct mount_index *ix, long id)
{
	struct mount_line key = {.id = id}, *k = &key;
	struct mount_line **m = bsearch(&k, ix->ids, ix->n, sizeof(*ix->ids), by_id);
	return m ? *m : NULL;
}

static bool mount_at_place(const struct mount_index *ix, long parent, char *mp)
{
	struct mount_line key = {.parent = parent, .mp = mp}, *k = &key;
	return bsearch(&k, ix->places, ix->n, sizeof(*ix->places), by_place) != NULL;
}

static bool hidden(const struct mount_index *ix, struct mount_line *m);

/*
 * Whether no path reaches m's mount point: a sibling (same parent) was
 * mounted on a folder above it after it, or what it sits in is out of reach.
 * A mount on its parent's own point (stacked on it) sits at the parent's
 * place: it needs that place reached, not the parent, which it covers. Any
 * other sits in its parent, which must be reached.
 */
static bool place_cut(const struct mount_index *ix, struct mount_line *m)
{
	if (m->cut >= 0)
		return m->cut;
	m->cut = 0; /* a loop in the parents (none in a real table) stops here */
	char up[PATH_MAX + sizeof(NEWROOT)];
	snprintf(up, sizeof(up), "%s", m->mp);
	bool cut = false;
	for (char *slash; !cut && (slash = strrchr(up, '/')) && slash > up;) {
		*slash = '\0';
		cut = mount_at_place(ix, m->parent, up);
	}
	struct mount_line *parent = mount_by_id(ix, m->parent);
	if (!cut && parent && parent != m)
		cut = strcmp(parent->mp, m->mp) == 0 ? place_cut(ix, parent) : hidden(ix, parent);
	m->cut = cut;
	return cut;
}

/* Whether no path reaches m: another mount sits on its point, or its point is cut off. */
static bool hidden(const struct mount_index *ix, struct mount_line *m)
{
	return mount_at_place(ix, m->id, m->mp) || place_cut(ix, m);
}

/* The id of the mount fd is on (mountinfo's first field), or -1 if unknown. */
static long mount_id_of(int fd)
{
	struct statx stx;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) == 0 && (stx.stx_mask & STATX_MNT_ID))
		return (long)stx.stx_mnt_id;
	/* before Linux 5.8: the fd's fdinfo says it (since 3.15) */
	char path[64], buf[512];
	snprintf(path, sizeof(path), OLDROOT "/proc/self/fdinfo/%d", fd);
	int f = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t len = f < 0 ? -1 : read(f, buf, sizeof(buf) - 1);
	if (f >= 0)
		close(f);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	const char *m = strstr(buf, "mnt_id:");
	return m ? strtol(m + 7, NULL, 10) : -1;
}

/*
 * Remount m by its mount point, reached without following a symlink and
 * checked to be the mount mountinfo listed (mp lies in a host folder a
 * step beside this one may write, which could swap a folder on the way
 * between the read and the remount, and carry the flags elsewhere):
 * -ESTALE when mp now reaches another mount.
 */
static int remount_pinned(const struct mount_line *m)
{
	int fd = path_open_nofollow(m->mp, 0);
	if (fd < 0)
		return fd;
	char via[64];
	snprintf(via, sizeof(via), OLDROOT "/proc/self/fd/%d", fd);
	int r = mount_id_of(fd) != m->id ? -ESTALE : 0;
	if (r == 0 && mount(NULL, via, NULL, MS_REMOUNT | MS_BIND | m->flags, NULL) < 0)
		r = -errno;
	close(fd);
	return r;
}

/*
 * The bind just made at dst for e, from the pinned src: reached from its
 * folder through no link, its root src itself, a mount of its own; its id
 * goes into bs (remount_all). -ESTALE if what dst reaches is not it.
 */
static int record_bound(const char *dst, int src, const struct mountns_entry *e,
			struct bound_set *bs)
{
	char up[PATH_MAX];
	if (!path_parent(dst, up, sizeof(up)))
		return -ENAMETOOLONG;
	int pfd = path_open_nofollow(up, O_DIRECTORY);
	if (pfd < 0)
		return pfd;
	int fd = openat(pfd, strrchr(dst, '/') + 1, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat got, want;
	long id = -1;
	int r = fd < 0 || fstat(fd, &got) < 0 || fstat(src, &want) < 0 ? -errno : 0;
	if (r == 0 && (got.st_dev != want.st_dev || got.st_ino != want.st_ino ||
		       (id = mount_id_of(fd)) < 0 || id == mount_id_of(pfd)))
		r = -ESTALE;
	if (r == 0 && (r = strv_grow(&bs->v, &bs->cap, bs->n, sizeof(*bs->v), 64)) == 0)
		bs->v[bs->n++] = (struct bound){id, e};
	if (fd >= 0)
		close(fd);
	close(pfd);
	return r;
}

/*
 * Where the kernel cannot set a detached copy's flags (attach_copy: before
 * Linux 5.12, or a seccomp profile refusing mount_setattr), after the fact:
 * give every mount under NEWROOT that a grant's bind made or brought along
 * the flags of the deepest entry that covers it (a submount has flags of its
 * own, and a writable one inside a read-only grant would be a hole), plus
 * the flags it has (the kernel locks them in a user namespace, and a remount
 * that drops one fails). Mounts of our own (procfs, devpts, tmpfs, masks)
 * keep the flags they were made with. A remount goes by path, which reaches
 * the mount on top: a hidden one (our /dev/shm over the host's that -r /dev
 * brought along, a mask over a grant, a host's folder bound over itself) is
 * left alone, so the one on top keeps its own flags, and the step cannot
 * reach the one below. mountinfo is read whole, line by line (a mount's
 * source is anyone's text: a line cut short would be read as a second,
 * made-up mount); each mount is remounted once, in the order made.
 */
static int remount_all(const struct mountns_plan *p, struct bound_set *bs, const char **what,
		       const char **path)
{
	/* after the first pivot the host's procfs is under OLDROOT; it shows our task */
	FILE *f = fopen(OLDROOT "/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	/* a line a mount, 100 bytes each: read in large pieces (a syscall each) */
	static char buf[1 << 16];
	setvbuf(f, buf, _IOFBF, sizeof(buf));
	char *line = NULL;
	size_t cap = 0, n = 0, vcap = 0;
	struct mount_line *v = NULL;
	int r = 0;
	*what = "set the mount flags of";
	while (r == 0 && getline(&line, &cap, f) > 0) {
		struct path_mount m;
		if (!path_mount_fields(line, &m) || !m.opts ||
		    strncmp(m.mnt, NEWROOT "/", sizeof(NEWROOT)) != 0)
			continue;
		if ((r = strv_grow(&v, &vcap, n, sizeof(*v), 64)) < 0)
			break;
		v[n] = (struct mount_line){strtol(m.id, NULL, 10), strtol(m.parent, NULL, 10),
					   strdup(m.mnt), NULL, locked_flags(m.opts), 0, false, -1};
		if (!v[n++].mp)
			r = -ENOMEM;
	}
	if (r == 0 && ferror(f))
		r = -EIO;
	free(line);
	fclose(f);
	struct mount_index ix = {calloc(n + 1, sizeof(*ix.ids)), calloc(n + 1, sizeof(*ix.places)), n};
	if (r == 0 && (!ix.ids || !ix.places))
		r = -ENOMEM;
	if (r == 0 && n) {
		for (size_t i = 0; i < n; i++)
			ix.ids[i] = ix.places[i] = &v[i];
		qsort(ix.ids, n, sizeof(*ix.ids), by_id);
		qsort(ix.places, n, sizeof(*ix.places), by_place);
		qsort(bs->v, bs->n, sizeof(*bs->v), by_bound_id);
	}
	/* each mount's grant: the nearest bind above it, by mount id */
	for (size_t i = 0; r == 0 && i < n; i++) {
		const struct bound *b = NULL;
		const struct mount_line *m = &v[i];
		for (size_t depth = 0; m && !b && depth < n; depth++) {
			struct bound key = {.id = m->id};
			b = bsearch(&key, bs->v, bs->n, sizeof(*bs->v), by_bound_id);
			if (!b)
				m = mount_by_id(&ix, m->parent);
		}
		unsigned long want = b ? access_flags(b->e->access) : 0;
		if (want & ~v[i].has) { /* else nothing to add (ours, or made with its flags) */
			v[i].grant = b->e->path;
			v[i].flags = want | v[i].has;
			v[i].submount = m != &v[i];
		}
	}
	for (size_t i = 0; r == 0 && i < n; i++) {
		if (!v[i].flags || hidden(&ix, &v[i]))
			continue;
		*path = v[i].grant;
		/* gone from its path (a folder on the way renamed): an error, or it
		 * would keep its source's flags */
		r = remount_pinned(&v[i]);
		if (r == -EACCES && p->userns && v[i].submount && unreachable(v[i].mp))
			r = 0;
	}
	for (size_t i = 0; i < n; i++)
		free(v[i].mp);
	free(v);
	free(ix.ids);
	free(ix.places);
	return r;
}

/*
 * Where a mount goes: dst opened without following any symlink on the whole
 * way, and mounted through that fd. A grant nested in another's has its
 * mount point in a host folder, which a step beside this one may write: a
 * link swapped in there for the mount point or for a folder above it
 * (pointing back into the new root) carried the mount elsewhere, a grant
 * over the new root's /etc (runc's CVE-2021-30465; t0130).
 */
struct target {
	int fd;
	char path[64]; /* its /proc/self/fd entry */
};

/* t for fd (dst opened through no symlink), or fd's error */
static int target_pin(struct target *t, int fd)
{
	t->fd = fd;
	if (fd < 0)
		return fd;
	snprintf(t->path, sizeof(t->path), OLDROOT "/proc/self/fd/%d", fd);
	return 0;
}

static int target_open(struct target *t, const char *dst, bool dir)
{
	return target_pin(t, path_open_nofollow(dst, dir ? O_DIRECTORY : 0));
}

static void target_close(struct target *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

/* MOUNT_ATTR_ flags of a grant (access_flags, for mount_setattr). */
static uint64_t access_attrs(unsigned access)
{
	unsigned long f = access_flags(access);
	return MOUNT_ATTR_NOSUID | (f & MS_RDONLY ? MOUNT_ATTR_RDONLY : 0) |
	       (f & MS_NOEXEC ? MOUNT_ATTR_NOEXEC : 0) | (f & MS_NODEV ? MOUNT_ATTR_NODEV : 0);
}

/*
 * Mount a detached copy of src (with the mounts beneath it) at t, its
 * attributes set on the copy before it is attached, so no path is looked
 * up again to set them; userns >= 0 also maps its owners (idmapped).
 * -ENOSYS or -EPERM where this kernel (before 5.12) or a seccomp profile
 * offers no such calls: the caller binds and remounts instead.
 */
static int attach_copy(int dirfd, const char *src, const struct target *t, uint64_t attrs,
		       int userns)
{
	static bool unavailable;
	if (unavailable)
		return -ENOSYS;
	int tree = open_tree(dirfd, src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
						 (src[0] ? 0 : AT_EMPTY_PATH));
	if (tree < 0) {
		int e = errno;
		unavailable = e == ENOSYS || e == EPERM;
		return -e;
	}
	struct mount_attr attr = {.attr_set = attrs | (userns >= 0 ? MOUNT_ATTR_IDMAP : 0),
				  .userns_fd = (__u64)(userns >= 0 ? userns : 0)};
	int r = 0;
	if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0) {
		r = -errno;
		unavailable = (r == -ENOSYS || r == -EPERM) && userns < 0;
	} else if (move_mount(tree, "", t->fd, "", MOVE_MOUNT_F_EMPTY_PATH |
						    MOVE_MOUNT_T_EMPTY_PATH) < 0) {
		r = -errno;
	}
	close(tree);
	return r;
}

/*
 * Bind the host's path, pinned without following any symlink (a grant is
 * canonical: a symlink there now was planted since it was resolved), so
 * what is mounted is what was opened; with its flags set before it is
 * attached (attach_copy), or where the kernel cannot, bound through its
 * /proc/self/fd entry, recorded (record_bound) and given them by
 * remount_all.
 */
static int bind_pinned(const struct mountns_entry *e, const char *dst, int userns,
		       struct ours *o, struct bound_set *bs, const char **what)
{
	char src[PATH_MAX + 16], via[64];
	snprintf(src, sizeof(src), OLDROOT "%s", strcmp(e->path, "/") ? e->path : "");
	*what = "find the grant";
	bool dir;
	int fd = path_open_nofollow_typed(src, &dir);
	if (fd == -ENOENT && e->optional)
		return 0; /* a read grant vanished since it was resolved: dropping narrows */
	if (fd < 0)
		return fd;
	*what = "make the mount point for";
	struct target t;
	int r = mount_point(dst, dir, o);
	t.fd = -1;
	if (r == 0) {
		*what = "open the mount point of";
		r = target_open(&t, dst, dir);
	}
	if (r == 0) {
		*what = e->idmap ? "bind (idmapped)" : "bind-mount";
		r = attach_copy(fd, "", &t, access_attrs(e->access), e->idmap ? userns : -1);
		if ((r == -ENOSYS || r == -EPERM) && !e->idmap) {
			snprintf(via, sizeof(via), OLDROOT "/proc/self/fd/%d", fd);
			r = mount(via, t.path, NULL, MS_BIND | MS_REC, NULL) < 0 ? -errno : 0;
			if (r == 0)
				r = record_bound(dst, fd, e, bs);
		}
	}
	target_close(&t);
	close(fd);
	return r;
}

/*
 * Cover dst, an entry of a folder bound whole (it lies in a host folder:
 * pinned), with what nobody may use: a folder with an empty read-only tmpfs
 * (dir_opts), a file with file bound read-only. An /etc entry hidden this
 * way gives EACCES to root without capabilities too, as Landlock would.
 */
static int cover(const char *dst, const char *file, const char *dir_opts, bool pipe_only)
{
	bool dir;
	struct target t;
	int r = target_pin(&t, path_open_nofollow_typed(dst, &dir));
	if (r == -ENOENT)
		return 0; /* gone since the walk, or this kernel has no such entry */
	if (r < 0)
		return r;
	struct stat st;
	if (pipe_only && (fstat(t.fd, &st) < 0 || !S_ISFIFO(st.st_mode))) {
		target_close(&t); /* a pipe no more: what a writer put there is not ours to hide */
		return 0;
	}
	const unsigned long ro = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
	if (dir)
		r = mount("tmpfs", t.path, "tmpfs", ro, dir_opts) < 0 ? -errno : 0;
	else
		r = attach_copy(AT_FDCWD, file, &t, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
							  MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, -1);
	if (!dir && (r == -ENOSYS || r == -EPERM)) {
		/* before Linux 5.12: bound, then remounted (an /etc entry: only root writes there) */
		r = 0;
		if (mount(file, t.path, NULL, MS_BIND, NULL) < 0 ||
		    mount(NULL, dst, NULL, MS_REMOUNT | MS_BIND | ro, NULL) < 0)
			r = -errno;
	}
	target_close(&t);
	return r;
}

static bool shared_tmp(const char *path)
{
	return strcmp(path, "/tmp") == 0 || strcmp(path, "/dev/shm") == 0;
}

/*
 * A filesystem of our own at dst. A tmpfs is made on the scratch root and
 * moved there: its device is learnt without a look through dst, a path a
 * host folder (a private /tmp in a folder granted whole) may be on.
 */
static int mount_new(const char *dst, const char *type, unsigned long flags, const char *opts,
		     struct ours *o, bool tmpfs)
{
	struct target t;
	int r = mount_point(dst, true, o);
	if (r < 0 || (r = target_open(&t, dst, true)) < 0)
		return r;
	const char *at = tmpfs ? "/stage" : t.path;
	if (tmpfs && mkdir(at, 0700) < 0)
		r = -errno;
	if (r == 0 && mount(type, at, type, flags, opts) < 0)
		r = -errno;
	if (r == 0 && tmpfs && (r = add_ours(o, at)) == 0 &&
	    (mount(at, t.path, NULL, MS_MOVE, NULL) < 0 || rmdir(at) < 0))
		r = -errno;
	target_close(&t);
	return r;
}

static int apply_mount(const struct mountns_plan *p, const struct mountns_entry *e,
		       struct ours *o, struct bound_set *bs, const char **what)
{
	char dst[PATH_MAX + 16];
	snprintf(dst, sizeof(dst), NEWROOT "%s", strcmp(e->path, "/") ? e->path : "");
	int r = 0;
	switch (e->kind) {
	case MNT_BIND:
		return bind_pinned(e, dst, p->idmap_userns, o, bs, what);
	case MNT_PROC:
		/* a procfs of the new PID namespace: no host process is visible */
		*what = "mount a new /proc at";
		return mount_new(dst, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, NULL, o,
				 false);
	case MNT_DEVPTS:
		/* a devpts of our own: the host's terminals are not reachable */
		*what = "mount a new devpts at";
		return mount_new(dst, "devpts", MS_NOSUID | MS_NOEXEC,
				 "newinstance,ptmxmode=0666,mode=0620", o, false);
	case MNT_TMPFS:
		*what = "mount a private tmpfs at";
		/* /tmp and /dev/shm are everyone's; any other (HOME) the user's alone */
		return mount_new(dst, "tmpfs", MS_NOSUID | MS_NODEV,
				 p->tmpfs_opts[!shared_tmp(e->path)], o, true);
	case MNT_MQUEUE:
		*what = "mount the message queues at";
		r = mount_new(dst, "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL, o, false);
		return r == -EXDEV ? 0 : r; /* a host /dev granted whole without one: none, then */
	case MNT_MASK:
		*what = "mask";
		return cover(dst, OLDROOT "/dev/null", "size=4k,mode=0555", false);
	case MNT_HIDE:
	case MNT_PIPE:
		*what = "hide";
		return cover(dst, HIDDEN, "size=4k,mode=0000", e->kind == MNT_PIPE);
	case MNT_SYMLINK: {
		struct stat st;
		if (lstat(dst, &st) == 0 && strcmp(e->path, "/dev/ptmx") == 0 &&
		    !S_ISLNK(st.st_mode)) {
			/* a host /dev granted whole: its ptmx gives way to ours */
			*what = "bind the new devpts's ptmx on";
			struct target t;
			if ((r = target_open(&t, dst, false)) < 0)
				return r;
			if (mount(NEWROOT "/dev/pts/ptmx", t.path, NULL, MS_BIND, NULL) < 0)
				r = -errno;
			target_close(&t);
			return r;
		}
		if (lstat(dst, &st) == 0)
			return 0; /* a grant or a folder is there already */
		*what = "make the symlink";
		if ((r = make_parents(dst, o)) == 0 &&
		    symlinkat(e->target, o->known_fd, strrchr(dst, '/') + 1) < 0)
			r = -errno;
		return r;
	}
	}
	return -EINVAL;
}

/*
 * The order: nothing propagates back to the host; a scratch tmpfs becomes
 * the root with the host's root at OLDROOT (so grant sources stay reachable
 * even under /tmp); the new root is a second tmpfs inside it; the plan is
 * applied from OLDROOT into NEWROOT; then NEWROOT becomes the root, the
 * host's is detached, and the new root is made read-only.
 */
/*
 * The IPC namespace's System V limits, by the tmp limit (the private /dev/shm's
 * size): a segment of any size is resident for the namespace's life even with
 * nothing attached, where no OOM kill frees it. Segments are removed when
 * their last user detaches, and message queues hold no more than the limit.
 * The kernel lets only a root it maps write these (Linux 6.8, 6.1.104): under
 * a user namespace that maps the caller to itself they stay the kernel's
 * defaults, and so where /proc/sys is read-only (docs/security.md).
 */
static int bound_ipc(const struct mountns_plan *p, const char **what, const char **path)
{
	if (!p->tmp_bytes || !(p->clone_flags & CLONE_NEWIPC))
		return 0;
	char shmmax[24], shmall[24], msgmni[24];
	uint64_t pages = p->tmp_bytes / 4096, queues = p->tmp_bytes / 16384; /* msgmnb's default */
	snprintf(shmmax, sizeof(shmmax), "%" PRIu64, p->tmp_bytes);
	snprintf(shmall, sizeof(shmall), "%" PRIu64, pages ? pages : 1);
	snprintf(msgmni, sizeof(msgmni), "%" PRIu64,
		 queues < 1 ? 1 : queues > 32000 ? 32000 : queues);
	const struct {
		const char *file, *value;
	} v[] = {
		{"/proc/sys/kernel/shmmax", shmmax},
		{"/proc/sys/kernel/shmall", shmall},
		{"/proc/sys/kernel/shm_rmid_forced", "1"},
		{"/proc/sys/kernel/msgmni", msgmni},
	};
	*what = "bound System V IPC by the tmp limit in";
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		*path = v[i].file;
		int r = write_file(v[i].file, v[i].value);
		if (i == 0 && (r == -EACCES || r == -EPERM || r == -EROFS))
			return 0; /* not this kernel's, or this host's, to give */
		if (r < 0)
			return r;
	}
	*path = NULL;
	return 0;
}

int mountns_setup_root(const struct mountns_plan *p, const char **what, const char **path,
		       bool *refused)
{
	*path = NULL;
	*refused = false;
	int r = bound_ipc(p, what, path);
	if (r == 0 && (r = scratch_root(what)) < 0)
		*refused = true; /* mountns_probe makes the same, and says why */
	if (r < 0)
		return r;
	*what = "make the hiding file";
	int hfd = open(HIDDEN, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
	if (hfd < 0 || fchmod(hfd, 0) < 0)
		return -errno;
	close(hfd);
	struct ours o = {{0}, 0, "", -1};
	r = add_ours(&o, NEWROOT);
	struct bound_set bs = {0}; /* binds whose flags are remount_all's to set */
	for (size_t i = 0; r == 0 && i < p->n; i++) {
		*path = p->v[i].path;
		r = apply_mount(p, &p->v[i], &o, &bs, what);
		/* a masked /proc refuses every new procfs: the probe's second question */
		*refused = p->v[i].kind == MNT_PROC && proc_refused(-r);
		/* what was just mounted on may be a host folder now: forget it */
		char dst[PATH_MAX + 16];
		snprintf(dst, sizeof(dst), NEWROOT "%s", strcmp(p->v[i].path, "/") ? p->v[i].path : "");
		if (p->v[i].kind != MNT_SYMLINK && o.known[0] && path_beneath(o.known, dst))
			forget_known(&o);
	}
	forget_known(&o);
	if (r == 0 && bs.n)
		r = remount_all(p, &bs, what, path);
	free(bs.v);
	if (r < 0)
		return r;
	*path = NULL;
	*what = "pivot into the new root";
	if (chdir(NEWROOT) < 0 || syscall(SYS_pivot_root, ".", ".") < 0)
		return -errno;
	*what = "detach the host's root";
	if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		return -errno;
	*what = "make the new root read-only";
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV,
		  NULL) < 0)
		return -errno;
	return 0;
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
		bool wr = e->kind == MNT_BIND && (e->access & GRANT_WRITE) && !(e->access & GRANT_DEV);
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
