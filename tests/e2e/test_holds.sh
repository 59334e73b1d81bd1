#!/usr/bin/env bash
# Library-map holds are short: a process that dlopens many objects without
# CUDA is held each time for a bounded time, whatever the size of the
# object's symbol tables; every hold is said with -v and counted in the
# trace; objects with launch entry points or a static runtime still have
# every launch recorded; a file two processes map is read once.
source "$(dirname "$0")/lib.sh"

NLIBS=60
NBIG=200000

# A loader: dlopens each path in order; --call SYM N calls SYM(N) in the last one.
cat >"$TMP/loader.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
	const char *sym = NULL;
	int n = 0, i = 1;
	void *h = NULL;

	if (argc > 3 && !strcmp(argv[1], "--call")) {
		sym = argv[2];
		n = atoi(argv[3]);
		i = 4;
	}
	for (; i < argc; i++)
		if (!(h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL))) {
			fprintf(stderr, "loader: %s\n", dlerror());
			return 1;
		}
	if (sym) {
		int (*fn)(int) = (int (*)(int))dlsym(h, sym);

		if (!fn)
			return 1;
		fn(n);
	}
	return 0;
}
EOF
# Small objects with no CUDA, each its own file (inode).
echo 'int tiny_fn(int x) { return x + 1; }' >"$TMP/tiny.c"
# A big one: NBIG exported and NBIG local functions, no CUDA: the walk that a hold must not make.
python3 - "$TMP/big.s" $NBIG <<'EOF'
import sys
n = int(sys.argv[2])
with open(sys.argv[1], "w") as f:
    f.write(".text\n")
    for i in range(n):
        f.write(f".globl big_exported_{i}\n.type big_exported_{i},@function\nbig_exported_{i}: ret\n"
                f".type big_local_{i},@function\nbig_local_{i}: ret\n")
EOF
if ! cc -O1 -o "$TMP/loader" "$TMP/loader.c" -ldl ||
	! cc -shared -fPIC -o "$TMP/libtiny0.so" "$TMP/tiny.c" ||
	! cc -shared -fPIC -nostdlib -o "$TMP/libbig.so" "$TMP/big.s"; then
	not_ok "build the objects" "cc failed"
	done_testing
	exit 0
fi
libs=()
for i in $(seq 1 $NLIBS); do
	cp "$TMP/libtiny0.so" "$TMP/libtiny$i.so"
	libs+=("$TMP/libtiny$i.so")
	# The big object comes half way, among the small ones.
	[ "$i" = $((NLIBS / 2)) ] && libs+=("$TMP/libbig.so")
done

# hold_lines LOG: the -v lines of one process's holds for the loader's own objects.
hold_lines() { grep -E 'held [0-9.]+ ms for lib(tiny[0-9]+|big)\.so' "$1"; }

"$CUPROBE" record -v -o "$TMP/many" -- "$TMP/loader" "${libs[@]}" >"$TMP/many.log" 2>&1
rc=$?
[ $rc = 0 ] && ok "holds: record of $((NLIBS + 1)) dlopens exits 0" ||
	not_ok "holds: record of $((NLIBS + 1)) dlopens exits 0" "rc $rc: $(tail -3 "$TMP/many.log")"
trace=$(trace_in "$TMP/many/run_0")
# Two more runs for the holds' lengths: a hold stretched by this machine's load in one run
# is not in the others, where one that walks the big object's symbols would be in all three.
for r in 2 3; do
	"$CUPROBE" record -v -o "$TMP/many$r" -- "$TMP/loader" "${libs[@]}" >"$TMP/many$r.log" 2>&1
done
python3 - "$TMP/many.log" "$trace" $NLIBS "$TMP/many2.log" "$TMP/many3.log" <<'PY'
import json, re, statistics, sys
log, trace, nlibs, more = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
def holds(path):
    held = [l for l in open(path).read().splitlines() if re.search(r": held [0-9.]+ ms", l)]
    own = {}
    for l in held:
        m = re.search(r"held ([0-9.]+) ms for (lib(?:tiny[0-9]+|big)\.so) \((\d+) objects?, (\d+) probed\)", l)
        if m:
            own[m.group(2)] = (float(m.group(1)), int(m.group(4)))
    return held, own
