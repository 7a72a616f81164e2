#!/bin/bash
# e2e_users.sh - users reach their own traces and only theirs, and the
# operating system says so, not the weft command's goodwill (#15).
# weftd runs as a user of its own (as under the systemd unit) with a
# munged of the test's own; users A and B (useradd) trace over TCP, C is
# in weftd's admin_group:
#  - the catalog and weftd.status are weftd's alone (0600), traces/ is
#    not listable: A reads neither, and cannot read B's archive;
#  - A's weft list, show, profile, sql, verify, export, status, compare,
#    path, wait and view see A's traces only (weftd answers on its Unix
#    socket, SO_PEERCRED);
#    any OTF2 reader opens A's archive as A (an ACL of A's);
#  - C (admin group) and root see every trace;
#  - A removes A's trace with weft rm, but not B's; a trace that is
#    recording is not removed;
#  - a Query over TCP, of an unknown kind, without a key or after a
#    Hello is refused with an error naming it;
#  - a trace directory an older weftd left readable by all is B's alone
#    after the next start (and only that start says so), and its key,
#    ending in a serial, gets a random tag;
#  - A's weft status shows A's own figures only, C's the machine's; keys
#    end in a random tag: A cannot stat B's trace by a guessed key (#30);
#  - a copy of weft in a sticky directory (as /tmp) that root runs does
#    not run the weft-cli another user put beside it (weft runs weft-cli
#    beside itself only when it has weft's owner and no more writers).
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: needs root (useradd, setpriv)"
    exit 77
fi
start_munged || fail "munged cannot start (scripts/deps.sh installs munge)"
make_user W
make_user A
make_user B
make_user C
make_group ADM "$C"

