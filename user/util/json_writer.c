// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util/json_writer.h"
#include "util/utf8.h"

/* Large writes: a trace of a million launches is a few hundred of them. */
#define JW_BUF_SIZE (1u << 20)
#define JW_MAX_DEPTH 64
#define JW_MAX_INDENT 128u
/* Room for any value but a string: printf's %.17f of the largest double is 327 bytes. */
#define JW_NUM_MAX 400
#define JW_MAX_DECIMALS 17u
#define JW_MAX_FIXED_DECIMALS 18u

/* A container around the one open: what it goes back to when that one closes. */
struct jw_level {
	unsigned int indent; /* of the line its elements are on */
	bool lines;	     /* one element a line */
};

struct json_writer {
	FILE *f;
	char *buf;
	char *pos;   /* where the next byte goes */
	char *limit; /* buf + JW_BUF_SIZE */
	int err;
	uint64_t flushed; /* bytes handed to f so far */
	/* The open container, kept here rather than looked up: every value reads it. */
	bool lines;	     /* one element a line */
	bool comma;	     /* an element is out: the next one needs a comma */
	bool after_name;     /* a member's name is out: its value follows the colon */
	unsigned int indent; /* of the line its elements are on */
	unsigned int depth;  /* containers open */
	unsigned int overflow; /* containers opened beyond JW_MAX_DEPTH */
	unsigned int pretty;
	int next_lines; /* indent for the next container opened, or -1 */
	struct jw_level level[JW_MAX_DEPTH];
};

/* Bytes a string holds as they are: printable ASCII but '"' and '\'. */
const unsigned char json_plain[256] = {
	[0x20 ... 0x21] = 1,
	[0x23 ... 0x5b] = 1,
	[0x5d ... 0x7f] = 1,
};

static const char hex_digits[] = "0123456789abcdef";

const uint64_t json_powers_of_10[20] = {
	1ull,
	10ull,
	100ull,
	1000ull,
	10000ull,
	100000ull,
	1000000ull,
	10000000ull,
	100000000ull,
	1000000000ull,
	10000000000ull,
	100000000000ull,
	1000000000000ull,
	10000000000000ull,
	100000000000000ull,
	1000000000000000ull,
	10000000000000000ull,
	100000000000000000ull,
	1000000000000000000ull,
	10000000000000000000ull,
};

const char json_digit_pairs[201] = "00010203040506070809101112131415161718192021222324"
				    "25262728293031323334353637383940414243444546474849"
				    "50515253545556575859606162636465666768697071727374"
				    "75767778798081828384858687888990919293949596979899";

/*
 * The writer and its buffer are one allocation, large enough to get pages
 * of its own: the state every value updates shares no cache line with other
 * allocations, which other threads of the loader may be writing.
 */
struct json_writer *json_writer__new(FILE *f)
{
	struct json_writer *w = malloc(sizeof(*w) + JW_BUF_SIZE);

	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	memset(w, 0, sizeof(*w));
	w->pos = w->buf = (char *)(w + 1);
	w->limit = w->buf + JW_BUF_SIZE;
	w->f = f;
	w->next_lines = -1;
	return w;
}

void json_writer__free(struct json_writer *w)
{
	free(w);
}

static void set_error(struct json_writer *w, int err)
{
	if (!w->err)
		w->err = err;
}

int json_writer__flush(struct json_writer *w)
{
	size_t len = (size_t)(w->pos - w->buf);

	if (len && fwrite(w->buf, 1, len, w->f) != len)
		set_error(w, errno ? -errno : -EIO);
	w->flushed += len;
	/* After an error the bytes go: the output is lost anyway, and memory stays bounded. */
	w->pos = w->buf;
	return w->err;
}

uint64_t json_writer__bytes(const struct json_writer *w)
{
	return w->flushed + (uint64_t)(w->pos - w->buf);
}

int json_writer__error(const struct json_writer *w)
{
	return w->err;
}

/* Room for n more bytes, n <= JW_BUF_SIZE; the place to write them. */
static inline char *room(struct json_writer *w, size_t n)
{
	if ((size_t)(w->limit - w->pos) < n)
		json_writer__flush(w);
	return w->pos;
}

static void put(struct json_writer *w, const void *p, size_t n)
{
	const char *s = p;

	while (n) {
		size_t chunk = (size_t)(w->limit - w->pos);

		if (!chunk) {
			json_writer__flush(w);
			chunk = JW_BUF_SIZE;
		}
		if (chunk > n)
			chunk = n;
		memcpy(w->pos, s, chunk);
		w->pos += chunk;
		s += chunk;
		n -= chunk;
	}
}

