#!/bin/bash
# cli.sh: `kgate init` and `kgate network` against a real HOME, as root and
# as an unprivileged uid.
# init and network load no plugin; an empty plugin path (a build with every
# plugin disabled) must not stop this test.
KGATE_PLUGIN_PATH=${KGATE_PLUGIN_PATH:-/nonexistent}
. "$(dirname "$0")/lib.sh"

CFG() { echo "$KG_HOME/.kgate/config.yaml"; }

# Entries of a list key as kgate writes it ("key: []" or "key:" then
# '  - "value"' lines), one per line.
yaml_list() {
    awk -v key="$1" '
        $0 == key ":" { inlist = 1; next }
        inlist && /^  - "/ { v = $0; sub(/^  - "/, "", v); sub(/"$/, "", v); print v; next }
        { inlist = 0 }' "$2"
}

yaml_scalar() {
    sed -n "s/^$1: \\([a-z]*\\)\$/\\1/p" "$2"
}

not() { ! "$@"; }
mode_of() { stat -c %a "$1"; }
owner_of() { stat -c %u "$1"; }

# The last command failed with status $1 and exactly one "kgate:" line.
one_line_error() {
    [ "$rc" -eq "$1" ] && [ "$(wc -l <"$KG_TMP/err")" -eq 1 ] && grep -q '^kgate: ' "$KG_TMP/err"
}

# The last command was a usage error: exit 2, one "kgate:" line first and
# no other, then the usage (of $1) on stderr, nothing on stdout.
usage_error() {
    [ "$rc" -eq 2 ] && [ "$(head -n 1 "$KG_TMP/err" | cut -c1-7)" = "kgate: " ] &&
        [ "$(grep -c '^kgate: ' "$KG_TMP/err")" -eq 1 ] &&
        grep -q "^usage: kgate $1" "$KG_TMP/err" && [ ! -s "$KG_TMP/out" ] ||
        { echo "exit $rc"; cat "$KG_TMP/err"; return 1; }
}

# The last command answered --help: exit 0, the usage (of $1) on stdout,
# nothing on stderr.
help_ok() {
    [ "$rc" -eq 0 ] && grep -q "^usage: kgate $1" "$KG_TMP/out" && [ ! -s "$KG_TMP/err" ] ||
        { echo "exit $rc"; cat "$KG_TMP/out" "$KG_TMP/err"; return 1; }
}

run_kg() {
    kg "$@" >"$KG_TMP/out" 2>"$KG_TMP/err"
    rc=$?
}

test_init() {
    run_kg init
    check "init exits 0" [ "$rc" -eq 0 ]
    check "init creates ~/.kgate 0700" [ "$(mode_of "$KG_HOME/.kgate")" = 700 ]
    check "init creates config.yaml 0600" [ "$(mode_of "$(CFG)")" = 600 ]
    check "files belong to the user" [ "$(owner_of "$(CFG)")" = "$KG_UID" ] &&
        [ "$(owner_of "$KG_HOME/.kgate")" = "$KG_UID" ]
    check "defaults: network restricted" [ "$(yaml_scalar network "$(CFG)")" = restricted ]
    check "defaults: deny_read .env" [ "$(yaml_list deny_read "$(CFG)")" = .env ]
    check "defaults: deny_exec curl wget" [ "$(yaml_list deny_exec "$(CFG)" | tr '\n' ' ')" = "curl wget " ]
    check "defaults: macos_profile permissive" [ "$(yaml_scalar macos_profile "$(CFG)")" = permissive ]
    for k in allow_hosts allow_paths read_paths mask_prefixes pass_env deny_env \
        protect_paths unprotect_paths allow_sockets macos_allow_mach; do
        check "defaults: $k written and empty" grep -qx "$k: \[\]" "$(CFG)"
    done
    check "no temporary file left" [ "$(find "$KG_HOME/.kgate" -mindepth 1 | wc -l)" -eq 1 ]

    echo "# mine" >>"$(CFG)"
    local before
    before=$(sha256sum <"$(CFG)")
    run_kg init
    check "init refuses to overwrite (exit 1, one kgate: line)" one_line_error 1
    check "refusal names the file and --force" grep -q "config.yaml already exists; use --force" "$KG_TMP/err"
    check "refused init leaves the file alone" [ "$(sha256sum <"$(CFG)")" = "$before" ]

    run_kg init --force
    check "init --force exits 0" [ "$rc" -eq 0 ]
    check "init --force rewrote the defaults" not grep -q "# mine" "$(CFG)"
    check "init --force keeps mode 0600" [ "$(mode_of "$(CFG)")" = 600 ]

    run_kg init --bogus
    check "init with an unknown argument is a usage error (2)" usage_error init

    # A dangling symlink in place of the file is an existing file too.
    rm -f "$(CFG)"
    ln -s "$KG_HOME/nowhere" "$(CFG)"
    run_kg init
    check "init refuses over a dangling symlink" one_line_error 1
    check "nothing was created at the link's target" [ ! -e "$KG_HOME/nowhere" ]
    rm -f "$(CFG)"
}

