// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A flame graph as SVG, drawn from folded stacks the way flamegraph.pl
 * draws one: the root at the bottom, each frame as wide as the weight of the
 * stacks through it, children sorted by name, a tooltip (<title>) per frame
 * with its weight and share. Self-contained: no script, no font, no network.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report/folded.h"
#include "util/utf8.h"

#define FG_WIDTH 1200.0
#define FG_PAD 10.0
#define FG_FRAME 16.0
#define FG_TOP 34.0		/* room for the title */
#define FG_MIN_WIDTH 0.1	/* narrower frames are not drawn */
/*
 * One character of the 12px monospace font, at its widest: DejaVu Sans Mono
 * and Menlo advance 0.602 em (7.22 px), Liberation Mono and Courier 0.6 em;
 * flamegraph.pl's 0.59 em let long labels run past their box.
 */
#define FG_CHAR (12 * 0.62)

struct fg_node {
	const char *name;	/* into a line's stack (not NUL-ended: len) */
	size_t len;
	uint64_t weight;
	struct fg_node *child, *next;	/* children in the order of the sorted lines */
};

static struct fg_node *fg_child(struct fg_node *parent, const char *name, size_t len)
{
	struct fg_node *c, *last = NULL;

	for (c = parent->child; c; c = c->next) {
		if (c->len == len && !memcmp(c->name, name, len))
			return c;
		last = c;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->name = name;
	c->len = len;
	if (last)
		last->next = c;
	else
		parent->child = c;
	return c;
}

static int fg_add(struct fg_node *root, const struct folded_line *l)
{
	struct fg_node *n = root;
	const char *p = l->stack;

	root->weight += l->weight;
	while (*p) {
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		n = fg_child(n, p, len);
		if (!n)
			return -ENOMEM;
		n->weight += l->weight;
		p += len + (end ? 1 : 0);
	}
	return 0;
}

static void fg_free(struct fg_node *n)
{
	while (n) {
		struct fg_node *next = n->next;

		fg_free(n->child);
		free(n);
		n = next;
	}
}

static int fg_depth(const struct fg_node *n)
{
	int d = 0;

	for (; n; n = n->next) {
		int c = 1 + fg_depth(n->child);

		if (c > d)
			d = c;
	}
	return d;
}

static void xml_text(FILE *out, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		switch (s[i]) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default: fputc(s[i], out);
		}
	}
}

/* A warm colour per name, stable across graphs; Python frames ("file.py(line): f") greener. */
static void fg_colour(const char *name, size_t len, int rgb[3])
{
	uint64_t h = 0xcbf29ce484222325ULL;
	bool python = false;

	for (size_t i = 0; i < len; i++) {
		h = (h ^ (unsigned char)name[i]) * 0x100000001b3ULL;
		python |= i + 4 < len && !memcmp(name + i, ".py(", 4);
	}
	if (python) {
		rgb[0] = 80 + (int)(h % 55);
		rgb[1] = 170 + (int)((h >> 8) % 60);
		rgb[2] = 80 + (int)((h >> 16) % 55);
	} else {
		rgb[0] = 205 + (int)(h % 50);
		rgb[1] = 80 + (int)((h >> 8) % 150);
		rgb[2] = (int)((h >> 16) % 55);
	}
}

/* The bytes of s's first n characters (UTF-8; a broken byte counts as one). */
static size_t fg_prefix(const char *s, size_t len, size_t n)
{
	size_t at = 0;

	for (; n && at < len; n--) {
		int l = utf8__len((const unsigned char *)s + at);

		at += l && at + (size_t)l <= len ? (size_t)l : 1;
	}
	return at;
}

/* The label in fit characters, as flamegraph.pl cuts it: whole, or cut with "..". */
static void fg_label(FILE *out, const char *name, size_t len, size_t fit)
{
	if (fg_prefix(name, len, fit) == len) {
		xml_text(out, name, len);
		return;
	}
	xml_text(out, name, fg_prefix(name, len, fit - 2));
	fputs("..", out);
}

struct fg_draw {
	FILE *out;
	double scale;		/* pixels per unit of weight */
	uint64_t total;
	double height;
	const char *unit;
};

static void fg_frame(const struct fg_draw *d, const struct fg_node *n, double x, int depth)
{
	double w = (double)n->weight * d->scale, y = d->height - FG_PAD - FG_FRAME * (depth + 1);
	/* 3 px of room either side of the label. */
	size_t fit = w > 6 ? (size_t)((w - 6) / FG_CHAR) : 0;
	int rgb[3];

	if (w < FG_MIN_WIDTH)
		return;
	fg_colour(n->name, n->len, rgb);
	fputs("<g><title>", d->out);
	xml_text(d->out, n->name, n->len);
	fprintf(d->out, " (%" PRIu64 " %s, %.2f%%)</title>", n->weight, d->unit,
		100.0 * (double)n->weight / (double)d->total);
	fprintf(d->out,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		"fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/>",
		x, y, w, FG_FRAME - 1, rgb[0], rgb[1], rgb[2]);
	if (fit >= 3) {
		fprintf(d->out, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + FG_FRAME - 5);
		fg_label(d->out, n->name, n->len, fit);
		fputs("</text>", d->out);
	}
	fputs("</g>\n", d->out);
	for (const struct fg_node *c = n->child; c; c = c->next) {
		fg_frame(d, c, x, depth + 1);
		x += (double)c->weight * d->scale;
	}
}

int flamegraph__write(FILE *out, const struct folded_line *lines, size_t n, const char *title,
		      const char *unit)
{
	struct fg_node root = { .name = "all", .len = 3 };
	struct fg_draw d = { .out = out, .unit = unit };
	int err = 0;

	for (size_t i = 0; i < n && !err; i++)
		err = fg_add(&root, &lines[i]);
	if (err) {
		fg_free(root.child);
		return err;
	}
	d.total = root.weight ? root.weight : 1;
	d.scale = (FG_WIDTH - 2 * FG_PAD) / (double)d.total;
	d.height = FG_TOP + FG_PAD + FG_FRAME * (fg_depth(root.child) + 1);
	fprintf(out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text { font-family: monospace; font-size: 12px; fill: #000; }</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		"<text x=\"%.0f\" y=\"22\" text-anchor=\"middle\" style=\"font-size: 16px\">",
		FG_WIDTH, d.height, FG_WIDTH, d.height, FG_WIDTH / 2);
	xml_text(out, title, strlen(title));
	fputs("</text>\n", out);
	fg_frame(&d, &root, FG_PAD, 0);
	fputs("</svg>\n", out);
	fg_free(root.child);
	return ferror(out) ? -EIO : 0;
}
