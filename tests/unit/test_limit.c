#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "limit.h"
#include "tap.h"

int main(void)
{
	uint64_t v = 0;
	/* sizes: bytes, or binary units, with an optional "iB" */
	CHECK(limitcfg_parse(LIMIT_MEMORY, "512M", &v) == 0 && v == 512ULL << 20);
	CHECK(limitcfg_parse(LIMIT_MEMORY, "2g", &v) == 0 && v == 2ULL << 30);
	CHECK(limitcfg_parse(LIMIT_MEMORY, "4KiB", &v) == 0 && v == 4096);
	CHECK(limitcfg_parse(LIMIT_OUTPUT, "1000", &v) == 0 && v == 1000);
	CHECK(limitcfg_parse(LIMIT_MEMORY, "12Q", &v) == -EINVAL);
	CHECK(limitcfg_parse(LIMIT_MEMORY, "1MB", &v) == -EINVAL);
	CHECK(limitcfg_parse(LIMIT_MEMORY, "", &v) == -EINVAL);
	CHECK(limitcfg_parse(LIMIT_MEMORY, "-1", &v) == -EINVAL);
	CHECK(limitcfg_parse(LIMIT_MEMORY, " 5", &v) == -EINVAL);
	CHECK(limitcfg_parse(LIMIT_MEMORY, "0", &v) == -ERANGE);
	CHECK(limitcfg_parse(LIMIT_MEMORY, "99999999999999999999", &v) == -ERANGE);
	CHECK(limitcfg_parse(LIMIT_MEMORY, "2000000000T", &v) == -ERANGE);
	/* counts take no unit and stay within what the kernel has */
	CHECK(limitcfg_parse(LIMIT_TASKS, "4096", &v) == 0 && v == 4096);
	CHECK(limitcfg_parse(LIMIT_TASKS, "4K", &v) == -EINVAL);
	CHECK(limitcfg_parse(LIMIT_TASKS, "5000000", &v) == -ERANGE);
	CHECK(limitcfg_parse(LIMIT_OPEN_FILES, "1048577", &v) == -ERANGE);

	/* the flag: the smaller of two values of one limit wins */
	struct limit_config c;
	memset(&c, 0, sizeof(c));
	struct stepbox_err err = {0};
	CHECK(limitcfg_set_flag(&c, "tasks=100", &err) == 0 && c.v[LIMIT_TASKS] == 100);
	CHECK(limitcfg_set_flag(&c, "tasks=200", &err) == 0 && c.v[LIMIT_TASKS] == 100);
	CHECK(limitcfg_set_flag(&c, "tasks=50", &err) == 0 && c.v[LIMIT_TASKS] == 50);
	CHECK(limitcfg_set_flag(&c, "heap=1G", &err) < 0 && err.kind == ERR_USAGE);
	CHECK_HAS(err.msg, "NAME one of memory");
	CHECK(limitcfg_set_flag(&c, "memory", &err) < 0);
	CHECK(limitcfg_set_flag(&c, "memory=lots", &err) < 0);
	CHECK_HAS(err.msg, "'lots'");

	/* a plan without asking: the defaults, said as such; nothing made */
	struct limit_config none;
	memset(&none, 0, sizeof(none));
	struct limit_plan p;
	CHECK(limit_plan(&none, true, true, false, NULL, &p, &err) == 0);
	CHECK(p.v[LIMIT_TASKS] == LIMIT_DEFAULT_TASKS && !p.asked[LIMIT_TASKS]);
	CHECK(p.how[LIMIT_TASKS] != LIMIT_OFF && p.how[LIMIT_TMP] == LIMIT_TMPFS);
	CHECK(p.how[LIMIT_OUTPUT] == LIMIT_OFF && p.how[LIMIT_CPU] == LIMIT_OFF);
	CHECK(p.cg_procs[0] == -1 && p.cg_fd == -1 && p.cg_dir[0] == NULL);
	char said[1024];
	limit_describe(&p, said, sizeof(said));
	CHECK_HAS(said, "tasks 4096");
	CHECK_HAS(said, "default");
	/* a memory default is never a per-process rlimit (address space, not use) */
	CHECK(p.how[LIMIT_MEMORY] == LIMIT_CGROUP || p.how[LIMIT_MEMORY] == LIMIT_UNENFORCED);
	limit_release(&p);
	/* "none": no defaults; what is asked still applies */
	none.none = true;
	none.v[LIMIT_CPU] = 5;
	CHECK(limit_plan(&none, true, true, false, NULL, &p, &err) == 0);
	CHECK(p.how[LIMIT_TASKS] == LIMIT_OFF && p.how[LIMIT_CPU] == LIMIT_RLIMIT);
	limit_release(&p);
	/* a tmp limit without a private /tmp is refused, not ignored */
	none.v[LIMIT_TMP] = 1 << 20;
	CHECK(limit_plan(&none, false, false, false, NULL, &p, &err) == -EPERM);
	CHECK(err.kind == ERR_UNAVAILABLE);
	CHECK_HAS(err.msg, "Landlock alone has none");

	/* what ended a step: a SIGXCPU (the command's, or a shell's 128+N) */
	memset(&none, 0, sizeof(none));
	none.none = true;
	none.v[LIMIT_CPU] = 1;
	none.v[LIMIT_FILE_SIZE] = 1 << 20;
	CHECK(limit_plan(&none, true, true, false, NULL, &p, &err) == 0);
	limit_finish(&p, 128 + SIGXCPU, -1, 0, true);
	CHECK(p.reached && strcmp(p.reached, "cpu_s") == 0);
	limit_finish(&p, 128 + SIGXFSZ, -1, 0, true);
	CHECK(p.reached && strcmp(p.reached, "file_size") == 0);
	CHECK_HAS(p.said, "1 MiB per file");
	limit_finish(&p, 1, -1, 0, true);
	CHECK(p.reached == NULL);
	limit_release(&p);
	return tap_done();
}