static inline void put_char(struct json_writer *w, char c)
{
	*room(w, 1) = c;
	w->pos++;
}

/* A line break and the indent before an element of a container laid out a line each. */
static void separate_lines(struct json_writer *w)
{
	char *p = room(w, w->indent + 2);

	if (w->comma)
		*p++ = ',';
	*p++ = '\n';
	memset(p, ' ', w->indent);
	w->pos = p + w->indent;
}

/* What comes before an element of the open container: a comma, a space or a line break. */
static inline void separate(struct json_writer *w)
{
	char *p;

	if (w->lines) {
		separate_lines(w);
	} else if (w->comma) {
		p = room(w, 2);
		p[0] = ',';
		p[1] = ' ';
		w->pos += 2;
	}
	w->comma = true;
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
	unsigned int parent_indent = w->indent;

	begin_value(w);
	put_char(w, open);
	if (w->depth == JW_MAX_DEPTH) {
		set_error(w, -E2BIG);
		w->overflow++;
		return;
	}
	w->level[w->depth].indent = w->indent;
	w->level[w->depth++].lines = w->lines;
	w->comma = false;
	if (w->next_lines < 0 && !w->pretty) {
		w->lines = false; /* on one line, at the indent of that line */
		return;
	}
	w->lines = true;
	if (w->next_lines >= 0)
		w->indent = (unsigned int)w->next_lines;
	else
		w->indent = parent_indent + w->pretty;
	if (w->indent > JW_MAX_INDENT)
		w->indent = JW_MAX_INDENT;
	w->next_lines = -1;
}

