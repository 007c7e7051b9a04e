/*
 * protect: the default set (one table), the policy's names, and the record
 * of the protected names beneath each write grant (protect_scan, before the
 * step and after it). The judgement and the quarantine are protect_net.c's,
 * git's own files protect_git.c's.
 */
#include "protect.h"

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

#define HOOKS_RUN "a git hook: run by git commit, merge, checkout, push, rebase..."
#define CONFIG_RUN                                                                                 \
	"a git config: a key there (core.fsmonitor, core.hooksPath, a filter, an alias "           \
	"with '!') runs its command on the next git status, commit or diff"
#define RC_RUN "a shell startup file: run by the next login or interactive shell"
#define LEFTHOOK_RUN                                                                               \
	"lefthook: the hook it installs runs the commands this file names on git commit"
#define CONTINUE_RUN "Continue: MCP servers and tools its project config starts"
#define KIRO_RUN "Kiro: MCP servers its settings start, hooks run on file events"
#define OPENCODE_RUN "opencode: MCP servers, commands and plugins its project config runs"
#define MISE_RUN "mise: hooks and env scripts it runs on entering the folder"
#define CRUSH_RUN "Crush: the MCP servers and language servers its project config starts"
#define YARN_RUN "yarn: yarnPath (yarn-path) names the program every yarn command here runs"
#define INCLUDED_RUN "a git config another includes: a key there runs its command as in .git/config"
#define HOOKS_PATH_RUN                                                                             \
	"the folder core.hooksPath names: git runs its hooks on commit, merge, checkout, push"

/*
 * The default set. Names starting ".git/" hold for every gitdir a write
 * grant holds or that a .git file there names (the grant's .git, a gitdir
 * elsewhere in a grant, each submodule's under modules/).
 */