# What the users run goes where they can run it (the build tree may be
# in a directory only root reaches).
pub=$TMP/pub
cp "$WEFTD" "$WEFT" "$WEFT_CLI" "$RAWPEER" "$pub/"
chmod 755 "$pub"/* "$TMP/munge"
W_SPOOL=$TMP/wspool
mkdir -m 755 "$W_SPOOL" "$TMP/run"
chown "$W" "$W_SPOOL" "$TMP/run"
# socket: the default, SPOOL/weftd.sock
SOCK=$W_SPOOL/weftd.sock
cat >"$pub/weftd.conf" <<EOF
[weftd]
listen = 127.0.0.1:0
spool = $W_SPOOL
munge_socket = $MUNGE_SOCKET
admin_group = $ADM
log_level = debug
grace_period = 600
EOF
chmod 644 "$pub/weftd.conf"
export WEFT_CONFIG=$pub/weftd.conf
CAT=$W_SPOOL/catalog.db

start_w() { # weftd as W, as the systemd unit runs it
    rm -f "$TMP/run/addr"
    (cd "$pub" && exec setpriv --reuid="$W" --regid="$(id -g "$W")" \
        --init-groups -- ./weftd --address-file "$TMP/run/addr") \
        >>"$TMP/weftd.log" 2>&1 &
    WEFTD_PID=$!
    for _ in $(seq 100); do
        [ -s "$TMP/run/addr" ] && [ -S "$SOCK" ] && break
        kill -0 "$WEFTD_PID" 2>/dev/null || fail "weftd exited at start"
        sleep 0.1
    done
    [ -s "$TMP/run/addr" ] || fail "weftd did not start listening within 10 s"
    export WEFT_SERVER
    WEFT_SERVER=$(cat "$TMP/run/addr")
}
start_w

# ucmd USER CMD...: CMD as USER in $pub.
ucmd() {
    local u=$1
    shift
    (cd "$pub" && as "$u" "$@")
}
ucmd "$A" ./weft-rawpeer "$WEFT_SERVER" member a-secret --scenario profile \
    --command "a-secret-cmd" || fail "A's trace was refused"
ucmd "$B" ./weft-rawpeer "$WEFT_SERVER" member b-secret --scenario profile \
    --command "b-secret-cmd" --tag proj=b-secret-tag ||
    fail "B's trace was refused"
# B's second trace waits for its rank 1: it stays recording.
ucmd "$B" ./weft-rawpeer "$WEFT_SERVER" member b-wait --size 2 \
    --scenario none || fail "B's b-wait was refused"

# Root reads the catalog itself.
done2() {
    "$WEFT" list --json >"$TMP/root.json" 2>/dev/null && "$PY" - \
        "$TMP/root.json" <<'PY'
import json, sys
rows = {r["name"]: r["state"] for r in json.load(open(sys.argv[1]))}
assert rows.get("a-secret") == "complete" and rows.get("b-secret") == \
    "complete" and rows.get("b-wait") == "recording", rows
PY
}
for _ in $(seq 200); do done2 && break; sleep 0.1; done
done2 || fail "root does not see the three traces: $(cat "$TMP/root.json")"

# The files: weftd's alone, traces/ passable, not listable.
mode() { stat -c %a "$1"; }
[ "$(mode "$CAT")" = 600 ] || fail "catalog mode $(mode "$CAT")"
[ "$(mode "$W_SPOOL/weftd.status")" = 600 ] ||
    fail "weftd.status mode $(mode "$W_SPOOL/weftd.status")"
[ "$(mode "$W_SPOOL/traces")" = 711 ] ||
    fail "traces/ mode $(mode "$W_SPOOL/traces")"
[ "$(stat -c %U "$CAT")" = "$W" ] || fail "the catalog is not weftd's user's"
for f in "$CAT" "$W_SPOOL/weftd.status"; do
    ucmd "$A" cat "$f" >/dev/null 2>&1 && fail "A reads $f"
done
ucmd "$A" ls "$W_SPOOL/traces" >/dev/null 2>&1 && fail "A lists traces/"

path_of() { # USER NAME: the archive's path as USER's weft show says
    ucmd "$1" ./weft show "$2" --json | "$PY" -c \
        'import json,sys; print(json.load(sys.stdin)["path"])'
}
a_arch=$(path_of "$A" a-secret) || fail "A cannot show A's trace"
b_arch=$(path_of "$B" b-secret) || fail "B cannot show B's trace"

# A sees A's traces only, through every command.
ucmd "$A" ./weft list --json >"$TMP/a.json" || fail "A's weft list failed"
"$PY" - "$TMP/a.json" "$A_UID" <<'PY' || fail "A's list: $(cat "$TMP/a.json")"
import json, sys
rows = json.load(open(sys.argv[1]))
assert [r["name"] for r in rows] == ["a-secret"], rows
assert all(r["uid"] == int(sys.argv[2]) for r in rows), rows
PY
ucmd "$A" ./weft sql --csv "SELECT name, command FROM traces" >"$TMP/a.csv" ||
    fail "A's weft sql failed"
[ "$(cat "$TMP/a.csv")" = "$(printf 'name,command\na-secret,a-secret-cmd')" ] ||
    fail "A's weft sql sees: $(cat "$TMP/a.csv")"
out=$(ucmd "$A" ./weft sql --csv "SELECT count(*) FROM tags WHERE value = \
'b-secret-tag' UNION ALL SELECT count(*) FROM members WHERE trace_id NOT IN \
(SELECT id FROM traces)") || fail "A's weft sql on tags and members failed"
[ "$out" = "$(printf 'count(*)\n0\n0')" ] || fail "A sees B's rows: $out"
out=$(ucmd "$A" ./weft show b-secret 2>&1) && fail "A shows B's trace: $out"
case "$out" in *"no trace 'b-secret'"*) ;; *) fail "A show b-secret: $out";; esac
ucmd "$A" ./weft profile a-secret >/dev/null || fail "A's weft profile failed"
ucmd "$A" ./weft verify a-secret >"$TMP/verify.out" 2>&1 ||
    fail "A cannot verify A's trace: $(cat "$TMP/verify.out")"
ucmd "$A" ./weft export a-secret --format chrome-json -o - >"$TMP/a.trace.json" ||
    fail "A cannot export A's trace"
"$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/a.trace.json" ||
    fail "A's export is not JSON"
# compare, path and wait (#17) too; wait asks weftd again as it polls.
out=$(ucmd "$A" ./weft compare a-secret b-secret 2>&1) && fail "A compares with B's trace: $out"
case "$out" in *"no trace 'b-secret'"*) ;; *) fail "A compare b-secret: $out";; esac
ucmd "$A" ./weft compare a-secret a-secret >/dev/null 2>&1 || fail "A's weft compare failed"
[ "$(ucmd "$A" ./weft path a-secret)" = "$a_arch/traces.otf2" ] ||
    fail "A's weft path: $(ucmd "$A" ./weft path a-secret 2>&1)"
out=$(ucmd "$A" ./weft path b-secret 2>&1) && fail "A gets the path of B's trace: $out"
# weft view (#36): A's own trace served (A has no home here: its index
# stays in memory), B's is no trace
out=$(ucmd "$A" timeout 20 ./weft view b-secret --port 0 2>&1) && fail "A views B's trace: $out"
case "$out" in *"no trace 'b-secret'"*) ;; *) fail "A view b-secret: $out";; esac
ucmd "$A" timeout 60 ./weft view a-secret --port 0 >"$TMP/aview.out" 2>"$TMP/aview.err" &
aview=$!
for _ in $(seq 300); do
    grep -q "^weft view: http" "$TMP/aview.out" 2>/dev/null && break
    kill -0 "$aview" 2>/dev/null || break
    sleep 0.1
done
aurl=$(sed -n 's/^weft view: //p' "$TMP/aview.out")
[ -n "$aurl" ] || fail "A's weft view printed no address: $(cat "$TMP/aview.err")"
"$PY" - "$aurl" <<'PY' || fail "A's weft view does not serve A's trace"
import json, sys, urllib.request
t = json.loads(urllib.request.urlopen(sys.argv[1] + "api/traces", timeout=10).read())
assert [x["name"] for x in t["traces"]] == ["a-secret"], t
PY
kill "$aview" 2>/dev/null
wait "$aview" 2>/dev/null
ucmd "$A" timeout 20 ./weft wait a-secret --timeout 10 || fail "A's weft wait a-secret: exit $?"
ucmd "$A" timeout 20 ./weft wait b-wait --timeout 1.5 >"$TMP/await.err" 2>&1
rc=$?
[ "$rc" -eq 6 ] || fail "A's weft wait of B's trace: exit $rc, expected 6: $(cat "$TMP/await.err")"
ucmd "$B" timeout 20 ./weft wait b-wait --timeout 2.5 2>"$TMP/bwait.err"
rc=$?
[ "$rc" -eq 5 ] || fail "B's weft wait b-wait: exit $rc, expected 5: $(cat "$TMP/bwait.err")"

# The archive: its owner reads it with readers nobody here wrote, others
# do not.
ucmd "$A" otf2-print -Werror --silent "$a_arch/traces.otf2" ||
    fail "otf2-print as A fails on A's archive"
ucmd "$A" "$PY" -c 'import otf2, sys
with otf2.reader.open(sys.argv[1]) as r:
    n = sum(1 for _ in r.events)
assert n > 0, n' "$a_arch/traces.otf2" ||
    fail "the python reader as A fails on A's archive"
ucmd "$B" otf2-print --silent "$a_arch/traces.otf2" >/dev/null 2>&1 &&
    fail "B reads A's archive"
ucmd "$B" cat "$a_arch/traces.def" >/dev/null 2>&1 &&
    fail "B reads A's definitions file"
ucmd "$B" ls "$(dirname "$a_arch")" >/dev/null 2>&1 &&
    fail "B lists A's trace directory"

# weft status: A sees no trace of B's recording; B and C do.
status_names() { # USER
    ucmd "$1" ./weft status --json | "$PY" -c \
        'import json,sys; print(" ".join(t["name"] for t in json.load(sys.stdin)["recording"]))'
}
[ "$(status_names "$A")" = "" ] || fail "A's status: $(status_names "$A")"
[ "$(status_names "$B")" = "b-wait" ] || fail "B's status: $(status_names "$B")"
[ "$(status_names "$C")" = "b-wait" ] || fail "C's status: $(status_names "$C")"
# ... and nothing of the machine's activity (#30): A's own figures only;
# C (admin group) sees them all.
scope_of() { # USER: scope, and the machine-wide keys the status has
    ucmd "$1" ./weft status --json | "$PY" -c 'import json,sys
st = json.load(sys.stdin)
print(st.get("scope"), *sorted(k for k in ("bytes", "refused", "dropped",
      "events_per_s", "converting", "buffered", "limits_reached") if k in st))'
}
[ "$(scope_of "$A")" = "user" ] || fail "A's status: $(scope_of "$A")"
[ "$(scope_of "$C")" = "all buffered bytes converting dropped events_per_s limits_reached refused" ] ||
    fail "C's status: $(scope_of "$C")"
out=$(ucmd "$A" ./weft status) || fail "A's weft status failed"
case "$out" in *"your figures only"*) ;; *) fail "A's weft status: $out";; esac
case "$out" in *"since start"*|*"converting:"*) fail "A's weft status: $out";; esac

# Keys are not guessable (#30): traces/ lets everyone pass, so a key
# ending in a serial let A stat B's trace by its name and second.
b_dkey=$(basename "$(dirname "$b_arch")")
case "$b_dkey" in
*-20[0-9][0-9][0-9][0-9][0-9][0-9]T[0-9][0-9][0-9][0-9][0-9][0-9]Z-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]) ;;
*) fail "B's key $b_dkey does not end in a random tag" ;;
esac
none=$(ucmd "$A" stat "$W_SPOOL/traces/no-such-key" 2>&1 >/dev/null | sed 's/.*: //')
for n in 1 2 3; do
    err=$(ucmd "$A" stat "$W_SPOOL/traces/${b_dkey%-*}-$n" 2>&1 >/dev/null | sed 's/.*: //')
    [ -n "$none" ] && [ "$err" = "$none" ] ||
        fail "A's stat of ${b_dkey%-*}-$n: '$err', of no key: '$none'"
done

# The admin group sees every trace, root too (above).
ucmd "$C" ./weft list --json >"$TMP/c.json" || fail "C's weft list failed"
"$PY" - "$TMP/c.json" <<'PY' || fail "C's list: $(cat "$TMP/c.json")"
import json, sys
names = sorted(r["name"] for r in json.load(open(sys.argv[1])))
assert names == ["a-secret", "b-secret", "b-wait"], names
PY

# weft rm: B's traces are not A's to remove; a recording one is nobody's.
b_key=$("$WEFT" show b-secret --json | "$PY" -c \
    'import json,sys; print(json.load(sys.stdin)["key"])')
out=$(ucmd "$A" ./weft rm b-secret 2>&1) && fail "A removed B's trace: $out"
[ -d "$b_arch" ] || fail "B's archive is gone"
out=$(ucmd "$B" ./weft rm b-wait 2>&1) && fail "B removed a recording trace"
case "$out" in *"still recording"*) ;; *) fail "rm b-wait: $out";; esac
out=$(ucmd "$B" ./weft rm --force b-wait 2>&1) &&
    fail "B removed a recording trace with --force"
case "$out" in *"still recording"*) ;; *) fail "rm --force b-wait: $out";; esac
# Asked for another user's recording trace by its key, weftd says what it
# says of a key that does not exist (it said "still recording").
bw_key=$("$WEFT" show b-wait --json | "$PY" -c \
    'import json,sys; print(json.load(sys.stdin)["key"])')
out=$(ucmd "$A" ./weft-rawpeer "unix:$SOCK" query-remove "$bw_key" 2>&1) ||
    fail "rawpeer query-remove: no Error: $out"
case "$out" in *"you have no trace '$bw_key'"*) ;;
*) fail "A's remove of B's recording trace: $out" ;; esac
out=$(ucmd "$C" ./weft rm b-wait 2>&1) &&
    fail "C (admin group) removed B's recording trace"
case "$out" in *"still recording"*) ;; *) fail "C's rm b-wait: $out";; esac
out=$(ucmd "$A" ./weft-rawpeer "unix:$SOCK" query-remove no-such-key 2>&1)
case "$out" in *"you have no trace 'no-such-key'"*) ;;
*) fail "A's remove of no trace: $out" ;; esac
out=$(ucmd "$A" ./weft rm a-secret 2>&1) || fail "A cannot remove A's trace: $out"
case "$out" in *"removed trace 'a-secret'"*) ;; *) fail "A's rm said: $out";; esac
[ -e "$(dirname "$a_arch")" ] && fail "A's trace directory is still there"
"$WEFT" show a-secret >/dev/null 2>&1 && fail "A's trace is still catalogued"
"$WEFT" show "$b_key" >/dev/null || fail "B's trace went with A's"
grep -q "uid $A_UID: removed trace 'a-secret'" "$TMP/weftd.log" ||
    fail "weftd does not log the removal"

# Queries asked wrongly.
query() { # ADDRESS MODE EXPECTED
    local got
    got=$(ucmd "$A" ./weft-rawpeer "$1" "$2" q 2>&1) ||
        fail "rawpeer $2: no Error: $got"
    case "$got" in *"$3"*) ;; *) fail "rawpeer $2: '$got' does not say '$3'";; esac
}
# WEFT_SOCKET naming no weftd, or a path no socket can have: errors
# that name it, not a catalog A cannot read.
out=$(ucmd "$A" env WEFT_SOCKET="$TMP/no-weftd.sock" ./weft list 2>&1) &&
    fail "weft list with WEFT_SOCKET naming nothing succeeded: $out"
case "$out" in
*"weftd does not answer on $TMP/no-weftd.sock (No such file or directory): is it running?"*) ;;
*) fail "WEFT_SOCKET naming nothing: $out" ;;
esac
long=$TMP/$(printf 'x%.0s' $(seq 120))
out=$(ucmd "$A" env WEFT_SOCKET="$long" ./weft status 2>&1) &&
    fail "weft status with a socket path of 130 bytes succeeded: $out"
case "$out" in *"weftd's socket path $long is too long"*) ;;
*) fail "WEFT_SOCKET too long: $out" ;;
esac

query "$WEFT_SERVER" query "Query over TCP"
query "unix:$SOCK" query-kind "Query of unknown kind 7"
query "unix:$SOCK" query-no-key "Query to remove a trace without its key"
query "unix:$SOCK" query-after-hello "Query after Hello"
kill -0 "$WEFTD_PID" || fail "weftd died"

# The admin group as weftd says it at start, and one that does not exist
# (a reload): a warning naming it; nobody but root then sees all.
grep -q "admin_group $ADM (gid [0-9]*): its members see every trace" \
    "$TMP/weftd.log" || fail "weftd does not say who the admin group is"
sed -i "s/^admin_group = .*/admin_group = wt$$-no-such-group/" "$pub/weftd.conf"
kill -HUP "$WEFTD_PID"
for _ in $(seq 50); do
    grep -q "admin_group = wt$$-no-such-group: no such group" \
        "$TMP/weftd.log" && break
    sleep 0.1
