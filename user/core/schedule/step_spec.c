// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "step.h"
#include "core/proc/elf_file.h"
#include "core/schedule/step_spec.h"


#define TORCH_EXIT \
	"_ZN5torch8autograd8profilerL24record_function_exit_newERKN3c1013intrusive_ptrINS1_20" \
	"PythonRecordFunctionENS2_6detail34intrusive_target_default_null_typeIS4_EEEE"
#define TORCH_ENTER_CXX11 \
	"_ZN5torch8autograd8profiler25record_function_enter_newERKNSt7__cxx1112basic_stringIcSt11" \
	"char_traitsIcESaIcEEERKSt8optionalIS7_E"
#define TORCH_ENTER_COW \
	"_ZN5torch8autograd8profiler25record_function_enter_newERKSsRKSt8optionalISsE"

/*
 * PyPI's wheels since 2.7 are built with C++11's std::string (2.15 tested);
 * those up to 2.6 with the old ABI's copy-on-write one (2.4.1 tested), which
 * mangles as Ss. The exit takes no string: one name in both.
 */
const struct step_torch_form step_torch_forms[STEP_TORCH_FORMS] = {
	{ TORCH_ENTER_CXX11, TORCH_STRING_CXX11, "C++11 std::string" },
	{ TORCH_ENTER_COW, TORCH_STRING_COW, "pre-C++11 std::string" },
};

const char *const step_torch_syms[STEP_TORCH_SYMS] = {
	TORCH_EXIT,
	TORCH_ENTER_CXX11,
	TORCH_ENTER_COW,
};

const struct step_torch_form *step_torch_pick(const uint64_t *found, uint64_t offs[2],
					      const char *names[2])
{
	offs[0] = 0;
	offs[1] = found[0];
	names[0] = NULL;
	names[1] = step_torch_syms[0];
	for (size_t i = 0; i < STEP_TORCH_FORMS; i++) {
		if (!found[1 + i])
			continue;
		offs[0] = found[1 + i];
		names[0] = step_torch_syms[1 + i];
		return &step_torch_forms[i];
	}
	return NULL;
}

/* torch/lib/libtorch_cpu.so: torch/version.py has __version__ = '2.15.0+cu132'. */
void step_torch_version(const char *lib, char *buf, size_t len)
{
	char path[PATH_MAX], line[256];
	const char *slash = strrchr(lib, '/');
	FILE *f = NULL;

	snprintf(buf, len, "unknown");
	if (slash && snprintf(path, sizeof(path), "%.*s/../version.py", (int)(slash - lib), lib) <
			     (int)sizeof(path))
		f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		char *q = strchr(line, '\''), *end = q ? strchr(q + 1, '\'') : NULL;

		if (strncmp(line, "__version__", 11) || !end)
			continue;
		snprintf(buf, len, "%.*s", (int)(end - q - 1), q + 1);
		break;
	}
	if (f)
		fclose(f);
}

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

bool step_spec__wants_object(const struct step_spec *s, const char *path)
{
	char want[PATH_MAX], have[PATH_MAX];
	const char *base = strrchr(path, '/');
	size_t n;

	if (s->kind == STEP_SYMBOL)
		return true;
	if (strchr(s->object, '/'))
		return realpath(s->object, want) && realpath(path, have) && !strcmp(want, have);
	/* A library name: "libcudart" matches libcudart.so.13, "libtrain.so" itself. */
	base = base ? base + 1 : path;
	n = strlen(s->object);
	return !strncmp(base, s->object, n) && (base[n] == '\0' || base[n] == '.');
}

struct usdt_find {
	const struct step_spec *spec;
	struct step_sites *out;
};

static int usdt_match(struct elf_file *ef, const struct elf_usdt *n, void *ctx)
{
	struct usdt_find *f = ctx;
	struct step_sites *out = f->out;

	if (strcmp(n->provider, f->spec->provider) || strcmp(n->name, f->spec->symbol))
		return 0;
	if (out->n == STEP_MAX_SITES)
		return 1;
	if (!elf_file__usdt_offsets(ef, n, &out->offsets[out->n], &out->ref_ctr[out->n]))
		out->n++;
	return 0;
}