test_network() {
    write_config <<'EOF'
# hand-written
network: restricted
allow_hosts: [a.example]
deny_exec: [nc]
mask_prefixes: [myco_]
read_paths: ["~/with space"]
macos_profile: strict
EOF
    run_kg network open
    check "network open exits 0" [ "$rc" -eq 0 ]
    check "network open written" [ "$(yaml_scalar network "$(CFG)")" = open ]
    check "other keys kept: allow_hosts" [ "$(yaml_list allow_hosts "$(CFG)")" = a.example ]
    check "other keys kept: deny_exec (not reset to the defaults)" [ "$(yaml_list deny_exec "$(CFG)")" = nc ]
    check "other keys kept: mask_prefixes" [ "$(yaml_list mask_prefixes "$(CFG)")" = myco_ ]
    # shellcheck disable=SC2088 # the literal "~" as written in the file
    check "other keys kept: read_paths" [ "$(yaml_list read_paths "$(CFG)")" = "~/with space" ]
    check "other keys kept: macos_profile" [ "$(yaml_scalar macos_profile "$(CFG)")" = strict ]
    check "keys the file did not set get their defaults" [ "$(yaml_list deny_read "$(CFG)")" = .env ]
    check "mode stays 0600" [ "$(mode_of "$(CFG)")" = 600 ]
    check "file stays the user's" [ "$(owner_of "$(CFG)")" = "$KG_UID" ]

    run_kg network off
    check "network off written" [ "$(yaml_scalar network "$(CFG)")" = off ]
    check "network off keeps the host list" [ "$(yaml_list allow_hosts "$(CFG)")" = a.example ]

    run_kg network restricted Api.Example.org b.example api.example.org
    check "network restricted HOST... exits 0" [ "$rc" -eq 0 ]
    check "network restricted written" [ "$(yaml_scalar network "$(CFG)")" = restricted ]
    check "host list replaced, lowercased, deduplicated" \
        [ "$(yaml_list allow_hosts "$(CFG)" | tr '\n' ' ')" = "api.example.org b.example " ]
    check "deny_exec still kept" [ "$(yaml_list deny_exec "$(CFG)")" = nc ]

    run_kg network restricted
    check "network restricted without hosts keeps the list" \
        [ "$(yaml_list allow_hosts "$(CFG)" | tr '\n' ' ')" = "api.example.org b.example " ]

    # Wildcards, ports and addresses: the entries of allow_hosts, read by the
    # same parser (kgate-hostspec.h), written back in their normal form, and
    # the file loads again (run_refuse.sh shows a run with them starting).
    run_kg network restricted '*.Example.COM' 'Api.example.org:443' 198.18.0.9 '*.example.com'
    check "network restricted with a wildcard, a port and an address exits 0" [ "$rc" -eq 0 ]
    check "written in normal form, deduplicated" \
        [ "$(yaml_list allow_hosts "$(CFG)" | tr '\n' ' ')" = "*.example.com api.example.org:443 198.18.0.9 " ]
    run_kg network open
    check "the file written with them loads again (exit 0, got $rc)" [ "$rc" -eq 0 ]
    check "and keeps them" \
        [ "$(yaml_list allow_hosts "$(CFG)" | tr '\n' ' ')" = "*.example.com api.example.org:443 198.18.0.9 " ]
    local hosts_before
    hosts_before=$(sha256sum <"$(CFG)")
    local bad
    for bad in '*' '*.com' '*.example' 'a.*.example' '**.example.com' 'a.example:0' \
        'a.example:65536' 'a.example:080' 'a.example:+80' 'a.example:' '::1' \
        'http://a.example' '*.198.18.0.9'; do
        run_kg network restricted good.example "$bad"
        check "'$bad' refused (exit 1, one kgate: line)" one_line_error 1
        check "'$bad': the line names the entry and says why" \
            grep -qF "invalid host name '$bad': " "$KG_TMP/err"
    done
    check "refused entries leave the file alone" [ "$(sha256sum <"$(CFG)")" = "$hosts_before" ]
    run_kg network restricted Api.Example.org b.example

    local before
    before=$(sha256sum <"$(CFG)")
    run_kg network restricted good.example bad_host
    check "invalid host refused (exit 1, one kgate: line)" one_line_error 1
    check "refusal names the host" grep -q "invalid host name 'bad_host': " "$KG_TMP/err"
    check "refused network leaves the file alone" [ "$(sha256sum <"$(CFG)")" = "$before" ]
    run_kg network restricted 'x.example;rm -rf /'
    check "host with shell characters refused" one_line_error 1
    run_kg network sideways
    check "unknown mode is a usage error (2)" usage_error network
    run_kg network off a.example
    check "network off with hosts is a usage error (2)" usage_error network
    run_kg network
    check "network without a mode is a usage error (2)" usage_error network
    check "usage errors leave the file alone" [ "$(sha256sum <"$(CFG)")" = "$before" ]

    # A broken file is not rewritten: the error names file:line:column.
    write_config <<'EOF'
network: open
deny_exec: nc
EOF
    before=$(sha256sum <"$(CFG)")
    run_kg network off
    check "broken config refused (exit 1, one kgate: line)" one_line_error 1
    check "error names file:line:column" grep -q "config.yaml:2:12: deny_exec: expected a list" "$KG_TMP/err"
    check "broken config left alone" [ "$(sha256sum <"$(CFG)")" = "$before" ]

    # No config yet: network creates it from the defaults.
    rm -rf "$KG_HOME/.kgate"
    run_kg network off
    check "network without a config exits 0" [ "$rc" -eq 0 ]
    check "it created ~/.kgate 0700" [ "$(mode_of "$KG_HOME/.kgate")" = 700 ]
    check "it created config.yaml 0600" [ "$(mode_of "$(CFG)")" = 600 ]
    check "with network off" [ "$(yaml_scalar network "$(CFG)")" = off ]
    check "and the defaults" [ "$(yaml_list deny_exec "$(CFG)" | tr '\n' ' ')" = "curl wget " ]
    run_kg init
    check "init then refuses: the file exists" one_line_error 1
}

