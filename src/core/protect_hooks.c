/*
 * protect_hooks: the checkouts a write grant holds at its top and one level
 * down, their submodules and linked worktrees, and the folders their
 * core.hooksPath names (a repository's .githooks, husky's .husky/_), which
 * git runs instead of .git/hooks: read before the step, so that the record
 * protects them as it protects .git/hooks (protect.c), and so that a
 * Seatbelt profile denies them (sbpl_protect.c). Never a walk: a grant's
 * own entries, .git/modules/ bounded, a config's one key.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path.h"
#include "protect_int.h"

/*
 * The checkouts each grant holds one level down (NAME/.git, a folder or a
 * file), into r->nested: a workspace of clones, whose configs may name a
 * hooks path. Its own entries only, PROTECT_MAX_LISTED of them at most:
 * never a walk. (Their gitdirs are matched live by name, not recorded: a
 * record of each would cost about a millisecond a checkout.)
 */
int protect_note_nested(struct protect_record *r)
{
	int rc = 0;
	for (size_t g = 0; rc == 0 && g < r->roots.n; g++) {
		int root = protect_open_root(r, g);
		struct path_dir d;
		if (root < 0 || path_dir_open(&d, root, ".") < 0) {
			if (root >= 0)
				close(root);
			continue;
		}
		struct path_entry e;
		for (size_t seen = 0; rc == 0 && seen < PROTECT_MAX_LISTED && path_dir_next(&d, &e);
		     seen++) {
			if ((e.type != DT_DIR && e.type != DT_UNKNOWN) ||
			    strcmp(e.name, ".git") == 0)
				continue;
			/*
			 * One call a folder (a record costs under 1 ms); where the
			 * type is not given, the name is opened as a folder first,
			 * never through a link.
			 */
			char sub[NAME_MAX + 8];
			snprintf(sub, sizeof(sub), "%s/.git", e.name);
			int dir = e.type == DT_DIR
					  ? root
					  : openat(root, e.name,
						   O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			struct stat st;
			bool checkout = dir >= 0 &&
					fstatat(dir, dir == root ? sub : ".git", &st,
						AT_SYMLINK_NOFOLLOW) == 0 &&
					(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode));
			if (dir >= 0 && dir != root)
				close(dir);
			/* a bare repository, by git's own name for one: NAME.git holding HEAD */
			size_t nl = strlen(e.name);
			bool bare = !checkout && dir >= 0 && nl > 4 &&
				    strcmp(e.name + nl - 4, ".git") == 0 &&
				    fstatat(root, e.name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
				    S_ISDIR(st.st_mode);
			if (bare) {
				snprintf(sub, sizeof(sub), "%s/HEAD", e.name);
				bare = fstatat(root, sub, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
				       S_ISREG(st.st_mode);
			}
			char *key = checkout || bare ? strv_fmt("%zu\t%s", g, e.name) : NULL;
			if (checkout || bare)
				rc = key ? strv_push_owned(checkout ? &r->nested : &r->bare, key)
					 : -ENOMEM;
		}
		path_dir_close(&d);
		close(root);
	}
	return rc;
}

#define HOOKS_INCLUDES 10 /* git's own limit on nested includes */
#define HOOKS_FILES 64    /* configs read for one checkout or the caller, includes and all */

/*
 * Every core.hooksPath of a git config (a regular file read whole, bounded;
 * fd closed) and of the files it includes (include.path, and
 * includeIf.*.path with every condition taken as met: a folder protected
 * that git would not use costs nothing), into out. dir: the file's folder,
 * which an include's relative path is taken from; *files counts the files
 * read; incs gets each included file's path. 0 or -ENOMEM.
 */
static int hooks_paths_in(const struct protect_record *r, int fd, const char *dir, int depth,
			  int *files, struct strv *out, struct strv *incs)
{
	char *text = NULL;
	size_t len = 0;
	struct stat st;
	int rc = 0;
	struct strv inc = STRV_INIT;
	if (fd >= 0 && ++*files <= HOOKS_FILES && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    path_read_fd(fd, PROTECT_MAX_CONTENT, &text, &len) == 0) {
		rc = protect_git_values(text, len, "core", false, "hookspath", out);
		if (rc == 0 && depth < HOOKS_INCLUDES)
			rc = protect_git_values(text, len, "include", false, "path", &inc);
		if (rc == 0 && depth < HOOKS_INCLUDES)
			rc = protect_git_values(text, len, "includeif", true, "path", &inc);
	}
	if (fd >= 0)
		close(fd);
	free(text);
	for (size_t i = 0; rc == 0 && i < inc.n; i++) {
		const char *v = inc.v[i];
		char p[PATH_MAX], up[PATH_MAX];
		int n = v[0] == '~' && v[1] == '/' && r->home
				? snprintf(p, sizeof(p), "%s/%s", r->home, v + 2)
			: v[0] == '/' ? snprintf(p, sizeof(p), "%s", v)
				      : snprintf(p, sizeof(p), "%s/%s", dir, v);
		if (n < 0 || (size_t)n >= sizeof(p) || !path_parent(p, up, sizeof(up)))
			continue;
		/* as git opens it: links followed */
		int ifd = open(p, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		/* one not there yet too: the step may make it */
		if ((ifd >= 0 || errno == ENOENT) && strv_find(incs, p) < 0 &&
		    strv_push(incs, p) < 0)
			rc = -ENOMEM;
		if (rc == 0)
			rc = hooks_paths_in(r, ifd, up, depth + 1, files, out, incs);
		else if (ifd >= 0)
			close(ifd);
	}
	strv_release(&inc);
	return rc;
}

static int add_held(struct protect_record *r, const char *abs);

/*
 * Protect the folder value names (as git resolves it from the checkout co),
 * where a grant holds it.
 */
static int add_hooks_path(struct protect_record *r, const char *value, const char *co)
{
	char joined[PATH_MAX], abs[PATH_MAX];
	int n = value[0] == '~' && value[1] == '/' && r->home
			? snprintf(joined, sizeof(joined), "%s/%s", r->home, value + 2)
		: value[0] == '/' ? snprintf(joined, sizeof(joined), "%s", value)
				  : snprintf(joined, sizeof(joined), "%s/%s", co, value);
	if (n < 0 || (size_t)n >= sizeof(joined) || path_normalize(joined, abs, sizeof(abs)) < 0)
		return 0;
	return add_held(r, abs);
}

/*
 * abs into r->extra where a grant holds it: its name as written (a link
 * there, or in a folder above it, may not be pointed elsewhere: removed or
 * replaced, refused) and, where it exists, what git reaches through the
 * links. 0 or -ENOMEM.
 */
static int add_held(struct protect_record *r, const char *abs)
{
	char *real = realpath(abs, NULL);
	char up[PATH_MAX];
	const char *base = strrchr(abs, '/');
	char *upreal =
		!real && base && path_parent(abs, up, sizeof(up)) ? realpath(up, NULL) : NULL;
	if (upreal) /* not there yet: the name in the folder git reaches */
		real = strv_fmt("%s/%s", strcmp(upreal, "/") ? upreal : "", base + 1);
	free(upreal);
	const char *both[2] = {abs, real};
	int rc = 0;
	for (int k = 0; k < 2 && rc == 0 && both[k]; k++) {
		bool held = false;
		for (size_t g = 0; g < r->roots.n && !held; g++)
			held = path_beneath(both[k], r->roots.v[g]) &&
			       strcmp(both[k], r->roots.v[g]) != 0;
		if (held && strv_find(&r->extra, both[k]) < 0)
			rc = strv_push(&r->extra, both[k]);
	}
	free(real);
	return rc;
}

#define CHECKOUT_CONFIGS 3

/*
 * The configs git reads in the checkout co (rel: its name in the grant
 * whose folder is root, "" for the grant's own): where its .git is a folder,
 * config and config.worktree; where it is a file (a submodule, a linked
 * worktree), those of the gitdir it names, and the config of the gitdir
 * that one's commondir names. Opened into fds (-1 where not there), each
 * with its folder (includes are taken from it) in dirs; how many.
 */
static size_t checkout_configs(int root, const char *rel, const char *co, int *fds,
			       char (*dirs)[PATH_MAX])
{
	const int ro = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	char dotgit[PATH_MAX], *text = NULL, *gd = NULL;
	size_t n = 0, len = 0;
	snprintf(dotgit, sizeof(dotgit), "%s%s.git", rel, *rel ? "/" : "");
	const char *base;
	int dfd = protect_walk(root, dotgit, &base);
	int fd = dfd >= 0 ? openat(dfd, base, ro | O_NOFOLLOW) : -1;
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		int k = snprintf(dirs[0], PATH_MAX, "%s/.git", strcmp(co, "/") ? co : "");
		if (k > 0 && k < PATH_MAX) {
			memcpy(dirs[1], dirs[0], (size_t)k + 1);
			fds[n++] = openat(fd, "config", ro | O_NOFOLLOW);
			fds[n++] = openat(fd, "config.worktree", ro | O_NOFOLLOW);
		}
	} else if (fd >= 0 && S_ISREG(st.st_mode) &&
		   path_read_fd(fd, PATH_MAX + 16, &text, &len) == 0 &&
		   (gd = protect_git_link(text, len, co))) {
		static const char *const names[] = {"config", "config.worktree"};
		for (size_t i = 0; i < 2; i++) {
			char p[PATH_MAX + 32];
			snprintf(dirs[n], PATH_MAX, "%s", gd);
			snprintf(p, sizeof(p), "%s/%s", gd, names[i]);
			fds[n++] = open(p, ro); /* as git opens them: links followed */
		}
		char cd[PATH_MAX + 16], *common_text = NULL, *common = NULL;
		snprintf(cd, sizeof(cd), "%s/commondir", gd);
		int cfd = open(cd, ro);
		size_t clen = 0;
		char line[PATH_MAX], buf[PATH_MAX];
		if (cfd >= 0 && path_read_fd(cfd, PATH_MAX, &common_text, &clen) == 0 &&
		    protect_git_path(common_text, clen, 0, line, sizeof(line)))
			common = protect_resolve(gd, line, buf, sizeof(buf));
		if (common && strlen(common) < PATH_MAX - 8) {
			char p[PATH_MAX + 8];
			snprintf(dirs[n], PATH_MAX, "%s", common);
			snprintf(p, sizeof(p), "%s/config", common);
			fds[n++] = open(p, ro);
		}
		if (cfd >= 0)
			close(cfd);
		free(common_text);
		free(common);
	}
	free(gd);
	free(text);
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	return n;
}

#define MODULES_DEPTH 4    /* folders of .git/modules/ looked into: a name may hold a slash */
#define MODULES_LISTED 256 /* and their entries, all together */

/*
 * The submodules' gitdirs beneath modules (dfd, named dir): for each, the
 * folders its config's core.hooksPath names, taken from its worktree (its
 * core.worktree), protected as the checkout's are; then its own modules/.
 * A folder with no config is a step of a name that holds a slash. Never a
 * walk of the tree: .git/modules/ alone, bounded.
 */
static int module_hooks(struct protect_record *r, int dfd, const char *dir, int depth,
			size_t *listed, struct strv *included)
{
	const int ro = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW;
	struct path_dir d;
	if (depth > MODULES_DEPTH || path_dir_open(&d, dfd, ".") < 0)
		return 0;
	struct path_entry e;
	int rc = 0;
	while (rc == 0 && *listed < MODULES_LISTED && path_dir_next(&d, &e)) {
		++*listed;
		char gd[PATH_MAX], *text = NULL, *co = NULL, buf[PATH_MAX];
		int sub = openat(dfd, e.name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int k = snprintf(gd, sizeof(gd), "%s/%s", dir, e.name);
		if (sub < 0 || k < 0 || (size_t)k >= sizeof(gd)) {
			if (sub >= 0)
				close(sub);
			continue;
		}
		int cfd = openat(sub, "config", ro);
		struct strv wt = STRV_INIT, hooks = STRV_INIT;
		size_t len = 0;
		int files = 0;
		if (cfd >= 0 && path_read_fd(cfd, PROTECT_MAX_CONTENT, &text, &len) == 0 &&
		    protect_git_values(text, len, "core", false, "worktree", &wt) == 0 && wt.n)
			co = protect_resolve(gd, wt.v[wt.n - 1], buf, sizeof(buf));
		if (cfd >= 0 && co) {
			lseek(cfd, 0, SEEK_SET);
			rc = hooks_paths_in(r, cfd, gd, 0, &files, &hooks, included);
			cfd = -1;
		}
		for (size_t i = 0; rc == 0 && i < hooks.n; i++)
			rc = add_hooks_path(r, hooks.v[i], co);
		/* its own submodules, or the rest of a name that holds a slash */
		int mods =
			text ? openat(sub, "modules", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
			     : sub;
		char mdir[PATH_MAX];
		k = snprintf(mdir, sizeof(mdir), "%s%s", gd, text ? "/modules" : "");
		if (rc == 0 && mods >= 0 && k > 0 && (size_t)k < sizeof(mdir))
			rc = module_hooks(r, mods, mdir, depth + 1, listed, included);
		if (mods >= 0 && mods != sub)
			close(mods);
		if (cfd >= 0)
			close(cfd);
		close(sub);
		free(text);
		free(co);
		strv_release(&wt);
		strv_release(&hooks);
	}
	path_dir_close(&d);
	return rc;
}

/* Whether the default rule name is on. */
static bool rule_on(const struct protect_record *r, const char *name)
{
	const struct protect_rule *rule = protect_rule_named(name);
	return rule && !r->off[rule - protect_rules];
}

/*
 * The hooks folders of one checkout (grant g's own, or nest in it): those
 * its configs name, else the caller's global ones (a relative one taken
 * from the checkout), and those its submodules' configs name; the files
 * the configs include into included. 0 or -errno.
 */
/*
 * The tops of the checkout's linked worktrees (each .git/worktrees/NAME/
 * gitdir names the worktree's .git file), into tops: a relative
 * core.hooksPath is taken from the top of the worktree git runs in, so a
 * worktree anywhere (W/.worktrees/feat) has a hooks folder of its own.
 * Bounded by listed, with the submodules' folders.
 */
static int worktree_tops(int root, const char *nest, size_t *listed, struct strv *tops)
{
	char rel[PATH_MAX];
	snprintf(rel, sizeof(rel), "%s%s.git/worktrees", nest ? nest : "", nest ? "/" : "");
	const char *base;
	int dfd = protect_walk(root, rel, &base);
	int wfd = dfd >= 0 ? openat(dfd, base, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	struct path_dir d;
	int rc = 0;
	if (wfd >= 0 && path_dir_open(&d, wfd, ".") == 0) {
		struct path_entry e;
		while (rc == 0 && *listed < MODULES_LISTED && path_dir_next(&d, &e)) {
			++*listed;
			char p[NAME_MAX + 16], *text = NULL, top[PATH_MAX];
			size_t len = 0;
			snprintf(p, sizeof(p), "%s/gitdir", e.name);
			int fd = openat(wfd, p, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0 && path_read_fd(fd, PATH_MAX, &text, &len) == 0) {
				text[strcspn(text, "\r\n")] = '\0';
				if (text[0] == '/' && path_parent(text, top, sizeof(top)) &&
				    strv_find(tops, top) < 0)
					rc = strv_push(tops, top);
			}
			if (fd >= 0)
				close(fd);
			free(text);
		}
		path_dir_close(&d);
	}
	if (wfd >= 0)
		close(wfd);
	if (dfd >= 0)
		close(dfd);
	return rc;
}

static int checkout_hooks(struct protect_record *r, size_t g, const char *nest, bool hooks_on,
			  const struct strv *global, struct strv *included, size_t *listed)
{
	char co[PATH_MAX];
	snprintf(co, sizeof(co), "%s%s%s", r->roots.v[g], nest ? "/" : "", nest ? nest : "");
	int root = protect_open_root(r, g), rc = 0, files = 0;
	struct stat st;
	bool checkout = nest || (root >= 0 && fstatat(root, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0);
	struct strv own = STRV_INIT;
	int fds[CHECKOUT_CONFIGS];
	char dirs[CHECKOUT_CONFIGS][PATH_MAX];
	size_t nc = root >= 0 ? checkout_configs(root, nest ? nest : "", co, fds, dirs) : 0;
	for (size_t c = 0; c < nc; c++)
		if (rc == 0)
			rc = hooks_paths_in(r, fds[c], dirs[c], 0, &files, &own, included);
		else if (fds[c] >= 0)
			close(fds[c]);
	/* a relative value of the grant's own, for the worktrees the step adds */
	for (size_t i = 0; rc == 0 && hooks_on && !nest && i < own.n; i++) {
		const char *v = own.v[i];
		char *e = v[0] != '/' && v[0] != '~' && !strstr(v, "..")
				  ? strv_fmt("%zu\t%s", g, v + 2 * (v[0] == '.' && v[1] == '/'))
				  : NULL;
		if (e)
			rc = strv_push_owned(&r->hooks_rel, e);
	}
	/* the checkout's top and its worktrees': a relative value is taken from each */
	struct strv tops = STRV_INIT;
	if (rc == 0)
		rc = strv_push(&tops, co);
	if (rc == 0 && hooks_on && root >= 0)
		rc = worktree_tops(root, nest, listed, &tops);
	for (size_t t = 0; rc == 0 && t < tops.n; t++) {
		/* the repository's own wins over a global value taken from the checkout */
		for (size_t i = 0; rc == 0 && hooks_on && i < global->n && checkout; i++)
			if (!own.n || global->v[i][0] == '/' || global->v[i][0] == '~')
				rc = add_hooks_path(r, global->v[i], tops.v[t]);
		for (size_t i = 0; rc == 0 && hooks_on && i < own.n; i++)
			rc = add_hooks_path(r, own.v[i], tops.v[t]);
	}
	strv_release(&tops);
	strv_release(&own);
	/* its submodules' gitdirs: the folders their configs name */
	char mrel[PATH_MAX], mabs[PATH_MAX * 2];
	snprintf(mrel, sizeof(mrel), "%s%s.git/modules", nest ? nest : "", nest ? "/" : "");
	snprintf(mabs, sizeof(mabs), "%s/.git/modules", strcmp(co, "/") ? co : "");
	const char *mb;
	int md = root >= 0 && hooks_on ? protect_walk(root, mrel, &mb) : -1;
	int mfd = md >= 0 ? openat(md, mb, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	if (rc == 0 && mfd >= 0)
		rc = module_hooks(r, mfd, mabs, 0, listed, included);
	if (mfd >= 0)
		close(mfd);
	if (md >= 0)
		close(md);
	if (root >= 0)
		close(root);
	return rc;
}

/*
 * core.hooksPath: the folder whose hooks git runs instead of .git/hooks
 * (husky's .husky/_, a repository's .githooks). Where it lies in a write
 * grant it is protected as .git/hooks is (and not while that is
 * unprotected): named in the configs of a grant's own checkout, of one one
 * level down and of their submodules (checkout_hooks), or in the caller's
 * ~/.gitconfig, ~/.config/git/config or /etc/gitconfig (a relative one
 * from each grant's checkout), or in a file one of them includes. The
 * included files themselves, where a grant holds them, are git configs as
 * .git/config is (and not while that is unprotected). Added to extra after
 * the policy's, hooks folders first (*hooks, *incs: how many); 0 or -errno.
 */
int protect_add_hooks_paths(struct protect_record *r, size_t *hooks, size_t *incs)
{
	size_t first = r->extra.n;
	*hooks = *incs = 0;
	bool hooks_on = rule_on(r, ".git/hooks"), config_on = rule_on(r, ".git/config");
	if (!hooks_on && !config_on)
		return 0;
	/* the caller's own, read as git reads them (a dotfile manager's link followed) */
	const int ro = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	struct strv global = STRV_INIT, included = STRV_INIT;
	char p[PATH_MAX];
	int rc = 0, files = 0;
	size_t listed = 0;
	for (int i = 0; rc == 0 && i < 3; i++) {
		if (i < 2 && !r->home)
			continue;
		if (i < 2)
			snprintf(p, sizeof(p), "%s/%s", r->home,
				 i ? ".config/git/config" : ".gitconfig");
		const char *file = i < 2 ? p : "/etc/gitconfig";
		char dir[PATH_MAX];
		if (path_parent(file, dir, sizeof(dir)))
			rc = hooks_paths_in(r, open(file, ro), dir, 0, &files, &global, &included);
	}
	/* each grant itself, then the checkouts one level down in it */
	for (size_t k = 0; rc == 0 && k < r->roots.n + r->nested.n; k++) {
		size_t g = k;
		/* a nested checkout's name in grant g, or NULL for the grant's own */
		const char *nest =
			k < r->roots.n ? NULL : protect_entry(r->nested.v[k - r->roots.n], &g);
		if (k < r->roots.n || nest)
			rc = checkout_hooks(r, g, nest, hooks_on, &global, &included, &listed);
	}
	*hooks = r->extra.n - first;
	for (size_t i = 0; rc == 0 && config_on && i < included.n; i++) {
		char abs[PATH_MAX];
		if (path_normalize(included.v[i], abs, sizeof(abs)) == 0)
			rc = add_held(r, abs);
	}
	*incs = r->extra.n - first - *hooks;
	strv_release(&global);
	strv_release(&included);
	return rc;
}

/* A nested checkout's .git (grant g's rel), and where a folder its hooks folder and configs. */
static int nested_gitdir(const struct protect_record *r, const char *e, struct strv *files)
{
	static const char *const held[] = {".git/hooks", ".git/config", ".git/config.worktree"};
	size_t g;
	const char *rel = protect_entry(e, &g);
	if (!rel)
		return 0;
	char p[PATH_MAX];
	struct stat st;
	int n = snprintf(p, sizeof(p), "%s/%s/.git",
			 strcmp(r->roots.v[g], "/") ? r->roots.v[g] : "", rel);
	if (n < 0 || (size_t)n >= sizeof(p) - 32 || lstat(p, &st) < 0)
		return 0;
	int rc = rule_on(r, ".git") ? strv_push(files, p) : 0;
	for (size_t i = 0; rc == 0 && S_ISDIR(st.st_mode) && i < 3; i++) {
		if (!rule_on(r, held[i]))
			continue;
		snprintf(p + n, sizeof(p) - (size_t)n, "%s", held[i] + 4);
		rc = strv_push(files, p);
	}
	return rc;
}

/* The absolute path of a "GRANT\tREL" entry of the record's lists: to free, or NULL. */
static char *entry_abs(const struct protect_record *r, const char *e)
{
	size_t g;
	const char *rel = protect_entry(e, &g);
	return rel && g < r->roots.n
		       ? strv_fmt("%s/%s", strcmp(r->roots.v[g], "/") ? r->roots.v[g] : "", rel)
		       : NULL;
}

/* A gitdir no .git names (gd, absolute): its hooks folder (but samples) and its config. */
static int gitdir_paths(const struct protect_record *r, const char *gd, struct protect_profile *out)
{
	char *h = rule_on(r, ".git/hooks") ? strv_fmt("%s/hooks", gd) : NULL;
	char *c = rule_on(r, ".git/config") ? strv_fmt("%s/config", gd) : NULL;
	int rc = h ? strv_push_owned(&out->hooks, h) : 0;
	if (c && rc == 0)
		rc = strv_push_owned(&out->files, c);
	else
		free(c);
	return rc;
}

int protect_profile_paths(const struct stepbox_config *cfg, const char *const *write, size_t n,
			  const char *home, struct protect_profile *out)
{
	struct protect_record r = {
		.roots = STRV_INIT, .extra = STRV_INIT, .nested = STRV_INIT, .bare = STRV_INIT};
	int rc = (r.off = calloc(protect_nrules, sizeof(bool))) ? 0 : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = strv_push(&r.roots, write[i]);
	for (size_t i = 0; rc == 0 && i < protect_nrules; i++)
		r.off[i] = protect_unprotected(cfg, &protect_rules[i]);
	r.home = (char *)home; /* read only here, never freed */
	size_t nhooks = 0, incs = 0;
	if (rc == 0)
		rc = protect_note_nested(&r);
	if (rc == 0)
		rc = protect_add_hooks_paths(&r, &nhooks, &incs);
	for (size_t i = 0; rc == 0 && i < nhooks + incs; i++) {
		bool off = false;
		for (size_t u = 0; u < cfg->unprotect.n; u++)
			off |= protect_unprotects(cfg->unprotect.v[u], r.extra.v[i]);
		if (!off)
			rc = strv_push(i < nhooks ? &out->hooks : &out->files, r.extra.v[i]);
	}
	/* a grant's .git that is a link (git follows it): the gitdir's hooks and config */
	for (size_t g = 0; rc == 0 && g < r.roots.n; g++) {
		char p[PATH_MAX], *gd;
		struct stat st;
		snprintf(p, sizeof(p), "%s/.git", strcmp(r.roots.v[g], "/") ? r.roots.v[g] : "");
		if (lstat(p, &st) < 0 || !S_ISLNK(st.st_mode) || !(gd = realpath(p, NULL)))
			continue;
		rc = gitdir_paths(&r, gd, out);
		free(gd);
	}
	/* a bare repository one level down */
	for (size_t i = 0; rc == 0 && i < r.bare.n; i++) {
		char *gd = entry_abs(&r, r.bare.v[i]);
		rc = gd ? gitdir_paths(&r, gd, out) : -ENOMEM;
		free(gd);
	}
	for (size_t i = 0; rc == 0 && i < r.nested.n; i++) {
		char *co = entry_abs(&r, r.nested.v[i]);
		rc = co ? nested_gitdir(&r, r.nested.v[i], &out->files) : -ENOMEM;
		if (rc == 0)
			rc = strv_push_owned(&out->checkouts, co);
		else
			free(co);
	}
	strv_release(&r.roots);
	strv_release(&r.extra);
	strv_release(&r.nested);
	strv_release(&r.bare);
	strv_release(&r.hooks_rel);
	free(r.off);
	return rc;
}