done
grep -q "admin_group = wt$$-no-such-group: no such group" "$TMP/weftd.log" ||
    fail "a missing admin group is not said"
[ "$(status_names "$C")" = "" ] || fail "C still sees B's trace"

# A trace directory as a weftd before per-user permissions left it
# (0755, files 0644, no ACL): the next start makes it B's alone.
b_dir=$(dirname "$b_arch")
setfacl -R -b "$b_dir" && chmod -R go+rX "$b_dir" ||
    fail "cannot make $b_dir as an older weftd did"
ucmd "$A" ls "$b_arch" >/dev/null 2>&1 || fail "the old-style directory is not open"
kill -TERM "$WEFTD_PID"
wait "$WEFTD_PID" 2>/dev/null
# ... and a key as an older weftd gave it, NAME-STAMP-SERIAL, which others
# could guess (#30): the start gives it a random tag, row and directory.
b_oldkey=${b_dkey%-*}-1
mv "$b_dir" "$W_SPOOL/traces/$b_oldkey" || fail "cannot rename $b_dir"
"$PY" - "$CAT" "$b_dkey" "$b_oldkey" <<'PY' || fail "cannot give B's trace an old key"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE traces SET key = ?2, path = replace(path, ?1, ?2) "
           "WHERE key = ?1", (sys.argv[2], sys.argv[3]))
