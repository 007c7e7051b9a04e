/*
 * protect_scan: the protected names beneath each write grant, looked up one
 * by one (never a walk): the set's names at each grant's top, the gitdirs
 * the grant's .git leads to (a folder, a file naming one, a link, their
 * commondir and submodules), those of its checkouts one level down and its
 * bare repositories, the policy's names; after the step, the gitdirs seen
 * before and those the step made too. protect.c keeps what it finds.
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

void protect_items_release(struct item_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].path);
		free(l->v[i].rel);
		free(l->v[i].content);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int protect_open_root(const struct protect_record *r, size_t grant)
{
	return path_open_nofollow(r->roots.v[grant], O_DIRECTORY);
}

int protect_walk(int rootfd, const char *rel, const char **base)
{
	int fd = dup(rootfd);
	if (fd < 0)
		return -errno;
	for (const char *p = rel;;) {
		size_t len = strcspn(p, "/");
		if (!p[len]) {
			*base = p;
			return fd;
		}
		char name[NAME_MAX + 1];
		if (len == 0 || len > NAME_MAX) {
			close(fd);
			return -EINVAL;
		}
		memcpy(name, p, len);
		name[len] = '\0';
		int next = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(fd);
		if (next < 0)
			return -e;
		fd = next;
		p += len + 1;
	}
}

/* What one scan holds: the record, the list it fills, each grant's folder. */
struct scan {
	struct protect_record *r;
	struct item_list *list;
	int *roots;       /* one fd a grant, or -errno */
	struct strv seen; /* gitdirs looked at in this scan, by path */
	bool made;        /* looking at what the step made (scan_made) */
};

/*
 * The folder rel of grant g ("": the grant's own folder) opened to be
 * listed, reached one real folder at a time: 0 or -errno.
 */
static int list_folder(const struct scan *s, size_t g, const char *rel, struct path_dir *d)
{
	const char *base = ".";
	int dfd = *rel ? protect_walk(s->roots[g], rel, &base) : dup(s->roots[g]);
	if (dfd < 0)
		return *rel ? dfd : -errno;
	int r = path_dir_open(d, dfd, base);
	close(dfd);
	return r;
}

static bool wants_content(enum item_kind k, const char *rel)
{
	size_t n = strlen(rel);
	/* a sample never runs: git runs hooks/NAME, not hooks/NAME.sample */
	return k != ITEM_FOLDER &&
	       !(k == ITEM_HOOK && n > 7 && strcmp(rel + n - 7, ".sample") == 0);
}

/* The content of a regular file kept, to be judged and put back. */
static void read_content(int dirfd, const char *base, struct item *it)
{
	if (!S_ISREG(it->st.st_mode) || it->st.st_size > (off_t)PROTECT_MAX_CONTENT)
		return;
	int fd = openat(dirfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return;
	struct stat st;
	if (fstat(fd, &st) == 0 && st.st_ino == it->st.st_ino && st.st_dev == it->st.st_dev &&
	    path_read_fd(fd, PROTECT_MAX_CONTENT, &it->content, &it->len) < 0)
		it->content = NULL;
	close(fd);
}

static const struct item *find_item(const struct item_list *l, size_t g, const char *rel)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].grant == g && strcmp(l->v[i].rel, rel) == 0)
			return &l->v[i];
	return NULL;
}

/*
 * Look at rel in grant g and add it to the list when it exists (as what
 * kind, from which rule). Returns 1 when added, 0 when absent or not
 * reachable through real folders, -errno on a hard error. *added: its index.
 */
