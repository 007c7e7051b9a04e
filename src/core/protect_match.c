/*
 * protect_match: the live layer's question, answered from the record made
 * before the step: what one change of one path would meet. The supervisor
 * (Linux) asks it for every call that creates, writes, moves or removes a
 * name, with the path it resolved itself; nothing here touches the file
 * system, so the answer is the same for a name that does not exist yet.
 *
 * A path is matched by name, relative to each write grant that holds it,
 * against the set's names (rules relative to a gitdir against every gitdir:
 * the grant's .git, those recorded before the step, and any folder beneath a
 * gitdir's modules/), the policy's protected_paths, and HOME's names where a
 * grant holds HOME. A folder above a protected name may not be moved or
 * removed, nor anything moved onto it: what is moved in brings its contents.
 * protect_inode alone looks at the file system: whether a recorded file is
 * still at its name.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path.h"
#include "protect_int.h"

/*
 * How one protected name answers a change of itself. fresh: the name lies in
 * a gitdir the record does not hold (made by the step: git init, a clone).
 */
static enum protect_verdict on_name(enum protect_kind k, enum protect_change how, bool fresh)
{
	if (how == PROTECT_MOVE_DIR_IN)
		return PROTECT_REFUSED; /* a folder moved in brings what it holds */
	switch (k) {
	case PROTECT_GITDIR:
	case PROTECT_MODULES:
	case PROTECT_HOOKS:
		/* the folder may be made (git init, a submodule's clone), never replaced */
		return how == PROTECT_MKDIR ? PROTECT_FREE : PROTECT_REFUSED;
	case PROTECT_CONFIG:
		/*
		 * git writes its config whole, by a rename onto it: judged by its
		 * keys. A new gitdir's is made in place too (libgit2's init):
		 * made, and its gitdir judged after the step (protect_note_made).
		 */
		return how == PROTECT_MOVE_IN || (how == PROTECT_MAKE && fresh) ? PROTECT_JUDGED
										: PROTECT_REFUSED;
	case PROTECT_FILE:
	case PROTECT_FOLDER:
		break;
	}
	return PROTECT_REFUSED;
}

/* An entry of a protected folder (one level), named entry. */
static enum protect_verdict on_entry(enum protect_kind k, const char *entry)
{
	size_t n = strlen(entry);
	if (k == PROTECT_HOOKS)
		return n > 7 && strcmp(entry + n - 7, ".sample") == 0 ? PROTECT_FREE
								      : PROTECT_REFUSED;
	/* a policy's name protects a folder's entries; the set's folders theirs */
	return k == PROTECT_FOLDER || k == PROTECT_FILE ? PROTECT_REFUSED : PROTECT_FREE;
}

static void raise_to(struct protect_hit *hit, enum protect_verdict v,
		     const struct protect_rule *rule)
{
	if (v != PROTECT_FREE && (hit->verdict == PROTECT_FREE || v == PROTECT_REFUSED)) {
		hit->verdict = v;
		hit->rule = rule;
	}
}

/* rel's first n components match pat's first n, pat having more: rel lies above pat. */
static bool above(const char *pat, const char *rel)
{
	if (!*rel)
		return true; /* the grant itself holds everything */
	char p[PATH_MAX], r[PATH_MAX];
	size_t rc = 1, pc = 1;
	for (const char *s = rel; *s; s++)
		rc += *s == '/';
	for (const char *s = pat; *s; s++)
		pc += *s == '/';
	if (rc >= pc || snprintf(r, sizeof(r), "%s", rel) >= (int)sizeof(r))
		return false;
	/* pat cut to rel's number of components */
	const char *s = pat;
	for (size_t i = 0; i < rc; i++)
		s = strchr(s, '/') + 1;
	snprintf(p, sizeof(p), "%.*s", (int)(s - pat - 1), pat);
	return fnmatch(p, r, FNM_PATHNAME | FNM_PERIOD) == 0;
}

