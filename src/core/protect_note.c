/*
 * protect_note: what the live layer tells the record while the step runs
 * (the gitdirs, worktrees and folders it made for the step, what it moved
 * and removed), so that the step's own is told from the person's, live
 * and after the step; and whether a recorded file is still at its name.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path.h"
#include "protect_int.h"

/* "GRANT\tREL" into list for each grant holding abs (beneath it): 0 or -errno. */
static int note_in_grants(struct protect_record *r, struct strv *list, const char *abs)
{
	for (size_t g = 0; g < r->roots.n; g++) {
		const char *root = r->roots.v[g];
		if (!path_beneath(abs, root) || strcmp(abs, root) == 0)
			continue;
		char *key = strv_fmt("%zu\t%s", g, abs + strlen(root) + (strcmp(root, "/") != 0));
		if (!key)
			return -ENOMEM;
		if (strv_find(list, key) >= 0) {
			free(key);
			continue;
		}
		int e = strv_push_owned(list, key);
		if (e < 0)
			return e;
	}
	return 0;
}

int protect_note_gitdir(struct protect_record *r, const char *abs)
{
	return r ? note_in_grants(r, &r->made, abs) : -EINVAL;
}

int protect_note_worktree(struct protect_record *r, const char *abs)
{
	char top[PATH_MAX];
	if (!r || !r->hooks_rel.n)
		return 0;
	return path_parent(abs, top, sizeof(top)) ? note_in_grants(r, &r->worktrees, top) : 0;
}

/* The slot of (dev, ino) in the created set: where it is, or the empty one it would take. */
static size_t created_slot(const struct protect_record *r, uint64_t dev, uint64_t ino)
{
	size_t mask = r->created.cap - 1;
	size_t i = (size_t)((ino * 0x9e3779b97f4a7c15ULL) ^ dev) & mask;
	while (r->created.v[i][1] && !(r->created.v[i][0] == dev && r->created.v[i][1] == ino))
		i = (i + 1) & mask;
	return i;
}

bool protect_was_created(const struct protect_record *r, const struct stat *st)
{
	return r->created.n && st->st_ino &&
	       r->created.v[created_slot(r, st->st_dev, st->st_ino)][1] == st->st_ino;
}

int protect_note_created(struct protect_record *r, dev_t dev, ino_t ino)
{
	if (!r || !ino)
		return 0;
	if (2 * (r->created.n + 1) > r->created.cap) { /* at most half full */
		size_t cap = r->created.cap ? 2 * r->created.cap : 64;
		uint64_t(*old)[2] = r->created.v;
		size_t oldcap = r->created.cap;
		if (!(r->created.v = calloc(cap, sizeof(*r->created.v)))) {
			r->created.v = old;
			return -ENOMEM;
		}
		r->created.cap = cap;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i][1])
				memcpy(r->created.v[created_slot(r, old[i][0], old[i][1])], old[i],
				       sizeof(old[i]));
		free(old);
	}
	size_t i = created_slot(r, (uint64_t)dev, (uint64_t)ino);
	if (!r->created.v[i][1]) {
		r->created.v[i][0] = (uint64_t)dev;
		r->created.v[i][1] = (uint64_t)ino;
		r->created.n++;
	}
	return 0;
}

bool protect_is_admin_dir(const struct protect_record *r, const char *abs)
{
	char up[PATH_MAX], gd[PATH_MAX];
	if (!r || !path_parent(abs, up, sizeof(up)) || !path_parent(up, gd, sizeof(gd)))
		return false;
	const char *kind = strrchr(up, '/');
	if (!kind || (strcmp(kind, "/modules") != 0 && strcmp(kind, "/worktrees") != 0))
		return false;
	size_t n = strlen(gd);
	if (n >= 5 && strcmp(gd + n - 5, "/.git") == 0)
		return true;
	for (size_t i = 0; i < r->gitdirs.n; i++) { /* a bare clone's, recorded */
		size_t g;
		const char *rel = protect_entry(r->gitdirs.v[i], &g);
		const char *root = g < r->roots.n ? r->roots.v[g] : NULL;
		char p[PATH_MAX * 2];
		if (rel && root &&
		    snprintf(p, sizeof(p), "%s/%s", strcmp(root, "/") ? root : "", rel) > 0 &&
		    strcmp(p, gd) == 0)
			return true;
	}
	return false;
}

/*
 * Whether the entry e lies at or beneath the absolute path at: the rest of
 * its REL after at's (at may lie in its grant), or NULL.
 */
static const char *entry_beneath(const struct protect_record *r, const char *e, const char *at)
{
	size_t g;
	const char *rel = protect_entry(e, &g);
	if (!rel || g >= r->roots.n || !path_beneath(at, r->roots.v[g]))
		return NULL;
	const char *root = r->roots.v[g];
	const char *atrel = at + strlen(root);
	atrel += *atrel == '/';
	return *atrel ? protect_beneath(atrel, false, rel) : rel; /* at the grant: all of it */
}

