/* jsonmem: see jsonmem.h. */
#include "jsonmem.h"

#include <jansson.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>

/* Each block starts with its size, aligned as malloc's own blocks are. */
#define HEADER alignof(max_align_t)

/* The one counter jansson's callbacks can reach (they take no argument). */
static struct {
	size_t used, cap;
	bool refused;
} mem;

static void *counted_malloc(size_t n)
{
	if (n > SIZE_MAX - HEADER ||
	    (mem.cap && (n + HEADER > mem.cap || mem.used > mem.cap - n - HEADER))) {
		mem.refused = true;
		return NULL;
	}
	size_t *p = malloc(n + HEADER);
	if (!p)
		return NULL;
	*p = n + HEADER;
	mem.used += n + HEADER;
	return (char *)p + HEADER;
}

static void counted_free(void *q)
{
	if (!q)
		return;
	size_t *p = (size_t *)(void *)((char *)q - HEADER);
	mem.used -= *p;
	free(p);
}

void jsonmem_free(void *p)
{
	/* whichever jansson allocates with: the counter once installed, else malloc */
	json_malloc_t m;
	json_free_t f;
	json_get_alloc_funcs(&m, &f);
	f(p);
}

void jsonmem_install(void)
{
	json_set_alloc_funcs(counted_malloc, counted_free);
}

void jsonmem_cap(size_t cap)
{
	mem.cap = cap;
}

size_t jsonmem_used(void)
{
	return mem.used;
}

bool jsonmem_refused(void)
{
	bool r = mem.refused;
	mem.refused = false;
	return r;
}
