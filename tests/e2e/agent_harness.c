// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A small loader for the agent tests: runs a command that loads the agent,
 * attaches to the agent's USDT probes as cuprobe's loader does (records for
 * the whole run, enable for a window), decodes every chunk with
 * agent_records and writes the records as JSON lines for check_agent.py.
 *
 *   agent_harness --agent LIB [-e K=V]... [-o FILE] [options] -- CMD [ARGS...]
 *
 *   --agent LIB          the agent the command loads (where the probes are)
 *   -e, --env K=V        put K=V in the command's environment
 *   -o, --out FILE       the decoded records, one JSON object per line
 *   --go-file PATH       create PATH once the agent answered the enable
 *                        (STARTED or ERROR); at once with --no-enable or
 *                        --no-records
 *   --no-enable          never attach cuprobe:enable (the agent stays dormant)
 *   --no-records         never attach cuprobe:records
 *   --disable-after N    detach cuprobe:enable once N API records arrived
 *   --windows N          after each FLUSHED of a disable, attach enable again,
 *                        N windows in all (with --disable-after)
 *   --timeout SEC        kill the command after SEC seconds (default 30)
 *
 * Exits 0 when the command exited 0, every chunk decoded and nothing timed out.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "core/gpu/agent_records.h"
#include "core/gpu/agent_wake.h"
#include "proc_state.h" /* the skeleton's globals are of its types */
#include "cuprobe.skel.h"

char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

#define MAX_ENV 32
#define MAX_NAMES (1u << 20)

struct name {
	char *str;
	__u32 total;
	__u32 filled; /* bytes received; whole when filled == total */
};

static struct opts {
	const char *agent;
	const char *out;
	const char *go_file;
	char *env[MAX_ENV];
	int n_env;
	bool no_enable;
	bool no_records;
	long disable_after;
	int windows;
	int timeout_s;
	char **cmd;
} opt = { .disable_after = -1, .windows = 1, .timeout_s = 30 };

static struct state {
	FILE *out;
	pid_t pid;
	struct cuprobe_bpf *skel;
	struct bpf_link *records;
	struct bpf_link *enable;
	struct name *names;
	__u32 n_names;
	long seq;
	long api_since_enable;
	int windows_done;
	bool answered; /* STARTED or ERROR seen for the current enable */
	bool go_done;
	long chunks, bad_chunks, decode_errors, string_errors, unnamed_kernels;
	long by_type[16];
} st;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void json_str(FILE *f, const char *s, size_t len)
{
	size_t i;

	fputc('"', f);
	for (i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd >= 0)
		close(fd);
}

static int wake_fd = -1; /* the agent's eventfd, once taken */

static int attach(struct bpf_link **link, struct bpf_program *prog, const char *probe)
{
	*link = bpf_program__attach_usdt(prog, st.pid, opt.agent, "cuprobe", probe, NULL);
	if (!*link) {
		int err = -errno;

		fprintf(stderr, "agent_harness: attach cuprobe:%s in %s: %s\n", probe, opt.agent,
			strerror(-err));
		return err;
	}
	/* As cuprobe's loader does: the dormant agent sleeps until woken. */
	agent_wake(st.pid, opt.agent, &wake_fd);
	return 0;
}

/* Marks what the harness did, with CLOCK_MONOTONIC ns, the agent's clock. */
static void harness_event(const char *what)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	fprintf(st.out, "{\"t\": \"harness\", \"seq\": %ld, \"event\": \"%s\", \"ts\": %llu}\n",
		st.seq++, what, (unsigned long long)ts.tv_sec * 1000000000ull + ts.tv_nsec);
}

static void add_piece(const struct agent_record *r)
{
	const struct agent_string *s = &r->string;
	struct name *n;

	if (s->id >= MAX_NAMES) {
		st.string_errors++;
		return;
	}
	if (s->id >= st.n_names) {
		__u32 cap = st.n_names ? st.n_names : 64;
		struct name *p;

		while (cap <= s->id)
			cap *= 2;
		p = realloc(st.names, cap * sizeof(*p));
		if (!p)
			return;
		memset(p + st.n_names, 0, (cap - st.n_names) * sizeof(*p));
		st.names = p;
		st.n_names = cap;
	}
	n = &st.names[s->id];
	if (s->offset == 0) {
		free(n->str);
		n->str = calloc(1, s->total_len + 1);
		n->total = s->total_len;
		n->filled = 0;
	}
	/* Pieces come in order; the string's text never changes for its id. */
	if (!n->str || s->offset != n->filled || s->total_len != n->total) {
		st.string_errors++;
		return;
	}
	memcpy(n->str + s->offset, r->bytes, r->bytes_len);
	n->filled += r->bytes_len;
}

