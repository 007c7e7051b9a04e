#include "landlock.h"
#include "tap.h"

#define FS_V1 ((1ULL << 13) - 1)
#define REFER (1ULL << 13)
#define TRUNCATE (1ULL << 14)
#define IOCTL_DEV (1ULL << 15)

static struct landlock_features at(int abi)
{
	struct landlock_features f = {0};
	f.kernel_abi = f.abi = abi;
	landlock_degrade(&f);
	return f;
}

int main(void)
{
	struct landlock_features f = at(1);
	CHECK(f.fs == FS_V1 && f.net == 0 && f.scoped == 0);
	f = at(2);
	CHECK(f.fs == (FS_V1 | REFER));
	f = at(3);
	CHECK(f.fs == (FS_V1 | REFER | TRUNCATE) && f.net == 0);
	f = at(4);
	CHECK(f.net == 3 && !(f.fs & IOCTL_DEV));
	f = at(5);
	CHECK((f.fs & IOCTL_DEV) && f.scoped == 0);
	f = at(6);
	CHECK(f.scoped == 3 && f.restrict_flags_ok == 0);
	f = at(7);
	CHECK(f.restrict_flags_ok != 0);
	f = at(9); /* newer than stepbox knows: what 7 gives */
	struct landlock_features seven = at(7);
	CHECK(f.fs == seven.fs && f.scoped == seven.scoped);
	f = at(0);
	CHECK(f.fs == 0 && f.net == 0);

	/* rights: file rules carry file rights only, or the kernel says EINVAL */
	f = at(7);
	uint64_t dir = landlock_rights(&f, GRANT_READ | GRANT_WRITE | GRANT_EXEC, true);
	uint64_t file = landlock_rights(&f, GRANT_READ | GRANT_WRITE | GRANT_EXEC, false);
	CHECK(dir & REFER);
	CHECK(!(file & REFER) && (file & TRUNCATE) && (file & 1));
	CHECK(!(landlock_rights(&f, GRANT_READ, true) & (1ULL << 0))); /* no execute */
	CHECK(!(landlock_rights(&f, GRANT_WRITE, true) & ((1ULL << 6) | (1ULL << 11))));
	CHECK(landlock_rights(&f, GRANT_DEV, false) == IOCTL_DEV);
	f = at(1);
	CHECK(!(landlock_rights(&f, GRANT_WRITE, true) & (REFER | TRUNCATE)));

	/* the cap */
	struct stepbox_err err = {0};
	CHECK(landlock_probe(&f, "3", &err) == 0);
	CHECK(f.abi <= 3 && f.cap == 3);
	CHECK(landlock_probe(&f, "0", &err) == 0 && f.abi == 0);
	CHECK(landlock_probe(&f, "x", &err) < 0);
	CHECK_HAS(err.msg, "STEPBOX_LANDLOCK_ABI");
	CHECK(landlock_probe(&f, "100", &err) < 0);
	char buf[128];
	f = at(5);
	landlock_missing(&f, buf, sizeof(buf));
	CHECK_STR(buf, "scope,audit-log,tsync,unix-path");
	return tap_done();
}
