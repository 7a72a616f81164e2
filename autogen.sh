#!/bin/sh
# Regenerates configure and Makefile.in (they are not committed).
set -e
cd "$(dirname "$0")"
mkdir -p m4
autoreconf --install --force