held, own = holds(log)
ms = [float(re.search(r"held ([0-9.]+) ms", l).group(1)) for l in held]
# Each object's shortest hold of the three runs.
shortest = {k: v[0] for k, v in own.items()}
for path in more:
    for k, v in holds(path)[1].items():
        shortest[k] = min(shortest.get(k, v[0]), v[0])
def check(name, cond, why):
    print(("ok - " if cond else "not ok - ") + name + ("" if cond else ": " + why))
check("holds: every dlopen'd object is held for and said with -v", len(own) == nlibs + 1,
      f"{len(own)} of {nlibs + 1}: {sorted(own)[:5]}")
# The linker's calls before it maps (RT_ADD) hold nothing: one hold per dlopen, not two.
empty = [l for l in held if "(no new objects)" in l]
check("holds: one hold per dlopen, none before the linker maps", len(empty) <= 2,
      f"{len(empty)} holds found nothing new")
check("holds: objects without CUDA have nothing probed", own and all(p == 0 for _, p in own.values()),
      str([k for k, (_, p) in own.items() if p]))
if shortest:
    med = statistics.median(shortest.values())
    worst = max(shortest.items(), key=lambda kv: kv[1])
    # Generous: 20x the median hold (each object's shortest of three runs); the big object
    # has 2x200000 symbols, whose walk would take it far past that in every run.
    check("holds: no hold over 20x the median hold", worst[1] <= 20 * max(med, 0.05),
          f"median {med:.2f} ms, {worst[0]} {worst[1]:.2f} ms at best of three runs")
    check("holds: the big object's hold is no more than 20x the median",
          shortest.get("libbig.so", 1e9) <= 20 * max(med, 0.05),
          f"median {med:.2f} ms, libbig.so {shortest.get('libbig.so')} ms at best of three runs")
try:
    h = json.load(open(trace))["cuprobe"]["holds"]
except Exception as e:
    check("holds: the trace has the holds object", False, repr(e))
    sys.exit(0)
check("holds: the trace counts every hold -v said", h["count"] == len(held), f"{h} against {len(held)} lines")
check("holds: the trace's total is the -v lines' sum", abs(h["total_ms"] - sum(ms)) <= 0.01 * len(ms) + 0.01,
      f"{h['total_ms']} against {sum(ms):.3f}")
check("holds: the trace's max is the longest -v line", abs(h["max_ms"] - max(ms)) <= 0.01,
      f"{h['max_ms']} against {max(ms)}")
PY

# The cache: two processes map the same big library; it is read once.
"$CUPROBE" record -v -o "$TMP/two" -- sh -c "'$TMP/loader' '$TMP/libbig.so'; '$TMP/loader' '$TMP/libbig.so'" \
	>"$TMP/two.log" 2>&1
reads=$(grep -c 'libbig.so: read in' "$TMP/two.log")
known=$(grep -c 'libbig.so: known from an earlier read' "$TMP/two.log")
[ "$reads" = 1 ] && [ "$known" -ge 1 ] && ok "holds: a big library two processes map is read once" ||
	not_ok "holds: a big library two processes map is read once" "read $reads times, known $known times"
expect "holds: -v says how many files were read and answered from the cache" \
	grep -qE 'object files: [0-9]+ read, [1-9][0-9]* answered from the cache' "$TMP/two.log"

# No launch missed: a dlopen'd CUDA library (dlopen_main), and one dlopen'd again and again (dlloop).
CUPROBE_GT=$TMP/dl.gt.json "$CUPROBE" record -o "$TMP/dl" -- "$W/dlopen_main" --iters 10 \
	>"$TMP/dl.log" 2>&1
expect "holds: dlopen_main's launches equal its ground truth" $CHECK match \
	--gt "$TMP/dl.gt.json" "$(trace_in "$TMP/dl/run_0")"
CUPROBE_GT=$TMP/loop.gt.json "$CUPROBE" record -o "$TMP/loop" -- "$W/dlloop" --iters 40 \
	>"$TMP/loop.log" 2>&1
