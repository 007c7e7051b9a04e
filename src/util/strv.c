#include "strv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int strv_grow(void *vp, size_t *cap, size_t n, size_t elem, size_t first)
{
	void **v = vp;
	if (n < *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : first;
	if (ncap > SIZE_MAX / elem)
		return -ENOMEM;
	void *nv = realloc(*v, ncap * elem);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

int strv_push_owned(struct strv *sv, char *s)
{
	if (!s)
		return -ENOMEM;
	if (sv->n >= STRV_MAX) {
		free(s);
		return -E2BIG;
	}
	/* n + 1: the terminating NULL needs its slot too */
	if (strv_grow(&sv->v, &sv->cap, sv->n + 1, sizeof(*sv->v), 8) < 0) {
		free(s);
		return -ENOMEM;
	}
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
	return 0;
}

int strv_push(struct strv *sv, const char *s)
{
	return strv_push_owned(sv, strdup(s));
}

int strv_extend(struct strv *sv, const struct strv *from)
{
	int r = 0;
	for (size_t i = 0; r == 0 && i < from->n; i++)
		r = strv_push(sv, from->v[i]);
	return r;
}

long strv_find(const struct strv *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return (long)i;
	return -1;
}

void strv_release(struct strv *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->cap = 0;
}

char *strv_fmt(const char *fmt, ...)
{
	char *out = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&out, fmt, ap) < 0)
		out = NULL;
	va_end(ap);
	return out;
}
