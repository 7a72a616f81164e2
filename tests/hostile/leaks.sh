# leaks.sh - #30 finding 6: what bob learns of alice without reading
# anything of hers (a case of tests/e2e_hostile.sh; see its contract).
#  - a trace directory's name is not guessable: bob stats every key
#    alice's trace could have had with a serial (NAME-STAMP-1 .. -50, a
#    second either side of its creation) and each fails as a key that
#    does not exist (ENOENT; b28adc0: stat found it, traces/ is 0711);
#  - ids: bob's two traces around three of alice's are not 4 apart (nor
#    anything small: ids are drawn at random);
#  - bob's weft status shows his own figures only: no machine-wide
#    counters (bytes, refusals, conversions), no trace of alice's;
#  - alice's trace name and command line with ESC, BEL and CR come out
#    escaped in root's weft sql --csv (and list, show).

CASE_WEFTD_CONF=''

# weft as USER ($1) through weftd's socket (the catalog is weftd's alone).
leaks_weft() {
    local who=$1
    shift
    "$who" env WEFT_SOCKET="$SOCK" timeout 20 "$PUB/weft" \
        --catalog "$SPOOL/catalog.db" "$@"
}
leaks_member() { # USER NAME [ARGS...]
    local who=$1 name=$2
    shift 2
    "$who" timeout 30 "$PUB/weft-rawpeer" "$WEFT_SERVER" member "$name" \
        --scenario profile "$@"
}
leaks_id() { # USER NAME
    leaks_weft "$1" show "$2" --json | python3 -c \
        'import json,sys; print(json.load(sys.stdin)["id"])'
}

case_attack() {
    leaks_member asbob leak-b1 || fail "bob's first trace was refused"
    for n in 1 2 3; do
        leaks_member asalice "leak-a$n" --command "a-cmd-$n" ||
            fail "alice's trace leak-a$n was refused"
    done
    leaks_member asbob leak-b2 || fail "bob's second trace was refused"
    leaks_member asalice "$(printf 'esc\033[31mred\007bel\rcr')" \
        --command "$(printf 'rm -rf ~ \033]0;owned\007\r# typed')" ||
        fail "alice's trace with control characters was refused"
    sleep 2 # the traces convert (bob's ids are read in case_check)
}

case_check() {
    local b1 b2 key name stamp created s n guess err none
    # ---- ids ----
    b1=$(leaks_id asbob leak-b1) || fail "bob cannot show leak-b1"
    b2=$(leaks_id asbob leak-b2) || fail "bob cannot show leak-b2"
    if [ "$b2" -gt "$b1" ] && [ $((b2 - b1)) -le 10 ]; then
        fail "bob's ids $b1 and $b2 tell how many traces others made between"
    fi
    # ---- guessed keys of alice's trace ----
    key=$("$PUB/weft" --catalog "$SPOOL/catalog.db" show leak-a2 --json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["key"])') ||
        fail "root cannot show alice's leak-a2"
    created=$("$PUB/weft" --catalog "$SPOOL/catalog.db" show leak-a2 --json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["created"])')
    name=${key%%-20[0-9][0-9][0-9][0-9][0-9][0-9]T*}
    none=$(asbob stat "$SPOOL/traces/no-such-key" 2>&1 >/dev/null |
        sed 's/.*: //')
    [ -n "$none" ] || fail "bob stats a key that does not exist"
    for s in -1 0 1; do
        stamp=$(date -u -d "@$((created + s))" +%Y%m%dT%H%M%SZ)
        for n in $(seq 50); do
            guess=$SPOOL/traces/$name-$stamp-$n
            err=$(asbob stat "$guess" 2>&1 >/dev/null | sed 's/.*: //')
            [ "$err" = "$none" ] ||
                fail "bob's stat of a guessed key $guess: '$err', of no key: '$none'"
        done
    done
    # ---- bob's status ----
    leaks_weft asbob status --json >"$TMP/leaks-status.json" ||
        fail "bob's weft status failed"
    python3 - "$TMP/leaks-status.json" <<'PY' ||
import json, sys
st = json.load(open(sys.argv[1]))
assert st.get("scope") == "user", st
for k in ("bytes", "refused", "dropped", "events_per_s", "converting",
          "conversions_running", "buffered", "limits_reached", "paused"):
    assert k not in st, (k, st)
assert all(t["name"].startswith("leak-b") for t in st["recording"]), st
PY
        fail "bob's status shows others' figures: $(cat "$TMP/leaks-status.json")"
    # ---- control characters in root's outputs ----
    "$PUB/weft" --catalog "$SPOOL/catalog.db" sql --csv \
        "SELECT name, command FROM traces" >"$TMP/leaks.csv" ||
        fail "root's weft sql --csv failed"
    grep -q 'esc\\x1b\[31mred\\x07bel\\rcr' "$TMP/leaks.csv" ||
        fail "alice's name is not escaped in --csv: $(cat -A "$TMP/leaks.csv")"
    "$PUB/weft" --catalog "$SPOOL/catalog.db" list >>"$TMP/leaks.csv" 2>&1
    "$PUB/weft" --catalog "$SPOOL/catalog.db" show \
        "$(printf 'esc\033[31mred\007bel\rcr')" >>"$TMP/leaks.csv" 2>&1 ||
        fail "root cannot show alice's trace with control characters"
    if LC_ALL=C grep -q "$(printf '[\033\007\r]')" "$TMP/leaks.csv"; then
        fail "root's weft sql --csv, list or show print control characters raw"
    fi
}
