// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cuprobe capture: asks a running daemon for the next N steps of a process
 * (POST /capture) and prints its answer, the trace's folder. HTTP/1.1 of
 * its own over a socket or TLS (capture_conn.h), so that it needs no HTTP
 * library and works from the static build; the options are curl's.
 */
#include <errno.h>
#include <limits.h>
#include <jansson.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd/capture.h"
#include "cmd/capture_conn.h"
#include "cmd/commands.h"
#include "cmd/fleet.h"
#include "util/clock.h"
#include "util/opt.h"
#include "util/parse.h"
#include "util/safe_file.h"

/* Checked when the form is known: one ADDR for --pid, a list for --job (fleet.c). */
static int set_daemon(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	if (!*arg) {
		snprintf(err, len, "%s: give [https://]ADDR:PORT", name);
		return -EINVAL;
	}
	((struct capture_opts *)obj)->daemons = arg;
	return 0;
}

const char *capture__no_scheme(const char *arg)
{
	return !strncmp(arg, "https://", 8) ? arg + 8 : !strncmp(arg, "http://", 7) ? arg + 7 : arg;
}

int capture__scheme(const struct capture_opts *o, const char *arg, enum capture_from from,
		    const struct addr_port *ap, struct capture_scheme *s, char *err, size_t len)
{
	bool https = !strncmp(arg, "https://", 8), http = !strncmp(arg, "http://", 7);
	bool secure = o->cacert || o->cert || o->user;

	*s = (struct capture_scheme){ 0 };
	if (from == CAPTURE_FROM_PROMETHEUS)
		return 0;
	/* Whoever can add a target writes its label: its http:// never undoes TLS. */
	s->tls = https || (secure && (!http || from == CAPTURE_FROM_LABEL));
	s->creds = o->user;
	if (s->tls)
		return 0;
	if (o->cacert || o->cert) {
		snprintf(err, len, "--daemon %s: --cacert and --cert are for TLS, and http:// is "
			 "plain: give https://%s (or no scheme)", arg, capture__no_scheme(arg));
		return -EINVAL;
	}
	if (o->user && !addr_is_loopback(ap)) {
		snprintf(err, len, "--daemon %s: --user's password would cross the network in "
			 "clear: give https://%s (a plain http:// address takes a password on "
			 "loopback only)", arg, capture__no_scheme(arg));
		return -EINVAL;
	}
	return 0;
}

/* --pid's one daemon: a numeric address, as --listen takes it, under capture__scheme(). */
static int one_daemon(const struct opt_cmd *cmd, struct capture_opts *o)
{
	const char *arg = o->daemons ? o->daemons : "127.0.0.1:9464";
	struct capture_scheme sch;
	char why[256];

	o->addr = capture__no_scheme(arg);
	if (strchr(arg, ',')) {
		opt__error(cmd, "--daemon: a list of daemons is for --job JOB; --pid takes one");
		return -EINVAL;
	}
	if (parse_addr_port(o->addr, &o->ap, why, sizeof(why))) {
		fprintf(stderr, "cuprobe capture: --daemon: '%s' is %s, with https:// before it "
			"for TLS\n", arg, why);
		return -EINVAL;
	}
	if (capture__scheme(o, arg, CAPTURE_FROM_USER, &o->ap, &sch, why, sizeof(why))) {
		opt__error(cmd, why);
		return -EINVAL;
	}
	o->tls = sch.tls;
	o->creds = sch.creds;
	return 0;
}

static int set_job(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	if (!*arg || strlen(arg) >= 128) {
		snprintf(err, len, "%s: give a job's name (1 to 127 bytes), as GET /targets shows it",
			 name);
		return -EINVAL;
	}
	((struct capture_opts *)obj)->job = arg;
	return 0;
}

static int set_output(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	if (!*arg) {
		snprintf(err, len, "%s: give a folder", name);
		return -EINVAL;
	}
	((struct capture_opts *)obj)->output = arg;
	return 0;
}

