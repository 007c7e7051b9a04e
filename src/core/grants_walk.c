/*
 * grants_walk.c: the walks of grants_build. Root's /etc is granted entry by
 * entry, its secrets (what others may not read) left out; under Landlock
 * alone /dev and what holds it are granted without their device nodes; a
 * grant that holds either (-r /) is split around them.
 */
#include "grants.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "canon.h"
#include "grants_int.h"
#include "path.h"

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

/*
 * Whether a walk leaves path to a write location: an entry of a read grant
 * split around /etc or /dev that lies in a place the step writes is that
 * place's (-r /dev -w /dev/shm), as it would be had the grant been one rule.
 * A read rule there would be refused by grantcheck_read_in_write_alone.
 */
static bool yields_to_write(const struct build *b, const char *path)
{
	const struct wloc *w = b->yields ? gb_holder(&b->all, path) : NULL;
	return w && w->writable;
}

static bool dev_near(const struct build *b, const char *path, int how);

/*
 * A folder the caller may not search and does not own (another user's
 * 0700 folder: another run's stepbox-shm.* in /dev/shm): the step, the same
 * user with no capability, can neither enter it nor change its mode, so
 * what it holds is out of reach whatever a rule above it says, and the
 * folder above stays one rule instead of split around it.
 */
static bool unreachable(int dfd, const char *name, const struct stat *st)
{
	return st->st_uid != geteuid() && faccessat(dfd, name, X_OK, AT_EACCESS) < 0 &&
	       errno == EACCES;
}

/*
 * Whether an entry met in a listing (depth > 0) was gone when looked at
 * (errno ENOENT): another process removed or renamed it (a run's
 * .stepbox-new.* in a shared /dev/shm). It holds nothing a rule on its
 * folder could cover, so the folder stays whole; one made after the walk
 * is covered the same way whatever the walk saw.
 */
static bool gone(int depth)
{
	return depth > 0 && errno == ENOENT;
}

/*
 * Whether the folder name in dfd lies on a file system mounted nodev (the
 * host's /dev/shm, a tmpfs): a device node there cannot be opened as a
 * device (the kernel refuses it at open), so the device walk need not look
 * inside; a folder in it that cannot be listed (another run's 0700
 * stepbox-shm.*) then leaves the grant whole instead of split. A device
 * mount beneath it is still walked (the caller checks).
 */
