#include "doctor.h"
#include "strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum verdict { OK, WARN, FAIL };

struct doctor {
	json_t *checks;
	int failed, warned;
};

__attribute__((format(printf, 5, 6))) static void
verdict(struct doctor *d, enum verdict v, const char *check, const char *fix, const char *fmt, ...)
{
	char detail[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	static const char *const names[] = {"ok", "warn", "fail"};
	json_t *c =
		json_pack("{s:s, s:s, s:s}", "check", check, "verdict", names[v], "detail", detail);
	if (fix)
		json_object_set_new(c, "fix", json_string(fix));
	json_array_append_new(d->checks, c);
	d->failed += v == FAIL;
	d->warned += v == WARN;
}

/*
 * Which backend auto picks here (doctor judges the default run); returns
 * whether that run hides what is not granted (the namespaces: a path is not
 * there) rather than refuse it (Landlock alone), for the checks' wording.
 */
static bool check_backends(struct doctor *d, const struct stepbox_config *cfg,
			   const struct run_ctx *ctx)
{
	struct stepbox_config any = *cfg;
	any.backend = BACKEND_AUTO;
	struct backend_host host = ctx->host;
	host.probe_ns = true;
	struct backend pick;
	struct stepbox_err err = {0};
	if (backend_choose(&any, &host, &pick, &err) < 0) {
		verdict(d, FAIL, "backends", err.hint, "%s", err.msg);
		return false;
	}
	char what[256], missing[256] = "";
	backend_describe(&pick, what, sizeof(what));
	struct strv m = STRV_INIT;
	backend_missing(&pick, &m);
	struct strbuf sb;
	strbuf_init(&sb, missing, sizeof(missing));
	strbuf_join(&sb, (const char *const *)m.v, m.n, ", ");
	strv_release(&m);
	verdict(d, pick.layers.ns ? OK : WARN, "backends",
		pick.layers.ns
			? NULL
			: "make user namespaces available (see stepbox check) for the stacked "
			  "backend",
		"auto picks %s; missing here: %s", what, missing[0] ? missing : "nothing");
	return pick.layers.ns;
}

static void check_path(struct doctor *d, const struct run_ctx *ctx, bool ns)
{
	const char *path = env_get(ctx->env.env.v, "PATH");
	char *copy = strdup(path ? path : "");
	int bad = 0;
	struct strv seen = STRV_INIT;
	for (char *save = NULL, *p = strtok_r(copy, ":", &save); p;
	     p = strtok_r(NULL, ":", &save)) {
		char *canon = realpath(p, NULL);
		if (!canon)
			continue; /* a missing folder holds no command */
		if (strv_find(&seen, canon) < 0 && strv_push(&seen, canon) == 0 &&
		    !grants_covers(&ctx->grants, canon, GRANT_EXEC)) {
			char fix[PATH_MAX * 2 + 64];
			snprintf(fix, sizeof(fix), "SANDBOX_EXTRA_SYSTEM_PATHS=%s (or --read %s)",
				 canon, canon);
			/* under the namespaces the folder is not there: a shell says
			 * "not found"; Landlock alone refuses the exec */
			verdict(d, FAIL, "PATH", fix,
				"'%s' is on PATH but no execute grant covers it: a command found "
				"only there %s",
				canon,
				ns ? "is not found in the step (the folder is not there; a "
				     "shell exits 127)"
				   : "is refused (EACCES; a shell exits 126)");
			bad++;
		}
		free(canon);
	}
	free(copy);
	strv_release(&seen);
	if (!bad)
		verdict(d, OK, "PATH", NULL, "every PATH folder is covered by an execute grant");
}

static void check_home_config(struct doctor *d, const struct run_ctx *ctx)
{
	const char *home = env_get(ctx->env.env.v, "HOME");
	char cfgdir[PATH_MAX];
	struct stat st;
	if (!home || snprintf(cfgdir, sizeof(cfgdir), "%s/.config", home) >= (int)sizeof(cfgdir) ||
	    stat(cfgdir, &st) < 0) {
		verdict(d, OK, "HOME/.config", NULL, "no HOME/.config here");
		return;
	}
	DIR *dir = opendir(cfgdir);
	char names[512] = "";
	int n = 0, uncovered = 0;
	struct dirent *de;
	while (dir && (de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		char sub[PATH_MAX + 256];
		snprintf(sub, sizeof(sub), "%s/%s", cfgdir, de->d_name);
		char *canon = realpath(sub, NULL);
		if (canon && !grants_covers(&ctx->grants, canon, GRANT_READ)) {
			uncovered++;
			if (n++ < 8) {
				size_t l = strlen(names);
				snprintf(names + l, sizeof(names) - l, "%s%s", l ? ", " : "",
					 de->d_name);
			}
		}
		free(canon);
	}
	if (dir)
		closedir(dir);
	if (!uncovered) {
		verdict(d, OK, "HOME/.config", NULL, "'%s' is readable inside, or empty", cfgdir);
		return;
	}
	char fix[PATH_MAX + 64];
	snprintf(fix, sizeof(fix), "--read %s/<tool> for each tool the step uses", cfgdir);
	verdict(d, WARN, "HOME/.config", fix,
		"%d tool config folder%s in '%s' cannot be read inside (%s): a tool without its "
		"config may report \"not signed in\"",
		uncovered, uncovered == 1 ? "" : "s", cfgdir, names);
}

/* /etc entries readable by the sandboxed user but not world-readable. */
static void walk_etc(int dfd, const char *path, const struct grants *g, int depth, int *exposed,
		     int *hidden, char *first, char *example, size_t cap)
{
	DIR *dir = fdopendir(dfd);
	if (!dir) {
		close(dfd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		struct stat st;
		char child[PATH_MAX];
		if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    S_ISLNK(st.st_mode) ||
		    snprintf(child, sizeof(child), "%s/%s", path, de->d_name) >= (int)sizeof(child))
			continue;
		bool secret = !(st.st_mode & S_IROTH) &&
			      faccessat(dirfd(dir), de->d_name, R_OK, AT_EACCESS) == 0;
		if (secret) {
			if (grants_covers(g, child, GRANT_READ)) {
				if (!(*exposed)++)
					snprintf(first, cap, "%s", child);
			} else if (!(*hidden)++) {
				snprintf(example, cap, "%s", child);
			}
		}
		if (S_ISDIR(st.st_mode) && depth < 32) {
			int fd = openat(dirfd(dir), de->d_name,
					O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0)
				walk_etc(fd, child, g, depth + 1, exposed, hidden, first, example,
					 cap);
		}
	}
	closedir(dir);
}

/* The dotfiles everyday tools read from HOME that no grant covers (env.c). */
static void check_dotfiles(struct doctor *d, const struct run_ctx *ctx)
{
	const struct strv *u = &ctx->env.unseen;
	char list[1024];
	struct strbuf sb;
	strbuf_init(&sb, list, sizeof(list));
	strbuf_join(&sb, (const char *const *)u->v, u->n, "; ");
	if (!u->n)
		verdict(d, OK, "HOME dotfiles", NULL, "no tool dotfile in HOME is left out");
	else
		verdict(d, WARN, "HOME dotfiles",
			"--home-file NAME (or home_files) for those a step needs; never a file "
			"holding a secret the step must not have",
			"%zu tool dotfile%s in HOME cannot be read inside: %s", u->n,
			u->n == 1 ? "" : "s", list);
}

static void check_etc(struct doctor *d, const struct run_ctx *ctx, const char *etc)
{
	int exposed = 0, hidden = 0;
	char first[PATH_MAX] = "", example[PATH_MAX] = "";
	int fd = open(etc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		walk_etc(fd, "/etc", &ctx->grants, 0, &exposed, &hidden, first, example,
			 sizeof(first));
	if (exposed)
		verdict(d, FAIL, "/etc secrets",
			"run the step as a user without extra groups, or make those files "
			"world-readable only if they hold no secret",
			"%d file%s in /etc readable by this user but not world-readable would be "
			"readable inside, first '%s'",
			exposed, exposed == 1 ? "" : "s", first);
	else
		verdict(d, OK, "/etc secrets", NULL,
			"no /etc file readable by this user but not world-readable is granted "
			"(%d such file%s hidden from the sandbox%s%s)",
			hidden, hidden == 1 ? "" : "s", hidden ? ", e.g. " : "", example);
}

static void check_resolv(struct doctor *d, const struct run_ctx *ctx)
{
	char *target = realpath("/etc/resolv.conf", NULL);
	if (!target) {
		verdict(d, WARN, "resolv.conf", NULL,
			"/etc/resolv.conf does not resolve (%s): name lookups will fail",
			strerror(errno));
		return;
	}
	if (grants_covers(&ctx->grants, target, GRANT_READ))
		verdict(d, OK, "resolv.conf", NULL, "/etc/resolv.conf is '%s', which is granted",
			target);
	else
		verdict(d, FAIL, "resolv.conf", "--read the folder it points into",
			"/etc/resolv.conf is '%s', which no grant covers: DNS will fail", target);
	free(target);
}

static void check_missing(struct doctor *d, const struct run_ctx *ctx)
{
	int n = 0;
	for (size_t i = 0; i < ctx->grants.nskipped; i++) {
		const struct grant_skip *s = &ctx->grants.skipped[i];
		if (s->origin == ORIGIN_BASELINE || s->origin == ORIGIN_BASELINE_TARGET)
			continue;
		verdict(d, WARN, "policy paths", "create it, or remove it from the policy",
			"%s path '%s' is not granted: %s", grants_origin_name(s->origin), s->path,
			s->reason);
		n++;
	}
	if (!n)
		verdict(d, OK, "policy paths", NULL, "every path the policy names exists");
}

static bool routed(const char *name)
{
	/* routed or checked elsewhere; "_" is the shell's last command */
	static const char *const own[] = {
		"PATH",   "HOME",       "PWD", "OLDPWD", "SANDBOX_PERSISTENT_DIR",
		"TMPDIR", "MAVEN_OPTS", "_",   NULL};
	for (size_t i = 0; own[i]; i++)
		if (!strcmp(name, own[i]))
			return true;
	/*
	 * not a configuration file's: where a grant covers the user's own
	 * dotfile it is not routed, and an inherited value is checked
	 */
	for (size_t i = 0; env_routes[i].name; i++)
		if (!env_routes[i].config && !strcmp(name, env_routes[i].name))
			return true;
	return false;
}

/* A host's PIP_FIND_LINKS=/opt/wheels makes every pip install fail. */
static void check_env(struct doctor *d, const struct run_ctx *ctx, bool ns)
{
	int n = 0;
	for (size_t i = 0; i < ctx->env.env.n; i++) {
		const char *e = ctx->env.env.v[i];
		size_t nl = strcspn(e, "=");
		char name[256];
		snprintf(name, sizeof(name), "%.*s", (int)nl, e);
		if (routed(name) || e[nl + 1] != '/')
			continue;
		char *copy = strdup(e + nl + 1);
		for (char *save = NULL, *p = strtok_r(copy, ":", &save); p;
		     p = strtok_r(NULL, ":", &save)) {
			char *canon = p[0] == '/' ? realpath(p, NULL) : NULL;
			if (canon && !grants_covers(&ctx->grants, canon, GRANT_READ)) {
				char fix[PATH_MAX + 300];
				snprintf(fix, sizeof(fix), "--read %s, or --unset %s", canon, name);
				verdict(d, FAIL, "environment", fix,
					"%s names '%s', which no grant covers: a tool that reads "
					"it fails with %s",
					name, canon,
					ns ? "ENOENT (it is not there in "
					     "the step)"
					   : "EACCES");
				n++;
			}
			free(canon);
		}
		free(copy);
	}
	if (!n)
		verdict(d, OK, "environment", NULL,
			"no inherited variable names a path outside the grants");
}

int doctor_run(FILE *out, const struct stepbox_config *cfg, const struct run_ctx *ctx,
	       const char *etc_root, bool json)
{
	struct doctor d = {json_array(), 0, 0};
	bool ns = check_backends(&d, cfg, ctx);
	check_path(&d, ctx, ns);
	check_home_config(&d, ctx);
	check_dotfiles(&d, ctx);
	check_etc(&d, ctx, etc_root);
	check_resolv(&d, ctx);
	check_missing(&d, ctx);
	check_env(&d, ctx, ns);
	if (json) {
		json_t *root = json_pack("{s:i, s:O, s:i, s:i}", "version", 1, "checks", d.checks,
					 "failed", d.failed, "warnings", d.warned);
		json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', out);
		json_decref(root);
	} else {
		fprintf(out, "stepbox doctor: %d failed, %d warning%s\n", d.failed, d.warned,
			d.warned == 1 ? "" : "s");
		size_t i;
		json_t *c;
		json_array_foreach(d.checks, i, c)
		{
			const char *v = json_string_value(json_object_get(c, "verdict"));
			fprintf(out, "  %-5s %-14s %s\n",
				!strcmp(v, "ok")     ? "ok"
				: !strcmp(v, "warn") ? "WARN"
						     : "FAIL",
				json_string_value(json_object_get(c, "check")),
				json_string_value(json_object_get(c, "detail")));
			json_t *fix = json_object_get(c, "fix");
			if (fix)
				fprintf(out, "  %-5s %-14s fix: %s\n", "", "",
					json_string_value(fix));
		}
	}
	json_decref(d.checks);
	return d.failed;
}
