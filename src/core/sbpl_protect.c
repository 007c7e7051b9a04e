/*
 * sbpl_protect: the protected paths (docs/protected-paths.md) in the
 * Seatbelt profile, one (deny file-write* ...) after the write grants'
 * allows: SBPL takes the last rule that matches, so a deny beneath an allow
 * holds, for names that do not exist yet too. macOS has no live layer: what
 * the profile denies is all that holds while the step runs.
 *
 * A name is a regex that takes each spelling a Mac's file systems give it.
 * APFS and HFS+ fold case by default, and Unicode's folding takes a few
 * letters past ASCII to ASCII ones (ſ to s, the Kelvin sign to k, ß to ss,
 * the ligatures ﬁ to fi...); a share from a Windows server drops a
 * component's trailing dots and spaces. So `.ENVRC`, `.Git/HOOKS/x`,
 * `.git/conﬁg` and `.envrc.` reach what direnv and git open. Each ASCII
 * letter is spelled in both cases and beside the letters that fold to it,
 * each ligature beside its letters, and a component may end in dots and
 * spaces; a byte past ASCII in a name of the policy's takes any run of
 * them. The grant itself is a subpath (it exists, and macOS names what
 * exists as it is spelled on disk); the regex counts its components, so no
 * name of the grant's is ever written in a regex.
 */
#include "sbpl_int.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "path.h"
#include "protect.h"
#include "strbuf.h"

/* Unicode's full case folding of each is ASCII letters. */
static const struct {
	const char *ascii, *utf8;
} ascii_folds[] = {
	{"ffi", "\xef\xac\x83"}, {"ffl", "\xef\xac\x84"}, {"ff", "\xef\xac\x80"},
	{"fi", "\xef\xac\x81"},  {"fl", "\xef\xac\x82"},  {"st", "\xef\xac\x85"},
	{"st", "\xef\xac\x86"},  {"ss", "\xc3\x9f"},      {"ss", "\xe1\xba\x9e"},
};
#define NFOLDS (sizeof(ascii_folds) / sizeof(ascii_folds[0]))
/* the alternations one name may open (a name of the set opens one at most) */
#define FOLD_BRANCHES 64
#define FOLD_MAX 8192 /* bytes of one name's regex */
/* checkouts one level down whose names are denied one by one; past them, every folder's */
#define SBPL_CHECKOUTS_APART 32

/* The regex of one character of a name (or a glob's token) at *s, *s moved past it. */
static void fold_one(struct strbuf *sb, const char **s, bool glob)
{
	unsigned char c = (unsigned char)*(*s)++;
	if (c >= 0x80) { /* a run past ASCII: any run (wider, never narrower: a deny) */
		while ((unsigned char)**s >= 0x80)
			(*s)++;
		strbuf_add(sb, "[^/]+");
		return;
	}
	if (glob && (c == '*' || c == '?')) {
		strbuf_add(sb, c == '*' ? "[^/]*" : "[^/]");
		return;
	}
	if (glob && c == '\\' && **s) { /* fnmatch's escape: the next one as it is */
		fold_one(sb, s, false);
		return;
	}
	if (glob && c == '[') { /* a bracket expression (a ']' first is in it): one, any */
		const char *e = *s + (**s == '!' || **s == '^');
		e += *e == ']';
		e += strcspn(e, "]/");
		if (*e == ']') {
			*s = e + 1;
			strbuf_add(sb, "[^/]");
			return;
		}
	}
	if (c >= 'A' && c <= 'Z')
		c = (unsigned char)(c + 'a' - 'A');
	if (c == 's')
		strbuf_add(sb, "([sS]|\xc5\xbf)");
	else if (c == 'k')
		strbuf_add(sb, "([kK]|\xe2\x84\xaa)");
	else if (c >= 'a' && c <= 'z')
		strbuf_add(sb, "[%c%c]", c, c + 'A' - 'a');
	else if (c == '/')
		strbuf_add(sb, "[. ]*/");
	else if (strchr(".^$|()[]{}*+?\\", c))
		strbuf_add(sb, "\\%c", c);
	else
		strbuf_add(sb, c == '"' ? "." : "%c", c);
}