static bool on_nodev(int dfd, const char *name)
{
#ifdef ST_NODEV
	int fd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct statvfs sv;
	bool yes = fd >= 0 && fstatvfs(fd, &sv) == 0 && (sv.f_flag & ST_NODEV);
	if (fd >= 0)
		close(fd);
	return yes;
#else
	(void)dfd;
	(void)name;
	return false;
#endif
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
/*
 * The path of entry name in folder path, into child (PATH_MAX), counted
 * against the walk's budget: 0; 1 for a path too long to name (left out);
 * -E2BIG when the budget is spent.
 */
static int child_path(struct build *b, const char *path, const char *name, char *child)
{
	if (b->budget == 0)
		return -E2BIG;
	b->budget--;
	return snprintf(child, PATH_MAX, "%s/%s", strcmp(path, "/") ? path : "", name) >= PATH_MAX
		       ? 1
		       : 0;
}

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
		return gone(depth) ? 1 : 0;
	if (link || S_ISLNK(st.st_mode)) {
		int r = b->host->bind_entries ? add_link(g, dfd, name, path) : 0;
		return r < 0 ? r : 1;
	}
	if (b->devices && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
		return gb_skip(g, path, origin,
			       "a device node: a grant gives none but the baseline's");
	if (!b->devices && !gb_world_readable(&st))
		return gb_skip(g, path, origin, "not world-readable: hidden from the sandbox");
	if (!S_ISDIR(st.st_mode))
		return gb_add(g, strdup(path), strdup(req), access, origin, true) < 0 ? -ENOMEM : 1;
	if (b->devices && on_nodev(dfd, name) && !dev_near(b, path, 2))
		return gb_add(g, strdup(path), strdup(req), access, origin, true) < 0 ? -ENOMEM : 1;
	if (depth >= ETC_MAX_DEPTH)
		return gb_skip(g, path, origin, "nested too deep to check what it holds");
	struct path_dir d;
	if (path_dir_open(&d, dfd, name) < 0)
		return gone(depth) || unreachable(dfd, name, &st)
			       ? 1
			       : gb_skip(g, path, origin,
					 "cannot be listed to check what it holds");
	size_t mark = g->n, skipmark = g->nskipped;
	bool whole = true;
	int r = 0;
	struct path_entry de;
	while (path_dir_next(&d, &de)) {
		char child[PATH_MAX];
		if ((r = child_path(b, path, de.name, child)) < 0)
			break;
		if (r == 1) {
			r = 0;
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
	return gb_add(g, strdup(path), strdup(req), access, origin, true) < 0 ? -ENOMEM : 1;
}

/*
 * Grant path showing only what others may read: whole, bound through an
 * idmapped mount, where the namespaces can make one on its file system
 * (nothing to walk at each launch); else by the walk. Returns as
 * walk_readable does.
 */
int gb_add_world_readable(struct build *b, int dfd, const char *name, const char *path,
			  const char *req, unsigned access, enum grant_origin origin,
			  unsigned char type)
{
	struct stat st;
	b->devices = false;
	if (!b->host->idmap || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    st.st_dev != b->host->idmap_dev || S_ISLNK(st.st_mode))
		return walk_readable(b, dfd, name, path, req, access, origin, 0, type);
	int r = gb_add(b->g, strdup(path), strdup(req), access, origin, true);
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
		if (how == 0   ? strcmp(path, d) == 0
		    : how == 1 ? path_beneath(path, d)
			       : path_beneath(d, path))
			return true;
	}
	return false;
}

bool gb_walked(const struct build *b, const char *canon, unsigned access)
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
static int add_entry(struct build *b, int dfd, const char *name, const char *path, unsigned access,
		     enum grant_origin origin)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (S_ISLNK(st.st_mode))
		return b->host->keep_links ? add_link(b->g, dfd, name, path) : 0;
	return gb_add(b->g, strdup(path), strdup(path), access, origin, true);
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
		return gb_skip(b->g, path, origin, "cannot be listed to leave out what it holds");
	}
	bool etc = walks_etc(b, access), dev = walks_dev(b, access);
	int r = 0;
	struct dirent *de;
	while (r == 0 && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char child[PATH_MAX];
		if ((r = child_path(b, path, de->d_name, child)) < 0)
			break;
		if (r == 1) {
			r = 0;
			continue; /* left out: only narrows */
		}
		int dfd2 = dirfd(d);
		if (yields_to_write(b, child))
			continue;
		if (etc && strcmp(child, b->etc) == 0)
			r = gb_add_world_readable(b, dfd2, de->d_name, child, child, access, origin,
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
 * A grant that gb_walked() says to walk. One inside /etc is walked as the
 * baseline's /etc is, unless it names a hidden entry exactly (-r
 * /etc/shadow asks for that file, and gets it); one inside /dev leaves out
 * its device nodes, even one named; one that holds either is split around
 * them. Write grants are taken as given for /etc: a broad one is refused
 * unless allow_broad_grants, and then it is what was asked for. Takes
 * ownership of canon.
 */
int gb_add_walked(struct build *b, char *canon, const char *req, unsigned access,
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
	const struct wloc *w = gb_holder(&b->all, canon);
	b->yields = !(access & GRANT_WRITE) && !(w && w->writable);
	if (walks_etc(b, access) && path_beneath(canon, b->etc)) {
		bool named = origin != ORIGIN_BASELINE && origin != ORIGIN_BASELINE_TARGET &&
			     named_as_is(b, req, canon) && lstat(hp, &st) == 0 &&
			     !gb_world_readable(&st);
		if (named)
			return gb_add(b->g, canon, strdup(req), access, origin, true);
		r = gb_add_world_readable(b, AT_FDCWD, hp, canon, req, access, origin, DT_UNKNOWN);
	} else if (walks_dev(b, access) && dev_near(b, canon, 1)) {
		r = add_without_devices(b, AT_FDCWD, hp, canon, req, access, origin, DT_UNKNOWN);
	} else {
		r = split_toward(b, AT_FDCWD, hp, canon, access, origin);
	}
	free(canon);
	return r < 0 ? r : 0;
}