expect "holds: dlloop's launches equal its ground truth" $CHECK match \
	--gt "$TMP/loop.gt.json" "$(trace_in "$TMP/loop/run_0")"

# launches TRACE: how many cudaLaunchKernel calls the trace has.
launches() { python3 -c 'import json,sys; print(sum(1 for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("name") == "cudaLaunchKernel"))' "$1" 2>/dev/null; }

# A dlopen'd library with a static runtime: its launches are local symbols, found by the walk.
cat >"$TMP/kst.cu" <<'EOF'
__global__ void kst_kernel(int *p) { if (p) *p = 1; }
extern "C" int kst_run(int n)
{
	for (int i = 0; i < n; i++)
		kst_kernel<<<2, 32>>>(nullptr);
	return 0;
}
EOF
if "${NVCC:-/usr/local/cuda/bin/nvcc}" -Xcompiler -fPIC -shared -cudart static \
	-o "$TMP/libkst.so" "$TMP/kst.cu" 2>"$TMP/nvcc.log"; then
	"$CUPROBE" record -v -o "$TMP/st" -- "$TMP/loader" --call kst_run 25 "$TMP/libkst.so" \
		>"$TMP/st.log" 2>&1
	n=$(launches "$(trace_in "$TMP/st/run_0")")
	[ "$n" = 25 ] && ok "holds: a dlopen'd static runtime has every launch recorded" ||
		not_ok "holds: a dlopen'd static runtime has every launch recorded" "$n of 25"
	expect "holds: the static runtime's .symtab was walked" grep -q 'libkst.so: read in .*symtab walked' "$TMP/st.log"
else
	not_ok "holds: build a static-runtime library" "$(tail -3 "$TMP/nvcc.log")"
fi
# A process with CUDA probed that forks children which run a new program at
# once (Python's subprocess): a child's scan of the old program stops at its
# exec, and none of the new program's launches is missed. The parent maps four
# runtimes (copies, four files), and each object a scan examines waits 10 ms
# (CUPROBE_SCAN_TEST_PAUSE_MS, as a first attach's grace period may, or not,
# when attaches come in a row): the exec comes during the scan of the copy.
cat >"$TMP/spawner.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
int main(int argc, char **argv)
{
	int n = atoi(argv[2]);

	/* argv[1]: the libraries to map, separated by commas. */
	for (char *lib = strtok(argv[1], ","); lib; lib = strtok(NULL, ","))
		if (!dlopen(lib, RTLD_NOW | RTLD_GLOBAL)) {
			fprintf(stderr, "spawner: %s\n", dlerror());
			return 1;
		}
	for (int i = 0; i < n; i++) {
		pid_t c = fork();
		char gt[4096];

		if (c == 0) {
			snprintf(gt, sizeof(gt), "%s.%d.gt.json", argv[3], i);
			setenv("CUPROBE_GT", gt, 1);
			execv(argv[4], argv + 4);
			_exit(127);
		}
		if (c < 0 || waitpid(c, NULL, 0) != c)
			return 1;
	}
	return 0;
}
EOF
NSPAWN=8
rts=""
for i in 1 2 3 4; do
	cp /usr/local/cuda/lib64/libcudart.so.13 "$TMP/libcudart$i.so" && rts="$rts${rts:+,}$TMP/libcudart$i.so"
