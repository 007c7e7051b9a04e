#include "pipes.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path.h"

static int find(struct pipes_search *s, int dfd, const char *name, char *path, int depth)
{
	struct path_dir d;
	if (depth > PIPES_DEPTH)
		return 2;
	int o = path_dir_open(&d, dfd, name);
	if (o < 0) /* not a folder, or gone: nothing beneath it; unlistable: not searched */
		return o == -EACCES || o == -EPERM ? 2 : 0;
	size_t len = strlen(path);
	int r = 0, cut = 0;
	struct path_entry de;
	while ((r == 0 || r == 2) && path_dir_next(&d, &de)) {
		if (r == 2)
			cut = 2, r = 0; /* a folder not searched: its siblings still are */
		if (s->budget == 0) {
			r = 1;
			break;
		}
		s->budget--;
		unsigned char type = de.type;
		struct stat st;
		if (type == DT_UNKNOWN && fstatat(d.fd, de.name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			type = S_ISFIFO(st.st_mode)  ? DT_FIFO
			       : S_ISDIR(st.st_mode) ? DT_DIR
						     : DT_REG;
		if (type != DT_FIFO && type != DT_DIR)
			continue;
		if (len + 1 + strlen(de.name) >= PATH_MAX) {
			r = 2; /* not looked at: said */
			continue;
		}
		snprintf(path + len, PATH_MAX - len, "/%s", de.name);
		if (!s->skip(s->arg, path))
			r = type == DT_FIFO ? s->found(s->arg, path)
					    : find(s, d.fd, de.name, path, depth + 1);
		path[len] = '\0';
	}
	path_dir_close(&d);
	return r == 0 ? cut : r;
}

int pipes_find(struct pipes_search *s, int dfd, const char *name, char *path)
{
	return find(s, dfd, name, path, 0);
}

/* The file that keeps the folders already said, or NULL (no state folder here). */
static char *said_file(void)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	/* canonical: the folders are made without following a symlink */
	char *base = xdg && xdg[0] == '/'     ? realpath(xdg, NULL)
		     : home && home[0] == '/' ? realpath(home, NULL)
					      : NULL;
	char *dir = !base || !strcmp(base, "/") ? NULL
		    : xdg && xdg[0] == '/'      ? strv_fmt("%s/stepbox", base)
						: strv_fmt("%s/.local/state/stepbox", base);
	free(base);
	if (!dir)
		return NULL;
	int fd = path_mkdir_nofollow(dir, 0700, NULL, 0);
	char *file = fd >= 0 ? strv_fmt("%s/pipes-unsearched", dir) : NULL;
	if (fd >= 0)
		close(fd);
	free(dir);
	return file;
}

/* Whether line is one of text's lines (text may be NULL). */
static bool said_before(const char *text, const char *line)
{
	bool yes = false;
	for (const char *l = text; l && *l && !yes;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		yes = len == strlen(line) && strncmp(l, line, len) == 0;
		l = nl ? nl + 1 : NULL;
	}
	return yes;
}

void pipes_say_unsearched(const struct strv *paths, const struct strv *why, int verbosity)
{
	char *file = paths->n ? said_file() : NULL;
	/* the folders said before, read once (at most 1 MiB) */
	char *text = file ? path_read_file(file, 1 << 20) : NULL;
	for (size_t i = 0; i < paths->n && i < why->n; i++) {
		bool before = said_before(text, paths->v[i]);
		if (before && verbosity <= 0)
			continue;
		fprintf(stderr, "stepbox: warning: %s%s\n", why->v[i],
			before || !file ? "" : " (said once for this folder; -v says it again)");
		int fd =
			before || !file
				? -1
				: open(file, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
				       0600);
		if (fd >= 0) {
			dprintf(fd, "%s\n", paths->v[i]);
			close(fd);
		}
	}
	free(text);
	free(file);
}
