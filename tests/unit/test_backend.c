/*
 * backend.c and the build's backends: the table, choosing (a forced backend,
 * auto's order, a backend not in this build), and one backend's plan and
 * apply in a child, each refusal beside a positive control.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "tap.h"
#ifdef STEPBOX_LINUX
#include "layers.h"
#else
#include "seatbelt.h"
#endif

static char root[64];

static char *at(const char *rel)
{
	static char buf[4][256];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", root, rel);
	return buf[k];
}

static void file(const char *rel, const char *text)
{
	int fd = open(at(rel), O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (fd >= 0) {
		ssize_t w = write(fd, text, strlen(text));
		(void)w;
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

/* Every backend has every operation, once, and auto never picks none. */
static void table(void)
{
	size_t n = 0;
	bool complete = true, distinct = true;
	for (size_t i = 0; backend_table[i]; i++, n++) {
		const struct backend_ops *o = backend_table[i];
		complete &=
			o->probe && o->plan && o->apply && o->describe && o->missing && o->release;
		for (size_t j = 0; j < i; j++)
			distinct &= backend_table[j]->name != o->name;
		CHECK(backend_find(o->name) == o);
	}
	CHECK(n > 0);
	CHECK(complete);
	CHECK(distinct);
	CHECK(backend_find(BACKEND_AUTO) == NULL);
}

