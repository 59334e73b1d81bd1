/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Ground truth for the end-to-end tests: every workload records each launch,
 * copy and set it makes, right before the call, and writes them as JSON to
 * $CUPROBE_GT when the process exits (nothing is written when it is unset).
 * Identical calls are aggregated with a count. README.md documents the format.
 *
 * Header-only, so that every workload (and libkernlib.so) builds from one
 * source file. Only one object per process may record: two copies would write
 * the same file.
 */
#ifndef CUPROBE_GROUND_TRUTH_H
#define CUPROBE_GROUND_TRUTH_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace gt {

inline long gettid_sys()
{
	return syscall(SYS_gettid);
}

/* One call as the uprobe sees its arguments; fields that do not apply stay 0/"". */
struct Call {
	std::string api;     /* exported entry point the call enters */
	std::string kernel;  /* demangled host-stub symbol, "" when none */
	uint64_t func = 0;   /* function pointer, CUfunction or graph exec handle */
	unsigned grid[3] = { 0, 0, 0 };
	unsigned block[3] = { 0, 0, 0 };
	uint64_t shmem = 0;
	uint64_t stream = 0;
	uint64_t bytes = 0;
	int kind = 0;        /* cudaMemcpyKind */
	int value = 0;       /* memset byte value */
};

class Recorder {
public:
	void record(const Call &c)
	{
		Key k(gettid_sys(), c.api, c.kernel, c.func,
		      std::make_tuple(c.grid[0], c.grid[1], c.grid[2]),
		      std::make_tuple(c.block[0], c.block[1], c.block[2]),
		      c.shmem, c.stream, c.bytes, c.kind, c.value,
		      steps_.load(std::memory_order_acquire));
		std::lock_guard<std::mutex> lock(mu_);
		counts_[k]++;
	}

	void step() { steps_.fetch_add(1, std::memory_order_acq_rel); }

	~Recorder() { write(); }

private:
	using Dim = std::tuple<unsigned, unsigned, unsigned>;
	using Key = std::tuple<long, std::string, std::string, uint64_t, Dim, Dim,
			       uint64_t, uint64_t, uint64_t, int, int, uint64_t>;

	static void put_string(FILE *f, const std::string &s)
	{
		fputc('"', f);
		for (unsigned char ch : s) {
			if (ch == '"' || ch == '\\')
				fprintf(f, "\\%c", ch);
			else if (ch < 0x20)
				fprintf(f, "\\u%04x", ch);
			else
				fputc(ch, f);
		}
		fputc('"', f);
	}

	static void put_dim(FILE *f, const char *name, const Dim &d)
	{
		fprintf(f, "\"%s\": [%u, %u, %u]", name, std::get<0>(d), std::get<1>(d),
			std::get<2>(d));
	}

	void put_call(FILE *f, const Key &k, uint64_t count) const
	{
		fprintf(f, "{\"tid\": %ld, \"api\": ", std::get<0>(k));
		put_string(f, std::get<1>(k));
		fputs(", \"kernel\": ", f);
		put_string(f, std::get<2>(k));
		fprintf(f, ", \"func\": %llu, ", (unsigned long long)std::get<3>(k));
		put_dim(f, "grid", std::get<4>(k));
		fputs(", ", f);
		put_dim(f, "block", std::get<5>(k));
		fprintf(f, ", \"shmem\": %llu, \"stream\": %llu, \"bytes\": %llu, "
			   "\"kind\": %d, \"value\": %d, \"step\": %llu, \"count\": %llu}",
			(unsigned long long)std::get<6>(k), (unsigned long long)std::get<7>(k),
			(unsigned long long)std::get<8>(k), std::get<9>(k), std::get<10>(k),
			(unsigned long long)std::get<11>(k), (unsigned long long)count);
	}

	/* Written to PATH.tmp and renamed, so a reader never sees half a file. */
	void write()
	{
		const char *path = getenv("CUPROBE_GT");
		if (!path || !*path)
			return;
		std::string tmp = std::string(path) + ".tmp";
		FILE *f = fopen(tmp.c_str(), "w");
		if (!f) {
			fprintf(stderr, "ground truth: cannot write %s: %s\n", tmp.c_str(),
				strerror(errno));
			return;
		}
		char exe[4096];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';

		std::lock_guard<std::mutex> lock(mu_);
		fprintf(f, "{\"pid\": %d, \"exe\": ", (int)getpid());
		put_string(f, exe);
		fprintf(f, ", \"steps\": %llu, \"calls\": [",
			(unsigned long long)steps_.load());
		const char *sep = "\n  ";
		for (const auto &kv : counts_) {
			fputs(sep, f);
			put_call(f, kv.first, kv.second);
			sep = ",\n  ";
		}
		fputs("\n]}\n", f);
		if (fclose(f) != 0 || rename(tmp.c_str(), path) != 0)
			fprintf(stderr, "ground truth: cannot write %s: %s\n", path,
				strerror(errno));
	}

	std::mutex mu_;
	std::map<Key, uint64_t> counts_;
	std::atomic<uint64_t> steps_{ 0 };
};

/* Constructed on first use, written by its destructor at exit (or dlclose). */
inline Recorder &recorder()
{
	static Recorder r;
	return r;
}

/* Call first in main, so that a run that records nothing still writes a file. */
inline void start()
{
	(void)recorder();
}

inline void record(const Call &c)
{
	recorder().record(c);
}

inline Call launch(const char *api, const char *kernel, const void *func, const unsigned grid[3],
		   const unsigned block[3], uint64_t shmem, const void *stream)
{
	Call c;
	c.api = api;
	c.kernel = kernel;
	c.func = (uintptr_t)func;
	memcpy(c.grid, grid, sizeof(c.grid));
	memcpy(c.block, block, sizeof(c.block));
	c.shmem = shmem;
	c.stream = (uintptr_t)stream;
	return c;
}

inline Call copy(const char *api, uint64_t bytes, int kind, const void *stream)
{
	Call c;
	c.api = api;
	c.bytes = bytes;
	c.kind = kind;
	c.stream = (uintptr_t)stream;
	return c;
}

inline Call set(const char *api, uint64_t bytes, int value, const void *stream)
{
	Call c;
	c.api = api;
	c.bytes = bytes;
	c.value = value;
	c.stream = (uintptr_t)stream;
	return c;
}

inline Call graph(const char *api, const void *exec, const void *stream)
{
	Call c;
	c.api = api;
	c.func = (uintptr_t)exec;
	c.stream = (uintptr_t)stream;
	return c;
}

/* Count one step boundary; calls recorded later carry the new step number. */
inline void step()
{
	recorder().step();
}

} /* namespace gt */

#endif /* CUPROBE_GROUND_TRUTH_H */
