/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * UTF-8 as RFC 3629 has it, for every writer whose readers refuse anything
 * else (JSON parsers, Prometheus' text format): no overlong forms, no
 * surrogates, nothing past U+10FFFF. Thread-safe, no state.
 */
#ifndef UTIL_UTF8_H
#define UTIL_UTF8_H

/*
 * Length (1-4) of the well-formed UTF-8 sequence at s, or 0 when s starts
 * with a byte that cannot begin one or the sequence is broken. It never
 * reads past a NUL (a NUL is not a continuation byte).
 */
static inline int utf8__len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	n = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	/* The second byte's range excludes overlong forms, surrogates and > U+10FFFF. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (int i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

#endif /* UTIL_UTF8_H */