static const char *name_of(__u32 id)
{
	if (!id || id >= st.n_names || !st.names[id].str ||
	    st.names[id].filled != st.names[id].total)
		return NULL;
	return st.names[id].str;
}

static void print_kernel(FILE *f, const struct agent_kernel *k)
{
	const char *name = name_of(k->name_id);
	char *dem = NULL;
	int status = -1;

	if (k->name_id && !name)
		st.unnamed_kernels++;
	fprintf(f, ", \"corr\": %u, \"start\": %llu, \"end\": %llu, \"device\": %u, "
		   "\"context\": %u, \"stream\": %u, \"grid\": [%u, %u, %u], "
		   "\"block\": [%u, %u, %u], \"dyn_shmem\": %u, \"static_shmem\": %u, "
		   "\"registers\": %u, \"graph_id\": %u, \"graph_node\": %llu, "
		   "\"launch_type\": %u, \"name_id\": %u, \"name\": ",
		k->correlation, k->start_ns, k->end_ns, k->device, k->context, k->stream,
		k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2],
		k->dyn_shmem, k->static_shmem, k->registers, k->graph_id, k->graph_node_id,
		k->launch_type, k->name_id);
	if (!name) {
		fputs("null, \"demangled\": null", f);
		return;
	}
	json_str(f, name, strlen(name));
	dem = __cxa_demangle(name, NULL, NULL, &status);
	fputs(", \"demangled\": ", f);
	json_str(f, status == 0 && dem ? dem : name, strlen(status == 0 && dem ? dem : name));
	free(dem);
}

static void print_record(FILE *f, const struct agent_record *r, const struct agent_chunk_event *e)
{
	fprintf(f, "{\"t\": \"%s\", \"seq\": %ld, \"tgid\": %u", agent_records__type_name(r->type),
		st.seq++, e->tgid);
	switch (r->type) {
	case AGENT_REC_API:
		fprintf(f, ", \"domain\": %u, \"cbid\": %u, \"start\": %llu, \"end\": %llu, "
			   "\"pid\": %u, \"tid\": %u, \"corr\": %u, \"ret\": %u",
			r->api.domain, r->api.cbid, r->api.start_ns, r->api.end_ns, r->api.pid,
			r->api.tid, r->api.correlation, r->api.ret);
		break;
	case AGENT_REC_KERNEL:
		print_kernel(f, &r->kernel);
		break;
	case AGENT_REC_MEMCPY:
		fprintf(f, ", \"corr\": %u, \"start\": %llu, \"end\": %llu, \"bytes\": %llu, "
			   "\"copy_kind\": %u, \"src_kind\": %u, \"dst_kind\": %u, \"stream\": %u, "
			   "\"graph_id\": %u",
			r->memcpy.correlation, r->memcpy.start_ns, r->memcpy.end_ns,
			r->memcpy.bytes, r->memcpy.copy_kind, r->memcpy.src_kind,
			r->memcpy.dst_kind, r->memcpy.stream, r->memcpy.graph_id);
		break;
	case AGENT_REC_MEMSET:
		fprintf(f, ", \"corr\": %u, \"start\": %llu, \"end\": %llu, \"bytes\": %llu, "
			   "\"value\": %u, \"stream\": %u",
			r->memset.correlation, r->memset.start_ns, r->memset.end_ns,
			r->memset.bytes, r->memset.value, r->memset.stream);
		break;
	case AGENT_REC_OVERHEAD:
		fprintf(f, ", \"kind\": %u, \"object_kind\": %u, \"start\": %llu, \"end\": %llu",
			r->overhead.overhead_kind, r->overhead.object_kind, r->overhead.start_ns,
			r->overhead.end_ns);
		break;
	case AGENT_REC_DROPPED:
		fprintf(f, ", \"reason\": %u, \"count\": %llu", r->dropped.reason,
			r->dropped.count);
		break;
	case AGENT_REC_STRING:
		fprintf(f, ", \"id\": %u, \"total\": %u, \"offset\": %u, \"len\": %u",
			r->string.id, r->string.total_len, r->string.offset, r->string.len);
		break;
	case AGENT_REC_ERROR:
		fprintf(f, ", \"code\": %u, \"stage\": %u, \"window\": %u, \"message\": ",
			r->error.code, r->error.stage, r->error.window);
		json_str(f, r->bytes, r->bytes_len);
		break;
	case AGENT_REC_STARTED:
		fprintf(f, ", \"ts\": %llu, \"window\": %u, \"cupti_version\": %u, \"pid\": %u, "
			   "\"abi\": %u",
			r->started.ts_ns, r->started.window, r->started.cupti_version,
			r->started.pid, r->started.abi);
		break;
	case AGENT_REC_FLUSHED:
		fprintf(f, ", \"ts\": %llu, \"window\": %u, \"reason\": %u, \"records\": %llu, "
			   "\"no_listener\": %llu",
			r->flushed.ts_ns, r->flushed.window, r->flushed.reason, r->flushed.records,
			r->flushed.no_listener);
		break;
	default:
		fprintf(f, ", \"type\": %u, \"size\": %u", r->type, r->size);
		break;
	}
	fputs("}\n", f);
}

