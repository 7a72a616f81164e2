#!/bin/bash
# e2e_noplt.sh - the record path of libweft calls nothing through a PLT:
# disassembles libweft.so (objdump, from binutils) and follows every call
# and jump of weft_enter, weft_leave, weft_metric_*, weft_time and the
# weft_evt_* of the common events into the functions they reach, except
# weft__record_slow (the slow path: a new buffer, a flush, a closed
# session). Any `call/jmp ...@plt` there fails, as does a general-dynamic
# TLS access (__tls_get_addr) or a function that is not found. In a
# sanitizer build the calls of ASan/UBSan checks into their runtime are
# allowed (they only exist there).
. "$(dirname "$0")/lib.sh"

LIB="$WEFT_BUILDDIR/.libs/libweft.so"
[ -f "$LIB" ] || fail "$LIB not built (shared libraries disabled?)"
command -v objdump >/dev/null || fail "objdump (binutils) is not installed"
objdump -d --no-show-raw-insn "$LIB" >"$TMP/dis" || fail "objdump $LIB failed"

"$PY" - "$TMP/dis" <<'PYEOF' || fail "the record path calls through a PLT"
import re, sys
funcs, cur = {}, None
for line in open(sys.argv[1]):
    m = re.match(r'^[0-9a-f]+ <([^>]+)>:$', line)
    if m:
        cur = m.group(1)
        funcs[cur] = []
    elif cur and line.strip():
        funcs[cur].append(line.rstrip())
roots = ["weft_enter", "weft_leave", "weft_metric_u64", "weft_metric_i64",
         "weft_metric_double", "weft_time", "weft_evt_Enter",
         "weft_evt_Leave", "weft_evt_Metric", "weft_evt_MpiSend",
         "weft_evt_MpiRecv"]
slow = {"weft__record_slow"}
sanitizer = ("__asan_", "__ubsan_", "__sanitizer_")
bad, seen, todo = [], set(), list(roots)
while todo:
    f = todo.pop()
    if f in seen:
        continue
    seen.add(f)
    if f not in funcs:
        bad.append("%s: not found in libweft.so" % f)
        continue
    for ins in funcs[f]:
        if "__tls_get_addr" in ins:
            bad.append("%s: general-dynamic TLS: %s" % (f, ins.strip()))
        m = re.search(r'\b(call|jmp)\w*\s+[0-9a-f]+ <([^>+]+)(\+0x[0-9a-f]+)?>',
                      ins)
        if not m:
            continue
        target = m.group(2)
        if target.startswith(sanitizer):
            continue  # --enable-sanitizers: checks call their runtime
        if target.endswith("@plt"):
            bad.append("%s: %s" % (f, ins.strip()))
        elif target != f and target not in slow:
            todo.append(target)
for b in bad:
    print("e2e_noplt: " + b, file=sys.stderr)
print("checked %d functions: %s" % (len(seen), " ".join(sorted(seen))))
sys.exit(1 if bad else 0)
PYEOF
echo "ok: no PLT call on the record path"