static int add_item(struct scan *s, size_t g, const char *rel, const struct protect_rule *rule,
		    enum item_kind kind, size_t *added)
{
	if (find_item(s->list, g, rel))
		return 0; /* two rules, or two ways to one gitdir */
	if (s->roots[g] < 0 || s->list->n >= PROTECT_MAX_ITEMS)
		return 0;
	const char *base = rel;
	/* a name at the grant's top (most of the set) from the grant's fd itself */
	int dfd = strchr(rel, '/') ? protect_walk(s->roots[g], rel, &base) : s->roots[g];
	if (dfd < 0)
		return 0; /* a folder on the way is not one: it is an item of its own */
	struct item it = {
		.grant = g, .rule = rule->name, .runs = rule->runs, .kind = kind, .made = s->made};
	int got = fstatat(dfd, base, &it.st, AT_SYMLINK_NOFOLLOW);
	if (got == 0 && wants_content(kind, rel))
		read_content(dfd, base, &it);
	if (dfd != s->roots[g])
		close(dfd);
	if (got < 0)
		return 0;
	const char *root = s->r->roots.v[g];
	it.rel = strdup(rel);
	it.path = strv_fmt("%s/%s", strcmp(root, "/") ? root : "", rel);
	if (!it.rel || !it.path ||
	    strv_grow(&s->list->v, &s->list->cap, s->list->n, sizeof(it), 32) < 0) {
		free(it.rel);
		free(it.path);
		free(it.content);
		return -ENOMEM;
	}
	if (added)
		*added = s->list->n;
	s->list->v[s->list->n++] = it;
	return 1;
}

/*
 * What folder rel holds, at any depth (PROTECT_MAX_DEPTH, and the
 * record's PROTECT_MAX_ITEMS in all): its files as kind, its folders as
 * folders. After the step a folder the record does not hold is not looked
 * into: made by the step, it is a finding whole.
 */
static int add_entries(struct scan *s, size_t g, const char *rel, const struct protect_rule *rule,
		       enum item_kind kind, int depth)
{
	struct path_dir d;
	if (depth >= PROTECT_MAX_DEPTH || list_folder(s, g, rel, &d) < 0)
		return 0;
	struct path_entry e;
	int r = 0;
	while (r >= 0 && path_dir_next(&d, &e)) {
		char *sub = strv_fmt("%s/%s", rel, e.name);
		size_t at = 0;
		r = sub ? add_item(s, g, sub, rule, kind, &at) : -ENOMEM;
		struct item *it = r == 1 ? &s->list->v[at] : NULL;
		if (it)
			it->entry = true;
		if (it && S_ISDIR(it->st.st_mode)) {
			it->kind = ITEM_FOLDER;
			if (s->list == &s->r->before || find_item(&s->r->before, g, sub))
				r = add_entries(s, g, sub, rule, ITEM_FILE, depth + 1);
		}
		free(sub);
	}
	path_dir_close(&d);
	return r < 0 ? r : 0;
}

/* The write grant holding the canonical path abs, or -1; *rel is what follows it. */
static long grant_of(const struct protect_record *r, const char *abs, const char **rel)
{
	long best = -1;
	size_t bestlen = 0;
	for (size_t i = 0; i < r->roots.n; i++) {
		size_t n = strlen(r->roots.v[i]);
		if (path_beneath(abs, r->roots.v[i]) && strcmp(abs, r->roots.v[i]) != 0 &&
		    (best < 0 || n > bestlen)) {
			best = (long)i;
			bestlen = n;
		}
	}
	if (best >= 0)
		*rel = abs + bestlen + (strcmp(r->roots.v[best], "/") != 0);
	return best;
}

static int scan_gitdir(struct scan *s, size_t g, const char *rel, int depth);
static int scan_modules(struct scan *s, size_t g, const char *rel, const struct protect_rule *pr,
			int depth);

/* A file naming another gitdir (.git, commondir): that gitdir too, if a grant holds it. */
static int follow(struct scan *s, size_t g, const char *rel, const char *to, int depth)
{
	const struct item *it = find_item(s->list, g, rel);
	if (!it || !it->content || depth > 3)
		return 0;
	char dir[PATH_MAX];
	if (!path_parent(it->path, dir, sizeof(dir)))
		return 0;
	char *gd = to ? protect_git_link(it->content, it->len, dir) : NULL;
	char line[PATH_MAX], full[PATH_MAX];
	/* commondir: a path relative to the gitdir, as git reads it */
	if (!to && protect_git_path(it->content, it->len, 0, line, sizeof(line)))
		gd = protect_resolve(dir, line, full, sizeof(full));
	const char *grel = NULL;
	long gg = gd ? grant_of(s->r, gd, &grel) : -1;
	int r = gg >= 0 ? scan_gitdir(s, (size_t)gg, grel, depth + 1) : 0;
	free(gd);
	return r;
}