/*
 * pat (relative to the grant) against rel: the name itself, an entry of it,
 * or a folder above it (moved or removed: refused).
 */
static void try(const char *pat, const struct protect_rule *rule, const char *rel,
		enum protect_change how, bool fresh, struct protect_hit *hit)
{
	char entry[PATH_MAX];
	if (fnmatch(pat, rel, FNM_PATHNAME | FNM_PERIOD) == 0)
		raise_to(hit, on_name(rule->kind, how, fresh), rule);
	else if (snprintf(entry, sizeof(entry), "%s/*", pat) < (int)sizeof(entry) &&
		 fnmatch(entry, rel, FNM_PATHNAME) == 0)
		raise_to(hit, on_entry(rule->kind, strrchr(rel, '/') + 1), rule);
	if ((how == PROTECT_REMOVE || how == PROTECT_MOVE_DIR_IN) && above(pat, rel))
		raise_to(hit, PROTECT_REFUSED, rule);
}

static const struct protect_rule *rule_named(const char *name)
{
	for (size_t i = 0; i < protect_nrules; i++)
		if (strcmp(protect_rules[i].name, name) == 0)
			return &protect_rules[i];
	return NULL;
}

/* Whether the record holds gd (relative to grant g) as a gitdir looked at before the step. */
static bool recorded(const struct protect_record *r, size_t g, const char *gd)
{
	char key[PATH_MAX + 24];
	snprintf(key, sizeof(key), "%zu\t%s", g, gd);
	return strv_find(&r->gitdirs, key) >= 0;
}

/* The rules relative to a gitdir (".git/..."), against the gitdir gd of grant g. */
static void try_gitdir(const struct protect_record *r, size_t g, const char *gd, const char *rel,
		       enum protect_change how, struct protect_hit *hit)
{
	bool fresh = !recorded(r, g, gd);
	for (size_t i = 0; i < protect_nrules; i++) {
		const struct protect_rule *pr = &protect_rules[i];
		if (!pr->gitdir || r->off[i])
			continue;
		char pat[PATH_MAX];
		if (snprintf(pat, sizeof(pat), "%s/%s", gd, pr->name + 5) >= (int)sizeof(pat))
			continue;
		try(pat, pr, rel, how, fresh, hit);
		if (pr->kind != PROTECT_MODULES)
			continue;
		/* a folder moved in beneath modules/ or worktrees/ may be a gitdir */
		if (how == PROTECT_MOVE_DIR_IN && strncmp(rel, pat, strlen(pat)) == 0 &&
		    rel[strlen(pat)] == '/')
			raise_to(hit, PROTECT_REFUSED, pr);
		if (strcmp(pr->name, ".git/worktrees") == 0 &&
		    snprintf(pat, sizeof(pat), "%s/worktrees/*/config.worktree", gd) <
			    (int)sizeof(pat))
			try(pat, rule_named(".git/config.worktree"), rel, how, false, hit);
	}
}

/*
 * Every gitdir a path relative to grant g may lie in: .git (and a nested
 * checkout's), the ones the record holds, and each folder beneath a gitdir's modules/ (a
 * submodule's name may hold slashes: each folder above rel there, not rel itself, so that an object
 * file is never taken for a gitdir).
 */
static void try_gitdirs(const struct protect_record *r, size_t g, const char *rel,
			enum protect_change how, struct protect_hit *hit)
{
	try_gitdir(r, g, ".git", rel, how, hit);
	/* a checkout's .git at any depth (a clone in the workdir): by name, never a walk */
	for (const char *d = strstr(rel, "/.git/"); d; d = strstr(d + 1, "/.git/")) {
		char gd[PATH_MAX];
		snprintf(gd, sizeof(gd), "%.*s", (int)(d + 5 - rel), rel);
		try_gitdir(r, g, gd, rel, how, hit);
	}
	for (size_t i = 0; i < r->gitdirs.n; i++) {
		char *tab;
		unsigned long gg = strtoul(r->gitdirs.v[i], &tab, 10);
		if (*tab == '\t' && gg == g && strcmp(tab + 1, ".git") != 0)
			try_gitdir(r, g, tab + 1, rel, how, hit);
	}
	for (const char *m = strstr(rel, "/modules/"); m; m = strstr(m + 1, "/modules/")) {
		char gd[PATH_MAX];
		for (const char *e = m + 9; *e; e++) {
			if (e[1] != '/')
				continue;
			snprintf(gd, sizeof(gd), "%.*s", (int)(e + 1 - rel), rel);
			try_gitdir(r, g, gd, rel, how, hit);
		}
	}
}

