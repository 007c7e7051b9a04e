/* strbuf: see strbuf.h. */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>

void strbuf_init(struct strbuf *sb, char *buf, size_t cap)
{
	sb->buf = buf;
	sb->cap = cap;
	sb->len = 0;
	sb->cut = false;
	buf[0] = '\0';
}

bool strbuf_add(struct strbuf *sb, const char *fmt, ...)
{
	if (sb->cut)
		return false;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sb->cap - sb->len) {
		sb->cut = true;
		sb->len = sb->cap - 1; /* vsnprintf wrote what fit, and the NUL */
		sb->buf[sb->len] = '\0';
		return false;
	}
	sb->len += (size_t)n;
	return true;
}

bool strbuf_join(struct strbuf *sb, const char *const *v, size_t n, const char *sep)
{
	for (size_t i = 0; i < n; i++)
		if (!strbuf_add(sb, "%s%s", i ? sep : "", v[i]))
			return false;
	return true;
}
