/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The rings' records, dispatched by type through one table (session_records.c).
 * Session's thread.
 */
#ifndef CORE_SESSION_SESSION_RECORDS_H
#define CORE_SESSION_SESSION_RECORDS_H

#include <stddef.h>

int session_ctrl_event(void *ctx, void *data, size_t size);
int session_data_event(void *ctx, void *data, size_t size);

#endif /* CORE_SESSION_SESSION_RECORDS_H */
