// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The calls a workload made into stream captures, its ground truth's
 * $CUPROBE_GT.captured (tests/e2e/check_capture.py reads it): each
 * (capture, api, kernel, grid.x, stream, bytes) with its count. Shared by
 * capture.cu and graphs.cu; after ground_truth.h.
 */
#ifndef CUPROBE_CAPTURED_GT_H
#define CUPROBE_CAPTURED_GT_H

#include <map>
#include <string>
#include <tuple>

typedef std::map<std::tuple<unsigned, std::string, std::string, unsigned, uint64_t, uint64_t>,
		 uint64_t>
	captured_map;

/* Call c made into capture; the caller holds whatever lock guards m. */
static inline void captured_add(captured_map &m, unsigned capture, const gt::Call &c)
{
	m[std::make_tuple(capture, c.api, c.kernel, c.grid[0], c.stream, c.bytes)]++;
}

/* gt_path.captured: the number of captures begun, and every captured call. */
static inline void write_captured_gt(const char *gt_path, unsigned captures, const captured_map &m)
{
	std::string path = std::string(gt_path) + ".captured";
	FILE *f = fopen(path.c_str(), "w");
	const char *sep = "";

	if (!f)
		return;
	fprintf(f, "{\"captures\": %u, \"calls\": [", captures);
	for (const auto &kv : m) {
		const auto &k = kv.first;
		fprintf(f, "%s\n {\"capture\": %u, \"api\": \"%s\", \"kernel\": \"%s\", "
			   "\"grid\": %u, \"stream\": %llu, \"bytes\": %llu, \"count\": %llu}",
			sep, std::get<0>(k), std::get<1>(k).c_str(), std::get<2>(k).c_str(),
			std::get<3>(k), (unsigned long long)std::get<4>(k),
			(unsigned long long)std::get<5>(k), (unsigned long long)kv.second);
		sep = ",";
	}
	fputs("\n]}\n", f);
	fclose(f);
}

#endif /* CUPROBE_CAPTURED_GT_H */
