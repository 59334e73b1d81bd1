/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one-trap switch (session_onetrap.c). Session's thread.
 */
#ifndef CORE_SESSION_SESSION_ONETRAP_H
#define CORE_SESSION_SESSION_ONETRAP_H

struct proc_state;
struct session;
struct target;

/*
 * One trap per launch, once the runtime launches entering the driver have
 * shown t's host stubs (ps, as BPF counts them): its runtime's kernel launch
 * probes are left out from then on, the driver's record those launches.
 */
void session_one_trap(struct session *s, struct target *t, const struct proc_state *ps);

#endif /* CORE_SESSION_SESSION_ONETRAP_H */
