/*
 * proxy_dns: the step's resolver under the namespaces, for clients that
 * ignore the proxy variables (issue 34, "transparent"). The step's network
 * namespace holds loopback only; its resolver's addresses are made there
 * and their UDP port 53 handed to the proxy, with a TCP listener on each
 * port the hosts name. A query for a name the hosts allow is answered with
 * a loopback address of its own (127.77.0.0/16, one per name, for the
 * run); a connection to that address and port is carried as a CONNECT to
 * the name (proxy_target.c), with every check a CONNECT meets. Any other
 * name is NXDOMAIN, and said. Only A records: AAAA and the other types get
 * an empty answer, so a client falls back to IPv4.
 *
 * Here the query read and the answer made (pure, as the other parsers: fuzzed
 * and unit-tested alone) and the names given addresses; proxy_target.c
 * decides. Every byte of a query comes from the step: the question is parsed with
 * every length checked, one question only, no compression pointers, labels
 * of letters the hosts' names may hold; anything else is FORMERR or no
 * answer at all. Nothing read makes it allocate past PROXY_DNS_MAX_NAMES.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proxy_int.h"

#define DNS_HEADER 12
#define C_IN 1

static unsigned get16(const uint8_t *b)
{
	return (unsigned)b[0] << 8 | b[1];
}

int proxy_dns_parse(const uint8_t *b, size_t len, struct proxy_dns_query *q)
{
	memset(q, 0, sizeof(*q));
	if (len < DNS_HEADER || (b[2] & 0x80))
		return -1; /* too short to answer, or an answer: never answered */
	q->id = (uint16_t)get16(b);
	q->rd = b[2] & 0x01;
	if (((b[2] >> 3) & 0x0f) != 0)
		return PROXY_DNS_NOTIMP; /* a QUERY only */
	if (get16(b + 4) != 1 || get16(b + 6) != 0 || get16(b + 8) != 0)
		return PROXY_DNS_FORMERR; /* one question, no answers or authority */
	size_t at = DNS_HEADER, n = 0;
	for (;;) {
		if (at >= len)
			return PROXY_DNS_FORMERR;
		unsigned l = b[at++];
		if (l == 0)
			break;
		if (l > 63 || at + l > len || n + l + 1 >= sizeof(q->name))
			return PROXY_DNS_FORMERR; /* a pointer (0xc0) is over 63 too */
		for (unsigned i = 0; i < l; i++) {
			uint8_t c = b[at + i];
			/* what hostrule_name_normalise may take; a '.' inside a label is not */
			if (c == '.' || c < 0x21 || c > 0x7e)
				return PROXY_DNS_FORMERR;
		}
		if (n)
			q->name[n++] = '.';
		memcpy(q->name + n, b + at, l);
		n += l;
		at += l;
	}
	if (n == 0 || at + 4 > len)
		return PROXY_DNS_FORMERR; /* the root, or no type and class */
	q->name[n] = '\0';
	q->qtype = (uint16_t)get16(b + at);
	q->qclass = (uint16_t)get16(b + at + 2);
	q->qend = at + 4;
	q->parsed = true;
	return q->qclass == C_IN ? 0 : PROXY_DNS_NOTIMP;
}

size_t proxy_dns_answer(const uint8_t *query, const struct proxy_dns_query *q, int rcode,
			const uint8_t *addr, uint8_t *out, size_t cap)
{
	size_t qlen = q->parsed ? q->qend - DNS_HEADER : 0;
	size_t need = DNS_HEADER + qlen + (addr ? 16 : 0);
	if (need > cap)
		return 0;
	memset(out, 0, DNS_HEADER);
	out[0] = (uint8_t)(q->id >> 8);
	out[1] = (uint8_t)q->id;
	out[2] = 0x80 | (q->rd ? 0x01 : 0);      /* a response, its RD echoed */
	out[3] = 0x80 | (uint8_t)(rcode & 0x0f); /* recursion available */
	out[5] = q->parsed ? 1 : 0;
	out[7] = addr ? 1 : 0;
	memcpy(out + DNS_HEADER, query + DNS_HEADER, qlen);
	if (addr) {
		/* the question's name (a pointer to it), A, IN, a TTL of 60 s, 4 bytes */
		static const uint8_t rr[] = {0xc0, 0x0c, 0, PROXY_DNS_TYPE_A, 0, C_IN, 0, 0, 0,
					     60,   0,    4};
		memcpy(out + DNS_HEADER + qlen, rr, sizeof(rr));
		memcpy(out + DNS_HEADER + qlen + sizeof(rr), addr, 4);
	}
	return need;
}

/* The address of map entry i: 127.77.0.0/16 from .0.1 up. */
static void entry_addr(size_t i, uint8_t out[4])
{
	out[0] = 127;
	out[1] = 77;
	out[2] = (uint8_t)((i + 1) >> 8);
	out[3] = (uint8_t)(i + 1);
}

int proxy_dns_map_addr(struct proxy_dns_map *m, const char *name, uint8_t out[4])
{
	for (size_t i = 0; i < m->n; i++) {
		if (strcmp(m->names[i], name) == 0) {
			entry_addr(i, out);
			return 0;
		}
	}
	if (m->n == PROXY_DNS_MAX_NAMES)
		return -ENOSPC;
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		char(*v)[HOSTRULE_NAME_MAX] = realloc(m->names, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		m->names = v;
		m->cap = cap;
	}
	memcpy(m->names[m->n], name, strlen(name) + 1);
	entry_addr(m->n++, out);
	return 0;
}

const char *proxy_dns_map_name(const struct proxy_dns_map *m, const uint8_t addr[4])
{
	if (addr[0] != 127 || addr[1] != 77)
		return NULL;
	size_t i = ((size_t)addr[2] << 8 | addr[3]);
	return i >= 1 && i <= m->n ? m->names[i - 1] : NULL;
}

void proxy_dns_map_free(struct proxy_dns_map *m)
{
	free(m->names);
	memset(m, 0, sizeof(*m));
}
