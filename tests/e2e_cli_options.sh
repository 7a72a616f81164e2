#!/bin/bash
# e2e_cli_options.sh - the weft command line: the short options give what
# their long forms give, options and arguments mix in any order (global
# options before or after the command), "--" ends the options, and a bad
# option is a usage error (exit 2) naming it.
. "$(dirname "$0")/lib.sh"

CAT="$SPOOL/catalog.db"
W() { timeout 30 "$WEFT" "$@"; }

same() { # what: the outputs of the two commands in $TMP/a and $TMP/b
    cmp -s "$TMP/a" "$TMP/b" || { diff -u "$TMP/a" "$TMP/b" >&2; fail "$1"; }
    [ -s "$TMP/a" ] || fail "$1: no output"
}

start_weftd
WEFT_TRACE=alpha WEFT_TAGS=k=v timeout 60 "$DEMO" -p 2 -t 2 -n 20 >/dev/null || fail "weft-demo alpha"
wait_state alpha complete
WEFT_TRACE=beta timeout 60 "$DEMO" -p 1 -t 1 -n 20 >/dev/null || fail "weft-demo beta"
wait_state beta complete
stop_weftd

# ---- short options = long options ----
W --catalog "$CAT" list --name alpha --json >"$TMP/a" || fail "list --name --json"
W -c "$CAT" list -n alpha -j >"$TMP/b" || fail "list -n -j"
same "list -n -j differs from list --name --json"
W --catalog "$CAT" list --state complete --user "$(id -u)" --limit 1 --reverse >"$TMP/a" ||
    fail "list --state --user --limit --reverse"
W --catalog "$CAT" list -s complete -u "$(id -u)" -l1 -r >"$TMP/b" || fail "list -s -u -l1 -r"
same "list -s -u -l -r differs"
[ "$(wc -l <"$TMP/b")" -eq 2 ] || fail "list -l1: expected a header and one trace: $(cat "$TMP/b")"
grep -q beta "$TMP/b" && fail "list -r -l1 should show the oldest trace (alpha): $(cat "$TMP/b")"
W --catalog "$CAT" list --tag k=v >"$TMP/a" || fail "list --tag"
W --catalog "$CAT" list -t k=v >"$TMP/b" || fail "list -t"
same "list -t differs from list --tag"
W --catalog "$CAT" show alpha --json >"$TMP/a" || fail "show --json"
W show -j alpha --catalog="$CAT" >"$TMP/b" || fail "show -j, --catalog= after the command"
same "show -j differs from show --json"
W --catalog "$CAT" profile alpha --limit 2 --json >"$TMP/a" || fail "profile --limit --json"
W --catalog "$CAT" profile -jl 2 alpha >"$TMP/b" || fail "profile -jl 2"
same "profile -jl 2 differs from profile --limit 2 --json"
W --catalog "$CAT" sql --json "SELECT name FROM traces ORDER BY id" >"$TMP/a" || fail "sql --json"
W --catalog "$CAT" sql -j -- "SELECT name FROM traces ORDER BY id" >"$TMP/b" || fail "sql -j --"
same "sql -j differs from sql --json"
# an unambiguous prefix of a long option is that option
W --catalog "$CAT" list --rev --js >"$TMP/b" || fail "list --rev --js"
W --catalog "$CAT" list --reverse --json >"$TMP/a" || fail "list --reverse --json"
same "list --rev --js differs from list --reverse --json"

# ---- bad options: exit 2, the option named ----
expect 2 "weft list: unknown option '-x'" "$WEFT" --catalog "$CAT" list -x
expect 2 "weft list: unknown option '--bogus'" "$WEFT" --catalog "$CAT" list --bogus
expect 2 "weft list: unknown option '-f'" "$WEFT" --catalog "$CAT" list -f
expect 2 "weft show: unknown option '-n'" "$WEFT" --catalog "$CAT" show -n alpha alpha
expect 2 "weft: unknown option '-j'" "$WEFT" --catalog "$CAT" -j list
expect 2 "weft: unknown option '--json'" "$WEFT" --json list
expect 2 "Try 'weft list --help'." "$WEFT" --catalog "$CAT" list -x
expect 2 "weft list: -n needs a value" "$WEFT" --catalog "$CAT" list -n
expect 2 "weft list: --limit needs a value" "$WEFT" --catalog "$CAT" list --limit
expect 2 "weft: --catalog needs a FILE" "$WEFT" --catalog
expect 2 "weft: -c needs a FILE" "$WEFT" -c
expect 2 "weft list: --catalog needs a FILE" "$WEFT" list --catalog=
expect 2 "weft export: -o needs a FILE" "$WEFT" --catalog "$CAT" export alpha --format chrome-json -o
expect 2 "weft export: --output needs a FILE" "$WEFT" --catalog "$CAT" export alpha --format chrome-json --output ''
expect 2 "weft list: unknown option '--s'" "$WEFT" --catalog "$CAT" list --s x
expect 2 "weft list: --limit '0': not a number above 0" "$WEFT" --catalog "$CAT" list -l 0
expect 2 "weft list: --state 'done': not one of" "$WEFT" --catalog "$CAT" list -s done
# "--" ends the options: what follows is an argument, here a trace name
expect 1 "no trace '-j'" "$WEFT" --catalog "$CAT" show -- -j
expect 0 "Usage: weft [--catalog FILE] list" "$WEFT" list -h
echo ok
