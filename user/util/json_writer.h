/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One streaming JSON writer, in the shape of bpftool's src/json_writer.h: it
 * puts the commas, the colons and the nesting, and escapes strings. It is
 * built for cuprobe's traces, one JSON object per kernel launch at millions
 * a second: values go into the writer's own buffer, numbers are formatted by
 * hand, and the buffer reaches the FILE in large writes.
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

struct json_writer;

/* Writes into f, which stays the caller's. NULL and errno ENOMEM on failure. */
struct json_writer *json_writer__new(FILE *f);
/* Frees the writer without flushing what it holds. */
void json_writer__free(struct json_writer *w);
/* Hands what the writer holds to its FILE (not fflush). 0 or the first error, -errno. */
int json_writer__flush(struct json_writer *w);
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

/*
 * The same for names of len bytes that need no escaping (the caller vouches:
 * a literal of plain ASCII), copied without a scan, which is most of what a
 * writer of millions of small objects a second spends otherwise.
 * JSON_LITERAL("pid") gives a literal and its length, and refuses anything
 * but a string literal.
 */
#define JSON_LITERAL(s) "" s, (sizeof(s) - 1)
void json_writer__name_raw(struct json_writer *w, const char *name, size_t len);
void json_writer__field_string_raw(struct json_writer *w, const char *name, size_t len,
				   const char *s);
void json_writer__field_u64_raw(struct json_writer *w, const char *name, size_t len, uint64_t v);
void json_writer__field_i64_raw(struct json_writer *w, const char *name, size_t len, int64_t v);
void json_writer__field_fixed_raw(struct json_writer *w, const char *name, size_t len, int64_t v,
				  unsigned int decimals);

#endif /* UTIL_JSON_WRITER_H */