test_no_home() {
    local r
    KG_CWD=/ as_user env -u HOME "$KGATE_BIN" init >/dev/null 2>"$KG_TMP/err"
    r=$?
    check "init without HOME fails with one kgate: line" [ "$r" -eq 1 ]
    check "and says HOME" grep -q "^kgate: init: HOME is not set" "$KG_TMP/err"
}

# --help on every command: the usage on stdout, exit 0, nothing done.
test_help() {
    rm -rf "$KG_HOME/.kgate"
    local c
    for c in "" run doctor init network plugins; do
        run_kg $c --help
        check "kgate $c --help: usage on stdout, exit 0" help_ok "${c:-init}"
    done
    run_kg help
    check "kgate help: the same" help_ok init
    run_kg network restricted --help
    check "kgate network restricted --help: the usage, exit 0" help_ok network
    check "--help wrote no config" [ ! -e "$KG_HOME/.kgate" ]
    run_kg init --force --help
    check "init --force --help wrote nothing either" [ ! -e "$KG_HOME/.kgate" ]
    # Usage errors of the command line itself.
    run_kg
    check "no command: a usage error (2)" usage_error init
    run_kg frobnicate
    check "an unknown command: a usage error (2)" usage_error init
    check "the line names it" grep -q "^kgate: unknown command 'frobnicate'" "$KG_TMP/err"
    run_kg run --kg-no-such-option -- true
    check "run with an unknown option: a usage error (2)" usage_error run
    run_kg run true
    check "run without --: a usage error (2)" usage_error run
    run_kg plugins --nope
    check "plugins with an unknown option: a usage error (2)" usage_error plugins
}

for who in $(test_users); do
    use_user "$who"
    test_help
    use_user "$who"
    test_init
    use_user "$who"
    test_network
    use_user "$who"
    test_no_home
done
finish
