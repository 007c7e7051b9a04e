#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "hostrule.h"
#include "tap.h"

static struct stepbox_err err;

static int add(struct hostrules *r, const char *entry)
{
	memset(&err, 0, sizeof(err));
	return hostrules_add(r, entry, &err);
}

/* entry must be refused, its message holding want. */
static void refused(const char *entry, const char *want, int line)
{
	struct hostrules r = {0};
	int e = add(&r, entry);
	int ok = e == -EINVAL && strstr(err.msg, want) && r.n == 0;
	if (!ok)
		printf("# line %d: e=%d msg='%s' want '%s'\n", line, e, err.msg, want);
	tap_ok(ok, __FILE__, line, want);
	hostrules_free(&r);
}
#define REFUSED(entry, want) refused(entry, want, __LINE__)

/* entry must be taken, and written again as want. */
static void formats(const char *entry, const char *want, int line)
{
	struct hostrules r = {0};
	char buf[300] = "";
	int e = add(&r, entry);
	if (e == 0 && r.n == 1)
		hostrule_format(&r.v[0], buf, sizeof(buf));
	int ok = e == 0 && r.n == 1 && strcmp(buf, want) == 0;
	if (!ok)
		printf("# line %d: e=%d '%s' -> '%s' want '%s' (%s)\n", line, e, entry, buf, want,
		       err.msg);
	tap_ok(ok, __FILE__, line, want);
	hostrules_free(&r);
}
#define FORMATS(entry, want) formats(entry, want, __LINE__)

/* hostrule_name_normalise on len bytes: want the name, or the reason holding why. */
static void norm(const char *in, size_t len, const char *want, const char *why, int line)
{
	char out[HOSTRULE_NAME_MAX];
	const char *got = NULL;
	int e = hostrule_name_normalise(in, len, out, sizeof(out), &got);
	int ok = want ? e == 0 && strcmp(out, want) == 0
		      : e == -EINVAL && got && why && strstr(got, why) != NULL;
	if (!ok)
		printf("# line %d: e=%d out='%s' why='%s'\n", line, e, e ? "" : out,
		       got ? got : "");
	tap_ok(ok, __FILE__, line, want ? want : why ? why : "");
}
#define NORM_OK(in, want) norm(in, sizeof(in) - 1, want, NULL, __LINE__)
#define NORM_BAD(in, why) norm(in, sizeof(in) - 1, NULL, why, __LINE__)

static struct sockaddr_storage addr(const char *text)
{
	struct sockaddr_storage sa;
	if (hostrule_parse_addr(text, 0, &sa) < 0)
		printf("# bad test address %s\n", text);
	return sa;
}

static const char *klass(const char *text)
{
	struct sockaddr_storage sa = addr(text);
	return hostrule_addr_class_name(hostrule_addr_classify((struct sockaddr *)&sa));
}

