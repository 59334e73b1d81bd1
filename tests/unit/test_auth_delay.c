// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The daemon's password checks off the answering thread: the delay that
 * grows with an address's wrong passwords (auth_delay.h), its bounded table,
 * and the checker's thread (pwcheck.h) on a real bcrypt hash of cost 4.
 */
#include <crypt.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>
#include "daemon/auth_delay.h"
#include "daemon/pwcheck.h"

#define S 1000000000ull

static struct sockaddr_in v4(const char *ip, unsigned short port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

#define SA(a) ((const struct sockaddr *)&(a))

/* One wrong password from a at now: started, ended, and what it left. */
static unsigned int fail_once(struct auth_delay *d, struct sockaddr_in a, uint64_t now)
{
	assert_int_equal(auth_delay__start(d, SA(a), now), 0);
	auth_delay__end(d, SA(a), false, now);
	return auth_delay__left_s(d, SA(a), now);
}

static void test_growing_delay(void **state)
{
	static const unsigned int want[] = { 0, 0, 0, 1, 2, 4, 8, 16, 32, 60, 60, 60 };
	struct auth_delay *d = auth_delay__new();
	struct sockaddr_in a = v4("127.0.0.2", 1000), b = v4("127.0.0.3", 1000);
	uint64_t now = 100 * S;

	(void)state;
	assert_non_null(d);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		unsigned int left = fail_once(d, a, now);

		if (left != want[i])
			fail_msg("wrong password %zu: %u s, not %u", i + 1, left, want[i]);
		now += (uint64_t)left * S;
	}
	/* Another port of the same address waits too; another address does not. */
	a.sin_port = htons(2000);
	auth_delay__end(d, SA(a), false, now);
	assert_int_equal(auth_delay__left_s(d, SA(a), now + S / 2), 60);
	assert_int_equal(auth_delay__left_s(d, SA(b), now), 0);
	/* A right password does not clear them; time does. */
	assert_int_equal(auth_delay__start(d, SA(a), now + 61 * S), 0);
	auth_delay__end(d, SA(a), true, now + 61 * S);
	assert_int_equal(fail_once(d, a, now + 62 * S), 60);
	assert_int_equal(fail_once(d, a, now + (62 + AUTH_DELAY_FORGET_S) * S), 0);
	auth_delay__free(d);
}

static void test_one_check_an_address(void **state)
{
	struct auth_delay *d = auth_delay__new();
	struct sockaddr_in a = v4("10.0.0.1", 1), a2 = v4("10.0.0.1", 2);
	struct sockaddr_in6 six = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };

	(void)state;
	assert_int_equal(auth_delay__start(d, SA(a), S), 0);
	assert_int_equal(auth_delay__start(d, SA(a2), S), -EBUSY);
	assert_int_equal(auth_delay__start(d, SA(six), S), 0);
	/* A check that never ran counts nothing. */
	auth_delay__cancel(d, SA(a));
	assert_int_equal(auth_delay__left_s(d, SA(a), S), 0);
	assert_int_equal(auth_delay__start(d, SA(a2), S), 0);
	auth_delay__end(d, SA(a2), true, S);
	auth_delay__end(d, SA(six), false, S);
	assert_int_equal(auth_delay__left_s(d, SA(six), S), 0);
	auth_delay__free(d);
}

/* The table keeps AUTH_DELAY_ADDRS addresses: the least recently seen makes room. */
static void test_bounded_table(void **state)
{
	struct auth_delay *d = auth_delay__new();
	struct sockaddr_in a = v4("10.1.0.0", 1), b = v4("10.1.0.1", 1);
	uint64_t now = S;

	(void)state;
	for (int i = 0; i < AUTH_DELAY_FREE; i++)
		fail_once(d, a, now), fail_once(d, b, now);
	assert_int_equal(fail_once(d, a, now), 1);
	/* b checks and waits; its check runs while the table fills. */
	assert_int_equal(fail_once(d, b, now), 1);
	assert_int_equal(auth_delay__start(d, SA(b), now + 2 * S), 0);
	for (unsigned int i = 2; i < AUTH_DELAY_ADDRS + 1; i++) {
		struct sockaddr_in x = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x0a020000 + i) };

		assert_int_equal(auth_delay__start(d, SA(x), now + 3 * S), 0);
		auth_delay__end(d, SA(x), true, now + 3 * S);
	}
	/* a, the least recent, made room; b, checking, was kept. */
	assert_int_equal(auth_delay__start(d, SA(b), now + 3 * S), -EBUSY);
	assert_int_equal(auth_delay__start(d, SA(a), now + 3 * S), 0);
	auth_delay__end(d, SA(a), false, now + 3 * S);
	assert_int_equal(auth_delay__left_s(d, SA(a), now + 3 * S), 0);
	auth_delay__free(d);
}

