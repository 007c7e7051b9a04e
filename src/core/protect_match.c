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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
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

/*
 * What lies beneath a protected name, below being the rest of the path after
 * it: a hooks folder's top-level samples are git's own; a folder of the set
 * or of the policy protects all it holds, at any depth (a hook script
 * .claude/settings.json runs from .claude/hooks/); a gitdir's, config's or
 * modules' other names are free (objects, refs: their own rules name what
 * runs).
 */
static enum protect_verdict on_entry(enum protect_kind k, const char *below)
{
	size_t n = strlen(below);
	if (k == PROTECT_HOOKS)
		return !strchr(below, '/') && n > 7 && strcmp(below + n - 7, ".sample") == 0
			       ? PROTECT_FREE
			       : PROTECT_REFUSED;
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

static bool has_glob(const char *s)
{
	return strpbrk(s, "*?[\\") != NULL;
}

/*
 * Where rel lies against pat (relative to the grant): NULL when it is not pat
 * nor beneath it; "" when it is pat; else what follows "pat/". The set's
 * names and the folders they are found in are strings (a folder may be
 * named "a[1]"); a glob of the policy's matches rel cut to as many
 * components as it has.
 */
const char *protect_beneath(const char *pat, bool glob, const char *rel)
{
	if (!glob) {
		size_t n = strlen(pat);
		if (strncmp(rel, pat, n) != 0 || (rel[n] && rel[n] != '/'))
			return NULL;
		return rel[n] ? rel + n + 1 : rel + n;
	}
	const char *end = rel;
	for (const char *s = pat;; s++) {
		end += strcspn(end, "/");
		s = strchr(s, '/');
		if (!s)
			break;
		if (!*end)
			return NULL; /* rel has fewer components than pat */
		end++;
	}
	char cut[PATH_MAX];
	if ((size_t)(end - rel) >= sizeof(cut))
		return NULL;
	memcpy(cut, rel, (size_t)(end - rel));
	cut[end - rel] = '\0';
	if (fnmatch(pat, cut, FNM_PATHNAME | FNM_PERIOD) != 0)
		return NULL;
	return *end ? end + 1 : end;
}

/* rel lies above pat (rel's components all match pat's first ones, pat having more). */
static bool above(const char *pat, bool glob, const char *rel)
{
	if (!*rel)
		return true; /* the grant itself holds everything */
	if (!glob) {
		size_t n = strlen(rel);
		return strncmp(pat, rel, n) == 0 && pat[n] == '/';
	}
	char p[PATH_MAX];
	size_t rc = 1, pc = 1;
	for (const char *s = rel; *s; s++)
		rc += *s == '/';
	for (const char *s = pat; *s; s++)
		pc += *s == '/';
	if (rc >= pc)
		return false;
	/* pat cut to rel's number of components */
	const char *s = pat;
	for (size_t i = 0; i < rc; i++)
		s = strchr(s, '/') + 1;
	snprintf(p, sizeof(p), "%.*s", (int)(s - pat - 1), pat);
	return fnmatch(p, rel, FNM_PATHNAME | FNM_PERIOD) == 0;
}

/*
 * pat (relative to the grant) against rel: the name itself, a name beneath
 * it, or a folder above it (moved or removed: refused).
 */
static void try(const char *pat, bool glob, const struct protect_rule *rule, const char *rel,
		enum protect_change how, bool fresh, struct protect_hit *hit)
{
	const char *below = protect_beneath(pat, glob, rel);
	if (below && !*below)
		raise_to(hit, on_name(rule->kind, how, fresh), rule);
	else if (below)
		raise_to(hit, on_entry(rule->kind, below), rule);
	if ((how == PROTECT_REMOVE || how == PROTECT_MOVE_DIR_IN) && above(pat, glob, rel))
		raise_to(hit, PROTECT_REFUSED, rule);
}

/*
 * One question: a path relative to grant g and the change asked. fold: rel
 * is folded (fold_name), and the record's own names are folded to compare.
 */
struct query {
	const struct protect_record *r;
	size_t g;
	const char *rel;
	enum protect_change how;
	bool fold;
	struct protect_hit *hit;
	const struct protect_probe *probe; /* or NULL: the record alone */
};

/*
 * name as a case-insensitive file system may find it (vfat, exfat, an SMB
 * server, ext4's and tmpfs's casefold: NFD and full case folding, the
 * default-ignorable code points dropped), as far as it can reach the ASCII
 * names of the set: ASCII letters lowered; the letters, ligatures and the
 * Kelvin sign whose folding is ASCII (ſ, ß, ẞ, ﬀ to ﬆ, K) spelled in ASCII;
 * default-ignorable code points (a zero-width space, a joiner, a variation
 * selector...) dropped; a component's trailing dots and spaces dropped, as
 * Windows servers do. Into out; false when it does not fit.
 */
static bool fold_name(const char *name, char *out, size_t cap)
{
	static const struct {
		const char *utf8, *ascii;
	} to_ascii[] = {
		{"\xc3\x9f", "ss"},     {"\xc5\xbf", "s"},       {"\xe1\xba\x9e", "ss"},
		{"\xe2\x84\xaa", "k"},  {"\xef\xac\x80", "ff"},  {"\xef\xac\x81", "fi"},
		{"\xef\xac\x82", "fl"}, {"\xef\xac\x83", "ffi"}, {"\xef\xac\x84", "ffl"},
		{"\xef\xac\x85", "st"}, {"\xef\xac\x86", "st"},
	};
	/* Default_Ignorable_Code_Point, as UTF-8: first bytes, and the last byte's range */
	static const struct {
		const char *lead;
		unsigned char lo, hi;
	} ignorable[] = {
		{"\xc2", 0xad, 0xad},         {"\xcd", 0x8f, 0x8f},
		{"\xd8", 0x9c, 0x9c},         {"\xe1\x85", 0x9f, 0xa0},
		{"\xe1\x9e", 0xb4, 0xb5},     {"\xe1\xa0", 0x8b, 0x8f},
		{"\xe2\x80", 0x8b, 0x8f},     {"\xe2\x80", 0xaa, 0xae},
		{"\xe2\x81", 0xa0, 0xaf},     {"\xe3\x85", 0xa4, 0xa4},
		{"\xef\xb8", 0x80, 0x8f},     {"\xef\xbb", 0xbf, 0xbf},
		{"\xef\xbe", 0xa0, 0xa0},     {"\xef\xbf", 0xb0, 0xb8},
		{"\xf0\x9b\xb2", 0xa0, 0xa3}, {"\xf0\x9d\x85", 0xb3, 0xba},
		{"\xf3\xa0\x80", 0x80, 0xbf}, {"\xf3\xa0\x81", 0x80, 0xbf},
		{"\xf3\xa0\x82", 0x80, 0xbf}, {"\xf3\xa0\x83", 0x80, 0xbf},
	};
	size_t n = 0;
	for (const char *s = name; *s;) {
		const char *add = NULL;
		/* ASCII is lowered, and only a byte past it may start what the tables hold */
		size_t skip = (unsigned char)*s < 0x80 ? 0 : SIZE_MAX;
		for (size_t i = 0; skip == SIZE_MAX && i < sizeof(to_ascii) / sizeof(to_ascii[0]);
		     i++)
			if (strncmp(s, to_ascii[i].utf8, strlen(to_ascii[i].utf8)) == 0)
				add = to_ascii[i].ascii, skip = strlen(to_ascii[i].utf8);
		for (size_t i = 0; skip == SIZE_MAX && i < sizeof(ignorable) / sizeof(ignorable[0]);
		     i++) {
			size_t l = strlen(ignorable[i].lead);
			/* equal: s holds l bytes, and s[l] is its next or the end */
			if (strncmp(s, ignorable[i].lead, l) != 0)
				continue;
			unsigned char last = (unsigned char)s[l];
			if (last >= ignorable[i].lo && last <= ignorable[i].hi)
				add = "", skip = l + 1;
		}
		char one[2] = {*s >= 'A' && *s <= 'Z' ? (char)(*s + 'a' - 'A') : *s, '\0'};
		if (skip == 0 || skip == SIZE_MAX)
			add = one, skip = 1;
		size_t al = strlen(add);
		if (n + al >= cap)
			return false;
		memcpy(out + n, add, al);
		n += al;
		s += skip;
		/* the end of a component: its trailing dots and spaces, but "." and ".." */
		if (*s == '/' || !*s) {
			size_t start = n;
			while (start > 0 && out[start - 1] != '/')
				start--;
			bool dots = strspn(out + start, ".") == n - start;
			while (!dots && n > start && (out[n - 1] == '.' || out[n - 1] == ' '))
				n--;
		}
	}
	out[n] = '\0';
	return true;
}

/* A name of the record's, as the question compares it: folded when rel is. */
static const char *as_asked(const struct query *q, const char *name, char *buf, size_t cap)
{
	return !q->fold ? name : fold_name(name, buf, cap) ? buf : "";
}

/* Whether the record holds gd as a gitdir of grant g looked at before the step. */
static bool recorded(const struct query *q, const char *gd)
{
	for (size_t i = 0; i < q->r->gitdirs.n; i++) {
		char buf[PATH_MAX * 2];
		size_t g;
		const char *rel = protect_entry(q->r->gitdirs.v[i], &g);
		if (rel && g == q->g && strcmp(as_asked(q, rel, buf, sizeof(buf)), gd) == 0)
			return true;
	}
	return false;
}

/* Whether rel is name or lies beneath it, or (moved or removed) above it. */
static bool near(const char *name, const char *rel, enum protect_change how)
{
	return protect_beneath(name, false, rel) ||
	       ((how == PROTECT_REMOVE || how == PROTECT_MOVE_DIR_IN) && above(name, false, rel));
}

/* s with fnmatch's special characters escaped, into out: false when too long. */
static bool escaped(const char *s, char *out, size_t cap)
{
	size_t n = 0;
	for (; *s; s++) {
		if (n + 3 > cap)
			return false;
		if (strchr("*?[\\", *s))
			out[n++] = '\\';
		out[n++] = *s;
	}
	out[n] = '\0';
	return true;
}

/*
 * Whether gd (of grant g) is, or lies in, a .git folder the step made: not
 * in another checkout's .git beneath it (one moved in there is not the
 * step's).
 */
static bool made_by_step(const struct query *q, const char *gd)
{
	for (size_t i = 0; i < q->r->made.n; i++) {
		char buf[PATH_MAX * 2];
		size_t g;
		const char *rel = protect_entry(q->r->made.v[i], &g);
		if (!rel || g != q->g)
			continue;
		const char *below = protect_beneath(as_asked(q, rel, buf, sizeof(buf)), false, gd);
		if (below && !strstr(below, "/.git") && strncmp(below, ".git", 4) != 0)
			return true;
	}
	return false;
}

static void try_gitdir_as(const struct query *q, const char *gd, bool known);
static void try_probed_gitdirs(const struct query *q);

/* The rules relative to a gitdir (".git/..."), against the gitdir gd. */
static void try_gitdir(const struct query *q, const char *gd)
{
	try_gitdir_as(q, gd, false);
}

/* ... known: a gitdir that was there before the step, though the record does not hold it. */
static void try_gitdir_as(const struct query *q, const char *gd, bool known)
{
	const struct protect_record *r = q->r;
	const char *rel = q->rel;
	enum protect_change how = q->how;
	if (!near(gd, rel, how))
		return; /* most calls: nothing of this gitdir's */
	if (how == PROTECT_REMOVE && (made_by_step(q, gd) || made_by_step(q, rel)))
		return; /* the step's own clone, or its worktree's or submodule's folder, removed */
	bool fresh = !known && !recorded(q, gd);
	for (size_t i = 0; i < protect_nrules; i++) {
		const struct protect_rule *pr = &protect_rules[i];
		if (!pr->gitdir || r->off[i])
			continue;
		char pat[PATH_MAX], esc[PATH_MAX * 2];
		if (snprintf(pat, sizeof(pat), "%s/%s", gd, pr->name + 5) >= (int)sizeof(pat))
			continue;
		try(pat, false, pr, rel, how, fresh, q->hit);
		if (pr->kind != PROTECT_MODULES)
			continue;
		/* a folder moved in beneath modules/ or worktrees/ may be a gitdir */
		const char *below = protect_beneath(pat, false, rel);
		if (how == PROTECT_MOVE_DIR_IN && below && *below)
			raise_to(q->hit, PROTECT_REFUSED, pr);
		/* each worktree's config.worktree: the gitdir's name escaped, one glob */
		char wt[sizeof(esc) + 24];
		if (strcmp(pr->name, ".git/worktrees") == 0 && escaped(pat, esc, sizeof(esc))) {
			snprintf(wt, sizeof(wt), "%s/*/config.worktree", esc);
			try(wt, true, protect_rule_named(".git/config.worktree"), rel, how, false,
			    q->hit);
		}
	}
}

/*
 * A .git beneath the grant's top (a checkout in a folder of it: a clone, a
 * submodule's, a worktree's), matched by its name alone: made new it is
 * judged after the step (a folder: its hooks and config; a file: the
 * gitdir it names); one that is there is never replaced, written, moved
 * or removed, but one the step made itself (a folder is never moved onto
 * one: what it holds would come along unjudged).
 */
static void try_nested_dotgit(const struct query *q)
{
	const char *last = strrchr(q->rel, '/');
	const struct protect_rule *dotgit = protect_rule_named(".git");
	if (!last || strcmp(last, "/.git") != 0 || !dotgit || q->r->off[dotgit - protect_rules])
		return;
	/* the step's own (git writes a submodule's .git file twice): judged after it */
	bool mine = made_by_step(q, q->rel);
	enum protect_change how = q->how;
	enum protect_verdict v = how == PROTECT_MKDIR         ? PROTECT_FREE
				 : how == PROTECT_MOVE_DIR_IN ? PROTECT_REFUSED
				 : mine                       ? PROTECT_FREE
				 : how == PROTECT_MAKE        ? PROTECT_JUDGED
							      : PROTECT_REFUSED;
	raise_to(q->hit, v, dotgit);
}

/*
 * Every gitdir a path may lie in: .git (and a nested checkout's, and a
 * nested .git itself), the ones the record holds, and each folder beneath
 * a gitdir's modules/ (a submodule's name may hold slashes: each folder
 * above rel there, not rel itself, so that an object file is never taken
 * for a gitdir).
 */
static void try_gitdirs(const struct query *q)
{
	const char *rel = q->rel;
	if (q->probe)
		try_probed_gitdirs(q);
	try_gitdir(q, ".git");
	try_nested_dotgit(q);
	/* a checkout's .git at any depth (a clone in the workdir): by name, never a walk */
	for (const char *d = strstr(rel, "/.git/"); d; d = strstr(d + 1, "/.git/")) {
		char gd[PATH_MAX];
		snprintf(gd, sizeof(gd), "%.*s", (int)(d + 5 - rel), rel);
		try_gitdir(q, gd);
	}
	for (size_t i = 0; i < q->r->gitdirs.n; i++) {
		char buf[PATH_MAX * 2];
		size_t g;
		const char *gd = protect_entry(q->r->gitdirs.v[i], &g);
		if (gd && g == q->g && strcmp(gd, ".git") != 0)
			try_gitdir(q, as_asked(q, gd, buf, sizeof(buf)));
	}
	for (const char *m = strstr(rel, "/modules/"); m; m = strstr(m + 1, "/modules/")) {
		char gd[PATH_MAX];
		for (const char *e = m + 9; *e; e++) {
			if (e[1] != '/')
				continue;
			snprintf(gd, sizeof(gd), "%.*s", (int)(e + 1 - rel), rel);
			try_gitdir(q, gd);
		}
	}
}

/* The set's names (not a gitdir's: those are matched at any depth) at the top of checkout co. */
static void try_names_in(const struct query *q, const char *co)
{
	for (size_t k = 0; k < protect_nrules; k++) {
		const struct protect_rule *pr = &protect_rules[k];
		char pat[PATH_MAX * 2];
		if (pr->gitdir || pr->home || pr->kind == PROTECT_GITDIR || q->r->off[k])
			continue;
		snprintf(pat, sizeof(pat), "%s/%s", co, pr->name);
		try(pat, false, pr, q->rel, q->how, false, q->hit);
	}
}

/*
 * The set's names at the top of each checkout one level down that was
 * there before the step (a workspace of clones: the person commits in
 * W/a, and husky runs W/a/.husky/pre-commit). Such a checkout's folder is
 * then not moved or removed, as its .git is not.
 */
static void try_nested_names(const struct query *q)
{
	const struct protect_record *r = q->r;
	for (size_t i = 0; i < r->nested.n; i++) {
		size_t g;
		char nbuf[PATH_MAX * 2];
		const char *n = protect_entry(r->nested.v[i], &g);
		n = n && g == q->g ? as_asked(q, n, nbuf, sizeof(nbuf)) : NULL;
		if (n && near(n, q->rel, q->how)) /* most calls: nothing of this checkout's */
			try_names_in(q, n);
	}
}

/* Whether the component c (len bytes) is the first of one of the set's names. */
static bool starts_a_name(const char *c, size_t len)
{
	for (size_t k = 0; k < protect_nrules; k++) {
		const struct protect_rule *pr = &protect_rules[k];
		if (pr->name[0] != c[0] || pr->gitdir || pr->home || pr->kind == PROTECT_GITDIR)
			continue;
		size_t n = strcspn(pr->name, "/");
		if (n == len && memcmp(pr->name, c, len) == 0)
			return true;
	}
	return false;
}

/* How many components rel has. */
static size_t components(const char *rel)
{
	size_t n = 1;
	for (const char *c = rel; *c; c++)
		n += *c == '/';
	return n;
}

/*
 * The set's names at the top of a checkout deeper than those recorded (a
 * GOPATH-style W/github.com/org/repo, or one past the listing's bound),
 * where the caller can look (the probe, from the name's folder, pinned):
 * for each component of rel that begins a name of the set, whether the
 * folder above it holds a .git that the step did not make.
 */
static void try_deep_names(const struct query *q)
{
	const char *rel = q->rel;
	size_t ncomp = components(rel), k = 0;
	for (const char *c = rel; *c; k++) {
		size_t len = strcspn(c, "/");
		/* most components: not a name of the set, or at the grant's top */
		if (k > 0 && starts_a_name(c, len)) {
			char prefix[PATH_MAX], dotgit[PATH_MAX + 8];
			snprintf(prefix, sizeof(prefix), "%.*s", (int)(c - 1 - rel), rel);
			snprintf(dotgit, sizeof(dotgit), "%s/.git", prefix);
			struct stat st;
			if (!made_by_step(q, dotgit) &&
			    q->probe->look(q->probe->ctx, (unsigned)(ncomp - 1 - k), ".git", &st) ==
				    0)
				try_names_in(q, prefix);
		}
		c += len;
		c += *c == '/';
	}
}

/*
 * Whether the component c (len bytes) at index k of ncomp may be a gitdir's
 * own name of the set: hooks/ or modules/ at any depth, config, commondir,
 * config.worktree as the last, info followed by attributes last, worktrees
 * followed by a name and config.worktree last.
 */
static bool gitdir_name_at(const char *c, size_t len, size_t k, size_t ncomp)
{
	static const struct {
		const char *name;
		unsigned from_end; /* 0: anywhere; n: at the n-th component from the end */
	} names[] = {{"hooks", 0},           {"modules", 0}, {"config", 1},   {"commondir", 1},
		     {"config.worktree", 1}, {"info", 2},    {"worktrees", 3}};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i].name) == len && memcmp(names[i].name, c, len) == 0 &&
		    (!names[i].from_end || ncomp - k == names[i].from_end))
			return true;
	return false;
}

