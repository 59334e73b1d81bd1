/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One streaming JSON writer, in the shape of bpftool's src/json_writer.h: it
 * puts the commas, the colons and the nesting, and escapes strings. It is
 * built for cuprobe's traces, one JSON object per kernel launch at millions
 * a second: values go into the writer's own buffer, numbers are formatted by
 * hand, the buffer reaches the FILE in large writes, and small objects can
 * be written through an inline cursor (below) at the cost of hand-formatting.
 *
 * Layout: a container is written on one line ({"a": 1, "b": [1, 2]}) unless
 * it is told to put each element on a line of its own, indented, with its
 * closing bracket on a line at the indent of the line it opened on:
 * json_writer__lines() for the next container opened, json_writer__pretty()
 * for every one (jansson's JSON_INDENT). An empty container is "{}" or "[]".
 *
 * Strings: '"' and '\' are escaped, control characters written as \u00XX,
 * valid UTF-8 kept, and each byte of an invalid sequence written as \ufffd,
 * so that the output is valid JSON whatever the bytes (a thread name cut
 * inside a character, a kernel name from a corrupt binary).
 */
#ifndef UTIL_JSON_WRITER_H
#define UTIL_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct json_writer;

/* Writes into f, which stays the caller's. NULL and errno ENOMEM on failure. */
struct json_writer *json_writer__new(FILE *f);
/* Frees the writer without flushing what it holds. */
void json_writer__free(struct json_writer *w);
/* Hands what the writer holds to its FILE (not fflush). 0 or the first error, -errno. */
int json_writer__flush(struct json_writer *w);
/* Bytes written so far, those still in the writer's buffer included. */
uint64_t json_writer__bytes(const struct json_writer *w);
/* The first error met so far (a failed write, nesting too deep), or 0. */
int json_writer__error(const struct json_writer *w);

/* Every container opened from now on: one element a line, step more spaces a level; 0: off. */
void json_writer__pretty(struct json_writer *w, unsigned int step);
/* The next container opened: one element a line, at indent spaces. */
void json_writer__lines(struct json_writer *w, unsigned int indent);

void json_writer__start_object(struct json_writer *w);
void json_writer__end_object(struct json_writer *w);
void json_writer__start_array(struct json_writer *w);
void json_writer__end_array(struct json_writer *w);
/* The name of the next member of the object being written. */
void json_writer__name(struct json_writer *w, const char *name);

/* A string value; NULL writes null. */
void json_writer__string(struct json_writer *w, const char *s);
void json_writer__u64(struct json_writer *w, uint64_t v);
void json_writer__i64(struct json_writer *w, int64_t v);
/* v / 10^decimals written exactly, with that many decimals: (1234567, 3) is 1234.567. */
void json_writer__fixed(struct json_writer *w, int64_t v, unsigned int decimals);
/* v with that many decimals, as printf's %.*f; a NaN or an infinity is null. */
void json_writer__double(struct json_writer *w, double v, unsigned int decimals);
/*
 * v with that many significant digits, as printf's %.*g, always read back as
 * a real ("5.0", "1e20"): jansson's own format with 17 digits.
 */
void json_writer__double_sig(struct json_writer *w, double v, unsigned int digits);
void json_writer__bool(struct json_writer *w, bool v);
void json_writer__null(struct json_writer *w);
/* A value written as is: the caller vouches that text is valid JSON. */
void json_writer__raw(struct json_writer *w, const char *text, size_t len);

/* A member of the object being written: its name, then its value, as above. */
void json_writer__field_string(struct json_writer *w, const char *name, const char *s);
void json_writer__field_u64(struct json_writer *w, const char *name, uint64_t v);
void json_writer__field_i64(struct json_writer *w, const char *name, int64_t v);
void json_writer__field_fixed(struct json_writer *w, const char *name, int64_t v,
			      unsigned int decimals);
void json_writer__field_double(struct json_writer *w, const char *name, double v,
			       unsigned int decimals);
void json_writer__field_bool(struct json_writer *w, const char *name, bool v);
void json_writer__field_null(struct json_writer *w, const char *name);
/* A member whose value may be unknown: v when known, else null (never left out). */
void json_writer__field_u64_or_null(struct json_writer *w, const char *name, bool known,
				    uint64_t v);
void json_writer__field_i64_or_null(struct json_writer *w, const char *name, bool known,
				    int64_t v);
/* v with that many significant digits (json_writer__double_sig) when known, else null. */
void json_writer__field_sig_or_null(struct json_writer *w, const char *name, bool known,
				    double v, unsigned int digits);

/* A string literal and its length, for the cursor's names; anything but a literal is refused. */
#define JSON_LITERAL(s) "" s, (sizeof(s) - 1)

/*
 * ---- the cursor: small objects by the million ----
 * A cursor writes one value (an object, say) straight into the writer's
 * buffer through the inline functions below, its position and comma state
 * held in the caller's locals, so that an object per kernel launch costs
 * what hand-formatting it cost: a call per member and a state kept in memory
 * made the writer half again as slow. json_writer__cursor() opens it for the
 * next value of the writer's open container (its separator written, or after
 * a member's name); json_writer__cursor_close() hands it back. What a cursor
 * writes is on one line; the names it is given must need no escaping (a
 * JSON_LITERAL). Between the two calls, the writer is only used through it.
 */
struct json_cursor {
	char *p;    /* where the next byte goes */
	char *end;  /* the end of the writer's buffer */
	bool comma; /* the container open has an element: the next one needs a comma */
};

struct json_cursor json_writer__cursor(struct json_writer *w);
void json_writer__cursor_close(struct json_writer *w, struct json_cursor c);
/* The slow paths, out of line: room for n bytes, a string to escape, a double. */
struct json_cursor json_writer__cursor_room(struct json_writer *w, struct json_cursor c, size_t n);
struct json_cursor json_writer__cursor_escaped(struct json_writer *w, struct json_cursor c,
					       const char *s);
struct json_cursor json_writer__cursor_double(struct json_writer *w, struct json_cursor c,
					      double v, unsigned int decimals);

/* Formatting shared by the writer and the cursor; not for other use. */
#define JSON_FAST_STRING 512 /* longer strings take the slow path */
extern const unsigned char json_plain[256];
extern const uint64_t json_powers_of_10[20];
extern const char json_digit_pairs[201];

/* How many digits v has in decimal: log10 from the bit length, then one compare. */
static inline unsigned int json_decimal_digits(uint64_t v)
{
	unsigned int t = (unsigned int)(64 - __builtin_clzll(v | 1)) * 1233 >> 12;

	return t + 1 - ((v | 1) < json_powers_of_10[t]);
}

/* The last n decimal digits of v, zeros first if need be, at p. */
static inline void json_put_digits(char *p, uint64_t v, unsigned int n)
{
	while (n >= 2) {
		n -= 2;
		memcpy(p + n, json_digit_pairs + (v % 100) * 2, 2);
		v /= 100;
	}
	if (n)
		*p = (char)('0' + v % 10);
}

/* |v| without overflow, INT64_MIN included. */
static inline uint64_t json_magnitude(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

/* v at p, with a '-' when negative; the end. At most 21 bytes. */
static inline char *json_format_u64(char *p, uint64_t v, bool negative)
{
	unsigned int n = json_decimal_digits(v);

	if (negative)
		*p++ = '-';
	json_put_digits(p, v, n);
	return p + n;
}

/* v / 10^decimals, exactly, at p; the end. At most 22 + decimals bytes, decimals <= 18. */
static inline char *json_format_fixed(char *p, int64_t v, unsigned int decimals)
{
	uint64_t m = json_magnitude(v);
	/* A constant divisor is a multiplication: 3 decimals are a trace's every ts and dur. */
	uint64_t scale = decimals == 3 ? 1000 : json_powers_of_10[decimals];
	uint64_t whole = decimals == 3 ? m / 1000 : m / scale;

	p = json_format_u64(p, whole, v < 0);
	if (decimals) {
		*p++ = '.';
		json_put_digits(p, m - whole * scale, decimals);
		p += decimals;
	}
	return p;
}

/* memcpy for the few bytes of a name or a number, without a call for them. */
static inline void json_copy_small(char *dst, const char *src, size_t n)
{
	if (n >= 16) {
		memcpy(dst, src, n);
	} else if (n >= 8) {
		memcpy(dst, src, 8);
		memcpy(dst + n - 8, src + n - 8, 8);
	} else if (n >= 4) {
		memcpy(dst, src, 4);
		memcpy(dst + n - 4, src + n - 4, 4);
	} else if (n) {
		dst[0] = src[0];
		dst[n / 2] = src[n / 2];
		dst[n - 1] = src[n - 1];
	}
}

/* Whether any of 8 bytes needs escaping: one below 0x20, a '"', a '\\' or one from 0x80. */
static inline bool json_escape_in_8(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	uint64_t quote = x ^ (ones * '"'), backslash = x ^ (ones * '\\');

	return ((x - ones * 0x20) & ~x & high) | ((quote - ones) & ~quote & high) |
	       ((backslash - ones) & ~backslash & high) | (x & high);
}

/* Whether any of the n bytes at s needs escaping, looked at 8 at a time. */
static inline bool json_needs_escape(const char *s, size_t n)
{
	uint64_t x;
	size_t i;

	if (n < 8) {
		for (i = 0; i < n; i++)
			if (!json_plain[(unsigned char)s[i]])
				return true;
		return false;
	}
	for (i = 0; i + 8 < n; i += 8) {
		memcpy(&x, s + i, 8);
		if (json_escape_in_8(x))
			return true;
	}
	/* The last 8 bytes, which may overlap bytes already looked at. */
	memcpy(&x, s + n - 8, 8);
	return json_escape_in_8(x);
}

/* Room for n more bytes at c->p. */
static inline void json_cursor__room(struct json_writer *w, struct json_cursor *c, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		*c = json_writer__cursor_room(w, *c, n);
}

/* The comma before an element when the container has one; then it has one. */
static inline void json_cursor__separate(struct json_cursor *c)
{
	if (c->comma) {
		memcpy(c->p, ", ", 2);
		c->p += 2;
	}
	c->comma = true;
}

static inline void json_cursor__open(struct json_writer *w, struct json_cursor *c, char bracket)
{
	json_cursor__room(w, c, 3);
	json_cursor__separate(c);
	*c->p++ = bracket;
	c->comma = false;
}

static inline void json_cursor__close(struct json_writer *w, struct json_cursor *c, char bracket)
{
	json_cursor__room(w, c, 1);
	*c->p++ = bracket;
	c->comma = true;
}

static inline void json_cursor__start_object(struct json_writer *w, struct json_cursor *c)
{
	json_cursor__open(w, c, '{');
}

static inline void json_cursor__end_object(struct json_writer *w, struct json_cursor *c)
{
	json_cursor__close(w, c, '}');
}

static inline void json_cursor__start_array(struct json_writer *w, struct json_cursor *c)
{
	json_cursor__open(w, c, '[');
}

static inline void json_cursor__end_array(struct json_writer *w, struct json_cursor *c)
{
	json_cursor__close(w, c, ']');
}

/* A member's name of len bytes that need no escaping; its value comes next. */
static inline void json_cursor__name(struct json_writer *w, struct json_cursor *c,
				     const char *name, size_t len)
{
	json_cursor__room(w, c, len + 6);
	json_cursor__separate(c);
	*c->p++ = '"';
	json_copy_small(c->p, name, len);
	memcpy(c->p + len, "\": ", 3);
	c->p += len + 3;
	c->comma = false;
}

static inline void json_cursor__u64(struct json_writer *w, struct json_cursor *c, uint64_t v)
{
	json_cursor__room(w, c, 23);
	json_cursor__separate(c);
	c->p = json_format_u64(c->p, v, false);
}

static inline void json_cursor__i64(struct json_writer *w, struct json_cursor *c, int64_t v)
{
	json_cursor__room(w, c, 23);
	json_cursor__separate(c);
	c->p = json_format_u64(c->p, json_magnitude(v), v < 0);
}

/* As json_writer__fixed, decimals <= 18. */
static inline void json_cursor__fixed(struct json_writer *w, struct json_cursor *c, int64_t v,
				      unsigned int decimals)
{
	if (decimals > 18)
		decimals = 18;
	json_cursor__room(w, c, 24 + decimals);
	json_cursor__separate(c);
	c->p = json_format_fixed(c->p, v, decimals);
}

/* A value written as is, as json_writer__raw. */
static inline void json_cursor__raw(struct json_writer *w, struct json_cursor *c,
				    const char *text, size_t len)
{
	json_cursor__room(w, c, len + 2);
	json_cursor__separate(c);
	json_copy_small(c->p, text, len);
	c->p += len;
}

/* A string value, escaped as json_writer__string (NULL is null). */
static inline void json_cursor__string(struct json_writer *w, struct json_cursor *c,
				       const char *s)
{
	size_t n = s ? strlen(s) : 0;

	json_cursor__room(w, c, (n > JSON_FAST_STRING ? 0 : n) + 6);
	json_cursor__separate(c);
	if (!s) {
		memcpy(c->p, "null", 4);
		c->p += 4;
	} else if (n > JSON_FAST_STRING || json_needs_escape(s, n)) {
		*c = json_writer__cursor_escaped(w, *c, s);
	} else {
		*c->p = '"';
		json_copy_small(c->p + 1, s, n);
		c->p[n + 1] = '"';
		c->p += n + 2;
	}
}

static inline void json_cursor__double(struct json_writer *w, struct json_cursor *c, double v,
				       unsigned int decimals)
{
	json_cursor__room(w, c, 2);
	json_cursor__separate(c);
	*c = json_writer__cursor_double(w, *c, v, decimals);
}

static inline void json_cursor__bool(struct json_writer *w, struct json_cursor *c, bool v)
{
	json_cursor__raw(w, c, v ? "true" : "false", v ? 4 : 5);
}

#endif /* UTIL_JSON_WRITER_H */
