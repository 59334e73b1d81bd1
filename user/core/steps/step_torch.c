// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "step.h"
#include "core/steps/step_torch.h"

#define TORCH_EXIT \
	"_ZN5torch8autograd8profilerL24record_function_exit_newERKN3c1013intrusive_ptrINS1_20" \
	"PythonRecordFunctionENS2_6detail34intrusive_target_default_null_typeIS4_EEEE"
#define TORCH_ENTER_CXX11 \
	"_ZN5torch8autograd8profiler25record_function_enter_newERKNSt7__cxx1112basic_stringIcSt11" \
	"char_traitsIcESaIcEEERKSt8optionalIS7_E"
#define TORCH_ENTER_COW \
	"_ZN5torch8autograd8profiler25record_function_enter_newERKSsRKSt8optionalISsE"

/*
 * PyPI's wheels since 2.7 are built with C++11's std::string (2.15 tested);
 * those up to 2.6 with the old ABI's copy-on-write one (2.4.1 tested), which
 * mangles as Ss. The exit takes no string: one name in both.
 */
const struct step_torch_form step_torch_forms[STEP_TORCH_FORMS] = {
	{ TORCH_ENTER_CXX11, TORCH_STRING_CXX11, "C++11 std::string" },
	{ TORCH_ENTER_COW, TORCH_STRING_COW, "pre-C++11 std::string" },
};

const char *const step_torch_syms[STEP_TORCH_SYMS] = {
	TORCH_EXIT,
	TORCH_ENTER_CXX11,
	TORCH_ENTER_COW,
};

const struct step_torch_form *step_torch_pick(const uint64_t *found, uint64_t offs[2],
					      const char *names[2])
{
	offs[0] = 0;
	offs[1] = found[0];
	names[0] = NULL;
	names[1] = step_torch_syms[0];
	for (size_t i = 0; i < STEP_TORCH_FORMS; i++) {
		if (!found[1 + i])
			continue;
		offs[0] = found[1 + i];
		names[0] = step_torch_syms[1 + i];
		return &step_torch_forms[i];
	}
	return NULL;
}

/* torch/lib/libtorch_cpu.so: torch/version.py has __version__ = '2.15.0+cu132'. */
void step_torch_version(const char *lib, char *buf, size_t len)
{
	char path[PATH_MAX], line[256];
	const char *slash = strrchr(lib, '/');
	FILE *f = NULL;

	snprintf(buf, len, "unknown");
	if (slash && snprintf(path, sizeof(path), "%.*s/../version.py", (int)(slash - lib), lib) <
			     (int)sizeof(path))
		f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		char *q = strchr(line, '\''), *end = q ? strchr(q + 1, '\'') : NULL;

		if (strncmp(line, "__version__", 11) || !end)
			continue;
		snprintf(buf, len, "%.*s", (int)(end - q - 1), q + 1);
		break;
	}
	if (f)
		fclose(f);
}