static void reattach_enable(void)
{
	if (opt.no_enable || st.enable || st.windows_done >= opt.windows)
		return;
	if (!attach(&st.enable, st.skel->progs.agent_enable, "enable")) {
		st.answered = false;
		st.api_since_enable = 0;
		harness_event("enable");
	}
}

static int on_record(const struct agent_record *r, void *ctx)
{
	const struct agent_chunk_event *e = ctx;

	st.by_type[r->type & 0xf]++;
	if (r->type == AGENT_REC_STRING)
		add_piece(r);
	print_record(st.out, r, e);
	if (r->type == AGENT_REC_STARTED || r->type == AGENT_REC_ERROR)
		st.answered = true;
	if (r->type == AGENT_REC_API && ++st.api_since_enable == opt.disable_after && st.enable) {
		/* Marked first: a detach takes tens of milliseconds to return. */
		harness_event("disable");
		bpf_link__destroy(st.enable);
		st.enable = NULL;
	}
	if (r->type == AGENT_REC_FLUSHED && r->flushed.reason == AGENT_FLUSH_DISABLE) {
		st.windows_done++;
		reattach_enable();
	}
	return 0;
}

static int on_chunk(void *ctx, void *data, size_t size)
{
	const struct agent_chunk_event *e = data;
	const size_t head = offsetof(struct agent_chunk_event, data);

	(void)ctx;
	st.chunks++;
	if (size < head || e->type != AGENT_CHUNK_EVENT || e->len > size - head) {
		st.bad_chunks++;
		return 0;
	}
	if (agent_records__decode(e->data, e->len, on_record, (void *)e))
		st.decode_errors++;
	return 0;
}

static pid_t spawn(void)
{
	pid_t pid = fork();
	int i;

	if (pid)
		return pid;
	for (i = 0; i < opt.n_env; i++)
		putenv(opt.env[i]);
	execvp(opt.cmd[0], opt.cmd);
	fprintf(stderr, "agent_harness: exec %s: %s\n", opt.cmd[0], strerror(errno));
	_exit(127);
}

/* The agent is mapped once the dynamic linker has loaded it. */
static int wait_mapped(double deadline)
{
	char path[64], line[PATH_MAX + 128];
	char real[PATH_MAX];

	if (!realpath(opt.agent, real))
		return -errno;
	snprintf(path, sizeof(path), "/proc/%d/maps", st.pid);
	while (now_s() < deadline) {
		FILE *f = fopen(path, "r");

		if (!f)
			return -ESRCH;
		while (fgets(line, sizeof(line), f)) {
			if (strstr(line, real)) {
				fclose(f);
				return 0;
			}
		}
		fclose(f);
		usleep(1000);
	}
	return -ETIMEDOUT;
}

static void summary(int status, bool timed_out)
{
	fprintf(st.out,
		"{\"t\": \"exit\", \"seq\": %ld, \"status\": %d, \"timed_out\": %s, "
		"\"chunks\": %ld, \"bad_chunks\": %ld, \"decode_errors\": %ld, "
		"\"string_errors\": %ld, \"unnamed_kernels\": %ld, "
		"\"bpf_chunk_drops\": %llu, \"bpf_chunk_bad\": %llu}\n",
		st.seq++, status, timed_out ? "true" : "false", st.chunks, st.bad_chunks,
		st.decode_errors, st.string_errors, st.unnamed_kernels,
		st.skel->bss->counters.agent_drops, st.skel->bss->counters.agent_bad);
}

