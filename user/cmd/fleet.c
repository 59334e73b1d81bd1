// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cuprobe capture --job: one capture across every rank of a job on every
 * host. The daemons are asked for the job's ranks (GET /targets?job=), a
 * first step S is chosen past every rank's current one, every daemon records
 * S..S+N-1 of its ranks (POST /capture?job=&start_step=S), and each rank's
 * trace is fetched (GET /trace) into OUT/<job>/run_<k>/, and the summary goes
 * beside that folder, OUT/<job>/run_<k>.capture.json: HTA takes every .json
 * file of a folder for a trace (one without a rank for rank 0's), so the
 * folder holds the ranks' traces alone and loads as the job.
 * One worker thread per daemon and phase, each writing its own slot; the main
 * thread joins them and never waits past --timeout.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "cmd/capture.h"
#include "cmd/fleet.h"
#include "trace/capture_result.h"
#include "util/clock.h"
#include "util/json_writer.h"
#include "util/safe_file.h"

#define NS 1000000000ull

/* A rank as its daemon reported it, then what became of it. */
struct frank {
	size_t d;		/* its daemon */
	long long pid, step;
	int rank, world;	/* -1: unknown */
	double sps;
	bool scan;		/* found by the /proc scan: its steps count from then */
	char host[256];
	char result[32], why[640], trace[4096], file[512];
	long long first, last;
	unsigned long long launches;
};

struct fleet {
	const struct capture_opts *o;
	char auth[3072];
	uint64_t deadline;
	struct fleet_daemon *dv;
	size_t nd;
	struct fleet_answer *targets, *caps;	/* per daemon */
	size_t answered;	/* daemons whose GET /targets was a list */
	struct frank *rk;
	size_t nr;
	long long start;
	int outfd;		/* OUT/<job>/run_<k> */
	int jobfd;		/* OUT/<job>, where run_<k>.capture.json goes */
	char run[32];		/* "run_<k>" */
	char dir[4096];
};

struct work {
	struct fleet *f;
	size_t i;
	int phase;		/* 0 targets, 1 capture, 2 traces */
	pthread_t th;
	bool started;		/* the main thread's: th is to be joined */
};

static void fetch_traces(struct fleet *f, size_t d);

static void *worker(void *arg)
{
	struct work *w = arg;
	struct fleet *f = w->f;
	char job[400], target[1024];
	long long left;

	fleet__urlenc(f->o->job, job, sizeof(job));
	if (w->phase == 0) {
		snprintf(target, sizeof(target), "/targets?job=%s", job);
		fleet__http(f->o, &f->dv[w->i], f->auth, "GET", target, f->deadline, -1,
			    &f->targets[w->i]);
	} else if (w->phase == 1) {
		/* The daemon gives up a little before we do, so that its answer still comes. */
		left = (long long)((f->deadline - clock_mono_ns()) / NS) - 1;
		snprintf(target, sizeof(target), "/capture?job=%s&steps=%llu&start_step=%lld"
			 "&timeout=%lld%s%s", job, (unsigned long long)f->o->steps, f->start,
			 left < 1 ? 1 : left, f->o->mode ? "&mode=" : "", f->o->mode ? f->o->mode : "");
		fleet__http(f->o, &f->dv[w->i], f->auth, "POST", target, f->deadline, -1,
			    &f->caps[w->i]);
	} else {
		fetch_traces(f, w->i);
	}
	return NULL;
}

/* Runs phase on every daemon at once, and waits for all (each bounded by the deadline). */
static void each_daemon(struct fleet *f, int phase)
{
	struct work *w = calloc(f->nd, sizeof(*w));

	if (!w)
		return;
	for (size_t i = 0; i < f->nd; i++) {
		w[i] = (struct work){ .f = f, .i = i, .phase = phase };
		w[i].started = !pthread_create(&w[i].th, NULL, worker, &w[i]);
		if (!w[i].started)
			worker(&w[i]);
	}
	for (size_t i = 0; i < f->nd; i++)
		if (w[i].started)
			pthread_join(w[i].th, NULL);
	free(w);
}

static int int_or(json_t *v, int dflt)
{
	return json_is_integer(v) ? (int)json_integer_value(v) : dflt;
}

/* The ranks daemon d reported; a daemon that did not answer is said. */
static int add_ranks(struct fleet *f, size_t d)
{
	const struct fleet_answer *a = &f->targets[d];
	json_t *j, *t, *v;
	size_t i;

	char said[768];

	if (a->status != 200) {
		fleet__said(a, said, sizeof(said));
		fprintf(stderr, "cuprobe capture: daemon %s: %s%s\n", f->dv[d].addr,
			a->status ? "GET /targets: " : "", said);
		return 0;
	}
	j = json_loads(a->body, 0, NULL);
	t = json_object_get(j, "targets");
	if (!json_is_array(t)) {
		fprintf(stderr, "cuprobe capture: daemon %s: GET /targets: its answer is not JSON "
			"with a \"targets\" list (is a cuprobe daemon listening there?)\n",
			f->dv[d].addr);
		json_decref(j);
		return 0;
	}
	f->answered++;
	json_array_foreach(t, i, v) {
		struct frank *r, *nr = realloc(f->rk, (f->nr + 1) * sizeof(*nr));

		if (!nr) {
			json_decref(j);
			return -ENOMEM;
		}
		f->rk = nr;
		r = memset(&nr[f->nr++], 0, sizeof(*r));
		r->d = d;
		r->pid = json_integer_value(json_object_get(v, "pid"));
		r->rank = int_or(json_object_get(v, "rank"), -1);
		r->world = int_or(json_object_get(v, "world_size"), -1);
		r->step = json_integer_value(json_object_get(v, "step"));
		r->sps = json_number_value(json_object_get(v, "steps_per_second"));
		r->scan = !strcmp(json_string_value(json_object_get(v, "found")) ?: "", "scan");
		snprintf(r->host, sizeof(r->host), "%.255s",
			 json_string_value(json_object_get(v, "host")) ?: f->dv[d].addr);
		snprintf(r->result, sizeof(r->result), "no_answer");
		r->first = r->last = -1;
	}
	json_decref(j);
	return 0;
}

/* S: past every rank's step by its steps/s times the margin, at least 2 steps. */
static long long choose_start(const struct fleet *f)
{
	long long s = 0;

	for (size_t i = 0; i < f->nr; i++) {
		const struct frank *r = &f->rk[i];
		long long ahead = (long long)ceil(r->sps * f->o->margin_s);

		if (ahead < 2)
			ahead = 2;
		if (r->step + ahead > s)
			s = r->step + ahead;
	}
	return s;
}

/* The rank of daemon d with pid, or NULL. */
static struct frank *rank_of(struct fleet *f, size_t d, long long pid)
{
	for (size_t i = 0; i < f->nr; i++)
		if (f->rk[i].d == d && f->rk[i].pid == pid)
			return &f->rk[i];
	return NULL;
}

/* What daemon d answered for each of its ranks; a daemon without an answer marks them all. */
static void take_capture(struct fleet *f, size_t d)
{
	const struct fleet_answer *a = &f->caps[d];
	json_t *j, *v;
	size_t i;

	char said[768];

	if (a->status != 200) {
		fleet__said(a, said, sizeof(said));
		for (size_t k = 0; k < f->nr; k++) {
			if (f->rk[k].d != d)
				continue;
			snprintf(f->rk[k].result, sizeof(f->rk[k].result), "%s",
				 a->status ? "refused" : "no_answer");
			snprintf(f->rk[k].why, sizeof(f->rk[k].why), "daemon %.200s: %.400s",
				 f->dv[d].addr, said);
		}
		return;
	}
	j = json_loads(a->body, 0, NULL);
	json_array_foreach(json_object_get(j, "ranks"), i, v) {
		struct frank *r = rank_of(f, d, json_integer_value(json_object_get(v, "pid")));

		if (!r)
			continue;
		snprintf(r->result, sizeof(r->result), "%s",
			 json_string_value(json_object_get(v, CAPTURE_RESULT_KEY_RESULT)) ?: "error");
		snprintf(r->why, sizeof(r->why), "%s",
			 json_string_value(json_object_get(v, CAPTURE_RESULT_KEY_WHY)) ?: "");
		snprintf(r->trace, sizeof(r->trace), "%s",
			 json_string_value(json_object_get(v, "trace")) ?: "");
		r->first = json_integer_value(json_object_get(v, CAPTURE_RESULT_KEY_FIRST_STEP));
		r->last = json_integer_value(json_object_get(v, CAPTURE_RESULT_KEY_LAST_STEP));
		r->launches = (unsigned long long)json_integer_value(
			json_object_get(v, CAPTURE_RESULT_KEY_LAUNCHES));
	}
	json_decref(j);
}

/* One rank's trace, fetched into the run folder under a temporary name, then renamed. */
static void fetch_one(struct fleet *f, struct frank *r)
{
	const char *base = strrchr(r->trace, '/') ? strrchr(r->trace, '/') + 1 : r->trace;
	char enc[8192], target[8300], said[768];
	struct fleet_answer a;
	struct safe_file *sf;
	int err;

	snprintf(r->file, sizeof(r->file), "rank%d.%.400s", r->rank, base);
	sf = safe_file__open(f->outfd, r->file, SAFE_FILE_NEW, 0644);
	if (!sf) {
		snprintf(r->why, sizeof(r->why), "cannot write %.300s/%.200s: %s", f->dir, r->file,
			 strerror(errno));
		goto fail;
	}
	/* The path as the daemon gave it: it takes one under its output folder, as it is. */
	fleet__urlenc(r->trace, enc, sizeof(enc));
	snprintf(target, sizeof(target), "/trace?path=%s", enc);
	err = fleet__http(f->o, &f->dv[r->d], f->auth, "GET", target, f->deadline,
			  safe_file__fd(sf), &a);
	if (!err && a.status != 200) {
		fleet__said(&a, said, sizeof(said));
		snprintf(a.err, sizeof(a.err), "GET /trace: %.600s", said);
	}
	if (err || a.status != 200 || (err = safe_file__publish(sf))) {
		snprintf(r->why, sizeof(r->why), "its trace could not be fetched: %.560s",
			 err && !a.err[0] ? strerror(-err) : a.err);
		free(a.body);
		safe_file__free(sf);
		goto fail;
	}
	free(a.body);
	safe_file__free(sf);
	return;
fail:
	snprintf(r->result, sizeof(r->result), "not_fetched");
	r->file[0] = '\0';
}

static void fetch_traces(struct fleet *f, size_t d)
{
	for (size_t i = 0; i < f->nr; i++)
		if (f->rk[i].d == d && !strcmp(f->rk[i].result, "ok") && f->rk[i].trace[0])
			fetch_one(f, &f->rk[i]);
}

/* The job's name as one folder name: bytes other than [A-Za-z0-9._-] become '_'. */
static void safe_name(const char *job, char *out, size_t len)
{
	size_t k = 0;

	for (; *job && k + 1 < len; job++)
		out[k++] = (strchr("._-", *job) || (*job >= 'a' && *job <= 'z') ||
			    (*job >= 'A' && *job <= 'Z') || (*job >= '0' && *job <= '9')) ? *job : '_';
	out[k] = '\0';
	if (!strcmp(out, ".") || !strcmp(out, "..") || !k)
		snprintf(out, len, "job_%s", k ? "dots" : "empty");
}

/* OUT/<job>/run_<k>, k the first free number: its descriptor, or -errno (said). */
static int make_run(struct fleet *f)
{
	char name[256], *run = f->run;
	unsigned int made;
	bool created;
	int out, jfd, fd = -1;

	safe_name(f->o->job, name, sizeof(name));
	out = safe_file__make_dirs(f->o->output, 0755, &made);
	jfd = out < 0 ? out : safe_file__child_dir(out, name, 0755, &created);
	for (int k = 0; jfd >= 0 && k < 100000 && fd < 0; k++) {
		snprintf(run, sizeof(f->run), "run_%d", k);
		if (mkdirat(jfd, run, 0755) && errno == EEXIST)
			continue;
		fd = openat(jfd, run, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		snprintf(f->dir, sizeof(f->dir), "%s/%s/%s", f->o->output, name, run);
		if (fd < 0)
			break;
	}
	if (fd < 0)
		fprintf(stderr, "cuprobe capture: -o %s: cannot make %s/run_<k>: %s\n",
			f->o->output, name, strerror(jfd < 0 ? -jfd : errno));
	if (out >= 0)
		close(out);
	if (jfd >= 0 && fd >= 0)
		f->jobfd = jfd;
	else if (jfd >= 0)
		close(jfd);
	return fd < 0 ? -EIO : fd;
}

static void put_daemons(struct json_writer *w, const struct fleet *f)
{
	json_writer__name(w, "daemons");
	json_writer__start_array(w);
	for (size_t i = 0; i < f->nd; i++) {
		const struct fleet_answer *t = &f->targets[i], *c = &f->caps[i];

		json_writer__start_object(w);
		json_writer__field_string(w, "addr", f->dv[i].addr);
		json_writer__field_string(w, "name", f->dv[i].name);
		json_writer__field_i64(w, "targets_status", t->status);
		json_writer__field_string(w, "targets_error", t->status ? "" : t->err);
		json_writer__field_i64(w, "capture_status", c->status);
		json_writer__field_string(w, "capture_error", c->status == 200 ? "" :
					  c->status ? (c->body ?: "") : c->err);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
}

static void put_ranks(struct json_writer *w, const struct fleet *f)
{
	json_writer__name(w, "ranks");
	json_writer__start_array(w);
	for (size_t i = 0; i < f->nr; i++) {
		const struct frank *r = &f->rk[i];
		const struct capture_result cr = {
			.result = r->result, .why = r->why, .first_step = r->first,
			.last_step = r->last, .launches = r->launches,
		};

		json_writer__start_object(w);
		json_writer__field_string(w, "host", r->host);
		json_writer__field_string(w, "daemon", f->dv[r->d].addr);
		json_writer__field_i64(w, "pid", r->pid);
		json_writer__field_i64(w, "rank", r->rank);
		json_writer__field_string(w, "found", r->scan ? "scan" : "exec");
		json_writer__field_string(w, "file", r->file);
		capture_result__write(w, &cr);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
}

/* The ranks 0..world-1 that no daemon reported. */
static void put_missing(struct json_writer *w, const struct fleet *f)
{
	int world = -1;

	for (size_t i = 0; i < f->nr; i++)
		world = f->rk[i].world > world ? f->rk[i].world : world;
	json_writer__field_i64(w, "world_size", world);
	json_writer__name(w, "unreported_ranks");
	json_writer__start_array(w);
	for (int k = 0; k < world; k++) {
		bool seen = false;

		for (size_t i = 0; i < f->nr && !seen; i++)
			seen = f->rk[i].rank == k;
		if (!seen)
			json_writer__i64(w, k);
	}
	json_writer__end_array(w);
}

static int write_json(struct fleet *f)
{
	struct json_writer *w = NULL;
	struct safe_file *sf;
	FILE *fp = NULL;
	int err = -EIO;
	char json[64];

	snprintf(json, sizeof(json), "%s.capture.json", f->run);
	sf = safe_file__open(f->jobfd, json, SAFE_FILE_NEW, 0644);
	fp = sf ? fdopen(dup(safe_file__fd(sf)), "w") : NULL;
	w = fp ? json_writer__new(fp) : NULL;

	if (w) {
		json_writer__pretty(w, 2);
		json_writer__start_object(w);
		json_writer__field_string(w, "job", f->o->job);
		json_writer__field_i64(w, "start_step", f->start);
		json_writer__field_u64(w, "steps", f->o->steps);
		put_daemons(w, f);
		put_missing(w, f);
		put_ranks(w, f);
		json_writer__end_object(w);
		err = json_writer__flush(w);
		json_writer__free(w);
	}
	if (fp && (fputc('\n', fp) == EOF || fclose(fp)) && !err)
		err = -EIO;
	if (!err)
		err = safe_file__publish(sf);
	safe_file__free(sf);
	if (err)
		fprintf(stderr, "cuprobe capture: cannot write %s.capture.json: %s\n", f->dir,
			strerror(-err));
	return err;
}

/* The summary; the exit status: 0 when every rank's trace is in, 1 otherwise. */
static int summary(const struct fleet *f)
{
	size_t ok = 0;
	int world = -1;

	printf("job %s: steps %lld to %lld of %zu ranks on %zu daemons -> %s\n", f->o->job,
	       f->start, f->start + (long long)f->o->steps - 1, f->nr, f->nd, f->dir);
	for (size_t i = 0; i < f->nr; i++) {
		const struct frank *r = &f->rk[i];
		bool good = !strcmp(r->result, "ok") && r->file[0];

		ok += good;
		world = r->world > world ? r->world : world;
		if (r->scan)
			printf("  rank %d (pid %lld on %s) was found by the daemon's /proc scan: its "
			       "step numbers count from then, not from its start\n", r->rank, r->pid,
			       r->host);
		if (good)
			printf("  rank %d: %s (pid %lld on %s, %llu launches)\n", r->rank, r->file,
			       r->pid, r->host, r->launches);
		else
			printf("  rank %d: NOT written: host %s (daemon %s), pid %lld: %s: %s\n",
			       r->rank, r->host, f->dv[r->d].addr, r->pid, r->result, r->why);
	}
	for (size_t i = 0; i < f->nd; i++)
		if (!f->targets[i].status || (f->caps && !f->caps[i].status && f->targets[i].status))
			printf("  daemon %s did not answer: %s\n", f->dv[i].addr,
			       f->targets[i].status ? f->caps[i].err : f->targets[i].err);
	for (int k = 0; k < world; k++) {
		bool seen = false;

		for (size_t i = 0; i < f->nr && !seen; i++)
			seen = f->rk[i].rank == k;
		if (!seen)
			printf("  rank %d: NOT written: no daemon reported it (world size %d)\n", k,
			       world);
	}
	printf("%zu of %zu ranks written\n", ok, f->nr);
	return ok == f->nr && f->nr && world <= (int)f->nr ? 0 : 1;
}

static void fleet_free(struct fleet *f)
{
	for (size_t i = 0; i < f->nd; i++) {
		free(f->targets ? f->targets[i].body : NULL);
		free(f->caps ? f->caps[i].body : NULL);
	}
	free(f->targets);
	free(f->caps);
	free(f->dv);
	free(f->rk);
	if (f->outfd >= 0)
		close(f->outfd);
	if (f->jobfd >= 0)
		close(f->jobfd);
	explicit_bzero(f->auth, sizeof(f->auth));
}

int fleet__run(const struct capture_opts *o)
{
	struct fleet f = { .o = o, .outfd = -1, .jobfd = -1 };
	char err[768];
	int rc = 1;

	f.deadline = clock_mono_ns() + (uint64_t)(o->timeout_s * NS);
	if (capture__auth_header(o, f.auth, sizeof(f.auth)))
		return 2;
	if (fleet__find(o, f.deadline, &f.dv, &f.nd, err, sizeof(err)) || !f.nd) {
		fprintf(stderr, "cuprobe capture: no daemon for job %s: %s\n", o->job,
			f.nd ? err : err[0] ? err : "none found");
		goto out;
	}
	f.targets = calloc(f.nd, sizeof(*f.targets));
	f.caps = calloc(f.nd, sizeof(*f.caps));
	if (!f.targets || !f.caps)
		goto out;
	each_daemon(&f, 0);
	for (size_t i = 0; i < f.nd; i++)
		if (add_ranks(&f, i))
			goto out;
	if (!f.nr && !f.answered) {
		fprintf(stderr, "cuprobe capture: job %s: no daemon answered GET /targets with its "
			"list (each is said above)\n", o->job);
		goto out;
	}
	if (!f.nr) {
		fprintf(stderr, "cuprobe capture: no daemon of %zu samples a rank of job %s (GET "
			"/targets lists the jobs)\n", f.answered, o->job);
		goto out;
	}
	f.start = choose_start(&f);
	f.outfd = make_run(&f);
	if (f.outfd < 0)
		goto out;
	each_daemon(&f, 1);
	for (size_t i = 0; i < f.nd; i++)
		take_capture(&f, i);
	each_daemon(&f, 2);
	rc = summary(&f);
	if (write_json(&f))
		rc = 1;
out:
	fleet_free(&f);
	return rc;
}
