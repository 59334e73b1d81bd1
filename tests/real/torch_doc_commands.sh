#!/usr/bin/env bash
# The torch tier's part of tests/e2e/test_doc_commands.sh: every example of
# README.md, docs/ and the man pages that steps by PyTorch's own ranges
# (--step torch) runs as shown, with a real PyTorch training loop on CPU tensors
# (tests/real/torch_train.py) in place of python train.py.
source "$(dirname "$0")/lib.sh"
need_torch
# Enough steps for the examples' schedules (the README's: two cycles of wait=5,
# warmup=1, active=3) and for compare's windows.
DOC_TORCH="$REAL_PY $ROOT/tests/real/torch_train.py --iters 60" exec bash "$ROOT/tests/e2e/test_doc_commands.sh"