/*
 * A gitdir no .git names, below the grant's top (a bare clone with its
 * worktrees, the .bare layout, a --separate-git-dir clone, a link to a
 * gitdir): where a component of rel may be one of a gitdir's names, whether
 * the folder above it holds HEAD and objects (or commondir: a worktree's),
 * as git tells a gitdir; one the step made (its folder's inode made live)
 * is its own, any other the person's.
 */
static void try_probed_gitdirs(const struct query *q)
{
	const char *rel = q->rel;
	size_t ncomp = components(rel), k = 0;
	for (const char *c = rel; *c; k++) {
		size_t len = strcspn(c, "/");
		size_t plen = k > 0 ? (size_t)(c - 1 - rel) : 0;
		/* a prefix ending in .git is matched by its name (try_gitdirs) */
		bool named = plen >= 4 && memcmp(rel + plen - 4, ".git", 4) == 0 &&
			     (plen == 4 || rel[plen - 5] == '/');
		if (k > 0 && !named && gitdir_name_at(c, len, k, ncomp)) {
			unsigned up = (unsigned)(ncomp - 1 - k);
			struct stat st;
			char prefix[PATH_MAX];
			snprintf(prefix, sizeof(prefix), "%.*s", (int)plen, rel);
			if (q->probe->look(q->probe->ctx, up, "HEAD", &st) == 0 &&
			    (q->probe->look(q->probe->ctx, up, "objects", &st) == 0 ||
			     q->probe->look(q->probe->ctx, up, "commondir", &st) == 0) &&
			    q->probe->look(q->probe->ctx, up, ".", &st) == 0) {
				/* the step's: what it holds removed, nothing that runs made */
				bool mine = protect_was_created(q->r, &st);
				if (!(mine && q->how == PROTECT_REMOVE))
					try_gitdir_as(q, prefix, !mine);
			}
		}
		c += len;
		c += *c == '/';
	}
}