static int set_prometheus(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	if (strncmp(arg, "http://", 7) || !arg[7]) {
		snprintf(err, len, "%s: '%s' is not http://HOST:PORT[/PATH] (a Prometheus server)",
			 name, arg);
		return -EINVAL;
	}
	((struct capture_opts *)obj)->prometheus = arg;
	return 0;
}

static int set_seconds(double *dst, double lo, const char *name, const char *arg, char *err,
		       size_t len)
{
	if (!parse_duration(arg, PARSE_SECONDS, lo, 86400, dst))
		return 0;
	snprintf(err, len, "%s: '%s' is not a duration from %g s to a day (e.g. 120, 2m)", name,
		 arg, lo);
	return -EINVAL;
}

static int set_timeout(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	return set_seconds(&((struct capture_opts *)obj)->timeout_s, 1, name, arg, err, len);
}

static int set_margin(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	return set_seconds(&((struct capture_opts *)obj)->margin_s, 0, name, arg, err, len);
}

/* A file option: kept as given, read when the request is made. */
static int set_file(const char **dst, const char *name, const char *arg, char *err, size_t len)
{
	if (!*arg) {
		snprintf(err, len, "%s: give a file", name);
		return -EINVAL;
	}
	*dst = arg;
	return 0;
}

static int set_cacert(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	return set_file(&((struct capture_opts *)obj)->cacert, name, arg, err, len);
}

static int set_cert(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	return set_file(&((struct capture_opts *)obj)->cert, name, arg, err, len);
}

static int set_key(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	return set_file(&((struct capture_opts *)obj)->key, name, arg, err, len);
}

static int set_password_file(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	return set_file(&((struct capture_opts *)obj)->password_file, name, arg, err, len);
}

static int set_user(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	/* curl's USER:PASSWORD would put the password where ps(1) shows it. */
	if (!*arg || strchr(arg, ':')) {
		snprintf(err, len, "%s: give a user name only (no ':'): the password comes from "
			 "--password-file FILE, never the command line", name);
		return -EINVAL;
	}
	((struct capture_opts *)obj)->user = arg;
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
	{ "daemon", 'd', "[https://]ADDR:PORT", set_daemon,
	  "the daemon's --listen (default 127.0.0.1:9464);\nhttps:// when its web-config has TLS,"
	  "\nas is no scheme with --cacert, --cert or --user;\nhttp:// takes a password on "
	  "loopback only;\nwith --job a comma list, a DNS name standing\nfor every address it has" },
	{ "pid", 'p', "PID", set_pid, "a CUDA process the daemon samples" },
	{ "job", 'j', "JOB", set_job, "every rank of JOB, on every daemon (not --pid)" },
	{ "output", 'o', "DIR", set_output, "--job: traces go to DIR/JOB/run_<k>/" },
	{ "timeout", 't', "SECONDS", set_timeout,
	  "the longest wait, all told (default 120;\n--pid: 130, past the daemon's own 120)" },
	{ "margin", 0, "SECONDS", set_margin,
	  "--job: the first step comes this long after\nthe ranks' latest (default 2)" },
	{ "prometheus", 0, "URL", set_prometheus,
	  "--job: find the daemons through this Prometheus\nserver (http://HOST:PORT)" },
	{ "steps", 'n', "N", set_steps, "active steps to record (1 to 10000)" },
	{ "mode", 'm', "MODE", set_mode, "bpf or cupti (default: the daemon's choice)" },
	{ "cacert", 0, "FILE", set_cacert,
	  "PEM CA certificates the daemon's must chain to\n(default: the system's)" },
	{ "cert", 0, "FILE", set_cert, "a client certificate (PEM) for the daemon" },
	{ "key", 0, "FILE", set_key, "its key (PEM; default: in --cert's file)" },
	{ "user", 'u', "USER", set_user, "basic auth as USER (with --password-file)" },
	{ "password-file", 0, "FILE", set_password_file,
	  "USER's password: the file's first line (a file\nof yours, chmod 600)" },
};

static const struct opt_table capture_table = OPT_TABLE(capture_opt_list);

