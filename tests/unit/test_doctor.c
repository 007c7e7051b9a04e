/* doctor.c: each check's verdict on a fake tree (PATH, HOME, /etc, the environment). */
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor.h"
#include "tap.h"

static char root[128];

static char *at(const char *rel)
{
	static char p[4][PATH_MAX];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", root, rel);
	return p[k];
}

static void file(const char *rel, mode_t mode)
{
	int fd = open(at(rel), O_CREAT | O_WRONLY | O_CLOEXEC, mode);
	if (fd >= 0) {
		fchmod(fd, mode);
		close(fd);
	}
}

static void grant(struct grants *g, const char *path, unsigned access)
{
	g->v = realloc(g->v, (g->n + 1) * sizeof(*g->v));
	g->v[g->n++] = (struct grant){.path = strdup(path),
				      .requested = strdup(path),
				      .access = access,
				      .origin = ORIGIN_POLICY,
				      .exists = true};
}

/* The doctor's JSON for ctx, and its return (the failed checks). */
static json_t *doctor(const struct stepbox_config *cfg, const struct run_ctx *ctx, int *failed)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	*failed = doctor_run(m, cfg, ctx, at("etc"), true);
	fclose(m);
	json_t *j = json_loads(buf, 0, NULL);
	free(buf);
	return j;
}

/* The check named name: its verdict, and whether its detail holds want. */
static const char *verdict(json_t *j, const char *name, const char *want, bool *has)
{
	size_t i;
	json_t *c;
	*has = false;
	json_array_foreach(json_object_get(j, "checks"), i, c)
	{
		if (strcmp(json_string_value(json_object_get(c, "check")), name) != 0)
			continue;
		const char *detail = json_string_value(json_object_get(c, "detail"));
		*has = !want || (detail && strstr(detail, want));
		if (!*has)
			printf("# %s: %s\n", name, detail);
		return json_string_value(json_object_get(c, "verdict"));
	}
	return NULL;
}

int main(void)
{
	snprintf(root, sizeof(root), "/tmp/stepbox-doctor.XXXXXX");
	if (!mkdtemp(root))
		return 1;
	char *real = realpath(root, NULL);
	if (!real || strlen(real) >= sizeof(root))
		return 1;
	memcpy(root, real, strlen(real) + 1);
	free(real);
	const char *dirs[] = {"bin", "tools",   "home", "home/.config", "home/.config/gh",
			      "etc", "etc/sub", "opt",  "opt/wheels"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++)
		mkdir(at(dirs[i]), 0755);
	file("home/.gitconfig", 0644);
	file("etc/world", 0644);
	file("etc/sub/secret", 0600); /* readable by this user, not by others */

	struct stepbox_config cfg;
	policy_init(&cfg);
	struct run_ctx ctx;
	memset(&ctx, 0, sizeof(ctx));
	struct stepbox_err err = {0};
	layers_host(&ctx.host, true, &err);
	grant(&ctx.grants, at("bin"), GRANT_READ | GRANT_EXEC);
	grant(&ctx.grants, at("opt"), GRANT_READ);
	char *e[6];
	e[0] = strv_fmt("PATH=%s:%s", at("bin"), at("tools"));
	e[1] = strv_fmt("HOME=%s", at("home"));
	e[2] = strv_fmt("PIP_FIND_LINKS=%s", at("opt/wheels"));
	e[3] = strv_fmt("NODE_EXTRA_CA_CERTS=%s", at("tools"));
	e[4] = strdup("NOT_A_PATH=relative/thing");
	for (int i = 0; i < 5; i++)
		strv_push_owned(&ctx.env.env, e[i]);
	/* what env_build finds of HOME's dotfiles (test_env) */
	strv_push(&ctx.env.unseen, "~/.gitconfig (git commits carry no identity of the user's)");
	ctx.grants.skipped = calloc(1, sizeof(*ctx.grants.skipped));
	ctx.grants.skipped[0] = (struct grant_skip){strdup(at("gone")), ORIGIN_POLICY,
						    strdup("does not exist"), true};
	ctx.grants.nskipped = 1;

	int failed;
	bool has;
	json_t *j = doctor(&cfg, &ctx, &failed);
	CHECK(j != NULL);
	/* a PATH folder no execute grant covers fails, naming it; a covered one does not */
	CHECK_STR(verdict(j, "PATH", "tools", &has), "fail");
	CHECK(has);
	/* tool configs and dotfiles outside the grants: warned, by name */
	CHECK_STR(verdict(j, "HOME/.config", "gh", &has), "warn");
	CHECK(has);
	CHECK_STR(verdict(j, "HOME dotfiles", ".gitconfig", &has), "warn");
	CHECK(has);
	/* a variable naming a folder no grant covers fails; one inside a grant does not */
	CHECK_STR(verdict(j, "environment", "NODE_EXTRA_CA_CERTS", &has), "fail");
	CHECK(has);
	char *all = json_dumps(j, 0);
	CHECK(all && !strstr(all, "PIP_FIND_LINKS names"));
	free(all);
	/* a path the policy names that is not there: warned */
	CHECK_STR(verdict(j, "policy paths", "gone", &has), "warn");
	CHECK(has);
	/* /etc not granted: the secret is hidden, said as such */
	CHECK_STR(verdict(j, "/etc secrets", "1 such file hidden", &has), "ok");
	CHECK(has);
	CHECK(verdict(j, "backends", NULL, &has) != NULL && verdict(j, "resolv.conf", NULL, &has));
	/* the return is the failed checks */
	size_t i, nfail = 0;
	json_t *c;
	json_array_foreach(json_object_get(j, "checks"), i, c) nfail +=
		strcmp(json_string_value(json_object_get(c, "verdict")), "fail") == 0;
	CHECK((size_t)failed == nfail &&
	      json_integer_value(json_object_get(j, "failed")) == failed);
	json_decref(j);

	/* /etc granted whole: the secret would be readable inside, which fails, named */
	grant(&ctx.grants, "/etc", GRANT_READ);
	/* and PIP_FIND_LINKS outside every grant once opt is gone */
	free(ctx.grants.v[1].path);
	ctx.grants.v[1].path = strdup(at("nowhere"));
	/* and the tools folder granted for execution: PATH passes */
	grant(&ctx.grants, at("tools"), GRANT_READ | GRANT_EXEC);
	j = doctor(&cfg, &ctx, &failed);
	CHECK_STR(verdict(j, "/etc secrets", "/etc/sub/secret", &has), "fail");
	CHECK(has);
	CHECK_STR(verdict(j, "environment", "PIP_FIND_LINKS", &has), "fail");
	CHECK(has);
	CHECK_STR(verdict(j, "PATH", "every PATH folder", &has), "ok");
	CHECK(has);
	json_decref(j);

	for (size_t k = 0; k < ctx.grants.n; k++) {
		free(ctx.grants.v[k].path);
		free(ctx.grants.v[k].requested);
	}
	free(ctx.grants.v);
	free(ctx.grants.skipped[0].path);
	free(ctx.grants.skipped[0].reason);
	free(ctx.grants.skipped);
	strv_release(&ctx.env.env);
	strv_release(&ctx.env.unseen);
	policy_release(&cfg);
	unlink(at("home/.gitconfig"));
	unlink(at("etc/world"));
	unlink(at("etc/sub/secret"));
	for (size_t k = sizeof(dirs) / sizeof(*dirs); k-- > 0;)
		rmdir(at(dirs[k]));
	rmdir(root);
	return tap_done();
}
