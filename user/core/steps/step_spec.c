// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/steps/step_spec.h"

static char *dup_n(const char *p, size_t n)
{
	return n ? strndup(p, n) : NULL;
}

/* torch | torch:PREFIX: the end of a record_function range named PREFIX... */
static int parse_torch(const char *spec, struct step_spec *s, char *err, size_t errlen)
{
	const char *prefix = spec[5] ? spec + 6 : STEP_TORCH_DEFAULT;

	if (spec[5] && !*prefix) {
		snprintf(err, errlen, "'%s': the record_function name prefix is empty; "
			 "plain 'torch' counts optimizer steps", spec);
		return -EINVAL;
	}
	if (strlen(prefix) > STEP_TORCH_PREFIX_MAX) {
		snprintf(err, errlen, "'%s': the record_function name prefix is longer than %d "
			 "bytes; a shorter one matches the same ranges", spec,
			 STEP_TORCH_PREFIX_MAX);
		return -EINVAL;
	}
	s->kind = STEP_TORCH;
	s->object = strdup(STEP_TORCH_LIB);
	s->symbol = strdup(prefix);
	return 0;
}

int step_spec__parse(const char *spec, struct step_spec *s, char *err, size_t errlen)
{
	const char *a = strchr(spec, ':');

	memset(s, 0, sizeof(*s));
	if (!strcmp(spec, "torch") || !strncmp(spec, "torch:", 6)) {
		int rc = parse_torch(spec, s, err, errlen);

		if (rc)
			return rc;
	} else if (!strncmp(spec, "usdt:", 5)) {
		const char *obj = spec + 5, *prov = strchr(obj, ':'), *name;

		name = prov ? strchr(prov + 1, ':') : NULL;
		if (!prov || !name || prov == obj || name == prov + 1 || !name[1] ||
		    strchr(name + 1, ':')) {
			snprintf(err, errlen, "'%s' is not usdt:OBJECT:PROVIDER:NAME", spec);
			return -EINVAL;
		}
		s->kind = STEP_USDT;
		s->object = dup_n(obj, prov - obj);
		s->provider = dup_n(prov + 1, name - prov - 1);
		s->symbol = strdup(name + 1);
	} else if (a) {
		if (a == spec || !a[1] || strchr(a + 1, ':')) {
			snprintf(err, errlen, "'%s' is not SYMBOL or OBJECT:SYMBOL", spec);
			return -EINVAL;
		}
		s->kind = STEP_OBJECT_SYMBOL;
		s->object = dup_n(spec, a - spec);
		s->symbol = strdup(a + 1);
	} else {
		if (!*spec) {
			snprintf(err, errlen, "the step symbol is empty");
			return -EINVAL;
		}
		s->kind = STEP_SYMBOL;
		s->symbol = strdup(spec);
	}
	if (!s->symbol || (s->kind != STEP_SYMBOL && !s->object) ||
	    (s->kind == STEP_USDT && !s->provider)) {
		step_spec__free(s);
		return -ENOMEM;
	}
	return 0;
}

void step_spec__free(struct step_spec *s)
{
	free(s->object);
	free(s->symbol);
	free(s->provider);
	memset(s, 0, sizeof(*s));
}

const char *step_spec__str(const struct step_spec *s)
{
	static char buf[PATH_MAX + 256];

	if (s->kind == STEP_USDT)
		snprintf(buf, sizeof(buf), "usdt:%s:%s:%s", s->object, s->provider, s->symbol);
	else if (s->kind == STEP_TORCH && !strcmp(s->symbol, STEP_TORCH_DEFAULT))
		snprintf(buf, sizeof(buf), "torch");
	else if (s->kind == STEP_TORCH)
		snprintf(buf, sizeof(buf), "torch:%s", s->symbol);
	else if (s->kind == STEP_OBJECT_SYMBOL)
		snprintf(buf, sizeof(buf), "%s:%s", s->object, s->symbol);
	else
		snprintf(buf, sizeof(buf), "%s", s->symbol);
	return buf;
}

bool step_object_is(const char *object, const char *path)
{
	char want[PATH_MAX], have[PATH_MAX];
	const char *base = strrchr(path, '/');
	size_t n;

	if (strchr(object, '/'))
		return realpath(object, want) && realpath(path, have) && !strcmp(want, have);
	/* A library name: "libcudart" matches libcudart.so.13, "libtrain.so" itself. */
	base = base ? base + 1 : path;
	n = strlen(object);
	return !strncmp(base, object, n) && (base[n] == '\0' || base[n] == '.');
}

bool step_spec__wants_object(const struct step_spec *s, const char *path)
{
	return s->kind == STEP_SYMBOL || step_object_is(s->object, path);
}
