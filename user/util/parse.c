// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "util/parse.h"

/* Not isdigit(): that one follows the locale and wants an unsigned char. */
static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static const char *skip_digits(const char *p)
{
	while (is_digit(*p))
		p++;
	return p;
}

/* Digits into *v; -ERANGE past 64 bits. Returns past them in *end. */
static int read_u64(const char *p, uint64_t *v, const char **end)
{
	uint64_t x = 0;

	for (; is_digit(*p); p++) {
		unsigned int d = (unsigned int)(*p - '0');

		if (x > (UINT64_MAX - d) / 10)
			return -ERANGE;
		x = x * 10 + d;
	}
	*v = x;
	*end = p;
	return 0;
}

/* K, M, G, T, P or E, and an optional B or iB after it (B alone: bytes). The shift, or -1. */
static int size_unit(const char *p)
{
	static const char letters[] = "KMGTPE";
	const char *u = *p ? strchr(letters, *p & ~0x20) : NULL;
	int shift = u ? 10 * (int)(u - letters + 1) : 0;

	if (u)
		p++;
	if (u && (p[0] == 'i' || p[0] == 'I') && (p[1] == 'B' || p[1] == 'b'))
		p += 2;
	else if (*p == 'B' || *p == 'b')
		p++;
	return *p ? -1 : shift;
}

/* The fraction's digits, at most 18 of them, as num / den. */
static int read_fraction(const char *p, uint64_t *num, uint64_t *den, const char **end)
{
	uint64_t n = 0, d = 1;

	if (!is_digit(*p))
		return -EINVAL;
	for (; is_digit(*p); p++) {
		if (d == 1000000000000000000ull)
			return -EINVAL;
		n = n * 10 + (uint64_t)(*p - '0');
		d *= 10;
	}
	*num = n;
	*den = d;
	*end = p;
	return 0;
}

int parse_size(const char *s, uint64_t *out)
{
	uint64_t whole, num = 0, den = 1;
	unsigned __int128 v, frac;
	const char *p;
	int shift, err;

	if (!is_digit(*s))
		return -EINVAL;
	err = read_u64(s, &whole, &p);
	if (!err && *p == '.')
		err = read_fraction(p + 1, &num, &den, &p);
	if (err)
		return err;
	shift = size_unit(p);
	if (shift < 0)
		return -EINVAL;
	frac = (unsigned __int128)num << shift;
	if (frac % den)
		return -EINVAL; /* not a whole number of bytes */
	v = ((unsigned __int128)whole << shift) + frac / den;
	if (v > UINT64_MAX)
		return -ERANGE;
	*out = (uint64_t)v;
	return 0;
}

int parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *end;
	uint64_t v;

	if (!is_digit(*s) || (s[0] == '0' && s[1]) || *skip_digits(s))
		return -EINVAL;
	if (read_u64(s, &v, &end) || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/* Past a decimal number (digits, fraction, exponent) at p, or NULL when there is none. */
static const char *scan_number(const char *p)
{
	const char *digits = p;

	p = skip_digits(p);
	if (*p == '.')
		p = skip_digits(p + 1);
	if (p == digits || (p == digits + 1 && *digits == '.'))
		return NULL;
	if (*p == 'e' || *p == 'E') {
		const char *e = p + 1 + (p[1] == '-' || p[1] == '+');

		if (!is_digit(*e))
			return NULL;
		p = skip_digits(e);
	}
	return p;
}

/* The number that scan_number found between s and end. */
static int number_at(const char *s, const char *end, double *out)
{
	char *stop;
	double d;

	errno = 0;
	d = strtod(s, &stop);
	if (stop != end)
		return -EINVAL;
	if (errno == ERANGE)
		return -ERANGE;
	*out = d;
	return 0;
}

int parse_number(const char *s, double lo, double hi, double *out)
{
	const char *end = scan_number(s + (*s == '-'));
	double d;
	int err;

	if (!end || *end)
		return -EINVAL;
	err = number_at(s, end, &d);
	if (err)
		return err;
	if (!(d >= lo && d <= hi))
		return -ERANGE;
	*out = d;
	return 0;
}

int parse_duration(const char *s, enum parse_unit unit, double lo_s, double hi_s, double *out_s)
{
	const char *end = scan_number(s);
	double d;
	int err;

	if (!end)
		return -EINVAL;
	err = number_at(s, end, &d);
	if (err)
		return err;
	if (!strcmp(end, "ms") || (!*end && unit == PARSE_MILLISECONDS))
		d /= 1000;
	else if (!strcmp(end, "m"))
		d *= 60;
	else if (*end && strcmp(end, "s"))
		return -EINVAL;
	if (!(d >= lo_s && d <= hi_s))
		return -ERANGE;
	*out_s = d;
	return 0;
}

int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(s, yes[i]) || !strcasecmp(s, no[i])) {
			*out = !strcasecmp(s, yes[i]);
			return 0;
		}
	}
	return -EINVAL;
}

/* An IPv6 address with an optional %scope (an interface's name or index). */
static int ipv6_at(char *host, struct sockaddr_in6 *in6)
{
	char *pct = strchr(host, '%');
	unsigned int scope = 0;

	if (pct) {
		uint64_t idx;

		*pct++ = '\0';
		scope = parse_count(pct, 1, UINT32_MAX, &idx) ? if_nametoindex(pct) : (unsigned int)idx;
		if (!scope)
			return -EINVAL;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1)
		return -EINVAL;
	in6->sin6_family = AF_INET6;
	in6->sin6_scope_id = scope;
	return 0;
}

/* The address part of ADDR:PORT, brackets dropped. */
static int host_part(const char *s, size_t n, char *host, size_t len)
{
	if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
		s++;
		n -= 2;
	}
	if (!n || n >= len || memchr(s, '[', n) || memchr(s, ']', n))
		return -EINVAL;
	memcpy(host, s, n);
	host[n] = '\0';
	return 0;
}

int parse_addr_port(const char *s, struct addr_port *out, char *why, size_t len)
{
	const char *colon = strrchr(s, ':');
	struct addr_port ap = {};
	struct sockaddr_in *in = (struct sockaddr_in *)&ap.sa;
	uint64_t port;
	char host[sizeof(ap.host)];

	if (!colon || parse_count(colon + 1, 1, 65535, &port) ||
	    host_part(s, (size_t)(colon - s), host, sizeof(host))) {
		snprintf(why, len, "not ADDR:PORT (e.g. 127.0.0.1:9464, 0.0.0.0:9464 or [::1]:9464)");
		return -EINVAL;
	}
	ap.port = (uint16_t)port;
	snprintf(ap.host, sizeof(ap.host), "%s", strcasecmp(host, "localhost") ? host : "127.0.0.1");
	if (inet_pton(AF_INET, ap.host, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(ap.port);
		ap.salen = sizeof(*in);
	} else if (!ipv6_at(ap.host, (struct sockaddr_in6 *)&ap.sa)) {
		((struct sockaddr_in6 *)&ap.sa)->sin6_port = htons(ap.port);
		ap.salen = sizeof(struct sockaddr_in6);
	} else {
		snprintf(why, len, "not ADDR:PORT: '%s' is not a numeric address (give an IPv4 or "
			 "IPv6 address, or localhost)", host);
		return -EINVAL;
	}
	*out = ap;
	return 0;
}

bool addr_is_loopback(const struct addr_port *ap)
{
	const struct sockaddr_in *in = (const struct sockaddr_in *)&ap->sa;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ap->sa;

	if (ap->sa.ss_family == AF_INET)
		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	if (ap->sa.ss_family != AF_INET6)
		return false;
	if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
		return true;
	return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127;
}
