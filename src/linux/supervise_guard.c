#include "supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "path.h"
#include "protect.h"
#include "stepview.h"
#include "supervise_int.h"

/*
 * The live layer of the protected paths, on every backend with a
 * supervisor: every call that creates, writes, moves or removes a name
 * comes here (harden's notify filters; a plain read never does). The name
 * is resolved in the step's view (under the namespaces, through its mounts)
 * to its folder, pinned with an O_PATH fd, matched by name (protect_match),
 * and the call is performed on the pinned folder with that one name, never
 * a path the step can change after the check. It is performed by a thread
 * restricted by the step's own Landlock ruleset (mountns: none; the step's
 * mounts, which the pinned folder is reached through, bound it), so the
 * kernel judges it as it judges the step. A git config moved onto its
 * name is judged by its keys, and what lands is a copy of the text judged:
 * an fd the step kept on the file moved writes nowhere that runs.
 */

/* ---- resolving and matching --------------------------------------------- */

/* A name of the step's, resolved to its folder (pinned) and its last component. */
struct place {
	int dir;                 /* O_PATH fd of the folder, or -1 */
	char name[NAME_MAX + 2]; /* the last component, "/" kept after it when the step wrote one */
	char where[PATH_MAX];    /* the folder's path as the step sees it, when known */
	char abs[PATH_MAX];      /* ... "/" and the name */
	bool known;              /* where and abs are paths (the folder has one) */
};

/* path cut into the folder to resolve (into dir) and its last component (into pl->name). */
static int split_place(const char *path, char *dir, size_t cap, struct place *pl)
{
	size_t n = strlen(path);
	if (!n)
		return -ENOENT;
	bool slash = false;
	while (n > 1 && path[n - 1] == '/')
		n--, slash = true;
	const char *last = path + n;
	while (last > path && last[-1] != '/')
		last--;
	size_t ln = (size_t)(path + n - last);
	if (ln > NAME_MAX)
		return -ENAMETOOLONG;
	if (last == path)
		snprintf(dir, cap, ".");
	else
		snprintf(dir, cap, "%.*s", (int)(last - path), path);
	if (ln == 0 || (path[0] == '/' && n == 1)) {
		snprintf(pl->name, sizeof(pl->name), ".");
		snprintf(dir, cap, "/");
	} else {
		snprintf(pl->name, sizeof(pl->name), "%.*s%s", (int)ln, last, slash ? "/" : "");
	}
	return 0;
}

/*
 * pl->name in the folder fd (ours from here): its paths as the step sees
 * them (where: the folder's, when known already).
 */
static void place_in(struct place *pl, int fd, const char *where)
{
	pl->dir = fd;
	pl->known = false;
	if (where)
		snprintf(pl->where, sizeof(pl->where), "%s", where);
	else if (stepview_held_path(fd, pl->where, sizeof(pl->where)) < 0)
		return;
	/* a path too long to name is one with no name here: nothing is made there */
	size_t ln = strcspn(pl->name, "/");
	int n2 = snprintf(pl->abs, sizeof(pl->abs), "%s%s", pl->where,
			  strcmp(pl->where, "/") ? "/" : "");
	pl->known = n2 >= 0 && (size_t)n2 + ln < sizeof(pl->abs);
	if (pl->known)
		memcpy(pl->abs + n2, pl->name, ln), pl->abs[n2 + ln] = '\0';
}

static int place_of(struct call *c, uint64_t dirfd, const char *path, struct place *pl)
{
	pl->dir = -1;
	pl->known = false;
	char dir[PATH_MAX];
	int r = split_place(path, dir, sizeof(dir), pl);
	int fd = r < 0 ? r : stepview_resolve(&c->v, dirfd, dir, true);
	if (fd < 0)
		return fd;
	place_in(pl, fd, NULL);
	return 0;
}

static void place_close(struct place *pl)
{
	if (pl->dir >= 0)
		close(pl->dir);
	pl->dir = -1;
}

/* A name that makes a checkout's gitdir: ".git" (a folder's, "/" kept after it). */
static bool is_dotgit(const char *name)
{
	return strcmp(name, ".git") == 0 || strcmp(name, ".git/") == 0;
}

/* "." and "..": no name is made or moved there; the kernel answers. */
static bool dots(const char *name)
{
	return strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, "./") == 0 ||
	       strcmp(name, "../") == 0;
}

/*
 * What a change of the file obj holds (one that exists: linked, truncated,
 * reopened, chmod'ed) meets, at where, its path: the probe from its folder,
 * where that folder still holds it under its name (else fail closed).
 */