/* protect_holds_person's: a .git or folder of the step's (q: the query). */
static bool step_made(const char *rel, const struct stat *st, bool dotgit, void *arg)
{
	const struct query *q = arg;
	return protect_was_created(q->r, st) || (dotgit && made_by_step(q, rel));
}

/*
 * A folder moved away or removed that holds a checkout or a gitdir of the
 * person's (a .git the step did not make, in a folder it did not make), at
 * any depth: refused, so that a clone of the step's is never put at a
 * checkout's name (mv src src.old; git clone ... src/a/repo). A folder the
 * step made holds none (every folder moved meets this) and is not looked
 * into; one too big to look through is refused too.
 */
static void try_moved_checkout(const struct query *q)
{
	const char *base = strrchr(q->rel, '/');
	base = base ? base + 1 : q->rel;
	char dotgit[NAME_MAX + 8], full[PATH_MAX + 8];
	struct stat st, dir;
	const struct protect_rule *dg = protect_rule_named(".git");
	if (q->how != PROTECT_REMOVE || !*base || !dg || q->r->off[dg - protect_rules] ||
	    snprintf(dotgit, sizeof(dotgit), "%s/.git", base) >= (int)sizeof(dotgit))
		return;
	snprintf(full, sizeof(full), "%s/.git", q->rel);
	bool mine = q->probe->look(q->probe->ctx, 0, base, &dir) == 0 &&
		    protect_was_created(q->r, &dir);
	if (q->probe->look(q->probe->ctx, 0, dotgit, &st) == 0 && !made_by_step(q, full) && !mine) {
		raise_to(q->hit, PROTECT_REFUSED, dg);
		return;
	}
	/* the walk looks at the file system: asked once, not for each spelling */
	if (q->fold || mine || !q->probe->open_dir)
		return;
	/*
	 * A link is the person's path to what it leads to: a checkout there, or
	 * further down (link -> real, the checkout at real/a/repo), is listed
	 * through it.
	 */
	bool link = S_ISLNK(dir.st_mode);
	if (link) {
		int at = q->probe->open_dir(q->probe->ctx, ".", false);
		bool leads = at < 0 || protect_link_holds(at, base);
		if (at >= 0)
			close(at);
		if (leads) {
			raise_to(q->hit, PROTECT_REFUSED, dg);
			return;
		}
	}
	if (!link && !S_ISDIR(dir.st_mode))
		return;
	int fd = q->probe->open_dir(q->probe->ctx, base, link);
	int held =
		fd < 0 ? fd
		       : protect_holds_person(fd, q->rel, PROTECT_HOLDS_MAX, step_made, (void *)q);
	/* a link to nothing or to a file leads nowhere */
	if (held != 0 && held != -ENOENT && held != -ENOTDIR && !(link && held == -ELOOP))
		raise_to(q->hit, PROTECT_REFUSED, dg);
}

