#include "hostrule.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strv.h"

/*
 * The presets: each registry's hosts as its client reaches them with no
 * setting of its own (checked against each tool's default index and where
 * its downloads are served from).
 */
static const char *const pypi_hosts[] = {"pypi.org", "files.pythonhosted.org", NULL};
/* yarn 1 asks registry.yarnpkg.com, an alias of the same registry */
static const char *const npm_hosts[] = {"registry.npmjs.org", "registry.yarnpkg.com", NULL};
/* the sparse index (cargo >= 1.70), the downloads (its config.json's dl), the API */
static const char *const crates_hosts[] = {"index.crates.io", "static.crates.io", "crates.io",
					   NULL};
/* proxy.golang.org answers a module's .zip with a redirect to Google Cloud Storage */
static const char *const go_hosts[] = {"proxy.golang.org", "sum.golang.org",
				       "storage.googleapis.com", NULL};
static const char *const rubygems_hosts[] = {"rubygems.org", "index.rubygems.org", NULL};
static const char *const maven_hosts[] = {"repo.maven.apache.org", "repo1.maven.org", NULL};
/* release downloads redirect to release-assets (since 2025) or objects */
static const char *const github_hosts[] = {"github.com",
					   "api.github.com",
					   "codeload.github.com",
					   "objects.githubusercontent.com",
					   "raw.githubusercontent.com",
					   "release-assets.githubusercontent.com",
					   NULL};

const struct hostrule_preset hostrule_presets[] = {
	{"@pypi", "PyPI: pip, uv, poetry (the index and its files)", pypi_hosts},
	{"@npm", "the npm registry: npm, yarn, pnpm", npm_hosts},
	{"@crates", "crates.io: cargo (the sparse index and the downloads)", crates_hosts},
	{"@go", "Go modules: the module proxy and the checksum database", go_hosts},
	{"@rubygems", "RubyGems: gem, bundler", rubygems_hosts},
	{"@maven", "Maven Central: maven, gradle, sbt", maven_hosts},
	{"@github", "GitHub: git over HTTPS, the API, archives, release assets", github_hosts},
};
const size_t hostrule_npresets = sizeof(hostrule_presets) / sizeof(hostrule_presets[0]);

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/*
 * A label a resolver or inet_aton reads as a number: decimal, octal (it is
 * digits too) or 0x hex. A name whose last label is one is an IPv4 address
 * in disguise (127.1, 2130706433, 0x7f000001, 0177.0.0.1): no top-level
 * domain is numeric, and this is how browsers decide it too.
 */
static bool numeric_label(const char *s, size_t n)
{
	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		for (size_t i = 2; i < n; i++)
			if (!is_hex(s[i]))
				return false;
		return true;
	}
	for (size_t i = 0; i < n; i++)
		if (!is_digit(s[i]))
			return false;
	return n > 0;
}

static int name_check(const char *in, size_t len, char *out, size_t outsize, const char **why)
{
	if (len == 0 || (len == 1 && in[0] == '.'))
		return *why = "is empty", -EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		if (c == '\0')
			return *why = "holds a NUL", -EINVAL;
		if (c == '%')
			return *why = "percent-encoded", -EINVAL;
		if (c == ' ')
			return *why = "holds a space", -EINVAL;
		if (c < 0x20 || c == 0x7f)
			return *why = "holds a control character", -EINVAL;
		if (c >= 0x80)
			return *why = "not ASCII (an IDNA name is written in its xn-- form)",
			       -EINVAL;
		if (!(is_digit((char)c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      c == '-' || c == '_' || c == '.'))
			return *why = "holds a character no host name holds", -EINVAL;
	}
	if (in[len - 1] == '.')
		len--;
	if (len > 253)
		return *why = "longer than 253 characters", -EINVAL;
	if (len + 1 > outsize)
		return *why = "too long", -EINVAL;
	size_t label = 0, last = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || in[i] == '.') {
			if (i == label)
				return *why = "has an empty label", -EINVAL;
			if (i - label > 63)
				return *why = "has a label longer than 63 characters", -EINVAL;
			last = label;
			label = i + 1;
		}
	}
	if (numeric_label(in + last, len - last))
		return *why = "an IP address written as a name", -EINVAL;
	for (size_t i = 0; i < len; i++)
		out[i] = (in[i] >= 'A' && in[i] <= 'Z') ? (char)(in[i] - 'A' + 'a') : in[i];
	out[len] = '\0';
	return 0;
}

