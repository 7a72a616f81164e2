#!/bin/bash
# e2e_journal.sh - under systemd (stderr is the stream JOURNAL_STREAM
# names) weftd's messages go to the journal through sd_journal_send with
# structured fields: MESSAGE, PRIORITY, SYSLOG_IDENTIFIER=weftd and, where
# known, TRACE, TRACE_KEY, RANK and PEER. A stand-in journald (a datagram
# socket at /run/systemd/journal/socket, in a private mount namespace so
# the machine's /run is untouched) receives them.
if [ -z "${WEFT_JOURNAL_NS:-}" ]; then
    if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null; then
        echo "SKIP: needs root and unshare(1) for a private /run"
        exit 77
    fi
    exec unshare --mount --propagation private \
        env WEFT_JOURNAL_NS=1 bash "$0" "$@"
fi
mount -t tmpfs tmpfs /run || { echo "cannot mount a private /run" >&2; exit 1; }
mkdir -p /run/systemd/journal
. "$(dirname "$0")/lib.sh"

JOURNALD_PID=
cleanup_journal() {
    [ -n "$JOURNALD_PID" ] && kill "$JOURNALD_PID" 2>/dev/null
    cleanup
}
trap cleanup_journal EXIT

# The stand-in journald: each datagram (the native protocol: KEY=VALUE
# lines, or KEY, a 64-bit little-endian length and the value) becomes one
# JSON object per line in $TMP/journal.jsonl.
"$PY" - "$TMP/journal.jsonl" <<'EOF' &
import json, socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/run/systemd/journal/socket")
open(sys.argv[1] + ".ready", "w").close()
with open(sys.argv[1], "a") as out:
    while True:
        data, fields = s.recv(1 << 20), {}
        while data:
            nl = data.index(b"\n")
            line, data = data[:nl], data[nl + 1:]
            if b"=" in line:
                k, v = line.split(b"=", 1)
            else:
                n = struct.unpack("<Q", data[:8])[0]
                k, v, data = line, data[8:8 + n], data[8 + n + 1:]
            fields[k.decode()] = v.decode("utf-8", "replace")
        out.write(json.dumps(fields) + "\n")
        out.flush()
EOF
JOURNALD_PID=$!
for _ in $(seq 100); do
    [ -e "$TMP/journal.jsonl.ready" ] && break
    sleep 0.05
done
[ -e "$TMP/journal.jsonl.ready" ] || fail "the stand-in journald did not start"

# weftd's stderr is a file; JOURNAL_STREAM names it as systemd would.
: >"$TMP/weftd.log"
JOURNAL_STREAM=$(stat -c '%d:%i' "$TMP/weftd.log") start_weftd --grace-period 1
name=$'jtrace\nweftd: error: forged'
timeout 20 "$RAWPEER" "$WEFT_SERVER" valid "$name" >/dev/null || fail "valid trace"
wait_state "$name" complete 30
stop_weftd
sleep 0.2

[ -s "$TMP/journal.jsonl" ] || fail "nothing reached the journal (stderr: $(head -3 "$TMP/weftd.log"))"
[ ! -s "$TMP/weftd.log" ] || fail "weftd also wrote to stderr: $(head -3 "$TMP/weftd.log")"
"$PY" - "$TMP/journal.jsonl" "$name" <<'EOF' || fail "journal fields: $(head -c 2000 "$TMP/journal.jsonl")"
import json, sys
entries = [json.loads(l) for l in open(sys.argv[1])]
name = sys.argv[2].replace("\n", "\\n")  # fields are escaped like lines
assert entries, "no entries"
for e in entries:
    assert e.get("SYSLOG_IDENTIFIER") == "weftd", e
    assert e.get("PRIORITY") in "01234567" and e["MESSAGE"], e
    assert "\n" not in e["MESSAGE"], ("a message with a newline", e)
assert any("ready" in e["MESSAGE"] for e in entries), "no start-up message"
joined = [e for e in entries if "joined" in e["MESSAGE"]]
assert joined, "no 'joined' message"
j = joined[0]
assert j.get("TRACE") == name, ("TRACE is the name, escaped", j)
assert j.get("TRACE_KEY", "").startswith("jtrace_"), j
assert j.get("RANK") == "0", j
assert j.get("PEER", "").startswith("127.0.0.1:"), j
assert any(e.get("TRACE") == name and "complete" in e["MESSAGE"] and
           e.get("PRIORITY") == "6" for e in entries), "no 'complete' info"
print(len(entries), "entries")
EOF
echo ok