const struct protect_rule protect_rules[] = {
	{".git", PROTECT_GITDIR,
	 "the checkout's gitdir: a .git file there sends every git command to the gitdir it "
	 "names",
	 false, false},
	{".git/hooks", PROTECT_HOOKS, HOOKS_RUN, true, false},
	{".git/config", PROTECT_CONFIG, CONFIG_RUN, true, false},
	{".git/config.worktree", PROTECT_CONFIG, CONFIG_RUN, true, false},
	{".git/info/attributes", PROTECT_FILE,
	 "git attributes: choose the filter, diff and merge drivers git runs on add, checkout "
	 "and diff",
	 true, false},
	{".git/commondir", PROTECT_FILE,
	 "a linked gitdir's pointer to the gitdir whose hooks and config git uses", true, false},
	{".git/modules", PROTECT_MODULES,
	 "submodules' gitdirs: their hooks and config run as the checkout's do", true, false},
	{".git/worktrees", PROTECT_MODULES,
	 "linked worktrees' config.worktree: read by git in those worktrees", true, false},
	{".gitmodules", PROTECT_FILE,
	 "submodules' URLs and paths: what git submodule update fetches and checks out", false,
	 false},
	{".envrc", PROTECT_FILE, "direnv: run by the shell on entering the folder", false, false},
	{".vscode", PROTECT_FOLDER,
	 "VS Code: tasks run on opening the folder, settings name programs it runs", false, false},
	{".idea", PROTECT_FOLDER, "JetBrains IDEs: run configurations and external tools", false,
	 false},
	{".mcp.json", PROTECT_FILE, "MCP servers an agent starts in this folder", false, false},
	{".claude", PROTECT_FOLDER, "Claude Code: hooks and MCP servers it runs here", false,
	 false},
	{".cursor", PROTECT_FOLDER, "Cursor: rules and MCP servers it runs here", false, false},
	{".pre-commit-config.yaml", PROTECT_FILE,
	 "pre-commit: the hook it installs runs the commands this file names on git commit and "
	 "push",
	 false, false},
	{".husky", PROTECT_FOLDER, "husky: the hook scripts git runs on commit and push", false,
	 false},
	{"lefthook.yml", PROTECT_FILE, LEFTHOOK_RUN, false, false},
	{".lefthook.yml", PROTECT_FILE, LEFTHOOK_RUN, false, false},
	{"lefthook-local.yml", PROTECT_FILE, LEFTHOOK_RUN, false, false},
	{".lefthook-local.yml", PROTECT_FILE, LEFTHOOK_RUN, false, false},
	{".overcommit.yml", PROTECT_FILE,
	 "overcommit: the hook it installs runs what this file names on git commit", false, false},
	{".gemini", PROTECT_FOLDER, "Gemini CLI: MCP servers and tools its settings start here",
	 false, false},
	{".roo", PROTECT_FOLDER, "Roo Code: MCP servers its project config starts", false, false},
	{".continue", PROTECT_FOLDER, CONTINUE_RUN, false, false},
	{".continue/mcpServers", PROTECT_FOLDER, CONTINUE_RUN, false, false},
	{".amazonq", PROTECT_FOLDER, "Amazon Q: MCP servers its project config starts", false,
	 false},
	{".kiro", PROTECT_FOLDER, KIRO_RUN, false, false},
	{".kiro/settings", PROTECT_FOLDER, KIRO_RUN, false, false},
	{".kiro/hooks", PROTECT_FOLDER, KIRO_RUN, false, false},
	{"opencode.json", PROTECT_FILE, OPENCODE_RUN, false, false},
	{"opencode.jsonc", PROTECT_FILE, OPENCODE_RUN, false, false},
	{".opencode", PROTECT_FOLDER, OPENCODE_RUN, false, false},
	{".opencode/plugin", PROTECT_FOLDER, OPENCODE_RUN, false, false},
	{".aider.conf.yml", PROTECT_FILE,
	 "aider: the lint and test commands it runs after each edit", false, false},
	{".zed", PROTECT_FOLDER, "Zed: the language servers and tasks its project settings name",
	 false, false},
	{"mise.toml", PROTECT_FILE, MISE_RUN, false, false},
	{".mise.toml", PROTECT_FILE, MISE_RUN, false, false},
	{"mise.local.toml", PROTECT_FILE, MISE_RUN, false, false},
	{".mise.local.toml", PROTECT_FILE, MISE_RUN, false, false},
	{".mise", PROTECT_FOLDER, MISE_RUN, false, false},
	{".config/mise.toml", PROTECT_FILE, MISE_RUN, false, false},
	{".config/mise", PROTECT_FOLDER, MISE_RUN, false, false},
	{".qwen", PROTECT_FOLDER, "Qwen Code: MCP servers and tools its project settings start",
	 false, false},
	{"crush.json", PROTECT_FILE, CRUSH_RUN, false, false},
	{".crush.json", PROTECT_FILE, CRUSH_RUN, false, false},
	{".junie", PROTECT_FOLDER, "Junie: the MCP servers its project config starts", false,
	 false},
	{".clinerules/hooks", PROTECT_FOLDER, "Cline: hook scripts it runs on its own events",
	 false, false},
	{".github/hooks", PROTECT_FOLDER, "GitHub Copilot: hook commands its agent runs here",
	 false, false},
	{".devcontainer", PROTECT_FOLDER,
	 "dev containers: initializeCommand runs on the host when the folder is reopened in its "
	 "container",
	 false, false},
	{".yarnrc.yml", PROTECT_FILE, YARN_RUN, false, false},
	{".yarnrc", PROTECT_FILE, YARN_RUN, false, false},
	{".npmrc", PROTECT_FILE,
	 "npm's project config: node-options and script-shell run code on every npm command here",
	 false, false},
	{".bashrc", PROTECT_FILE, RC_RUN, false, true},
	{".bash_profile", PROTECT_FILE, RC_RUN, false, true},
	{".bash_login", PROTECT_FILE, RC_RUN, false, true},
	{".bash_logout", PROTECT_FILE, RC_RUN, false, true},
	{".profile", PROTECT_FILE, RC_RUN, false, true},
	{".zshrc", PROTECT_FILE, RC_RUN, false, true},
	{".zshenv", PROTECT_FILE, RC_RUN, false, true},
	{".zprofile", PROTECT_FILE, RC_RUN, false, true},
	{".zlogin", PROTECT_FILE, RC_RUN, false, true},
	{".kshrc", PROTECT_FILE, RC_RUN, false, true},
	{".cshrc", PROTECT_FILE, RC_RUN, false, true},
	{".tcshrc", PROTECT_FILE, RC_RUN, false, true},
	{".config/fish/config.fish", PROTECT_FILE, RC_RUN, false, true},
	{".gitconfig", PROTECT_CONFIG, CONFIG_RUN " in every repository", false, true},
	{".config/git/config", PROTECT_CONFIG, CONFIG_RUN " in every repository", false, true},
	{".ssh/config", PROTECT_FILE,
	 "ssh's config: a ProxyCommand runs on the next ssh or git push", false, true},
};
const size_t protect_nrules = sizeof(protect_rules) / sizeof(protect_rules[0]);

