/*
 * protect_int.h: what protect.c (the set, the record), protect_scan.c (the
 * record's look at each grant), protect_git.c (git's files read),
 * protect_hooks.c (checkouts and their hooks paths), protect_match.c (the
 * live layer's question), protect_note.c (what the live layer tells the
 * record) and protect_net.c (the judgement after the step, the quarantine)
 * share. Nothing outside the protect module includes it.
 */
#ifndef STEPBOX_PROTECT_INT_H
#define STEPBOX_PROTECT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "protect.h"
#include "strv.h"

/* How one name found is judged. */
enum item_kind {
	ITEM_HOOK,   /* an entry of a hooks folder */
	ITEM_CONFIG, /* a git config file */
	ITEM_FILE,   /* anything created or changed */
	ITEM_FOLDER, /* a protected folder itself: judged when it is no longer one */
	ITEM_DOTGIT, /* a grant's .git: a folder, or a file naming a gitdir */
};

/* One protected name, as it was before or is after the step. */
struct item {
	char *path;       /* absolute */
	char *rel;        /* from the root of its write grant */
	size_t grant;     /* index into the record's roots */
	const char *rule; /* its rule's name (what unprotect says), not owned */
	const char *runs; /* what it would run, not owned */
	enum item_kind kind;
	bool entry; /* an entry of a protected folder, not a name of the set */
	bool made;  /* in a .git the step made, or the gitdir one names: judged for what runs */
	struct stat st;
	char *content; /* a regular file up to PROTECT_MAX_CONTENT, else NULL */
	size_t len;
};

struct item_list {
	struct item *v;
	size_t n, cap;
};

/* One finding: what was judged, and what was done with it. */
struct finding {
	char *path;
	const char *rule, *runs;
	char *why;      /* "a new hook", "core.fsmonitor = 'x' added" */
	char *moved_to; /* where it went, or NULL when it could not be moved */
	char *note;     /* what else happened (the original put back, or why not) */
	bool restored;
};

struct protect_record {
	struct strv roots;           /* the write grants, canonical */
	char *home;                  /* the caller's HOME, canonical, or NULL */
	struct strv extra;           /* protected_paths */
	struct protect_rule *xrules; /* a rule for each, as the defaults have */
	bool *xoff;                  /* extra[i] unprotected */
	struct strv unprot;          /* unprotect */
	bool *off;                   /* protect_rules[i] unprotected */
	struct strv broad;           /* what a broad unprotect opens, said */
	int verbosity;
	struct item_list before, after;
	struct strv gitdirs; /* every gitdir looked at before: "GRANT\tREL" */
	struct strv made;    /* the .git folders the step made, as gitdirs are */
	/* the checkouts one level down in a grant, for their hooks path: "GRANT\tNAME" */
	struct strv nested;
	/* the bare repositories there (NAME.git holding HEAD): gitdirs, "GRANT\tNAME" */
	struct strv bare;
	/*
	 * The relative core.hooksPath values of each grant's own checkout
	 * ("GRANT\tVALUE"), and the tops of the worktrees the step adds
	 * ("GRANT\tREL"): git takes such a value from the top of the worktree
	 * it runs in, so a worktree the step adds has the person's hooks
	 * folder too (protect_note_worktree).
	 */
	struct strv hooks_rel, worktrees;
	/* when the record was made: what a gitdir the step pointed at held, unchanged since */
	struct timespec start;
	/* the folders the step made (protect_note_created): dev and inode, hashed */
	struct {
		uint64_t (*v)[2];
		size_t n, cap;
	} created;
	struct finding *f;
	size_t nf, capf;
	char *quarantine; /* this run's folder, once made */
};

/*
 * Every value of section.name (sub: of section.SUB.name, any SUB; both lower
 * case) in the git config text, into out, in order: a text git's grammar
 * stops reading gives those before. 0 or -ENOMEM. (protect_git.c)
 */
int protect_git_values(const char *text, size_t len, const char *section, bool sub,
		       const char *name, struct strv *out);

