// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cuprobe capture: asks a running daemon for the next N steps of a process
 * (POST /capture) and prints its answer, the trace's folder. Plain HTTP/1.1
 * on a socket, so that it needs no library and works from the static build.
 */
#include <errno.h>
#include <limits.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include "cmd/commands.h"
#include "util/opt.h"
#include "util/parse.h"

struct capture_opts {
	const char *addr;	/* --daemon, as given (the request's Host) */
	struct addr_port ap;
	uint64_t pid, steps;	/* 0: not given */
	const char *mode;	/* NULL: the daemon's choice */
};

static int set_daemon(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	struct capture_opts *o = obj;
	char why[256];

	if (parse_addr_port(arg, &o->ap, why, sizeof(why))) {
		snprintf(err, len, "%s: '%s' is %s", name, arg, why);
		return -EINVAL;
	}
	o->addr = arg;
	return 0;
}

static int set_pid(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	if (!parse_count(arg, 1, INT_MAX, &((struct capture_opts *)obj)->pid))
		return 0;
	snprintf(err, len, "%s: '%s' is not a process id: give a positive number", name, arg);
	return -EINVAL;
}

static int set_steps(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	if (!parse_count(arg, 1, 10000, &((struct capture_opts *)obj)->steps))
		return 0;
	snprintf(err, len, "%s: '%s' is not a number of steps from 1 to 10000", name, arg);
	return -EINVAL;
}

static int set_mode(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	if (!strcmp(arg, "bpf") || !strcmp(arg, "cupti")) {
		((struct capture_opts *)obj)->mode = arg;
		return 0;
	}
	snprintf(err, len, "%s: '%s' is not bpf or cupti", name, arg);
	return -EINVAL;
}

static const struct opt capture_opt_list[] = {
	{ "daemon", 'd', "ADDR:PORT", set_daemon, "the daemon's --listen (default 127.0.0.1:9464)" },
	{ "pid", 'p', "PID", set_pid, "a CUDA process the daemon samples" },
	{ "steps", 'n', "N", set_steps, "active steps to record (1 to 10000)" },
	{ "mode", 'm', "MODE", set_mode, "bpf or cupti (default: the daemon's choice)" },
};

static const struct opt_table capture_table = OPT_TABLE(capture_opt_list);

static void usage(FILE *f)
{
	const struct opt_group groups[] = { { &capture_table, NULL } };

	fputs("usage: cuprobe capture --daemon ADDR:PORT --pid PID --steps N [--mode bpf|cupti]\n"
	      "\n"
	      "Records the next N steps of PID (after the daemon's warmup) through a running\n"
	      "cuprobe daemon and prints where the trace went (JSON). Exits 0 once written.\n"
	      "\n", f);
	opt__help(f, groups, 1);
	fputs("\n"
	      "Example:\n"
	      "  cuprobe capture --daemon 127.0.0.1:9464 --pid 4242 --steps 5\n", f);
}

static int connect_to(const struct capture_opts *o)
{
	int fd = socket(o->ap.sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	if (fd >= 0 && !connect(fd, (const struct sockaddr *)&o->ap.sa, o->ap.salen))
		return fd;
	rc = -errno;
	if (fd >= 0)
		close(fd);
	fprintf(stderr, "cuprobe capture: cannot reach the daemon at %s: %s (is cuprobe daemon "
		"running, with this --listen?)\n", o->addr, strerror(-rc));
	return rc;
}

/* 0: go; 1: --help was printed; -EINVAL: a usage error, said. */
static int parse_args(struct capture_opts *o, int argc, char **argv)
{
	const struct opt_group groups[] = { { &capture_table, o } };
	const struct opt_cmd cmd = { .name = "capture", .groups = groups, .ngroups = 1,
				     .usage = usage };
	char why[256];
	int first, rc;

	memset(o, 0, sizeof(*o));
	o->addr = "127.0.0.1:9464";
	parse_addr_port(o->addr, &o->ap, why, sizeof(why));
	rc = opt__parse(&cmd, argc, argv, &first);
	if (rc)
		return rc;
	if (first < argc) {
		opt__error(&cmd, "unexpected argument: give the process with --pid PID");
		return -EINVAL;
	}
	if (!o->pid || !o->steps) {
		opt__error(&cmd, "give --pid PID and --steps N as numbers");
		return -EINVAL;
	}
	return 0;
}

/* Sends the request and reads the whole answer (the daemon closes the connection). */
static char *exchange(int fd, const char *req)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	ssize_t n;

	if (!buf || write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		free(buf);
		return NULL;
	}
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 2) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	buf[len] = '\0';
	return buf;
}

/*
 * A capture's answer is one JSON object naming the trace; anything else (a
 * proxy's page, another server on the port) is not taken for one. 0 or -EINVAL.
 */
static int check_answer(const char *addr, const char *body)
{
	static const char *const keys[] = { "pid", "dir", "trace", "result" };
	json_error_t jerr;
	json_t *j = json_loads(body, JSON_REJECT_DUPLICATES, &jerr);
	int rc = 0;

	if (!j || !json_is_object(j)) {
		fprintf(stderr, "cuprobe capture: the daemon at %s answered 200, but not with a JSON "
			"object (%s%.60s): is a cuprobe daemon listening there?\n", addr,
			j ? "" : jerr.text, j ? "not an object" : "");
		json_decref(j);
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]) && !rc; i++) {
		json_t *v = json_object_get(j, keys[i]);

		if (!v || (i == 0 ? !json_is_integer(v) : !json_is_string(v))) {
			fprintf(stderr, "cuprobe capture: the daemon at %s answered 200, but its JSON "
				"lacks \"%s\" (%s): is the daemon a different cuprobe version?\n",
				addr, keys[i], i == 0 ? "an integer" : "a string");
			rc = -EINVAL;
		}
	}
	json_decref(j);
	return rc;
}

int capture_main(int argc, char **argv)
{
	struct capture_opts o;
	char req[512], *ans;
	const char *body;
	int fd, status = 0, rc = parse_args(&o, argc, argv);

	if (rc)
		return rc > 0 ? 0 : 2;
	fd = connect_to(&o);
	if (fd < 0)
		return 1;
	snprintf(req, sizeof(req), "POST /capture?pid=%llu&steps=%llu%s%s HTTP/1.1\r\nHost: %s\r\n"
		 "Content-Length: 0\r\nConnection: close\r\n\r\n", (unsigned long long)o.pid,
		 (unsigned long long)o.steps, o.mode ? "&mode=" : "", o.mode ? o.mode : "", o.addr);
	ans = exchange(fd, req);
	close(fd);
	if (!ans || sscanf(ans, "HTTP/1.%*d %d", &status) != 1) {
		fprintf(stderr, "cuprobe capture: no answer from the daemon at %s\n", o.addr);
		free(ans);
		return 1;
	}
	body = strstr(ans, "\r\n\r\n");
	body = body ? body + 4 : "";
	if (status == 200 && check_answer(o.addr, body)) {
		free(ans);
		return 1;
	}
	fputs(body, status == 200 ? stdout : stderr);
	free(ans);
	return status == 200 ? 0 : 1;
}
