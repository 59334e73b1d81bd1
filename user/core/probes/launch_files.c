// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "core/probes/launch_files.h"
#include "util/vec.h"

struct launch_files {
	struct vec v; /* struct launch_file */
};

struct launch_files *launch_files__new(void)
{
	struct launch_files *lf = calloc(1, sizeof(*lf));

	if (lf)
		lf->v = VEC_INIT(struct launch_file);
	return lf;
}

void launch_files__free(struct launch_files *lf)
{
	if (!lf)
		return;
	for (size_t i = 0; i < lf->v.len; i++)
		free(vec_at(&lf->v, struct launch_file, i)->path);
	vec__free(&lf->v);
	free(lf);
}

int launch_files__add(struct launch_files *lf, const char *path, uint64_t dev, uint64_t ino)
{
	struct launch_file *f;
	char *p;

	for (size_t i = 0; i < lf->v.len; i++) {
		f = vec_at(&lf->v, struct launch_file, i);
		if (f->dev == dev && f->ino == ino)
			return 0;
	}
	if (lf->v.len >= LAUNCH_FILES_MAX)
		return 0;
	p = strdup(path);
	f = p ? vec__push(&lf->v) : NULL;
	if (!f) {
		free(p);
		return -ENOMEM;
	}
	*f = (struct launch_file){ .path = p, .dev = dev, .ino = ino };
	return 0;
}

size_t launch_files__count(const struct launch_files *lf)
{
	return lf ? lf->v.len : 0;
}

const struct launch_file *launch_files__at(const struct launch_files *lf, size_t i)
{
	return vec_at(&lf->v, struct launch_file, i);
}