int step_spec__find(const struct step_spec *s, const char *path, struct step_sites *out)
{
	struct usdt_find f = { .spec = s, .out = out };
	struct elf_file *ef;
	int n;

	memset(out, 0, sizeof(*out));
	if (s->kind == STEP_TORCH) {
		uint64_t found[STEP_TORCH_SYMS];
		const char *names[2];

		n = elf_func_offsets(path, step_torch_syms, STEP_TORCH_SYMS, found);
		if (n < 0)
			return n == -ENOEXEC ? 0 : n;
		step_torch_pick(found, out->offsets, names);
		out->n = out->offsets[0] && out->offsets[1] ? 2 : 0;
		return out->n == 2;
	}
	if (s->kind != STEP_USDT) {
		const char *name = s->symbol;

		n = elf_func_offsets(path, &name, 1, out->offsets);
		if (n < 0)
			return n == -ENOEXEC ? 0 : n;
		out->n = n > 0;
		return n > 0;
	}
	ef = elf_file__open(path);
	if (!ef)
		return errno == ENOEXEC ? 0 : -errno;
	elf_file__for_each_usdt(ef, usdt_match, &f);
	elf_file__close(ef);
	return out->n > 0;
}

/* Case-blind edit distance, UINT_MAX past 128 characters. */
static unsigned int edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned int row[129], prev;

	if (la > 128 || lb > 128)
		return UINT_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned int cur = row[j], sub = prev + (tolower(a[i - 1]) != tolower(b[j - 1]));
			unsigned int del = row[j] + 1, ins = row[j - 1] + 1;

			row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
			prev = cur;
		}
	}
	return row[lb];
}

/*
 * How far name is from the wanted one, UINT_MAX when it is not close: a typo
 * (an edit for every three characters, one at least), or one holding the
 * other whole, case aside (train_step in _Z10train_stepv, or step_fn in
 * train_step_fn), as git and perf choose what to suggest.
 */
static unsigned int closeness(const char *want, const char *name)
{
	size_t lw = strlen(want), ln = strlen(name);
	unsigned int d = edit_distance(want, name);
	unsigned int within = lw / 3 ?: 1;

	if (d <= within)
		return d;
	if (strcasestr(name, want) || (ln * 2 >= lw && ln >= 4 && strcasestr(want, name)))
		return d == UINT_MAX ? UINT_MAX - 1 : d;
	return UINT_MAX;
}

void step_spec__suggest_init(const struct step_spec *s, struct step_suggest *sg)
{
	memset(sg, 0, sizeof(*sg));
	if (s->kind == STEP_USDT)
		snprintf(sg->want, sizeof(sg->want), "%s:%s", s->provider, s->symbol);
	else
		snprintf(sg->want, sizeof(sg->want), "%s", s->symbol);
	for (int i = 0; i < STEP_SUGGEST_MAX; i++)
		sg->dist[i] = UINT_MAX;
}

void step_spec__consider(struct step_suggest *sg, const char *name)
{
	unsigned int d = closeness(sg->want, name);
	int slot = -1;

	if (d == UINT_MAX)
		return;
	for (int i = 0; i < STEP_SUGGEST_MAX; i++) {
		if (!strcmp(sg->best[i], name))
			return;
		if (d < sg->dist[i] && (slot < 0 || sg->dist[i] > sg->dist[slot]))
			slot = i;
	}
	if (slot < 0)
		return;
	sg->dist[slot] = d;
	snprintf(sg->best[slot], sizeof(sg->best[slot]), "%s", name);
}

static int usdt_consider(struct elf_file *ef, const struct elf_usdt *n, void *ctx)
{
	char full[256];

	(void)ef;
	snprintf(full, sizeof(full), "%s:%s", n->provider, n->name);
	step_spec__consider(ctx, full);
	return 0;
}

static int func_consider(const char *name, const GElf_Sym *sym, int rank, void *ctx)
{
	(void)sym;
	(void)rank;
	step_spec__consider(ctx, name);
	return 0;
}

void step_spec__suggest(const struct step_spec *s, const char *path, struct step_suggest *sg)
{
	struct elf_file *ef = elf_file__open(path);

	if (!ef)
		return;
	if (s->kind == STEP_USDT)
		elf_file__for_each_usdt(ef, usdt_consider, sg);
	else
		elf_file__for_each_func(ef, func_consider, sg);
	elf_file__close(ef);
}

void step_spec__suggest_str(const struct step_suggest *sg, char *buf, size_t len)
{
	bool used[STEP_SUGGEST_MAX] = { false };
	size_t at = 0;

	if (len)
		buf[0] = '\0';
	/* Closest first; a name that does not fit whole is left out, not cut. */
	for (int n = 0; n < STEP_SUGGEST_MAX; n++) {
		int best = -1;

		for (int i = 0; i < STEP_SUGGEST_MAX; i++)
			if (!used[i] && sg->best[i][0] && (best < 0 || sg->dist[i] < sg->dist[best]))
				best = i;
		if (best < 0)
			return;
		used[best] = true;
		if (at + strlen(sg->best[best]) + 2 >= len)
			return;
		at += snprintf(buf + at, len - at, "%s%s", at ? ", " : "", sg->best[best]);
	}
}
