/*
 * fuzz_proxy: libFuzzer's entry point over the proxy's parsers, which read
 * only bytes a hostile step wrote: the HTTP request head (and the authority
 * and URI inside it), chunked framing, SOCKS5's three messages, the TLS
 * ClientHello, a DNS query the step's resolver reads (proxy_dns.c), and the
 * names hostrule normalises. Build (clang): ninja -C
 * build-clang fuzz_proxy (meson.build), or by hand:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Isrc/net -Isrc/core \
 *     -Isrc/util tests/fuzz/fuzz_proxy.c src/net/proxy_http.c src/net/proxy_socks.c \
 *     src/net/proxy_tls.c src/net/proxy_dns.c src/core/hostrule.c src/util/strv.c src/util/err.c -o
 * fuzz_proxy
 *   ./fuzz_proxy -max_total_time=60
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hostrule.h"
#include "proxy_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy of exactly size bytes, so ASan sees any read past the input */
	char *b = malloc(size ? size : 1);
	if (!b)
		return 0;
	memcpy(b, data, size);
	static struct proxy_req req;
	const char *why;
	int r = proxy_http_parse(b, size, &req, &why);
	if (r > 0) {
		if ((size_t)r > size || req.target.off + req.target.len > size)
			abort();
		for (size_t i = 0; i < req.nheaders; i++)
			if (req.h[i].line.off + req.h[i].line.len > (size_t)r)
				abort();
		struct proxy_span au, pa;
		if (proxy_absolute_uri(b + req.target.off, req.target.len, &au, &pa) == 0 &&
		    (au.off + au.len > req.target.len || pa.off + pa.len > req.target.len))
			abort();
	}
	char host[300], norm[HOSTRULE_NAME_MAX];
	size_t hl;
	unsigned port;
	bool br;
	if (proxy_authority(b, size, 80, host, sizeof(host), &hl, &port, &br) == 0 &&
	    (hl >= sizeof(host) || port == 0 || port > 65535))
		abort();
	if (hostrule_name_normalise(b, size, norm, sizeof(norm), &why) == 0 && strlen(norm) > 253)
		abort();
	struct proxy_chunk c = {0};
	bool done;
	for (size_t off = 0, step = 1 + (size ? data[0] % 7 : 0); off < size; off += step) {
		size_t n = size - off < step ? size - off : step;
		long k = proxy_chunk_feed(&c, b + off, n, &done, &why);
		if (k < 0 || done || (size_t)k > n)
			break;
	}
	const uint8_t *u = (const uint8_t *)b;
	struct proxy_socks_greeting g;
	struct proxy_socks_auth a;
	struct proxy_socks_req q;
	if (proxy_socks_greeting(u, size, &g) > (int)size ||
	    proxy_socks_auth(u, size, &a) > (int)size)
		abort();
	if (proxy_socks_request(u, size, &q) > 0 && q.atyp == 3 && q.nlen + 7 > size)
		abort();
	struct proxy_hello h;
	r = proxy_tls_hello(u, size, &h, &why);
	if (r > (int)size || h.nlen > sizeof(h.name))
		abort();
	struct proxy_dns_query dq;
	static uint8_t ans[512];
	r = proxy_dns_parse(u, size, &dq);
	if (r == 0 && (!dq.parsed || dq.qend > size || strlen(dq.name) > 253))
		abort();
	if (r >= 0 && proxy_dns_answer(u, &dq, r, NULL, ans, sizeof(ans)) > 12 + size)
		abort();
	free(b);
	return 0;
}
