// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>
#include "core/steps/step_spec.h"
#include "core/steps/step_tell.h"
#include "util/log.h"

/* A Python program's step named as a symbol: its functions are not symbols. */
static void tell_python_step(const struct step_proc *p, enum log_level level)
{
	if (strncmp(p->comm, "python", 6) && !p->torch_mapped)
		return;
	log_msg(level, "pid %d (%s) runs Python: Python functions are not native symbols%s", p->pid,
	      p->comm, p->torch_mapped ?
		      "; for a PyTorch loop use --step torch (a step ends with each optimizer "
		      "step) or --step torch:PREFIX (with each record_function range whose name "
		      "begins with PREFIX)" : "; a native function the loop calls once a step "
		      "can be, or a USDT probe");
}

void step_tell_missing(const struct step_spec *s, const struct step_proc *p, const char *close,
		       enum step_missing when)
{
	static const char *const how[] = {
		[STEP_NOT_YET] = "not found yet in",
		[STEP_LIKELY] = "not found in any of",
		[STEP_NEVER] = "was never found in",
	};
	static const char *const then[] = {
		[STEP_NOT_YET] = "; waiting for a library that defines it",
		[STEP_LIKELY] = "; check --step (cuprobe record --help); "
				"still looking in the libraries it loads",
		[STEP_NEVER] = "; check --step (cuprobe record --help)",
	};

	log_msg(when == STEP_NEVER ? LOG_ERROR : LOG_WARN,
		"step probe %s %s the %zu objects of pid %d (%s)%s%s%s%s",
		step_spec__str(s), how[when], p->nobjs, p->pid, p->comm,
		when == STEP_LIKELY ? ", which uses CUDA" : "",
		close[0] ? "; close matches: " : "", close, then[when]);
	if (when != STEP_NOT_YET)
		tell_python_step(p, when == STEP_NEVER ? LOG_ERROR : LOG_WARN);
}

void step_tell_torch_missing(const struct step_spec *s, const struct step_proc *p,
			     const char *close, enum step_missing when)
{
	const char *spec = step_spec__str(s);
	bool final = when == STEP_NEVER;

	(void)close;
	if (p->why[0])
		log_msg(final ? LOG_ERROR : LOG_WARN, "--step %s: pid %d (%s): %s (see --step "
			"torch in cuprobe-record(1))", spec, p->pid, p->comm, p->why);
	else if (final && p->torch_mapped)
		p_err("--step %s: pid %d (%s) ended before its step probes were in (they go in "
		      "once %s.so's range exit is looked up, after import torch): no step was "
		      "counted", spec, p->pid, p->comm, STEP_TORCH_LIB);
	else if (final)
		p_err("--step %s: pid %d (%s) never loaded %s.so, where PyTorch's record_function "
		      "ranges begin and end: no step was counted; is it a PyTorch program (import "
		      "torch)? Elsewhere use --step SYMBOL", spec, p->pid, p->comm, STEP_TORCH_LIB);
	else if (!p->waiting)
		p_info("pid %d: --step %s: waiting for torch (%s.so) to be loaded", p->pid, spec,
		       STEP_TORCH_LIB);
}