static void test_entries(void)
{
	FORMATS("files.example.org", "files.example.org");
	FORMATS("Files.Example.ORG.", "files.example.org");
	FORMATS("*.example.net", "*.example.net");
	FORMATS("git.example.com:22", "git.example.com:22");
	FORMATS("_dmarc.example.com", "_dmarc.example.com");
	FORMATS("xn--bcher-kva.example", "xn--bcher-kva.example");
	FORMATS("192.0.2.7", "192.0.2.7");
	FORMATS("192.0.2.7:8080", "192.0.2.7:8080");
	FORMATS("10.0.0.0/8", "10.0.0.0/8");
	FORMATS("10.0.0.0/8:5432", "10.0.0.0/8:5432");
	FORMATS("2001:DB8::7", "2001:db8::7");
	FORMATS("[2001:db8::7]:22", "[2001:db8::7]:22");
	FORMATS("fd00::/8", "fd00::/8");
	FORMATS("[fd00::/8]:22", "[fd00::/8]:22");
	FORMATS("[::1]", "::1");
	FORMATS("localhost", "localhost");

	REFUSED("", "is empty");
	REFUSED("a..b.com", "has an empty label");
	REFUSED(".example.com", "has an empty label");
	REFUSED("exa mple.com", "holds a space");
	REFUSED("ex%2eample.com", "percent-encoded");
	REFUSED("a\tb.com", "control character");
	REFUSED("a\tb.com", "a\\x09b.com");
	REFUSED("b\xc3\xbc"
		"cher.example",
		"xn--");
	REFUSED("a/b.com", "not an IP address");
	REFUSED("a!b.com", "no host name holds");
	REFUSED("*.com", "two labels");
	REFUSED("*", "at the start only");
	REFUSED("a.*.example.com", "at the start only");
	REFUSED("*example.com", "at the start only");
	REFUSED("example.com:0", "from 1 to 65535");
	REFUSED("example.com:65536", "from 1 to 65535");
	REFUSED("example.com:http", "from 1 to 65535");
	REFUSED("example.com:", "from 1 to 65535");
	REFUSED("[2001:db8::7", "never closes");
	REFUSED("[2001:db8::7]x", "not a port");
	REFUSED("[example.com]:80", "no IPv6 address");
	REFUSED("10.0.0.1/8", "bits set past");
	REFUSED("10.0.0.0/33", "longer than the address");
	REFUSED("fd00::/129", "longer than the address");
	REFUSED("10.0.0.0/x", "not a number");
	REFUSED("@nosuch", "no such preset");
	/* IP literals in disguise are refused as names, with the address they are */
	REFUSED("127.1", "an IP address written as a name");
	REFUSED("2130706433", "an IP address written as a name");
	REFUSED("0x7f000001", "an IP address written as a name");
	REFUSED("0177.0.0.1", "an IP address written as a name");
	REFUSED("1.2.3", "an IP address written as a name");
	REFUSED("*.1.2.3", "an IP address written as a name");
	{
		struct hostrules r = {0};
		CHECK(add(&r, "0x7f000001") == -EINVAL);
		CHECK_HAS(err.hint, "127.0.0.1");
		CHECK(add(&r, "@nosuch") == -EINVAL);
		CHECK_HAS(err.hint, "@pypi");
	}
	char label[80], name[400];
	memset(label, 'a', 64);
	label[64] = '\0';
	snprintf(name, sizeof(name), "%s.example.com", label);
	REFUSED(name, "longer than 63");
	label[63] = '\0';
	snprintf(name, sizeof(name), "%s.%s.%s.%s.com", label, label, label, label);
	REFUSED(name, "longer than 253");
	memset(name, 'a', 299);
	name[299] = '\0';
	REFUSED(name, "longer than a host name");
}

static void test_presets(void)
{
	struct hostrules r = {0};
	CHECK(add(&r, "@pypi") == 0 && r.n == 2);
	CHECK_STR(r.v[0].preset, "@pypi");
	CHECK(hostrules_match_name(&r, "files.pythonhosted.org", 443) != NULL);
	CHECK(add(&r, "@pypi") == 0 && r.n == 2); /* not twice */
	CHECK(add(&r, "pypi.org") == 0 && r.n == 2);
	hostrules_free(&r);
	size_t total = 0;
	for (size_t i = 0; i < hostrule_npresets; i++) {
		const struct hostrule_preset *p = &hostrule_presets[i];
		CHECK(add(&r, p->name) == 0);
		for (const char *const *h = p->hosts; *h; h++, total++)
			CHECK(hostrules_match_name(&r, *h, 443) != NULL);
	}
	CHECK(r.n == total);
	CHECK(hostrules_match_name(&r, "registry.npmjs.org", 443)->preset != NULL);
	CHECK(hostrules_match_name(&r, "evil.example", 443) == NULL);
	hostrules_free(&r);
	hostrules_free(NULL);
}

static void test_normalise(void)
{
	NORM_OK("Example.COM", "example.com");
	NORM_OK("example.com.", "example.com");
	NORM_OK("a_b.example.com", "a_b.example.com");
	NORM_BAD("example.com..", "empty label");
	NORM_BAD("evil.com\0.example.com", "holds a NUL");
	NORM_BAD("example%2ecom", "percent-encoded");
	NORM_BAD("exa mple.com", "space");
	NORM_BAD("a\r\nb.com", "control character");
	NORM_BAD("b\xc3\xbc"
		 "cher.de",
		 "xn--");
	NORM_BAD("*.example.com", "no host name holds");
	NORM_BAD("example.com:443", "no host name holds");
	NORM_BAD("[::1]", "no host name holds");
	NORM_BAD("", "empty");
	NORM_BAD(".", "empty");
	NORM_BAD("127.0.0.1", "an IP address");
	NORM_BAD("2130706433", "an IP address");
	NORM_BAD("0x7f000001", "an IP address");
	NORM_BAD("0x7F.1", "an IP address");
	NORM_BAD("0177.0.0.1", "an IP address");
	NORM_BAD("127.1", "an IP address");
	char big[300];
	memset(big, 'a', sizeof(big));
	char out[HOSTRULE_NAME_MAX];
	const char *why = NULL;
	CHECK(hostrule_name_normalise(big, sizeof(big), out, sizeof(out), &why) == -EINVAL);
	CHECK(hostrule_name_normalise(big, 10, out, 5, &why) == -EINVAL);
	CHECK(hostrule_name_normalise(NULL, 0, out, sizeof(out), NULL) == -EINVAL);
}