db.commit()
PY
[ "$("$WEFT" show b-secret --json | "$PY" -c \
    'import json,sys; print(json.load(sys.stdin)["key"])')" = "$b_oldkey" ] ||
    fail "B's trace has not the old key"
ucmd "$A" stat "$W_SPOOL/traces/$b_oldkey" >/dev/null 2>&1 ||
    fail "A cannot stat the old key (the test's premise)"
start_w
for _ in $(seq 100); do
    grep -q "1 trace directories an older weftd let others read are now their owners' alone" \
        "$TMP/weftd.log" && break
    sleep 0.1
done
grep -q "1 trace directories an older weftd let others read are now their owners' alone" \
    "$TMP/weftd.log" || fail "weftd did not make the old trace directory private"
for _ in $(seq 50); do
    grep -q "1 trace directories of an older weftd, whose keys others could guess, have keys ending in a random tag now" \
        "$TMP/weftd.log" && break
    sleep 0.1
done
grep -q "1 trace directories of an older weftd, whose keys others could guess, have keys ending in a random tag now" \
    "$TMP/weftd.log" || fail "weftd did not give the old key a tag"
b_arch=$(path_of "$B" b-secret) || fail "B cannot show B's trace after the start"
b_dir=$(dirname "$b_arch")
case "$(basename "$b_dir")" in
"$b_oldkey"-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]) ;;
*) fail "B's old trace: $b_dir" ;;
esac
[ -e "$W_SPOOL/traces/$b_oldkey" ] && fail "the old key's directory is still there"
# 0700 but for B's ACL entry (stat shows the ACL's mask as group bits).
acl=$(getfacl -cp "$b_dir" | tr '\n' ' ')
case "$acl" in
*"user::rwx user:$B:r-x group::--- mask::r-x other::---"*) ;;
*) fail "old trace directory: ACL $acl" ;;
esac
ucmd "$A" ls "$b_arch" >/dev/null 2>&1 && fail "A still reads B's old trace"
ucmd "$B" otf2-print -Werror --silent "$b_arch/traces.otf2" ||
    fail "B cannot read B's old trace after the start made it private"
