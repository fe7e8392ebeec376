# lib.sh: shared by the integration tests.  Source it, define test
# functions, call them through `check`, end with `finish`.
#
# Every test that exercises the sandbox runs twice: as root (the CI case)
# and as an unprivileged uid with a temporary HOME it owns (the real case).
# for_each_user does that; as_user runs a command as the current test user.
set -u

# A suite started as a background job of a non-interactive shell inherits
# SIGINT and SIGQUIT ignored, under nohup SIGHUP, and so on; kgate keeps an
# ignored signal ignored in the program on purpose, and bash cannot undo an
# ignore it started with.  The suites test the default case, whoever
# starts them: start again with every signal at its default (a test that
# needs a signal ignored ignores it itself, run_signals.sh).
if [ -z "${KG_SIGNALS_RESET:-}" ]; then
    export KG_SIGNALS_RESET=1
    exec env --default-signal bash "$0" "$@"
fi

: "${KGATE_BIN:?run through meson test}"
: "${KGATE_PLUGIN_PATH?run through meson test}"
# KGATE_TEST_PREFIX=DIR: test the kgate installed under DIR (scripts/test's
# installed runs, packaging.sh's .deb), with no plugin path of the build:
# it must find its plugins and the pty shim where meson installed them.
if [ -n "${KGATE_TEST_PREFIX:-}" ]; then
    KGATE_BIN=$KGATE_TEST_PREFIX/bin/kgate
    KGATE_PLUGIN_PATH=
    [ -x "$KGATE_BIN" ] || { echo "FAIL: no installed kgate at $KGATE_BIN"; exit 1; }
    echo "# testing the installed $KGATE_BIN"
fi
export KGATE_PLUGIN_PATH
KG_PASS=0
KG_FAIL=0
KG_TMP=$(mktemp -d /tmp/kgate-test.XXXXXX)
chmod 0755 "$KG_TMP"
# at_exit CMD: CMD (a shell string) runs when the test exits, the last
# registered first, and KG_TMP is removed after all of them.  A test adds
# to this list rather than replacing the EXIT trap, so that what lib.sh
# and the lab helpers set up is always put back.
KG_AT_EXIT=()
at_exit() { KG_AT_EXIT=("$1" "${KG_AT_EXIT[@]}"); }
kg_exit_hooks() {
    local c
    for c in "${KG_AT_EXIT[@]}"; do eval "$c"; done
    rm -rf "$KG_TMP"
}
trap kg_exit_hooks EXIT

# Skip the whole file (exit 77), or fail it when CI says nothing may skip.
skip_all() {
    if [ -n "${KGATE_MUST_WORK:-}" ]; then
        echo "FAIL: would skip, but KGATE_MUST_WORK is set: $*"
        exit 1
    fi
    echo "SKIP: $*"
    exit 77
}

need_cmd() {
    for c in "$@"; do
        command -v "$c" >/dev/null 2>&1 || skip_all "$c is not installed"
    done
}

# check "description" command...: one named assertion.
check() {
    local desc=$1
    shift
    if "$@"; then
        KG_PASS=$((KG_PASS + 1))
        echo "ok - [$KG_WHO] $desc"
    else
        KG_FAIL=$((KG_FAIL + 1))
        echo "not ok - [$KG_WHO] $desc"
    fi
}

finish() {
    echo "$KG_PASS passed, $KG_FAIL failed"
    [ "$KG_FAIL" -eq 0 ] && [ "$KG_PASS" -gt 0 ]
    exit $?
}

# poll N CMD...: up to N tenths of a second until CMD succeeds; every wait
# is bounded, so a failure shows as a failed check, never as a hung test.
poll() {
    local n=$1
    shift
    for _ in $(seq "$n"); do
        "$@" && return 0
        sleep 0.1
    done
    "$@"
}

