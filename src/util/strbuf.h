/*
 * strbuf: text built into a caller's fixed buffer, in the spirit of curl's
 * dynbuf with its hard cap: it never overflows and never allocates; what
 * does not fit is cut (at a character, the buffer always terminated) and
 * the cut is remembered, so a caller can say the text is incomplete.
 */
#ifndef STEPBOX_STRBUF_H
#define STEPBOX_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf {
	char *buf;
	size_t cap; /* bytes of buf, the terminating NUL included */
	size_t len;
	bool cut; /* something did not fit */
};

/* Start empty text in buf (cap > 0 bytes). */
void strbuf_init(struct strbuf *sb, char *buf, size_t cap);

/* Append printf-formatted text. false when it was cut (then and ever after). */
__attribute__((format(printf, 2, 3))) bool strbuf_add(struct strbuf *sb, const char *fmt, ...);

/* Append the n strings of v with sep between them. */
bool strbuf_join(struct strbuf *sb, const char *const *v, size_t n, const char *sep);

#endif
