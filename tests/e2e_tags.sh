#!/bin/bash
# e2e_tags.sh - WEFT_TAGS reaches weftd as Hello.tags: a stand-in server
# (Python, on a free loopback port) reads the Hello, prints its tags and
# refuses the process (which then runs untraced). Good lists arrive parsed
# (escaped commas and backslashes included); bad ones get a warning that
# names WEFT_TAGS and the bad part, and no tags - or, with
# WEFT_REQUIRED=1, the process does not start tracing at all.
. "$(dirname "$0")/lib.sh"
CLOCKTEST="$WEFT_BUILDDIR/tests/weft-clocktest"

# hello_tags VALUE: runs a traced program with WEFT_TAGS=VALUE against the
# stand-in; its stderr goes to $TMP/err, the tags weftd saw to $TMP/tags.
hello_tags() {
    rm -f "$TMP/port" "$TMP/tags"
    "$PY" - "$TMP/port" >"$TMP/tags" <<'PYEOF' &
import os, socket, struct, sys
def fields(buf):
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        if key & 7 == 0:
            val, i = varint(buf, i)
        elif key & 7 == 2:
            n, i = varint(buf, i)
            val, i = buf[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % (key & 7))
        yield key >> 3, val
def varint(buf, i):
    v = s = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7f) << s
        s += 7
        if not b & 0x80:
            return v, i
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(1)
srv.settimeout(30)
open(sys.argv[1], "w").write(str(srv.getsockname()[1]))
c, _ = srv.accept()
c.settimeout(30)
# weftd speaks first over TCP: a Challenge (Envelope field 15) of
# protocol 6 with a nonce and the uid it runs as.
def enc(n):
    out = b""
    while True:
        out += bytes([(n & 0x7f) | (0x80 if n > 0x7f else 0)])
        n >>= 7
        if not n:
            return out
ch = b"\x08\x06\x12\x10" + os.urandom(16) + b"\x18" + enc(os.getuid())
c.sendall(struct.pack(">I", len(ch) + 2) + b"\x7a" + bytes([len(ch)]) + ch)
data = b""
while len(data) < 4 or len(data) < 4 + struct.unpack(">I", data[:4])[0]:
    chunk = c.recv(65536)
    if not chunk:
        sys.exit("the client closed before its whole Hello arrived")
    data += chunk
env = data[4:4 + struct.unpack(">I", data[:4])[0]]
hello = dict(fields(env)).get(1, b"")
for no, val in fields(hello):
    if no == 13:
        t = dict(fields(val))
        print("%s=%s" % (t.get(1, b"").decode(), t.get(2, b"").decode()))
err = b"\x08\x01\x12\x07refused"
reply = b"\x3a" + bytes([len(err)]) + err
c.sendall(struct.pack(">I", len(reply)) + reply)
c.close()
PYEOF
    local py=$!
    for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.1; done
    [ -s "$TMP/port" ] || fail "the stand-in server did not start"
    # The stand-in sends its Challenge and reads the Hello: no Auth
    # (WEFT_AUTH=none), so no MAC either.
    WEFT_SERVER="127.0.0.1:$(cat "$TMP/port")" WEFT_TRACE=tags WEFT_TAGS="$1" \
        WEFT_AUTH=none timeout 30 "$CLOCKTEST" 1 0 >/dev/null 2>"$TMP/err"
    PROG_RC=$?
    wait "$py" || fail "the stand-in server failed"
}

hello_tags 'app=lulesh,size=large,note=a\,b\\c,empty='
printf 'app=lulesh\nsize=large\nnote=a,b\\c\nempty=\n' >"$TMP/want"
diff "$TMP/want" "$TMP/tags" >&2 || fail "Hello.tags differ from WEFT_TAGS"
[ "$PROG_RC" -eq 0 ] || fail "the program failed"
grep -q WEFT_TAGS "$TMP/err" && fail "good WEFT_TAGS warned: $(cat "$TMP/err")"
echo "good tags: $(tr '\n' ' ' <"$TMP/tags")"

# bad VALUE PART: a warning naming WEFT_TAGS and PART, no tags sent.
bad() {
    hello_tags "$1"
    [ "$PROG_RC" -eq 0 ] || fail "WEFT_TAGS='$1' stopped the program"
    [ -s "$TMP/tags" ] && fail "WEFT_TAGS='$1': tags were sent: $(cat "$TMP/tags")"
    local shown=$1
    [ ${#1} -gt 80 ] && shown="${1:0:80}..."
    grep -qF "WEFT_TAGS='$shown': $2" "$TMP/err" ||
        fail "WEFT_TAGS='$shown': no warning naming '$2': $(head -c 300 "$TMP/err")"
}
bad 'a=1,,b=2' "'' is not key=value"
bad 'a=1,bad key=2' "'bad key=2' is not key=value"
bad 'novalue' "'novalue' is not key=value"
bad 'a=1,a=2' "key 'a' appears twice"
bad 'a=1,' "a ',' ends the list"
bad "$(printf 'k%d=v,' $(seq 65))x=1" "more than 64 tags"
bad "$(head -c 65 /dev/zero | tr '\0' k)=v" \
    "'$(head -c 48 /dev/zero | tr '\0' k)' is not key=value with a key of 1 to 64 characters"
bad "k=$(head -c 4100 /dev/zero | tr '\0' v)" "longer than 4095 bytes"
echo "bad tags: warned and ignored"

# WEFT_REQUIRED=1 makes a bad list an error.
out=$(WEFT_REQUIRED=1 WEFT_SERVER=127.0.0.1:1 WEFT_TRACE=tags WEFT_TAGS='=x' \
      timeout 30 "$CLOCKTEST" 1 0 2>&1) && fail "WEFT_REQUIRED=1 accepted bad WEFT_TAGS"
echo "$out" | grep -qF "WEFT_TAGS='=x': '=x' is not key=value" ||
    fail "WEFT_REQUIRED=1: no message naming WEFT_TAGS: $out"
echo "ok: WEFT_TAGS"
