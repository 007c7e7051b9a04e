/* strv: a NULL-terminated, growable vector of owned strings. */
#ifndef STEPBOX_STRV_H
#define STEPBOX_STRV_H

#include <stddef.h>

/* Hard cap on entries: every list stepbox reads comes from input. */
#define STRV_MAX 65536

struct strv {
	char **v; /* NULL-terminated once anything was added; NULL when empty */
	size_t n;
	size_t cap;
};

#define STRV_INIT                                                                                  \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}

/*
 * Make room for one more element in any growable array: *vp (of elem-byte
 * elements, *cap of them allocated) grows to first, then doubles, when n has
 * reached *cap. Returns 0 or -ENOMEM (the array is then unchanged).
 */
int strv_grow(void *vp, size_t *cap, size_t n, size_t elem, size_t first);

/* Append a copy of s. Returns 0, -ENOMEM, or -E2BIG past STRV_MAX. */
int strv_push(struct strv *sv, const char *s);
/* Append a copy of every entry of from. 0, or a negative errno (partly appended). */
int strv_extend(struct strv *sv, const struct strv *from);
/* Append s itself, taking ownership (freed even on error). */
int strv_push_owned(struct strv *sv, char *s);
/* Index of the first entry equal to s, or -1. */
long strv_find(const struct strv *sv, const char *s);
/* Free every entry and the vector; the struct is reusable after. */
void strv_release(struct strv *sv);

/* asprintf that returns NULL on failure instead of leaving *out undefined. */
__attribute__((format(printf, 1, 2))) char *strv_fmt(const char *fmt, ...);

#endif
