/*
 * proxy_http: the HTTP parsers of the proxy, pure functions over bytes a
 * hostile step wrote. Strict where leniency lets two readers frame one
 * message two ways (request smuggling): lines end in CRLF, no folding, no
 * space before a header's colon, one Content-Length, Transfer-Encoding
 * exactly "chunked" and never with a length.
 */
#include "proxy_int.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

/* RFC 9110's tchar: what a method or a header's name is made of. */
static bool tchar(unsigned char c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return true;
	return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static bool span_is(const char *buf, struct proxy_span s, const char *word)
{
	return s.len == strlen(word) && strncasecmp(buf + s.off, word, s.len) == 0;
}

/* The end of the line starting at off: the offset of its CR, or -1 for none yet, -2 bad. */
static long line_end(const char *buf, size_t len, size_t off)
{
	for (size_t i = off; i < len; i++) {
		if (buf[i] == '\n')
			return -2; /* a bare LF */
		if (buf[i] == '\r') {
			if (i + 1 >= len)
				return -1;
			return buf[i + 1] == '\n' ? (long)i : -2;
		}
	}
	return -1;
}

static int request_line(const char *buf, size_t end, struct proxy_req *req, const char **why)
{
	size_t i = 0;
	while (i < end && tchar((unsigned char)buf[i]))
		i++;
	if (i == 0 || i >= end || buf[i] != ' ')
		return *why = "a malformed request line", -EINVAL;
	req->method = (struct proxy_span){0, i};
	size_t t = ++i;
	while (i < end && (unsigned char)buf[i] > 0x20 && (unsigned char)buf[i] < 0x7f)
		i++;
	if (i == t || i >= end || buf[i] != ' ')
		return *why = "a malformed request target", -EINVAL;
	req->target = (struct proxy_span){t, i - t};
	i++;
	if (end - i != 8 || memcmp(buf + i, "HTTP/1.", 7) != 0 ||
	    (buf[i + 7] != '0' && buf[i + 7] != '1'))
		return *why = "not HTTP/1.0 or HTTP/1.1", -EINVAL;
	req->minor = buf[i + 7] - '0';
	return 0;
}

static int parse_length(const char *s, size_t n, unsigned long long *out)
{
	unsigned long long v = 0;
	if (n == 0 || n > 18)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long long)(s[i] - '0');
	}
	*out = v;
	return 0;
}

/* What this header means for the framing and the proxy. */
static int header_meaning(const char *buf, struct proxy_req *req, int idx, bool *te,
			  const char **why)
{
	const struct proxy_header *h = &req->h[idx];
	if (span_is(buf, h->name, "content-length")) {
		if (req->has_length)
			return *why = "two Content-Length headers", -EINVAL;
		if (parse_length(buf + h->value.off, h->value.len, &req->length) < 0)
			return *why = "a Content-Length that is not a number", -EINVAL;
		req->has_length = true;
	} else if (span_is(buf, h->name, "transfer-encoding")) {
		if (*te)
			return *why = "two Transfer-Encoding headers", -EINVAL;
		*te = true;
		if (!span_is(buf, h->value, "chunked"))
			return *why = "a Transfer-Encoding other than chunked", -EINVAL;
		req->chunked = true;
	} else if (span_is(buf, h->name, "host")) {
		if (req->host >= 0)
			return *why = "two Host headers", -EINVAL;
		req->host = idx;
	} else if (span_is(buf, h->name, "proxy-authorization")) {
		if (req->proxy_auth >= 0)
			return *why = "two Proxy-Authorization headers", -EINVAL;
		req->proxy_auth = idx;
	}
	return 0;
}

