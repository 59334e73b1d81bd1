// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "core/proc/elf_file.h"
#include "core/steps/step_find.h"
#include "core/steps/step_source.h"
#include "core/steps/step_torch.h"
#include "util/log.h"

int step_find_torch(const struct step_spec *s, const char *path, struct step_sites *out)
{
	uint64_t found[STEP_TORCH_SYMS];
	const char *names[2];
	int n;

	(void)s;
	n = elf_func_offsets(path, step_torch_syms, STEP_TORCH_SYMS, found);
	if (n < 0)
		return n == -ENOEXEC ? 0 : n;
	step_torch_pick(found, out->offsets, names);
	out->n = out->offsets[0] && out->offsets[1] ? 2 : 0;
	return out->n == 2;
}

int step_find_function(const struct step_spec *s, const char *path, struct step_sites *out)
{
	const char *name = s->symbol;
	int n = elf_func_offsets(path, &name, 1, out->offsets);

	if (n < 0)
		return n == -ENOEXEC ? 0 : n;
	out->n = n > 0;
	return n > 0;
}

int step_find_usdt(const struct step_spec *s, const char *path, struct step_sites *out)
{
	int n = elf_usdt_sites(path, s->provider, s->symbol, out->offsets, out->ref_ctr,
			       STEP_MAX_SITES);

	if (n < 0)
		return n == -ENOEXEC ? 0 : n;
	out->n = n;
	return n > 0;
}

int step_spec__find(const struct step_spec *s, const char *path, struct step_sites *out)
{
	memset(out, 0, sizeof(*out));
	return step_source(s)->find(s, path, out);
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
	if (step_source(s)->notes)
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
	if (step_source(s)->notes)
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

/*
 * What lists the names --step searched in the object: readelf -n its USDT
 * notes, nm its .symtab (which has the static functions nm -D leaves out),
 * nm -D the .dynsym of a stripped one.
 */
static const char *list_command(const struct step_spec *st)
{
	struct elf_file *ef;
	bool symtab;

	if (step_source(st)->notes)
		return "readelf -n";
	ef = elf_file__open(st->object);
	if (!ef)
		return "nm -D";
	symtab = elf_file__has_table(ef, SHT_SYMTAB);
	elf_file__close(ef);
	return symtab ? "nm" : "nm -D";
}

int step_spec__check_file(const struct step_spec *st)
{
	struct step_suggest sg;
	struct step_sites sites;
	char close[512];
	int found;

	if (!st->object || !strchr(st->object, '/'))
		return 0;
	found = step_spec__find(st, st->object, &sites);
	if (found > 0)
		return 0;
	if (found < 0) {
		p_err("--step: cannot read %s: %s; check the path", st->object, strerror(-found));
		return found;
	}
	step_spec__suggest_init(st, &sg);
	step_spec__suggest(st, st->object, &sg);
	step_spec__suggest_str(&sg, close, sizeof(close));
	p_err("--step: %s not found in %s%s%s; check the name (%s %s)", step_spec__str(st),
	      st->object, close[0] ? "; close matches: " : "", close, list_command(st), st->object);
	return -ENOENT;
}
