/* tap.h: the smallest TAP producer; meson reads it, so does tests/run.sh. */
#ifndef STEPBOX_TAP_H
#define STEPBOX_TAP_H

#include <stdio.h>
#include <string.h>

static int tap_count, tap_failed;

static void tap_ok(int ok, const char *file, int line, const char *what)
{
	tap_count++;
	if (!ok)
		tap_failed++;
	printf("%s %d - %s%s", ok ? "ok" : "not ok", tap_count, what, ok ? "\n" : "");
	if (!ok)
		printf(" (%s:%d)\n", file, line);
	fflush(stdout);
}

#define CHECK(cond) tap_ok(!!(cond), __FILE__, __LINE__, #cond)
#define CHECK_STR(a, b)                                                                            \
	do {                                                                                       \
		const char *a_ = (a), *b_ = (b);                                                   \
		int ok_ = a_ && b_ && strcmp(a_, b_) == 0;                                         \
		if (!ok_)                                                                          \
			printf("# got '%s', want '%s'\n", a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
		tap_ok(ok_, __FILE__, __LINE__, #a " == " #b);                                     \
	} while (0)
#define CHECK_HAS(hay, needle)                                                                     \
	do {                                                                                       \
		const char *h_ = (hay);                                                            \
		int ok_ = h_ && strstr(h_, (needle)) != NULL;                                      \
		if (!ok_)                                                                          \
			printf("# '%s' lacks '%s'\n", h_ ? h_ : "(null)", (needle));               \
		tap_ok(ok_, __FILE__, __LINE__, "'" needle "' in " #hay);                          \
	} while (0)

static int tap_done(void)
{
	printf("1..%d\n", tap_count);
	return tap_failed ? 1 : 0;
}

#endif
