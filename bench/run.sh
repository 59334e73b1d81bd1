#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make bench: builds the benchmark's own programs (bench/bench.mk), then runs
# bench/bench.py, which prints each figure's raw numbers and ends with one
# line per figure: "bench: <name> <value> (goal <op> <target>)".
# Needs root (BPF) and ./cuprobe and the workloads built (make bench does).
set -eu
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
	echo "bench: cuprobe loads BPF programs: run make bench as root" >&2
	exit 1
fi
make -s --no-print-directory bench-tools
rc=0
# BENCH_ONLY=daemon: the daemon's figures alone.
[ "${BENCH_ONLY:-}" = daemon ] || python3 bench/bench.py "$@" || rc=1
# The daemon's own figures (BENCH_ONLY=daemon runs only them).
case ",${BENCH_ONLY:-daemon}," in *,daemon,*) python3 bench/daemon.py || rc=1 ;; esac
exit $rc
