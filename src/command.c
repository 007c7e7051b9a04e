/* command: see command.h. */
#include "command.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strv.h"

int command_resolve(const char *argv0, const char *path_env, const char *workdir, char **out)
{
	*out = NULL;
	if (!*argv0)
		return -ENOENT;
	if (strchr(argv0, '/')) {
		*out = argv0[0] == '/' ? strdup(argv0) : strv_fmt("%s/%s", workdir, argv0);
		return *out ? 0 : -ENOMEM;
	}
	/* execvp's default when PATH is unset */
	const char *p = path_env ? path_env : "/bin:/usr/bin";
	char *denied = NULL;
	while (p) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		char dir[PATH_MAX];
		if (len == 0)
			snprintf(dir, sizeof(dir), "%s", workdir);
		else if (p[0] != '/')
			snprintf(dir, sizeof(dir), "%s/%.*s", workdir, (int)len, p);
		else
			snprintf(dir, sizeof(dir), "%.*s", (int)len, p);
		p = colon ? colon + 1 : NULL;
		char cand[PATH_MAX];
		if (snprintf(cand, sizeof(cand), "%s/%s", dir, argv0) >= (int)sizeof(cand))
			continue;
		struct stat st;
		if (stat(cand, &st) < 0 || S_ISDIR(st.st_mode))
			continue;
		if (access(cand, X_OK) == 0) {
			free(denied);
			*out = strdup(cand);
			return *out ? 0 : -ENOMEM;
		}
		if (!denied)
			denied = strdup(cand);
	}
	*out = denied;
	return denied ? -EACCES : -ENOENT;
}

/* The interpreter named by a "#!" line, or NULL. */
static char *shebang(const char *file)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	char buf[256];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 3 || buf[0] != '#' || buf[1] != '!')
		return NULL;
	buf[n] = '\0';
	char *p = buf + 2;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t len = strcspn(p, " \t\n");
	return len ? strndup(p, len) : NULL;
}

/*
 * Incident 1: PATH found the binary, the kernel refused it (126), and nothing
 * said why. Say which file, that the sandbox refused it, and how to grant it.
 */
int command_exec_failure(command_may_exec *may, const void *arg, const char *file, int errnum)
{
	char *canon = realpath(file, NULL);
	const char *shown = canon ? canon : file;
	struct stat st;
	if (stat(file, &st) == 0 && S_ISDIR(st.st_mode)) {
		fprintf(stderr, "stepbox: cannot execute '%s': it is a directory\n", shown);
		free(canon);
		return 126;
	}
	/* Landlock answers EACCES; under mountns an ungranted file is not there */
	if ((errnum == EACCES || errnum == ENOENT) && canon &&
	    !may(arg, canon)) {
		char *dir = strdup(canon);
		char *slash = dir ? strrchr(dir, '/') : NULL;
		if (slash && slash != dir)
			*slash = '\0';
		fprintf(stderr,
			"stepbox: cannot execute '%s': the sandbox refused it: it lies outside "
			"every execute grant\n"
			"hint: grant its folder with --read %s (or a read_paths entry), or add it "
			"to SANDBOX_EXTRA_SYSTEM_PATHS\n",
			shown, dir ? dir : shown);
		free(dir);
		free(canon);
		return 126;
	}
	char *interp = canon ? shebang(canon) : NULL;
	char *icanon = interp ? realpath(interp, NULL) : NULL;
	if (interp && (errnum == EACCES || errnum == ENOENT)) {
		if (!icanon)
			fprintf(stderr,
				"stepbox: cannot execute '%s': its interpreter '%s' does not "
				"exist\n",
				shown, interp);
		else if (!may(arg, icanon)) {
			fprintf(stderr,
				"stepbox: cannot execute '%s': the sandbox refused its interpreter "
				"'%s': it lies outside every execute grant\n"
				"hint: grant it with --read or SANDBOX_EXTRA_SYSTEM_PATHS\n",
				shown, icanon);
			errnum = EACCES; /* a denial, whatever errno the backend gave */
		}
		else
			fprintf(stderr, "stepbox: cannot execute '%s': %s\n", shown,
				strerror(errnum));
	} else {
		fprintf(stderr, "stepbox: cannot execute '%s': %s\n", shown, strerror(errnum));
	}
	free(interp);
	free(icanon);
	free(canon);
	return errnum == ENOENT ? 127 : 126;
}

int command_check(command_may_exec *may, const void *arg, const char *file)
{
	char *canon = realpath(file, NULL);
	int errnum = canon && may(arg, canon) ? 0 : EACCES;
	char *interp = errnum ? NULL : shebang(canon);
	if (interp) {
		char *icanon = realpath(interp, NULL);
		errnum = !icanon ? ENOENT : may(arg, icanon) ? 0 : EACCES;
		free(icanon);
	}
	free(interp);
	free(canon);
	return errnum ? command_exec_failure(may, arg, file, errnum) : 0;
}

int command_find(const char *argv0, char *const *envp, const char *workdir, char **file)
{
	const char *path_env = NULL;
	for (char *const *e = envp; *e; e++)
		if (strncmp(*e, "PATH=", 5) == 0)
			path_env = *e + 5;
	int r = command_resolve(argv0, path_env, workdir, file);
	if (r == -ENOENT) {
		fprintf(stderr, "stepbox: command not found: '%s'\n", argv0);
		return 127;
	}
	if (r == -EACCES) {
		fprintf(stderr, "stepbox: cannot execute '%s': %s\n", *file, strerror(EACCES));
		free(*file);
		*file = NULL;
		return 126;
	}
	return r;
}

int command_status(int status)
{
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}
