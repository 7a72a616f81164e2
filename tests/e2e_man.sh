#!/bin/bash
# e2e_man.sh - the manual pages in man/ render without a warning, and
# cannot silently go stale: every subcommand of `weft --help` and every
# option of its usage lines is in weft(1), every option of `weftd --help`
# in weftd(8), every key of etc/weftd.conf in weftd.conf(5), and every
# WEFT_* variable client/*.c and recorders/*/*.c name in libweft(3).
. "$(dirname "$0")/lib.sh"

MAN="$WEFT_SRCDIR/man"
PAGES="weft.1 weftd.8 weftd.conf.5 libweft.3"
command -v man >/dev/null && command -v groff >/dev/null ||
    { echo "man or groff missing (Debian: man-db groff-base): skipped"; exit 77; }

for p in $PAGES; do
    [ -f "$MAN/$p" ] || fail "man/$p is missing"
    out=$(MANWIDTH=80 man --warnings -E UTF-8 -l "$MAN/$p" 2>&1 >/dev/null) ||
        fail "man -l man/$p failed: $out"
    [ -z "$out" ] || fail "man/$p renders with warnings: $out"
    out=$(groff -man -ww -z "$MAN/$p" 2>&1) || fail "groff man/$p failed: $out"
    [ -z "$out" ] || fail "groff warns on man/$p: $out"
done

# The page source with \- as - and font changes removed.
plain() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$MAN/$1"; }
plain weft.1 >"$TMP/weft.1"
plain weftd.8 >"$TMP/weftd.8"
plain weftd.conf.5 >"$TMP/weftd.conf.5"
plain libweft.3 >"$TMP/libweft.3"

# weft(1): each command in the synopsis and as an entry of COMMANDS, and
# every option of its usage line.
"$WEFT" --help >"$TMP/help" || fail "weft --help failed"
cmds=$(sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p' "$TMP/help")
[ "$(echo "$cmds" | wc -w)" -ge 7 ] || fail "cannot read the commands of weft --help: $cmds"
for c in $cmds; do
    grep -qx "\.B weft $c" "$TMP/weft.1" || fail "weft(1) SYNOPSIS lacks 'weft $c'"
    grep -qx "\.B $c" "$TMP/weft.1" || fail "weft(1) COMMANDS lacks '$c'"
    "$WEFT" "$c" --help >"$TMP/chelp" || fail "weft $c --help failed"
    for o in $(head -n 1 "$TMP/chelp" | grep -oE -- '--[a-z][a-z-]*|-o\b'); do
        [ "$o" = --catalog ] && continue
        grep -qF -- "$o" "$TMP/weft.1" || fail "weft(1) lacks option $o of 'weft $c'"
    done
done
for o in --catalog --help --version WEFT_CATALOG WEFT_CONFIG; do
    grep -qF -- "$o" "$TMP/weft.1" || fail "weft(1) lacks $o"
done

# weftd(8): every long option of weftd --help.
"$WEFTD" --help >"$TMP/dhelp" || fail "weftd --help failed"
opts=$(grep -oE -- '--[a-z][a-z-]*' "$TMP/dhelp" | sort -u)
[ "$(echo "$opts" | wc -w)" -ge 8 ] || fail "cannot read the options of weftd --help: $opts"
for o in $opts SIGTERM SIGHUP weftd.socket; do
    grep -qF -- "$o" "$TMP/weftd.8" || fail "weftd(8) lacks $o"
done

# weftd.conf(5): every key of etc/weftd.conf, as an entry with its type.
keys=$(sed -n 's/^;*\([a-z_][a-z_]*\) *=.*/\1/p' "$WEFT_SRCDIR/etc/weftd.conf")
[ "$(echo "$keys" | wc -w)" -ge 10 ] || fail "cannot read the keys of etc/weftd.conf: $keys"
for k in $keys; do
    grep -qE "^\.BR $k \"" "$TMP/weftd.conf.5" || fail "weftd.conf(5) lacks key $k"
done
for s in $(sed -n 's/^\[\([a-z]*\)\]$/\1/p' "$WEFT_SRCDIR/etc/weftd.conf"); do
    grep -qx "\.SH \[$s\]" "$TMP/weftd.conf.5" || fail "weftd.conf(5) lacks section [$s]"
done

# libweft(3): every WEFT_* variable the client code names, and the API.
vars=$(grep -ohE '"WEFT_[A-Z0-9_]+' "$WEFT_SRCDIR"/client/*.c "$WEFT_SRCDIR"/recorders/*/*.c |
    tr -d '"' | sort -u)
[ "$(echo "$vars" | wc -w)" -ge 10 ] || fail "cannot read the variables of client/*.c: $vars"
for v in $vars; do
    grep -qE "^\.(B|BR|BI) .*\<$v\>" "$TMP/libweft.3" || fail "libweft(3) lacks $v"
done
funcs=$(grep -oE '^WEFT_API [^(]*\b(weft_[a-z_0-9]+)\(' "$WEFT_SRCDIR/client/weft.h" |
        grep -oE 'weft_[a-z_0-9]+\($' | tr -d '(' | sort -u)
[ "$(echo "$funcs" | wc -w)" -ge 15 ] || fail "cannot read the API of weft.h: $funcs"
for f in $funcs; do
    grep -qF "$f(" "$TMP/libweft.3" || fail "libweft(3) lacks $f"
done
echo ok
