/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One grammar for each kind of value that options, config files and HTTP
 * queries take: sizes, counts, numbers, durations, booleans and ADDR:PORT.
 * Pure functions of their input, safe from any thread. Each returns 0, or
 * -EINVAL when the text is not of its kind and -ERANGE when it is but lies
 * outside the bounds given; *out is left alone on failure. The messages are
 * the caller's, which knows the option's name; the PARSE_*_FORMS strings say
 * what is accepted, for the fix.
 */
#ifndef UTIL_PARSE_H
#define UTIL_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* What a size is, said after the caller's own example (so no "e.g." of its own). */
#define PARSE_SIZE_FORMS "bytes, or K, M, G or T of them, powers of 1024, with an optional B or iB"
#define PARSE_BOOL_FORMS "true, yes, on or 1, or false, no, off or 0"
/* The units, for --help: one line each command's usage ends with. */
#define PARSE_UNITS_HELP "A duration may carry its unit, ms, s or m (250ms, 30s, 2m); a size is\n" \
	"bytes, or K, M, G or T of them, powers of 1024 (64K, 16MB, 1GiB).\n"

/*
 * Bytes: decimal digits, an optional fraction, then an optional K, M, G, T, P
 * or E (powers of 1024), which B or iB may follow, in any case: 4096, 64K,
 * 64KB, 64KiB, 16m, 1.5G. The result must be a whole number of bytes
 * (-EINVAL) that fits 64 bits (-ERANGE). No sign, space or exponent.
 */
int parse_size(const char *s, uint64_t *out);

/*
 * A count from min to max: plain decimal digits, no sign, space, fraction or
 * leading zero ("0" itself is one). -ERANGE outside [min, max].
 */
int parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/*
 * A number from lo to hi: an optional '-', decimal digits with an optional
 * fraction, an optional exponent (2.5e-3). No hex, inf, nan or space.
 */
int parse_number(const char *s, double lo, double hi, double *out);

/* What a duration without a unit counts. */
enum parse_unit { PARSE_SECONDS, PARSE_MILLISECONDS };

/*
 * A duration from lo_s to hi_s seconds: a number as parse_number takes, but
 * with no sign, in the option's unit, or with a unit after it that wins: ms,
 * s or m (minutes). 30, 30s, 0.5m, 250ms. *out_s is in seconds.
 */
int parse_duration(const char *s, enum parse_unit unit, double lo_s, double hi_s, double *out_s);

/* true, yes, on or 1; false, no, off or 0; in any case. */
int parse_bool(const char *s, bool *out);

/* An address and a port, ready for bind() or connect(). */
struct addr_port {
	char host[64];			/* the numeric address, without brackets or scope */
	uint16_t port;
	struct sockaddr_storage sa;	/* AF_INET or AF_INET6, with the port */
	socklen_t salen;
};

/*
 * "ADDR:PORT": a numeric IPv4 address, a numeric IPv6 address (in brackets,
 * or bare: the last ':' ends it; a %scope may follow it), or localhost (IPv4's
 * loopback), then a port from 1 to 65535. No resolver is asked, so that the
 * static build needs no NSS at run time. -EINVAL with why saying what is
 * wrong, beginning "not ADDR:PORT".
 */
int parse_addr_port(const char *s, struct addr_port *out, char *why, size_t len);

/* Whether ap is a loopback address: 127.0.0.0/8, ::1 or an IPv4-mapped 127/8. */
bool addr_is_loopback(const struct addr_port *ap);

#endif /* UTIL_PARSE_H */
