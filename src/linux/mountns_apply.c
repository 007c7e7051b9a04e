/*
 * mountns in the child: the new root built from the plan (mountns_setup_root),
 * every mount point made on our own tmpfs, every bind through a pinned fd,
 * the flags set on a detached copy or by remount_all, then the pivot.
 */
#include "mountns.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mountns_int.h"
#include "path.h"

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
		{"ro", MS_RDONLY},         {"nosuid", MS_NOSUID},   {"nodev", MS_NODEV},
		{"noexec", MS_NOEXEC},     {"noatime", MS_NOATIME}, {"nodiratime", MS_NODIRATIME},
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
	} * v;
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
	const struct mount_line *x = *(struct mount_line *const *)a,
				*y = *(struct mount_line *const *)b;
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
 * The mounts under NEWROOT, from mountinfo read whole, line by line, into
 * *vp (*np of them, each mp to free, whatever is returned). 0 or -errno;
 * *what once mountinfo is open.
 */
static int read_newroot(struct mount_line **vp, size_t *np, const char **what)
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
		v[n] = (struct mount_line){strtol(m.id, NULL, 10),
					   strtol(m.parent, NULL, 10),
					   strdup(m.mnt),
					   NULL,
					   locked_flags(m.opts),
					   0,
					   false,
					   -1};
		if (!v[n++].mp)
			r = -ENOMEM;
	}
	if (r == 0 && ferror(f))
		r = -EIO;
	free(line);
	fclose(f);
	*vp = v;
	*np = n;
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
	struct mount_line *v = NULL;
	size_t n = 0;
	int r = read_newroot(&v, &n, what);
	struct mount_index ix = {calloc(n + 1, sizeof(*ix.ids)), calloc(n + 1, sizeof(*ix.places)),
				 n};
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
	int tree = open_tree(dirfd, src,
			     OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
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
	} else if (move_mount(tree, "", t->fd, "",
			      MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0) {
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
static int bind_pinned(const struct mountns_entry *e, const char *dst, int userns, struct ours *o,
		       struct bound_set *bs, const char **what)
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
		r = attach_copy(AT_FDCWD, file, &t,
				MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
					MOUNT_ATTR_NOEXEC,
				-1);
	if (!dir && (r == -ENOSYS || r == -EPERM)) {
		/* before Linux 5.12: bound, then remounted (an /etc entry: only root writes there)
		 */
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

static int apply_mount(const struct mountns_plan *p, const struct mountns_entry *e, struct ours *o,
		       struct bound_set *bs, const char **what)
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
		 queues < 1       ? 1
		 : queues > 32000 ? 32000
				  : queues);
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
		int r = mountns_write_file(v[i].file, v[i].value);
		if (i == 0 && (r == -EACCES || r == -EPERM || r == -EROFS))
			return 0; /* not this kernel's, or this host's, to give */
		if (r < 0)
			return r;
	}
	*path = NULL;
	return 0;
}

/*
 * The order: nothing propagates back to the host; a scratch tmpfs becomes
 * the root with the host's root at OLDROOT (so grant sources stay reachable
 * even under /tmp); the new root is a second tmpfs inside it; the plan is
 * applied from OLDROOT into NEWROOT; then NEWROOT becomes the root, the
 * host's is detached, and the new root is made read-only.
 */
int mountns_setup_root(const struct mountns_plan *p, const char **what, const char **path,
		       bool *refused)
{
	*path = NULL;
	*refused = false;
	int r = bound_ipc(p, what, path);
	if (r == 0 && (r = mountns_scratch_root(what)) < 0)
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
		*refused = p->v[i].kind == MNT_PROC && mountns_proc_refused(-r);
		/* what was just mounted on may be a host folder now: forget it */
		char dst[PATH_MAX + 16];
		snprintf(dst, sizeof(dst), NEWROOT "%s",
			 strcmp(p->v[i].path, "/") ? p->v[i].path : "");
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
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) <
	    0)
		return -errno;
	return 0;
}