struct done {
	pthread_mutex_t mu;
	int n;
};

static void resumed(void *arg)
{
	struct done *dn = arg;

	pthread_mutex_lock(&dn->mu);
	dn->n++;
	pthread_mutex_unlock(&dn->mu);
}

static int resumed_n(struct done *dn)
{
	int n;

	pthread_mutex_lock(&dn->mu);
	n = dn->n;
	pthread_mutex_unlock(&dn->mu);
	return n;
}

/* A bcrypt hash of pass at cost, in cd. */
static const char *bcrypt_of(const char *pass, unsigned long cost, struct crypt_data *cd)
{
	char salt[64];

	assert_non_null(crypt_gensalt_rn("$2b$", cost, NULL, 0, salt, sizeof(salt)));
	return crypt_rn(pass, salt, cd, sizeof(*cd));
}

static void job(struct pwcheck_job *j, const char *hash, const char *pass, struct done *dn)
{
	*j = (struct pwcheck_job){ .hash = hash, .pass = strdup(pass), .resume = resumed,
				   .arg = dn };
}

/* The checker: right and wrong, at most PWCHECK_MAX at once, and what stop leaves. */
static void test_checker(void **state)
{
	static struct crypt_data cd_fast, cd_slow;
	/* The slow one (cost 10, tens of ms) holds the checker while the others queue. */
	const char *fast = bcrypt_of("right", 4, &cd_fast), *slow = bcrypt_of("right", 10, &cd_slow);
	struct done dn = { .mu = PTHREAD_MUTEX_INITIALIZER };
	struct pwcheck_job j[PWCHECK_MAX + 1];
	struct pwcheck *p = pwcheck__new();
	bool ok, stopped;

	(void)state;
	assert_non_null(p);
	assert_true(pwcheck__bcrypt("right", fast));
	assert_false(pwcheck__bcrypt("wrong", fast));
	assert_false(pwcheck__bcrypt("right", "$2b$04$short"));
	for (int i = 0; i <= PWCHECK_MAX; i++) {
		job(&j[i], i ? fast : slow, i == 1 ? "wrong" : "right", &dn);
		assert_int_equal(pwcheck__submit(p, &j[i]), i < PWCHECK_MAX ? 0 : -EAGAIN);
	}
	free(j[PWCHECK_MAX].pass);
	while (resumed_n(&dn) < PWCHECK_MAX)
		sched_yield();
	assert_true(pwcheck__take(p, &j[0], &ok, &stopped));
	assert_true(ok && !stopped);
	assert_true(pwcheck__take(p, &j[1], &ok, &stopped));
	assert_true(!ok && !stopped && !j[1].pass);
	assert_true(pwcheck__take(p, &j[2], &ok, &stopped));
	assert_true(ok);
	/* Stopped while the slow one runs: the one queued behind it is resumed unchecked. */
	job(&j[0], slow, "right", &dn);
	job(&j[1], fast, "right", &dn);
	assert_int_equal(pwcheck__submit(p, &j[0]), 0);
	assert_int_equal(pwcheck__submit(p, &j[1]), 0);
	pwcheck__stop(p);
	assert_int_equal(resumed_n(&dn), PWCHECK_MAX + 2);
	assert_true(pwcheck__take(p, &j[1], &ok, &stopped));
	assert_true(stopped && !ok && !j[1].pass);
	job(&j[2], fast, "right", &dn);
	assert_int_equal(pwcheck__submit(p, &j[2]), -ESHUTDOWN);
	free(j[2].pass);
	pwcheck__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_growing_delay),
		cmocka_unit_test(test_one_check_an_address),
		cmocka_unit_test(test_bounded_table),
		cmocka_unit_test(test_checker),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
