/*
 * jsonmem: every byte jansson holds, counted, under a cap. stepbox mcp runs
 * outside every sandbox and limit, and what a client sends is parsed by
 * jansson: a 4 MiB message of 355,000 short names was held as 63 MiB, and
 * 256 such calls waiting came to about 15 GiB. With the cap set, an
 * allocation past it fails, so that parse fails (and is answered with an
 * error) instead of the server growing.
 */
#ifndef STEPBOX_JSONMEM_H
#define STEPBOX_JSONMEM_H

#include <stdbool.h>
#include <stddef.h>

/* Route jansson's allocations through the counter (once, before any JSON). */
void jsonmem_install(void);

/* Free what jansson gave the caller (json_dumps's text): not free(). */
void jsonmem_free(void *p);

/* Refuse allocations that would take the total past cap bytes (0: no cap). */
void jsonmem_cap(size_t cap);

/* Bytes jansson holds now (with each block's header). */
size_t jsonmem_used(void);

/* Whether an allocation was refused for the cap since the last call (then cleared). */
bool jsonmem_refused(void);

#endif
