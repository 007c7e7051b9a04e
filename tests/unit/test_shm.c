#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shm.h"
#include "tap.h"

/* shm_name: /dev/shm/NAME as glibc writes it, and nothing that leaves it. */
static void names(void)
{
	CHECK_STR(shm_name("/dev/shm/sem.mp-abc"), "sem.mp-abc");
	CHECK_STR(shm_name("/dev/shm/psm_1"), "psm_1");
	CHECK(shm_name("/dev/shm/") == NULL);
	CHECK(shm_name("/dev/shm") == NULL);
	CHECK(shm_name("/dev/shm/.") == NULL);
	CHECK(shm_name("/dev/shm/..") == NULL);
	CHECK(shm_name("/dev/shm/../etc/passwd") == NULL);
	CHECK(shm_name("/dev/shm/a/b") == NULL);
	CHECK(shm_name("/dev/shm//x") == NULL);
	CHECK(shm_name("/dev//shm/x") == NULL);
	CHECK(shm_name("dev/shm/x") == NULL);
	CHECK(shm_name("/dev/shmx") == NULL);
	CHECK_STR(shm_name("/dev/shm/..x"), "..x");
}

/* A place is made locked and private, removed with what is in it. */
static void place(void)
{
	struct shm_place p;
	struct stepbox_err err = {0};
	CHECK(shm_place_make(&p, &err) == 0 && p.dirfd >= 0);
	struct stat st;
	CHECK(stat(p.path, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700 &&
	      st.st_uid == geteuid());
	CHECK(strstr(p.path, "/stepbox-shm.") != NULL);
	/* another run's cleaner finds it held */
	int other = open(p.path, O_RDONLY | O_DIRECTORY);
	CHECK(other >= 0 && flock(other, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK);
	if (other >= 0)
		close(other);
	int f = openat(p.dirfd, "sem.x", O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(f >= 0);
	if (f >= 0)
		close(f);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s", p.path);
	shm_place_remove(&p);
	CHECK(p.dirfd == -1 && access(path, F_OK) < 0 && errno == ENOENT);
	shm_place_remove(&p); /* twice is fine */
}

int main(void)
{
	names();
	place();
	return tap_done();
}
