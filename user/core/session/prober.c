// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include "core/session/prober.h"

struct job {
	prober_fn run, done;
	void *arg;
	struct job *next;
};

/* A FIFO of jobs. */
struct queue {
	struct job *head, *tail;
};

struct prober {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t more, idle;
	struct queue todo, finished;
	bool busy, stop;
	int efd;	/* counts finished jobs for the owner's epoll */
};

static void push(struct queue *q, struct job *j)
{
	j->next = NULL;
	if (q->tail)
		q->tail->next = j;
	else
		q->head = j;
	q->tail = j;
}

static struct job *pop(struct queue *q)
{
	struct job *j = q->head;

	if (j) {
		q->head = j->next;
		if (!q->head)
			q->tail = NULL;
	}
	return j;
}

static void *run(void *arg)
{
	struct prober *p = arg;
	uint64_t one = 1;
	ssize_t n;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct job *j;

		while (!p->todo.head && !p->stop)
			pthread_cond_wait(&p->more, &p->mu);
		j = pop(&p->todo);
		if (!j)
			break;
		p->busy = true;
		pthread_mutex_unlock(&p->mu);
		j->run(j->arg);
		pthread_mutex_lock(&p->mu);
		p->busy = false;
		push(&p->finished, j);
		/* The counter is far from full; the owner collects on every turn anyway. */
		n = write(p->efd, &one, sizeof(one));
		if (!p->todo.head)
			pthread_cond_broadcast(&p->idle);
	}
	pthread_mutex_unlock(&p->mu);
	(void)n;
	return NULL;
}

struct prober *prober__new(void)
{
	struct prober *p = calloc(1, sizeof(*p));
	sigset_t all, old;
	int err;

	if (!p)
		return NULL;
	p->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->efd < 0) {
		free(p);
		return NULL;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->more, NULL);
	pthread_cond_init(&p->idle, NULL);
	/* The worker takes no signal: they belong to the event loop's signalfd. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&p->thread, NULL, run, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		close(p->efd);
		free(p);
		errno = err;
		return NULL;
	}
	return p;
}

int prober__submit(struct prober *p, prober_fn fn, prober_fn done, void *arg)
{
	struct job *j = malloc(sizeof(*j));

	if (!j)
		return -ENOMEM;
	j->run = fn;
	j->done = done;
	j->arg = arg;
	pthread_mutex_lock(&p->mu);
	push(&p->todo, j);
	pthread_cond_signal(&p->more);
	pthread_mutex_unlock(&p->mu);
	return 0;
}

bool prober__waiting(struct prober *p)
{
	bool waiting;

	pthread_mutex_lock(&p->mu);
	waiting = p->todo.head != NULL;
	pthread_mutex_unlock(&p->mu);
	return waiting;
}

int prober__fd(const struct prober *p)
{
	return p->efd;
}

int prober__collect(struct prober *p)
{
	struct queue q;
	uint64_t n;
	ssize_t r;
	int count = 0;

	/* Nothing counted (EAGAIN): collect anyway. */
	r = read(p->efd, &n, sizeof(n));
	(void)r;
	pthread_mutex_lock(&p->mu);
	q = p->finished;
	p->finished.head = p->finished.tail = NULL;
	pthread_mutex_unlock(&p->mu);
	for (struct job *j; (j = pop(&q)); count++) {
		if (j->done)
			j->done(j->arg);
		free(j);
	}
	return count;
}

void prober__drain(struct prober *p)
{
	pthread_mutex_lock(&p->mu);
	while (p->todo.head || p->busy)
		pthread_cond_wait(&p->idle, &p->mu);
	pthread_mutex_unlock(&p->mu);
	prober__collect(p);
}

void prober__free(struct prober *p)
{
	if (!p)
		return;
	prober__drain(p);
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_signal(&p->more);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->more);
	pthread_cond_destroy(&p->idle);
	pthread_mutex_destroy(&p->mu);
	close(p->efd);
	free(p);
}