/* s to its end: where a ligature may spell the letters here, each way. */
static void fold_from(struct strbuf *sb, const char *s, bool glob, unsigned *branches)
{
	while (*s) {
		size_t alt[NFOLDS], k = 0;
		for (size_t i = 0; i < NFOLDS; i++)
			if (strncasecmp(s, ascii_folds[i].ascii, strlen(ascii_folds[i].ascii)) == 0)
				alt[k++] = i;
		if (k == 0 || ++*branches > FOLD_BRANCHES) {
			fold_one(sb, &s, glob);
			continue;
		}
		strbuf_add(sb, "(");
		const char *t = s;
		fold_one(sb, &t, glob);
		fold_from(sb, t, glob, branches);
		for (size_t i = 0; i < k; i++) {
			strbuf_add(sb, "|%s", ascii_folds[alt[i]].utf8);
			fold_from(sb, s + strlen(ascii_folds[alt[i]].ascii), glob, branches);
		}
		strbuf_add(sb, ")");
		return;
	}
	strbuf_add(sb, "[. ]*"); /* the last component's end */
}

/* name's regex, every spelling, unanchored, into buf: false when it has too many. */
static bool fold(char *buf, size_t cap, const char *name, bool glob)
{
	struct strbuf sb;
	strbuf_init(&sb, buf, cap);
	unsigned branches = 0;
	fold_from(&sb, name, glob, &branches);
	return !sb.cut && branches <= FOLD_BRANCHES;
}

enum {
	REL_EXACT = 1,   /* the name alone, not what is beneath it */
	REL_GLOB = 2,    /* a protected_paths entry: a glob */
	REL_SAMPLES = 4, /* a hooks folder: a *.sample at its top is git's own, left free */
};

/*
 * rel beneath write grant w, in every spelling: the name and all beneath it
 * (how: REL_*). The regex is anchored at w's depth: a component for each of
 * w's, which the subpath names.
 */
static void deny_rel(struct sbpl_out *o, const char *w, const char *rel, unsigned how)
{
	char name[FOLD_MAX], at[PATH_MAX * 2];
	struct strbuf sb;
	strbuf_init(&sb, at, sizeof(at));
	strbuf_add(&sb, "^");
	for (const char *c = w; *c; c++)
		if (*c == '/' && c[1])
			strbuf_add(&sb, "/[^/]+");
	strbuf_add(&sb, "%s", *rel ? "/" : "");
	if (sb.cut || !fold(name, sizeof(name), rel, how & REL_GLOB)) {
		sbpl_fail(o, -E2BIG, rel);
		return;
	}
	fputs("\n  (require-all (subpath ", o->f);
	sbpl_str(o, w);
	fprintf(o->f, ") (regex #\"%s%s%s\")", at, name, how & REL_EXACT ? "$" : "(/|$)");
	if (how & REL_SAMPLES)
		fprintf(o->f, " (require-not (regex #\"%s%s/[^/]+\\.sample$\"))", at, name);
	fputc(')', o->f);
}

/* A regex anywhere beneath write grant w, and more filters with it. */
static void deny_anywhere(struct sbpl_out *o, const char *w, const char *regex, const char *more)
{
	fputs("\n  (require-all (subpath ", o->f);
	sbpl_str(o, w);
	fprintf(o->f, ") (regex #\"%s\")%s)", regex, more);
}

static bool gitdir_exists(const char *w)
{
	char p[PATH_MAX];
	struct stat st;
	snprintf(p, sizeof(p), "%s/.git", w);
	if (lstat(p, &st) < 0 && strncmp(p, "/private/", 9) == 0 && lstat(p + 8, &st) < 0)
		return false;
	return S_ISDIR(st.st_mode);
}

/* The set's gitdir names, folded once for every grant. */
struct git_names {
	char git[128], hooks[128], config[256], wt[512], configs[800], samples[256];
};