/* One gitdir's protected names: the rules starting ".git/". */
static int scan_gitdir(struct scan *s, size_t g, const char *rel, int depth)
{
	char *key = strv_fmt("%zu\t%s", g, rel);
	if (!key)
		return -ENOMEM;
	if (strv_find(&s->seen, key) >= 0 || depth > 3) {
		free(key);
		return 0;
	}
	int r = strv_push_owned(&s->seen, key);
	for (size_t i = 0; r >= 0 && i < protect_nrules; i++) {
		const struct protect_rule *pr = &protect_rules[i];
		if (!pr->gitdir || s->r->off[i])
			continue;
		char *sub = strv_fmt("%s/%s", rel, pr->name + 5);
		if (!sub)
			return -ENOMEM;
		enum item_kind k = pr->kind == PROTECT_CONFIG ? ITEM_CONFIG
				   : pr->kind == PROTECT_FILE ? ITEM_FILE
							      : ITEM_FOLDER;
		r = add_item(s, g, sub, pr, k, NULL);
		if (r >= 0 && pr->kind == PROTECT_HOOKS)
			r = add_entries(s, g, sub, pr, ITEM_HOOK, 0);
		if (r >= 0 && strcmp(pr->name, ".git/commondir") == 0)
			r = follow(s, g, sub, NULL, depth);
		if (r >= 0 && pr->kind == PROTECT_MODULES)
			r = scan_modules(s, g, sub, pr, depth);
		free(sub);
	}
	return r < 0 ? r : 0;
}

/* modules/NAME: a gitdir each; worktrees/NAME: its config.worktree. */
static int scan_modules(struct scan *s, size_t g, const char *rel, const struct protect_rule *pr,
			int depth)
{
	struct path_dir d;
	if (list_folder(s, g, rel, &d) < 0)
		return 0;
	bool modules = strcmp(pr->name, ".git/modules") == 0;
	struct path_entry e;
	int r = 0;
	while (r >= 0 && path_dir_next(&d, &e)) {
		if (e.type != DT_DIR && e.type != DT_UNKNOWN)
			continue;
		char *sub = modules ? strv_fmt("%s/%s", rel, e.name)
				    : strv_fmt("%s/%s/config.worktree", rel, e.name);
		if (!sub)
			r = -ENOMEM;
		else if (modules)
			r = scan_gitdir(s, g, sub, depth + 1);
		else
			r = add_item(s, g, sub, pr, ITEM_CONFIG, NULL);
		free(sub);
	}
	path_dir_close(&d);
	return r < 0 ? r : 0;
}

static bool has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* A name the policy protects: as a file, or a folder and its entries. */
static int add_named(struct scan *s, size_t g, const char *rel, const struct protect_rule *pr)
{
	size_t at = 0;
	int r = add_item(s, g, rel, pr, ITEM_FILE, &at);
	if (r == 1 && S_ISDIR(s->list->v[at].st.st_mode)) {
		s->list->v[at].kind = ITEM_FOLDER;
		r = add_entries(s, g, rel, pr, ITEM_FILE, 0);
	}
	return r < 0 ? r : 0;
}

/*
 * A protected_paths pattern beneath grant g: prefix found so far, rest to
 * go. A component with a glob lists that one folder: never a walk.
 */
