#!/bin/bash
# e2e_mpi_checker.sh - tests/check_mpi.py (the checker of traced MPI runs,
# tests/e2e_mpi.sh) can fail, without MPI: its self-test writes a small
# 4-rank MPI archive of its own (with an InterComm) that must pass, then
# breaks one thing at a time and each must be caught; from the command
# line, that archive passes otf2-print -Werror and the checker, and an
# expectation with one count off makes it exit 1 naming the count.
. "$(dirname "$0")/lib.sh"
CHECK_MPI="$WEFT_SRCDIR/tests/check_mpi.py"

out=$("$PY" "$CHECK_MPI" --self-test 2>&1) || fail "check_mpi.py --self-test: $out"
echo "$out"

archive=$("$PY" "$CHECK_MPI" --write-sample "$TMP/sample") ||
    fail "check_mpi.py --write-sample failed"
otf2-print -Werror --silent "$archive" >"$TMP/print.out" 2>&1 ||
    { cat "$TMP/print.out" >&2; fail "otf2-print -Werror rejects the sample archive"; }
expect 0 '"comms": 4' "$PY" "$CHECK_MPI" "$archive" "$TMP/sample/expect"
expect 0 '"locations": 4' "$PY" "$CHECK_MPI" --readers-only "$archive"

# One MpiSend count off on rank 2: exit 1, and the message says so.
"$PY" - "$TMP/sample/expect/rank-2.json" <<'PYEOF' || fail "cannot edit rank-2.json"
import json, sys
j = json.load(open(sys.argv[1]))
j["events"]["MpiSend"] += 1
json.dump(j, open(sys.argv[1], "w"))
PYEOF
expect 1 "rank 2: 2 MpiSend events, the program caused 3" \
    "$PY" "$CHECK_MPI" "$archive" "$TMP/sample/expect"
expect 2 "usage" "$PY" "$CHECK_MPI" "$archive"
echo ok
