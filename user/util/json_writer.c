// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util/json_writer.h"

/* Large writes: a trace of a million launches is a few hundred of them. */
#define JW_BUF_SIZE (256u << 10)
#define JW_MAX_DEPTH 64
#define JW_MAX_INDENT 128u
/* Room for any value but a string: printf's %.17f of the largest double is 327 bytes. */
#define JW_NUM_MAX 400
#define JW_MAX_DECIMALS 17u
#define JW_MAX_FIXED_DECIMALS 18u

struct jw_level {
	unsigned int count;	  /* elements written */
	unsigned int indent;	  /* of the line its elements are on */
	unsigned int open_indent; /* of the line it opened on, where it closes */
	bool lines;		  /* one element a line */
};

struct json_writer {
	FILE *f;
	char *buf;
	size_t len;
	int err;
	unsigned int depth;    /* containers open; level[0] is the document */
	unsigned int overflow; /* containers opened beyond JW_MAX_DEPTH */
	bool after_name;       /* a member's name is out: its value follows the colon */
	unsigned int pretty;
	int next_lines; /* indent for the next container opened, or -1 */
	struct jw_level level[JW_MAX_DEPTH + 1];
};

/* Bytes a string holds as they are: printable ASCII but '"' and '\'. */
static const unsigned char plain[256] = {
	[0x20 ... 0x21] = 1,
	[0x23 ... 0x5b] = 1,
	[0x5d ... 0x7f] = 1,
};

static const char hex_digits[] = "0123456789abcdef";

static const char digit_pairs[] = "00010203040506070809101112131415161718192021222324"
				  "25262728293031323334353637383940414243444546474849"
				  "50515253545556575859606162636465666768697071727374"
				  "75767778798081828384858687888990919293949596979899";

struct json_writer *json_writer__new(FILE *f)
{
	struct json_writer *w = calloc(1, sizeof(*w));