static void test_match(void)
{
	struct hostrules r = {0}, deny = {0};
	CHECK(add(&r, "*.example.com") == 0);
	CHECK(add(&r, "git.example.org:22") == 0);
	CHECK(add(&r, "files.example.org") == 0);
	CHECK(add(&r, "192.0.2.0/24") == 0);
	CHECK(add(&r, "[2001:db8::7]:8443") == 0);
	/* the wildcard: below the suffix, never the suffix, never a look-alike */
	CHECK(hostrules_match_name(&r, "a.example.com", 443) != NULL);
	CHECK(hostrules_match_name(&r, "a.b.example.com", 80) != NULL);
	CHECK(hostrules_match_name(&r, "example.com", 443) == NULL);
	CHECK(hostrules_match_name(&r, "evilexample.com", 443) == NULL);
	CHECK(hostrules_match_name(&r, "example.com.evil.net", 443) == NULL);
	/* the caller's name is normalised or nothing matches */
	CHECK(hostrules_match_name(&r, "A.EXAMPLE.COM", 443) == NULL);
	CHECK(hostrules_match_name(&r, "a.example.com.", 443) == NULL);
	/* ports: none written is 80 and 443 */
	CHECK(hostrules_match_name(&r, "a.example.com", 8080) == NULL);
	CHECK(hostrules_match_name(&r, "files.example.org", 80) != NULL);
	CHECK(hostrules_match_name(&r, "files.example.org", 22) == NULL);
	CHECK(hostrules_match_name(&r, "git.example.org", 22) != NULL);
	CHECK(hostrules_match_name(&r, "git.example.org", 443) == NULL);
	CHECK(hostrules_match_name(&r, "other.example.org", 443) == NULL);
	/* addresses match address rules only; a wildcard never an IP */
	struct hostrules w = {0};
	CHECK(add(&w, "*.0.2.7") == -EINVAL);
	CHECK(add(&w, "*.in-addr.arpa") == 0);
	CHECK(hostrules_match_name(&w, "192.0.2.7", 443) == NULL);
	hostrules_free(&w);
	CHECK(hostrules_match_name(&r, "192.0.2.9", 443) != NULL);
	CHECK(hostrules_match_name(&r, "192.0.3.9", 443) == NULL);
	CHECK(hostrules_match_name(&r, "3221225993", 443) == NULL); /* 192.0.2.9 in disguise */
	CHECK(hostrules_match_name(&r, "0xc0000209", 443) == NULL);
	struct sockaddr_storage sa = addr("192.0.2.200");
	CHECK(hostrules_match_addr(&r, (struct sockaddr *)&sa, 443) != NULL);
	CHECK(hostrules_match_addr(&r, (struct sockaddr *)&sa, 22) == NULL);
	sa = addr("::ffff:192.0.2.200");
	CHECK(hostrules_match_addr(&r, (struct sockaddr *)&sa, 443) != NULL);
	sa = addr("2001:db8::7");
	CHECK(hostrules_match_addr(&r, (struct sockaddr *)&sa, 8443) != NULL);
	CHECK(hostrules_match_addr(&r, (struct sockaddr *)&sa, 443) == NULL);
	CHECK(hostrules_match_name(&r, "2001:db8::7", 8443) != NULL);
	sa = addr("2001:db8::8");
	CHECK(hostrules_match_addr(&r, (struct sockaddr *)&sa, 8443) == NULL);
	CHECK(hostrules_match_addr(&r, NULL, 443) == NULL);
	/* deny over allow: a deny rule without a port covers every port */
	CHECK(add(&deny, "secret.example.com") == 0);
	CHECK(add(&deny, "*.internal.example.com:8080") == 0);
	CHECK(hostrules_match_name(&r, "secret.example.com", 443) != NULL);
	CHECK(hostrules_deny_name(&deny, "secret.example.com", 443) != NULL);
	CHECK(hostrules_deny_name(&deny, "secret.example.com", 22) != NULL);
	CHECK(hostrules_deny_name(&deny, "open.example.com", 443) == NULL);
	CHECK(hostrules_deny_name(&deny, "a.internal.example.com", 8080) != NULL);
	CHECK(hostrules_deny_name(&deny, "a.internal.example.com", 443) == NULL);
	CHECK(add(&deny, "192.0.2.13") == 0);
	sa = addr("192.0.2.13");
	CHECK(hostrules_deny_addr(&deny, (struct sockaddr *)&sa, 9999) != NULL);
	hostrules_free(&r);
	hostrules_free(&deny);
}

