/*
 * protect: the protected paths of the write grants. A step that may write
 * its workdir may write what runs later outside any sandbox, with the
 * rights of the person who runs it: a git hook, a git config key that runs
 * a command (core.fsmonitor), direnv's .envrc, an editor's task file, an
 * agent's MCP configuration, a shell rc file in a granted HOME. This module
 * holds that set (one table, protect_rules), the policy's additions
 * (protected_paths) and removals (unprotect), and the net after the step:
 *
 *   protect_record   before the step: the protected names in each write
 *                    grant (never a walk of the tree), their state and the
 *                    small files' content;
 *   protect_check    after the whole process tree is gone: what was created
 *                    or changed is judged, a finding is moved aside into a
 *                    quarantine folder (never deleted) and the recorded
 *                    original is put back.
 *
 * Portable (POSIX *at() calls only): every file is reached from the write
 * grant's folder one name at a time with O_NOFOLLOW, so a symlink the step
 * planted is moved aside, never followed. docs/protected-paths.md.
 */
#ifndef STEPBOX_PROTECT_H
#define STEPBOX_PROTECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <jansson.h>

#include "err.h"
#include "grants.h"
#include "policy.h"
#include "strv.h"

/* What a run with a finding exits with (unless --protect-report-only). */
#define PROTECT_EXIT 123

/* Bounds: a policy is input, and so is what a step leaves. */
#define PROTECT_MAX_NAMES 1024           /* protected_paths, unprotect */
#define PROTECT_MAX_CONTENT (256u << 10) /* a file kept to be put back */
#define PROTECT_MAX_ITEMS 4096           /* protected names looked at in one run */
#define PROTECT_MAX_DEPTH 16             /* folders looked into beneath a protected one */
#define PROTECT_MAX_LISTED 2048          /* a grant's own entries looked at for checkouts */

/* How a protected name is judged after the step. */
enum protect_kind {
	PROTECT_HOOKS,   /* a folder of git hooks: a new or changed hook but *.sample */
	PROTECT_CONFIG,  /* a git config: a key that runs a command, added or changed */
	PROTECT_FILE,    /* anything created or changed */
	PROTECT_FOLDER,  /* its entries (one level), each as PROTECT_FILE */
	PROTECT_GITDIR,  /* .git: a folder (its own set), or a file naming a gitdir */
	PROTECT_MODULES, /* modules/ or worktrees/: each entry a gitdir of its own */
};

/* One row of the default set: a name relative to a write grant (or a gitdir). */
struct protect_rule {
	const char *name; /* what unprotect and the messages call it: ".git/hooks" */
	enum protect_kind kind;
	const char *runs; /* what it would run, and when (docs, messages) */
	bool gitdir;      /* relative to every gitdir, not only the grant's .git */
	bool home;        /* only where the write grant is or holds HOME */
};

extern const struct protect_rule protect_rules[];
extern const size_t protect_nrules;

/*
 * Why name cannot be a protected_paths (absolute_ok) or unprotect entry,
 * or NULL: empty, a control character, a ".." component, too long.
 */
const char *protect_name_problem(const char *name, bool absolute_ok);

/* The state of the protected names before the step; opaque. */
struct protect_record;

/*
 * Record the protected names beneath each write grant (write: canonical
 * folders, n of them), for cfg's protected_paths and unprotect; home: the
 * caller's canonical HOME or NULL. Never walks a tree: only the protected
 * names are looked at. Returns a record (protect_free) or NULL with err.
 * Unprotect entries that remove more than one default are said with -v
 * (cfg->verbosity > 0) and kept for the report (protect_json).
 */
struct protect_record *protect_record(const struct stepbox_config *cfg, const char *const *write,
				      size_t n, const char *home, struct stepbox_err *err);
/* The same for the write grants of g (not the device nodes, not the private places)
 * and the caller's HOME. */
struct protect_record *protect_record_grants(const struct stepbox_config *cfg,
					     const struct grants *g, struct stepbox_err *err);
void protect_free(struct protect_record *r);
/* Whether r protects anything (every default unprotected and no protected_paths: no). */
bool protect_any(const struct protect_record *r);

