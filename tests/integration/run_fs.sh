#!/usr/bin/env bash
# The filesystem box of `kgate run` on Linux (bubblewrap backend), as root
# and as an unprivileged uid: the home is hidden, the project is writable,
# a deny_read file or directory cannot be opened (stat still works), the
# host's /var/tmp is private as /tmp, read_paths under $HOME are readable,
# nothing outside the project is writable,
# a symlink from the project into $HOME does not leak, and --dry-run prints
# the argv that docs/bubblewrap.md describes.
. "$(dirname "$0")/lib.sh"
need_bwrap

# Drafted with the backend, before `kgate run` existed: skip until it can
# at least print a plan (CI's KGATE_MUST_WORK turns this into a failure).
probe_home=$(mktemp -d "$KG_TMP/probe.XXXXXX")
mkdir -p "$probe_home/proj"
(cd "$probe_home/proj" && HOME=$probe_home "$KGATE_BIN" run --dry-run -- /bin/true) \
    >/dev/null 2>&1 || skip_all "kgate run --dry-run does not work yet"

# Helpers, so that `check` can run them in this shell (kg is a function).
output_has() { # output_has PATTERN CMD...: CMD's stdout matches PATTERN
    local pat=$1
    shift
    "$@" 2>/dev/null | grep -q -- "$pat"
}
# ran_then CMDLINE: the sandboxed sh prints kg-ran before CMDLINE, so a
# check on what CMDLINE printed (or failed to) cannot pass on a run that
# never started.  Prints what CMDLINE printed, after the marker.
ran_then() {
    local out
    out=$(kg run -- sh -c "echo kg-ran; $1" 2>&1) || true
    [ "${out%%$'\n'*}" = kg-ran ] || { echo "the run did not happen: $out" >&2; return 1; }
    case $out in *$'\n'*) printf '%s\n' "${out#*$'\n'}" ;; esac
}
# after_marker_empty CMDLINE / after_marker_has PATTERN CMDLINE
after_marker_empty() { local o; o=$(ran_then "$1") && [ -z "$o" ]; }
after_marker_has() { local o; o=$(ran_then "$2") && printf '%s\n' "$o" | grep -q -- "$1"; }

VT_LEFT=/var/tmp/kgate-run-fs-left.$$
at_exit "rm -f '$VT_LEFT' /var/tmp/kgate-run-fs-private /var/kgate-run-fs-escape"

for who in $(test_users); do
    use_user "$who"
    write_config <<EOF
network: off
read_paths: [~/.gitconfig, ~/.kgfs-conf]
deny_read: [.env, private, ~/.kgfs-conf/token]
EOF
    echo "real secret" >"$KG_HOME/secret.txt"
    echo "[user] name = kg" >"$KG_HOME/.gitconfig"
    echo "TOKEN=abc" >"$KG_PROJ/.env"
    mkdir -p "$KG_PROJ/private"
    echo "key" >"$KG_PROJ/private/key"
    ln -s "$KG_HOME/secret.txt" "$KG_PROJ/link-to-secret"
    mkdir -p "$KG_HOME/.kgfs-conf"
    echo "kgfs-setting" >"$KG_HOME/.kgfs-conf/settings"
    echo "kgfs-token-value" >"$KG_HOME/.kgfs-conf/token"
    chown -R "$KG_UID:$KG_GID" "$KG_HOME"

    check "control: the secret is readable outside" grep -qx "real secret" "$KG_HOME/secret.txt"
    check "a secret in \$HOME is not readable" \
        after_marker_has "No such file" "cat '$KG_HOME/secret.txt'"
    check "a symlink from the project into \$HOME does not leak" \
        after_marker_has "No such file" "cat '$KG_PROJ/link-to-secret'"
    check "a write into \$HOME succeeds inside (tmpfs)" \
        kg run -- sh -c "echo planted > '$KG_HOME/secret.txt'"
    check "and the real file is untouched" grep -qx "real secret" "$KG_HOME/secret.txt"
    check "read_paths under \$HOME are readable" \
        output_has "name = kg" kg run -- cat "$KG_HOME/.gitconfig"
    check "the project is writable" kg run -- sh -c 'echo ok > written'
    check "and the write reached the real project" grep -qx ok "$KG_PROJ/written"
    # Refused rather than shown empty, as in the Landlock box: a read that
    # succeeds would tell git add or tar the secret is an empty file
    # (docs/one-view.md).  Root inside has no capabilities to get past
    # the cover's mode 0.
    check "a deny_read file cannot be opened" \
        after_marker_has "Permission denied" "cat '$KG_PROJ/.env'"
    check "nor written" after_marker_has "Permission denied" "echo X=1 >>'$KG_PROJ/.env'"
    check "nor made readable" after_marker_has "Read-only file system" "chmod 644 '$KG_PROJ/.env'"
    check "but it still stats (a tool sees a file held back, not a missing one)" \
        after_marker_has "^regular" "stat -c %F '$KG_PROJ/.env'"
    check "and the host's file is unchanged" grep -qx "TOKEN=abc" "$KG_PROJ/.env"
    check "a deny_read directory cannot be listed" \
        after_marker_has "Permission denied" "ls -A '$KG_PROJ/private'"
    check "nor the file in it read" after_marker_has "Permission denied" "cat '$KG_PROJ/private/key'"
    # Under a directory given back from the hidden home, the tmpfs over the
    # home no longer hides anything: only the deny_read cover does.  The
    # neighbour file is the control (the directory is really given back).
    check "control: a read_paths directory in \$HOME is readable" \
        after_marker_has kgfs-setting "cat '$KG_HOME/.kgfs-conf/settings'"
    check "a deny_read file inside it cannot be opened" \
        after_marker_has "Permission denied" "cat '$KG_HOME/.kgfs-conf/token'"
    check "a write outside the project fails" \
        after_marker_has "Read-only file system" "touch /var/kgate-run-fs-escape"
    check "nothing was created outside" test ! -e /var/kgate-run-fs-escape
    # /var/tmp is the box's own, as /tmp: what a user left there is not
    # read, and what the program writes there stays in the box.
    echo "left in var-tmp" >"$VT_LEFT"
    check "control: a file left in the host's /var/tmp is readable outside" \
        as_user grep -q "left in var-tmp" "$VT_LEFT"
    check "a file left in the host's /var/tmp is not there inside" \
        after_marker_has "No such file" "cat '$VT_LEFT'"
    check "a write into /var/tmp succeeds inside (private tmpfs)" \
        after_marker_empty "touch /var/tmp/kgate-run-fs-private"
    check "and it did not reach the host's /var/tmp" test ! -e /var/tmp/kgate-run-fs-private
    check "the working directory is the project" \
        test "$(kg run -- pwd)" = "$KG_PROJ"

    plan=$(kg run --dry-run -- /bin/true)
    check "dry-run shows the tmpfs over \$HOME before the project bind" \
        sh -c 'printf "%s\n" "$1" | grep -q -- "--tmpfs $2 .*--bind $3 $3"' _ "$plan" "$KG_HOME" "$KG_PROJ"
    check "dry-run shows network off" sh -c 'printf "%s\n" "$1" | grep -q -- --unshare-net' _ "$plan"
done
finish