static void end(struct json_writer *w, char close)
{
	const struct jw_level *parent;
	char *p;

	if (w->overflow) {
		w->overflow--;
	} else if (!w->depth) {
		set_error(w, -EINVAL); /* closes what was never opened */
		return;
	} else {
		parent = &w->level[--w->depth];
		/* On a line of its own at the indent of the line it opened on, unless empty. */
		if (w->lines && w->comma) {
			p = room(w, parent->indent + 1);
			*p++ = '\n';
			memset(p, ' ', parent->indent);
			w->pos += parent->indent + 1;
		}
		w->indent = parent->indent;
		w->lines = parent->lines;
	}
	w->comma = true;
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

/* One character that cannot go as it is; returns what it took of s. */
static int put_escape(struct json_writer *w, const unsigned char *s)
{
	char *p = room(w, 6);
	int n;

	if (*s == '"' || *s == '\\') {
		p[0] = '\\';
		p[1] = (char)*s;
		w->pos += 2;
		return 1;
	}
	if (*s < 0x20) {
		memcpy(p, "\\u00", 4);
		p[4] = hex_digits[*s >> 4];
		p[5] = hex_digits[*s & 15];
		w->pos += 6;
		return 1;
	}
	n = utf8__len(s);
	if (n) {
		memcpy(p, s, (size_t)n);
		w->pos += (size_t)n;
		return n;
	}
	/* A byte of a broken sequence (a name cut inside a character). */
	memcpy(p, "\\ufffd", 6);
	w->pos += 6;
	return 1;
}

/* s, quoted and escaped, followed by tail (a colon after a name). */
static void put_string_slow(struct json_writer *w, const char *str, const char *tail)
{
	const unsigned char *s = (const unsigned char *)str, *run;

	put_char(w, '"');
	for (;;) {
		for (run = s; json_plain[*s]; s++)
			;
		put(w, run, (size_t)(s - run));
		if (!*s)
			break;
		s += put_escape(w, s);
	}
	put_char(w, '"');
	put(w, tail, strlen(tail));
}

/*
 * Names, kinds and most kernel names need no escape: those go in one copy,
 * followed by tail_len bytes of tail. Anything else takes the slow path.
 */
static inline void put_string(struct json_writer *w, const char *s, const char *tail,
			      size_t tail_len)
{
	size_t n = strlen(s);
	char *p;

	if (n > JSON_FAST_STRING || json_needs_escape(s, n)) {
		put_string_slow(w, s, tail);
		return;
	}
	p = room(w, n + 2 + tail_len);
	*p++ = '"';
	json_copy_small(p, s, n);
	p += n;
	*p++ = '"';
	memcpy(p, tail, tail_len);
	w->pos = p + tail_len;
}

static inline void put_name(struct json_writer *w, const char *name)
{
	separate(w);
	put_string(w, name, ": ", 2);
	w->after_name = true;
}

void json_writer__name(struct json_writer *w, const char *name)
{
	put_name(w, name);
}

void json_writer__string(struct json_writer *w, const char *s)
{
	if (!s) {
		json_writer__null(w);
		return;
	}
	begin_value(w);
	put_string(w, s, "", 0);
}

static inline void put_u64(struct json_writer *w, uint64_t v, bool negative)
{
	w->pos = json_format_u64(room(w, 21), v, negative);
}

void json_writer__u64(struct json_writer *w, uint64_t v)
{
	begin_value(w);
	put_u64(w, v, false);
}

void json_writer__i64(struct json_writer *w, int64_t v)
{
	begin_value(w);
	put_u64(w, json_magnitude(v), v < 0);
}

static inline void put_fixed(struct json_writer *w, int64_t v, unsigned int decimals)
{
	if (decimals > JW_MAX_FIXED_DECIMALS)
		decimals = JW_MAX_FIXED_DECIMALS;
	w->pos = json_format_fixed(room(w, 22 + decimals), v, decimals);
}

void json_writer__fixed(struct json_writer *w, int64_t v, unsigned int decimals)
{
	begin_value(w);
	put_fixed(w, v, decimals);
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
	if (len > JSON_FAST_STRING) {
		put(w, text, len);
		return;
	}
	json_copy_small(room(w, len), text, len);
	w->pos += len;
}

void json_writer__field_string(struct json_writer *w, const char *name, const char *s)
{
	put_name(w, name);
	json_writer__string(w, s);
}

void json_writer__field_u64(struct json_writer *w, const char *name, uint64_t v)
{
	put_name(w, name);
	w->after_name = false;
	put_u64(w, v, false);
}

void json_writer__field_i64(struct json_writer *w, const char *name, int64_t v)
{
	put_name(w, name);
	w->after_name = false;
	put_u64(w, json_magnitude(v), v < 0);
}

void json_writer__field_fixed(struct json_writer *w, const char *name, int64_t v,
			      unsigned int decimals)
{
	put_name(w, name);
	w->after_name = false;
	put_fixed(w, v, decimals);
}

void json_writer__field_double(struct json_writer *w, const char *name, double v,
			       unsigned int decimals)
{
	put_name(w, name);
	json_writer__double(w, v, decimals);
}

void json_writer__field_bool(struct json_writer *w, const char *name, bool v)
{
	put_name(w, name);
	json_writer__bool(w, v);
}

void json_writer__field_null(struct json_writer *w, const char *name)
{
	put_name(w, name);
	json_writer__null(w);
}

void json_writer__field_u64_or_null(struct json_writer *w, const char *name, bool known,
				    uint64_t v)
{
	put_name(w, name);
	if (known)
		json_writer__u64(w, v);
	else
		json_writer__null(w);
}

void json_writer__field_i64_or_null(struct json_writer *w, const char *name, bool known,
				    int64_t v)
{
	put_name(w, name);
	if (known)
		json_writer__i64(w, v);
	else
		json_writer__null(w);
}

void json_writer__field_sig_or_null(struct json_writer *w, const char *name, bool known,
				    double v, unsigned int digits)
{
	put_name(w, name);
	if (known)
		json_writer__double_sig(w, v, digits);
	else
		json_writer__null(w);
}

/* ---- the cursor's slow paths ---- */

struct json_cursor json_writer__cursor(struct json_writer *w)
{
	begin_value(w);
	return (struct json_cursor){ .p = w->pos, .end = w->limit };
}

void json_writer__cursor_close(struct json_writer *w, struct json_cursor c)
{
	w->pos = c.p;
}

struct json_cursor json_writer__cursor_room(struct json_writer *w, struct json_cursor c, size_t n)
{
	w->pos = c.p;
	room(w, n);
	c.p = w->pos;
	c.end = w->limit;
	return c;
}

struct json_cursor json_writer__cursor_escaped(struct json_writer *w, struct json_cursor c,
					       const char *s)
{
	w->pos = c.p;
	put_string_slow(w, s, "");
	c.p = w->pos;
	c.end = w->limit;
	return c;
}

struct json_cursor json_writer__cursor_double(struct json_writer *w, struct json_cursor c,
					      double v, unsigned int decimals)
{
	w->pos = c.p;
	w->after_name = true; /* the cursor wrote what comes before the value */
	json_writer__double(w, v, decimals);
	c.p = w->pos;
	c.end = w->limit;
	return c;
}