/*
 * The protected places that exist now (folders and files), each with the
 * folders between it and its write grant: what the namespaces bind
 * read-only (out: the places; pins: the folders between, bound onto
 * themselves so the step cannot rename them away). Appended; 0 or -errno.
 */
int protect_places(const struct protect_record *r, struct strv *out, struct strv *pins);

/*
 * After the step, its whole process tree gone: judge what changed, move
 * each finding aside into quarantine/RUNID/ (created 0700; RUNID from the
 * time and pid), put the recorded original back, and say each on stderr
 * (what, where it went, what it would have run, the unprotect that would
 * allow it). quarantine: the folder for this run's, NULL for the default
 * ($XDG_STATE_HOME/stepbox/quarantine, else ~/.local/state/...). Where a
 * move cannot reach it (another file system), the finding goes to
 * .stepbox-quarantine/RUNID/ at the root of its own write grant. Returns
 * the number of findings.
 */
size_t protect_check(struct protect_record *r, const char *quarantine, bool quiet);

/*
 * The live layer (Linux's supervisor): what one change of the path abs
 * (canonical, as the step sees it; it need not exist) meets, by name,
 * against the record made before the step. Never touches the file system.
 */
enum protect_change {
	PROTECT_MAKE,        /* create, open to write, truncate, link or symlink to, chmod, mknod */
	PROTECT_MKDIR,       /* a new folder */
	PROTECT_REMOVE,      /* unlink, rmdir, or renamed away */
	PROTECT_MOVE_IN,     /* a file (not a folder) renamed onto it */
	PROTECT_MOVE_DIR_IN, /* a folder renamed onto it: what it holds comes along */
};
enum protect_verdict {
	PROTECT_FREE,    /* not protected */
	PROTECT_REFUSED, /* EACCES */
	PROTECT_JUDGED,  /* a git config renamed onto (allowed when protect_git_runs finds
			    nothing), or made in a gitdir the step made (protect_note_made) */
};
struct protect_hit {
	enum protect_verdict verdict;
	const struct protect_rule *rule; /* the protected name (what unprotect says), or NULL */
};
struct protect_hit protect_match(const struct protect_record *r, const char *abs,
				 enum protect_change how);
/*
 * What protect_match_at may ask of the file system, where the caller holds
 * the folder of abs's last name: whether the folder up levels above it
 * holds name (its stat in *st; "." the folder itself), 0 or -errno. Asked
 * where the record cannot say: a .git there (a checkout whose top holds
 * the set's names as a grant's does), HEAD and objects there (a gitdir no
 * .git names: a bare clone, a separate gitdir). Fail closed: a folder the
 * caller cannot reach answers 0, a zeroed *st.
 */
struct protect_probe {
	int (*look)(void *ctx, unsigned up, const char *name, struct stat *st);
	void *ctx;
	/* the folder name in the caller's, opened to be listed (a link followed only
	 * where follow says): fd or -errno */
	int (*open_dir)(void *ctx, const char *name, bool follow);
};
/*
 * The probe of the folder *dirfd (an O_PATH fd the caller pinned and keeps
 * open), reached upward by ".." and never by a path; NULL: none, which
 * answers as failing closed. (protect_holds.c)
 */
struct protect_probe protect_probe_from(const int *dirfd);
/* protect_match, and the names of any checkout and gitdir the probe finds. */
struct protect_hit protect_match_at(const struct protect_record *r, const char *abs,
				    enum protect_change how, const struct protect_probe *probe);
/*
 * A folder or a symlink the live layer made for the step (dev, ino): a
 * gitdir the probe finds there is the step's own (a test's git init
 * --bare, removed at its end), and such a link is no path of the person's.
 * 0 or -ENOMEM.
 */
int protect_note_created(struct protect_record *r, dev_t dev, ino_t ino);

/*
 * A git config the live layer let be made at abs (JUDGED): its gitdir is
 * judged after the step with the gitdirs recorded before it (hooks and the
 * config's keys). 0 or -errno.
 */
