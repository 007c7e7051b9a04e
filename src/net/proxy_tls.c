/*
 * proxy_tls: the ClientHello parser, a pure function over the first bytes
 * a client sends through a CONNECT tunnel. It reads the server name
 * (RFC 6066) and nothing else; every length is checked against the one
 * that holds it, and a record's length against what TLS allows (a record
 * claiming more is a lie, not a wait).
 */
#include "proxy_int.h"

#include <errno.h>
#include <string.h>

/* A cursor over bytes that never reads past its end. */
struct rd {
	const uint8_t *p;
	size_t n;
	bool bad;
};

static unsigned get(struct rd *r, size_t w)
{
	unsigned v = 0;
	if (r->bad || r->n < w) {
		r->bad = true;
		return 0;
	}
	for (size_t i = 0; i < w; i++)
		v = v << 8 | r->p[i];
	r->p += w;
	r->n -= w;
	return v;
}

/* A sub-cursor over the next len bytes (a vector with its length prefix read). */
static struct rd sub(struct rd *r, size_t len)
{
	struct rd s = {r->p, len, r->bad};
	if (r->bad || r->n < len) {
		r->bad = s.bad = true;
		s.n = 0;
		return s;
	}
	r->p += len;
	r->n -= len;
	return s;
}

static int server_name(struct rd ext, struct proxy_hello *h, const char **why)
{
	struct rd list = sub(&ext, get(&ext, 2));
	if (ext.bad || ext.n)
		return *why = "a malformed server_name extension", -EINVAL;
	while (list.n && !list.bad) {
		unsigned type = get(&list, 1);
		struct rd name = sub(&list, get(&list, 2));
		if (list.bad)
			break;
		if (type != 0)
			continue;
		if (h->sni)
			return *why = "two server names", -EINVAL;
		if (name.n == 0 || name.n >= sizeof(h->name))
			return *why = "a server name of a bad length", -EINVAL;
		memcpy(h->name, name.p, name.n);
		h->nlen = name.n;
		h->sni = true;
	}
	if (list.bad || !h->sni)
		return *why = "a malformed server_name extension", -EINVAL;
	return 0;
}

static int client_hello(struct rd r, struct proxy_hello *h, const char **why)
{
	get(&r, 2);  /* legacy_version */
	sub(&r, 32); /* random */
	sub(&r, get(&r, 1));
	struct rd suites = sub(&r, get(&r, 2));
	struct rd comp = sub(&r, get(&r, 1));
	if (r.bad || suites.n < 2 || suites.n % 2 || comp.n < 1)
		return *why = "a malformed ClientHello", -EINVAL;
	if (r.n == 0)
		return 0; /* no extensions: no server name */
	struct rd exts = sub(&r, get(&r, 2));
	if (r.bad || r.n)
		return *why = "a malformed ClientHello", -EINVAL;
	bool seen = false;
	while (exts.n && !exts.bad) {
		unsigned type = get(&exts, 2);
		struct rd ext = sub(&exts, get(&exts, 2));
		if (exts.bad)
			break;
		if (type != 0)
			continue;
		if (seen)
			return *why = "two server_name extensions", -EINVAL;
		seen = true;
		if (server_name(ext, h, why) < 0)
			return -EINVAL;
	}
	if (exts.bad)
		return *why = "malformed extensions", -EINVAL;
	return 0;
}

int proxy_tls_hello(const uint8_t *b, size_t len, struct proxy_hello *h, const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	memset(h, 0, sizeof(*h));
	uint8_t hs[PROXY_HELLO_MAX + 4];
	size_t have = 0, need = 0, off = 0;
	/* gather the handshake message from as many records as it spans */
	for (;;) {
		if (len - off < 5)
			return len > off && b[off] != 22 ? (*why = "not a TLS handshake", -EINVAL)
							 : 0;
		if (b[off] != 22 || b[off + 1] != 3)
			return *why = "not a TLS handshake", -EINVAL;
		size_t rl = (size_t)b[off + 3] << 8 | b[off + 4];
		if (rl == 0 || rl > 16384)
			return *why = "a TLS record of a length TLS does not allow", -EINVAL;
		if (len - off - 5 < rl)
			return 0;
		size_t take = rl;
		if (have + take > sizeof(hs))
			return *why = "a ClientHello too large", -E2BIG;
		memcpy(hs + have, b + off + 5, take);
		have += take;
		off += 5 + rl;
		if (have >= 4 && !need) {
			if (hs[0] != 1)
				return *why = "not a ClientHello", -EINVAL;
			need = 4 + ((size_t)hs[1] << 16 | (size_t)hs[2] << 8 | hs[3]);
			if (need > sizeof(hs))
				return *why = "a ClientHello too large", -E2BIG;
		}
		if (need && have >= need)
			break;
	}
	if (have != need)
		return *why = "a record holding more than the ClientHello", -EINVAL;
	struct rd r = {hs + 4, need - 4, false};
	if (client_hello(r, h, why) < 0)
		return -EINVAL;
	return (int)off;
}