static int header_line(const char *buf, size_t off, size_t end, struct proxy_header *h,
		       const char **why)
{
	size_t i = off;
	while (i < end && tchar((unsigned char)buf[i]))
		i++;
	if (i == off)
		return *why = buf[off] == ' ' || buf[off] == '\t' ? "a folded header line"
								  : "a malformed header name",
		       -EINVAL;
	if (i >= end || buf[i] != ':')
		return *why = "a malformed header (space before its colon?)", -EINVAL;
	h->name = (struct proxy_span){off, i - off};
	i++;
	while (i < end && (buf[i] == ' ' || buf[i] == '\t'))
		i++;
	size_t v = i, last = i;
	for (; i < end; i++) {
		unsigned char c = (unsigned char)buf[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return *why = "a control character in a header", -EINVAL;
		if (c != ' ' && c != '\t')
			last = i + 1;
	}
	h->value = (struct proxy_span){v, last - v};
	h->line = (struct proxy_span){off, end + 2 - off};
	return 0;
}

int proxy_http_parse(const char *buf, size_t len, struct proxy_req *req, const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	memset(req, 0, sizeof(*req));
	req->host = req->proxy_auth = -1;
	size_t scan = len < PROXY_HEAD_MAX ? len : PROXY_HEAD_MAX;
	long e = line_end(buf, scan, 0);
	if (e == -2)
		return *why = "a bare LF", -EINVAL;
	if (e == -1)
		return len >= PROXY_HEAD_MAX ? (*why = "a request line too long", -E2BIG) : 0;
	int r = request_line(buf, (size_t)e, req, why);
	if (r < 0)
		return r;
	bool te = false;
	for (size_t off = (size_t)e + 2;;) {
		e = line_end(buf, scan, off);
		if (e == -2)
			return *why = "a bare LF", -EINVAL;
		if (e == -1)
			return len >= PROXY_HEAD_MAX ? (*why = "a request head too large", -E2BIG)
						     : 0;
		if ((size_t)e == off) {
			req->head_len = off + 2;
			break;
		}
		if (req->nheaders >= PROXY_HEADERS_MAX)
			return *why = "too many headers", -E2BIG;
		r = header_line(buf, off, (size_t)e, &req->h[req->nheaders], why);
		if (r < 0)
			return r;
		r = header_meaning(buf, req, (int)req->nheaders++, &te, why);
		if (r < 0)
			return r;
		off = (size_t)e + 2;
	}
	if (req->chunked && req->has_length)
		return *why = "both Content-Length and Transfer-Encoding", -EINVAL;
	if (req->chunked && req->minor == 0)
		return *why = "Transfer-Encoding in HTTP/1.0", -EINVAL;
	return (int)req->head_len;
}

static int parse_port(const char *s, size_t n, unsigned *port)
{
	unsigned v = 0;
	if (n == 0 || n > 5)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v < 1 || v > 65535)
		return -EINVAL;
	*port = v;
	return 0;
}

int proxy_authority(const char *s, size_t len, unsigned defport, char *host, size_t hostsize,
		    size_t *hostlen, unsigned *port, bool *bracketed)
{
	size_t hl;
	const char *h = s, *rest;
	*bracketed = false;
	if (memchr(s, '@', len))
		return -EINVAL; /* user info: http://allowed@evil/ reads two ways */
	if (len && s[0] == '[') {
		const char *close = memchr(s, ']', len);
		if (!close)
			return -EINVAL;
		h = s + 1;
		hl = (size_t)(close - h);
		rest = close + 1;
		*bracketed = true;
	} else {
		/* the last colon: a name holds none, an unbracketed v6 is refused below */
		const char *colon = NULL;
		for (size_t i = 0; i < len; i++)
			if (s[i] == ':')
				colon = s + i;
		hl = colon ? (size_t)(colon - s) : len;
		rest = s + hl;
		if (memchr(s, ':', hl))
			return -EINVAL;
	}
	size_t restlen = len - (size_t)(rest - s);
	if (hl == 0 || hl >= hostsize)
		return -EINVAL;
	if (restlen == 0) {
		if (!defport)
			return -EINVAL;
		*port = defport;
	} else if (rest[0] != ':' || parse_port(rest + 1, restlen - 1, port) < 0) {
		return -EINVAL;
	}
	memcpy(host, h, hl);
	host[hl] = '\0';
	*hostlen = hl;
	return 0;
}

