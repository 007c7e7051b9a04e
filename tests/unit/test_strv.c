#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "strv.h"
#include "tap.h"

/* strbuf: never past its buffer, always terminated, a cut said and kept. */
static void strbuf(void)
{
	char buf[12];
	memset(buf, 'x', sizeof(buf));
	struct strbuf sb;
	strbuf_init(&sb, buf, 8);
	CHECK(strbuf_add(&sb, "%s-%d", "ab", 12) && sb.len == 5 && strcmp(buf, "ab-12") == 0);
	CHECK(!strbuf_add(&sb, "%s", "cdef") && sb.cut && sb.len == 7);
	CHECK_STR(buf, "ab-12cd");
	CHECK(buf[8] == 'x'); /* nothing written past the 8 bytes it was given */
	CHECK(!strbuf_add(&sb, "%s", "") && strcmp(buf, "ab-12cd") == 0); /* cut stays cut */
	const char *const v[] = {"one", "two", "three"};
	strbuf_init(&sb, buf, sizeof(buf));
	CHECK(strbuf_join(&sb, v, 2, ", ") && strcmp(buf, "one, two") == 0);
	strbuf_init(&sb, buf, sizeof(buf));
	CHECK(!strbuf_join(&sb, v, 3, ", ") && sb.cut && strcmp(buf, "one, two, t") == 0);
	strbuf_init(&sb, buf, 1);
	CHECK(!strbuf_add(&sb, "a") && buf[0] == '\0');
	strbuf_init(&sb, buf, sizeof(buf));
	CHECK(strbuf_join(&sb, v, 0, ", ") && buf[0] == '\0' && !sb.cut);
}

int main(void)
{
	struct strv sv = STRV_INIT;
	CHECK(strv_find(&sv, "a") == -1);
	CHECK(strv_push(&sv, "a") == 0);
	CHECK(strv_push(&sv, "b") == 0);
	CHECK(sv.n == 2 && sv.v[2] == NULL);
	CHECK(strv_find(&sv, "b") == 1);
	CHECK(strv_push_owned(&sv, NULL) == -ENOMEM);
	for (int i = 0; i < STRV_MAX; i++)
		if (strv_push(&sv, "x") < 0)
			break;
	CHECK(sv.n == STRV_MAX);
	CHECK(strv_push(&sv, "over") == -E2BIG);
	strv_release(&sv);
	CHECK(sv.n == 0 && sv.v == NULL);
	strv_release(&sv); /* twice is fine */
	char *s = strv_fmt("%s-%d", "a", 1);
	CHECK_STR(s, "a-1");
	free(s);
	strbuf();
	return tap_done();
}
