/*
 * floor: the least a Landlock launcher can do, for bench/startup.sh. Reads
 * "ACCESS PATH" lines (ACCESS as stepbox policy prints it: r, rx, rw+dev,
 * rwx...), builds the same ruleset stepbox would, forks, sets no_new_privs,
 * restricts itself and execs. Nothing else: no policy parsing, no baseline,
 * no environment, no hardening, no diagnostics.
 *
 * usage: floor RULES-FILE COMMAND [ARG...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "grants.h"
#include "landlock.h"

static unsigned parse_access(const char *s)
{
	unsigned a = 0;
	for (; *s && *s != '+'; s++)
		a |= *s == 'r' ? GRANT_READ : *s == 'w' ? GRANT_WRITE : *s == 'x' ? GRANT_EXEC : 0;
	return a | (strstr(s, "dev") ? GRANT_DEV : 0);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 125;
	struct landlock_features f;
	if (landlock_probe(&f, NULL, NULL) < 0 || f.abi <= 0)
		return 125;
	struct grants g = {0};
	FILE *in = fopen(argv[1], "re");
	char acc[32], path[4096];
	while (in && fscanf(in, "%31s %4095s", acc, path) == 2) {
		if (g.n == g.cap) {
			g.cap = g.cap ? g.cap * 2 : 256;
			g.v = realloc(g.v, g.cap * sizeof(*g.v));
		}
		g.v[g.n++] = (struct grant){.path = strdup(path),
					    .requested = strdup(path),
					    .access = parse_access(acc),
					    .origin = ORIGIN_POLICY,
					    .exists = true};
	}
	if (in)
		fclose(in);
	struct stepbox_config cfg; /* defaults: network allowed, as stepbox's default */
	policy_init(&cfg);
	struct landlock_tcp tcp = {false, NULL, NULL};
	int fd = landlock_build(&f, &g, &cfg, &tcp, NULL);
	if (fd < 0)
		return 125;
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		if (landlock_enforce(fd, 0) < 0)
			_exit(125);
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
