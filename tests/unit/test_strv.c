#include <errno.h>
#include <stdlib.h>

#include "strv.h"
#include "tap.h"

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
	return tap_done();
}