/* A child's exit status, or -1. */
static int waited(pid_t pid)
{
	int st;
	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#ifdef STEPBOX_LINUX
/* 0 when path can be opened for reading, else its errno. */
static int can_read(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static void linux_backends(void)
{
	struct stepbox_config cfg;
	policy_init(&cfg);
	struct stepbox_err err = {0};
	struct backend_host host;
	CHECK(layers_host(&host, false, &err) == 0);
	struct backend b;

	/* a backend of another build: refused, naming where it runs */
	cfg.backend = BACKEND_SEATBELT;
	CHECK(backend_choose(&cfg, &host, &b, &err) == -EOPNOTSUPP);
	CHECK_HAS(err.msg, "macOS");
	CHECK_HAS(err.hint, "policy --format sbpl");

	/* no Landlock here (a kernel without it): auto skips both Landlock backends */
	struct backend_host bare = host;
	bare.features.abi = bare.features.kernel_abi = 0;
	bare.features.kernel_errno = ENOSYS;
	cfg.backend = BACKEND_AUTO;
	memset(&err, 0, sizeof(err));
	CHECK(backend_choose(&cfg, &bare, &b, &err) == 0);
	CHECK(b.name == BACKEND_MOUNTNS && b.layers.ns && !b.layers.landlock &&
	      b.layers.refuse_sysv == false);
	/* ... recording what it passed over, and why */
	CHECK(b.ntried == 2 && b.tried[0].name == BACKEND_STACKED &&
	      b.tried[1].name == BACKEND_LANDLOCK && !b.tried[0].at_start);
	CHECK_HAS(b.tried[1].why.msg, "landlock: this kernel has no Landlock");
	/* ... and a forced one says why, and what would help */
	cfg.backend = BACKEND_LANDLOCK;
	CHECK(backend_choose(&cfg, &bare, &b, &err) == -EOPNOTSUPP);
	CHECK_HAS(err.msg, "landlock: this kernel has no Landlock");
	CHECK_HAS(err.hint, "Linux 5.13");
	/* ... and with a port list nothing is left: mountns has no port filter */
	cfg.backend = BACKEND_AUTO;
	cfg.net = NET_TCP;
	CHECK(backend_choose(&cfg, &bare, &b, &err) == -EOPNOTSUPP);
	CHECK_HAS(err.msg, "no sandbox backend here");
	CHECK_HAS(err.msg, "TCP port policy");
	/* ... and where Landlock is here but too old for ports, the hint says that */
	struct backend_host old = host;
	old.features.abi = 3;
	landlock_degrade(&old.features);
	CHECK(old.features.net == 0);
	CHECK(backend_choose(&cfg, &old, &b, &err) == -EOPNOTSUPP);
	CHECK_HAS(err.msg, "needs Landlock ABI 4");
	CHECK_HAS(err.hint, "--net none or --net allow");
	CHECK(!strstr(err.hint, "Linux 5.13"));
	/* ... and where only the cap hides it, the hint names the cap */
	old.features.abi = 0;
	landlock_degrade(&old.features);
	CHECK(backend_choose(&cfg, &old, &b, &err) == -EOPNOTSUPP);
	CHECK_HAS(err.hint, "unset STEPBOX_LANDLOCK_ABI");
	cfg.net = NET_NONE;

	/* the positive control: this kernel's Landlock (the test machine has it) */
	if (host.features.abi <= 0) {
		printf("ok %d - # SKIP this kernel has no Landlock\n", ++tap_count);
		return;
	}
	cfg.backend = BACKEND_LANDLOCK;
	CHECK(backend_choose(&cfg, &host, &b, &err) == 0);
	CHECK(b.name == BACKEND_LANDLOCK && b.layers.landlock && !b.layers.ns &&
	      b.layers.refuse_sysv);
	char what[256];
	backend_describe(&b, what, sizeof(what));
	CHECK_HAS(what, "landlock: Landlock");
	struct strv m = STRV_INIT;
	CHECK(backend_missing(&b, &m) == 0 && strv_find(&m, "private-tmp") >= 0);
	strv_release(&m);

	/* plan: a ruleset granting one folder; apply in the command's process */
	mkdir(at("in"), 0755);
	mkdir(at("out"), 0755);
	file("in/f", "in");
	file("out/f", "out");
	struct grants g = {0};
	grant(&g, at("in"), GRANT_READ);
	struct backend_input in = {.cfg = &cfg, .grants = &g, .idmap_userns = -1};
	CHECK(backend_plan(&b, &in, &err) == 0 && b.built && b.built->ruleset >= 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct backend_failure why = {0};
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		/* nothing in the init; the ruleset in the command */
		if (b.ops->apply(&b, BACKEND_IN_INIT, &why) < 0 || can_read(at("out/f")) != 0)
			_exit(1);
		if (b.ops->apply(&b, BACKEND_IN_COMMAND, &why) < 0)
			_exit(2);
		_exit(can_read(at("in/f")) != 0 ? 3 : can_read(at("out/f")) != EACCES ? 4 : 0);
	}
	int st = waited(pid);
	if (st != 0)
		printf("# child: %d\n", st);
	CHECK(st == 0);
	/* outside the child, nothing was applied */
	CHECK(can_read(at("out/f")) == 0);

	/* a failure names what, and how to go on */
	struct backend broken = b;
	struct backend_built none_built = *b.built;
	none_built.ruleset = -1;
	broken.built = &none_built;
	struct backend_failure why = {0};
	CHECK(broken.ops->apply(&broken, BACKEND_IN_COMMAND, &why) == -EBADF);
	CHECK(why.errnum == EBADF && !why.layers);
	CHECK_HAS(why.detail, "cannot enforce the Landlock ruleset");
	CHECK_HAS(why.hint, "STEPBOX_LANDLOCK_ABI");
	backend_release(&b);
	CHECK(b.built == NULL);
	backend_release(&b); /* twice: nothing left to release */
	grants_release(&g);

	/* none: chosen only when asked, and says what it lacks */
	cfg.backend = BACKEND_NONE;
	CHECK(backend_choose(&cfg, &host, &b, &err) == 0 && !b.layers.ns && !b.layers.landlock);
	CHECK(backend_missing(&b, &m) == 0 && m.n == 1 && strcmp(m.v[0], "filesystem") == 0);
	strv_release(&m);
}
#else
static void seatbelt_backend(void)
{
	struct stepbox_config cfg;
	policy_init(&cfg);
	struct stepbox_err err = {0};
	struct backend b;
	/* a stand-in runner: sandbox-exec's command line, the command after "--" */
	file("runner", "#!/bin/sh\n[ \"$1\" = -p ] && [ \"$3\" = -- ] || exit 99\n"
		       "printf '%s' \"$2\" >\"$0.profile\"\nshift 3\nexec \"$@\"\n");
	struct backend_host none = {at("no-runner")}, here = {at("runner")};

	cfg.backend = BACKEND_STACKED;
	CHECK(backend_choose(&cfg, &here, &b, &err) == -EOPNOTSUPP);
	CHECK_HAS(err.msg, "the stacked backend is Linux's");
	cfg.backend = BACKEND_AUTO;
	CHECK(backend_choose(&cfg, &none, &b, &err) == -EOPNOTSUPP);
	CHECK_HAS(err.msg, "no-runner");
	cfg.limits.v[LIMIT_MEMORY] = 1 << 20;
	CHECK(backend_choose(&cfg, &here, &b, &err) == -EOPNOTSUPP);
	CHECK_HAS(err.msg, "the memory limit cannot be enforced");
	cfg.limits.v[LIMIT_MEMORY] = 0;
	CHECK(backend_choose(&cfg, &here, &b, &err) == 0 && b.name == BACKEND_SEATBELT);

	struct grants g = {0};
	grant(&g, root, GRANT_READ);
	char *argv[] = {"echo", "hi", NULL}, *envp[] = {"PATH=/usr/bin:/bin", NULL};
	struct backend_input in = {.cfg = &cfg,
				   .grants = &g,
				   .idmap_userns = -1,
				   .file = "/bin/echo",
				   .argv = argv,
				   .envp = envp};
	CHECK(backend_plan(&b, &in, &err) == 0);
	CHECK(b.built != NULL);
	CHECK_HAS(b.built->profile, "(deny default)");
	int p[2];
	CHECK(pipe(p) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct backend_failure why = {0};
		dup2(p[1], 1);
		b.ops->apply(&b, BACKEND_IN_INIT, &why); /* nothing: no init on a Mac */
		b.ops->apply(&b, BACKEND_IN_COMMAND, &why);
		_exit(100 + why.errnum);
	}
	close(p[1]);
	char out[16] = "";
	ssize_t n = read(p[0], out, sizeof(out) - 1);
	close(p[0]);
	CHECK(waited(pid) == 0 && n == 3 && strcmp(out, "hi\n") == 0);
	char *kept = NULL;
	size_t len = 0;
	FILE *f = fopen(at("runner.profile"), "r");
	CHECK(f && getdelim(&kept, &len, '\0', f) > 0 && strcmp(kept, b.built->profile) == 0);
	if (f)
		fclose(f);
	free(kept);
	/* the runner gone: apply says so */
	struct backend gone = b;
	gone.host = &none;
	struct backend_failure why = {0};
	CHECK(gone.ops->apply(&gone, BACKEND_IN_COMMAND, &why) == -ENOENT);
	CHECK_HAS(why.detail, "no-runner");
	backend_release(&b);
	CHECK(b.built == NULL);
	grants_release(&g);
}
#endif

#ifdef STEPBOX_LINUX
/*
 * auto's second chance: stacked failed to start for a cause the probe
 * names; the next backend is Landlock alone, and the record says why.
 * Where nothing is left (mountns failed so, no Landlock), every attempt.
 */
static void fall_back(void)
{
	struct stepbox_config cfg;
	policy_init(&cfg);
	struct stepbox_err err = {0}, why = {0};
	struct backend_host host;
	CHECK(layers_host(&host, false, &err) == 0);
	if (host.features.abi < 1) {
		printf("ok %d - # SKIP auto's fallback to Landlock alone: no Landlock here\n",
		       ++tap_count);
		return;
	}
	struct backend b;
	CHECK(backend_choose(&cfg, &host, &b, &err) == 0);
	CHECK(b.name == BACKEND_STACKED && b.ntried == 0);
	err_set(&why, ERR_UNAVAILABLE, EPERM, "namespaces: cannot mount a new /proc");
	CHECK(backend_fall_back(&cfg, &host, &b, &why, &err) == 0);
	CHECK(b.name == BACKEND_LANDLOCK && b.layers.landlock && !b.layers.ns && host.probe_ns);
	CHECK(b.ntried == 1 && b.tried[0].name == BACKEND_STACKED && b.tried[0].at_start);
	CHECK_HAS(b.tried[0].why.msg, "stacked: namespaces: cannot mount a new /proc");

	/* no Landlock: auto took mountns, which the host then refused: 125, saying all */
	struct backend_host bare = host;
	bare.features.abi = bare.features.kernel_abi = 0;
	bare.features.kernel_errno = ENOSYS;
	CHECK(backend_choose(&cfg, &bare, &b, &err) == 0);
	CHECK(b.name == BACKEND_MOUNTNS);
	err_set(&why, ERR_UNAVAILABLE, ENOSPC, "cannot create user and mount namespaces");
	memset(&err, 0, sizeof(err));
	CHECK(backend_fall_back(&cfg, &bare, &b, &why, &err) == -EOPNOTSUPP);
	CHECK(b.name == BACKEND_NONE);
	CHECK_HAS(err.msg, "no sandbox backend here");
	CHECK_HAS(err.msg, "landlock: this kernel has no Landlock");
	CHECK_HAS(err.msg, "mountns: cannot create user and mount namespaces");
}
#endif

int main(void)
{
	snprintf(root, sizeof(root), "/tmp/stepbox-backend.XXXXXX");
	if (!mkdtemp(root))
		return 1;
	chmod(root, 0755);
	table();
#ifdef STEPBOX_LINUX
	linux_backends();
	fall_back();
#else
	seatbelt_backend();
#endif
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", root);
	return tap_done();
}