int protect_note_made(struct protect_record *r, const char *abs);
/*
 * The name (its path abs) made or moved into the folder dirfd: where it is
 * the last of HEAD, objects and refs that made the folder a gitdir
 * (nothing ran there then: protect_match), the folder is judged after the
 * step, its hooks and its config's keys, for what the live layer cannot
 * see (an fd kept on its config): as a gitdir of the person's (a folder
 * the step did not make) or of the step's (one it made, which it may
 * fill with what does not run and remove). 0 or -errno.
 */
int protect_note_sign(struct protect_record *r, int dirfd, const char *name, const char *abs);
/*
 * A .git folder the live layer made for the step at abs (git init, a
 * clone): what it holds may be removed (a clone made and removed in one
 * step), though nothing that runs may be made there. 0 or -errno.
 */
int protect_note_gitdir(struct protect_record *r, const char *abs);
/*
 * A .git file the live layer made for the step at abs (git worktree add):
 * its folder's top takes the person's relative hooks paths, live. 0 or
 * -errno.
 */
int protect_note_worktree(struct protect_record *r, const char *abs);
/*
 * Whether abs, a folder made, is a gitdir's submodule or worktree folder
 * (its parent a gitdir's modules/ or worktrees/): one the step made is its
 * own as a .git it made is (git worktree add, then remove).
 */
bool protect_is_admin_dir(const struct protect_record *r, const char *abs);
/*
 * A folder or file moved by the live layer from from to to (swap: the two
 * exchanged): what was noted at or beneath it (the gitdirs the step made,
 * those to be judged after it) is noted where it went, so that a clone
 * made and moved is still judged, and its old name is the step's no more.
 * 0 or -errno.
 */
int protect_note_moved(struct protect_record *r, const char *from, const char *to, bool swap);
/* abs removed by the live layer: a gitdir the step made there is its own no more. */
int protect_note_removed(struct protect_record *r, const char *abs);
/*
 * Whether a file (dev, ino) is one of the protected files recorded before
 * the step (a hard link elsewhere in a grant reaches it too) and its name
 * still holds it (a number freed by a replaced config and given to a new
 * file is not it; looked at through real folders only); *rule: its name.
 */
bool protect_inode(const struct protect_record *r, dev_t dev, ino_t ino, const char **rule);
/*
 * Whether the git config text after holds a key that runs a command or
 * loads configuration from elsewhere that before (NULL: none) did not hold
 * with the same value. Returns a description ("core.fsmonitor = 'x'") to
 * free, or NULL when there is none. A text that cannot be read as git
 * would read it is a finding too (fail closed). (protect_git.c)
 */
char *protect_git_runs(const char *before, const char *after, size_t after_len);

/* The report's "protected": the findings, each with where it went (r may be NULL). */
json_t *protect_json(const struct protect_record *r);
/* The report's "unprotected": the unprotect names, the broad ones, the quarantine. */
json_t *protect_json_unprotected(const struct protect_record *r);

/* SBPL and docs: the default set's names relative to a grant, with globs (sbpl.c). */
const char *protect_rule_glob(const struct protect_rule *rule);
/*
 * What a Seatbelt profile denies by path beyond the set's names at each
 * grant's top (sbpl_protect.c), as the record protects them and cfg's
 * unprotect leaves them: the folders core.hooksPath names (hooks); the git
 * configs the configs include, and the .git of each checkout one level
 * down with its hooks folder and configs where it is a folder (files); the
 * folders of those checkouts, whose tops hold the set's names as a
 * grant's does (checkouts).
 */
struct protect_profile {
	struct strv hooks, files, checkouts;
};

/*
 * Into out (STRV_INIT lists), for the write grants (write: canonical, n of
 * them; home: the caller's canonical HOME or NULL). 0 or -errno.
 */
int protect_profile_paths(const struct stepbox_config *cfg, const char *const *write, size_t n,
			  const char *home, struct protect_profile *out);
/* Whether unprotect (cfg) removes the default rule. */
bool protect_unprotected(const struct stepbox_config *cfg, const struct protect_rule *rule);

#endif
