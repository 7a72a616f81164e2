#!/bin/bash
# e2e_includes.sh - scripts/check-includes passes on the tree, and fails,
# naming the file, the header and the rooms, when an #include points the
# wrong way (ingest reaching into the trace lifecycle, the weft command
# into weftd, a header name in two rooms, a room it does not know, a
# header included by a path).
set -u
: "${WEFT_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
CHECK="$WEFT_SRCDIR/scripts/check-includes"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/weft-includes.XXXXXX") || exit 99
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$(/usr/bin/python3 "$CHECK" "$WEFT_SRCDIR") ||
    fail "the tree does not pass: $out"
echo "$out"

# A small tree of its own: a room each, then one wrong arrow at a time.
mk() { mkdir -p "$TMP/src/$(dirname "$1")" && printf '%s\n' "$2" >"$TMP/src/$1"; }
mk proto/frame.h '/* frame */'
mk daemon/traces/trace.h '#include "frame.h"'
mk daemon/ingest/server.h '#include "frame.h"'
mk daemon/log.h ''
mk cli/weft.c '#include "frame.h"'
expect() { # WHAT LINE
    local out rc
    out=$(/usr/bin/python3 "$CHECK" "$TMP/src"); rc=$?
    [ "$rc" -eq 1 ] || fail "$1: check-includes exited $rc, not 1: $out"
    grep -qF -- "$2" <<<"$out" || fail "$1: no line '$2' in: $out"
    echo "ok: $1"
}
mk daemon/ingest/session.c '#include "server.h"
#include "trace.h"'
expect "ingest includes the lifecycle" \
    'daemon/ingest/session.c: includes trace.h (daemon/traces/): not allowed from daemon/ingest/'
mk daemon/ingest/session.c '#include "server.h"'
mk cli/run.c '#include "server.h"'
expect "weft includes weftd's headers" \
    'cli/run.c: includes server.h (daemon/ingest/): not allowed from cli/'
rm "$TMP/src/cli/run.c"
mk daemon/convert/server.h ''
expect "one header name in two rooms" \
    'daemon/ingest/session.c: server.h is in'
rm "$TMP/src/daemon/convert/server.h"
mk daemon/newroom/x.c ''
expect "a room it does not know" 'daemon/newroom/: a room scripts/check-includes does not know'
rm -r "$TMP/src/daemon/newroom"
mk daemon/log.c '#include "log.h"
#include "daemon/log.h"'
expect "a header included by a path" 'daemon/log.c: includes daemon/log.h by a path'
