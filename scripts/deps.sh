#!/usr/bin/env bash
# deps.sh: installs what building, demonstrating and testing kgate needs on
# Debian 12.  Idempotent and non-interactive; does nothing when every
# package is already there.  Sourced by scripts/demo and scripts/test.
set -euo pipefail

KGATE_BUILD_DEPS=(gcc g++ make meson ninja-build pkg-config libyaml-dev check uthash-dev
                  libseccomp-dev)
# libmd-dev: SHA-256 for the audit chain (issue 31; core/os/os-hash-linux.c).
KGATE_BUILD_DEPS+=(libmd-dev)
# libsystemd-dev: audit_sink journald (optional at build time: -Djournald).
KGATE_BUILD_DEPS+=(libsystemd-dev)
KGATE_RUN_DEPS=(bubblewrap slirp4netns nftables dnsmasq-base)
# Everything a test runs that Debian 12 minbase lacks.  The tests never
# need curl or wget: a deny-listed name is blocked whether or not it is
# installed (issue 12, section 9).  iptables: restricted_net.sh tries
# `iptables -F` from inside the box, which must fail.  python3-dnslib: the
# DNS server of name_filter.sh (tests/integration/netlab/dns_zone.py).
KGATE_TEST_DEPS=(iproute2 python3 util-linux procps git groff-base man-db
                 dpkg-dev debhelper build-essential fakeroot zsh tmux valgrind
                 clang libclang-rt-14-dev strace iptables python3-dnslib)
# systemd: journald and journalctl, which audit_journald.sh starts in a
# private mount namespace where the machine runs no journal of its own.
KGATE_TEST_DEPS+=(systemd)
# clang-format-14: scripts/check-format, the version pinned (docs/README.md).
KGATE_TEST_DEPS+=(clang-format-14)
# The macOS cross build (scripts/macos-cross): llvm-nm/llvm-objdump and
# ld64.lld inspect and relink the Mach-O files; dpkg-dev (above) unpacks
# libyaml's source package.  zig itself comes from npm, which only needs
# to be there: a nodejs that bundles npm is as good as Debian's npm.
KGATE_CROSS_DEPS=(llvm lld)
KGATE_CROSS_COMMANDS=(npm)
# npm (and the node it brings, 18 or later) is also how tests/integration/
# mcp.sh installs the MCP TypeScript SDK (pinned) that drives kgate mcp.

kgate_install_deps() {
    local want=("$@") missing=() p
    for p in "${want[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
            missing+=("$p")
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "kgate: missing packages: ${missing[*]} (run as root, or apt-get install them)" >&2
        return 1
    fi
    echo "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Installs the package named like each command that is not on PATH.
kgate_install_commands() {
    local c missing=()
    for c in "$@"; do command -v "$c" >/dev/null || missing+=("$c"); done
    [ "${#missing[@]}" -eq 0 ] || kgate_install_deps "${missing[@]}"
}