int proxy_absolute_uri(const char *s, size_t len, struct proxy_span *authority,
		       struct proxy_span *path)
{
	if (len < 8 || strncasecmp(s, "http://", 7) != 0)
		return -EINVAL;
	if (memchr(s, '#', len))
		return -EINVAL;
	size_t a = 7, i = 7;
	while (i < len && s[i] != '/' && s[i] != '?')
		i++;
	*authority = (struct proxy_span){a, i - a};
	*path = (struct proxy_span){i, len - i};
	return authority->len ? 0 : -EINVAL;
}

enum {
	CH_SIZE,    /* hex digits */
	CH_EXT,     /* ;extension, to the CR */
	CH_SIZE_LF, /* the LF after the size line */
	CH_DATA,    /* left bytes */
	CH_DATA_CR, /* the CRLF after the data */
	CH_DATA_LF,
	CH_TRAILER, /* a trailer line, or the empty line that ends the body */
	CH_TRAILER_LF,
	CH_END_LF, /* the LF of the final empty line */
	CH_DONE,
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* One byte of framing (not data); -EINVAL on a malformed one. */
static int chunk_byte(struct proxy_chunk *c, char b, const char **why)
{
	switch (c->state) {
	case CH_SIZE:
		if (hexval(b) >= 0) {
			if (++c->digits > 15)
				return *why = "a chunk size too large", -EINVAL;
			c->left = c->left * 16 + (unsigned long long)hexval(b);
			return 0;
		}
		if (c->digits == 0)
			return *why = "a chunk without a size", -EINVAL;
		if (b == ';') {
			c->state = CH_EXT;
			return 0;
		}
		if (b != '\r')
			return *why = "a malformed chunk size", -EINVAL;
		c->state = CH_SIZE_LF;
		return 0;
	case CH_EXT:
		if (++c->line > PROXY_CHUNK_LINE_MAX)
			return *why = "a chunk extension too long", -EINVAL;
		if (b == '\r')
			c->state = CH_SIZE_LF;
		else if ((unsigned char)b < 0x20 && b != '\t')
			return *why = "a control character in a chunk extension", -EINVAL;
		return 0;
	case CH_SIZE_LF:
		if (b != '\n')
			return *why = "a chunk size line without its LF", -EINVAL;
		c->state = c->left ? CH_DATA : CH_TRAILER;
		c->line = 0;
		return 0;
	case CH_DATA_CR:
		if (b != '\r')
			return *why = "chunk data longer than its size", -EINVAL;
		c->state = CH_DATA_LF;
		return 0;
	case CH_DATA_LF:
		if (b != '\n')
			return *why = "chunk data not ended by CRLF", -EINVAL;
		c->state = CH_SIZE;
		c->digits = 0;
		c->left = 0;
		c->line = 0;
		return 0;
	case CH_TRAILER:
		if (c->line == 0 && b == '\r') {
			c->state = CH_END_LF;
			return 0;
		}
		if (++c->line > PROXY_CHUNK_LINE_MAX || ++c->trailers > PROXY_TRAILERS_MAX)
			return *why = "trailers too large", -EINVAL;
		if (b == '\r')
			c->state = CH_TRAILER_LF;
		else if (b == '\n' || ((unsigned char)b < 0x20 && b != '\t'))
			return *why = "a control character in a trailer", -EINVAL;
		return 0;
	case CH_TRAILER_LF:
		if (b != '\n')
			return *why = "a trailer without its LF", -EINVAL;
		c->state = CH_TRAILER;
		c->line = 0;
		return 0;
	case CH_END_LF:
		if (b != '\n')
			return *why = "a chunked body not ended by CRLF", -EINVAL;
		c->state = CH_DONE;
		return 0;
	}
	return *why = "a chunked body past its end", -EINVAL;
}

long proxy_chunk_feed(struct proxy_chunk *c, const char *buf, size_t len, bool *done,
		      const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	size_t i = 0;
	*done = c->state == CH_DONE;
	while (i < len && !*done) {
		if (c->state == CH_DATA) {
			size_t n = len - i;
			if (n > c->left)
				n = (size_t)c->left;
			c->left -= n;
			i += n;
			if (c->left == 0)
				c->state = CH_DATA_CR;
			continue;
		}
		if (chunk_byte(c, buf[i++], why) < 0)
			return -EINVAL;
		*done = c->state == CH_DONE;
	}
	return (long)i;
}
