// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cuprobe record writes one event a line between the lines trace/format.h
 * names, so that its traces can be read a line at a time, in memory that
 * follows the report's tables and not the file. Lines are bounded so that a
 * file in another layout (one long line) is given up early, and the rest of
 * the document is checked as JSON, so that a file this reader takes gives the
 * report that reading it whole would.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/read.h"
#include "trace/format.h"

#define TRACE_LINE_MAX (16u << 20)
#define TRACE_DOC_MAX (16u << 20) /* everything but the events */

unsigned long report_streamed_files;

struct line_reader {
	FILE *f;
	char *buf;
	size_t cap, pos, end; /* [pos, end) is read but not returned */
	bool eof;
};

/* Room for more of a line than the buffer holds: -E2BIG past TRACE_LINE_MAX. */
static int line_grow(struct line_reader *lr)
{
	size_t ncap = lr->cap ? lr->cap * 2 : 1u << 16;
	char *buf;

	if (ncap > TRACE_LINE_MAX)
		return -E2BIG;
	buf = realloc(lr->buf, ncap);
	if (!buf)
		return -ENOMEM;
	lr->buf = buf;
	lr->cap = ncap;
	return 0;
}

/* 1: the next line, without its '\n'; 0: end of file; -E2BIG, -EIO or -ENOMEM. */
static int line_next(struct line_reader *lr, const char **line, size_t *len)
{
	const char *nl;
	size_t n;
	int err;

	for (;;) {
		nl = lr->end > lr->pos ? memchr(lr->buf + lr->pos, '\n', lr->end - lr->pos) : NULL;
		if (nl || (lr->eof && lr->end > lr->pos)) {
			*line = lr->buf + lr->pos;
			*len = (nl ? (size_t)(nl - lr->buf) : lr->end) - lr->pos;
			lr->pos += *len + (nl ? 1 : 0);
			return 1;
		}
		if (lr->eof)
			return 0;
		if (lr->pos) {
			memmove(lr->buf, lr->buf + lr->pos, lr->end - lr->pos);
			lr->end -= lr->pos;
			lr->pos = 0;
		}
		if (lr->end == lr->cap && (err = line_grow(lr)))
			return err;
		n = fread(lr->buf + lr->end, 1, lr->cap - lr->end, lr->f);
		lr->end += n;
		if (!n && ferror(lr->f))
			return -EIO;
		lr->eof = !n;
	}
}

/* The lines of a trace that are not events, its top-level keys: a vector of chars. */
static int doc_put(struct vec *doc, const char *s, size_t len)
{
	if (doc->len + len > TRACE_DOC_MAX)
		return -E2BIG;
	return vec__append(doc, s, len);
}

static int doc_add_line(struct vec *doc, const char *line, size_t len)
{
	int err = doc_put(doc, line, len);

	return err ? err : doc_put(doc, "\n", 1);
}

static bool line_is(const char *line, size_t len, const char *s)
{
	return len == strlen(s) && !memcmp(line, s, len);
}

/*
 * The header, closed right after the events' '[', must be a whole JSON
 * object: then that '[' opens the top-level traceEvents, not one nested deeper.
 */
static int check_header(struct vec *doc)
{
	size_t n = doc->len;
	json_error_t jerr;
	json_t *head;
	int err = doc_put(doc, "]}", 2);

	if (err)
		return err;
	head = json_loadb(doc->data, doc->len, 0, &jerr);
	vec__truncate(doc, n);
	err = json_is_object(head) ? 0 : -EINVAL;
	json_decref(head);
	return err;
}

/* What reading a trace a line at a time has seen so far. */
struct line_scan {
	enum { PART_HEADER, PART_EVENTS, PART_TRAILER } part;
	uint64_t events;
	bool comma; /* the last event line ended with ',' */
	struct vec doc; /* the lines that are not events */
	struct file_scan fs;
};

static int scan_event(struct report *r, struct line_scan *ls, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *ev;
	int err;

	/* Commas between the events, none after the last, as the whole file needs. */
	if (ls->events && !ls->comma)
		return -EINVAL;
	ls->comma = line[len - 1] == ',';
	ev = json_loadb(line, len - ls->comma, 0, &jerr);
	if (!ev)
		return -EINVAL;
	err = read__event(r, ev, &ls->fs);
	json_decref(ev);
	ls->events++;
	return err;
}

static bool is_event_line(const char *line, size_t len)
{
	size_t n = strlen(TRACE_LINE_EVENT_PREFIX);

	return len >= n && !memcmp(line, TRACE_LINE_EVENT_PREFIX, n);
}

static int scan_line(struct report *r, struct line_scan *ls, const char *line, size_t len)
{
	int err;

	switch (ls->part) {
	case PART_HEADER:
		err = doc_add_line(&ls->doc, line, len);
		if (err || !line_is(line, len, TRACE_LINE_EVENTS_OPEN))
			return err;
		ls->part = PART_EVENTS;
		return check_header(&ls->doc);
	case PART_EVENTS:
		if (is_event_line(line, len))
			return scan_event(r, ls, line, len);
		if (!line_is(line, len, TRACE_LINE_EVENTS_CLOSE_MORE) &&
		    !line_is(line, len, TRACE_LINE_EVENTS_CLOSE))
			return -EINVAL;
		if (ls->events && ls->comma)
			return -EINVAL;
		ls->part = PART_TRAILER;
		return doc_add_line(&ls->doc, line, len);
	default:
		return doc_add_line(&ls->doc, line, len);
	}
}

/*
 * The top-level keys, read from the file less its events: what the whole
 * file gives, since jansson keeps the last of two equal keys and duplicates
 * (one could hide the events' array) send the file to the whole-file path.
 */
static int scan_end(struct report *r, struct line_scan *ls)
{
	const json_t *events;
	json_error_t jerr;
	json_t *root;
	int err;

	if (ls->part != PART_TRAILER)
		return -EINVAL;
	root = json_loadb(ls->doc.data, ls->doc.len, JSON_REJECT_DUPLICATES, &jerr);
	events = json_object_get(root, TRACE_KEY_EVENTS);
	if (!json_is_object(root) || !json_is_array(events) || json_array_size(events)) {
		json_decref(root);
		return -EINVAL;
	}
	err = read__file_end(r, root, &ls->fs);
	json_decref(root);
	return err;
}

int stream__read(struct report *r, FILE *f, const char *path)
{
	struct line_reader lr = { .f = f };
	struct line_scan ls = {};
	const char *line;
	size_t len;
	int err = 0, rc;

	vec__init(&ls.doc, 1);
	file_scan__init(&ls.fs, path);
	while (!err && (rc = line_next(&lr, &line, &len)) > 0)
		err = scan_line(r, &ls, line, len);
	if (!err && rc < 0)
		err = rc;
	if (!err)
		err = scan_end(r, &ls);
	if (!err)
		report_streamed_files++;
	file_scan__free(&ls.fs);
	vec__free(&ls.doc);
	free(lr.buf);
	return err;
}