static void git_names(struct git_names *n)
{
	fold(n->git, sizeof(n->git), ".git", false);
	fold(n->hooks, sizeof(n->hooks), "hooks", false);
	fold(n->config, sizeof(n->config), "config", false);
	fold(n->wt, sizeof(n->wt), "config.worktree", false);
	snprintf(n->configs, sizeof(n->configs), "(%s|%s)", n->config, n->wt);
	snprintf(n->samples, sizeof(n->samples), " (require-not (regex #\"/%s/[^/]+\\.sample$\"))",
		 n->hooks);
}

/*
 * The gitdir names of write grant w: at any depth (a checkout in a folder
 * of it, a clone the step makes), hooks but samples, attributes,
 * commondir, submodules' and worktrees' hooks and configs; the grant's own
 * .git, its hooks folder and its configs where the gitdir exists (git init
 * and clone write a new one's config).
 */
static void deny_git(struct sbpl_out *o, const struct stepbox_config *cfg, const char *w,
		     const struct git_names *n)
{
	bool top = gitdir_exists(w);
	char rx[FOLD_MAX], more[FOLD_MAX + 256];
	for (size_t i = 0; i < protect_nrules; i++) {
		const struct protect_rule *r = &protect_rules[i];
		if (!(r->gitdir || r->kind == PROTECT_GITDIR) || protect_unprotected(cfg, r))
			continue;
		const char *in = r->name + strlen(".git/");
		if (r->kind == PROTECT_GITDIR) {
			if (top)
				deny_rel(o, w, r->name, REL_EXACT);
		} else if (r->kind == PROTECT_HOOKS) {
			snprintf(rx, sizeof(rx), "/%s/%s/", n->git, n->hooks);
			snprintf(more, sizeof(more),
				 " (require-not (regex #\"%s[^/]+\\.sample$\"))", rx);
			deny_anywhere(o, w, rx, more);
			if (top)
				deny_rel(o, w, r->name, REL_EXACT);
		} else if (r->kind == PROTECT_MODULES && strcmp(in, "modules") == 0) {
			char mods[256];
			fold(mods, sizeof(mods), in, false);
			snprintf(rx, sizeof(rx), "/%s/%s/", n->git, mods);
			snprintf(more, sizeof(more),
				 " (require-any (regex #\"/%s$\") (require-all (regex "
				 "#\"/%s/\")%s))",
				 n->configs, n->hooks, n->samples);
			deny_anywhere(o, w, rx, more);
		} else if (r->kind == PROTECT_MODULES) {
			char wts[256];
			fold(wts, sizeof(wts), in, false);
			snprintf(rx, sizeof(rx), "/%s/%s/[^/]+/%s$", n->git, wts, n->wt);
			deny_anywhere(o, w, rx, "");
		} else if (r->kind == PROTECT_CONFIG) {
			if (top)
				deny_rel(o, w, r->name, REL_EXACT);
		} else { /* info/attributes, commondir */
			char nm[256];
			fold(nm, sizeof(nm), r->name, false);
			snprintf(rx, sizeof(rx), "/%s$", nm);
			deny_anywhere(o, w, rx, "");
		}
	}
}

/* The set's other names, and the policy's protected_paths, beneath write grant w. */
static void deny_names(struct sbpl_out *o, const struct stepbox_config *cfg, const char *w,
		       const char *home)
{
	for (size_t k = 0; k < protect_nrules; k++) {
		const struct protect_rule *r = &protect_rules[k];
		if (r->gitdir || r->kind == PROTECT_GITDIR || protect_unprotected(cfg, r))
			continue;
		if (r->home && !(home && home[0] == '/' && path_beneath(home, w)))
			continue;
		char *name = r->home && strcmp(home, w) != 0
				     ? strv_fmt("%s/%s", home + strlen(w) + (strcmp(w, "/") != 0),
						r->name)
				     : strdup(r->name);
		if (name)
			deny_rel(o, w, name, 0);
		free(name);
	}
	for (size_t k = 0; k < cfg->protect_paths.n; k++) {
		const char *pp = cfg->protect_paths.v[k];
		bool off = false;
		for (size_t u = 0; u < cfg->unprotect.n; u++)
			off |= fnmatch(cfg->unprotect.v[u], pp, 0) == 0;
		char *m = pp[0] == '/' ? sbpl_mac_path(pp) : NULL;
		if (!off && m && path_beneath(m, w))
			deny_rel(o, w, m + strlen(w) + (strcmp(w, "/") && strcmp(m, w)), REL_GLOB);
		else if (!off && pp[0] != '/')
			deny_rel(o, w, pp, REL_GLOB);
		free(m);
	}
}