const struct protect_rule *protect_rule_named(const char *name)
{
	for (size_t i = 0; i < protect_nrules; i++)
		if (strcmp(protect_rules[i].name, name) == 0)
			return &protect_rules[i];
	return NULL;
}

const char *protect_entry(const char *e, size_t *g)
{
	char *tab;
	*g = strtoul(e, &tab, 10);
	return *tab == '\t' ? tab + 1 : NULL;
}

const char *protect_name_problem(const char *name, bool absolute_ok)
{
	const char *why = policy_path_problem(name);
	if (why)
		return why;
	if (name[0] == '/' && !absolute_ok)
		return "must be a name relative to a write grant (\".git/hooks\", \".envrc\")";
	for (const char *p = name; *p;) {
		size_t len = strcspn(p, "/");
		if (len == 2 && p[0] == '.' && p[1] == '.')
			return "must not hold a '..' component";
		p += len;
		p += *p == '/';
	}
	return NULL;
}

bool protect_unprotects(const char *u, const char *name)
{
	size_t ul = strlen(u);
	if (fnmatch(u, name, 0) == 0)
		return true;
	return strncmp(name, u, ul) == 0 && name[ul] == '/';
}

bool protect_unprotected(const struct stepbox_config *cfg, const struct protect_rule *rule)
{
	for (size_t i = 0; i < cfg->unprotect.n; i++)
		if (protect_unprotects(cfg->unprotect.v[i], rule->name))
			return true;
	return false;
}

const char *protect_rule_glob(const struct protect_rule *rule)
{
	return rule->name;
}

/* -v and the report: an unprotect that opens more than one default. */
static int say_broad(struct protect_record *r)
{
	for (size_t u = 0; u < r->unprot.n; u++) {
		char opens[1024] = "";
		size_t n = 0, k = 0;
		for (size_t i = 0; i < protect_nrules; i++) {
			if (!protect_unprotects(r->unprot.v[u], protect_rules[i].name))
				continue;
			if (k < sizeof(opens))
				k += (size_t)snprintf(opens + k, sizeof(opens) - k, "%s%s",
						      n ? ", " : "", protect_rules[i].name);
			n++;
		}
		if (n <= 1)
			continue;
		char *s = strv_fmt("%s (opens %s)", r->unprot.v[u], opens);
		if (!s || strv_push_owned(&r->broad, s) < 0)
			return -ENOMEM;
		if (r->verbosity > 0)
			fprintf(stderr,
				"stepbox: unprotect '%s' is broad: the step may write %s in its "
				"write grants, which run outside the sandbox later\n",
				r->unprot.v[u], opens);
	}
	return 0;
}

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
	const char *base;
	int dfd = depth < PROTECT_MAX_DEPTH ? protect_walk(s->roots[g], rel, &base) : -ELOOP;
	if (dfd < 0)
		return 0;
	struct path_dir d;
	int r = path_dir_open(&d, dfd, base);
	close(dfd);
	if (r < 0)
		return 0;
	struct path_entry e;
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
	char *gd = to ? protect_git_link(it->content, dir) : NULL;
	if (!to && it->len < PATH_MAX) {
		/* commondir: one line, a path relative to the gitdir */
		char line[PATH_MAX];
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(it->content, "\r\n"),
			 it->content);
		if (line[0]) {
			char full[PATH_MAX];
			gd = protect_resolve(dir, line, full, sizeof(full));
		}
	}
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
	const char *base;
	int dfd = protect_walk(s->roots[g], rel, &base);
	if (dfd < 0)
		return 0;
	struct path_dir d;
	int r = path_dir_open(&d, dfd, base);
	close(dfd);
	if (r < 0)
		return 0;
	bool modules = strcmp(pr->name, ".git/modules") == 0;
	struct path_entry e;
	r = 0;
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
	int dfd = *prefix ? -1 : dup(s->roots[g]);
	const char *base = ".";
	if (*prefix)
		dfd = protect_walk(s->roots[g], prefix, &base);
	if (dfd < 0)
		return 0;
	struct path_dir d;
	int r = path_dir_open(&d, dfd, base);
	close(dfd);
	if (r < 0)
		return 0;
	struct path_entry e;
	r = 0;
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