static int expand(struct scan *s, size_t g, const char *prefix, const char *rest,
		  const struct protect_rule *pr)
{
	size_t len = strcspn(rest, "/");
	if (!has_glob(rest)) {
		char *rel = *prefix ? strv_fmt("%s/%s", prefix, rest) : strdup(rest);
		int r = rel ? add_named(s, g, rel, pr) : -ENOMEM;
		free(rel);
		return r;
	}
	char comp[NAME_MAX + 1];
	if (len == 0 || len > NAME_MAX)
		return 0;
	memcpy(comp, rest, len);
	comp[len] = '\0';
	struct path_dir d;
	if (list_folder(s, g, prefix, &d) < 0)
		return 0;
	struct path_entry e;
	int r = 0;
	while (r >= 0 && path_dir_next(&d, &e)) {
		if (fnmatch(comp, e.name, FNM_PERIOD) != 0)
			continue;
		char *np = *prefix ? strv_fmt("%s/%s", prefix, e.name) : strdup(e.name);
		if (!np)
			r = -ENOMEM;
		else if (!rest[len])
			r = add_named(s, g, np, pr);
		else
			r = expand(s, g, np, rest + len + 1, pr);
		free(np);
	}
	path_dir_close(&d);
	return r;
}

/* protected_paths beneath grant g (an absolute one where it lies in g). */
static int scan_extra(struct scan *s, size_t g)
{
	const char *root = s->r->roots.v[g];
	int r = 0;
	for (size_t i = 0; r >= 0 && i < s->r->extra.n; i++) {
		const char *p = s->r->extra.v[i];
		const struct protect_rule *pr = &s->r->xrules[i];
		if (s->r->xoff[i])
			continue;
		const char *rel = p[0] != '/' ? p
				  : path_beneath(p, root) && strcmp(p, root) != 0
					  ? p + strlen(root) + (strcmp(root, "/") != 0)
					  : NULL;
		/* a folder core.hooksPath names, a config included: names, never globs */
		if (rel && pr->kind == PROTECT_CONFIG)
			r = add_item(s, g, rel, pr, ITEM_CONFIG, NULL) < 0 ? -ENOMEM : 0;
		else if (rel && pr->kind == PROTECT_HOOKS)
			r = add_named(s, g, rel, pr);
		else if (rel)
			r = expand(s, g, "", rel, pr);
	}
	return r;
}

/*
 * A .git at rel in grant g: a folder's names, or the gitdir a file names.
 * One of the step's too deep to follow (past PATH_MAX) is judged as a .git
 * made, a finding itself. 0 or -errno.
 */
static int add_dotgit(struct scan *s, size_t g, const char *rel, const struct protect_rule *rule)
{
	size_t at = 0;
	int r = add_item(s, g, rel, rule, ITEM_DOTGIT, &at);
	struct item *it = r == 1 ? &s->list->v[at] : NULL;
	if (it && S_ISDIR(it->st.st_mode))
		return scan_gitdir(s, g, rel, 0);
	if (it && S_ISLNK(it->st.st_mode)) {
		/* a .git that is a link: git follows it to the gitdir, a grant's too */
		char *gd = realpath(it->path, NULL);
		const char *grel = NULL;
		struct stat st;
		long gg = gd && stat(gd, &st) == 0 && S_ISDIR(st.st_mode)
				  ? grant_of(s->r, gd, &grel)
				  : -1;
		r = gg >= 0 ? scan_gitdir(s, (size_t)gg, grel, 1) : 0;
		free(gd);
		return r;
	}
	if (it && strlen(it->path) < PATH_MAX)
		return follow(s, g, rel, "gitdir", 0);
	if (it)
		it->made = false;
	return r < 0 ? r : 0;
}

/*
 * The gitdirs a write grant's checkouts one level down lead to that no
 * `.git` names them by (a worktree's or a --separate-git-dir clone's .git
 * file, followed to its gitdir and that one's commondir: a bare clone
 * whose worktrees these are), and the bare repositories there (a remote
 * the person pushes to runs its hooks): looked at as the grant's own.
 */
