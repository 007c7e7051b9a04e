/* protect: the default set's judgement, git config keys, the net after a step, the quarantine. */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "protect.h"
#include "protect_int.h"
#include "tap.h"

static char top[256];

static void put(const char *rel, const char *text, mode_t mode)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", top, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			perror(p);
		close(fd);
	}
}

static void dir(const char *rel)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", top, rel);
	mkdir(p, 0755);
}

/* The record of the write grant root, made with the default policy (cfg released by the caller). */
static struct protect_record *record_at(const char *root, struct stepbox_config *cfg)
{
	const char *roots[] = {root};
	policy_init(cfg);
	struct stepbox_err err = {0};
	struct protect_record *r = protect_record(cfg, roots, 1, NULL, &err);
	CHECK(r != NULL);
	return r;
}

static bool exists(const char *rel)
{
	char p[512];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", top, rel);
	return lstat(p, &st) == 0;
}

static char *slurp(const char *rel)
{
	static char buf[4096];
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", top, rel);
	FILE *f = fopen(p, "r");
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

/*
 * A path in a .git file or commondir read as git reads it (setup.c): after
 * "gitdir: " to the end, the trailing CR and LF cut, then up to a NUL; a
 * newline or a second space inside is part of the name.
 */
static void git_paths(void)
{
	static const struct {
		const char *text;
		size_t len, skip;
		const char *want; /* NULL: none */
	} cases[] = {
		{"gitdir: .g\nx\n", 13, 8, ".g\nx"}, {"gitdir:  .g", 11, 8, " .g"},
		{"gitdir: a\r\n\r\n", 13, 8, "a"},   {"gitdir: a\0b\n", 12, 8, "a"},
		{"gitdir: \n", 9, 8, NULL},          {"../common\n", 10, 0, "../common"},
		{"../c\nd\n", 7, 0, "../c\nd"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[64];
		bool got = protect_git_path(cases[i].text, cases[i].len, cases[i].skip, out,
					    sizeof(out));
		CHECK(got == (cases[i].want != NULL) && (!got || strcmp(out, cases[i].want) == 0));
	}
	/* git takes "gitdir: " with one space, nothing else */
	dir("gl");
	dir("gl/.g\nx");
	char gl[300];
	snprintf(gl, sizeof(gl), "%s/gl", top);
	char *gd = protect_git_link("gitdir: .g\nx\n", 13, gl);
	CHECK(gd && strstr(gd, "/gl/.g\nx") != NULL);
	free(gd);
	CHECK(protect_git_link("gitdir:\t.g\nx", 12, gl) == NULL);
}

static void config_keys(void)
{
	char *w;
	CHECK(protect_git_runs(NULL, "[core]\n\tbare = false\n", 21) == NULL);
	w = protect_git_runs(NULL, "[core]\n\tfsmonitor = ./x\n", 24);
	CHECK_HAS(w, "core.fsmonitor = './x'");
	free(w);
	const char *was = "[core]\n\tbare = false\n";
	const char *now = "[core]\n\tbare = false\n[remote \"o\"]\n\turl = /srv/r\n\tfetch = "
			  "+refs/heads/*:refs/remotes/o/*\n[branch \"b\"]\n\tremote = o\n";
	CHECK(protect_git_runs(was, now, strlen(now)) == NULL); /* git remote add */
	now = "[Core]HooksPath=/tmp/h\n"; /* a key on the section's line, mixed case */
	w = protect_git_runs(was, now, strlen(now));
	CHECK_HAS(w, "core.hookspath");
	free(w);
	/* a new config with one run key: the finding names it */
	static const struct {
		const char *text, *key;
	} runs[] = {
		{"[alias]\n\tx = \"!sh -c id\"\n", "alias.x"},
		/* git's own options before an alias's command: a key, another gitdir's hooks */
		{"[alias]\n\tst = -c core.fsmonitor=evil status\n", "alias.st"},
		{"[alias]\n\tl = \" --git-dir=/w/evil log\"\n", "alias.l"},
		/* a command's own option that runs a program; any alias, then */
		{"[alias]\n\tst = ls-remote --upload-pack=evil .\n", "alias.st"},
		{"[alias]\n\tst = status\n", "alias.st"},
		{"[lfs \"customtransfer.x\"]\n\tpath = /bin/sh\n", "lfs.customtransfer.x.path"},
		{"[tar \"tgz\"]\n\tcommand = sh -c evil\n", "tar.tgz.command"},
		{"[init]\n\ttemplateDir = /w/t\n", "init.templatedir"},
		{"[filter \"lfs\"]\n\tsmudge = evil\n", "filter.lfs.smudge"},
		{"[include]\n\tpath = ../x.cfg\n", "include.path"},
		{"[credential \"https://x\"]\n\thelper = !evil\n", "credential.https://x.helper"},
		/* what git's grammar refuses is judged as running code */
		{"[core\n\tfsmonitor = x\n", "grammar"},
	};
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		w = protect_git_runs(NULL, runs[i].text, strlen(runs[i].text));
		bool has = w && strstr(w, runs[i].key);
		if (!has)
			printf("# '%s' lacks '%s'\n", w ? w : "(null)", runs[i].key);
		CHECK(has);
		free(w);
	}
	/* the person's own alias, left as it was */
	now = "[alias]\n\tst = status\n[core]\n\tbare = true\n";
	CHECK(protect_git_runs("[alias]\n\tst = status\n", now, strlen(now)) == NULL);
	/* the same key and value before: an untouched run key is the person's own */
	now = "[core]\n\tpager = less\n\tbare = true\n";
	CHECK(protect_git_runs("[core]\n\tpager = less\n", now, strlen(now)) == NULL);
	/* a continued line and a comment do not hide a key */
	now = "[core] ; c\n\tfsm\\\nonitor = x\n";
	w = protect_git_runs(NULL, now, strlen(now));
	CHECK(w != NULL);
	free(w);
}

static void names(void)
{
	CHECK(protect_name_problem(".git/hooks", false) == NULL);
	CHECK(protect_name_problem("/srv/x/.envrc", true) == NULL);
	CHECK(protect_name_problem("/srv/x", false) != NULL);
	CHECK(protect_name_problem("a/../b", true) != NULL);
	CHECK(protect_name_problem("", true) != NULL);
	struct stepbox_config cfg;
	policy_init(&cfg);
	strv_push(&cfg.unprotect, ".git");
	CHECK(protect_unprotected(&cfg, &protect_rules[1]));  /* .git/hooks */
	CHECK(!protect_unprotected(&cfg, &protect_rules[9])); /* .envrc */
	policy_release(&cfg);
}

/* A checkout, the step's writes, and the net after it. */
static void net(void)
{
	dir(".git");
	dir(".git/hooks");
	dir(".git/info");
	put(".git/hooks/pre-commit.sample", "#!/bin/sh\n", 0755);
	put(".git/config", "[core]\n\tbare = false\n", 0644);
	dir("outside");
	put("outside/keep", "x\n", 0644);
	dir("sub");
	dir("sub/realgit");
	dir("sub/realgit/hooks");
	put("sub/.git", "gitdir: realgit\n", 0644);
	struct stepbox_config cfg;
	policy_init(&cfg);
	strv_push(&cfg.protect_paths, "secrets/*.sh");
	dir("secrets");
	char w[300], sub[300], q[300];
	snprintf(w, sizeof(w), "%s", top);
	snprintf(sub, sizeof(sub), "%s/sub", top);
	snprintf(q, sizeof(q), "%s/q", top);
	mkdir(q, 0700);
	const char *roots[] = {w, sub};
	struct stepbox_err err = {0};
	struct protect_record *r = protect_record(&cfg, roots, 2, NULL, &err);
	CHECK(r != NULL);
	struct strv ro = STRV_INIT, pins = STRV_INIT;
	CHECK(protect_places(r, &ro, &pins) == 0);
	char want[400];
	snprintf(want, sizeof(want), "%s/.git/hooks", top);
	CHECK(strv_find(&ro, want) >= 0);
	snprintf(want, sizeof(want), "%s/.git", top);
	CHECK(strv_find(&pins, want) >= 0);
	/* the step: a hook, a run key, a new sample, an .envrc, a symlinked .vscode */
	put(".git/hooks/pre-commit", "#!/bin/sh\ntouch marker\n", 0755);
	put(".git/hooks/post-merge.sample", "#!/bin/sh\n", 0755);
	put(".git/config", "[core]\n\tbare = false\n\tfsmonitor = ./fsm\n", 0644);
	put(".envrc", "touch marker\n", 0644);
	put("secrets/run.sh", "x", 0644);
	put("secrets/notes.txt", "x", 0644);
	char link[400];
	snprintf(link, sizeof(link), "%s/.vscode", top);
	CHECK(symlink("outside", link) == 0);
	put("sub/realgit/hooks/post-checkout", "#!/bin/sh\n", 0755);
	size_t n = protect_check(r, q, true);
	CHECK(n == 6);
	CHECK(!exists(".git/hooks/pre-commit"));
	CHECK(exists(".git/hooks/post-merge.sample"));
	CHECK(!exists(".envrc"));
	CHECK(!exists(".vscode"));
	CHECK(exists("outside/keep")); /* the link moved, never followed */
	CHECK(!exists("secrets/run.sh"));
	CHECK(exists("secrets/notes.txt"));
	CHECK(!exists("sub/realgit/hooks/post-checkout"));
	CHECK_STR(slurp(".git/config"), "[core]\n\tbare = false\n");
	json_t *j = protect_json(r);
	CHECK(json_array_size(j) == 6);
	const char *to = json_string_value(json_object_get(json_array_get(j, 0), "moved_to"));
	CHECK(to && strncmp(to, q, strlen(q)) == 0);
	struct stat st;
	CHECK(to && stat(to, &st) == 0);
	json_decref(j);
	strv_release(&ro);
	strv_release(&pins);
	protect_free(r);

	/*
	 * Deep in a protected folder (a script .claude/settings.json runs, a
	 * hook manager's folder): a file changed or made is a finding, a
	 * folder made is one whole; the folders that were there stay.
	 */
	dir(".claude");
	dir(".claude/hooks");
	dir(".claude/hooks/lib");
	put(".claude/hooks/check.sh", "echo ok\n", 0755);
	put(".claude/hooks/lib/util.sh", "echo ok\n", 0644);
	dir(".git/hooks/pre-commit.d");
	r = protect_record(&cfg, roots, 1, NULL, &err);
	put(".claude/hooks/check.sh", "touch marker\n", 0755);
	put(".claude/hooks/lib/new.sh", "touch marker\n", 0644);
	dir(".claude/hooks/made");
	put(".claude/hooks/made/x.sh", "touch marker\n", 0644);
	put(".git/hooks/pre-commit.d/lint", "touch marker\n", 0755);
	CHECK(protect_check(r, q, true) == 4);
	CHECK_STR(slurp(".claude/hooks/check.sh"), "echo ok\n");
	CHECK(!exists(".claude/hooks/lib/new.sh") && exists(".claude/hooks/lib/util.sh"));
	CHECK(!exists(".claude/hooks/made"));
	CHECK(!exists(".git/hooks/pre-commit.d/lint") && exists(".git/hooks/pre-commit.d"));
	protect_free(r);

	/* git init, and a config git remote add changed: nothing to say */
	r = protect_record(&cfg, roots, 1, NULL, &err);
	put(".git/config", "[core]\n\tbare = false\n[remote \"o\"]\n\turl = /x\n", 0644);
	put(".git/hooks/pre-push.sample", "#!/bin/sh\n", 0755);
	CHECK(protect_check(r, q, true) == 0);
	protect_free(r);
	/* unprotect .git/hooks lets a hook stay */
	strv_push(&cfg.unprotect, ".git/hooks");
	r = protect_record(&cfg, roots, 1, NULL, &err);
	put(".git/hooks/pre-commit", "#!/bin/sh\n", 0755);
	CHECK(protect_check(r, q, true) == 0);
	CHECK(exists(".git/hooks/pre-commit"));
	protect_free(r);
	policy_release(&cfg);
}

/* The live layer's question: each change of each kind of name, by name only. */
static enum protect_verdict v(const struct protect_record *r, const char *rel,
			      enum protect_change how)
{
	char abs[600];
	snprintf(abs, sizeof(abs), "%s/w%s%s", top, *rel ? "/" : "", rel);
	return protect_match(r, abs, how).verdict;
}

static void live(void)
{
	char w[300], home[300];
	snprintf(w, sizeof(w), "%s/w", top);
	snprintf(home, sizeof(home), "%s/w/home", top);
	mkdir(w, 0700);
	struct stepbox_config cfg;
	policy_init(&cfg);
	strv_push(&cfg.protect_paths, "ci/*.sh");
	const char *roots[] = {w};
	struct stepbox_err err = {0};
	struct protect_record *r = protect_record(&cfg, roots, 1, home, &err);
	CHECK(r != NULL);
	/* a hook, but not a sample; made, moved in, removed; a folder inside */
	CHECK(v(r, ".git/hooks/pre-commit", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, ".git/hooks/pre-commit", PROTECT_MOVE_IN) == PROTECT_REFUSED);
	CHECK(v(r, ".git/hooks/pre-commit", PROTECT_REMOVE) == PROTECT_REFUSED);
	CHECK(v(r, ".git/hooks/pre-commit.sample", PROTECT_MAKE) == PROTECT_FREE);
	CHECK(v(r, ".git/hooks/x", PROTECT_MKDIR) == PROTECT_REFUSED);
	/* git init: .git, hooks, info made; its config moved in and judged */
	CHECK(v(r, ".git", PROTECT_MKDIR) == PROTECT_FREE);
	CHECK(v(r, ".git/hooks", PROTECT_MKDIR) == PROTECT_FREE);
	CHECK(v(r, ".git/info", PROTECT_MKDIR) == PROTECT_FREE);
	CHECK(v(r, ".git/config", PROTECT_MOVE_IN) == PROTECT_JUDGED);
	CHECK(v(r, ".git/config.lock", PROTECT_MAKE) == PROTECT_FREE);
	/* a gitdir made by the step: its config made in place, and judged after */
	CHECK(v(r, ".git/config", PROTECT_MAKE) == PROTECT_JUDGED);
	CHECK(v(r, "lib/new/.git/config", PROTECT_MAKE) == PROTECT_JUDGED);
	CHECK(v(r, "lib/new/.git/hooks/post-checkout", PROTECT_MAKE) == PROTECT_REFUSED);
	char made[600];
	snprintf(made, sizeof(made), "%s/lib/new/.git/config", w);
	CHECK(protect_note_made(r, made) == 0);
	CHECK(protect_note_made(r, made) == 0);
	CHECK(v(r, "lib/new/.git/config", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, "lib/new/.git/config", PROTECT_MOVE_IN) == PROTECT_JUDGED);
	CHECK(v(r, ".git/config", PROTECT_MAKE) == PROTECT_JUDGED);
	/* a commit's own writes */
	CHECK(v(r, ".git/objects/ab/cdef", PROTECT_MOVE_IN) == PROTECT_FREE);
	CHECK(v(r, ".git/index.lock", PROTECT_MAKE) == PROTECT_FREE);
	CHECK(v(r, ".git/index", PROTECT_MOVE_IN) == PROTECT_FREE);
	CHECK(v(r, ".git/refs/heads/main", PROTECT_REMOVE) == PROTECT_FREE);
	/* .git replaced, moved, or made a file; a folder above hooks moved */
	CHECK(v(r, ".git", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, ".git", PROTECT_REMOVE) == PROTECT_REFUSED);
	CHECK(v(r, ".git", PROTECT_MOVE_DIR_IN) == PROTECT_REFUSED);
	CHECK(v(r, ".git/hooks", PROTECT_MOVE_DIR_IN) == PROTECT_REFUSED);
	CHECK(v(r, ".git/info", PROTECT_REMOVE) == PROTECT_REFUSED);
	CHECK(v(r, "", PROTECT_MOVE_DIR_IN) == PROTECT_REFUSED);
	CHECK(v(r, "src", PROTECT_MOVE_DIR_IN) == PROTECT_FREE);
	CHECK(v(r, "src", PROTECT_REMOVE) == PROTECT_FREE);
	/* submodules' gitdirs, at any depth of name; worktrees' config */
	CHECK(v(r, ".git/modules/a/b/hooks/post-checkout", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, ".git/modules/a/config", PROTECT_MOVE_IN) == PROTECT_JUDGED);
	CHECK(v(r, ".git/modules/a/objects/ab/cd", PROTECT_REMOVE) == PROTECT_FREE);
	CHECK(v(r, ".git/modules/a", PROTECT_MOVE_DIR_IN) == PROTECT_REFUSED);
	CHECK(v(r, ".git/modules/a", PROTECT_MKDIR) == PROTECT_FREE);
	CHECK(v(r, ".git/worktrees/t/config.worktree", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, ".git/worktrees/t/HEAD", PROTECT_MAKE) == PROTECT_FREE);
	/* a nested checkout's gitdir, by name */
	CHECK(v(r, "lib/dep/.git/hooks/pre-commit", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, "lib/dep/.git/config", PROTECT_MOVE_IN) == PROTECT_JUDGED);
	CHECK(v(r, "lib/dep/.git/objects/ab/cd", PROTECT_MOVE_IN) == PROTECT_FREE);
	CHECK(v(r, "lib/dep/.gitx/hooks/pre-commit", PROTECT_MAKE) == PROTECT_FREE);
	/* a .git the step made (a clone): what it holds may be removed, nothing made that runs */
	char clone[600];
	snprintf(clone, sizeof(clone), "%s/tmpclone/.git", w);
	CHECK(v(r, "tmpclone/.git/config", PROTECT_REMOVE) == PROTECT_REFUSED);
	CHECK(protect_note_gitdir(r, clone) == 0);
	CHECK(v(r, "tmpclone/.git/config", PROTECT_REMOVE) == PROTECT_FREE);
	CHECK(v(r, "tmpclone/.git/hooks", PROTECT_REMOVE) == PROTECT_FREE);
	CHECK(v(r, "tmpclone/.git/modules/m/hooks/post-merge", PROTECT_REMOVE) == PROTECT_FREE);
	CHECK(v(r, "tmpclone/.git/hooks/pre-commit", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, "tmpclone/.git/hooks/pre-commit", PROTECT_MOVE_IN) == PROTECT_REFUSED);
	CHECK(v(r, ".git/hooks", PROTECT_REMOVE) == PROTECT_REFUSED); /* the person's */
	CHECK(v(r, ".git", PROTECT_REMOVE) == PROTECT_REFUSED);
	CHECK(v(r, "tmpclone2/.git/config", PROTECT_REMOVE) == PROTECT_REFUSED);
	/* a checkout moved into the step's own gitdir is not the step's */
	CHECK(v(r, "tmpclone/.git/r/.git/hooks/pre-commit", PROTECT_REMOVE) == PROTECT_REFUSED);
	CHECK(v(r, "tmpclone/.git/r/.git/config", PROTECT_REMOVE) == PROTECT_REFUSED);
	CHECK(v(r, "tmpclone/.git/r/notes", PROTECT_REMOVE) == PROTECT_FREE);
	/*
	 * Another spelling a case-insensitive file system takes for the same
	 * name: case, a letter whose folding is ASCII (long s), a zero-width
	 * space, a trailing dot; refused everywhere (no tool needs them)
	 */
	CHECK(v(r, ".ENVRC", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, ".GIT/HOOKS/pre-commit", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, "Lib/.Git/Hooks/post-merge", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r,
		".v\xc5\xbf"
		"code/tasks.json",
		PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, ".g\xe2\x80\x8bit/hooks/pre-commit", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, ".envrc.", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, "home/.\xc3\x9fh/config", PROTECT_MAKE) == PROTECT_REFUSED); /* sharp s */
	CHECK(v(r, "Src/Main.py", PROTECT_MAKE) == PROTECT_FREE);               /* the controls */
	CHECK(v(r, "README.md", PROTECT_MAKE) == PROTECT_FREE);
	CHECK(v(r, "..", PROTECT_REMOVE) == PROTECT_FREE);
	snprintf(clone, sizeof(clone), "%s/MyLib/.git", w); /* the step's own, in its own case */
	CHECK(protect_note_gitdir(r, clone) == 0);
	CHECK(v(r, "MyLib/.git/config", PROTECT_REMOVE) == PROTECT_FREE);
	CHECK(v(r, "mylib/.git/config", PROTECT_REMOVE) == PROTECT_REFUSED);
	/* the set's files and folders, and all a folder holds at any depth */
	CHECK(v(r, ".envrc", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, ".vscode", PROTECT_MKDIR) == PROTECT_REFUSED);
	CHECK(v(r, ".vscode/tasks.json", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, ".claude/hooks/check.sh", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, ".claude/hooks/check.sh", PROTECT_REMOVE) == PROTECT_REFUSED);
	CHECK(v(r, ".idea/runConfigurations/a/b.xml", PROTECT_MOVE_IN) == PROTECT_REFUSED);
	CHECK(v(r, ".claudex/hooks/check.sh", PROTECT_MAKE) == PROTECT_FREE);
	CHECK(v(r, ".git/hooks/pre-commit.d/lint", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, ".git/hooks/pre-commit.d/x.sample", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, "ci/deploy.sh/x", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, "ci/sub/deploy.sh", PROTECT_MAKE) == PROTECT_FREE);
	/* a checkout in a folder whose name is a glob: its name, never a pattern */
	CHECK(v(r, "a[1]/.git/hooks/pre-commit", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, "a[1]/.git/worktrees/t/config.worktree", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, "a*/.git/hooks/pre-commit", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, ".envrc.bak", PROTECT_MAKE) == PROTECT_FREE);
	CHECK(v(r, "sub/.envrc", PROTECT_MAKE) == PROTECT_FREE);
	/* HOME in the grant: its rc files, and the folders above them */
	CHECK(v(r, "home/.bashrc", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, "home/.config/git/config", PROTECT_MOVE_IN) == PROTECT_JUDGED);
	CHECK(v(r, "home/.config", PROTECT_MOVE_DIR_IN) == PROTECT_REFUSED);
	CHECK(v(r, "home", PROTECT_REMOVE) == PROTECT_REFUSED);
	CHECK(v(r, ".bashrc", PROTECT_MAKE) == PROTECT_FREE);
	/* the policy's names: a glob, and the folder above it */
	CHECK(v(r, "ci/deploy.sh", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, "ci/notes.txt", PROTECT_MAKE) == PROTECT_FREE);
	CHECK(v(r, "ci", PROTECT_REMOVE) == PROTECT_REFUSED);
	struct protect_hit h = protect_match(r, "/elsewhere/.envrc", PROTECT_MAKE);
	CHECK(h.verdict == PROTECT_FREE && !h.rule);
	char abs[600];
	snprintf(abs, sizeof(abs), "%s/.git/hooks/pre-push", w);
	h = protect_match(r, abs, PROTECT_MAKE);
	CHECK(h.rule && strcmp(h.rule->name, ".git/hooks") == 0);
	protect_free(r);
	/* a gitdir there before the step: its config is never made in place */
	char gd[600];
	snprintf(gd, sizeof(gd), "%s/.git", w);
	mkdir(gd, 0700);
	r = protect_record(&cfg, roots, 1, home, &err);
	CHECK(r && v(r, ".git/config", PROTECT_MAKE) == PROTECT_REFUSED);
	CHECK(v(r, ".git/config", PROTECT_MOVE_IN) == PROTECT_JUDGED);
	protect_free(r);
	rmdir(gd);
	/* unprotect: the hooks are free, the config still judged */
	strv_push(&cfg.unprotect, ".git/hooks");
	strv_push(&cfg.unprotect, "ci/*.sh");
	r = protect_record(&cfg, roots, 1, home, &err);
	CHECK(v(r, ".git/hooks/pre-commit", PROTECT_MAKE) == PROTECT_FREE);
	CHECK(v(r, ".git/config", PROTECT_MOVE_IN) == PROTECT_JUDGED);
	CHECK(v(r, "ci/deploy.sh", PROTECT_MAKE) == PROTECT_FREE);
	CHECK(protect_any(r));
	protect_free(r);
	/* a folder above a protected_paths entry opens it, live as after the step */
	cfg.unprotect.v[cfg.unprotect.n - 1][2] = '\0'; /* the glob cut to "ci" */
	r = protect_record(&cfg, roots, 1, home, &err);
	CHECK(v(r, "ci/deploy.sh", PROTECT_MAKE) == PROTECT_FREE);
	CHECK(v(r, ".git/config", PROTECT_MOVE_IN) == PROTECT_JUDGED); /* the control */
	protect_free(r);
	/* nothing protected: no live layer at all */
	strv_push(&cfg.unprotect, "*");
	r = protect_record(&cfg, roots, 1, home, &err);
	CHECK(r && !protect_any(r));
	protect_free(r);
	CHECK(!protect_any(NULL));
	policy_release(&cfg);
}

/*
 * A workspace of clones (checkouts one level down) whose configs name a
 * core.hooksPath: the folders recorded before, looked at after (the net
 * without the live layer), and matched live by path.
 */
static void nested(void)
{
	dir("ws");
	dir("ws/a");
	dir("ws/a/.git");
	dir("ws/a/.git/hooks");
	put("ws/a/.git/config", "[core]\n\thooksPath = ../hk\n", 0644);
	dir("ws/hk");
	put("ws/hk/pre-commit", "#!/bin/sh\n", 0755);
	dir("ws/b");
	dir("ws/b/.git");
	dir("ws/b/.git/hooks");
	put("ws/b/.git/config", "[core]\n\tHooksPath = \".githooks\"\n", 0644);
	char ws[300], q[300];
	snprintf(ws, sizeof(ws), "%s/ws", top);
	snprintf(q, sizeof(q), "%s/q", top);
	mkdir(q, 0700);
	const char *roots[] = {ws};
	struct stepbox_config cfg;
	policy_init(&cfg);
	struct stepbox_err err = {0};
	struct protect_record *r = protect_record(&cfg, roots, 1, NULL, &err);
	CHECK(r != NULL);
	char p[400];
	snprintf(p, sizeof(p), "%s/b/.githooks/pre-push", ws);
	CHECK(protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_REFUSED); /* not there yet */
	snprintf(p, sizeof(p), "%s/b/.githooks", ws);
	CHECK(protect_match(r, p, PROTECT_MKDIR).verdict == PROTECT_FREE);
	snprintf(p, sizeof(p), "%s/b/.githooks/x.sample", ws);
	CHECK(protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_FREE);
	snprintf(p, sizeof(p), "%s/hk", ws);
	CHECK(protect_match(r, p, PROTECT_REMOVE).verdict == PROTECT_REFUSED);
	snprintf(p, sizeof(p), "%s/a/other", ws);
	CHECK(protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_FREE);
	/* the set's names at the top of each checkout there: husky's, direnv's, an editor's */
	static const char *const at_top[] = {"a/.husky/pre-commit", "a/.envrc",
					     "b/.vscode/tasks.json", "b/.ENVRC", "a/lefthook.yml"};
	for (size_t i = 0; i < sizeof(at_top) / sizeof(*at_top); i++) {
		snprintf(p, sizeof(p), "%s/%s", ws, at_top[i]);
		CHECK(protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_REFUSED);
	}
	snprintf(p, sizeof(p), "%s/a", ws); /* nor is the checkout moved away from them */
	CHECK(protect_match(r, p, PROTECT_REMOVE).verdict == PROTECT_REFUSED);
	/* the controls: deeper in a checkout, in a folder that is none, a name beside */
	static const char *const not_top[] = {"a/src/.envrc", "plain/.envrc", "a/.huskyx", "a/src"};
	for (size_t i = 0; i < sizeof(not_top) / sizeof(*not_top); i++) {
		snprintf(p, sizeof(p), "%s/%s", ws, not_top[i]);
		CHECK(protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_FREE);
	}
	snprintf(p, sizeof(p), "%s/hk2", ws);
	CHECK(protect_match(r, p, PROTECT_REMOVE).verdict == PROTECT_FREE);
	/* what the live layer would have refused, left: a finding */
	put("ws/hk/pre-commit", "#!/bin/sh\ntouch marker\n", 0755);
	put("ws/a/notes", "x\n", 0644);
	CHECK(protect_check(r, q, true) == 1);
	CHECK(exists("ws/a/notes"));
	CHECK_STR(slurp("ws/hk/pre-commit"), "#!/bin/sh\n"); /* the original put back */
	protect_free(r);
	/*
	 * A hooks path in a file the config includes (include.path, relative
	 * to the gitdir; includeIf.*.path, every condition taken as met; a
	 * file including itself read a bounded number of times)
	 */
	dir("ws/c");
	dir("ws/c/.git");
	put("ws/c/.git/config", "[include]\n\tpath = ../../inc.cfg\n", 0644);
	put("ws/inc.cfg",
	    "[core]\n\thooksPath = ci-hooks\n[includeIf \"gitdir:~/x/\"]\n\tpath = inc2.cfg\n"
	    "[include]\n\tpath = inc.cfg\n\tpath = local.cfg\n",
	    0644);
	char inc2[600];
	snprintf(inc2, sizeof(inc2), "[core]\n\thooksPath = %s/other\n", ws);
	put("ws/inc2.cfg", inc2, 0644);
	r = protect_record(&cfg, roots, 1, NULL, &err);
	snprintf(p, sizeof(p), "%s/c/ci-hooks/pre-commit", ws);
	CHECK(r && protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_REFUSED);
	snprintf(p, sizeof(p), "%s/other/post-checkout", ws);
	CHECK(r && protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_REFUSED);
	snprintf(p, sizeof(p), "%s/c/notes", ws);
	CHECK(r && protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_FREE);
	/* the included files themselves: configs, judged by their keys */
	snprintf(p, sizeof(p), "%s/inc.cfg", ws);
	CHECK(r && protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_REFUSED);
	CHECK(r && protect_match(r, p, PROTECT_MOVE_IN).verdict == PROTECT_JUDGED);
	snprintf(p, sizeof(p), "%s/inc2.cfg", ws);
	CHECK(r && protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_REFUSED);
	snprintf(p, sizeof(p), "%s/inc3.cfg", ws);
	CHECK(r && protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_FREE);
	snprintf(p, sizeof(p), "%s/local.cfg", ws); /* included, not there yet */
	CHECK(r && protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_REFUSED);
	char was[500], now[700];
	snprintf(was, sizeof(was), "%.400s", slurp("ws/inc2.cfg"));
	snprintf(now, sizeof(now), "%s[core]\n\tfsmonitor = touch marker\n", was);
	put("ws/inc2.cfg", now, 0644);
	CHECK(r && protect_check(r, q, true) == 1);
	CHECK_STR(slurp("ws/inc2.cfg"), was); /* the original put back */
	protect_free(r);
	/* unprotect .git/hooks: the hooks path is the person's to open too */
	strv_push(&cfg.unprotect, ".git/hooks");
	r = protect_record(&cfg, roots, 1, NULL, &err);
	snprintf(p, sizeof(p), "%s/hk/pre-commit", ws);
	CHECK(r && protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_FREE);
	protect_free(r);
	policy_release(&cfg);
}

/*
 * Gitdirs no ".git" names them by: a bare clone whose worktree is one level
 * down (its .git file, then commondir), a --separate-git-dir clone's, a
 * bare repository the person pushes to (NAME.git holding HEAD).
 */
static void other_gitdirs(void)
{
	static const char *const dirs[] = {"og",
					   "og/repo.git",
					   "og/repo.git/hooks",
					   "og/repo.git/objects",
					   "og/repo.git/refs",
					   "og/repo.git/worktrees",
					   "og/repo.git/worktrees/main",
					   "og/main",
					   "og/repos",
					   "og/repos/a.git",
					   "og/repos/a.git/hooks",
					   "og/a",
					   "og/push.git",
					   "og/push.git/hooks",
					   "og/plain.git"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++)
		dir(dirs[i]);
	put("og/repo.git/HEAD", "ref: refs/heads/main\n", 0644);
	put("og/repo.git/config", "[core]\n\tbare = true\n", 0644);
	put("og/repo.git/worktrees/main/commondir", "../..\n", 0644);
	put("og/repo.git/worktrees/main/gitdir", "x\n", 0644);
	put("og/main/.git", "gitdir: ../repo.git/worktrees/main\n", 0644);
	put("og/repos/a.git/config", "[core]\n", 0644);
	put("og/repos/a.git/HEAD", "ref: refs/heads/main\n", 0644);
	put("og/a/.git", "gitdir: ../repos/a.git\n", 0644);
	put("og/push.git/HEAD", "ref: refs/heads/main\n", 0644);
	char og[300], p[400];
	snprintf(og, sizeof(og), "%s/og", top);
	struct stepbox_config cfg;
	struct protect_record *r = record_at(og, &cfg);
	static const char *const held[] = {"repo.git/hooks/pre-commit",    "repo.git/config",
					   "repos/a.git/hooks/pre-commit", "repos/a.git/config",
					   "push.git/hooks/post-receive",  "push.git/config"};
	for (size_t i = 0; r && i < sizeof(held) / sizeof(*held); i++) {
		snprintf(p, sizeof(p), "%s/%s", og, held[i]);
		CHECK(protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_REFUSED);
	}
	static const char *const free_[] = {"repo.git/objects/ab", "repos/a.git/index",
					    "plain.git/hooks/x", "push.git/refs/heads/x"};
	for (size_t i = 0; r && i < sizeof(free_) / sizeof(*free_); i++) {
		snprintf(p, sizeof(p), "%s/%s", og, free_[i]);
		CHECK(protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_FREE);
	}
	/* a worktree's folder the step made in a gitdir is its own to remove; another is not */
	snprintf(p, sizeof(p), "%s/repo.git/worktrees/mine", og);
	CHECK(r && protect_is_admin_dir(r, p) && protect_note_gitdir(r, p) == 0);
	CHECK(r && protect_match(r, p, PROTECT_REMOVE).verdict == PROTECT_FREE);
	snprintf(p, sizeof(p), "%s/repo.git/worktrees/main", og);
	CHECK(r && protect_match(r, p, PROTECT_REMOVE).verdict == PROTECT_REFUSED);
	snprintf(p, sizeof(p), "%s/main/.git/worktrees/x", og); /* ends in .git: a gitdir */
	CHECK(r && protect_is_admin_dir(r, p));
	snprintf(p, sizeof(p), "%s/src/worktrees/x", og);
	CHECK(r && !protect_is_admin_dir(r, p));
	protect_free(r);
	policy_release(&cfg);
}

/* The grant's .git a link to a gitdir elsewhere in it: git follows it, so does the record. */
static void linked_dotgit(void)
{
	dir("sl");
	dir("sl/store");
	dir("sl/store/gd");
	dir("sl/store/gd/hooks");
	put("sl/store/gd/HEAD", "ref: refs/heads/main\n", 0644);
	put("sl/store/gd/config", "[core]\n", 0644);
	char sl[300], p[400];
	snprintf(sl, sizeof(sl), "%s/sl", top);
	snprintf(p, sizeof(p), "%s/sl/.git", top);
	CHECK(symlink("store/gd", p) == 0);
	const char *roots[] = {sl};
	struct stepbox_config cfg;
	policy_init(&cfg);
	struct stepbox_err err = {0};
	struct protect_record *r = protect_record(&cfg, roots, 1, NULL, &err);
	snprintf(p, sizeof(p), "%s/store/gd/hooks/pre-commit", sl);
	CHECK(r && protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_REFUSED);
	snprintf(p, sizeof(p), "%s/store/gd/config", sl);
	CHECK(r && protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_REFUSED);
	snprintf(p, sizeof(p), "%s/store/gd/index", sl);
	CHECK(r && protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_FREE);
	protect_free(r);
	policy_release(&cfg);
}

/*
 * A stand-in probe: the folder checkout levels above the name's holds a
 * .git, the one gitdir levels above is a gitdir (HEAD, objects), whose
 * folder is inode ino; nothing else is there.
 */
struct fake_fs {
	int checkout, gitdir;
	ino_t ino;
};

static int fake_look(void *ctx, unsigned up, const char *name, struct stat *st)
{
	const struct fake_fs *f = ctx;
	memset(st, 0, sizeof(*st));
	bool here = strcmp(name, ".git") == 0 ? (int)up == f->checkout
		    : strcmp(name, "HEAD") == 0 || strcmp(name, "objects") == 0 ||
				    strcmp(name, ".") == 0
			    ? (int)up == f->gitdir
			    : false;
	st->st_dev = 1;
	st->st_ino = f->ino;
	return here ? 0 : -ENOENT;
}

/* A stand-in probe: in the name's folder, "a" is a folder (inode 9) holding a .git. */
static int holds_a(void *ctx, unsigned up, const char *name, struct stat *st)
{
	(void)ctx;
	memset(st, 0, sizeof(*st));
	st->st_dev = 1;
	st->st_ino = 9;
	return up == 0 && (strcmp(name, "a/.git") == 0 || strcmp(name, "a") == 0) ? 0 : -ENOENT;
}

/* A probe answering that the folder up levels above the name's is a checkout, for one up. */
static int checkout_at(void *ctx, unsigned up, const char *name, struct stat *st)
{
	struct fake_fs f = {*(const int *)ctx, -1, 7};
	return fake_look(&f, up, name, st);
}

/*
 * A gitdir no .git names, deeper than the record looks (W/src/repo.git, a
 * bare clone; W/src/proj/.bare): found by the probe, held as the person's;
 * one whose folder the step made is its own (a test's git init --bare).
 */
static void probed_gitdirs(void)
{
	dir("pg");
	char pg[300], p[400];
	snprintf(pg, sizeof(pg), "%s/pg", top);
	struct stepbox_config cfg;
	struct protect_record *r = record_at(pg, &cfg);
	struct fake_fs at1 = {-1, 1, 42}, at0 = {-1, 0, 42}, none = {-1, -1, 42};
	const struct protect_probe hooks = {fake_look, &at1, NULL}, top_ = {fake_look, &at0, NULL},
				   nothing = {fake_look, &none, NULL};
	snprintf(p, sizeof(p), "%s/src/repo.git/hooks/pre-commit", pg);
	CHECK(r && protect_match_at(r, p, PROTECT_MAKE, &hooks).verdict == PROTECT_REFUSED);
	CHECK(r && protect_match_at(r, p, PROTECT_MAKE, &nothing).verdict == PROTECT_FREE);
	snprintf(p, sizeof(p), "%s/src/proj/.bare/config", pg);
	CHECK(r && protect_match_at(r, p, PROTECT_MAKE, &top_).verdict == PROTECT_REFUSED);
	CHECK(r && protect_match_at(r, p, PROTECT_REMOVE, &top_).verdict == PROTECT_REFUSED);
	snprintf(p, sizeof(p), "%s/src/proj/.bare/objects/ab", pg); /* not a name of the set */
	CHECK(r && protect_match_at(r, p, PROTECT_MAKE, &top_).verdict == PROTECT_FREE);
	snprintf(p, sizeof(p), "%s/app/config/settings.py", pg); /* config not last */
	CHECK(r && protect_match_at(r, p, PROTECT_MAKE, &hooks).verdict == PROTECT_FREE);
	/* the step's own: its folder made live */
	CHECK(r && protect_note_created(r, 1, 42) == 0);
	snprintf(p, sizeof(p), "%s/src/proj/.bare/config", pg);
	CHECK(r && protect_match_at(r, p, PROTECT_REMOVE, &top_).verdict == PROTECT_FREE);
	for (ino_t i = 100; i < 400; i++) /* the set grows, and still finds it */
		CHECK(r && protect_note_created(r, 1, i) == 0);
	CHECK(r && protect_match_at(r, p, PROTECT_MAKE, &top_).verdict == PROTECT_JUDGED);
	snprintf(p, sizeof(p), "%s/src/proj/.bare/hooks/post-receive", pg); /* nothing that runs */
	CHECK(r && protect_match_at(r, p, PROTECT_MAKE, &hooks).verdict == PROTECT_REFUSED);
	CHECK(r && protect_match_at(r, p, PROTECT_REMOVE, &hooks).verdict == PROTECT_FREE);
	protect_free(r);
	policy_release(&cfg);
}

/*
 * A checkout deeper than those recorded (W/x/y/repo): the set's names at
 * its top, where the caller's probe finds its .git, and not at a folder
 * that is none, nor in a checkout the step made.
 */
static void deep_names(void)
{
	dir("dn");
	char dn[300], p[400];
	snprintf(dn, sizeof(dn), "%s/dn", top);
	struct stepbox_config cfg;
	struct protect_record *r = record_at(dn, &cfg);
	int one = 1, zero = 0, none = -1;
	const struct protect_probe at1 = {checkout_at, &one, NULL},
				   at0 = {checkout_at, &zero, NULL},
				   never = {checkout_at, &none, NULL};
	snprintf(p, sizeof(p), "%s/x/y/repo/.husky/pre-commit", dn);
	CHECK(r && protect_match_at(r, p, PROTECT_MAKE, &at1).verdict == PROTECT_REFUSED);
	CHECK(r && protect_match_at(r, p, PROTECT_MAKE, &never).verdict == PROTECT_FREE);
	CHECK(r && protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_FREE); /* no probe */
	snprintf(p, sizeof(p), "%s/x/y/repo/.ENVRC", dn); /* another spelling */
	CHECK(r && protect_match_at(r, p, PROTECT_MAKE, &at0).verdict == PROTECT_REFUSED);
	snprintf(p, sizeof(p), "%s/x/y/repo/src/.envrc", dn); /* src is no checkout */
	CHECK(r && protect_match_at(r, p, PROTECT_MAKE, &at1).verdict == PROTECT_FREE);
	snprintf(p, sizeof(p), "%s/x/y/repo/.husky", dn); /* moved away from the checkout */
	CHECK(r && protect_match_at(r, p, PROTECT_REMOVE, &at0).verdict == PROTECT_REFUSED);
	/* a folder holding a checkout is not moved away, at any depth (the control: one that
	 * holds none); one the step made is its own */
	const struct protect_probe a_holds = {holds_a, NULL, NULL};
	snprintf(p, sizeof(p), "%s/x/y/a", dn);
	CHECK(r && protect_match_at(r, p, PROTECT_REMOVE, &a_holds).verdict == PROTECT_REFUSED);
	CHECK(r && protect_match_at(r, p, PROTECT_MAKE, &a_holds).verdict == PROTECT_FREE);
	snprintf(p, sizeof(p), "%s/x/y/b", dn);
	CHECK(r && protect_match_at(r, p, PROTECT_REMOVE, &a_holds).verdict == PROTECT_FREE);
	CHECK(r && protect_note_created(r, 1, 9) == 0);
	snprintf(p, sizeof(p), "%s/x/y/a", dn);
	CHECK(r && protect_match_at(r, p, PROTECT_REMOVE, &a_holds).verdict == PROTECT_FREE);
	/* a checkout the step made is its own */
	snprintf(p, sizeof(p), "%s/x/y/repo/.git", dn);
	CHECK(r && protect_note_gitdir(r, p) == 0);
	snprintf(p, sizeof(p), "%s/x/y/repo/.husky/pre-commit", dn);
	CHECK(r && protect_match_at(r, p, PROTECT_MAKE, &at1).verdict == PROTECT_FREE);
	protect_free(r);
	policy_release(&cfg);
}

/* What moving hp/NAME away meets (the folder hp pinned, as the supervisor pins it). */
static enum protect_verdict move_away(const struct protect_record *r, const char *name)
{
	char p[400];
	snprintf(p, sizeof(p), "%s/hp", top);
	int fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	const struct protect_probe probe = protect_probe_from(&fd);
	snprintf(p, sizeof(p), "%s/hp/%s", top, name);
	enum protect_verdict v = protect_match_at(r, p, PROTECT_REMOVE, &probe).verdict;
	close(fd);
	return v;
}

/*
 * A folder holding a checkout or a gitdir of the person's at any depth is
 * not moved away (a clone of the step's would take its name); one holding
 * none is, and one the step made is never looked into.
 */
static void holds_person(void)
{
	static const char *const dirs[] = {"hp",
					   "hp/a",
					   "hp/a/b",
					   "hp/a/b/repo",
					   "hp/a/b/repo/.git",
					   "hp/c",
					   "hp/c/x",
					   "hp/c/x/y",
					   "hp/d",
					   "hp/d/e",
					   "hp/d/e/r.git",
					   "hp/d/e/r.git/objects",
					   "hp/f",
					   "hp/f/g",
					   "hp/f/g/.git",
					   "hp/w",
					   "hp/w/wt"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		dir(dirs[i]);
	put("hp/c/x/y/file", "x", 0644);
	put("hp/d/e/r.git/HEAD", "ref: refs/heads/main\n", 0644);
	put("hp/w/wt/.git", "gitdir: /elsewhere\n", 0644);
	char hp[300];
	snprintf(hp, sizeof(hp), "%s/hp", top);
	struct stepbox_config cfg;
	struct protect_record *r = record_at(hp, &cfg);
	CHECK(r && move_away(r, "a") == PROTECT_REFUSED); /* a/b/repo/.git */
	CHECK(r && move_away(r, "c") == PROTECT_FREE);    /* the control: none in it */
	CHECK(r && move_away(r, "c/x/y/file") == PROTECT_FREE);
	CHECK(r && move_away(r, "d") == PROTECT_REFUSED); /* a bare clone, HEAD and objects */
	CHECK(r && move_away(r, "w") == PROTECT_REFUSED); /* a worktree's .git file */
	CHECK(r && move_away(r, "f") == PROTECT_REFUSED);
	/* the step made f/g (its inode noted live): f holds only what the step made */
	char p[400];
	struct stat st;
	snprintf(p, sizeof(p), "%s/hp/f/g", top);
	CHECK(stat(p, &st) == 0 && r && protect_note_created(r, st.st_dev, st.st_ino) == 0);
	CHECK(r && move_away(r, "f") == PROTECT_FREE);
	/* a .git the step made, noted by its path */
	snprintf(p, sizeof(p), "%s/hp/w/wt/.git", top);
	CHECK(r && protect_note_gitdir(r, p) == 0);
	CHECK(r && move_away(r, "w") == PROTECT_FREE);
	protect_free(r);
	policy_release(&cfg);
}

/* What making name in hp/sub meets (the folder pinned, as the supervisor pins it). */
static enum protect_verdict make_in(const struct protect_record *r, const char *sub,
				    const char *name)
{
	char p[400];
	snprintf(p, sizeof(p), "%s/hp/%s", top, sub);
	int fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	const struct protect_probe probe = protect_probe_from(&fd);
	snprintf(p, sizeof(p), "%s/hp/%s/%s", top, sub, name);
	enum protect_verdict v = protect_match_at(r, p, PROTECT_MAKE, &probe).verdict;
	close(fd);
	return v;
}

/*
 * A folder made a gitdir last (config and a hook first, then HEAD): refused
 * where it holds what git would run; git's own order and content (samples,
 * a config of plain keys) made; commondir only in worktrees/NAME.
 */
static void becomes_gitdir(void)
{
	static const char *const dirs[] = {
		"hp",         "hp/bg",   "hp/bg/hooks",    "hp/bg/objects",
		"hp/bg/refs", "hp/ok",   "hp/ok/hooks",    "hp/ok/objects",
		"hp/ok/refs", "hp/half", "hp/half/objects"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		dir(dirs[i]);
	put("hp/bg/config", "[core]\n\tfsmonitor = touch x\n", 0644);
	put("hp/ok/config", "[core]\n\tbare = true\n", 0644);
	put("hp/ok/hooks/pre-commit.sample", "#!/bin/sh\n", 0755);
	put("hp/half/config", "[core]\n\tfsmonitor = touch x\n", 0644);
	char hp[300];
	snprintf(hp, sizeof(hp), "%s/hp", top);
	struct stepbox_config cfg;
	struct protect_record *r = record_at(hp, &cfg);
	CHECK(r && make_in(r, "bg", "HEAD") == PROTECT_REFUSED);
	CHECK(r && make_in(r, "bg", "head") == PROTECT_REFUSED); /* a case-folding file system */
	CHECK(r && make_in(r, "ok", "HEAD") == PROTECT_FREE);    /* the control: git's own */
	CHECK(r && make_in(r, "half", "HEAD") == PROTECT_FREE);  /* no refs: no gitdir yet */
	put("hp/ok/hooks/pre-commit", "#!/bin/sh\n", 0755);
	CHECK(r && make_in(r, "ok", "HEAD") == PROTECT_REFUSED); /* a hook there first */
	CHECK(r && make_in(r, "ok", "commondir") == PROTECT_REFUSED);
	dir("hp/ok/worktrees");
	dir("hp/ok/worktrees/wt");
	CHECK(r && make_in(r, "ok/worktrees/wt", "commondir") == PROTECT_FREE);
	protect_free(r);
	policy_release(&cfg);
}

/*
 * The hooks paths git reads in a submodule (its gitdir's config, found
 * through .git/modules/, its worktree by core.worktree, at any depth; one
 * level down also through its .git file) and in a linked worktree (its
 * config.worktree, and the common gitdir's config through commondir).
 */
static void module_hooks(void)
{
	dir("sm");
	dir("sm/.git");
	dir("sm/.git/modules");
	dir("sm/.git/modules/third");
	dir("sm/.git/modules/third/lib"); /* a submodule named "third/lib" */
	put("sm/.git/modules/third/lib/config",
	    "[core]\n\tworktree = ../../../../third/lib\n\thooksPath = .husky/_\n", 0644);
	dir("sm/.git/modules/third/lib/modules");
	dir("sm/.git/modules/third/lib/modules/inner"); /* and its own submodule */
	put("sm/.git/modules/third/lib/modules/inner/config",
	    "[core]\n\tworktree = ../../../../../../third/lib/inner\n\thooksPath = hk\n", 0644);
	dir("sm/third");
	dir("sm/third/lib");
	put("sm/third/lib/.git", "gitdir: ../../.git/modules/third/lib\n", 0644);
	dir("sm/third/lib/inner");
	dir("sm/top");
	dir("sm/.git/modules/top");
	put("sm/.git/modules/top/config", "[core]\n\thooksPath = ../hooks-of-top\n", 0644);
	put("sm/top/.git", "gitdir: ../.git/modules/top\n", 0644);
	dir("sm/.git/worktrees");
	dir("sm/.git/worktrees/wt");
	put("sm/.git/worktrees/wt/commondir", "../..\n", 0644);
	put("sm/.git/worktrees/wt/config.worktree", "[core]\n\thooksPath = wt-hooks\n", 0644);
	dir("sm/wt");
	put("sm/wt/.git", "gitdir: ../.git/worktrees/wt\n", 0644);
	put("sm/.git/config", "[core]\n\tbare = false\n", 0644);
	char sm[300], p[400];
	snprintf(sm, sizeof(sm), "%s/sm", top);
	const char *roots[] = {sm};
	struct stepbox_config cfg;
	policy_init(&cfg);
	struct stepbox_err err = {0};
	struct protect_record *r = protect_record(&cfg, roots, 1, NULL, &err);
	CHECK(r != NULL);
	static const char *const held[] = {
		"third/lib/.husky/_/pre-commit", /* modules/third/lib's, at depth 2 */
		"third/lib/inner/hk/pre-push",   /* its own submodule's */
		"hooks-of-top/pre-commit",       /* one level down, its .git file followed */
		"wt/wt-hooks/post-checkout",     /* a linked worktree's config.worktree */
	};
	for (size_t i = 0; r && i < sizeof(held) / sizeof(*held); i++) {
		snprintf(p, sizeof(p), "%s/%s", sm, held[i]);
		CHECK(protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_REFUSED);
	}
	/* the controls: beside each, free */
	static const char *const free_[] = {"third/lib/.husky/x", "third/lib/inner/hkx", "wt/src.c",
					    "third/lib/README"};
	for (size_t i = 0; r && i < sizeof(free_) / sizeof(*free_); i++) {
		snprintf(p, sizeof(p), "%s/%s", sm, free_[i]);
		CHECK(protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_FREE);
	}
	protect_free(r);
	/* a worktree deeper down takes the repository's relative hooks path from its top */
	put("sm/.git/config", "[core]\n\thooksPath = .githooks\n", 0644);
	dir("sm/.git/worktrees/feat");
	char gd[400];
	snprintf(gd, sizeof(gd), "%s/.worktrees/feat/.git\n", sm);
	put("sm/.git/worktrees/feat/gitdir", gd, 0644);
	r = protect_record(&cfg, roots, 1, NULL, &err);
	snprintf(p, sizeof(p), "%s/.worktrees/feat/.githooks/pre-commit", sm);
	CHECK(r && protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_REFUSED);
	snprintf(p, sizeof(p), "%s/.githooks/pre-commit", sm);
	CHECK(r && protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_REFUSED);
	snprintf(p, sizeof(p), "%s/.worktrees/feat/src.c", sm);
	CHECK(r && protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_FREE);
	/* ... and one the step adds (its .git file made live), not a clone it makes */
	snprintf(p, sizeof(p), "%s/.worktrees/new/.git", sm);
	CHECK(r && protect_note_gitdir(r, p) == 0 && protect_note_worktree(r, p) == 0);
	snprintf(p, sizeof(p), "%s/.worktrees/new/.githooks/pre-commit", sm);
	CHECK(r && protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_REFUSED);
	snprintf(p, sizeof(p), "%s/.worktrees/new/ctl", sm);
	CHECK(r && protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_FREE);
	snprintf(p, sizeof(p), "%s/clone/.git", sm);
	CHECK(r && protect_note_gitdir(r, p) == 0);
	snprintf(p, sizeof(p), "%s/clone/.githooks/pre-commit", sm);
	CHECK(r && protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_FREE);
	protect_free(r);
	policy_release(&cfg);
}

/*
 * A .git beneath the grant's top: one there is never moved away or onto;
 * one the step makes (a worktree's or submodule's .git file, a clone) is
 * its own, and judged after the step by what its gitdir holds.
 */
static void dotgits(void)
{
	dir("dg");
	dir("dg/a");
	dir("dg/a/.git");
	dir("dg/a/.git/hooks");
	dir("dg/evil");
	dir("dg/evil/hooks");
	dir("dg/wtgd");
	/* the person's checkout, whose gitdir a .git file of the step's will name */
	dir("dg/b");
	dir("dg/b/.git");
	dir("dg/b/.git/hooks");
	put("dg/b/.git/config", "[core]\n\tfsmonitor = the-persons-own\n", 0644);
	put("dg/b/.git/hooks/pre-push", "#!/bin/sh\ngit lfs pre-push\n", 0755);
	usleep(20000); /* older than the record by more than the file clock's tick */
	char w[300], q[300], p[400];
	snprintf(w, sizeof(w), "%s/dg", top);
	snprintf(q, sizeof(q), "%s/q", top);
	struct stepbox_config cfg;
	struct protect_record *r = record_at(w, &cfg);
	snprintf(p, sizeof(p), "%s/a/.git", w);
	CHECK(protect_match(r, p, PROTECT_REMOVE).verdict == PROTECT_REFUSED); /* moved away */
	CHECK(protect_match(r, p, PROTECT_MOVE_DIR_IN).verdict == PROTECT_REFUSED);
	CHECK(protect_match(r, p, PROTECT_MOVE_IN).verdict == PROTECT_REFUSED);
	CHECK(protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_JUDGED); /* a new file */
	snprintf(p, sizeof(p), "%s/a/.gitx", w);
	CHECK(protect_match(r, p, PROTECT_REMOVE).verdict == PROTECT_FREE); /* the control */
	/* the step's own: a .git file naming a gitdir it made, with a hook */
	snprintf(p, sizeof(p), "%s/docs/.git", w);
	CHECK(protect_note_gitdir(r, p) == 0);
	CHECK(protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_FREE);
	CHECK(protect_match(r, p, PROTECT_REMOVE).verdict == PROTECT_FREE);
	CHECK(protect_match(r, p, PROTECT_MOVE_DIR_IN).verdict == PROTECT_REFUSED);
	dir("dg/docs");
	put("dg/docs/.git", "gitdir: ../evil\n", 0644);
	put("dg/evil/HEAD", "ref: refs/heads/main\n", 0644);
	put("dg/evil/hooks/pre-commit", "#!/bin/sh\ntouch marker\n", 0755);
	put("dg/evil/hooks/pre-push.sample", "#!/bin/sh\n", 0755);
	/* ... and a worktree's: its gitdir's commondir and HEAD are git's own */
	snprintf(p, sizeof(p), "%s/wt/.git", w);
	CHECK(protect_note_gitdir(r, p) == 0);
	dir("dg/wt");
	put("dg/wt/.git", "gitdir: ../wtgd\n", 0644);
	put("dg/wtgd/commondir", "../a/.git\n", 0644);
	put("dg/wtgd/HEAD", "ref: refs/heads/wt\n", 0644);
	/* the step's own gitdir followed where it is moved, its old name the step's no more */
	char from[400], to[400];
	snprintf(from, sizeof(from), "%s/m1", w);
	snprintf(to, sizeof(to), "%s/m2", w);
	snprintf(p, sizeof(p), "%s/m1/.git", w);
	CHECK(protect_note_gitdir(r, p) == 0);
	CHECK(protect_note_made(r, "/nowhere/x") == 0);
	snprintf(p, sizeof(p), "%s/m1/.git/config", w);
	CHECK(protect_note_made(r, p) == 0); /* a config made in place: judged after */
	CHECK(protect_note_moved(r, from, to, false) == 0);
	snprintf(p, sizeof(p), "%s/m1/.git/config", w);
	CHECK(protect_match(r, p, PROTECT_REMOVE).verdict == PROTECT_REFUSED);
	snprintf(p, sizeof(p), "%s/m2/.git/config", w);
	CHECK(protect_match(r, p, PROTECT_REMOVE).verdict == PROTECT_FREE);
	CHECK(protect_match(r, p, PROTECT_MAKE).verdict == PROTECT_REFUSED); /* judged once */
	dir("dg/m2");
	dir("dg/m2/.git");
	put("dg/m2/.git/config", "[core]\n\tfsmonitor = touch marker\n", 0644);
	snprintf(p, sizeof(p), "%s/m2/.git", w);
	CHECK(protect_note_removed(r, p) == 0);
	snprintf(p, sizeof(p), "%s/m2/.git/config", w);
	CHECK(protect_match(r, p, PROTECT_REMOVE).verdict == PROTECT_REFUSED);
	snprintf(p, sizeof(p), "%s/y/.git", w);
	CHECK(protect_note_gitdir(r, p) == 0);
	dir("dg/y");
	put("dg/y/.git", "gitdir: ../b/.git\n", 0644);
	CHECK(protect_check(r, q, true) == 2); /* the hook, and m2's config where it went */
	CHECK(!exists("dg/m2/.git/config"));
	/* what the gitdir it named held before the step, unchanged: never moved */
	CHECK(exists("dg/b/.git/config") && exists("dg/b/.git/hooks/pre-push"));
	CHECK(!exists("dg/evil/hooks/pre-commit") && exists("dg/evil/hooks/pre-push.sample"));
	CHECK(exists("dg/docs/.git") && exists("dg/wt/.git") && exists("dg/wtgd/commondir"));
	protect_free(r);
	policy_release(&cfg);
}

int main(void)
{
	config_keys();
	names();
	snprintf(top, sizeof(top), "%s/stepbox-protect-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(top))
		return 1;
	char real[PATH_MAX];
	if (realpath(top, real))
		snprintf(top, sizeof(top), "%.200s", real);
	net();
	live();
	nested();
	module_hooks();
	deep_names();
	holds_person();
	becomes_gitdir();
	git_paths();
	other_gitdirs();
	linked_dotgit();
	probed_gitdirs();
	dotgits();
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		return 1;
	return tap_done();
}
