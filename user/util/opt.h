/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Command-line options, each written once in a table (perf's
 * record_options): getopt's short string and struct option[], the --help
 * list and, for the daemon, the config file's keys all come from it. A
 * command's options are groups of tables (record's shared ones and its own),
 * each group with the object its setters set. Single-threaded, like getopt:
 * the command's main thread only.
 */
#ifndef UTIL_OPT_H
#define UTIL_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct opt {
	const char *name;	/* the long name, without "--"; a config file's key too */
	char code;		/* the short code ('o' for -o), or 0: the long name only */
	const char *arg;	/* the argument's name in --help ("DIR"); NULL: a flag */
	/*
	 * Sets the option in obj from arg (NULL for a flag); name is the option
	 * as the user wrote it ("--output" on the command line, "output" in a
	 * config file), for the message. 0, or -EINVAL (or -ENOMEM) with err
	 * saying what is wrong and how to fix it.
	 */
	int (*set)(void *obj, const char *name, const char *arg, char *err, size_t len);
	const char *help;	/* --help's text; '\n' starts another line */
};

/* Options in --help's order. */
struct opt_table {
	const struct opt *opts;
	size_t n;
};

#define OPT_TABLE(array) { (array), sizeof(array) / sizeof((array)[0]) }

/* A table and what its setters set: NULL, its options are taken but not applied. */
struct opt_group {
	const struct opt_table *table;
	void *obj;
};

struct opt_cmd {
	const char *name;		/* "record": messages begin "cuprobe record: " */
	const struct opt_group *groups;
	size_t ngroups;
	void (*usage)(FILE *f);		/* prints --help (opt__help gives its list) */
	bool stop_at_operand;		/* options end at the first operand: a command's stay its own */
	const char *missing;		/* "missing value for -o", unless another word is set */
};

/*
 * Parses argv (argv[0] is the command's name) into the groups' objects, in
 * order; -h/--help, which every command has, prints c->usage on stdout.
 * *operand is the index of the first operand. 0; 1 after --help; or -EINVAL
 * (or a setter's -ENOMEM) after one line on stderr that names the option,
 * the problem and the fix.
 */
int opt__parse(const struct opt_cmd *c, int argc, char **argv, int *operand);

/* One line on stderr: "cuprobe CMD: MSG (see cuprobe CMD --help)". */
void opt__error(const struct opt_cmd *c, const char *msg);

/* The option list of --help: each table's options in order, then -h, --help. */
void opt__help(FILE *f, const struct opt_group *groups, size_t ngroups);

/* The option of table named name, or NULL. */
const struct opt *opt__find(const struct opt_table *t, const char *name);

#endif /* UTIL_OPT_H */
