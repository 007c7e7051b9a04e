/* command.c: finding the command as execvp would, relative to the workdir. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "command.h"
#include "launch.h"
#include "tap.h"

static char root[64];

static void file(const char *rel, mode_t mode)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd >= 0)
		close(fd);
	chmod(p, mode);
}

static const char *found(const char *argv0, const char *path_env, int want)
{
	static char *out;
	free(out);
	out = NULL;
	int r = command_resolve(argv0, path_env, root, &out);
	if (r != want)
		printf("# %s: got %d, want %d\n", argv0, r, want);
	if (r != want)
		return "(wrong result)";
	if (!out)
		return "";
	return strncmp(out, root, strlen(root)) == 0 ? out + strlen(root) : out;
}

int main(void)
{
	snprintf(root, sizeof(root), "/tmp/stepbox-launch.XXXXXX");
	if (!mkdtemp(root))
		return 1;
	char p[256];
	const char *dirs[] = {"a", "b", "w", "w/bin"};
	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", root, dirs[i]);
		mkdir(p, 0755);
	}
	file("a/tool", 0644); /* found first, not executable */
	file("b/tool", 0755);
	file("b/only", 0755);
	file("a/noexec", 0644);
	file("w/bin/rel", 0755);
	snprintf(p, sizeof(p), "%s/b/adir", root);
	mkdir(p, 0755);
	char path_ab[512];
	snprintf(path_ab, sizeof(path_ab), "%s/a:%s/b", root, root);

	/* the first executable match in PATH order, past a non-executable one */
	CHECK_STR(found("tool", path_ab, 0), "/b/tool");
	CHECK_STR(found("only", path_ab, 0), "/b/only");
	/* only non-executable matches: -EACCES naming the first (exit 126, not 127) */
	if (geteuid() != 0)
		CHECK_STR(found("noexec", path_ab, -EACCES), "/a/noexec");
	/* nothing: -ENOENT (127) */
	CHECK_STR(found("missing", path_ab, -ENOENT), "");
	/* a folder of that name is not a command */
	CHECK_STR(found("adir", path_ab, -ENOENT), "");
	/* a name with a slash is not searched: absolute as is, relative to the workdir */
	CHECK_STR(found("/bin/sh", path_ab, 0), "/bin/sh");
	CHECK_STR(found("w/bin/rel", path_ab, 0), "/w/bin/rel");
	/* an empty PATH entry and a relative one mean the workdir and beneath it */
	CHECK_STR(found("rel", ":", -ENOENT), "");
	CHECK_STR(found("rel", "w/bin", 0), "/w/bin/rel");
	file("here", 0755);
	CHECK_STR(found("here", "/nonexistent:", 0), "/here");
	/* an empty name is never found */
	CHECK_STR(found("", path_ab, -ENOENT), "");
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", root);
	return tap_done();
}
