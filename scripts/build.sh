#!/bin/bash
# build.sh [DIR [configure options...]] - configures (once) and builds weft
# out of tree in DIR (default: build/ in the source tree).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$src/build}
shift || true
[ -x "$src/configure" ] || (cd "$src" && ./autogen.sh >/dev/null 2>&1) ||
    { echo "weft: autogen.sh failed" >&2; exit 1; }
mkdir -p "$dir"
cd "$dir"
[ -f Makefile ] || "$src/configure" --enable-werror "$@" >configure.out ||
    { cat configure.out >&2; exit 1; }
make -j"$(nproc)" >make.out 2>&1 || { tail -n 50 make.out >&2; exit 1; }
