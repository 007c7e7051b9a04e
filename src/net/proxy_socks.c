/*
 * proxy_socks: the SOCKS5 parsers (RFC 1928, and RFC 1929's user and
 * password), pure functions over what a hostile step wrote. Every length
 * is one byte, so no message is longer than 262 bytes.
 */
#include "proxy_int.h"

#include <errno.h>
#include <string.h>

int proxy_socks_greeting(const uint8_t *b, size_t len, struct proxy_socks_greeting *g)
{
	memset(g, 0, sizeof(*g));
	if (len < 2)
		return len && b[0] != 5 ? -EINVAL : 0;
	if (b[0] != 5 || b[1] == 0)
		return -EINVAL;
	size_t n = b[1];
	if (len < 2 + n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (b[2 + i] == 0)
			g->no_auth = true;
		else if (b[2 + i] == 2)
			g->userpass = true;
	}
	return (int)(2 + n);
}

int proxy_socks_auth(const uint8_t *b, size_t len, struct proxy_socks_auth *a)
{
	memset(a, 0, sizeof(*a));
	if (len < 2)
		return len && b[0] != 1 ? -EINVAL : 0;
	if (b[0] != 1)
		return -EINVAL;
	size_t ul = b[1];
	if (len < 2 + ul + 1)
		return 0;
	size_t pl = b[2 + ul];
	if (len < 3 + ul + pl)
		return 0;
	a->user = b + 2;
	a->ulen = ul;
	a->pass = b + 3 + ul;
	a->plen = pl;
	return (int)(3 + ul + pl);
}

int proxy_socks_request(const uint8_t *b, size_t len, struct proxy_socks_req *r)
{
	memset(r, 0, sizeof(*r));
	if (len < 4)
		return len && b[0] != 5 ? -EINVAL : 0;
	if (b[0] != 5 || b[2] != 0)
		return -EINVAL;
	r->cmd = b[1];
	r->atyp = b[3];
	size_t need;
	switch (r->atyp) {
	case 1:
		need = 4 + 4 + 2;
		if (len < need)
			return 0;
		memcpy(r->addr, b + 4, 4);
		break;
	case 4:
		need = 4 + 16 + 2;
		if (len < need)
			return 0;
		memcpy(r->addr, b + 4, 16);
		break;
	case 3:
		if (len < 5)
			return 0;
		if (b[4] == 0)
			return -EINVAL;
		need = 5 + b[4] + 2;
		if (len < need)
			return 0;
		r->name = b + 5;
		r->nlen = b[4];
		break;
	default:
		return -EPROTO;
	}
	r->port = (unsigned)b[need - 2] << 8 | b[need - 1];
	return (int)need;
}