static int run(void)
{
	double deadline = now_s() + opt.timeout_s, exited_at = 0;
	struct ring_buffer *rb;
	bool timed_out = false;
	int status = -1, err;

	rb = ring_buffer__new(bpf_map__fd(st.skel->maps.events), on_chunk, NULL, NULL);
	if (!rb)
		return -errno;
	harness_event("spawn");
	st.pid = spawn();
	if (st.pid < 0)
		return -errno;
	err = wait_mapped(deadline);
	if (err)
		fprintf(stderr, "agent_harness: %s never mapped %s\n", opt.cmd[0], opt.agent);
	if (!err && !opt.no_records)
		err = attach(&st.records, st.skel->progs.agent_records, "records");
	if (!err && !opt.no_enable) {
		err = attach(&st.enable, st.skel->progs.agent_enable, "enable");
		if (!err)
			harness_event("enable");
	}
	while (!err) {
		ring_buffer__poll(rb, 5);
		if (!st.go_done && opt.go_file && (opt.no_enable || opt.no_records || st.answered)) {
			touch(opt.go_file);
			st.go_done = true;
		}
		if (!exited_at && waitpid(st.pid, &status, WNOHANG) == st.pid)
			exited_at = now_s();
		/* Chunks of the exit flush are in the ring buffer by now. */
		if (exited_at && now_s() - exited_at > 0.1)
			break;
		if (now_s() > deadline) {
			timed_out = true;
			break;
		}
	}
	if (!exited_at) {
		kill(st.pid, SIGKILL);
		waitpid(st.pid, &status, 0);
	}
	ring_buffer__consume(rb);
	harness_event("end");
	ring_buffer__free(rb);
	summary(status, timed_out);
	if (err)
		return err;
	if (timed_out)
		return -ETIMEDOUT;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: agent_harness --agent LIB [-e K=V]... [-o FILE] [--go-file PATH]\n"
		   "       [--no-enable] [--no-records] [--disable-after N] [--windows N]\n"
		   "       [--timeout SEC] -- CMD [ARGS...]\n");
}

static int parse(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "agent", required_argument, NULL, 'a' },
		{ "env", required_argument, NULL, 'e' },
		{ "out", required_argument, NULL, 'o' },
		{ "go-file", required_argument, NULL, 'g' },
		{ "no-enable", no_argument, NULL, 'E' },
		{ "no-records", no_argument, NULL, 'R' },
		{ "disable-after", required_argument, NULL, 'd' },
		{ "windows", required_argument, NULL, 'w' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int c;

	while ((c = getopt_long(argc, argv, "+e:o:h", longs, NULL)) != -1) {
		switch (c) {
		case 'a': opt.agent = optarg; break;
		case 'e':
			if (opt.n_env == MAX_ENV)
				return -E2BIG;
			opt.env[opt.n_env++] = optarg;
			break;
		case 'o': opt.out = optarg; break;
		case 'g': opt.go_file = optarg; break;
		case 'E': opt.no_enable = true; break;
		case 'R': opt.no_records = true; break;
		case 'd': opt.disable_after = atol(optarg); break;
		case 'w': opt.windows = atoi(optarg); break;
		case 't': opt.timeout_s = atoi(optarg); break;
		case 'h': usage(stdout); exit(0);
		default: return -EINVAL;
		}
	}
	if (!opt.agent || optind >= argc)
		return -EINVAL;
	opt.cmd = argv + optind;
	return 0;
}

/*
 * cuprobe's own programs, the agent's two only: agent_enable is loaded as a
 * plain uprobe (not for uprobe_multi) so that libbpf's USDT attach can place
 * it with the semaphore, as it places agent_records.
 */
static struct cuprobe_bpf *load(void)
{
	struct cuprobe_bpf *skel = cuprobe_bpf__open();
	struct bpf_program *prog;
	int err;

	if (!skel)
		return NULL;
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, prog == skel->progs.agent_records ||
						prog == skel->progs.agent_enable);
	err = cuprobe_bpf__load(skel);
	/* BPF writes through the ring slot, as in bpfobj.c. */
	if (!err) {
		int fd = bpf_map__fd(skel->maps.events);

		err = bpf_map__update_elem(skel->maps.events_rings, &(__u32){ 0 }, sizeof(__u32),
					   &fd, sizeof(fd), BPF_ANY);
	}
	if (err) {
		cuprobe_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

int main(int argc, char **argv)
{
	int err;

	if (parse(argc, argv)) {
		usage(stderr);
		return 2;
	}
	libbpf_set_print(print_libbpf);
	st.out = opt.out ? fopen(opt.out, "w") : stdout;
	if (!st.out) {
		fprintf(stderr, "agent_harness: %s: %s\n", opt.out, strerror(errno));
		return 1;
	}
	st.skel = load();
	if (!st.skel) {
		fprintf(stderr, "agent_harness: loading the BPF programs: %s (root?)\n",
			strerror(errno));
		return 1;
	}
	err = run();
	bpf_link__destroy(st.enable);
	bpf_link__destroy(st.records);
	cuprobe_bpf__destroy(st.skel);
	if (st.out != stdout)
		fclose(st.out);
	if (err)
		fprintf(stderr, "agent_harness: %s\n", strerror(-err));
	return err || st.decode_errors || st.bad_chunks ? 1 : 0;
}