# gone PID: the process has ended: no such process, or a zombie.  A
# process whose parent died is reaped by the machine's init, and where that
# init does not reap (a shell as PID 1 of a container) it stays a zombie,
# dead all the same, which kill -0 still finds.
gone() {
    local st
    ! kill -0 "$1" 2>/dev/null && return 0
    st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
    [ -z "$st" ] || [ "$st" = Z ]
}
file_has() { grep -q -- "$1" "$2" 2>/dev/null; }
# wait_bounded SECONDS JOB [PID...]: the exit status of background JOB;
# if it has not ended in time, JOB and the PIDs (kgate) are SIGKILLed.
wait_bounded() {
    local secs=$1 job=$2
    shift 2
    if ! timeout "$secs" tail --pid="$job" -f /dev/null; then
        kill -KILL "$@" "$job" 2>/dev/null
    fi
    wait "$job"
}
# SLIRP=yes when slirp4netns, nft, dnsmasq and /dev/net/tun are there;
# as root, /dev/net/tun is opened up for the run (the test user's slirp4netns
# opens it; udev makes it 0666 on an ordinary system) and put back at exit.
slirp_ready() {
    SLIRP=
    command -v slirp4netns >/dev/null && command -v nft >/dev/null &&
        command -v dnsmasq >/dev/null && [ -e /dev/net/tun ] || return 0
    SLIRP=yes
    widen_tun
}

# widen_tun: TUN_MODE is /dev/net/tun's mode ("missing" when there is
# none).  As root, the device is made 0666 for the test and put back at
# exit: the test user's slirp4netns opens it, udev makes it 0666 on an
# ordinary system, and a container or a minimal VM may have 0600.
widen_tun() {
    TUN_MODE=$(stat -c %a /dev/net/tun 2>/dev/null || echo missing)
    [ "$TUN_MODE" != missing ] && [ "$TUN_MODE" != 666 ] && [ "$(id -u)" -eq 0 ] || return 0
    at_exit "chmod $TUN_MODE /dev/net/tun"
    chmod 0666 /dev/net/tun
}

KG_WHO=$(id -un)
KG_UID=$(id -u)
KG_GID=$(id -g)
# The unprivileged uid used when the suite runs as root.
KG_TEST_UID=${KGATE_TEST_UID:-65534}
KG_TEST_GID=${KGATE_TEST_GID:-65534}

