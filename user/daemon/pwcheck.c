// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <crypt.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "daemon/pwcheck.h"
#include "daemon/webconf.h"

struct pwcheck {
	pthread_t thread;
	pthread_mutex_t mu;		/* everything below, and the jobs' outcomes */
	pthread_cond_t wake;
	struct pwcheck_job *head, *tail;
	unsigned int n;			/* queued or running */
	bool stopping, joined;
};

bool pwcheck__bcrypt(const char *pass, const char *hash)
{
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	const char *out;
	bool ok;

	if (!cd)
		return false;
	out = crypt_rn(pass, hash, cd, sizeof(*cd));
	ok = out && strlen(out) == WEB_HASH_LEN && strlen(hash) == WEB_HASH_LEN &&
	     !gnutls_memcmp(out, hash, WEB_HASH_LEN);
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	return ok;
}

/* The next job, or NULL once stopping with none left. Under p->mu. */
static struct pwcheck_job *next_job(struct pwcheck *p)
{
	struct pwcheck_job *j;

	while (!p->head && !p->stopping)
		pthread_cond_wait(&p->wake, &p->mu);
	j = p->head;
	if (j) {
		p->head = j->next;
		if (!p->head)
			p->tail = NULL;
	}
	return j;
}

static void *checker(void *arg)
{
	struct pwcheck *p = arg;
	struct pwcheck_job *j;

	pthread_mutex_lock(&p->mu);
	while ((j = next_job(p))) {
		bool stopped = p->stopping, ok = false;
		void (*resume)(void *) = j->resume;
		void *resume_arg = j->arg;

		pthread_mutex_unlock(&p->mu);
		if (!stopped)
			ok = pwcheck__bcrypt(j->pass, j->hash);
		explicit_bzero(j->pass, strlen(j->pass));
		free(j->pass);
		j->pass = NULL;
		pthread_mutex_lock(&p->mu);
		j->ok = ok;
		j->stopped = stopped;
		j->done = true;
		p->n--;
		pthread_mutex_unlock(&p->mu);
		/* From here j is the submitter's again: we touch it no more. */
		resume(resume_arg);
		pthread_mutex_lock(&p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

struct pwcheck *pwcheck__new(void)
{
	struct pwcheck *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return NULL;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->wake, NULL);
	err = pthread_create(&p->thread, NULL, checker, p);
	if (err) {
		pthread_cond_destroy(&p->wake);
		pthread_mutex_destroy(&p->mu);
		free(p);
		errno = err;
		return NULL;
	}
	return p;
}

void pwcheck__stop(struct pwcheck *p)
{
	if (p->joined)
		return;
	pthread_mutex_lock(&p->mu);
	p->stopping = true;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	p->joined = true;
}

void pwcheck__free(struct pwcheck *p)
{
	if (!p)
		return;
	pwcheck__stop(p);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

int pwcheck__submit(struct pwcheck *p, struct pwcheck_job *j)
{
	int err = 0;

	j->done = j->ok = j->stopped = false;
	j->next = NULL;
	pthread_mutex_lock(&p->mu);
	if (p->stopping)
		err = -ESHUTDOWN;
	else if (p->n >= PWCHECK_MAX)
		err = -EAGAIN;
	if (!err) {
		if (p->tail)
			p->tail->next = j;
		else
			p->head = j;
		p->tail = j;
		p->n++;
		pthread_cond_signal(&p->wake);
	}
	pthread_mutex_unlock(&p->mu);
	return err;
}

bool pwcheck__take(struct pwcheck *p, struct pwcheck_job *j, bool *ok, bool *stopped)
{
	bool done;

	pthread_mutex_lock(&p->mu);
	done = j->done;
	*ok = j->ok;
	*stopped = j->stopped;
	pthread_mutex_unlock(&p->mu);
	return done;
}
