// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * empty_uprobe: runs a command with bench/empty.bpf.c attached to one
 * function of a library, for that command's process only, the way cuprobe
 * attaches its launch probe (a uprobe_multi link where the kernel has one),
 * so the two differ only in the program that runs.
 *
 *   empty_uprobe [--perf] [--lib PATH] [--func NAME] [--at N | --place] -- COMMAND [ARGS...]
 *
 * --perf attaches a perf-event uprobe instead of a uprobe_multi link; --at N
 * puts it N bytes into the function (on an instruction the kernel emulates);
 * --place puts it where cuprobe puts its own (user/core/probes/placement.c),
 * and says where on stderr. Exits with the command's status. Linked with
 * libbpf, libelf and Capstone's archives, so that it runs where they are not
 * installed (the GPU check, tests/gpu/run.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include "core/probes/placement.h"
#include "core/probes/uprobe_link.h"
#include "empty.skel.h"
#include "core/proc/symbols.h"

struct opts {
	bool perf;
	const char *lib;
	const char *func;
	unsigned long at;
	bool place;
	char **cmd;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: empty_uprobe [--perf] [--lib PATH] [--func NAME] [--at N | --place] -- "
		   "COMMAND [ARGS...]\n"
		   "  --lib PATH   library to probe (default $CUDA_HOME/lib64/libcudart.so.13)\n"
		   "  --func NAME  function to probe (default cudaLaunchKernel)\n"
		   "  --perf       a perf-event uprobe instead of a uprobe_multi link\n"
		   "  --at N       N bytes into the function, not on its entry\n"
		   "  --place      where cuprobe puts its probe (the first emulated instruction)\n");
}

static int parse_opts(struct opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "perf", no_argument, NULL, 'P' },
		{ "lib", required_argument, NULL, 'l' },
		{ "func", required_argument, NULL, 'f' },
		{ "at", required_argument, NULL, 'a' },
		{ "place", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	static char lib[4096];
	const char *cuda = getenv("CUDA_HOME");
	int c;

	snprintf(lib, sizeof(lib), "%s/lib64/libcudart.so.13", cuda ? cuda : "/usr/local/cuda");
	*o = (struct opts){ .lib = lib, .func = "cudaLaunchKernel" };
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 'P':
			o->perf = true;
			break;
		case 'l':
			o->lib = optarg;
			break;
		case 'f':
			o->func = optarg;
			break;
		case 'a':
			o->at = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			o->place = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind >= argc || (o->place && o->at)) {
		usage(stderr);
		return -EINVAL;
	}
	o->cmd = argv + optind;
	return 0;
}

/* The same attach code as cuprobe's (user/core/probes/uprobe_link.c): only the program differs. */
static int attach(struct empty_bpf *skel, const struct opts *o, pid_t pid,
		  struct uprobe_link **link)
{
	uint64_t off = 0;
	struct uprobe_spec spec = { .path = o->lib, .pid = pid, .offsets = &off, .n = 1 };
	int n = elf_func_offsets(o->lib, &o->func, 1, &off);

	if (n <= 0)
		return n ?: -ENOENT;
	off += o->at;
	if (o->place) {
		int fd = open(o->lib, O_RDONLY | O_CLOEXEC), err;
		uint64_t entry = off;

		if (fd < 0)
			return -errno;
		err = placement_adjust(fd, o->lib, &o->func, 1, &off);
		close(fd);
		if (err)
			return err;
		fprintf(stderr, "empty_uprobe: %s at +%llu\n", o->func,
			(unsigned long long)(off - entry));
	}
	return attach_uprobes(skel->progs.empty, !o->perf, &spec, link);
}

static int load(struct empty_bpf **out, bool perf)
{
	struct empty_bpf *skel = empty_bpf__open();
	int err;

	if (!skel)
		return -errno;
	if (!perf)
		bpf_program__set_expected_attach_type(
			skel->progs.empty, (enum bpf_attach_type)CUPROBE_TRACE_UPROBE_MULTI);
	err = empty_bpf__load(skel);
	if (err) {
		empty_bpf__destroy(skel);
		return err;
	}
	*out = skel;
	return 0;
}

/* Forks the command held before exec, so that its first call is already probed. */
static pid_t fork_held(char **cmd, int *go)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(127);
		execvp(cmd[0], cmd);
		fprintf(stderr, "empty_uprobe: cannot execute %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

int main(int argc, char **argv)
{
	struct empty_bpf *skel = NULL;
	struct uprobe_link *link = NULL;
	int err, go = -1, status = 0;
	struct opts o;
	pid_t pid;

	if (parse_opts(&o, argc, argv))
		return 2;
	err = load(&skel, o.perf);
	if (err) {
		fprintf(stderr, "empty_uprobe: cannot load the BPF program: %s\n", strerror(-err));
		return 1;
	}
	pid = fork_held(o.cmd, &go);
	if (pid < 0) {
		err = pid;
		fprintf(stderr, "empty_uprobe: cannot fork: %s\n", strerror(-err));
		goto out;
	}
	err = attach(skel, &o, pid, &link);
	if (err) {
		fprintf(stderr, "empty_uprobe: cannot attach to %s in %s: %s\n", o.func, o.lib,
			strerror(-err));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		goto out;
	}
	if (write(go, "g", 1) != 1)
		err = -errno;
	close(go);
	if (waitpid(pid, &status, 0) < 0 && !err)
		err = -errno;
out:
	uprobe_link__destroy(link);
	empty_bpf__destroy(skel);
	if (err)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