struct protect_record *protect_record(const struct stepbox_config *cfg, const char *const *write,
				      size_t n, const char *home, struct stepbox_err *err)
{
	struct protect_record *r = calloc(1, sizeof(*r));
	int rc = r ? 0 : -ENOMEM;
	if (rc == 0 && !(r->off = calloc(protect_nrules, sizeof(bool))))
		rc = -ENOMEM;
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = strv_push(&r->roots, write[i]);
	if (rc == 0 && home && !(r->home = strdup(home)))
		rc = -ENOMEM;
	if (rc == 0)
		rc = strv_extend(&r->extra, &cfg->protect_paths);
	if (rc == 0)
		rc = strv_extend(&r->unprot, &cfg->unprotect);
	for (size_t i = 0; rc == 0 && i < protect_nrules; i++)
		r->off[i] = protect_unprotected(cfg, &protect_rules[i]);
	size_t hooks = 0, incs = 0;
	if (rc == 0)
		rc = protect_note_nested(r);
	if (rc == 0)
		rc = protect_add_hooks_paths(r, &hooks, &incs);
	if (rc == 0 && (!(r->xrules = calloc(r->extra.n + 1, sizeof(*r->xrules))) ||
			!(r->xoff = calloc(r->extra.n + 1, sizeof(bool)))))
		rc = -ENOMEM;
	for (size_t i = 0; rc == 0 && i < r->extra.n; i++)
		for (size_t u = 0; u < r->unprot.n; u++)
			r->xoff[i] |= protect_unprotects(r->unprot.v[u], r->extra.v[i]);
	size_t policy = r->extra.n - hooks - incs;
	for (size_t i = 0; rc == 0 && i < r->extra.n; i++)
		r->xrules[i] =
			i < policy           ? (struct protect_rule){r->extra.v[i], PROTECT_FILE,
								     "named in the policy's protected_paths",
								     false, false}
			: i < policy + hooks ? (struct protect_rule){r->extra.v[i], PROTECT_HOOKS,
								     HOOKS_PATH_RUN, false, false}
					     : (struct protect_rule){r->extra.v[i], PROTECT_CONFIG,
								     INCLUDED_RUN, false, false};
	if (rc == 0) {
		r->verbosity = cfg->verbosity;
		rc = say_broad(r);
	}
	/* the clock file times are taken from (Linux: the coarse one, a tick behind) */
#ifdef CLOCK_REALTIME_COARSE
	if (rc == 0 && clock_gettime(CLOCK_REALTIME_COARSE, &r->start) < 0)
#else
	if (rc == 0 && clock_gettime(CLOCK_REALTIME, &r->start) < 0)
#endif
		rc = -errno;
	if (rc == 0)
		rc = protect_scan(r, &r->before, false);
	if (rc < 0) {
		protect_free(r);
		err_set(err, ERR_UNAVAILABLE, -rc, "record the protected paths");
		return NULL;
	}
	return r;
}