	if (!w || !(w->buf = malloc(JW_BUF_SIZE))) {
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	w->f = f;
	w->next_lines = -1;
	return w;
}

void json_writer__free(struct json_writer *w)
{
	if (!w)
		return;
	free(w->buf);
	free(w);
}

static void set_error(struct json_writer *w, int err)
{
	if (!w->err)
		w->err = err;
}

int json_writer__flush(struct json_writer *w)
{
	if (w->len && fwrite(w->buf, 1, w->len, w->f) != w->len)
		set_error(w, errno ? -errno : -EIO);
	/* After an error the bytes go: the output is lost anyway, and memory stays bounded. */
	w->len = 0;
	return w->err;
}

int json_writer__error(const struct json_writer *w)
{
	return w->err;
}

/* Room for n more bytes, n <= JW_BUF_SIZE; the place to write them. */
static inline char *room(struct json_writer *w, size_t n)
{
	if (JW_BUF_SIZE - w->len < n)
		json_writer__flush(w);
	return w->buf + w->len;
}

static void put(struct json_writer *w, const void *p, size_t n)
{
	const char *s = p;

	while (n) {
		size_t chunk = JW_BUF_SIZE - w->len;

		if (!chunk) {
			json_writer__flush(w);
			chunk = JW_BUF_SIZE;
		}
		if (chunk > n)
			chunk = n;
		memcpy(w->buf + w->len, s, chunk);
		w->len += chunk;
		s += chunk;
		n -= chunk;
	}
}

static inline void put_char(struct json_writer *w, char c)
{
	*room(w, 1) = c;
	w->len++;
}

/* What comes before an element of the open container: a comma, a line break, an indent. */
static void separate(struct json_writer *w)
{
	struct jw_level *l = &w->level[w->depth];
	char *p;

	if (!w->depth)
		return;
	p = room(w, l->indent + 2);
	if (l->count++)
		*p++ = ',';
	if (l->lines) {
		*p++ = '\n';
		memset(p, ' ', l->indent);
		p += l->indent;
	} else if (l->count > 1) {
		*p++ = ' ';
	}
	w->len = (size_t)(p - w->buf);
}

static inline void begin_value(struct json_writer *w)
{
	if (w->after_name)
		w->after_name = false;
	else
		separate(w);
}

void json_writer__pretty(struct json_writer *w, unsigned int step)
{
	w->pretty = step < JW_MAX_INDENT ? step : JW_MAX_INDENT;
}

void json_writer__lines(struct json_writer *w, unsigned int indent)
{
	w->next_lines = (int)(indent < JW_MAX_INDENT ? indent : JW_MAX_INDENT);
}

static void start(struct json_writer *w, char open)
{
	const struct jw_level *parent = &w->level[w->depth];
	struct jw_level *l;

	begin_value(w);
	put_char(w, open);
	if (w->depth == JW_MAX_DEPTH) {
		set_error(w, -E2BIG);
		w->overflow++;
		return;
	}
	l = &w->level[++w->depth];
	l->count = 0;
	l->open_indent = parent->indent;
	l->lines = w->next_lines >= 0 || w->pretty;
	if (w->next_lines >= 0)
		l->indent = (unsigned int)w->next_lines;
	else if (w->pretty)
		l->indent = parent->indent + w->pretty;
	else
		l->indent = parent->indent;
	if (l->indent > JW_MAX_INDENT)
		l->indent = JW_MAX_INDENT;
	w->next_lines = -1;
}

static void end(struct json_writer *w, char close)
{
	const struct jw_level *l = &w->level[w->depth];
	char *p;

	if (w->overflow) {
		w->overflow--;
	} else if (!w->depth) {
		set_error(w, -EINVAL); /* closes what was never opened */
		return;
	} else {
		if (l->lines && l->count) {
			p = room(w, l->open_indent + 1);
			*p++ = '\n';
			memset(p, ' ', l->open_indent);
			w->len += l->open_indent + 1;
		}
		w->depth--;
	}
	w->after_name = false;
	put_char(w, close);
}

void json_writer__start_object(struct json_writer *w)
{
	start(w, '{');
}

void json_writer__end_object(struct json_writer *w)
{
	end(w, '}');
}

void json_writer__start_array(struct json_writer *w)
{
	start(w, '[');
}

void json_writer__end_array(struct json_writer *w)
{
	end(w, ']');
}

/* Length of the well-formed UTF-8 sequence at s, or 0. It stops at a NUL. */
static int utf8_len(const unsigned char *s)
{
	int n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;

	if (s[0] >= 0xf5)
		return 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* One character that cannot go as it is; returns what it took of s. */
static int put_escape(struct json_writer *w, const unsigned char *s)
{
	char *p = room(w, 6);
	int n;

	if (*s == '"' || *s == '\\') {
		p[0] = '\\';
		p[1] = (char)*s;
		w->len += 2;
		return 1;
	}
	if (*s < 0x20) {
		memcpy(p, "\\u00", 4);
		p[4] = hex_digits[*s >> 4];
		p[5] = hex_digits[*s & 15];
		w->len += 6;
		return 1;
	}
	n = utf8_len(s);
	if (n) {
		memcpy(p, s, (size_t)n);
		w->len += (size_t)n;
		return n;
	}
	/* A byte of a broken sequence (a name cut inside a character). */
	memcpy(p, "\\ufffd", 6);
	w->len += 6;
	return 1;
}

static void put_string(struct json_writer *w, const char *str)
{
	const unsigned char *s = (const unsigned char *)str, *run;

	put_char(w, '"');
	for (;;) {
		for (run = s; plain[*s]; s++)
			;
		put(w, run, (size_t)(s - run));
		if (!*s)
			break;
		s += put_escape(w, s);
	}
	put_char(w, '"');
}

void json_writer__name(struct json_writer *w, const char *name)
{
	separate(w);
	put_string(w, name);
	memcpy(room(w, 2), ": ", 2);
	w->len += 2;
	w->after_name = true;
}

void json_writer__string(struct json_writer *w, const char *s)
{
	if (!s) {
		json_writer__null(w);
		return;
	}
	begin_value(w);
	put_string(w, s);
}

/* v in decimal, ending at end; returns where it starts. */
static char *format_u64(char *end, uint64_t v)
{
	char *p = end;

	while (v >= 100) {
		p -= 2;
		memcpy(p, digit_pairs + (v % 100) * 2, 2);
		v /= 100;
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, digit_pairs + v * 2, 2);
	} else {
		*--p = (char)('0' + v);
	}
	return p;
}

static void put_u64(struct json_writer *w, uint64_t v, bool negative)
{
	char buf[24], *end = buf + sizeof(buf), *p = format_u64(end, v);

	if (negative)
		*--p = '-';
	memcpy(room(w, (size_t)(end - p)), p, (size_t)(end - p));
	w->len += (size_t)(end - p);
}

void json_writer__u64(struct json_writer *w, uint64_t v)
{
	begin_value(w);
	put_u64(w, v, false);
}

/* |v| without overflow, INT64_MIN included. */
static uint64_t magnitude(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

void json_writer__i64(struct json_writer *w, int64_t v)
{
	begin_value(w);
	put_u64(w, magnitude(v), v < 0);
}

void json_writer__fixed(struct json_writer *w, int64_t v, unsigned int decimals)
{
	uint64_t m = magnitude(v), scale = 1;
	char buf[48], *end = buf + sizeof(buf), *p = end;

	if (decimals > JW_MAX_FIXED_DECIMALS)
		decimals = JW_MAX_FIXED_DECIMALS;
	for (unsigned int i = 0; i < decimals; i++)
		scale *= 10;
	if (decimals) {
		uint64_t frac = m % scale;

		for (unsigned int i = 0; i < decimals; i++, frac /= 10)
			*--p = (char)('0' + frac % 10);
		*--p = '.';
	}
	p = format_u64(p, m / scale);
	if (v < 0)
		*--p = '-';
	begin_value(w);
	memcpy(room(w, (size_t)(end - p)), p, (size_t)(end - p));
	w->len += (size_t)(end - p);
}

static void put_number_text(struct json_writer *w, const char *text, int len)
{
	if (len <= 0 || len >= JW_NUM_MAX) {
		set_error(w, -EINVAL);
		json_writer__null(w);
		return;
	}
	json_writer__raw(w, text, (size_t)len);
}

void json_writer__double(struct json_writer *w, double v, unsigned int decimals)
{
	char buf[JW_NUM_MAX];

	if (!isfinite(v)) {
		json_writer__null(w); /* JSON has no NaN and no infinity */
		return;
	}
	if (decimals > JW_MAX_DECIMALS)
		decimals = JW_MAX_DECIMALS;
	put_number_text(w, buf, snprintf(buf, sizeof(buf), "%.*f", (int)decimals, v));
}

/* Drops the '+' and the leading zeros of an exponent: "1e+07" becomes "1e7". */
static int trim_exponent(char *buf, int len)
{
	char *start = strchr(buf, 'e'), *end;

	if (!start)
		return len;
	start++;
	if (*start == '-')
		start++;
	for (end = start; *end == '+' || *end == '0'; end++)
		;
	if (!*end)
		end--; /* keep one digit of an exponent of 0 */
	memmove(start, end, strlen(end) + 1);
	return len - (int)(end - start);
}

void json_writer__double_sig(struct json_writer *w, double v, unsigned int digits)
{
	char buf[JW_NUM_MAX];
	int len;

	if (!isfinite(v)) {
		json_writer__null(w);
		return;
	}
	digits = digits < 1 ? 1 : digits > JW_MAX_DECIMALS ? JW_MAX_DECIMALS : digits;
	len = snprintf(buf, sizeof(buf) - 2, "%.*g", (int)digits, v);
	if (len > 0 && len < (int)sizeof(buf) - 2 && !strpbrk(buf, ".e")) {
		/* A reader would take "5" for an integer. */
		memcpy(buf + len, ".0", 3);
		len += 2;
	}
	if (len > 0 && len < (int)sizeof(buf))
		len = trim_exponent(buf, len);
	put_number_text(w, buf, len);
}

void json_writer__bool(struct json_writer *w, bool v)
{
	json_writer__raw(w, v ? "true" : "false", v ? 4 : 5);
}

void json_writer__null(struct json_writer *w)
{
	json_writer__raw(w, "null", 4);
}

void json_writer__raw(struct json_writer *w, const char *text, size_t len)
{
	begin_value(w);
	put(w, text, len);
}