struct protect_hit sup_match_object(struct call *c, int obj, const char *where,
				    enum protect_change how)
{
	char dir[PATH_MAX];
	struct place pl = {.dir = -1};
	struct stat a, b;
	int fd = split_place(where, dir, sizeof(dir), &pl) == 0
			 ? stepview_resolve(&c->v, AT_FDCWD, dir, true)
			 : -1;
	bool same = fd >= 0 && fstat(obj, &a) == 0 &&
		    fstatat(fd, pl.name, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_ino == b.st_ino &&
		    a.st_dev == b.st_dev;
	const struct protect_probe probe = protect_probe_from(same ? &fd : NULL);
	struct protect_hit h = protect_match_at(c->s->prot, where, how, &probe);
	if (fd >= 0)
		close(fd);
	return h;
}

/* What the change how at pl meets, the pinned folder asked where the record cannot say. */
static struct protect_hit match(struct call *c, const struct place *pl, enum protect_change how)
{
	int dir = pl->dir;
	const struct protect_probe probe = protect_probe_from(&dir);
	return protect_match_at(c->s->prot, pl->abs, how, dir >= 0 ? &probe : NULL);
}

/*
 * What the change how at pl meets; a refusal is said, and kept for
 * --explain and the report. JUDGED only where judged says it may be (a
 * file opened to be made): a link, a symlink or a node there is refused.
 */
static enum protect_verdict judge(struct call *c, const struct place *pl, enum protect_change how,
				  bool judged)
{
	if (dots(pl->name))
		return PROTECT_FREE;
	struct protect_hit h = match(c, pl, how);
	if (!pl->known) {
		/* a folder with no path (deleted, another mount's): nothing is made there */
		h.verdict = how == PROTECT_REMOVE ? PROTECT_FREE : PROTECT_REFUSED;
	}
	if (h.verdict == PROTECT_JUDGED && !judged)
		h.verdict = PROTECT_REFUSED;
	if (h.verdict == PROTECT_REFUSED)
		sup_note_denial(c, OP_PROTECTED, pl->abs, -1);
	return h.verdict;
}

static bool refused(struct call *c, const struct place *pl, enum protect_change how)
{
	return judge(c, pl, how, false) == PROTECT_REFUSED;
}

/*
 * What Landlock refused the performer it refused the step, which never
 * stopped in the tracer: said, on the name made, moved or removed (explain
 * proposes its folder) or on the file written.
 */
static void landlock_refused(struct call *c, int r, enum denial_op op, const struct place *pl,
			     const char *file)
{
	const char *path = pl ? (pl->known ? pl->abs : NULL) : file;
	if ((r == -EACCES || r == -EPERM) && path && path[0] == '/')
		sup_note_denial(c, op, path, -1);
}

/* A name made or moved in: the folder it may have made a gitdir noted (protect_note_sign). */
static int note_gitdir_made(struct call *c, const struct place *pl)
{
	return pl->known ? protect_note_sign(c->s->prot, pl->dir, pl->name, pl->abs) : 0;
}

/* ---- open ---------------------------------------------------------------- */

/* A file that exists, opened again from our O_PATH fd: Landlock judges its path. */
static int reopen(struct call *c, int obj, int flags, struct job *j)
{
	struct stat st;
	const char *rule;
	if (fstat(obj, &st) < 0)
		return -errno;
	char where[PATH_MAX];
	bool known = stepview_held_path(obj, where, sizeof(where)) == 0;
	if (S_ISREG(st.st_mode) && known &&
	    (sup_match_object(c, obj, where, PROTECT_MAKE).verdict != PROTECT_FREE ||
	     protect_inode(c->s->prot, st.st_dev, st.st_ino, &rule))) {
		sup_note_denial(c, OP_PROTECTED, where, -1);
		return -EACCES;
	}
	char via[64];
	snprintf(via, sizeof(via), "/proc/self/fd/%d", obj);
	j->dir = AT_FDCWD;
	j->name = via;
	j->flags = flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW | O_TRUNC);
	/*
	 * A FIFO or a device may block its open (a FIFO with no reader): the
	 * performer serves every call, so it never waits; what the step did
	 * not ask for is taken off after. A FIFO opened to write with no
	 * reader yet waits for one in a thread of its own.
	 */
	bool special = !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
	if (special)
		j->flags |= O_NONBLOCK;
	int r = sup_perform(c, sup_job_open, j);
	landlock_refused(c, r, OP_WRITE, NULL, known ? where : NULL);
	if (r == -ENXIO && S_ISFIFO(st.st_mode) && !(flags & O_NONBLOCK))
		return sup_perform_fifo(c, obj, j->flags & ~O_NONBLOCK);
	if (r == 0 && special && !(flags & O_NONBLOCK))
		r = fcntl(j->fd, F_SETFL, fcntl(j->fd, F_GETFL) & ~O_NONBLOCK) < 0 ? -errno : 0;
	if (r == 0 && (flags & O_TRUNC) && S_ISREG(st.st_mode) && ftruncate(j->fd, 0) < 0)
		r = -errno;
	if (r < 0 && j->fd >= 0) {
		close(j->fd);
		j->fd = -1;
	}
	return r;
}