kill -TERM "$WEFTD_PID"
wait "$WEFTD_PID" 2>/dev/null
start_w
sleep 1
[ "$(grep -c "trace directories an older weftd" "$TMP/weftd.log")" = 1 ] ||
    fail "the second start found old trace directories again"
[ "$(grep -c "trace directories of an older weftd" "$TMP/weftd.log")" = 1 ] ||
    fail "the second start gave keys again"
# B's weft-cli beside root's copy of weft in a sticky directory
mkdir -m 1777 "$TMP/sticky"
cp "$WEFT" "$TMP/sticky/weft"
printf '#!/bin/sh\ntouch "%s"\n' "$TMP/sticky/ran" >"$TMP/b-cli"
chmod 755 "$TMP/b-cli"
as "$B" cp "$TMP/b-cli" "$TMP/sticky/weft-cli" || fail "B cannot write the sticky directory"
out=$("$TMP/sticky/weft" list 2>&1)
[ ! -e "$TMP/sticky/ran" ] || fail "root's weft ran the weft-cli B put beside it"
[ -e /usr/local/libexec/weft/weft-cli ] || echo "$out" | grep -q "cannot run .*libexec/weft/weft-cli" ||
    fail "root's weft does not say it did not find its weft-cli: $out"
# root's own weft-cli beside it is run
rm -f "$TMP/sticky/weft-cli"
cp "$WEFT_CLI" "$TMP/sticky/weft-cli"
"$TMP/sticky/weft" --version | grep -q '^weft ' ||
    fail "root's weft does not run root's weft-cli beside it"
echo "PASS: e2e_users"