/*
 * protect_hooks.c: the checkouts each grant holds one level down, into
 * r->nested (0 or -errno); the folders core.hooksPath names, appended to
 * r->extra (*hooks: how many; none while .git/hooks is unprotected), then
 * the git configs the configs read include (*incs; none while .git/config
 * is unprotected).
 */
int protect_note_nested(struct protect_record *r);
int protect_add_hooks_paths(struct protect_record *r, size_t *hooks, size_t *incs);

/*
 * rel at or beneath pat (glob: pat's components fnmatch globs): what is
 * left of rel below pat ("" for pat itself), or NULL. (protect_match.c)
 */
const char *protect_beneath(const char *pat, bool glob, const char *rel);
/*
 * Whether the folder fd (owned, closed here) at rel holds, at any depth, a
 * .git that mine does not call the step's (its path from the grant, its
 * lstat) or a folder holding HEAD and objects (or commondir); a folder mine
 * calls the step's (dotgit false) is not entered. 1 it does, 0 it does not,
 * -E2BIG past budget entries or PROTECT_HOLDS_DEPTH folders down, -errno.
 */
/*
 * What the folder dirfd, about to become a gitdir, holds that git would run
 * (a config's key, a hook, attributes that pick a filter): the rule's name
 * (".git/config"...), or NULL. Unread counts as running.
 */
const char *protect_folder_runs(int dirfd);
/*
 * Whether the symlink name in dirfd leads to a checkout or a gitdir (a
 * .git, or HEAD beside objects, there; followed as git follows it): a
 * person's path to one, which protect_holds_person does not walk through.
 */
bool protect_link_holds(int dirfd, const char *name);
#define PROTECT_HOLDS_DEPTH 64
#define PROTECT_HOLDS_MAX 100000 /* entries */
typedef bool protect_mine_fn(const char *rel, const struct stat *st, bool dotgit, void *arg);
int protect_holds_person(int fd, const char *rel, size_t budget, protect_mine_fn *mine, void *arg);

/* The default rule named name (protect.c), or NULL. */
const struct protect_rule *protect_rule_named(const char *name);
/* Whether the folder (or link) st is one the step made, noted live (protect_note.c). */
bool protect_was_created(const struct protect_record *r, const struct stat *st);
/*
 * An entry of the record's "GRANT\tREL" lists (gitdirs, made, nested): its
 * REL, its grant in *g; NULL for one that is not such an entry. (protect.c)
 */
const char *protect_entry(const char *e, size_t *g);

/* protect_scan.c: the scan of every grant into list (after: the before's gitdirs too). */
/*
 * unprotect u removes the entry name (a default's or a protected_paths
 * one): u names it, a folder above it, or a glob matching it. The live
 * layer and the net after the step ask the same.
 */
bool protect_unprotects(const char *u, const char *name);
int protect_scan(struct protect_record *r, struct item_list *list, bool after);
/*
 * The folder holding rel beneath root fd rootfd, reached one name at a time
 * without following a symlink; *base points into rel. An fd or -errno.
 */
int protect_walk(int rootfd, const char *rel, const char **base);
/* The write grant's folder, opened without following a symlink: an fd or -errno. */
int protect_open_root(const struct protect_record *r, size_t grant);
void protect_items_release(struct item_list *l);

/* protect_git.c */
/*
 * A path as git reads one from a file of len bytes (a .git file, after its
 * "gitdir: "; commondir): from skip to the end, the last line ends cut
 * (CR, LF), then up to a NUL; newlines and spaces inside kept. Into out;
 * false when empty or too long.
 */
bool protect_git_path(const char *content, size_t len, size_t skip, char *out, size_t cap);
/*
 * The gitdir a .git file of len bytes names ("gitdir: X", as git reads it),
 * canonical (git follows links there), relative to dir (the .git file's
 * folder): a string to free, or NULL.
 */
char *protect_git_link(const char *content, size_t len, const char *dir);

/* dir/target (or target, absolute) resolved as git does, links and all; to free, or NULL. */
char *protect_resolve(const char *dir, const char *target, char *buf, size_t cap);

#endif
