#include "pipes.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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
