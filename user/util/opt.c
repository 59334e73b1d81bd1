// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include "util/opt.h"

/* Options of one command, help aside: more than any command has. */
#define OPT_MAX 64
/* getopt's value of a long-only option: past every char. */
#define OPT_LONG_BASE 256
/* --help's text begins in this column; a longer option name puts it on the next line. */
#define HELP_COL 26

static const struct opt help_opt = { "help", 'h', NULL, NULL, "this text" };

/* getopt's view of a command's options, built from its tables. */
struct getopt_view {
	struct option longs[OPT_MAX + 2];
	const struct opt *opt[OPT_MAX];
	void *obj[OPT_MAX];
	char shorts[2 + 2 * OPT_MAX + 2];
	size_t n;
};

static int val_of(const struct opt *o, size_t i)
{
	return o->code ? o->code : OPT_LONG_BASE + (int)i;
}

/* A name or a code given twice is a bug in the tables: said, and nothing is parsed. */
static int check_unique(const struct getopt_view *v, const struct opt *o, const char *cmd)
{
	for (size_t i = 0; i < v->n; i++) {
		if (!strcmp(v->opt[i]->name, o->name) || (o->code && v->opt[i]->code == o->code)) {
			fprintf(stderr, "cuprobe %s: --%s is in the option tables twice: a bug, "
				"please report it\n", cmd, o->name);
			return -EINVAL;
		}
	}
	return 0;
}

static int add(struct getopt_view *v, const struct opt *o, void *obj, const char *cmd, char **s)
{
	if (v->n == OPT_MAX || check_unique(v, o, cmd))
		return -EINVAL;
	v->opt[v->n] = o;
	v->obj[v->n] = obj;
	v->longs[v->n] = (struct option){ o->name, o->arg ? required_argument : no_argument, NULL,
					  val_of(o, v->n) };
	if (o->code) {
		*(*s)++ = o->code;
		if (o->arg)
			*(*s)++ = ':';
	}
	v->n++;
	return 0;
}

static int build(const struct opt_cmd *c, struct getopt_view *v)
{
	char *s = v->shorts;
	int err = 0;

	memset(v, 0, sizeof(*v));
	if (c->stop_at_operand)
		*s++ = '+';
	*s++ = ':'; /* a missing value is ':', not '?' */
	for (size_t g = 0; !err && g < c->ngroups; g++)
		for (size_t i = 0; !err && i < c->groups[g].table->n; i++)
			err = add(v, &c->groups[g].table->opts[i], c->groups[g].obj, c->name, &s);
	if (!err)
		err = add(v, &help_opt, NULL, c->name, &s);
	*s = '\0';
	return err;
}

static size_t find_val(const struct getopt_view *v, int val)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (v->longs[i].val == val)
			break;
	return i;
}

void opt__error(const struct opt_cmd *c, const char *msg)
{
	fprintf(stderr, "cuprobe %s: %s (see cuprobe %s --help)\n", c->name, msg, c->name);
}

/* getopt names a short option in optopt, a long one only in argv. */
static void bad_option(const struct opt_cmd *c, const struct getopt_view *v, int ret, int argc,
		       char **argv)
{
	const char *arg = ret == ':' ? argv[argc - 1] : argv[optind - 1];
	size_t i = find_val(v, optopt);
	char msg[256];

	if (ret == ':' && !strncmp(arg, "--", 2))
		snprintf(msg, sizeof(msg), "missing %s for %s", c->missing ?: "value", arg);
	else if (ret == ':')
		snprintf(msg, sizeof(msg), "missing %s for -%c", c->missing ?: "value", optopt);
	else if (optopt && i < v->n && !v->opt[i]->arg)
		snprintf(msg, sizeof(msg), "--%s takes no value", v->opt[i]->name);
	else if (optopt)
		snprintf(msg, sizeof(msg), "unknown option -%c", optopt);
	else
		snprintf(msg, sizeof(msg), "unknown option %.*s", (int)strcspn(arg, "="), arg);
	opt__error(c, msg);
}

static int apply(const struct opt_cmd *c, const struct getopt_view *v, size_t i, const char *arg)
{
	char name[80], err[512] = "";
	int rc;

	if (v->opt[i] == &help_opt) {
		c->usage(stdout);
		return 1;
	}
	if (!v->obj[i])
		return 0;
	snprintf(name, sizeof(name), "--%s", v->opt[i]->name);
	rc = v->opt[i]->set(v->obj[i], name, arg, err, sizeof(err));
	if (rc)
		opt__error(c, err[0] ? err : strerror(-rc));
	return rc;
}

int opt__parse(const struct opt_cmd *c, int argc, char **argv, int *operand)
{
	struct getopt_view v;
	int ret, rc = build(c, &v);

	optind = 0; /* glibc: 0 starts afresh; 1 would keep a cluster's state from an earlier argv */
	opterr = 0;
	while (!rc && (ret = getopt_long(argc, argv, v.shorts, v.longs, NULL)) != -1) {
		size_t i = find_val(&v, ret);

		if (ret == '?' || ret == ':' || i == v.n) {
			bad_option(c, &v, ret, argc, argv);
			return -EINVAL;
		}
		rc = apply(c, &v, i, optarg);
	}
	*operand = optind;
	return rc;
}

/* "  -o, --output DIR" or "      --children", and the help's lines beside or below it. */
static void help_one(FILE *f, const struct opt *o)
{
	const char *h = o->help;
	int col;

	if (o->code)
		col = fprintf(f, "  -%c, --%s%s%s", o->code, o->name, o->arg ? " " : "",
			      o->arg ?: "");
	else
		col = fprintf(f, "      --%s%s%s", o->name, o->arg ? " " : "", o->arg ?: "");
	if (col >= HELP_COL) {
		fputc('\n', f);
		col = 0;
	}
	do {
		size_t len = strcspn(h, "\n");

		fprintf(f, "%*s%.*s\n", HELP_COL - col, "", (int)len, h);
		col = 0;
		h += len + (h[len] == '\n');
	} while (*h);
}

void opt__help(FILE *f, const struct opt_group *groups, size_t ngroups)
{
	for (size_t g = 0; g < ngroups; g++)
		for (size_t i = 0; i < groups[g].table->n; i++)
			help_one(f, &groups[g].table->opts[i]);
	help_one(f, &help_opt);
}

const struct opt *opt__find(const struct opt_table *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->opts[i].name, name))
			return &t->opts[i];
	return NULL;
}