static void test_classify(void)
{
	CHECK_STR(klass("93.184.215.14"), "public");
	CHECK_STR(klass("127.0.0.1"), "loopback");
	CHECK_STR(klass("127.255.1.2"), "loopback");
	CHECK_STR(klass("10.1.2.3"), "private");
	CHECK_STR(klass("172.16.0.1"), "private");
	CHECK_STR(klass("172.31.255.255"), "private");
	CHECK_STR(klass("172.32.0.1"), "public");
	CHECK_STR(klass("192.168.1.1"), "private");
	CHECK_STR(klass("169.254.1.1"), "link-local");
	CHECK_STR(klass("169.254.169.254"), "cloud-metadata");
	CHECK_STR(klass("100.100.100.200"), "cloud-metadata");
	CHECK_STR(klass("100.64.0.1"), "cgnat");
	CHECK_STR(klass("100.127.255.255"), "cgnat");
	CHECK_STR(klass("100.128.0.1"), "public");
	CHECK_STR(klass("224.0.0.1"), "multicast");
	CHECK_STR(klass("0.0.0.0"), "unspecified");
	CHECK_STR(klass("0.1.2.3"), "unspecified");
	CHECK_STR(klass("255.255.255.255"), "reserved");
	CHECK_STR(klass("240.0.0.1"), "reserved");
	CHECK_STR(klass("198.18.0.1"), "reserved");
	CHECK_STR(klass("192.0.2.1"), "documentation");
	CHECK_STR(klass("198.51.100.1"), "documentation");
	CHECK_STR(klass("203.0.113.1"), "documentation");
	CHECK_STR(klass("2606:4700::1111"), "public");
	CHECK_STR(klass("::"), "unspecified");
	CHECK_STR(klass("::1"), "loopback");
	CHECK_STR(klass("::ffff:127.0.0.1"), "loopback");
	CHECK_STR(klass("::ffff:10.0.0.1"), "private");
	CHECK_STR(klass("::ffff:169.254.169.254"), "cloud-metadata");
	CHECK_STR(klass("::ffff:93.184.215.14"), "public");
	CHECK_STR(klass("::127.0.0.1"), "loopback");
	CHECK_STR(klass("64:ff9b::a9fe:a9fe"), "cloud-metadata");
	CHECK_STR(klass("64:ff9b::7f00:1"), "loopback");
	CHECK_STR(klass("64:ff9b:1::1"), "private");
	CHECK_STR(klass("fd00:ec2::254"), "cloud-metadata");
	CHECK_STR(klass("fd12:3456::1"), "private");
	CHECK_STR(klass("fc00::1"), "private");
	CHECK_STR(klass("fe80::1"), "link-local");
	CHECK_STR(klass("ff02::1"), "multicast");
	CHECK_STR(klass("2001:db8::1"), "documentation");
	CHECK_STR(klass("3fff::1"), "documentation");
	CHECK_STR(klass("2002:7f00:1::1"), "reserved");
	CHECK_STR(klass("2001::1"), "reserved");
	CHECK_STR(klass("100::1"), "reserved");
	CHECK_STR(klass("4000::1"), "reserved");
	struct sockaddr un = {.sa_family = AF_UNIX};
	CHECK(hostrule_addr_classify(&un) == HOSTRULE_ADDR_INVALID);
	CHECK(hostrule_addr_classify(NULL) == HOSTRULE_ADDR_INVALID);
	CHECK_STR(hostrule_addr_class_name(HOSTRULE_ADDR_INVALID), "invalid");
}

int main(void)
{
	test_entries();
	test_presets();
	test_normalise();
	test_match();
	test_classify();
	return tap_done();
}