/* Whether component k from the end of rel (0: the last) is name, as asked (case folded). */
static bool component_is(const char *rel, unsigned k, const char *name)
{
	const char *end = rel + strlen(rel);
	for (;; k--) {
		const char *start = end;
		while (start > rel && start[-1] != '/')
			start--;
		if (k == 0)
			return (size_t)(end - start) == strlen(name) &&
			       strncasecmp(start, name, strlen(name)) == 0;
		if (start == rel)
			return false;
		end = start - 1;
	}
}

/*
 * A folder made a gitdir by the name made or moved in: HEAD, objects or
 * refs, the last of the three git asks of a gitdir. Refused where the
 * folder already holds what git would run there (config and hooks first,
 * HEAD last, gave a folder of the person's checkout a fsmonitor that git
 * status there ran; git's own init and clone make nothing that runs). A
 * commondir, which makes a gitdir of another folder's, is git's only in a
 * worktrees/NAME folder.
 */
static void try_becomes_gitdir(const struct query *q)
{
	static const char *const signs[] = {"HEAD", "objects", "refs"};
	if (q->fold || q->how == PROTECT_REMOVE)
		return;
	if (component_is(q->rel, 0, "commondir")) {
		const struct protect_rule *cd = protect_rule_named(".git/commondir");
		if (cd && !q->r->off[cd - protect_rules] && !component_is(q->rel, 2, "worktrees"))
			raise_to(q->hit, PROTECT_REFUSED, cd);
		return;
	}
	size_t k = 0;
	while (k < 3 && !component_is(q->rel, 0, signs[k]))
		k++;
	if (k == 3)
		return;
	struct stat st;
	for (size_t i = 0; i < 3; i++)
		if (i != k && q->probe->look(q->probe->ctx, 0, signs[i], &st) != 0)
			return; /* not a gitdir yet */
	int fd = q->probe->open_dir ? q->probe->open_dir(q->probe->ctx, ".", false) : -EBADF;
	const char *rule = fd >= 0 ? protect_folder_runs(fd) : ".git/config"; /* fail closed */
	if (fd >= 0)
		close(fd);
	const struct protect_rule *pr = rule ? protect_rule_named(rule) : NULL;
	if (pr && !q->r->off[pr - protect_rules])
		raise_to(q->hit, PROTECT_REFUSED, pr);
}

