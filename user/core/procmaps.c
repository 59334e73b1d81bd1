// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include "procmaps.h"

static int push_line(struct procmaps *m, const char *line, size_t *cap)
{
	unsigned long long start, end, off, ino;
	unsigned int maj, min;
	char perms[8];
	int pos = 0;
	struct map_entry *e;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu%n", &start, &end, perms, &off, &maj,
		   &min, &ino, &pos) < 7)
		return -EINVAL;
	/* Spaces up to the path, but not past the end of the line. */
	while (line[pos] == ' ' || line[pos] == '\t')
		pos++;
	if (m->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct map_entry *v = realloc(m->v, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		m->v = v;
		*cap = ncap;
	}
	e = &m->v[m->n];
	memset(e, 0, sizeof(*e));
	e->start = start;
	e->end = end;
	e->offset = off;
	e->inode = ino;
	e->dev = makedev(maj, min);
	e->exec = perms[2] == 'x';
	if (pos > 0 && line[pos] && line[pos] != '\n') {
		size_t len = strcspn(line + pos, "\n");

		e->path = strndup(line + pos, len);
		if (!e->path)
			return -ENOMEM;
	}
	m->n++;
	return 0;
}

int procmaps__parse(const char *text, struct procmaps *out)
{
	size_t cap = 0;
	const char *p = text;
	int err;

	memset(out, 0, sizeof(*out));
	while (*p) {
		err = push_line(out, p, &cap);
		if (err) {
			procmaps__free(out);
			return err;
		}
		p += strcspn(p, "\n");
		if (*p)
			p++;
	}
	return 0;
}

int procmaps__read(pid_t pid, struct procmaps *out)
{
	char path[64], *line = NULL;
	size_t cap = 0, lcap = 0;
	FILE *f;
	int err = 0;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (getline(&line, &lcap, f) > 0) {
		err = push_line(out, line, &cap);
		if (err)
			break;
	}
	free(line);
	fclose(f);
	if (!err && out->n == 0)
		err = -ESRCH; /* a zombie has no mappings */
	if (err)
		procmaps__free(out);
	return err;
}

void procmaps__free(struct procmaps *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	m->v = NULL;
	m->n = 0;
}

const struct map_entry *procmaps__find(const struct procmaps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	/* The kernel lists mappings in address order. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < m->v[mid].start)
			hi = mid;
		else if (addr >= m->v[mid].end)
			lo = mid + 1;
		else
			return &m->v[mid];
	}
	return NULL;
}
