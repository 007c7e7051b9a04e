/*
 * The Landlock domains the step's processes take themselves (landrun, an
 * agent confining its tools, a nested stepbox), for the calls the
 * supervisor makes on the step's behalf: a connect, a send, a TCP bind.
 * Made by a thread of ours with only our rules, such a call would reach
 * what the step's own sandbox refuses it: the supervisor a deputy that
 * gives a confined process more than its confinement allows.
 *
 * A process's domain cannot be read, and which of the step's processes one
 * holds cannot be told from outside (a child inherits it, a parent may be
 * gone). So each domain taken is copied when it is taken (its ruleset fd,
 * through pidfd_getfd, while the caller waits in landlock_restrict_self)
 * and laid on the keeper, a thread of ours that holds every such domain in
 * turn; from then on every call made for the step is made on a thread the
 * keeper starts, which inherits them all. Stricter than the caller's own,
 * never looser: a process outside the nested sandbox meets its rules too,
 * in these calls, for the rest of the run. The copy is laid before the
 * caller's domain exists, so rules added to the ruleset later reach the
 * step's domain, never ours. A domain that cannot be copied (or one more
 * than Landlock stacks) leaves the keeper broken: each such call is then
 * refused, and said (OP_NESTED).
 */
#include "supervise.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "landlock.h"
#include "supervise_int.h"

/* Landlock stacks 16 domains; leave room for the step's and a worker's TCP rules. */
#define NESTED_MAX 12

enum keeper_job { K_IDLE, K_LAY, K_START, K_QUIT };

struct sup_nested {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	enum keeper_job job; /* the dispatcher's one job, until the keeper ends it */
	int ruleset;         /* K_LAY: the copy to lay on */
	void *(*fn)(void *); /* K_START: a thread to start under every domain */
	void *arg;
	int result; /* 0 or -errno */
	unsigned layers;
};

static void *keep(void *arg)
{
	struct sup_nested *k = arg;
	/* the dispatcher's credentials (no capability): Landlock asks for no_new_privs */
	bool ok = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0;
	pthread_mutex_lock(&k->lock);
	for (;;) {
		while (k->job == K_IDLE)
			pthread_cond_wait(&k->cond, &k->lock);
		if (k->job == K_QUIT) {
			k->job = K_IDLE;
			pthread_cond_broadcast(&k->cond);
			break;
		}
		int r = -EPERM;
		if (k->job == K_LAY && ok) {
			r = landlock_enforce(k->ruleset, 0);
		} else if (k->job == K_START && ok) {
			pthread_t t;
			pthread_attr_t attr;
			r = -pthread_attr_init(&attr);
			if (r == 0) {
				pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
				r = -pthread_create(&t, &attr, k->fn, k->arg);
				pthread_attr_destroy(&attr);
			}
		}
		k->result = r;
		k->job = K_IDLE;
		pthread_cond_broadcast(&k->cond);
	}
	pthread_mutex_unlock(&k->lock);
	return NULL;
}

/* Give the keeper one job and wait for its end: its result. */
static int ask(struct sup_nested *k, enum keeper_job job)
{
	pthread_mutex_lock(&k->lock);
	k->job = job;
	pthread_cond_broadcast(&k->cond);
	while (k->job != K_IDLE)
		pthread_cond_wait(&k->cond, &k->lock);
	int r = k->result;
	pthread_mutex_unlock(&k->lock);
	return r;
}

/* Lay a copy of ruleset on the keeper, made on the first: 0 or -errno. */
static int lay(struct supervisor *s, int ruleset)
{
	struct sup_nested *k = s->keeper;
	if (!k) {
		k = calloc(1, sizeof(*k));
		if (!k)
			return -ENOMEM;
		pthread_mutex_init(&k->lock, NULL);
		pthread_cond_init(&k->cond, NULL);
		int r = -pthread_create(&k->thread, NULL, keep, k);
		if (r < 0) {
			pthread_mutex_destroy(&k->lock);
			pthread_cond_destroy(&k->cond);
			free(k);
			return r;
		}
		s->keeper = k;
	}
	if (k->layers >= NESTED_MAX)
		return -E2BIG;
	k->ruleset = ruleset;
	int r = ask(k, K_LAY);
	if (r == 0)
		k->layers++;
	return r;
}

void sup_nested_taken(struct call *c)
{
	struct supervisor *s = c->s;
	const uint64_t *a = (const uint64_t *)c->req->data.args;
	s->landlock_nested = true;
	if (s->keeper_broken)
		return;
	/* -1 with flags alone makes no domain (ABI 7: the log flags for what runs after) */
	if ((int)a[0] == -1)
		return;
	int fd = s->no_getfd ? -EPERM : stepview_fd(&c->v, a[0]);
	if (fd == -EBADF)
		return; /* no such fd: the kernel refuses the call too, and no domain is made */
	int r = fd < 0 ? fd : lay(s, fd);
	if (fd >= 0)
		close(fd);
	/* not a ruleset: the kernel refuses it as it refused it here, and makes no domain */
	if (r < 0 && r != -EBADFD)
		s->keeper_broken = true;
}

void sup_nested_refuse(struct call *c, const char *what)
{
	sup_note_denial(c, OP_NESTED, what, -1);
	sup_respond(c, 0, EACCES);
}

bool sup_nested_refused(struct call *c, const char *what)
{
	if (c->s->keeper_broken)
		sup_nested_refuse(c, what);
	return c->s->keeper_broken;
}

void sup_note_port(struct call *c, int nr, int port, bool nested)
{
	const struct supervisor *s = c->s;
	const struct policy_ports *listed = &s->ports[nr == SYS_bind];
	bool ours = !s->port_list;
	for (unsigned i = 0; i < listed->n && !ours; i++)
		ours = listed->v[i] == port;
	if (nested && ours) {
		char shown[48];
		snprintf(shown, sizeof(shown), "a %s port %d",
			 nr == SYS_bind ? "bind of TCP" : "connect to TCP", port);
		sup_note_denial(c, OP_NESTED, shown, -1);
	} else {
		sup_note_denial(c, nr == SYS_connect ? OP_CONNECT : OP_BIND, NULL, port);
	}
}

int sup_nested_start(struct supervisor *s, void *(*fn)(void *), void *arg)
{
	struct sup_nested *k = s->keeper;
	if (!k)
		return -EPERM;
	k->fn = fn;
	k->arg = arg;
	return ask(k, K_START);
}

void sup_nested_stop(struct supervisor *s)
{
	struct sup_nested *k = s->keeper;
	if (!k)
		return;
	ask(k, K_QUIT);
	pthread_join(k->thread, NULL);
	pthread_mutex_destroy(&k->lock);
	pthread_cond_destroy(&k->cond);
	free(k);
	s->keeper = NULL;
}
