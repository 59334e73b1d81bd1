#!/usr/bin/env bash
# The torch tier, across releases: --step torch on PyPI's current torch (the
# venv's, C++11 std::string) and on an older one (venv-torch-old, 2.4.1, built
# with the pre-C++11 std::string, as PyPI's wheels were up to 2.6), each
# against torch.profiler (oracle.sh); cuprobe says which form of
# record_function's entry it found. Then a release whose entry has a form
# cuprobe does not know: an error naming the version found and what was
# looked for. The two std::string forms are also checked on a stand-in
# (torch_abi.cc) where a length read at the other form's place matches nothing.
source "$(dirname "$0")/lib.sh"
if [ "${REAL_TORCH:-0}" != 1 ] || [ "${REAL_TORCH_OLD:-0}" = 0 ]; then
	not_ok "torch and torch ${REAL_TORCH_OLD:-2.4.1} in $REAL_DIR" "not installed: run scripts/install-real.sh --torch (make test-torch does)"
	done_testing
	exit 0
fi
TRAIN=$ROOT/tests/real/torch_train.py
SCHED=3,1,2,2
ITERS=10
source "$ROOT/tests/real/oracle.sh"

# release NAME PYTHON FORM: the version the venv imports, the oracle, and the form found.
release() {
	local name=$1 form=$3 v
	TORCH_PY=$2
	v=$("$TORCH_PY" -c 'import torch; print(torch.__version__)' 2>/dev/null)
	echo "# $name: torch $v ($TORCH_PY)"
	oracle "$name.sgd" torch --opt sgd
	# Another name and length: the prefix compared against each range's own length.
	oracle "$name.user_range" torch:train_step --user-range
	oracle "$name.pick_adam" 'torch:Optimizer.step#Adam' --opt both
	expect "$name: torch $v, record_function's entry found with the $form" \
		grep -q "step probe torch in .*libtorch_cpu.so (range entry and exit, $form)" \
		"$TMP/$name.sgd.cp.log"
}
release current "$REAL_PY" "C++11 std::string"
release old "$REAL_PY_OLD" "pre-C++11 std::string"

# Both std::string ABIs on a stand-in libtorch_cpu.so (torch_abi.cc: the real
# mangled names, built for each), with a loop whose range name is followed by
# zeros: a length read where the other ABI keeps it would match nothing. Two
# active steps, each with its optimizer range.
for abi in 0 1; do
	d=$TMP/abi$abi
	mkdir -p "$d/torch/lib"
	g++ -std=c++17 -O1 -shared -fPIC -DLIB -D_GLIBCXX_USE_CXX11_ABI=$abi \
		-o "$d/torch/lib/libtorch_cpu.so" "$ROOT/tests/real/torch_abi.cc" &&
		g++ -std=c++17 -O1 -D_GLIBCXX_USE_CXX11_ABI=$abi -o "$d/loop" "$ROOT/tests/real/torch_abi.cc" \
			-L"$d/torch/lib" -ltorch_cpu -Wl,-rpath,"$d/torch/lib"
	timeout 120 "$CUPROBE" record -v --step torch --schedule wait=1,warmup=1,active=2,repeat=1 \
		-o "$d/out" -- "$d/loop" 8 >"$d/log" 2>&1
	rc=$?
	[ $abi = 0 ] && form="pre-C++11 std::string" || form="C++11 std::string"
	got=$(python3 - "$d/out" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/run_*/*.pt.trace.json")):
    print(" ".join(e["name"] for e in json.load(open(f))["traceEvents"]
                   if e.get("cat") == "user_annotation"))
PY
)
	want="Optimizer.step#SGD.step ProfilerStep#2 Optimizer.step#SGD.step ProfilerStep#3"
	if [ $rc = 0 ] && [ "$got" = "$want" ] && grep -q "range entry and exit, $form)" "$d/log"; then
		ok "stand-in, $form: two active steps with their ranges ($got)"
	else
		not_ok "stand-in, $form: two active steps with their ranges" \
			"rc $rc, got [$got]; $(grep -m2 'error\|range entry' "$d/log" | tr '\n' ' ')"
	fi
done

# A release whose entry is in a form cuprobe does not know (its exit as 2.x has
# it, a local symbol): an error naming the version, the entry and the tested
# range, never a recording without steps.
mkdir -p "$TMP/new/torch/lib"
echo "__version__ = '2.99.0+newabi'" >"$TMP/new/torch/version.py"
cat >"$TMP/new/f.c" <<'C'
void enter(void) __asm__("_ZN5torch8autograd8profiler25record_function_enter_newESt17basic_string_viewIcSt11char_traitsIcEE");
void enter(void) {}
__attribute__((used)) static void leave(void) __asm__("_ZN5torch8autograd8profilerL24record_function_exit_newERKN3c1013intrusive_ptrINS1_20PythonRecordFunctionENS2_6detail34intrusive_target_default_null_typeIS4_EEEE");
static void leave(void) {}
C
cc -shared -fPIC -o "$TMP/new/torch/lib/libtorch_cpu.so" "$TMP/new/f.c"
expect "stand-in torch 2.99: the exit in its .symtab, the entry in another form" \
	sh -c "nm '$TMP/new/torch/lib/libtorch_cpu.so' | grep -q ' t .*record_function_exit_new' &&
	       nm -D '$TMP/new/torch/lib/libtorch_cpu.so' | grep -q 'record_function_enter_newESt17basic_string_view'"
timeout 120 "$CUPROBE" record --step torch -o "$TMP/e_new" -- \
	env LD_PRELOAD="$TMP/new/torch/lib/libtorch_cpu.so" "$REAL_PY" -c 'print(1)' >"$TMP/e_new.log" 2>&1
rc=$?
[ $rc != 0 ] && grep -q "error: --step torch: .*libtorch_cpu.so (torch 2.99.0+newabi) has no record_function_enter_new (with a C++11 or pre-C++11 std::string): this torch is not supported by --step torch (2.4 to 2.15 tested)" "$TMP/e_new.log" &&
	ok "--step torch, an entry in an unknown form: error naming the version, the entry and the tested range (rc $rc)" ||
	not_ok "--step torch, an entry in an unknown form: error" "rc $rc: $(tr '\n' ' ' <"$TMP/e_new.log")"

done_testing
