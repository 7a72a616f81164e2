#!/bin/bash
# deps.sh [--tests|--bench] - installs the Debian 12 packages weft needs
# to build and test, only those missing; with --tests (scripts/check)
# also the services only tests start; with --bench also the peers the
# benchmarks in bench/ measure against (EZTrace, LTTng-UST, uftrace)
# and what bench/peers.sh reads them with (babeltrace2, /usr/bin/time).
# Run as root (or with sudo available).
set -euo pipefail

PACKAGES=(
    build-essential autoconf automake libtool pkg-config
    libuv1-dev libprotobuf-c-dev protobuf-c-compiler libsqlite3-dev
    libjansson-dev libmicrohttpd-dev libinih-dev zlib1g-dev libcmocka-dev libsystemd-dev
    libopen-trace-format2-dev otf2-tools python3 python3-otf2
    clang libclang-rt-14-dev libomp-dev libdw-dev binutils man-db groff-base
    openmpi-bin libopenmpi-dev mpich libmpich-dev gfortran
    pigz sqlite3 munge libmunge-dev libacl1-dev nettle-dev
)
# tests/e2e_srun.sh starts a cluster of its own from these (it uses
# neither /etc/slurm nor the system's munged). Not for scripts/start: on
# a host with systemd, installing them enables their services.
# acl: setfacl for tests/e2e_users.sh (a trace directory as an older
# weftd left it). chromium: tests/e2e_report.sh renders weft report's page
# headless. lammps: tests/e2e_lammps.sh traces Debian's LAMMPS (`lmp`, on
# Open MPI and libgomp), a real hybrid program, with an input of its own.
if [ "${1:-}" = --tests ]; then
    PACKAGES+=(slurmctld slurmd slurm-client acl chromium lammps)
fi
if [ "${1:-}" = --bench ]; then
    PACKAGES+=(eztrace lttng-tools liblttng-ust-dev uftrace babeltrace2 time)
fi

missing=()
for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "weft: installing ${missing[*]}" >&2
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