static void usage(FILE *f)
{
	const struct opt_group groups[] = { { &capture_table, NULL } };

	fputs("usage: cuprobe capture --daemon ADDR:PORT --pid PID --steps N [--mode bpf|cupti]\n"
	      "                       [--timeout SECONDS]\n"
	      "       cuprobe capture --job JOB --steps N -o DIR (--daemon ADDR[,ADDR...] |\n"
	      "                       --prometheus URL) [--timeout SECONDS] [--margin SECONDS]\n"
	      "\n"
	      "Records the next N steps of PID (after the daemon's warmup) through a running\n"
	      "cuprobe daemon and prints where the trace went (JSON). Exits 0 once written.\n"
	      "With --job, records the same N steps of every rank of JOB on every daemon and\n"
	      "fetches the traces into DIR/JOB/run_<k>/ with capture.json; exits 0 when every\n"
	      "rank's trace was written, 1 when some were not (each said by host, rank and\n"
	      "pid), 2 on bad usage.\n"
	      "The password goes only over TLS whose certificate verified, or plain to a\n"
	      "loopback address given as http://. An answer is at most 64 MiB, a trace 1 GiB;\n"
	      "redirects are not followed.\n"
	      "\n", f);
	opt__help(f, groups, 1);
	fputs("\n"
	      "Examples:\n"
	      "  cuprobe capture --daemon 127.0.0.1:9464 --pid 4242 --steps 5\n"
	      "  cuprobe capture --daemon https://10.0.0.7:9464 --cacert ca.crt --cert me.crt \\\n"
	      "      --key me.key --pid 4242 --steps 5\n"
	      "  cuprobe capture --daemon https://10.0.0.7:9464 --cacert ca.crt --user ops \\\n"
	      "      --password-file ~/.cuprobe-pass --pid 4242 --steps 5\n"
	      "  cuprobe capture --job train-7 -n 3 -o traces --daemon https://ranks:9464 \\\n"
	      "      --cacert ca.crt --user ops --password-file ~/.cuprobe-pass\n"
	      "  cuprobe capture --job train-7 -n 3 -o traces --prometheus http://prom:9090 \\\n"
	      "      --cacert ca.crt --user ops --password-file ~/.cuprobe-pass\n", f);
}

/* What holds across options (each address's scheme: capture__scheme()). */
static int check_opts(const struct opt_cmd *cmd, const struct capture_opts *o)
{
	if (o->key && !o->cert) {
		opt__error(cmd, "--key is the key of --cert FILE: give both");
		return -EINVAL;
	}
	if (!o->user != !o->password_file) {
		opt__error(cmd, "give --user USER with --password-file FILE (both or neither)");
		return -EINVAL;
	}
	return 0;
}

/* --job's own: the job's steps, where they go, where the daemons are (one of two ways). */
static int check_job(const struct opt_cmd *cmd, const struct capture_opts *o)
{
	if (o->pid) {
		opt__error(cmd, "give --pid PID or --job JOB, not both");
		return -EINVAL;
	}
	if (!o->steps || !o->output) {
		opt__error(cmd, "--job JOB needs --steps N and -o DIR");
		return -EINVAL;
	}
	if (!o->daemons == !o->prometheus) {
		opt__error(cmd, "--job JOB finds its daemons through --daemon ADDR[,ADDR...] or "
			   "--prometheus URL: give one of them");
		return -EINVAL;
	}
	return 0;
}