/*
 * Where the symlink pl leads, as a path in the step's view (absolute, or
 * from the link's folder): 0, or -EACCES where it cannot be named.
 */
static int dangling_target(const struct place *pl, char *out, size_t cap)
{
	char target[PATH_MAX], dir[PATH_MAX];
	ssize_t tl = readlinkat(pl->dir, pl->name, target, sizeof(target) - 1);
	if (tl <= 0 || !pl->known || !path_parent(pl->abs, dir, sizeof(dir)))
		return -EACCES;
	target[tl] = '\0';
	bool abs = target[0] == '/';
	int n = snprintf(out, cap, "%s%s%s", abs ? "" : dir, abs || !strcmp(dir, "/") ? "" : "/",
			 target);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

static int make_new(struct call *c, uint64_t dirfd, const char *path, int flags, mode_t mode,
		    int links, struct place *pl, bool absent);
static int guard_open(struct call *c, uint64_t dirfd, const char *path, int flags, mode_t mode,
		      int links);

/*
 * open, openat, creat with a flag that writes or creates. A name that
 * exists is opened again from the object the walk pinned (O_TRUNC after
 * its identity is checked, so a protected file is never emptied); a new
 * name is made in the pinned folder with O_NOFOLLOW.
 */
static int guard_open(struct call *c, uint64_t dirfd, const char *path, int flags, mode_t mode,
		      int links)
{
	struct job j = {.nr = c->req->data.nr, .fd = -1};
	int r = 0;
	if (flags & __O_TMPFILE) {
		/* a file with no name: a link gives it one, and is judged then */
		int dir = stepview_resolve(&c->v, dirfd, path, true);
		if (dir < 0)
			return dir;
		j.dir = dir;
		j.name = ".";
		j.flags = flags;
		j.mode = mode & ~sup_step_umask(c);
		char where[PATH_MAX];
		bool known = stepview_held_path(dir, where, sizeof(where)) == 0;
		r = sup_perform_names(c, sup_job_open, &j, dir, known ? where : NULL, -1, NULL);
		if (known)
			landlock_refused(c, r, OP_CREATE, NULL, where);
		close(dir);
		return r < 0 ? r : j.fd;
	}
	bool excl = (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
	struct place pl;
	struct stat st;
	/*
	 * Most opens that create make a new name: its folder resolved first,
	 * and made there when nothing is at the name (no second walk); anything
	 * there, or a folder that cannot be reached, is walked to whole below.
	 */
	if ((flags & O_CREAT) && place_of(c, dirfd, path, &pl) == 0) {
		if (fstatat(pl.dir, pl.name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
			return make_new(c, dirfd, path, flags, mode, links, &pl, true);
		place_close(&pl);
	}
	int obj = stepview_resolve(&c->v, dirfd, path, !excl && !(flags & O_NOFOLLOW));
	if (obj >= 0) {
		if (fstat(obj, &st) == 0 && S_ISLNK(st.st_mode))
			r = (flags & O_NOFOLLOW) ? -ELOOP : -EEXIST;
		else if (excl)
			r = -EEXIST;
		else
			r = reopen(c, obj, flags, &j);
		close(obj);
		return r < 0 ? r : j.fd;
	}
	if (obj != -ENOENT || !(flags & O_CREAT))
		return obj;
	if ((r = place_of(c, dirfd, path, &pl)) < 0)
		return r;
	return make_new(c, dirfd, path, flags, mode, links, &pl, false);
}

/*
 * The name at pl (resolved for an open that creates; absent: nothing was
 * there a moment ago), made new; pl closed. An fd or -errno.
 */
static int make_new(struct call *c, uint64_t dirfd, const char *path, int flags, mode_t mode,
		    int links, struct place *pl, bool absent)
{
	struct job j = {.nr = c->req->data.nr, .fd = -1};
	bool excl = (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
	int r = 0;
	struct stat st;
	char next[PATH_MAX * 2];
	enum protect_verdict v;
	if (!absent && fstatat(pl->dir, pl->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode)) {
		/* a dangling symlink: the kernel makes its target, judged as any place */
		r = links >= 40 ? -ELOOP : dangling_target(pl, next, sizeof(next));
		if (r == 0)
			r = guard_open(c, (uint64_t)(unsigned)AT_FDCWD, next, flags, mode,
				       links + 1);
		j.fd = r;
	} else if ((v = judge(c, pl, PROTECT_MAKE, true)) == PROTECT_REFUSED) {
		r = -EACCES;
	} else {
		/*
		 * Made, never opened: a name put there since the check (a hard
		 * link of a protected file renamed onto it) is looked at again
		 * as a name that exists.
		 */
		j.dir = pl->dir;
		j.name = pl->name;
		j.flags = flags | O_NOFOLLOW | O_EXCL;
		j.mode = mode & ~sup_step_umask(c);
		r = sup_perform_names(c, sup_job_open, &j, pl->dir, pl->known ? pl->where : NULL,
				      -1, NULL);
		if (r == -EEXIST && !excl) {
			place_close(pl);
			return links >= 40 ? -ELOOP
					   : guard_open(c, dirfd, path, flags, mode, links + 1);
		}
		landlock_refused(c, r, OP_CREATE, pl, NULL);
		if (r == 0 && note_gitdir_made(c, pl) < 0) {
			close(j.fd);
			r = -ENOMEM;
		}
		/*
		 * A new gitdir's config, made in place: its gitdir judged after
		 * the step; a .git file made (a worktree's, a submodule's): the
		 * gitdir it names.
		 */
		if (r == 0 && v == PROTECT_JUDGED &&
		    (is_dotgit(pl->name) ? protect_note_gitdir(c->s->prot, pl->abs) |
						   protect_note_worktree(c->s->prot, pl->abs)
					 : protect_note_made(c->s->prot, pl->abs)) < 0) {
			close(j.fd);
			r = -ENOMEM;
		}
	}
	place_close(pl);
	return r < 0 ? r : j.fd;
}

/* ---- rename, link, symlink, and the rest -------------------------------- */

/*
 * A git config renamed onto its name: judged by its keys against the one
 * there, and what lands is a new file with the text judged (the step's fd
 * on the file it moved writes nowhere that runs); the file moved goes.
 */
static int judged_config(struct call *c, struct place *from, struct place *to)
{
	int fd = openat(from->dir, from->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st = {0};
	char *now = NULL, *was = NULL;
	int r = fd < 0 ? -errno : fstat(fd, &st) < 0 ? -errno : 0;
	if (r == 0 && (!S_ISREG(st.st_mode) || st.st_size > (off_t)PROTECT_MAX_CONTENT))
		r = -EACCES;
	size_t len = 0, wlen = 0;
	if (r == 0 && path_read_fd(fd, PROTECT_MAX_CONTENT, &now, &len) < 0)
		r = -EACCES;
	int old = openat(to->dir, to->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	bool unread = r == 0 && old >= 0 && path_read_fd(old, PROTECT_MAX_CONTENT, &was, &wlen) < 0;
	char *why = r == 0 && !unread ? protect_git_runs(was, now, len) : NULL;
	if (why || unread) {
		sup_note_denial(c, OP_PROTECTED, to->abs, -1);
		r = -EACCES;
	}
	char tmp[NAME_MAX + 1];
	snprintf(tmp, sizeof(tmp), ".%.200s.stepbox-%d", to->name, (int)c->v.tid);
	struct job j = {.nr = SYS_openat,
			.dir = to->dir,
			.name = tmp,
			.flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW,
			.mode = st.st_mode & 0777,
			.fd = -1};
	if (r == 0 && (r = sup_perform(c, sup_job_open, &j)) == 0) {
		r = write(j.fd, now, len) == (ssize_t)len ? 0 : -EIO;
		close(j.fd);
		struct job mv = {.nr = SYS_renameat2,
				 .dir = to->dir,
				 .name = tmp,
				 .dir2 = to->dir,
				 .name2 = to->name};
		if (r == 0)
			r = sup_perform(c, sup_job_call, &mv);
		struct job rm = {.nr = SYS_unlinkat,
				 .dir = r == 0 ? from->dir : to->dir,
				 .name = r == 0 ? from->name : tmp};
		int e = sup_perform(c, sup_job_call, &rm);
		r = r < 0 ? r : e;
	}
	if (fd >= 0)
		close(fd);
	if (old >= 0)
		close(old);
	free(now);
	free(was);
	free(why);
	return r;
}

/* What a rename's destination meets, for the object found at from. */
static enum protect_change moved_in(const struct place *from)
{
	struct stat st;
	bool dir =
		fstatat(from->dir, from->name, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISDIR(st.st_mode);
	return dir ? PROTECT_MOVE_DIR_IN : PROTECT_MOVE_IN; /* unknown: as a folder */
}

static int guard_rename(struct call *c, struct place *from, struct place *to, unsigned flags)
{
	bool swap = flags & RENAME_EXCHANGE;
	enum protect_change in = moved_in(from);
	/*
	 * What is moved is followed by its path (the gitdirs the step made, to
	 * be judged after it): nothing moves out of or into a folder with no
	 * path here (one deeper than PATH_MAX); and a .git is never exchanged,
	 * which would leave its name to what came in and the record to what left.
	 */
	if ((!from->known && !dots(from->name)) || (!to->known && !dots(to->name)) ||
	    (swap && (is_dotgit(from->name) || is_dotgit(to->name)))) {
		if (to->known || from->known)
			sup_note_denial(c, OP_PROTECTED, to->known ? to->abs : from->abs, -1);
		return -EACCES;
	}
	if (refused(c, from, PROTECT_REMOVE) || (swap && refused(c, to, PROTECT_REMOVE)) ||
	    (swap && refused(c, from, moved_in(to))))
		return -EACCES;
	struct protect_hit h = to->known && !dots(to->name)
				       ? match(c, to, in)
				       : (struct protect_hit){PROTECT_FREE, NULL};
	if (h.verdict == PROTECT_JUDGED && !swap)
		return judged_config(c, from, to);
	if (h.verdict == PROTECT_JUDGED) {
		sup_note_denial(c, OP_PROTECTED, to->abs, -1); /* a config swapped in whole */
		return -EACCES;
	}
	if (refused(c, to, in))
		return -EACCES;
	/* a link replaced (ln -sfn) is a link removed: the person's path to a checkout */
	struct stat old;
	if (!swap && to->known && fstatat(to->dir, to->name, &old, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(old.st_mode) && refused(c, to, PROTECT_REMOVE))
		return -EACCES;
	/*
	 * A file checked may be swapped for a folder before it moves, where a
	 * folder would be refused: the object moved is checked after, and a
	 * folder that was not checked goes back where it came from.
	 */
	struct stat before, after;
	bool pinned = in == PROTECT_MOVE_IN &&
		      fstatat(from->dir, from->name, &before, AT_SYMLINK_NOFOLLOW) == 0;
	struct job j = {.nr = SYS_renameat2,
			.dir = from->dir,
			.name = from->name,
			.dir2 = to->dir,
			.name2 = to->name,
			.flags = (int)flags};
	int r = sup_perform_names(c, sup_job_call, &j, from->dir, from->known ? from->where : NULL,
				  to->dir, to->known ? to->where : NULL);
	landlock_refused(c, r, OP_RENAME, to, NULL);
	if (r == 0 && note_gitdir_made(c, to) < 0)
		r = -ENOMEM;
	if (r == 0 && pinned && !swap &&
	    (fstatat(to->dir, to->name, &after, AT_SYMLINK_NOFOLLOW) < 0 ||
	     after.st_ino != before.st_ino || after.st_dev != before.st_dev) &&
	    match(c, to, PROTECT_MOVE_DIR_IN).verdict != PROTECT_FREE) {
		struct job back = {.nr = SYS_renameat2,
				   .dir = to->dir,
				   .name = to->name,
				   .dir2 = from->dir,
				   .name2 = from->name,
				   .flags = RENAME_NOREPLACE};
		sup_perform(c, sup_job_call, &back);
		sup_note_denial(c, OP_PROTECTED, to->abs, -1);
		r = -EACCES;
	}
	/* a gitdir the step made, or one to judge after it, is followed where it went */
	if (r == 0 && from->known && to->known)
		protect_note_moved(c->s->prot, from->abs, to->abs, swap);
	return r;
}

/* link: the file linked must not be protected (a write through the new name would reach it). */
static int guard_link(struct call *c, uint64_t olddir, const char *old, struct place *to, int flags)
{
	if (refused(c, to, PROTECT_MAKE))
		return -EACCES;
	int obj = -EBADF;
	if ((flags & AT_EMPTY_PATH) && !old[0]) {
		char what[32];
		snprintf(what, sizeof(what), "fd/%d", (int)olddir);
		obj = (int)olddir < 0 ? -EBADF : stepview_proc_open(&c->v, what, O_PATH);
	} else {
		obj = stepview_resolve(&c->v, olddir, old, flags & AT_SYMLINK_FOLLOW);
	}
	if (obj < 0)
		return obj == -ENOENT && !old[0] ? -EBADF : obj;
	struct stat st;
	char where[PATH_MAX] = "?";
	const char *rule;
	int r = fstat(obj, &st) < 0 ? -errno : 0;
	if (r == 0 && ((stepview_held_path(obj, where, sizeof(where)) == 0 &&
			sup_match_object(c, obj, where, PROTECT_MAKE).verdict != PROTECT_FREE) ||
		       protect_inode(c->s->prot, st.st_dev, st.st_ino, &rule))) {
		sup_note_denial(c, OP_PROTECTED, where, -1);
		r = -EACCES;
	}
	char via[64];
	snprintf(via, sizeof(via), "/proc/self/fd/%d", obj);
	/* the object pinned, linked through our magic link to it */
	struct job j = {.nr = SYS_linkat,
			.dir = AT_FDCWD,
			.name = via,
			.dir2 = to->dir,
			.name2 = to->name,
			.flags = AT_SYMLINK_FOLLOW};
	if (r == 0 && S_ISLNK(st.st_mode)) {
		/* a symlink itself: linked by its own name, from a folder of ours */
		r = -EACCES;
	}
	if (r == 0) {
		r = sup_perform(c, sup_job_call, &j);
		landlock_refused(c, r, OP_LINK, to, NULL);
		if (r == 0 && note_gitdir_made(c, to) < 0)
			r = -ENOMEM;
	}
	close(obj);
	return r;
}

/* The path arguments of each call: dirfd (-1: AT_FDCWD), path, and a second pair. */
struct shape {
	int nr;
	int dir, path, dir2, path2, flags;
};
/* clang-format off: a table, read by its columns */
static const struct shape shapes[] = {
	/* nr              dir path dir2 path2 flags */
	{SYS_open, -1, 0, -1, -1, 1},
	{SYS_openat, 0, 1, -1, -1, 2},
	{SYS_creat, -1, 0, -1, -1, -1},
	{SYS_mkdir, -1, 0, -1, -1, -1},
	{SYS_mkdirat, 0, 1, -1, -1, -1},
	{SYS_mknod, -1, 0, -1, -1, -1},
	{SYS_mknodat, 0, 1, -1, -1, -1},
	{SYS_unlink, -1, 0, -1, -1, -1},
	{SYS_rmdir, -1, 0, -1, -1, -1},
	{SYS_unlinkat, 0, 1, -1, -1, 2},
	{SYS_rename, -1, 0, -1, 1, -1},
	{SYS_renameat, 0, 1, 2, 3, -1},
	{SYS_renameat2, 0, 1, 2, 3, 4},
	{SYS_link, -1, 0, -1, 1, -1},
	{SYS_linkat, 0, 1, 2, 3, 4},
	{SYS_symlink, -1, 1, -1, -1, -1}, /* path: the link; path2: its target, below */
	{SYS_symlinkat, 1, 2, -1, -1, -1},
	{SYS_truncate, -1, 0, -1, -1, -1},
};
/* clang-format on */

static const struct shape *shape_of(int nr)
{
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		if (shapes[i].nr == nr)
			return &shapes[i];
	return NULL;
}

bool sup_guarded(int nr)
{
	return shape_of(nr) != NULL;
}

static uint64_t dir_arg(const uint64_t *a, int i)
{
	return i < 0 ? (uint64_t)(unsigned)AT_FDCWD : a[i];
}

/* What the call does to its one place, performed there: mkdir, mknod, unlink, symlink. */
static int guard_one(struct call *c, const struct shape *sh, const char *path)
{
	const uint64_t *a = (const uint64_t *)c->req->data.args;
	int nr = sh->nr;
	struct place pl;
	int r = place_of(c, dir_arg(a, sh->dir), path, &pl);
	if (r < 0)
		return r;
	struct job j = {.nr = nr, .dir = pl.dir, .name = pl.name};
	enum protect_change how = PROTECT_MAKE;
	char target[PATH_MAX];
	struct stat st;
	if (nr == SYS_mkdir || nr == SYS_mkdirat) {
		how = PROTECT_MKDIR;
		/*
		 * A name there already: EEXIST, as the kernel answers before any
		 * permission (most of an install's mkdirs: makedirs of folders
		 * that exist), without asking the performer.
		 */
		if (!dots(pl.name) && fstatat(pl.dir, pl.name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			place_close(&pl);
			return -EEXIST;
		}
		j.mode = (mode_t)a[sh->path + 1] & ~sup_step_umask(c);
	} else if (nr == SYS_mknod || nr == SYS_mknodat) {
		j.mode = (mode_t)a[sh->path + 1] & ~sup_step_umask(c);
		j.arg = a[sh->path + 2];
	} else if (nr == SYS_unlink || nr == SYS_rmdir || nr == SYS_unlinkat) {
		how = PROTECT_REMOVE;
		j.flags = nr == SYS_rmdir ? AT_REMOVEDIR : nr == SYS_unlinkat ? (int)a[2] : 0;
	} else if ((r = stepview_read_str(&c->v, a[0], target, sizeof(target))) == 0) {
		j.name2 = target; /* symlink, symlinkat: the target, a string */
	}
	if (r == 0 && refused(c, &pl, how)) {
		r = -EACCES;
	} else if (r == 0) {
		bool node = nr == SYS_mknod || nr == SYS_mknodat;
		r = node ? sup_perform(c, sup_job_call, &j)
			 : sup_perform_names(c, sup_job_call, &j, pl.dir,
					     pl.known ? pl.where : NULL, -1, NULL);
		landlock_refused(c, r, how == PROTECT_REMOVE ? OP_DELETE : OP_CREATE, &pl, NULL);
		if (r == 0 && how != PROTECT_REMOVE && note_gitdir_made(c, &pl) < 0)
			r = -ENOMEM;
		/* a gitdir of the step's own (git init, a clone): it may remove what it holds */
		if (r == 0 && how == PROTECT_MKDIR && pl.known &&
		    (is_dotgit(pl.name) || protect_is_admin_dir(c->s->prot, pl.abs)))
			protect_note_gitdir(c->s->prot, pl.abs);
		/*
		 * A folder of the step's: a gitdir found there later is its own; a
		 * link of the step's: no path of the person's, removed or replaced.
		 */
		struct stat made;
		bool link = nr == SYS_symlink || nr == SYS_symlinkat;
		if (r == 0 && (how == PROTECT_MKDIR || link) &&
		    fstatat(pl.dir, pl.name, &made, AT_SYMLINK_NOFOLLOW) == 0)
			protect_note_created(c->s->prot, made.st_dev, made.st_ino);
		if (r == 0 && how == PROTECT_REMOVE && pl.known)
			protect_note_removed(c->s->prot, pl.abs);
	}
	place_close(&pl);
	return r;
}

/* truncate(path): the file the path leads to, pinned, truncated through our link to it. */
static int guard_truncate(struct call *c, const char *path)
{
	int obj = stepview_resolve(&c->v, AT_FDCWD, path, true);
	if (obj < 0)
		return obj;
	struct stat st;
	char where[PATH_MAX] = "?", via[64];
	const char *rule;
	int r = fstat(obj, &st) < 0 ? -errno : 0;
	if (r == 0 && stepview_held_path(obj, where, sizeof(where)) == 0 &&
	    (sup_match_object(c, obj, where, PROTECT_MAKE).verdict != PROTECT_FREE ||
	     protect_inode(c->s->prot, st.st_dev, st.st_ino, &rule))) {
		sup_note_denial(c, OP_PROTECTED, where, -1);
		r = -EACCES;
	}
	snprintf(via, sizeof(via), "/proc/self/fd/%d", obj);
	struct job j = {.nr = SYS_truncate, .name = via, .arg = c->req->data.args[1]};
	if (r == 0) {
		r = sup_perform(c, sup_job_call, &j);
		landlock_refused(c, r, OP_TRUNCATE, NULL, where);
	}
	close(obj);
	return r;
}

/* Two places: rename and link. */
static int guard_two(struct call *c, const struct shape *sh, const char *p1, const char *p2)
{
	const uint64_t *a = (const uint64_t *)c->req->data.args;
	int flags = sh->flags >= 0 ? (int)a[sh->flags] : 0;
	struct place from = {.dir = -1}, to;
	int r = place_of(c, dir_arg(a, sh->dir2), p2, &to);
	bool link = sh->nr == SYS_link || sh->nr == SYS_linkat;
	char d1[PATH_MAX], d2[PATH_MAX];
	if (r == 0 && link) {
		if (flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH))
			r = -EINVAL;
		else
			r = guard_link(c, dir_arg(a, sh->dir), p1, &to, flags);
	} else if (r == 0 && dir_arg(a, sh->dir) == dir_arg(a, sh->dir2) &&
		   split_place(p1, d1, sizeof(d1), &from) == 0 &&
		   split_place(p2, d2, sizeof(d2), &to) == 0 && strcmp(d1, d2) == 0) {
		/* a rename within one folder (most): resolved once */
		int fd = fcntl(to.dir, F_DUPFD_CLOEXEC, 3);
		r = fd < 0 ? -errno : 0;
		if (r == 0) {
			place_in(&from, fd, to.known ? to.where : NULL);
			r = guard_rename(c, &from, &to, (unsigned)flags);
		}
	} else if (r == 0 && (r = place_of(c, dir_arg(a, sh->dir), p1, &from)) == 0) {
		r = guard_rename(c, &from, &to, (unsigned)flags);
	}
	place_close(&from);
	place_close(&to);
	return r;
}

/*
 * --explain by the tracer: a call performed here that failed as the tracer
 * judges its own (it never stops at a call the supervisor takes), with what
 * it would have read from it; a refusal said here already is not.
 */
static void judge_failed(struct call *c, const struct shape *sh, const char *p1, const char *p2,
			 int flags, int e)
{
	const uint64_t *a = (const uint64_t *)c->req->data.args;
	if (!c->s->judge || c->noted ||
	    (e != EACCES && e != EPERM && e != EXDEV && e != ENOENT && e != EROFS && e != EBUSY))
		return;
	char a1[PATH_MAX], a2[PATH_MAX] = "";
	/* as the tracer names its own calls */
	path_of_tid(c->v.tid, (int)dir_arg(a, sh->dir), p1, a1, sizeof(a1));
	if (sh->path2 >= 0)
		path_of_tid(c->v.tid, (int)dir_arg(a, sh->dir2), p2, a2, sizeof(a2));
	struct stat st;
	enum denial_op op = OP_CREATE;
	switch (sh->nr) {
	case SYS_open:
	case SYS_openat:
	case SYS_creat:
		op = (flags & O_CREAT) && stat(a1, &st) < 0 ? OP_CREATE : OP_WRITE;
		break;
	case SYS_truncate:
		op = OP_WRITE;
		break;
	case SYS_unlink:
	case SYS_unlinkat:
	case SYS_rmdir:
		op = OP_DELETE;
		break;
	case SYS_rename:
	case SYS_renameat:
	case SYS_renameat2:
		op = OP_RENAME;
		break;
	case SYS_link:
	case SYS_linkat:
		op = OP_LINK;
		break;
	default: /* mkdir, mknod, symlink */
		break;
	}
	if (a1[0])
		sup_note_failed(c, op, a1, a2, e);
}

void sup_serve_guard(struct call *c)
{
	sup_serve_guard_read(c, NULL, NULL);
}

/*
 * A caller in the line of a Landlock domain the step took (landrun, a
 * nested stepbox) has its calls made by that domain's keeper, which holds
 * the step's rights and the domain's (supervise_nested.c): c->fsk. One
 * whose line cannot be placed (an orphan) is refused, and said: false.
 */
static bool placed(struct call *c, const char *path)
{
	c->fsk = NULL;
	if (!c->s->landlock_nested || sup_nested_fs_keeper(c, &c->fsk) == 0)
		return true;
	sup_nested_refuse(c, path);
	return false;
}

void sup_serve_guard_read(struct call *c, const char *p1_read, const char *p2_read)
{
	const uint64_t *a = (const uint64_t *)c->req->data.args;
	const struct shape *sh = shape_of(c->req->data.nr);
	if (!sh) {
		sup_respond(c, 0, ENOSYS);
		return;
	}
	char p1[PATH_MAX], p2[PATH_MAX] = "";
	int r = 0;
	if (p1_read)
		snprintf(p1, sizeof(p1), "%s", p1_read);
	else
		r = stepview_read_str(&c->v, a[sh->path], p1, sizeof(p1));
	if (r == 0 && sh->path2 >= 0 && p2_read)
		snprintf(p2, sizeof(p2), "%s", p2_read);
	else if (r == 0 && sh->path2 >= 0)
		r = stepview_read_str(&c->v, a[sh->path2], p2, sizeof(p2));
	bool named = r == 0;
	long val = 0;
	int nr = sh->nr, flags = 0;
	if (r < 0) {
		/* r as it is */
	} else if (nr == SYS_open || nr == SYS_openat || nr == SYS_creat) {
		flags = nr == SYS_creat ? O_CREAT | O_WRONLY | O_TRUNC : (int)a[sh->flags];
		mode_t mode = (mode_t)a[nr == SYS_openat ? 3 : nr == SYS_open ? 2 : 1];
		if ((flags & O_ACCMODE) == O_RDONLY &&
		    !(flags & (O_CREAT | O_TRUNC | __O_TMPFILE))) {
			sup_go_on(c); /* a read: nothing here to judge */
			return;
		}
		if (!placed(c, p1))
			return;
		r = guard_open(c, dir_arg(a, sh->dir), p1, flags, mode, 0);
		if (r >= 0) {
			int fd = r;
			val = r = sup_hand_fd(c, fd, flags);
			close(fd);
		}
	} else if (!placed(c, p1)) {
		return;
	} else if (nr == SYS_truncate) {
		r = guard_truncate(c, p1);
	} else if (sh->path2 >= 0) {
		r = guard_two(c, sh, p1, p2);
	} else {
		r = guard_one(c, sh, p1);
	}
	/* a path too long to resolve here is refused: named as the step gave it */
	if (r == -ENAMETOOLONG && p1[0] == '/')
		sup_note_denial(c,
				nr == SYS_open || nr == SYS_openat || nr == SYS_creat ? OP_CREATE
										      : OP_WRITE,
				p1, -1);
	if (r == -EINPROGRESS)
		return; /* a FIFO's writer, answered when its reader comes */
	if (r < 0 && named)
		judge_failed(c, sh, p1, p2, flags, -r);
	sup_respond(c, r < 0 ? 0 : val, r < 0 ? -r : 0);
}