static int scan_nested(struct scan *s, size_t g)
{
	const struct protect_rule *dotgit = protect_rule_named(".git");
	int r = scan_extra(s, g);
	for (size_t i = 0; r >= 0 && dotgit && !s->r->off[dotgit - protect_rules] &&
			   i < s->r->nested.n + s->r->bare.n;
	     i++) {
		bool bare = i >= s->r->nested.n;
		size_t eg;
		const char *n = protect_entry(
			bare ? s->r->bare.v[i - s->r->nested.n] : s->r->nested.v[i], &eg);
		struct stat st;
		char rel[PATH_MAX];
		if (!n || eg != g || s->roots[g] < 0 ||
		    snprintf(rel, sizeof(rel), "%s%s", n, bare ? "" : "/.git") >= (int)sizeof(rel))
			continue;
		if (bare)
			r = scan_gitdir(s, g, rel, 0);
		else if (fstatat(s->roots[g], rel, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			 S_ISREG(st.st_mode))
			r = add_dotgit(s, g, rel, dotgit);
	}
	return r;
}

/* One write grant's own protected names: .git and what it names, the rest of the set. */
static int scan_grant(struct scan *s, size_t g)
{
	const char *root = s->r->roots.v[g];
	const char *home = s->r->home;
	bool holds_home = home && path_beneath(home, root);
	int r = 0;
	for (size_t i = 0; r >= 0 && i < protect_nrules; i++) {
		const struct protect_rule *pr = &protect_rules[i];
		if (pr->gitdir || s->r->off[i] || (pr->home && !holds_home))
			continue;
		char *rel =
			pr->home && strcmp(home, root) != 0
				? strv_fmt("%s/%s", home + strlen(root) + (strcmp(root, "/") != 0),
					   pr->name)
				: strdup(pr->name);
		if (!rel)
			return -ENOMEM;
		enum item_kind k = pr->kind == PROTECT_CONFIG   ? ITEM_CONFIG
				   : pr->kind == PROTECT_FOLDER ? ITEM_FOLDER
								: ITEM_FILE;
		if (pr->kind == PROTECT_GITDIR) {
			r = add_dotgit(s, g, rel, pr);
		} else {
			r = add_item(s, g, rel, pr, k, NULL);
			if (r == 1 && pr->kind == PROTECT_FOLDER)
				r = add_entries(s, g, rel, pr, ITEM_FILE, 0);
		}
		free(rel);
	}
	return r < 0 ? r : scan_nested(s, g);
}

/* After the step, the gitdirs looked at before too: a .git file repointed hides none. */
static int scan_before_gitdirs(struct scan *s)
{
	int r = 0;
	for (size_t i = 0; r >= 0 && i < s->r->gitdirs.n; i++) {
		size_t g;
		const char *rel = protect_entry(s->r->gitdirs.v[i], &g);
		if (rel && g < s->r->roots.n)
			r = scan_gitdir(s, g, rel, 0);
	}
	return r;
}

/*
 * After the step, the .git folders and files the step made (a clone, a
 * submodule's or a worktree's .git file): what a folder holds, and the
 * gitdir a file names, judged for what runs there.
 */
static int scan_made(struct scan *s)
{
	int r = 0;
	s->made = true;
	for (size_t i = 0; r >= 0 && i < s->r->made.n; i++) {
		size_t g;
		const char *rel = protect_entry(s->r->made.v[i], &g);
		if (rel && g < s->r->roots.n)
			r = add_dotgit(s, g, rel, protect_rule_named(".git"));
	}
	s->made = false;
	return r < 0 ? r : 0;
}

int protect_scan(struct protect_record *r, struct item_list *list, bool after)
{
	struct scan s = {r, list, calloc(r->roots.n + 1, sizeof(int)), STRV_INIT, false};
	if (!s.roots)
		return -ENOMEM;
	for (size_t g = 0; g < r->roots.n; g++)
		s.roots[g] = protect_open_root(r, g);
	int rc = 0;
	for (size_t g = 0; rc >= 0 && g < r->roots.n; g++)
		rc = scan_grant(&s, g);
	if (rc >= 0 && after)
		rc = scan_before_gitdirs(&s);
	if (rc >= 0 && after)
		rc = scan_made(&s);
	for (size_t g = 0; g < r->roots.n; g++)
		if (s.roots[g] >= 0)
			close(s.roots[g]);
	free(s.roots);
	if (rc >= 0 && !after) {
		strv_release(&r->gitdirs);
		r->gitdirs = s.seen;
	} else {
		strv_release(&s.seen);
	}
	return rc < 0 ? rc : 0;
}
