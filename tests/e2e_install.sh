#!/bin/bash
# e2e_install.sh - `make install` puts every promised file in place; a
# program builds against the installed libweft with pkg-config and runs;
# libweft exports only its public API.
. "$(dirname "$0")/lib.sh"

root="$TMP/root"
make -C "$WEFT_BUILDDIR" install DESTDIR="$root" >"$TMP/install.log" 2>&1 ||
    { tail -n 30 "$TMP/install.log" >&2; fail "make install failed"; }
prefix=$(sed -n 's/^prefix=//p' "$WEFT_BUILDDIR/client/weft.pc")
for f in bin/weftd bin/weft libexec/weft/weft-cli bin/weft-demo include/weft.h include/weft_errors.h \
         include/weft_records.def lib/libweft.so lib/libweft.a lib/libweft-io.so \
         lib/pkgconfig/weft.pc etc/weft/weftd.conf lib/systemd/system/weftd.service \
         lib/systemd/system/weftd.socket lib/sysusers.d/weft.conf \
         share/man/man1/weft.1 share/man/man8/weftd.8 share/man/man5/weftd.conf.5 \
         share/man/man3/libweft.3; do
    [ -e "$root$prefix/$f" ] || fail "make install did not install $prefix/$f"
done
# weft is weft run alone, linking libc only (and the sanitizers'
# runtimes in a sanitizer build); the rest is weft-cli, which
# it looks for where it was installed (here it is only staged: a clear
# error naming that path).
libs=$(readelf -d "$root$prefix/bin/weft" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
       grep -vE '^(libc\.so\.6|lib(a|ub|l)san\.so\.[0-9]+)$')
[ -z "$libs" ] || fail "the installed weft links more than libc: $libs"
if [ ! -e "$prefix/libexec/weft/weft-cli" ]; then
    out=$("$root$prefix/bin/weft" list 2>&1) && fail "weft list ran without weft-cli"
    echo "$out" | grep -qF "cannot run $prefix/libexec/weft/weft-cli" ||
        fail "weft without weft-cli does not say what is missing: $out"
fi
"$root$prefix/libexec/weft/weft-cli" --version | grep -q '^weft ' ||
    fail "the installed weft-cli does not run"
grep -q "^ExecStart=$prefix/bin/weftd" "$root$prefix/lib/systemd/system/weftd.service" ||
    fail "weftd.service does not start the installed weftd"

# The unit passes systemd's own checks (with ExecStart pointed at the
# staged weftd, since nothing is installed for real).
if command -v systemd-analyze >/dev/null; then
    mkdir -p "$TMP/unit"
    sed "s|^ExecStart=[^ ]*|ExecStart=$root$prefix/bin/weftd|" \
        "$root$prefix/lib/systemd/system/weftd.service" >"$TMP/unit/weftd.service"
    out=$(systemd-analyze verify "$TMP/unit/weftd.service" 2>&1) ||
        fail "systemd-analyze verify weftd.service: $out"
    [ -z "$out" ] || fail "systemd-analyze verify weftd.service warns: $out"
    # The socket unit, next to the service it activates.
    cp "$root$prefix/lib/systemd/system/weftd.socket" "$TMP/unit/"
    out=$(systemd-analyze verify "$TMP/unit/weftd.socket" 2>&1) ||
        fail "systemd-analyze verify weftd.socket: $out"
    [ -z "$out" ] || fail "systemd-analyze verify weftd.socket warns: $out"
else
    echo "systemd-analyze not found: unit not verified"
fi

# Only the public API is exported (version WEFT_0), the recorder calls
# of client/recorder.h, the filter of client/ifilter.h and the guard
# variable under their own version WEFT_RECORDER_0, and, without a
# version, recorders/exec.c's wrappers of the calls that end a process
# image.
syms=$(nm -D --defined-only "$root$prefix/lib/libweft.so" | awk '$2 ~ /[TDBR]/ {print $3}')
bad=$(echo "$syms" | grep -vE '^weft_[a-z][A-Za-z0-9_]*@@WEFT_0$' |
      grep -vE '^weft__(recorder|ifilter)_[a-z0-9_]+@@WEFT_RECORDER_0$' |
      grep -vE '^weft__inside@@WEFT_RECORDER_0$' |
      grep -vE '^(_exit|_Exit|execl|execle|execlp|execv|execve|execvp|execvpe|fexecve|posix_spawnp?)$' || true)
[ -z "$bad" ] || fail "libweft.so exports non-API symbols: $bad"
echo "$syms" | grep -q '^weft__recorder_open@@WEFT_RECORDER_0$' ||
    fail "libweft.so does not export weft__recorder_open@@WEFT_RECORDER_0"
for f in weft_open weft_close weft_enter weft_evt_Enter weft_def_Region weft_strerror; do
    nm -D --defined-only "$root$prefix/lib/libweft.so" | grep -qw "$f" ||
        fail "libweft.so does not export $f"
done

cat >"$TMP/app.c" <<'APP'
#include <weft.h>
#include <stdio.h>
int main(void)
{
    if (weft_open() < 0)
        return 1;
    OTF2_RegionRef r = weft_region("app main");
    weft_enter(r);
    weft_leave(r);
    printf("%s\n", weft_strerror(WEFT_EREF));
    return weft_close() < 0;
}
APP
export PKG_CONFIG_PATH="$root$prefix/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$root"
san=
ldd "$root$prefix/lib/libweft.so" | grep -q libasan && san="-fsanitize=address,undefined"
cc $san -o "$TMP/app" "$TMP/app.c" $(pkg-config --cflags --libs weft) ||
    fail "a program does not build against the installed libweft"
out=$(WEFT_SERVER=127.0.0.1:1 WEFT_TRACE=app LD_LIBRARY_PATH="$root$prefix/lib" \
      timeout 30 "$TMP/app" 2>&1) || fail "the installed program failed: $out"
echo "$out" | grep -q "reference to an undefined definition" || fail "unexpected output: $out"
echo ok
