// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A trace in any layout (torch.profiler's one long line, or indented), read
 * a value at a time: this file walks the top-level object itself and hands
 * each element of traceEvents to jansson alone (json_loadb on its bytes), so
 * that memory follows the report's tables and the largest event, not the
 * file. Every other top-level value is checked the same way, an array a
 * value at a time, so that a file this reader takes is one jansson takes
 * whole, and gives the same report: jansson keeps the last of two equal keys
 * (a second traceEvents starts the file's report over), allows 2048 levels
 * of nesting, and wants nothing but white space after the top-level value.
 *
 * The walk only finds where each value ends (strings and brackets): whether
 * its bytes are JSON is jansson's to say.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/err.h"
#include "report/read.h"
#include "trace/format.h"

#define SCAN_CHUNK (1u << 16)
/* jansson's JSON_PARSER_MAX_DEPTH: each value, scalars too, is a level. */
#define SCAN_MAX_DEPTH 2048

/* What the unit tests check: files read by this reader since the program started. */
unsigned long report_scanned_files;

struct scan {
	FILE *f;
	const char *path;
	char *buf;
	size_t cap, pos, end; /* [pos, end) is read but not taken */
	unsigned long long base; /* the file offset of buf[0] */
	bool eof;
	/* Where buf[counted] is, as jansson counts: lines from 1, UTF-8 characters. */
	size_t counted;
	int line, column;
};

static void count_to(struct scan *s, size_t to)
{
	for (; s->counted < to; s->counted++) {
		unsigned char c = s->buf[s->counted];

		if (c == '\n') {
			s->line++;
			s->column = 0;
		} else if ((c & 0xc0) != 0x80) {
			s->column++;
		}
	}
}

/* More bytes after pos, which stays: 1, 0 at the end of the file, -EIO or -ENOMEM. */
static int fill(struct scan *s)
{
	size_t n;
	char *buf;

	if (s->eof)
		return 0;
	if (s->pos) {
		count_to(s, s->pos);
		memmove(s->buf, s->buf + s->pos, s->end - s->pos);
		s->end -= s->pos;
		s->base += s->pos;
		s->counted = 0;
		s->pos = 0;
	}
	if (s->end == s->cap) {
		buf = realloc(s->buf, s->cap ? s->cap * 2 : SCAN_CHUNK);
		if (!buf)
			return -ENOMEM;
		s->buf = buf;
		s->cap = s->cap ? s->cap * 2 : SCAN_CHUNK;
	}
	n = fread(s->buf + s->end, 1, s->cap - s->end, s->f);
	if (!n && ferror(s->f))
		return -EIO;
	s->end += n;
	s->eof = !n;
	return n ? 1 : 0;
}

/*
 * The error of a file that is not JSON, at buf[at] (at == end: its end), or
 * at jansson's line and column in the value that starts there.
 */
static int syntax_error(struct scan *s, size_t at, const json_error_t *jerr, const char *text)
{
	const char *dot = strrchr(s->path, '.');
	unsigned long long byte = s->base + at;
	int line, column;

	if (dot && !strcmp(dot, ".gz")) {
		report_err("%s: compressed traces are not read: gunzip it first", s->path);
		return -EINVAL;
	}
	count_to(s, at);
	line = s->line;
	column = s->column + (at < s->end && s->buf[at] != '\n');
	if (jerr) {
		byte += jerr->position ? jerr->position - 1 : 0;
		column = jerr->line > 1 ? jerr->column : s->column + jerr->column;
		line += jerr->line - 1;
		text = jerr->text;
	}
	report_err("%s: not valid JSON at line %d, column %d, byte %llu (%s): pass a trace file "
		   "written by cuprobe record",
		   s->path, line, column, byte, text);
	return -EINVAL;
}

static int cut_short(struct scan *s)
{
	return syntax_error(s, s->end, NULL, "the file ends inside the trace: it was cut short");
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The next byte after white space, left at pos: 1, 0 at the end of the file, or -errno. */
static int peek(struct scan *s, char *c)
{
	int rc;

	for (;;) {
		while (s->pos < s->end && is_space(s->buf[s->pos]))
			s->pos++;
		if (s->pos < s->end) {
			*c = s->buf[s->pos];
			return 1;
		}
		rc = fill(s);
		if (rc <= 0)
			return rc;
	}
}

/* The next byte after white space, which must be there: 0, or -errno once reported. */
static int next(struct scan *s, char *c)
{
	int rc = peek(s, c);

	return rc < 0 ? rc : rc ? 0 : cut_short(s);
}

static bool ends_scalar(char c)
{
	return is_space(c) || c == ',' || c == ']' || c == '}' || c == ':';
}

/* Where a value ends, byte by byte; depth counts its levels as jansson does. */
struct span {
	size_t len;
	int nest, depth;
	bool in_string, escape, done;
};

static void span_level(struct span *sp, int level)
{
	if (level > sp->depth)
		sp->depth = level;
}

static void span_byte(struct span *sp, char c)
{
	if (sp->in_string) {
		if (sp->escape) {
			sp->escape = false;
		} else if (c == '\\') {
			sp->escape = true;
		} else if (c == '"') {
			sp->in_string = false;
			sp->done = !sp->nest;
		}
		return;
	}
	switch (c) {
	case '[':
	case '{':
		span_level(sp, ++sp->nest);
		return;
	case ']':
	case '}':
		sp->done = --sp->nest <= 0;
		return;
	case '"':
		sp->in_string = true;
		span_level(sp, sp->nest + 1); /* a string, or a key: its value is a level down */
		return;
	case ',':
	case ':':
		return;
	default:
		if (!is_space(c))
			span_level(sp, sp->nest + 1);
	}
}

/*
 * The value at pos, which is not white space: its bytes are buf[pos] for
 * len, all in the buffer. 0, or -errno once reported.
 */
static int value_span(struct scan *s, size_t *len, int *depth)
{
	char first = s->buf[s->pos];
	bool scalar = first != '[' && first != '{' && first != '"';
	struct span sp = { .depth = 1 };
	int rc;

	if (first == ']' || first == '}' || first == ',' || first == ':')
		return syntax_error(s, s->pos, NULL, "a value expected");
	for (;;) {
		while (s->pos + sp.len < s->end) {
			char c = s->buf[s->pos + sp.len];

			if (scalar && ends_scalar(c))
				goto found;
			span_byte(&sp, c);
			sp.len++;
			if (!scalar && sp.done)
				goto found;
		}
		rc = fill(s);
		if (rc < 0)
			return rc;
		if (!rc) {
			if (scalar)
				goto found;
			return cut_short(s);
		}
	}
found:
	*len = sp.len;
	*depth = sp.depth;
	return 0;
}

/*
 * The value at pos, read by jansson; above is how many levels hold it. The
 * value, or NULL and err (-ENOMEM or -EINVAL once reported).
 */
static json_t *take_value(struct scan *s, int above, int *err)
{
	json_error_t jerr;
	size_t len = 0;
	json_t *v;
	int depth = 0;

	*err = value_span(s, &len, &depth);
	if (*err)
		return NULL;
	if (above + depth > SCAN_MAX_DEPTH) {
		*err = syntax_error(s, s->pos, NULL, "maximum parsing depth reached");
		return NULL;
	}
	v = json_loadb(s->buf + s->pos, len, JSON_DECODE_ANY, &jerr);
	if (!v) {
		*err = json_error_code(&jerr) == json_error_out_of_memory
			       ? -ENOMEM
			       : syntax_error(s, s->pos, &jerr, NULL);
		return NULL;
	}
	s->pos += len;
	return v;
}

/* What to do with each element of an array; NULL checks it and drops it. */
typedef int (*element_fn)(void *ctx, const json_t *v);

/* Checks the value at pos, an array a value at a time. 0, or -errno. */
static int skip_value(struct scan *s, int above);

/* The array at pos, each element given to fn; above is how many levels hold it. */
static int walk_array(struct scan *s, int above, element_fn fn, void *ctx)
{
	json_t *v;
	char c;
	int err;

	s->pos++; /* '[' */
	if ((err = next(s, &c)))
		return err;
	if (c == ']') {
		s->pos++;
		return 0;
	}
	for (;;) {
		v = take_value(s, above + 1, &err);
		if (!v)
			return err;
		err = fn ? fn(ctx, v) : 0;
		json_decref(v);
		if (err)
			return err;
		if ((err = next(s, &c)))
			return err;
		s->pos++;
		if (c == ']')
			return 0;
		if (c != ',')
			return syntax_error(s, s->pos - 1, NULL, "',' or ']' expected");
		if ((err = next(s, &c)))
			return err;
	}
}

static int skip_value(struct scan *s, int above)
{
	json_t *v;
	int err;

	if (s->buf[s->pos] == '[')
		return walk_array(s, above, NULL, NULL);
	v = take_value(s, above, &err);
	json_decref(v);
	return v ? 0 : err;
}

/* One file's reading: its report, and the top-level keys the report uses. */
struct scan_file {
	const char *path;
	struct report *r;
	struct file_scan fs;
	json_t *root; /* the top-level keys but the events */
	bool events;  /* the last traceEvents is an array */
};

static int scan_event(void *ctx, const json_t *ev)
{
	struct scan_file *sf = ctx;

	return read__event(sf->r, ev, &sf->fs);
}

/* traceEvents again: jansson keeps the last, so the report starts over. */
static void scan_file__restart(struct scan_file *sf)
{
	report__free(sf->r);
	report__init(sf->r);
	file_scan__free(&sf->fs);
	file_scan__init(&sf->fs, sf->path);
}

/* The key at pos (a string), decoded by jansson. NULL and err once reported. */
static json_t *take_key(struct scan *s, int *err)
{
	if (s->buf[s->pos] != '"') {
		*err = syntax_error(s, s->pos, NULL, "string or '}' expected");
		return NULL;
	}
	return take_value(s, 1, err);
}

static bool key_is(const json_t *key, const char *want)
{
	return json_string_length(key) == strlen(want) && !strcmp(json_string_value(key), want);
}

/* A member of the top-level object, from its key to its value. */
static int scan_member(struct scan *s, struct scan_file *sf)
{
	json_t *key, *v;
	char c;
	int err;

	key = take_key(s, &err);
	if (!key)
		return err;
	if ((err = next(s, &c)))
		goto out;
	if (c != ':') {
		err = syntax_error(s, s->pos, NULL, "':' expected");
		goto out;
	}
	s->pos++;
	if ((err = next(s, &c)))
		goto out;
	if (key_is(key, TRACE_KEY_EVENTS)) {
		scan_file__restart(sf);
		sf->events = c == '[';
		err = sf->events ? walk_array(s, 1, scan_event, sf) : skip_value(s, 1);
	} else if (key_is(key, TRACE_KEY_CUPROBE)) {
		v = take_value(s, 1, &err);
		if (v && json_object_set_new(sf->root, TRACE_KEY_CUPROBE, v))
			err = -ENOMEM;
	} else {
		err = skip_value(s, 1);
	}
out:
	json_decref(key);
	return err;
}

/* The top-level object at pos. */
static int scan_object(struct scan *s, struct scan_file *sf)
{
	char c;
	int err;

	s->pos++; /* '{' */
	if ((err = next(s, &c)))
		return err;
	if (c == '}') {
		s->pos++;
		return 0;
	}
	for (;;) {
		if ((err = scan_member(s, sf)) || (err = next(s, &c)))
			return err;
		s->pos++;
		if (c == '}')
			return 0;
		if (c != ',')
			return syntax_error(s, s->pos - 1, NULL, "',' or '}' expected");
		if ((err = next(s, &c)))
			return err;
	}
}

/* The whole document: one object or array, then nothing but white space. */
static int scan_document(struct scan *s, struct scan_file *sf)
{
	char c;
	int err, rc = peek(s, &c);

	if (rc < 0)
		return rc;
	if (!rc)
		return syntax_error(s, s->end, NULL, "'[' or '{' expected near end of file");
	if (c == '{')
		err = scan_object(s, sf);
	else if (c == '[')
		err = walk_array(s, 0, NULL, NULL);
	else
		return syntax_error(s, s->pos, NULL, "'[' or '{' expected");
	if (err)
		return err;
	rc = peek(s, &c);
	if (rc < 0)
		return rc;
	return rc ? syntax_error(s, s->pos, NULL, "end of file expected") : 0;
}

int scan__read(struct report *r, FILE *f, const char *path)
{
	struct scan s = { .f = f, .path = path, .line = 1 };
	struct scan_file sf = { .path = path, .r = r, .root = json_object() };
	int err;

	if (!sf.root)
		return -ENOMEM;
	file_scan__init(&sf.fs, path);
	err = scan_document(&s, &sf);
	if (err == -EIO)
		report_err("cannot read %s: %s: check that the file is readable", path,
			   strerror(EIO));
	if (!err && !sf.events) {
		report_err("%s: not a trace (no traceEvents array): pass a *.pt.trace.json file "
			   "written by cuprobe record",
			   path);
		err = -EINVAL;
	}
	if (!err)
		err = read__file_end(r, sf.root, &sf.fs);
	if (!err)
		report_scanned_files++;
	file_scan__free(&sf.fs);
	json_decref(sf.root);
	free(s.buf);
	return err;
}
