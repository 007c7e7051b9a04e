/*
 * protect: the default set (one table), the policy's names, and the record
 * of the protected names beneath each write grant (its scan, before the
 * step and after it, is protect_scan.c's). The judgement and the
 * quarantine are protect_net.c's, git's own files protect_git.c's.
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
	strv_release(&r->hooks_rel);
	strv_release(&r->worktrees);
	free(r->created.v);
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
