#!/usr/bin/env bash
# cuprobe report on large traces in torch.profiler's layout: one line of 250 MB,
# indented, and cut short in the middle. Each is read a value at a time, so the report's
# memory stays far below the file's size, and its numbers are the ones
# report_large.py counts from the events it wrote (the files are removed).
source "$(dirname "$0")/lib.sh"

LARGE="python3 $ROOT/tests/e2e/report_large.py $CUPROBE $TMP"
$LARGE 250 100
$LARGE 40 60 --indent
$LARGE 120 60 --cut
done_testing
