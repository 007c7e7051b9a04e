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

#include "env.h"
#include "grants.h"
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

/* command.h */
char *command_interpreter(const char *file)
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
int command_exec_failure(command_may_exec *may, const void *arg, const char *file, int errnum,
			 struct stepbox_err *err)
{
	char *canon = realpath(file, NULL);
	const char *shown = canon ? canon : file;
	char *interp = NULL, *icanon = NULL;
	struct stat st;
	if (stat(file, &st) == 0 && S_ISDIR(st.st_mode)) {
		err_set(err, ERR_CANNOT_EXEC, 0, "cannot execute '%s': it is a directory", shown);
	} else if ((errnum == EACCES || errnum == ENOENT) && canon && !may(arg, canon)) {
		/* Landlock answers EACCES; under mountns an ungranted file is not there */
		err_set(err, ERR_CANNOT_EXEC, 0,
			"cannot execute '%s': the sandbox refused it: it "
			"lies outside every execute grant",
			shown);
		char *home = getenv("HOME") ? realpath(getenv("HOME"), NULL) : NULL;
		char root[PATH_MAX];
		const char *tool = home && strcmp(home, "/") != 0
					   ? grants_home_tool(canon, home, root, sizeof(root))
					   : NULL;
		if (tool)
			err_hint(err,
				 "a tool installed in HOME by %s, which runs more of its "
				 "installation than this file; grant it whole, read-only, with "
				 "--read %s, or put the system's first on PATH",
				 tool, root);
		else /* the file itself, as --explain proposes: never the folder around it */
			err_hint(err,
				 "grant it with --read %s (or a read_paths entry), or add its "
				 "folder to SANDBOX_EXTRA_SYSTEM_PATHS",
				 shown);
		free(home);
	} else if ((errnum == EACCES || errnum == ENOENT) && canon &&
		   (interp = command_interpreter(canon))) {
		icanon = realpath(interp, NULL);
		if (!icanon) {
			err_set(err, ERR_NOT_FOUND, 0,
				"cannot execute '%s': its interpreter '%s' "
				"does not exist",
				shown, interp);
		} else if (!may(arg, icanon)) {
			/* a denial, whatever errno the backend gave */
			err_set(err, ERR_CANNOT_EXEC, 0,
				"cannot execute '%s': the sandbox refused "
				"its interpreter '%s': it lies outside every execute grant",
				shown, icanon);
			err_hint(err,
				 "grant it with --read %s (or a read_paths entry), or add its "
				 "folder to SANDBOX_EXTRA_SYSTEM_PATHS",
				 icanon);
		} else {
			err_set(err, errnum == ENOENT ? ERR_NOT_FOUND : ERR_CANNOT_EXEC, errnum,
				"cannot execute '%s'", shown);
		}
	} else {
		err_set(err, errnum == ENOENT ? ERR_NOT_FOUND : ERR_CANNOT_EXEC, errnum,
			"cannot execute '%s'", shown);
	}
	free(interp);
	free(icanon);
	free(canon);
	return -(errnum ? errnum : EACCES);
}

int command_check(command_may_exec *may, const void *arg, const char *file, struct stepbox_err *err)
{
	char *canon = realpath(file, NULL);
	int errnum = canon && may(arg, canon) ? 0 : EACCES;
	char *interp = errnum ? NULL : command_interpreter(canon);
	if (interp) {
		char *icanon = realpath(interp, NULL);
		errnum = !icanon ? ENOENT : may(arg, icanon) ? 0 : EACCES;
		free(icanon);
	}
	free(interp);
	free(canon);
	return errnum ? command_exec_failure(may, arg, file, errnum, err) : 0;
}

int command_find(const char *argv0, char *const *envp, const char *workdir, char **file,
		 struct stepbox_err *err)
{
	int r = command_resolve(argv0, env_get(envp, "PATH"), workdir, file);
	if (r == -ENOENT)
		return err_set(err, ERR_NOT_FOUND, 0, "command not found: '%s'", argv0);
	if (r == -EACCES) {
		err_set(err, ERR_CANNOT_EXEC, EACCES, "cannot execute '%s'", *file);
		free(*file);
		*file = NULL;
		return -EACCES;
	}
	return r < 0 ? err_set(err, ERR_UNAVAILABLE, -r, "resolve '%s'", argv0) : 0;
}

int command_status(int status)
{
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}