/* The person's relative hooks paths at the top of each worktree the step added. */
static void try_added_worktrees(const struct query *q)
{
	const struct protect_record *r = q->r;
	const struct protect_rule *hooks = protect_rule_named(".git/hooks");
	for (size_t i = 0; hooks && !r->off[hooks - protect_rules] && i < r->worktrees.n; i++) {
		size_t g, vg;
		char tbuf[PATH_MAX * 2];
		const char *top = protect_entry(r->worktrees.v[i], &g);
		top = top && g == q->g ? as_asked(q, top, tbuf, sizeof(tbuf)) : NULL;
		if (!top || !near(top, q->rel, q->how))
			continue;
		for (size_t k = 0; k < r->hooks_rel.n; k++) {
			const char *v = protect_entry(r->hooks_rel.v[k], &vg);
			char pat[PATH_MAX * 3], vbuf[PATH_MAX * 2];
			if (v && vg == q->g &&
			    snprintf(pat, sizeof(pat), "%s/%s", top,
				     as_asked(q, v, vbuf, sizeof(vbuf))) < (int)sizeof(pat))
				try(pat, false, hooks, q->rel, q->how, false, q->hit);
		}
	}
}

/* The set's other names, HOME's where g holds it, and the policy's, against rel. */
static void try_names(const struct query *q)
{
	const struct protect_record *r = q->r;
	const char *root = r->roots.v[q->g], *rel = q->rel;
	const char *home = r->home && path_beneath(r->home, root) ? r->home : NULL;
	size_t skip = strlen(root) + (strcmp(root, "/") != 0);
	/* HOME's names below the grant: only where rel is in or above HOME */
	char hbuf[PATH_MAX * 2], pbuf[PATH_MAX * 2];
	const char *hrel = home && strcmp(home, root) != 0
				   ? as_asked(q, home + skip, hbuf, sizeof(hbuf))
				   : NULL;
	bool in_home = home && (!hrel || near(hrel, rel, q->how));
	for (size_t i = 0; i < protect_nrules; i++) {
		const struct protect_rule *pr = &protect_rules[i];
		if (pr->gitdir || r->off[i] || (pr->home && !in_home))
			continue;
		if (pr->kind == PROTECT_GITDIR && q->how == PROTECT_REMOVE &&
		    made_by_step(q, pr->name))
			continue; /* a .git the step made, removed */
		char pat[PATH_MAX];
		if (pr->home && hrel &&
		    snprintf(pat, sizeof(pat), "%s/%s", hrel, pr->name) >= (int)sizeof(pat))
			continue;
		try(pr->home && hrel ? pat : pr->name, false, pr, rel, q->how, false, q->hit);
	}
	try_nested_names(q);
	try_added_worktrees(q);
	if (q->probe) {
		try_deep_names(q);
		try_moved_checkout(q);
		try_becomes_gitdir(q);
	}
	for (size_t i = 0; i < r->extra.n; i++) {
		const char *p = r->extra.v[i];
		if (r->xoff[i])
			continue;
		/* the policy's may be globs; the folders and files git's configs name are names */
		bool glob = r->xrules[i].kind == PROTECT_FILE && has_glob(p);
		if (p[0] != '/')
			try(as_asked(q, p, pbuf, sizeof(pbuf)), glob, &r->xrules[i], rel, q->how,
			    false, q->hit);
		else if (path_beneath(p, root) && strcmp(p, root) != 0)
			try(as_asked(q, p + skip, pbuf, sizeof(pbuf)), glob, &r->xrules[i], rel,
			    q->how, false, q->hit);
	}
}