int hostrule_name_normalise(const char *in, size_t len, char *out, size_t outsize, const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	if (!in || !out || outsize == 0)
		return *why = "is empty", -EINVAL;
	out[0] = '\0';
	return name_check(in, len, out, outsize, why);
}

int hostrule_parse_addr(const char *text, unsigned port, struct sockaddr_storage *sa)
{
	memset(sa, 0, sizeof(*sa));
	struct sockaddr_in *s4 = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)sa;
	/* inet_pton takes only the dotted quad for v4, never 127.1 or 0x7f.1 */
	if (inet_pton(AF_INET, text, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		return 0;
	}
	if (strchr(text, ':') && inet_pton(AF_INET6, text, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		return 0;
	}
	memset(sa, 0, sizeof(*sa));
	return -EINVAL;
}

/* sa's address as (family, bytes), a v4-mapped v6 address as its v4. */
static int addr_bytes(const struct sockaddr *sa, unsigned char out[16])
{
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	if (!sa)
		return 0;
	if (sa->sa_family == AF_INET) {
		memcpy(out, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return AF_INET;
	}
	if (sa->sa_family != AF_INET6)
		return 0;
	const unsigned char *b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
	if (memcmp(b, mapped, 12) == 0) {
		memcpy(out, b + 12, 4);
		return AF_INET;
	}
	memcpy(out, b, 16);
	return AF_INET6;
}

static bool prefix_eq(const unsigned char *a, const unsigned char *b, unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;
	if (memcmp(a, b, whole) != 0)
		return false;
	if (rest == 0)
		return true;
	unsigned char mask = (unsigned char)(0xff << (8 - rest));
	return (a[whole] & mask) == (b[whole] & mask);
}

static bool port_ok(unsigned rule, unsigned port, bool deny)
{
	if (rule == 0)
		return deny || port == 80 || port == 443;
	return rule == port;
}

static const struct hostrule *match_addr(const struct hostrules *r, const struct sockaddr *sa,
					 unsigned port, bool deny)
{
	unsigned char b[16];
	int fam = r ? addr_bytes(sa, b) : 0;
	if (!fam)
		return NULL;
	for (size_t i = 0; i < r->n; i++) {
		const struct hostrule *h = &r->v[i];
		if (h->kind == HOSTRULE_ADDR && h->family == fam &&
		    prefix_eq(h->addr, b, h->prefix) && port_ok(h->port, port, deny))
			return h;
	}
	return NULL;
}

static const struct hostrule *match_name(const struct hostrules *r, const char *name, unsigned port,
					 bool deny)
{
	if (!r || !name)
		return NULL;
	struct sockaddr_storage sa;
	if (hostrule_parse_addr(name, port, &sa) == 0)
		return match_addr(r, (struct sockaddr *)&sa, port, deny);
	/* only a normalised name matches: a caller's slip never widens a rule */
	char norm[HOSTRULE_NAME_MAX];
	const char *why;
	size_t len = strlen(name);
	if (hostrule_name_normalise(name, len, norm, sizeof(norm), &why) < 0 ||
	    strcmp(norm, name) != 0)
		return NULL;
	for (size_t i = 0; i < r->n; i++) {
		const struct hostrule *h = &r->v[i];
		if (!port_ok(h->port, port, deny))
			continue;
		if (h->kind == HOSTRULE_EXACT && strcmp(h->name, name) == 0)
			return h;
		size_t sl = strlen(h->name);
		/* "*.example.com": a.example.com, never example.com or evilexample.com */
		if (h->kind == HOSTRULE_SUFFIX && len > sl + 1 && name[len - sl - 1] == '.' &&
		    strcmp(name + len - sl, h->name) == 0)
			return h;
	}
	return NULL;
}

const struct hostrule *hostrules_match_name(const struct hostrules *r, const char *name,
					    unsigned port)
{
	return match_name(r, name, port, false);
}

const struct hostrule *hostrules_match_addr(const struct hostrules *r, const struct sockaddr *sa,
					    unsigned port)
{
	return match_addr(r, sa, port, false);
}

const struct hostrule *hostrules_deny_name(const struct hostrules *r, const char *name,
					   unsigned port)
{
	return match_name(r, name, port, true);
}

const struct hostrule *hostrules_deny_addr(const struct hostrules *r, const struct sockaddr *sa,
					   unsigned port)
{
	return match_addr(r, sa, port, true);
}

int hostrule_format(const struct hostrule *h, char *buf, size_t size)
{
	char port[16] = "";
	if (h->port)
		snprintf(port, sizeof(port), ":%u", h->port);
	if (h->kind == HOSTRULE_EXACT)
		return snprintf(buf, size, "%s%s", h->name, port);
	if (h->kind == HOSTRULE_SUFFIX)
		return snprintf(buf, size, "*.%s%s", h->name, port);
	char a[INET6_ADDRSTRLEN] = "?", pfx[16] = "";
	inet_ntop(h->family, h->addr, a, sizeof(a));
	if (h->prefix != (h->family == AF_INET ? 32u : 128u))
		snprintf(pfx, sizeof(pfx), "/%u", h->prefix);
	if (h->family == AF_INET6 && h->port)
		return snprintf(buf, size, "[%s%s]%s", a, pfx, port);
	return snprintf(buf, size, "%s%s%s", a, pfx, port);
}

/* A text the user wrote, fit for a message: control and non-ASCII bytes as \xNN. */
static void shown(const char *in, char *out, size_t size)
{
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)in; *p && o + 5 < size; p++) {
		if (*p < 0x20 || *p >= 0x7f)
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", *p);
		else
			out[o++] = (char)*p;
	}
	out[o] = '\0';
}