struct protect_record *protect_record_grants(const struct stepbox_config *cfg,
					     const struct grants *g, struct stepbox_err *err)
{
	struct strv roots = STRV_INIT;
	int r = 0;
	for (size_t i = 0; r == 0 && i < g->n; i++) {
		const struct grant *gr = &g->v[i];
		/* the device nodes and the namespaces' private places are no one's to keep */
		if ((gr->access & GRANT_WRITE) && !(gr->access & (GRANT_DEV | GRANT_PRIVATE)) &&
		    strv_find(&roots, gr->path) < 0)
			r = strv_push(&roots, gr->path);
	}
	const char *h = getenv("HOME");
	char *home = h && h[0] == '/' ? realpath(h, NULL) : NULL;
	struct protect_record *rec =
		r == 0 ? protect_record(cfg, (const char *const *)roots.v, roots.n, home, err)
		       : NULL;
	if (r < 0)
		err_set(err, ERR_UNAVAILABLE, -r, "list the write grants");
	free(home);
	strv_release(&roots);
	return rec;
}

void protect_free(struct protect_record *r)
{
	if (!r)
		return;
	protect_items_release(&r->before);
	protect_items_release(&r->after);
	for (size_t i = 0; i < r->nf; i++) {
		free(r->f[i].path);
		free(r->f[i].why);
		free(r->f[i].moved_to);
		free(r->f[i].note);
	}
	free(r->f);
	strv_release(&r->roots);
	strv_release(&r->extra);
	strv_release(&r->unprot);
	strv_release(&r->broad);
	strv_release(&r->gitdirs);
	strv_release(&r->made);
	strv_release(&r->nested);
	strv_release(&r->bare);
	free(r->xrules);
	free(r->xoff);
	free(r->off);
	free(r->home);
	free(r->quarantine);
	free(r);
}

/* The folders between a place and its grant (exclusive), for the pins. */
static int push_between(const struct protect_record *r, const struct item *it, struct strv *pins)
{
	char up[PATH_MAX];
	snprintf(up, sizeof(up), "%s", it->path);
	const char *root = r->roots.v[it->grant];
	for (char *slash; (slash = strrchr(up, '/')) && slash != up;) {
		*slash = '\0';
		if (strcmp(up, root) == 0 || !path_beneath(up, root))
			break;
		if (strv_find(pins, up) < 0 && strv_push(pins, up) < 0)
			return -ENOMEM;
	}
	return 0;
}

int protect_places(const struct protect_record *r, struct strv *out, struct strv *pins)
{
	for (size_t i = 0; r && i < r->before.n; i++) {
		const struct item *it = &r->before.v[i];
		/* a hooks folder is bound whole; a folder's entries are in it */
		if (it->kind == ITEM_HOOK || it->entry)
			continue;
		if (it->kind == ITEM_DOTGIT && S_ISDIR(it->st.st_mode))
			continue; /* .git itself stays writable: commits work */
		const struct protect_rule *pr = protect_rule_named(it->rule);
		if (pr && pr->kind == PROTECT_MODULES)
			continue; /* submodules' gitdirs are fetched into and made: their hooks
				     and configs are items of their own, the live layer the rest */
		if (!S_ISDIR(it->st.st_mode) && !S_ISREG(it->st.st_mode))
			continue;
		if (it->kind == ITEM_CONFIG) {
			/*
			 * git writes its config by a rename onto it, which a bind
			 * refuses (EBUSY: git remote add, push -u, a tracking
			 * branch): the live layer judges that rename by its keys,
			 * as under Landlock alone; only what holds it is pinned.
			 */
			if (push_between(r, it, pins) < 0)
				return -ENOMEM;
			continue;
		}
		bool inside = false; /* an entry of a folder bound whole already */
		for (size_t k = 0; k < out->n && !inside; k++)
			inside = path_beneath(it->path, out->v[k]);
		if (inside)
			continue;
		if (strv_push(out, it->path) < 0 || push_between(r, it, pins) < 0)
			return -ENOMEM;
	}
	return 0;
}
