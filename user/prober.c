// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include "prober.h"

#define QUEUE 256

struct job {
	prober_fn fn;
	void *ctx;
	long arg;
};

struct prober {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t more, idle;
	struct job q[QUEUE];
	size_t head, len;
	bool busy, stop;
};

static void *run(void *arg)
{
	struct prober *p = arg;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct job j;

		while (!p->len && !p->stop)
			pthread_cond_wait(&p->more, &p->mu);
		if (!p->len)
			break;
		j = p->q[p->head];
		p->head = (p->head + 1) % QUEUE;
		p->len--;
		p->busy = true;
		pthread_mutex_unlock(&p->mu);
		j.fn(j.ctx, j.arg);
		pthread_mutex_lock(&p->mu);
		p->busy = false;
		if (!p->len)
			pthread_cond_broadcast(&p->idle);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

struct prober *prober__new(void)
{
	struct prober *p = calloc(1, sizeof(*p));
	sigset_t all, old;
	int err;

	if (!p)
		return NULL;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->more, NULL);
	pthread_cond_init(&p->idle, NULL);
	/* The worker takes no signal: they belong to the event loop's signalfd. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&p->thread, NULL, run, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		free(p);
		errno = err;
		return NULL;
	}
	return p;
}

int prober__submit(struct prober *p, prober_fn fn, void *ctx, long arg)
{
	int err = 0;

	pthread_mutex_lock(&p->mu);
	if (p->len == QUEUE) {
		err = -ENOSPC;
	} else {
		p->q[(p->head + p->len) % QUEUE] = (struct job){ fn, ctx, arg };
		p->len++;
		pthread_cond_signal(&p->more);
	}
	pthread_mutex_unlock(&p->mu);
	return err;
}

void prober__drain(struct prober *p)
{
	pthread_mutex_lock(&p->mu);
	while (p->len || p->busy)
		pthread_cond_wait(&p->idle, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

void prober__free(struct prober *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_signal(&p->more);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->more);
	pthread_cond_destroy(&p->idle);
	pthread_mutex_destroy(&p->mu);
	free(p);
}