static int bad(struct stepbox_err *err, const char *entry, const char *why, const char *hint)
{
	char s[320];
	shown(entry, s, sizeof(s));
	err_set(err, ERR_USAGE, 0, "host '%s': %s", s, why);
	if (hint)
		err_hint(err, "%s", hint);
	return -EINVAL;
}

static int parse_port(const char *text, unsigned *port)
{
	unsigned long v = 0;
	if (!*text || strlen(text) > 5)
		return -EINVAL;
	for (const char *p = text; *p; p++) {
		if (!is_digit(*p))
			return -EINVAL;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (v < 1 || v > 65535)
		return -EINVAL;
	*port = (unsigned)v;
	return 0;
}

static bool same_rule(const struct hostrule *a, const struct hostrule *b)
{
	return a->kind == b->kind && a->port == b->port && strcmp(a->name, b->name) == 0 &&
	       a->family == b->family && a->prefix == b->prefix &&
	       memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
}

static int push(struct hostrules *r, const struct hostrule *h)
{
	for (size_t i = 0; i < r->n; i++)
		if (same_rule(&r->v[i], h))
			return 0;
	if (r->n >= HOSTRULE_MAX)
		return -E2BIG;
	if (strv_grow(&r->v, &r->cap, r->n, sizeof(*r->v), 8) < 0)
		return -ENOMEM;
	r->v[r->n++] = *h;
	return 0;
}

/* An address or a CIDR range (host bits zero) into h. */
static int parse_cidr(const char *text, struct hostrule *h, const char **why)
{
	char a[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(text, '/');
	size_t alen = slash ? (size_t)(slash - text) : strlen(text);
	if (alen >= sizeof(a))
		return *why = "is not an IP address", -EINVAL;
	memcpy(a, text, alen);
	a[alen] = '\0';
	struct sockaddr_storage sa;
	if (hostrule_parse_addr(a, 0, &sa) < 0)
		return *why = "is not an IP address", -EINVAL;
	h->kind = HOSTRULE_ADDR;
	h->family = sa.ss_family;
	unsigned max = h->family == AF_INET ? 32 : 128;
	if (h->family == AF_INET)
		memcpy(h->addr, &((struct sockaddr_in *)&sa)->sin_addr, 4);
	else
		memcpy(h->addr, &((struct sockaddr_in6 *)&sa)->sin6_addr, 16);
	h->prefix = max;
	if (slash) {
		unsigned long p = 0;
		const char *q = slash + 1;
		if (!*q || strlen(q) > 3)
			return *why = "has a prefix length that is not a number", -EINVAL;
		for (; *q; q++) {
			if (!is_digit(*q))
				return *why = "has a prefix length that is not a number", -EINVAL;
			p = p * 10 + (unsigned long)(*q - '0');
		}
		if (p > max)
			return *why = "has a prefix length longer than the address", -EINVAL;
		h->prefix = (unsigned)p;
	}
	unsigned char masked[16];
	memcpy(masked, h->addr, 16);
	for (unsigned bit = h->prefix; bit < max; bit++)
		masked[bit / 8] &= (unsigned char)~(0x80 >> (bit % 8));
	if (memcmp(masked, h->addr, 16) != 0)
		return *why = "has bits set past its prefix length", -EINVAL;
	return 0;
}

static int add_preset(struct hostrules *r, const char *entry, struct stepbox_err *err)
{
	for (size_t i = 0; i < hostrule_npresets; i++) {
		const struct hostrule_preset *p = &hostrule_presets[i];
		if (strcmp(p->name, entry) != 0)
			continue;
		size_t n0 = r->n;
		for (const char *const *hp = p->hosts; *hp; hp++) {
			struct hostrule h = {.kind = HOSTRULE_EXACT, .preset = p->name};
			snprintf(h.name, sizeof(h.name), "%s", *hp);
			int e = push(r, &h);
			if (e < 0) {
				r->n = n0;
				return e == -E2BIG ? bad(err, entry, "one host too many", NULL)
						   : err_set(err, ERR_USAGE, ENOMEM, "hosts");
			}
		}
		return 0;
	}
	char list[256];
	size_t o = 0;
	for (size_t i = 0; i < hostrule_npresets && o < sizeof(list); i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "",
				      hostrule_presets[i].name);
	char hint[320];
	snprintf(hint, sizeof(hint), "the presets are %s", list);
	return bad(err, entry, "no such preset", hint);
}

/* Split "host:port", "[v6]:port", "v6" into host and port (0 when none). */
static int split_port(const char *entry, char *host, size_t size, unsigned *port, const char **why)
{
	const char *colon = strrchr(entry, ':');
	const char *end = entry + strlen(entry);
	*port = 0;
	if (entry[0] == '[') {
		const char *close = strchr(entry, ']');
		if (!close)
			return *why = "opens a '[' it never closes", -EINVAL;
		if (close[1] && close[1] != ':')
			return *why = "has text after its ']' that is not a port", -EINVAL;
		if (close[1] == ':' && parse_port(close + 2, port) < 0)
			return *why = "has a port that is not a number from 1 to 65535", -EINVAL;
		entry++;
		end = close;
		if (!memchr(entry, ':', (size_t)(end - entry)))
			return *why = "holds no IPv6 address in its brackets", -EINVAL;
	} else if (colon && strchr(entry, ':') == colon) {
		if (parse_port(colon + 1, port) < 0)
			return *why = "has a port that is not a number from 1 to 65535", -EINVAL;
		end = colon;
	}
	if ((size_t)(end - entry) >= size)
		return *why = "longer than 253 characters", -EINVAL;
	memcpy(host, entry, (size_t)(end - entry));
	host[end - entry] = '\0';
	return 0;
}

static int name_rule(const char *host, struct hostrule *h, const char *entry,
		     struct stepbox_err *err)
{
	const char *why;
	bool wild = strncmp(host, "*.", 2) == 0;
	const char *name = wild ? host + 2 : host;
	if (strchr(name, '*'))
		return bad(err, entry, "a wildcard is written '*.' at the start only",
			   "write *.example.com for the names below example.com");
	if (name_check(name, strlen(name), h->name, sizeof(h->name), &why) < 0) {
		if (strcmp(why, "an IP address written as a name") != 0)
			return bad(err, entry, why, NULL);
		struct in_addr a;
		char hint[64] = "write an IP address as a.b.c.d";
		if (!wild && inet_aton(name, &a) == 1) {
			char dotted[INET_ADDRSTRLEN];
			inet_ntop(AF_INET, &a, dotted, sizeof(dotted));
			snprintf(hint, sizeof(hint), "write it as %s, if that is what you mean",
				 dotted);
		}
		return bad(err, entry, why, hint);
	}
	h->kind = wild ? HOSTRULE_SUFFIX : HOSTRULE_EXACT;
	if (wild && !strchr(h->name, '.'))
		return bad(err, entry, "a wildcard needs two labels after it ('*.com' is too wide)",
			   "write *.example.com");
	return 0;
}

int hostrules_add(struct hostrules *r, const char *entry, struct stepbox_err *err)
{
	if (!entry || !*entry)
		return bad(err, "", "is empty",
			   "write a name (example.com), *.example.com, "
			   "an IP address or range, or a preset (@pypi)");
	if (strnlen(entry, 300) > 270)
		return bad(err, entry, "longer than a host name can be", NULL);
	if (entry[0] == '@')
		return add_preset(r, entry, err);
	char host[300];
	const char *why;
	struct hostrule h = {.kind = HOSTRULE_EXACT};
	if (split_port(entry, host, sizeof(host), &h.port, &why) < 0)
		return bad(err, entry, why, "write NAME, NAME:PORT, [IPv6]:PORT or ADDRESS/BITS");
	bool v6 = strchr(host, ':') != NULL;
	bool cidr = strchr(host, '/') != NULL;
	struct sockaddr_storage sa;
	if (v6 || cidr || hostrule_parse_addr(host, 0, &sa) == 0) {
		if (parse_cidr(host, &h, &why) < 0)
			return bad(err, entry, why,
				   "write an address (192.0.2.7, 2001:db8::7) or a range "
				   "(192.0.2.0/24, [2001:db8::/32]:22)");
	} else {
		int e = name_rule(host, &h, entry, err);
		if (e < 0)
			return e;
	}
	int e = push(r, &h);
	if (e == -E2BIG)
		return bad(err, entry, "one host too many", NULL);
	if (e < 0)
		return err_set(err, ERR_USAGE, ENOMEM, "hosts");
	return 0;
}

void hostrules_free(struct hostrules *r)
{
	if (!r)
		return;
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/* Is the 32-bit address a (host order) in net/bits? */
static bool in4(uint32_t a, uint32_t net, unsigned bits)
{
	return bits == 0 || (a >> (32 - bits)) == (net >> (32 - bits));
}

static enum hostrule_addr_class classify4(uint32_t a)
{
	if (in4(a, 0x00000000, 8))
		return HOSTRULE_ADDR_UNSPECIFIED;
	if (in4(a, 0x7f000000, 8))
		return HOSTRULE_ADDR_LOOPBACK;
	if (a == 0xa9fea9fe || a == 0xa9feaa02 || a == 0x646464c8)
		return HOSTRULE_ADDR_METADATA; /* 169.254.169.254, .170.2 (ECS), 100.100.100.200 */
	if (in4(a, 0x0a000000, 8) || in4(a, 0xac100000, 12) || in4(a, 0xc0a80000, 16))
		return HOSTRULE_ADDR_PRIVATE;
	if (in4(a, 0xa9fe0000, 16))
		return HOSTRULE_ADDR_LINK_LOCAL;
	if (in4(a, 0x64400000, 10))
		return HOSTRULE_ADDR_CGNAT;
	if (in4(a, 0xc0000200, 24) || in4(a, 0xc6336400, 24) || in4(a, 0xcb007100, 24))
		return HOSTRULE_ADDR_DOCUMENTATION;
	if (in4(a, 0xc0000000, 24) || in4(a, 0xc6120000, 15) || in4(a, 0xc0586300, 24))
		return HOSTRULE_ADDR_RESERVED; /* IETF, benchmarking, 6to4 relay */
	if (in4(a, 0xe0000000, 4))
		return HOSTRULE_ADDR_MULTICAST;
	if (in4(a, 0xf0000000, 4))
		return HOSTRULE_ADDR_RESERVED; /* and the broadcast address */
	return HOSTRULE_ADDR_PUBLIC;
}

static uint32_t be32(const unsigned char *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static enum hostrule_addr_class classify6(const unsigned char *b)
{
	static const unsigned char zero[16] = {0};
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b};
	static const unsigned char ec2[16] = {0xfd, 0, 0x0e, 0xc2, [14] = 0x02, [15] = 0x54};
	if (memcmp(b, zero, 16) == 0)
		return HOSTRULE_ADDR_UNSPECIFIED;
	if (memcmp(b, zero, 15) == 0 && b[15] == 1)
		return HOSTRULE_ADDR_LOOPBACK;
	/* v4-mapped, v4-compatible and NAT64 reach (or name) the v4 address they carry */
	if (memcmp(b, mapped, 12) == 0 || memcmp(b, zero, 12) == 0 || memcmp(b, nat64, 12) == 0)
		return classify4(be32(b + 12));
	if (memcmp(b, ec2, 16) == 0)
		return HOSTRULE_ADDR_METADATA;
	if ((b[0] & 0xfe) == 0xfc || (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0))
		return HOSTRULE_ADDR_PRIVATE; /* ULA, and the old site-local */
	if (memcmp(b, nat64, 4) == 0 && b[4] == 0 && b[5] == 1)
		return HOSTRULE_ADDR_PRIVATE; /* local-use NAT64 64:ff9b:1::/48 */
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		return HOSTRULE_ADDR_LINK_LOCAL;
	if (b[0] == 0xff)
		return HOSTRULE_ADDR_MULTICAST;
	uint32_t w = be32(b);
	if (w == 0x20010db8 || (w & 0xfffff000) == 0x3fff0000)
		return HOSTRULE_ADDR_DOCUMENTATION;
	if ((b[0] & 0xe0) != 0x20)
		return HOSTRULE_ADDR_RESERVED; /* outside 2000::/3: unallocated, discard 100::/64 */
	if ((w & 0xfffffe00) == 0x20010000 || (w >> 16) == 0x2002 || (w >> 16) == 0x5f00)
		return HOSTRULE_ADDR_RESERVED; /* IETF (Teredo, ...), 6to4 */
	return HOSTRULE_ADDR_PUBLIC;
}

enum hostrule_addr_class hostrule_addr_classify(const struct sockaddr *sa)
{
	if (!sa)
		return HOSTRULE_ADDR_INVALID;
	if (sa->sa_family == AF_INET)
		return classify4(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
	if (sa->sa_family == AF_INET6)
		return classify6(((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr);
	return HOSTRULE_ADDR_INVALID;
}

const char *hostrule_addr_class_name(enum hostrule_addr_class c)
{
	switch (c) {
	case HOSTRULE_ADDR_PUBLIC:
		return "public";
	case HOSTRULE_ADDR_LOOPBACK:
		return "loopback";
	case HOSTRULE_ADDR_PRIVATE:
		return "private";
	case HOSTRULE_ADDR_LINK_LOCAL:
		return "link-local";
	case HOSTRULE_ADDR_CGNAT:
		return "cgnat";
	case HOSTRULE_ADDR_MULTICAST:
		return "multicast";
	case HOSTRULE_ADDR_UNSPECIFIED:
		return "unspecified";
	case HOSTRULE_ADDR_METADATA:
		return "cloud-metadata";
	case HOSTRULE_ADDR_DOCUMENTATION:
		return "documentation";
	case HOSTRULE_ADDR_RESERVED:
		return "reserved";
	case HOSTRULE_ADDR_INVALID:
		break;
	}
	return "invalid";
}