/* path (a host's) beneath the write grant that holds it; how: REL_*. */
static void deny_path(struct sbpl_out *o, const struct strv *write, const char *path, unsigned how)
{
	char *m = sbpl_mac_path(path);
	const char *w = NULL;
	for (size_t i = 0; m && i < write->n; i++)
		if (path_beneath(m, write->v[i]) && (!w || strlen(write->v[i]) > strlen(w)))
			w = write->v[i];
	if (w)
		deny_rel(o, w, m + strlen(w) + (strcmp(w, "/") && strcmp(m, w)), how);
	free(m);
}

/*
 * What the record protects by path beyond the set's names at each grant's
 * top: the folders core.hooksPath names (but samples at their top), the git
 * configs the configs include, each checkout's .git one level down with
 * its hooks folder and configs, and the set's names at its top.
 */
static void deny_profile_paths(struct sbpl_out *o, const struct stepbox_config *cfg,
			       const struct strv *write, const char *home)
{
	struct protect_profile pp = {STRV_INIT, STRV_INIT, STRV_INIT};
	char *canon_home = home && home[0] == '/' ? realpath(home, NULL) : NULL;
	/* the grants as this host names them (a profile written on Linux: no /private) */
	const char **roots = calloc(write->n + 1, sizeof(*roots));
	struct stat st;
	for (size_t i = 0; roots && i < write->n; i++) {
		const char *w = write->v[i];
		roots[i] = strncmp(w, "/private/", 9) == 0 && lstat(w, &st) < 0 ? w + 8 : w;
	}
	int r = roots ? protect_profile_paths(cfg, roots, write->n, canon_home, &pp) : -ENOMEM;
	free(roots);
	if (r < 0)
		sbpl_fail(o, r, NULL); /* never a profile that protects less than it says */
	for (size_t i = 0; i < pp.hooks.n; i++)
		deny_path(o, write, pp.hooks.v[i], REL_SAMPLES);
	for (size_t i = 0; i < pp.files.n; i++)
		deny_path(o, write, pp.files.v[i], REL_EXACT);
	for (size_t i = 0; i < pp.checkouts.n; i++)
		deny_path(o, write, pp.checkouts.v[i], REL_EXACT); /* not moved from its names */
	/* a workspace of many clones: the names at the top of every folder there, bounded */
	bool many = pp.checkouts.n > SBPL_CHECKOUTS_APART;
	for (size_t i = 0; i < (many ? write->n : pp.checkouts.n); i++) {
		for (size_t k = 0; k < protect_nrules; k++) {
			const struct protect_rule *pr = &protect_rules[k];
			char *p = NULL;
			if (pr->gitdir || pr->home || pr->kind == PROTECT_GITDIR ||
			    protect_unprotected(cfg, pr))
				continue;
			if (many && (p = strv_fmt("*/%s", pr->name)))
				deny_rel(o, write->v[i], p, REL_GLOB);
			else if (!many && (p = strv_fmt("%s/%s", pp.checkouts.v[i], pr->name)))
				deny_path(o, write, p, 0);
			free(p);
		}
	}
	free(canon_home);
	strv_release(&pp.hooks);
	strv_release(&pp.files);
	strv_release(&pp.checkouts);
}

void sbpl_deny_protected(struct sbpl_out *o, const struct stepbox_config *cfg,
			 const struct strv *write)
{
	if (write->n == 0)
		return;
	const char *home = getenv("HOME");
	struct git_names n;
	git_names(&n);
	fputs("; protected paths beneath the write grants, in every spelling a Mac's file "
	      "systems\n; give them: they run outside the sandbox later\n(deny file-write*",
	      o->f);
	for (size_t i = 0; i < write->n; i++) {
		deny_git(o, cfg, write->v[i], &n);
		deny_names(o, cfg, write->v[i], home);
	}
	deny_profile_paths(o, cfg, write, home);
	fputs(")\n\n", o->f);
}