/*
 * list's entries at or beneath from, moved to to (swap: to's to from as
 * well), or dropped (to NULL); the others kept as they are. The list is
 * left alone when none is (most renames and removals). 0 or -ENOMEM.
 */
static int move_entries(struct protect_record *r, struct strv *list, const char *from,
			const char *to, bool swap)
{
	size_t i = 0;
	while (i < list->n && !entry_beneath(r, list->v[i], from) &&
	       !(swap && to && entry_beneath(r, list->v[i], to)))
		i++;
	if (i == list->n)
		return 0;
	struct strv out = STRV_INIT;
	int rc = 0;
	for (i = 0; rc == 0 && i < list->n; i++) {
		const char *rest = entry_beneath(r, list->v[i], from), *b = to;
		if (!rest && swap && to && (rest = entry_beneath(r, list->v[i], to)))
			b = from;
		char *moved = rest && b ? strv_fmt("%s%s%s", b, *rest ? "/" : "", rest) : NULL;
		if (!rest)
			rc = strv_push(&out, list->v[i]);
		else if (b)
			rc = moved ? note_in_grants(r, &out, moved) : -ENOMEM;
		free(moved);
	}
	if (rc == 0) {
		strv_release(list);
		*list = out;
	} else {
		strv_release(&out);
	}
	return rc;
}

int protect_note_moved(struct protect_record *r, const char *from, const char *to, bool swap)
{
	int rc = r ? move_entries(r, &r->made, from, to, swap) : -EINVAL;
	return rc == 0 ? move_entries(r, &r->gitdirs, from, to, swap) : rc;
}

int protect_note_removed(struct protect_record *r, const char *abs)
{
	return r ? move_entries(r, &r->made, abs, NULL, false) : -EINVAL;
}

int protect_note_made(struct protect_record *r, const char *abs)
{
	char gd[PATH_MAX];
	if (!r || !path_parent(abs, gd, sizeof(gd)))
		return -EINVAL;
	return note_in_grants(r, &r->gitdirs, gd);
}

/*
 * Whether the recorded file it is still at its name: reached from its
 * grant one real folder at a time, that name holds the same inode (or
 * cannot be told otherwise: a folder that is no longer one, an error).
 */
static bool still_there(const struct protect_record *r, const struct item *it)
{
	int root = protect_open_root(r, it->grant);
	const char *base;
	int dfd = root >= 0 ? protect_walk(root, it->rel, &base) : root;
	struct stat st;
	int e = dfd >= 0 && fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	bool there = dfd == -ENOENT || e == -ENOENT ? false
		     : dfd < 0 || e < 0             ? true /* fail closed */
					: st.st_dev == it->st.st_dev && st.st_ino == it->st.st_ino;
	if (dfd >= 0)
		close(dfd);
	if (root >= 0)
		close(root);
	return there;
}

bool protect_inode(const struct protect_record *r, dev_t dev, ino_t ino, const char **rule)
{
	for (size_t i = 0; r && i < r->before.n; i++) {
		const struct item *it = &r->before.v[i];
		if (it->st.st_dev != dev || it->st.st_ino != ino || !S_ISREG(it->st.st_mode))
			continue;
		size_t n = strlen(it->rel);
		if (it->kind == ITEM_HOOK && n > 7 && strcmp(it->rel + n - 7, ".sample") == 0)
			continue;
		/*
		 * The name replaced since (a git config renamed onto it, judged)
		 * frees its inode, and the file system gives the number to the
		 * next new file (git's next config.lock): that one is not it.
		 */
		if (!still_there(r, it))
			continue;
		*rule = it->rule;
		return true;
	}
	return false;
}

int protect_note_sign(struct protect_record *r, int dirfd, const char *name, const char *abs)
{
	static const char *const signs[] = {"HEAD", "objects", "refs"};
	struct stat st, dir;
	bool sign = false, all = r && fstat(dirfd, &dir) == 0;
	for (size_t i = 0; i < 3; i++) {
		size_t n = strlen(signs[i]);
		sign |= strncasecmp(name, signs[i], n) == 0 && (!name[n] || name[n] == '/');
		/* a link there counts, dangling or not: what it leads to may come later */
		all = all && fstatat(dirfd, signs[i], &st, AT_SYMLINK_NOFOLLOW) == 0;
	}
	if (!sign || !all)
		return 0;
	/*
	 * A folder of the step's is its own gitdir (git init --bare, a clone's
	 * .git): removable, judged after the step as the step's. It may stand
	 * at a path of the person's (src moved away and made again), so it is
	 * judged all the same.
	 */
	char gd[PATH_MAX];
	if (!protect_was_created(r, &dir))
		return protect_note_made(r, abs);
	return path_parent(abs, gd, sizeof(gd)) ? protect_note_gitdir(r, gd) : 0;
}