done
if cc -O1 -o "$TMP/spawner" "$TMP/spawner.c" -ldl; then
	CUPROBE_SCAN_TEST_PAUSE_MS=10 "$CUPROBE" record -v -o "$TMP/sp" -- "$TMP/spawner" "$rts" \
		$NSPAWN "$TMP/sp" "$W/basic" --threads 1 --iters 5 >"$TMP/sp.log" 2>&1
	rc=$?
	[ $rc = 0 ] && ok "holds: record of a spawner of $NSPAWN children exits 0" ||
		not_ok "holds: record of a spawner of $NSPAWN children exits 0" "rc $rc: $(tail -3 "$TMP/sp.log")"
	bad=""
	for i in $(seq 0 $((NSPAWN - 1))); do
		pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$TMP/sp.$i.gt.json" 2>/dev/null)
		tr=$(ls "$TMP"/sp/run_0/*_"$pid".*.pt.trace.json 2>/dev/null | head -1)
		[ -n "$pid" ] && [ -n "$tr" ] && $CHECK match --gt "$TMP/sp.$i.gt.json" "$tr" >/dev/null 2>&1 ||
			bad="$bad $i"
	done
	[ -z "$bad" ] && ok "holds: every spawned child's launches equal its ground truth" ||
		not_ok "holds: every spawned child's launches equal its ground truth" "children:$bad"
	n=$(grep -c 'ran a new program: the scan of the old one stops' "$TMP/sp.log")
	[ "$n" -ge 1 ] && ok "holds: a child's scan of its old program stops at its exec ($n of $NSPAWN, -v)" ||
		not_ok "holds: a child's scan of its old program stops at its exec (-v)" "$n of $NSPAWN: $(grep -E 'started by|new program' "$TMP/sp.log" | head -4)"
else
	not_ok "holds: build the spawner" "cc failed"
fi
# A child that runs its parent's program again (a rank, a spawned interpreter)
# has the libraries its parent probed probed before it maps them: its dlopen's
# hold attaches nothing, and none of its launches is missed.
if [ -f "$TMP/libkst.so" ]; then
	cat >"$TMP/rerun.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
/*
 * rerun LIB N [child]: forks, dlopens LIB and calls kst_run(N); the child
 * runs this program again (after the parent is done) and does the same. It
 * forks first, so that its copy of the parent has no LIB to be probed on.
 */
static int run(const char *lib, int n)
{
	int (*fn)(int);
	void *h;

	if (!(h = dlopen(lib, RTLD_NOW | RTLD_LOCAL)) || !(fn = (int (*)(int))dlsym(h, "kst_run"))) {
		fprintf(stderr, "rerun: %s\n", dlerror());
		return 1;
	}
	return fn(n);
}

int main(int argc, char **argv)
{
	int fds[2], st;
	char c;

	if (argc < 3)
		return 2;
	if (argc > 3) {
		usleep(100000); /* a rank's own start, before it loads CUDA */
		return run(argv[1], atoi(argv[2]));
	}
	if (pipe(fds))
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			_exit(1);
		execl("/proc/self/exe", argv[0], argv[1], argv[2], "child", (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	if (pid < 0 || run(argv[1], atoi(argv[2])))
		return 1;
	/* RERUN_SWAP=FILE: FILE takes LIB's name before the child runs (another inode). */
	if (getenv("RERUN_SWAP") && rename(getenv("RERUN_SWAP"), argv[1]))
		return 1;
	if (write(fds[1], "x", 1) != 1)
		return 1;
	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : 1;
}
EOF
	if cc -O1 -o "$TMP/rerun" "$TMP/rerun.c" -ldl; then
		"$CUPROBE" record -v -o "$TMP/rr" -- "$TMP/rerun" "$TMP/libkst.so" 25 >"$TMP/rr.log" 2>&1
		rc=$?
		[ $rc = 0 ] && ok "holds: record of a program that runs itself again exits 0" ||
			not_ok "holds: record of a program that runs itself again exits 0" "rc $rc: $(tail -3 "$TMP/rr.log")"
		child=$(sed -n 's/.*pid \([0-9]*\) ([^)]*), started by pid [0-9]*: recorded too/\1/p' "$TMP/rr.log" | head -1)
		grep -q "pid $child: $TMP/libkst.so probed before it is mapped" "$TMP/rr.log" &&
			ok "holds: the child has its parent's library probed before it maps it (-v)" ||
			not_ok "holds: the child has its parent's library probed before it maps it (-v)" \
				"child $child: $(grep -E "pid $child[ :]|started by" "$TMP/rr.log" | grep -v 'map_files\|known from' | head -12)"
		# The calibration's launches are read out of the ring as they come, none lost, and
		# let go: none is left for the first turn, which the command's exec hold waits on.
		expect "holds: the calibration's launches are read as they come and let go, none lost (-v)" \
			grep -qE 'calibration: [1-9][0-9]* launches read from the ring and let go, 0 lost' "$TMP/rr.log"
		# The child's dlopen hold finds libkst.so probed: it is not probed again.
		n=$(grep -c "pid $child: [0-9]* launch probes on .*libkst.so" "$TMP/rr.log")
		[ "$n" = 1 ] && ok "holds: the child's dlopen attaches no launch probe" ||
			not_ok "holds: the child's dlopen attaches no launch probe" "$n attaches: $(grep "pid $child:" "$TMP/rr.log" | head -8)"
		bad=""
		for f in "$TMP"/rr/run_0/*.pt.trace.json; do
			n=$(launches "$f")
			[ "$n" = 25 ] || bad="$bad $(basename "$f"):$n"
		done
		[ -z "$bad" ] && [ "$(ls "$TMP"/rr/run_0/*.pt.trace.json | wc -l)" = 2 ] &&
			ok "holds: parent and child each have their 25 launches recorded" ||
			not_ok "holds: parent and child each have their 25 launches recorded" "$bad; $(ls "$TMP"/rr/run_0)"
		# A child that runs another program (ldconfig, a shell) is not probed ahead
		# on its parent's files; once a process of that program had launch probes,
		# the program's later processes are probed ahead on its files.
		first=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$TMP/sp.0.gt.json" 2>/dev/null)
		last=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$TMP/sp.$((NSPAWN - 1)).gt.json" 2>/dev/null)
		! grep "before it is mapped" "$TMP/st.log" | grep -q . &&
			! grep -q "pid $first: .*before it is mapped" "$TMP/sp.log" &&
			! grep "before it is mapped" "$TMP/sp.log" | grep -qv "libcudart.so.13 probed" &&
			ok "holds: a child running another program is not probed ahead on its parent's files" ||
			not_ok "holds: a child running another program is not probed ahead on its parent's files" "$(grep "before it is mapped" "$TMP/sp.log" | head -3)"
		# basic maps its runtime at startup (DT_NEEDED): its startup hold and the probing
		# ahead race for it, and each wins some of the later children.
		n=$(grep -c "libcudart.so.13 probed before it is mapped" "$TMP/sp.log")
		[ "$n" -ge 1 ] && ok "holds: later processes of that program are probed ahead on its runtime ($n of $((NSPAWN - 1)), -v)" ||
			not_ok "holds: later processes of that program are probed ahead on its runtime (-v)" "0 of $((NSPAWN - 1)): $(grep "pid $last[ :]" "$TMP/sp.log" | head -5)"
		# The library replaced under its name after the parent mapped it: the child is not
		# probed ahead on another file, and its own dlopen probes the new one.
		cp "$TMP/libkst.so" "$TMP/libkst.new"
		RERUN_SWAP=$TMP/libkst.new "$CUPROBE" record -v -o "$TMP/sw" -- "$TMP/rerun" "$TMP/libkst.so" 25 \
			>"$TMP/sw.log" 2>&1
		child=$(sed -n 's/.*pid \([0-9]*\) ([^)]*), started by pid [0-9]*: recorded too/\1/p' "$TMP/sw.log" | head -1)
		! grep -q "pid $child: .* probed before it is mapped" "$TMP/sw.log" &&
			grep -q "not reading /proc/$child/root$TMP/libkst.so: it is another file than the one mapped (inode)" "$TMP/sw.log" &&
			ok "holds: a library replaced under its name is not probed ahead, and said why (-v)" ||
			not_ok "holds: a library replaced under its name is not probed ahead, and said why (-v)" "$(grep "pid $child:\|not reading" "$TMP/sw.log" | head -5)"
		tr=$(ls "$TMP"/sw/run_0/*_"$child".*.pt.trace.json 2>/dev/null | head -1)
		n=$([ -n "$tr" ] && launches "$tr")
		[ "$n" = 25 ] && ok "holds: the child of the replaced library has its 25 launches recorded" ||
			not_ok "holds: the child of the replaced library has its 25 launches recorded" "$n in ${tr:-no trace}"
	else
		not_ok "holds: build rerun" "cc failed"
	fi
fi
done_testing
