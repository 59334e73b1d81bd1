// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One rank's capture result, written the same by the daemon and by capture --job. */
#include "trace/capture_result.h"

void capture_result__write(struct json_writer *w, const struct capture_result *r)
{
	json_writer__field_string(w, CAPTURE_RESULT_KEY_RESULT, r->result);
	json_writer__field_string(w, CAPTURE_RESULT_KEY_WHY, r->why);
	json_writer__field_i64(w, CAPTURE_RESULT_KEY_FIRST_STEP, r->first_step);
	json_writer__field_i64(w, CAPTURE_RESULT_KEY_LAST_STEP, r->last_step);
	json_writer__field_u64(w, CAPTURE_RESULT_KEY_LAUNCHES, r->launches);
}