/* 0: go; 1: --help was printed; -EINVAL: a usage error, said. */
static int parse_args(struct capture_opts *o, int argc, char **argv)
{
	const struct opt_group groups[] = { { &capture_table, o } };
	const struct opt_cmd cmd = { .name = "capture", .groups = groups, .ngroups = 1,
				     .usage = usage };
	int first, rc;

	memset(o, 0, sizeof(*o));
	o->margin_s = 2;
	rc = opt__parse(&cmd, argc, argv, &first);
	if (rc)
		return rc;
	/* --pid's: past the daemon's own --capture-timeout (120), so that its 504 comes first. */
	if (!o->timeout_s)
		o->timeout_s = o->job ? 120 : 130;
	if (first < argc) {
		opt__error(&cmd, "unexpected argument: give the process with --pid PID");
		return -EINVAL;
	}
	if (o->job)
		return check_job(&cmd, o) ?: check_opts(&cmd, o);
	if (o->output || o->prometheus) {
		opt__error(&cmd, "-o and --prometheus are for --job JOB");
		return -EINVAL;
	}
	if (!o->pid || !o->steps) {
		opt__error(&cmd, "give --pid PID and --steps N as numbers");
		return -EINVAL;
	}
	return one_daemon(&cmd, o) ?: check_opts(&cmd, o);
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

int capture__auth_header(const struct capture_opts *o, char *out, size_t len)
{
	char pass[1024] = "", why[512], *b64;
	FILE *f;
	int fd;

	out[0] = '\0';
	if (!o->user)
		return 0;
	/* A secret, as ssh's keys: the user's (or root's) own, readable by no one else. */
	fd = safe_file__open_trusted(o->password_file, true, why, sizeof(why));
	f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (fd >= 0 && !f)
		close(fd);
	if (!f || !fgets(pass, sizeof(pass), f) || !(pass[strcspn(pass, "\r\n")] = '\0', *pass)) {
		fprintf(stderr, "cuprobe capture: --password-file %s: %s\n", o->password_file,
			f ? "no password on its first line" : fd < 0 ? why : strerror(errno));
		if (f)
			fclose(f);
		return -EINVAL;
	}
	fclose(f);
	b64 = capture_conn__basic(o->user, pass);
	explicit_bzero(pass, sizeof(pass));
	if (!b64 || (size_t)snprintf(out, len, "Authorization: Basic %s\r\n", b64) >= len) {
		free(b64);
		fprintf(stderr, "cuprobe capture: the user and password are too long\n");
		return -EINVAL;
	}
	free(b64);
	return 0;
}

/* POST /capture of --pid, through --job's one bounded reader: 0 with a, or -errno (said). */
static int ask(const struct capture_opts *o, struct fleet_answer *a)
{
	struct fleet_daemon d = { .ap = o->ap, .tls = o->tls, .creds = o->creds };
	uint64_t deadline = clock_mono_ns() + (uint64_t)(o->timeout_s * 1e9);
	char target[256], auth[3072];
	int err;

	snprintf(d.addr, sizeof(d.addr), "%s", o->addr);
	if (capture__auth_header(o, auth, sizeof(auth)))
		return -EINVAL;
	snprintf(target, sizeof(target), "/capture?pid=%llu&steps=%llu%s%s",
		 (unsigned long long)o->pid, (unsigned long long)o->steps, o->mode ? "&mode=" : "",
		 o->mode ? o->mode : "");
	err = fleet__http(o, &d, auth, "POST", target, deadline, -1, a);
	explicit_bzero(auth, sizeof(auth));
	if (err == -EHOSTUNREACH)
		fprintf(stderr, "cuprobe capture: %s\n", a->err);
	else if (err)
		fprintf(stderr, "cuprobe capture: the daemon at %s: %s%s\n", o->addr, a->err,
			o->tls || err != -EPROTO ? "" :
			" (if its web-config has TLS: --daemon https://ADDR:PORT)");
	return err;
}

int capture_main(int argc, char **argv)
{
	struct fleet_answer a;
	struct capture_opts o;
	char said[768];
	int rc = parse_args(&o, argc, argv);

	if (rc)
		return rc > 0 ? 0 : 2;
	/* A daemon that closes the connection is an error said, not a silent death (curl's way). */
	signal(SIGPIPE, SIG_IGN);
	if (o.job)
		return fleet__run(&o);
	if (ask(&o, &a)) {
		free(a.body);
		return 1;
	}
	rc = a.status == 200 ? check_answer(o.addr, a.body) : -EINVAL;
	if (!rc) {
		fputs(a.body, stdout);
	} else if (a.status != 200) {
		fleet__said(&a, said, sizeof(said));
		fprintf(stderr, "cuprobe capture: the daemon at %s: %s\n", o.addr, said);
	}
	free(a.body);
	return rc ? 1 : 0;
}