/*
 * Each path is asked as it is, and, where folding changes it, folded too
 * (the stricter answer holds): on a case-insensitive file system ".ENVRC"
 * or ".GIT/HOOKS/x" reaches the file git and direnv open by the usual
 * name. On one that is not, such names are refused too: no tool needs them.
 */
struct protect_hit protect_match(const struct protect_record *r, const char *abs,
				 enum protect_change how)
{
	return protect_match_at(r, abs, how, NULL);
}

struct protect_hit protect_match_at(const struct protect_record *r, const char *abs,
				    enum protect_change how, const struct protect_probe *probe)
{
	struct protect_hit hit = {PROTECT_FREE, NULL};
	for (size_t g = 0; r && g < r->roots.n && hit.verdict != PROTECT_REFUSED; g++) {
		const char *root = r->roots.v[g];
		if (!path_beneath(abs, root))
			continue;
		const char *rel = abs + strlen(root);
		rel += *rel == '/';
		struct query q = {r, g, rel, how, false, &hit, probe};
		try_names(&q);
		try_gitdirs(&q);
		char folded[PATH_MAX * 2];
		if (!fold_name(rel, folded, sizeof(folded))) {
			/* fail closed: a name that cannot be asked */
			hit.verdict = PROTECT_REFUSED;
		} else if (strcmp(folded, rel) != 0) {
			q.rel = folded;
			q.fold = true;
			try_names(&q);
			try_gitdirs(&q);
		}
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
		if (!r->xoff[i])
			return true;
	return false;
}
