/* backend: see backend.h. Portable: the backends themselves are the build's. */
#include "backend.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

const struct backend_ops *backend_find(enum policy_backend name)
{
	for (size_t i = 0; backend_table[i]; i++)
		if (backend_table[i]->name == name)
			return backend_table[i];
	return NULL;
}

void backend_init(struct backend *b, enum policy_backend name, const struct backend_host *host)
{
	memset(b, 0, sizeof(*b));
	b->ops = backend_find(name);
	b->name = name;
	b->host = host;
}

/*
 * auto's walk of the table from 'from' on, strongest first, with what was
 * tried before (tried, n): b is the first whose probe passes, carrying the
 * record of every one passed over; or none, with err from every refusal.
 */
static int choose_from(size_t from, const struct stepbox_config *cfg,
		       const struct backend_host *host, struct backend_tried *tried, size_t n,
		       struct backend *b, struct stepbox_err *err)
{
	for (size_t i = from; backend_table[i]; i++) {
		if (backend_table[i]->name == BACKEND_NONE)
			continue; /* no sandbox is never chosen */
		assert(n < BACKEND_TRIED_MAX);
		backend_init(b, backend_table[i]->name, host);
		memset(&tried[n], 0, sizeof(tried[n]));
		tried[n].name = b->name;
		if (b->ops->probe(b, cfg, &tried[n].why) == 0) {
			memcpy(b->tried, tried, n * sizeof(*tried));
			b->ntried = n;
			return 0;
		}
		n++;
	}
	struct stepbox_err e[BACKEND_TRIED_MAX];
	for (size_t i = 0; i < n; i++)
		e[i] = tried[i].why;
	backend_init(b, BACKEND_NONE, host);
	return backend_none_usable(host, e, n, err);
}

int backend_choose(const struct stepbox_config *cfg, const struct backend_host *host,
		   struct backend *b, struct stepbox_err *err)
{
	if (cfg->backend != BACKEND_AUTO) {
		backend_init(b, cfg->backend, host);
		return b->ops ? b->ops->probe(b, cfg, err) : backend_not_here(cfg->backend, err);
	}
	struct backend_tried tried[BACKEND_TRIED_MAX];
	return choose_from(0, cfg, host, tried, 0, b, err);
}

int backend_fall_back(const struct stepbox_config *cfg, struct backend_host *host,
		      struct backend *b, const struct stepbox_err *why, struct stepbox_err *err)
{
	assert(cfg->backend == BACKEND_AUTO && b->ops && b->ntried < BACKEND_TRIED_MAX);
	struct backend_tried tried[BACKEND_TRIED_MAX];
	size_t n = b->ntried, at = 0;
	memcpy(tried, b->tried, n * sizeof(*tried));
	tried[n] = (struct backend_tried){.name = b->name, .at_start = true, .why = *why};
	/* in the words of a probe's refusal: the backend first */
	snprintf(tried[n].why.msg, sizeof(tried[n].why.msg), "%s: %.900s",
		 policy_backend_name(b->name), why->msg);
	while (backend_table[at] && backend_table[at] != b->ops)
		at++;
	assert(backend_table[at]);
	/* the start was the better probe; the rest are asked for real now */
	backend_host_probe_all(host);
	return choose_from(at + 1, cfg, host, tried, n + 1, b, err);
}

int backend_plan(struct backend *b, const struct backend_input *in, struct stepbox_err *err)
{
	return b->ops->plan(b, in, err);
}

void backend_release(struct backend *b)
{
	if (b->ops)
		b->ops->release(b);
}

void backend_describe(const struct backend *b, char *buf, size_t cap)
{
	b->ops->describe(b, buf, cap);
}

int backend_missing(const struct backend *b, struct strv *out)
{
	return b->ops->missing(b, out);
}

void backend_say(FILE *out, const struct backend *b, size_t ngrants)
{
	char what[256];
	struct strv m = STRV_INIT;
	backend_describe(b, what, sizeof(what));
	fprintf(out, "stepbox: backend %s, %zu grants\n", what, ngrants);
	backend_missing(b, &m);
	for (size_t i = 0; i < m.n; i++)
		fprintf(out, "%s%s%s", i ? ", " : "stepbox: this host cannot give: ", m.v[i],
			i + 1 == m.n ? "\n" : "");
	strv_release(&m);
}
