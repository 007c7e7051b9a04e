/* backend: see backend.h. Portable: the backends themselves are the build's. */
#include "backend.h"

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

int backend_choose(const struct stepbox_config *cfg, const struct backend_host *host,
		   struct backend *b, struct stepbox_err *err)
{
	if (cfg->backend != BACKEND_AUTO) {
		backend_init(b, cfg->backend, host);
		return b->ops ? b->ops->probe(b, cfg, err) : backend_not_here(cfg->backend, err);
	}
	/* strongest first; each refusal is kept to say why nothing ran */
	struct stepbox_err e[8];
	size_t n = 0;
	for (size_t i = 0; backend_table[i] && n < sizeof(e) / sizeof(e[0]); i++) {
		if (backend_table[i]->name == BACKEND_NONE)
			continue; /* no sandbox is never chosen */
		backend_init(b, backend_table[i]->name, host);
		memset(&e[n], 0, sizeof(e[n]));
		if (b->ops->probe(b, cfg, &e[n]) == 0)
			return 0;
		n++;
	}
	backend_init(b, BACKEND_NONE, host);
	return backend_none_usable(host, e, n, err);
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