/* Whether the policy's protected_paths entry i is not unprotected. */
static bool extra_on(const struct protect_record *r, size_t i)
{
	for (size_t u = 0; u < r->unprot.n; u++)
		if (protect_unprotects(r->unprot.v[u], r->extra.v[i]))
			return false;
	return true;
}

/* The set's other names, HOME's where g holds it, and the policy's, against rel. */
static void try_names(const struct protect_record *r, size_t g, const char *rel,
		      enum protect_change how, struct protect_hit *hit)
{
	const char *root = r->roots.v[g];
	const char *home = r->home && path_beneath(r->home, root) ? r->home : NULL;
	size_t skip = strlen(root) + (strcmp(root, "/") != 0);
	for (size_t i = 0; i < protect_nrules; i++) {
		const struct protect_rule *pr = &protect_rules[i];
		if (pr->gitdir || r->off[i] || (pr->home && !home))
			continue;
		char pat[PATH_MAX];
		if (pr->home && strcmp(home, root) != 0)
			snprintf(pat, sizeof(pat), "%s/%s", home + skip, pr->name);
		else
			snprintf(pat, sizeof(pat), "%s", pr->name);
		try(pat, pr, rel, how, false, hit);
	}
	for (size_t i = 0; i < r->extra.n; i++) {
		const char *p = r->extra.v[i];
		if (!extra_on(r, i))
			continue;
		if (p[0] != '/')
			try(p, &r->xrules[i], rel, how, false, hit);
		else if (path_beneath(p, root) && strcmp(p, root) != 0)
			try(p + skip, &r->xrules[i], rel, how, false, hit);
	}
}

struct protect_hit protect_match(const struct protect_record *r, const char *abs,
				 enum protect_change how)
{
	struct protect_hit hit = {PROTECT_FREE, NULL};
	for (size_t g = 0; r && g < r->roots.n && hit.verdict != PROTECT_REFUSED; g++) {
		const char *root = r->roots.v[g];
		if (!path_beneath(abs, root))
			continue;
		const char *rel = abs + strlen(root);
		rel += *rel == '/';
		try_names(r, g, rel, how, &hit);
		try_gitdirs(r, g, rel, how, &hit);
	}
	return hit;
}

bool protect_any(const struct protect_record *r)
{
	if (!r || !r->roots.n)
		return false;
	for (size_t i = 0; i < protect_nrules; i++)
		if (!r->off[i])
			return true;
	for (size_t i = 0; i < r->extra.n; i++)
		if (extra_on(r, i))
			return true;
	return false;
}

int protect_note_made(struct protect_record *r, const char *abs)
{
	char gd[PATH_MAX];
	if (!r || !path_parent(abs, gd, sizeof(gd)))
		return -EINVAL;
	for (size_t g = 0; g < r->roots.n; g++) {
		const char *root = r->roots.v[g];
		if (!path_beneath(gd, root) || strcmp(gd, root) == 0)
			continue;
		const char *rel = gd + strlen(root) + (strcmp(root, "/") != 0);
		if (recorded(r, g, rel))
			continue;
		char *key = strv_fmt("%zu\t%s", g, rel);
		int e = key ? strv_push_owned(&r->gitdirs, key) : -ENOMEM;
		if (e < 0)
			return e;
	}
	return 0;
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
