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
# python3-venv: landlock_exec.sh makes a venv in the Landlock box and runs
# its bin/pip (issue 41).
KGATE_TEST_DEPS+=(python3-venv)
# systemd: journald and journalctl, which audit_journald.sh starts in a
# private mount namespace where the machine runs no journal of its own.
KGATE_TEST_DEPS+=(systemd)
# clang-format-14: scripts/check-format, the version pinned (docs/README.md).
KGATE_TEST_DEPS+=(clang-format-14)
# The real projects real_projects.sh builds and tests in each box
# (scripts/fetch-projects brings their sources): autotools and cmake
# projects, jq's regular expressions, a venv with pytest, npm's.
KGATE_TEST_DEPS+=(autoconf automake libtool cmake libonig-dev python3-venv python3-pytest)
# The macOS cross build (scripts/macos-cross): llvm-nm/llvm-objdump and
# ld64.lld inspect and relink the Mach-O files; dpkg-dev (above) unpacks
# libyaml's source package.  zig itself comes from npm, which only needs
# to be there: a nodejs that bundles npm is as good as Debian's npm.
KGATE_CROSS_DEPS=(llvm lld)
KGATE_CROSS_COMMANDS=(npm)
# The agents' end-to-end suites (tests/integration/agents_*.sh) install
# Claude Code, Gemini CLI and Codex CLI from npm at pinned versions
# (agents_lib.sh) into /var/tmp/kgate-test-agents once, and need network
# access to the npm registry that first time.  Gemini CLI 0.61 needs
# Node.js 20 or later: Debian 12's nodejs is 18, so agents_lib.sh installs
# the registry's node@20 beside the CLIs and runs them with it; npm itself
# is Debian's (KGATE_CROSS_COMMANDS above asks for it).
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

# kgate_apt_source DIR [--download-only] PKG...: Debian's source packages
# PKG in DIR (unpacked unless --download-only), through a private apt
# configuration (sources, lists and cache under DIR/.apt) with deb-src
# entries for the mirrors this machine already uses: nothing in /etc/apt
# changes, and no root is needed.  The lists are fetched once.  A mirror
# may serve a security update's index without its files: then the
# release's own version (PKG/CODENAME) is asked for.  Returns non-zero when
# there is no mirror or a package could not be had.
kgate_apt_source() {
    local dir=$1 apt l p only=() rc=0 codename
    shift
    if [ "${1:-}" = --download-only ]; then
        only=(--download-only)
        shift
    fi
    apt="$dir/.apt"
    rm -rf "$apt"
    mkdir -p "$apt/sources.d" "$apt/lists/partial" "$apt/cache/archives/partial"
    # Both formats: deb822 (.sources, a cloud image's) and one-line
    # (sources.list, what debootstrap writes).
    local srcs=(/etc/apt/sources.list.d/*.sources)
    if [ -e "${srcs[0]}" ]; then
        awk 'BEGIN { RS = ""; ORS = "\n\n" } /(^|\n)Types:[^\n]*deb/ {
                 sub(/Types:[^\n]*/, "Types: deb-src"); print }' "${srcs[@]}" \
            >"$apt/sources.d/deb-src.sources"
    fi
    for l in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$l" ] && sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$l"
    done >"$apt/sources.list"
    if ! [ -s "$apt/sources.list" ] && ! [ -s "$apt/sources.d/deb-src.sources" ]; then
        echo "no Debian mirror in /etc/apt/sources.list or sources.list.d to fetch from" >&2
        return 1
    fi
    local aptopt=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/sources.d"
                  -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
                  -o APT::Sandbox::User=root -qq)
    apt-get "${aptopt[@]}" update >/dev/null || return 1
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    for p in "$@"; do
        (cd "$dir" && apt-get "${aptopt[@]}" source "${only[@]}" "$p" >/dev/null 2>&1) ||
            { [ -n "$codename" ] &&
                (cd "$dir" && apt-get "${aptopt[@]}" source "${only[@]}" "$p/$codename" \
                    >/dev/null 2>&1); } || {
            echo "apt-get source $p failed" >&2
            rc=1
        }
    done
    rm -rf "$apt"
    return $rc
}