# The unprivileged uid must be able to reach the binary and the plugins.  A
# clone under a private directory (/root/...) would hide them: copy them to
# a world-readable place then, the way an installed kgate would be.
if [ "$(id -u)" -eq 0 ] &&
    ! setpriv --reuid="$KG_TEST_UID" --regid="$KG_TEST_GID" --clear-groups \
        test -x "$KGATE_BIN" 2>/dev/null; then
    mkdir -p "$KG_TMP/bin"
    cp "$KGATE_BIN" "$KG_TMP/bin/kgate"
    KGATE_BIN=$KG_TMP/bin/kgate
    kg_new_path=
    kg_i=0
    IFS=: read -r -a kg_dirs <<<"$KGATE_PLUGIN_PATH"
    for kg_d in "${kg_dirs[@]}"; do
        kg_i=$((kg_i + 1))
        mkdir -p "$KG_TMP/plugins/$kg_i"
        cp "$kg_d"/*.so "$KG_TMP/plugins/$kg_i/" 2>/dev/null || true
        # bubblewrap's pty mode looks for its shim beside the plugin.
        cp "$kg_d"/kgate-pty-shim "$KG_TMP/plugins/$kg_i/" 2>/dev/null || true
        kg_new_path=${kg_new_path:+$kg_new_path:}$KG_TMP/plugins/$kg_i
    done
    KGATE_PLUGIN_PATH=$kg_new_path
    export KGATE_PLUGIN_PATH
    chmod -R a+rX "$KG_TMP/bin" "$KG_TMP/plugins"
fi

# kg_reachable FILE: FILE, or when the unprivileged uid cannot read it (a
# clone in /root, mode 0700), a copy of it in $KG_TMP/helpers that it can.
# Every helper a test runs as that uid goes through here: a test program,
# a script of the source tree, a driver of the build tree.
kg_reachable() {
    local f=$1
    if [ "$(id -u)" -ne 0 ] || [ ! -e "$f" ] ||
        setpriv --reuid="$KG_TEST_UID" --regid="$KG_TEST_GID" --clear-groups \
            test -r "$f" 2>/dev/null; then
        printf '%s\n' "$f"
        return
    fi
    mkdir -p "$KG_TMP/helpers"
    local n=0
    while [ -e "$KG_TMP/helpers/$n.$(basename "$f")" ]; do n=$((n + 1)); done
    local to=$KG_TMP/helpers/$n.$(basename "$f")
    cp "$f" "$to" && chmod a+rX "$KG_TMP/helpers" "$to"
    printf '%s\n' "$to"
}

# Sets up a fresh HOME (with a project directory inside it) for user $1
# (root|user) and makes it current: $KG_HOME, $KG_PROJ.  The home is made
# in $KG_HOME_BASE when a test sets it (another filesystem), else $KG_TMP.
use_user() {
    KG_WHO=$1
    KG_HOME=$(mktemp -d "${KG_HOME_BASE:-$KG_TMP}/home.XXXXXX")
    mkdir -p "$KG_HOME/proj"
    if [ "$KG_WHO" = user ] && [ "$(id -u)" -eq 0 ]; then
        chown -R "$KG_TEST_UID:$KG_TEST_GID" "$KG_HOME"
        KG_UID=$KG_TEST_UID
        KG_GID=$KG_TEST_GID
    else
        KG_UID=$(id -u)
        KG_GID=$(id -g)
    fi
    KG_PROJ=$KG_HOME/proj
}

# Runs "$@" as the current test user, with HOME=$KG_HOME, in $KG_PROJ
# unless KG_CWD names another directory.
as_user() {
    local cwd=${KG_CWD:-$KG_PROJ}
    if [ "$KG_WHO" = user ] && [ "$(id -u)" -eq 0 ]; then
        (cd "$cwd" && setpriv --reuid="$KG_TEST_UID" --regid="$KG_TEST_GID" \
            --clear-groups env HOME="$KG_HOME" USER=kgtest \
            KGATE_PLUGIN_PATH="$KGATE_PLUGIN_PATH" "$@")
    else
        (cd "$cwd" && env HOME="$KG_HOME" "$@")
    fi
}

# kg ARGS...: kgate as the current test user.
kg() {
    as_user "$KGATE_BIN" "$@"
}

# Writes the user's config from stdin (creating ~/.kgate as kgate init
# would) and makes it owned by the test user.
write_config() {
    mkdir -p "$KG_HOME/.kgate"
    cat >"$KG_HOME/.kgate/config.yaml"
    chmod 0700 "$KG_HOME/.kgate"
    chmod 0600 "$KG_HOME/.kgate/config.yaml"
    chown -R "$KG_UID:$KG_GID" "$KG_HOME/.kgate" 2>/dev/null || true
}

# git_marks: what the suites of host git's escapes share (git_check,
# git_escape, git_dirs): one identity and no system configuration for every
# git they run, the marker M that a planted command touches (FSM is such a
# command, as a core.fsmonitor), in MARKS, which every test user can write,
# and ran / not_ran, which ask whether it was touched.
git_marks() {
    export GIT_AUTHOR_NAME=kg GIT_AUTHOR_EMAIL=kg@example.org
    export GIT_COMMITTER_NAME=kg GIT_COMMITTER_EMAIL=kg@example.org
    export GIT_CONFIG_NOSYSTEM=1
    MARKS=$KG_TMP/marks
    mkdir -p "$MARKS"
    chmod 1777 "$MARKS"
    M=$MARKS/ran
    FSM="touch $M; false"
    export FSM M
    ran() { [ -e "$M" ]; }
    not_ran() { [ ! -e "$M" ]; }
}

# Users to run sandbox tests as: root and an unprivileged uid when the suite
# runs as root; only the current user otherwise.
test_users() {
    if [ "$(id -u)" -eq 0 ]; then echo root user; else echo user; fi
}

# Fails unless unprivileged bwrap works here (a kernel or AppArmor that
# forbids user namespaces is a reason to skip, never to pass).
need_bwrap() {
    need_cmd bwrap setpriv
    # Not root: the suite already runs unprivileged (and setpriv could not
    # clear the groups), so try bwrap as we are.
    local drop=(setpriv --reuid="$KG_TEST_UID" --regid="$KG_TEST_GID" --clear-groups)
    [ "$(id -u)" -eq 0 ] || drop=()
    if ! "${drop[@]}" bwrap --ro-bind / / --unshare-user --unshare-pid -- /bin/true 2>/dev/null; then
        skip_all "unprivileged bwrap does not work on this machine"
    fi
}

# Plugins installed on this machine are searched too.  Sets INSTALLED (the
# installed plugin directory) and HERMETIC=1 when it holds no plugin with
# suffix $1, so that checks counting on the test plugins alone can run.
check_hermetic() {
    INSTALLED=$(KGATE_PLUGIN_PATH= "$KGATE_BIN" plugins 2>/dev/null |
        sed -n 's/^searched: //p' | awk '{print $NF}')
    HERMETIC=1
    if [ -n "$INSTALLED" ] && ls "$INSTALLED"/*"$1" >/dev/null 2>&1; then
        HERMETIC=0
        echo "# plugins are installed in $INSTALLED: selection checks are not run"
    fi
}

# ---- places without user namespaces --------------------------------------
# Agents often run where user namespaces cannot be made: inside another
# agent's bwrap sandbox, or in a container under Docker's or Podman's
# default seccomp profile.  Two stand-ins, each a command prefix:
#   KG_DISABLE_USERNS   bwrap (0.8.0 or later) with a user namespace of its
#                       own and --disable-userns, which refuses any nested
#                       one (unshare -U fails with ENOSPC: the limit is 0)
#   KG_SECCOMP_NOUSERNS tests/helpers/nouserns-seccomp.c: unshare and clone
#                       with CLONE_NEWUSER -> EPERM, clone3 -> ENOSYS
# in_disable_userns CMD... and in_seccomp_nouserns CMD... run CMD there as
# the current test user (as_user: root, or the unprivileged uid with its
# HOME, in $KG_PROJ).  The prefixes come inside as_user, so the uid is
# dropped before the environment is made, as in a real container.
KG_DISABLE_USERNS=(bwrap --dev-bind / / --unshare-user --disable-userns --proc /proc --)
KG_SECCOMP_NOUSERNS=("$(kg_reachable "${KGATE_TEST_NOUSERNS_SECCOMP:-/nonexistent/nouserns-seccomp}")" --)

in_disable_userns() { as_user "${KG_DISABLE_USERNS[@]}" "$@"; }
in_seccomp_nouserns() { as_user "${KG_SECCOMP_NOUSERNS[@]}" "$@"; }
# in_where WHERE CMD...: CMD as the current test user on the host (host,
# or bwrap for a suite that names the box so) or in one of the two places
# above (disable, seccomp).
in_where() {
    case $1 in
    host | bwrap) shift; as_user "$@" ;;
    disable) shift; in_disable_userns "$@" ;;
    seccomp) shift; in_seccomp_nouserns "$@" ;;
    esac
}

# The Landlock ABI this kernel gives (landlock_create_ruleset's version
# query), 0 when it has none.
landlock_abi() {
    python3 -c 'import ctypes; l=ctypes.CDLL(None, use_errno=True); print(max(0, l.syscall(444, None, 0, 1)))'
}

# Skips (fails in CI) unless both environments can be made here: bwrap with
# --disable-userns, and the seccomp helper (built when libseccomp is).
need_nouserns() {
    need_cmd bwrap setpriv unshare
    bwrap --help 2>&1 | grep -q -- '--disable-userns' ||
        skip_all "bwrap has no --disable-userns (0.8.0 or later needed)"
    [ -x "${KG_SECCOMP_NOUSERNS[0]}" ] ||
        skip_all "tests/helpers/nouserns-seccomp was not built (libseccomp missing)"
}
