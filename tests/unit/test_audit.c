/* audit.c: reading fields of the kernel's audit records (the decoder that once
 * read a pid of even length as hex and lost every denial of that process). */
#include <string.h>

#include "audit.h"
#include "tap.h"

static const char *get(const char *text, const char *key)
{
	static char out[256];
	return audit_field(text, key, out, sizeof(out)) ? out : NULL;
}

int main(void)
{
	const char *ll = "domain=1a2b3c blockers=fs.write_file path=\"/etc/passwd\" dev=\"vda1\" "
			 "ino=1234";
	CHECK_STR(get(ll, "blockers"), "fs.write_file");
	CHECK_STR(get(ll, "path"), "/etc/passwd");
	CHECK_STR(get(ll, "domain"), "1a2b3c");
	CHECK_STR(get(ll, "ino"), "1234");
	CHECK(get(ll, "nosuch") == NULL);
	/* a path with unusual bytes comes hex-encoded, unquoted */
	CHECK_STR(get("blockers=fs.read_file path=2F746D702F6120622F63", "path"), "/tmp/a b/c");
	/* a comm the kernel encoded, and one it did not */
	CHECK_STR(get("pid=42 comm=6D7920746F6F6C exe=\"/bin/x\"", "comm"), "my tool");
	CHECK_STR(get("pid=42 comm=\"sh\"", "comm"), "sh");
	/* numbers are never hex, whatever their length (the old bug: 5994) */
	CHECK_STR(get("arch=c000003e syscall=257 pid=5994 ppid=1", "pid"), "5994");
	CHECK_STR(get("arch=c000003e syscall=257 ppid=77 pid=12", "pid"), "12");
	CHECK(get("ppid=77 auid=4294967295", "pid") == NULL);
	/* a key is a whole word, not a suffix of another */
	CHECK_STR(get("opid=9 pid=3", "pid"), "3");
	CHECK_STR(get("src=8080 dest=443", "dest"), "443");
	/* an unquoted path that merely looks like hex in lower case is kept */
	CHECK_STR(get("path=deadbeef", "path"), "deadbeef");
	/* odd length: not hex */
	CHECK_STR(get("path=ABC", "path"), "ABC");
	/* cut at the buffer, still terminated */
	char small[4];
	CHECK(audit_field("path=\"/usr/lib\"", "path", small, sizeof(small)) &&
	      strcmp(small, "/us") == 0);
	/* an unterminated quote ends at the text's end */
	CHECK_STR(get("path=\"/tmp/x", "path"), "/tmp/x");
	return tap_done();
}
