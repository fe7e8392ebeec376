#!/usr/bin/env bash
# doctor.sh: `kgate doctor` with test-built plugins whose verdicts follow
# the network mode: the last line's format (verdict, backend, a count of
# findings by level; the findings themselves above it), the exit status,
# --json, and
# every reason the core itself says BLOCKED (a broken policy, a working
# directory that covers $HOME, a backend that is not there).
. "$(dirname "$0")/lib.sh"
need_cmd python3

REAL_PLUGIN_PATH=$KGATE_PLUGIN_PATH
TP=$KGATE_BUILD_ROOT/tests/unit/plugins
SUF=.so
[ -e "$TP/tp_good.dylib" ] && SUF=.dylib
PDIR=$KG_TMP/plugins
mkdir -p "$PDIR"
install -m 0644 "$TP/tp_good$SUF" "$PDIR/good$SUF"
install -m 0644 "$TP/tp_nosym$SUF" "$PDIR/broken$SUF"
chmod 0755 "$PDIR"
# The good plugin's table under finding ids the core must refuse; a
# directory of its own so that selection above never meets it.
BDIR=$KG_TMP/badid-plugins
mkdir -p "$BDIR"
install -m 0644 "$TP/badid/tp_badid$SUF" "$BDIR/badid$SUF"
chmod 0755 "$BDIR"
export KGATE_PLUGIN_PATH=$PDIR

check_hermetic "$SUF"

OUT=$KG_TMP/out
ERR=$KG_TMP/err

# doctor ARGS...: runs kgate doctor as the test user; sets $RC.
doctor() {
    RC=0
    kg doctor "$@" >"$OUT" 2>"$ERR" || RC=$?
}
last_line() { tail -n 1 "$OUT"; }
last_is() { [ "$(last_line)" = "$1" ] || { echo "last line: $(last_line)"; return 1; }; }
last_starts() { case "$(last_line)" in "$1"*) ;; *) echo "last line: $(last_line)"; return 1 ;; esac; }
rc_is() { [ "$RC" -eq "$1" ] || { echo "exit $RC, wanted $1"; cat "$ERR"; return 1; }; }
has_line() { grep -qxF -- "$1" "$OUT" || { echo "no line '$1' in:"; cat "$OUT"; return 1; }; }
err_has_line() { grep -qxF -- "$1" "$ERR" || { echo "no line '$1' on stderr:"; cat "$ERR"; return 1; }; }
json() { python3 -c "import json,sys,re; d=json.load(open('$OUT')); sys.exit(0 if ($1) else 1)"; }
# Every finding of the --json output carries an id of the documented form.
ids_ok() {
    json 'd["findings"] and all(re.fullmatch(r"[a-z][a-z0-9-]*(\.[a-z0-9-]+)*", f["id"]) and len(f["id"]) <= 48 and f["id"][-1] != "-" for f in d["findings"])' ||
        { echo "a finding without a valid id:"; cat "$OUT"; return 1; }
}
# Every finding id of a real backend is one docs/plugins.md lists as stable.
ids_documented() {
    python3 - "$OUT" "${KGATE_SOURCE_ROOT:?}/docs/plugins.md" <<'PY' || { cat "$OUT"; return 1; }
import json, re, sys
listed = set(re.findall(r"^\| `([a-z0-9.-]+)` \|", open(sys.argv[2]).read(), re.M))
missing = sorted({f["id"] for f in json.load(open(sys.argv[1]))["findings"]} - listed)
print("not in docs/plugins.md:", missing) if missing else None
sys.exit(1 if missing or not listed else 0)
PY
}
# has_id ID VERDICT: a finding of the --json output with that id and verdict.
has_id() {
    json 'any(f["id"] == "'"$1"'" and f["verdict"] == "'"$2"'" for f in d["findings"])' ||
        { echo "no $2 finding $1 in:"; cat "$OUT"; return 1; }
}
no_id() {
    json 'all(f["id"] != "'"$1"'" for f in d["findings"])' || { echo "finding $1 in:"; cat "$OUT"; return 1; }
}
# finding VERDICT ERE: a finding line above the verdict line ("  BLOCKED   text").
finding() {
    grep -qE "^  $(printf '%-8s' "$1")  $2" "$OUT" || { echo "no $1 finding /$2/ in:"; cat "$OUT"; return 1; }
}
# The verdict line is short and its counts are the finding lines above it.
verdict_line_ok() {
    local last want
    last=$(last_line)
    [ "${#last}" -le 120 ] || { echo "verdict line of ${#last} characters: $last"; return 1; }
    want="$(grep -c '^  BLOCKED   ' "$OUT") blocked, $(grep -c '^  DEGRADED  ' "$OUT") degraded, $(grep -c '^  READY     ' "$OUT") ready"
    case "$last" in *": $want") ;; *) echo "last line: $last; findings above: $want"; return 1 ;; esac
}

for who in $(test_users); do
    use_user "$who"

    # No config file: the spec's defaults, restricted with no hosts = off.
    doctor --backend good
    check "default policy is READY, exit 0" rc_is 0
    check "last line: verdict, backend, counts" last_is "READY good: 0 blocked, 0 degraded, 1 ready"
    check "names the backend and its file" has_line "backend: good ($PDIR/good$SUF)"
    check "shows the backend's details" has_line "network: off"
    check "shows each finding" has_line "  READY     test plugin is ready"
    check "refused plugin on stderr, one line" \
        err_has_line "kgate: plugin $PDIR/broken$SUF: no kgate_plugin_entry symbol"

    # Without --backend the only loadable plugin is picked.
    if [ "$HERMETIC" = 1 ]; then
        doctor
        check "picks the plugin it found" last_starts "READY good: "
    fi

    printf 'network: open\n' | write_config
    doctor --backend good
    check "open network is DEGRADED, exit 0" rc_is 0
    check "DEGRADED first word, counts" last_is "DEGRADED good: 0 blocked, 1 degraded, 0 ready"
    check "the reason above it" finding DEGRADED "network open: no network box\$"

    printf 'network: restricted\nallow_hosts: [example.org]\n' | write_config
    doctor --backend good
    check "backend BLOCKED exits 1" rc_is 1
    check "BLOCKED verdict line" last_is "BLOCKED good: 1 blocked, 0 degraded, 0 ready"
    check "with the backend's reason above it" \
        finding BLOCKED "a host list needs a filter this plugin lacks\$"

    printf 'network: open\n' | write_config
    doctor --json --backend good
    check "--json exits as text does" rc_is 0
    check "--json is one JSON object" json 'isinstance(d, dict)'
    check "--json verdict and backend" json 'd["verdict"] == "DEGRADED" and d["backend"] == "good"'
    check "--json reasons" json 'd["reasons"] == ["network open: no network box"]'
    check "--json findings" \
        json 'd["findings"] == [{"id": "net.open", "verdict": "DEGRADED", "text": "network open: no network box"}]'
    check "--json details" \
        json '{k: v for k, v in d["details"].items() if k not in ("environment", "process bound") and not k.startswith("tool ")} == {"network": "open"}'
    check "--json: the core's tool details, one per tool run outside the box" \
        json '{k for k in d["details"] if k.startswith("tool ")} in ({"tool bwrap", "tool slirp4netns", "tool dnsmasq", "tool nft", "tool git"}, {"tool sandbox-exec", "tool git"})'
    check "--json: the core's environment detail" \
        json '"secret-looking variable" in d["details"]["environment"]'
    check "--json: the core's process bound detail (max_processes)" \
        json '"RLIMIT_NPROC" in d["details"]["process bound"] or "root is not bound" in d["details"]["process bound"]'
    check "--json carries the merged policy" json 'isinstance(d["policy"], dict)'
    check "--json lists refused plugins" \
        json 'd["plugins_refused"] == [{"file": "'"$PDIR/broken$SUF"'", "reason": "no kgate_plugin_entry symbol"}]'

    # A policy that cannot be read is not a policy: BLOCKED, not a crash.
    printf 'network: [\n' | write_config
    doctor --backend good
    check "broken config is BLOCKED, exit 1" rc_is 1
    check "verdict line: BLOCKED good" last_starts "BLOCKED good: "
    check "the reason names the file and line" \
        finding BLOCKED "the policy cannot be built: .*config.yaml:1:"
    check "verdict line short, counts match" verdict_line_ok
    doctor --json
    check "--json of a broken config: policy null" \
        json 'd["verdict"] == "BLOCKED" and d["policy"] is None'
    check "--json: the core's finding has its id" has_id core.policy-invalid BLOCKED
    check "--json: every finding has an id" ids_ok

    printf 'netwrk: off\n' | write_config
    doctor
    check "unknown key is BLOCKED" last_starts "BLOCKED "
    rm -f "$KG_HOME/.kgate/config.yaml"

    # The working directory covering $HOME is refused by run: doctor says so.
    KG_CWD=$KG_HOME doctor --backend good
    check "cwd = HOME is BLOCKED, exit 1" rc_is 1
    check "verdict line: BLOCKED good" last_starts "BLOCKED good: "
    check "the reason says why" finding BLOCKED '.*covers \$HOME'
    KG_CWD=$KG_HOME doctor --json --backend good
    check "--json: its id" has_id core.project-covers-home BLOCKED
    check "--json: the backend's finding keeps its id" has_id tp.ready READY

    # A backend whose finding ids are not valid has its doctor refused: the
    # same table as good's above (READY there), BLOCKED here.
    KGATE_PLUGIN_PATH=$BDIR doctor --backend badid
    check "bad finding ids: BLOCKED, exit 1" rc_is 1
    check "verdict line: BLOCKED badid" last_starts "BLOCKED badid: "
    check "the reason names the id" \
        finding BLOCKED 'doctor refused: finding id "Not An Id!" is not valid'
    check "nothing of its table is shown" sh -c '! grep -q "test plugin is ready" "$1"' _ "$OUT"
    KGATE_PLUGIN_PATH=$BDIR doctor --json --backend badid
    check "--json: core.finding-id-invalid" has_id core.finding-id-invalid BLOCKED
    check "--json: which is documented" ids_documented
    RC=0
    KGATE_PLUGIN_PATH=$BDIR kg run --backend badid -- sh -c 'echo SHOULD-NOT-RUN' \
        >"$OUT" 2>"$ERR" || RC=$?
    check "run with it is refused (125)" rc_is 125
    check "and nothing ran" sh -c '! grep -q SHOULD-NOT-RUN "$1"' _ "$OUT"
    check "one kgate: line naming the id" \
        sh -c '[ "$(wc -l <"$1")" = 1 ] && grep -q "^kgate: .*finding id \"Not An Id!\" is not valid" "$1"' _ "$ERR"

    doctor --backend nosuch
    check "missing forced backend is BLOCKED" rc_is 1
    check "verdict line: BLOCKED none" last_starts "BLOCKED none: "
    check "it names what was found" finding BLOCKED "backend nosuch not found \(found: good"

    if [ "$HERMETIC" = 1 ]; then
        RC=0
        KGATE_PLUGIN_PATH=$KG_TMP/nothing-here kg doctor >"$OUT" 2>"$ERR" || RC=$?
        check "no plugin at all is BLOCKED" rc_is 1
        check "verdict line: BLOCKED none" last_starts "BLOCKED none: "
        check "it says where it looked" finding BLOCKED ".*$KG_TMP/nothing-here"
    fi

    doctor --bogus
    check "unknown option is a usage error" rc_is 2
    check "one kgate: line, first" sh -c '[ "$(head -n 1 "$1")" = "kgate: doctor: unknown argument '"'--bogus'"'" ] && [ "$(grep -c "^kgate:" "$1")" -eq 1 ]' _ "$ERR"
    check "then the usage, on stderr" err_has_line "usage: kgate doctor [--json] [--backend NAME]"
    check "nothing on stdout" [ ! -s "$OUT" ]
    doctor --backend
    check "--backend without NAME is a usage error" rc_is 2
    check "with the usage" err_has_line "usage: kgate doctor [--json] [--backend NAME]"
    doctor --help
    check "--help exits 0" rc_is 0
    check "--help: the usage on stdout" has_line "usage: kgate doctor [--json] [--backend NAME]"
    check "--help: nothing on stderr" [ ! -s "$ERR" ]
done

# The real backends, when this build has them: the spec's Linux table,
# and selection between bubblewrap and the host filter.
available() {
    KGATE_PLUGIN_PATH=$REAL_PLUGIN_PATH as_user "$KGATE_BIN" plugins --json 2>/dev/null |
        python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if any(p["name"] == sys.argv[1] and p["probe"]["available"] for p in d["plugins"]) else 1)' "$1"
}
if [ "$(uname -s)" = Linux ]; then
    export KGATE_PLUGIN_PATH=$REAL_PLUGIN_PATH
    for who in $(test_users); do
        use_user "$who"
        if ! available bubblewrap; then
            echo "# [$who] bubblewrap is not built or cannot run here: its table is not checked"
            continue
        fi
        printf 'network: off\n' | write_config
        doctor --json --backend bubblewrap
        check "bubblewrap --json: every finding has an id" ids_ok
        check "bubblewrap --json: each id is documented" ids_documented
        check "bubblewrap --json: fs.home-hidden" has_id fs.home-hidden READY
        check "bubblewrap --json: net.off" has_id net.off READY
        check "bubblewrap --json: seccomp.filter" has_id seccomp.filter READY
        doctor --backend bubblewrap
        check "bubblewrap, network off: READY, exit 0" last_starts "READY bubblewrap: "
        check "verdict line short, counts match" verdict_line_ok
        check "READY exits 0" rc_is 0
        printf 'network: open\n' | write_config
        doctor --backend bubblewrap
        check "bubblewrap, network open: DEGRADED" last_starts "DEGRADED bubblewrap: "
        check "DEGRADED exits 0" rc_is 0
        printf 'network: restricted\nallow_hosts: [example.org]\n' | write_config
        doctor --backend bubblewrap
        check "bubblewrap cannot filter hosts: BLOCKED, exit 1" rc_is 1
        doctor --json --backend bubblewrap
        check "bubblewrap --json: the host list's id" has_id net.hosts-unsupported BLOCKED
        check "bubblewrap --json: each id is documented" ids_documented
        doctor
        if [ "$RC" -ne 0 ]; then
            check "all BLOCKED: doctor names every backend's reason" \
                grep -q '^  BLOCKED   selection: no backend can enforce this policy: .*bubblewrap: ' "$OUT"
            check "its verdict line: BLOCKED, short, the counts of the lines above" \
                sh -c 'tail -n 1 "$1" | grep -q "^BLOCKED "' _ "$OUT"
            check "verdict line short, counts match" verdict_line_ok
        fi
        # The filter needs /dev/net/tun and more: pick it only if it says READY.
        if available slirp-filter && kg doctor --backend slirp-filter >/dev/null 2>&1; then
            doctor
            check "a host list composes bubblewrap with the host filter" \
                last_starts "READY bubblewrap+slirp-filter: "
            doctor --json --backend slirp-filter
            check "slirp-filter --json: every finding has an id" ids_ok
            check "slirp-filter --json: each id is documented" ids_documented
            check "slirp-filter --json: bubblewrap's box findings" has_id fs.home-hidden READY
            check "slirp-filter --json: but not its host-list finding" no_id net.hosts-unsupported
            check "slirp-filter --json: its own" has_id net.restricted READY
        fi
        printf 'network: off\n' | write_config
        if [ "$HERMETIC" = 1 ]; then
            doctor
            check "network off picks bubblewrap" last_starts "READY bubblewrap: "
        fi
    done
fi
# The seatbelt backend on Linux: doctor names why it cannot run here, a run
# is refused, and a dry run still shows the profile it would install.
# (Asked from the test's project: from the source tree, where meson runs
# tests, every in-tree plugin lies inside the working directory and is
# refused, and this part was silently skipped.)
# A network stage is composed, never picked by score: `kgate plugins`
# names the boxes it serves instead of a score.
if kg plugins 2>/dev/null | grep -q 'slirp-filter (ABI'; then
    out=$(kg plugins 2>/dev/null)
    check "plugins: the stage names the box it serves" \
        sh -c 'printf "%s\n" "$1" | grep -A2 "slirp-filter (ABI" | grep -q ", network stage for bubblewrap, version "' _ "$out"
    check "plugins: a box still shows its score" \
        sh -c 'printf "%s\n" "$1" | grep -A2 "bubblewrap (ABI" | grep -q ", score [0-9]*, version "' _ "$out"
fi
if kg plugins 2>/dev/null | grep -q 'seatbelt (ABI'; then
    for who in $(test_users); do
        use_user "$who"
        printf 'network: off\n' | write_config
        out=$(kg doctor --backend seatbelt 2>&1); rc=$?
        check "doctor --backend seatbelt is BLOCKED on Linux (exit 1)" test "$rc" = 1
        check "verdict line: BLOCKED seatbelt" \
            sh -c 'printf "%s\n" "$1" | tail -n 1 | grep -q "^BLOCKED seatbelt: "' _ "$out"
        check "and says sandbox-exec is macOS-only" \
            sh -c 'printf "%s\n" "$1" | grep -q "^  BLOCKED   .*macOS-only"' _ "$out"
        doctor --json --backend seatbelt
        check "seatbelt --json: host.not-macos" has_id host.not-macos BLOCKED
        check "seatbelt --json: every finding has an id" ids_ok
        check "seatbelt --json: each id is documented" ids_documented
        out=$(kg run --dry-run --backend seatbelt -- true 2>/dev/null); rc=$?
        check "run --dry-run --backend seatbelt prints the profile (exit 0)" test "$rc" = 0
        check "the profile has the network-off rule that works" \
            sh -c 'printf "%s" "$1" | grep -qF "(allow network-outbound (remote ip \"localhost:*\"))"' _ "$out"
        check "the argv starts with sandbox-exec" \
            sh -c 'printf "%s" "$1" | head -n 1 | grep -q "^/usr/bin/sandbox-exec "' _ "$out"
        out=$(kg run --backend seatbelt -- sh -c 'echo SHOULD-NOT-RUN' 2>&1); rc=$?
        check "run --backend seatbelt is refused on Linux (125)" test "$rc" = 125
        check "and nothing ran" sh -c '! printf "%s" "$1" | grep -q SHOULD-NOT-RUN' _ "$out"
    done
fi
# doctor and run give the same answer about kgate's own directory.
for who in $(test_users); do
    use_user "$who"
    printf 'network: off\nallow_paths: [~/.kgate]\n' | write_config
    out=$(kg doctor 2>&1); rc=$?
    check "allow_paths: [~/.kgate]: doctor is BLOCKED (exit 1)" test "$rc" = 1
    check "verdict line BLOCKED" sh -c 'printf "%s\n" "$1" | tail -n 1 | grep -q "^BLOCKED "' _ "$out"
    check "and says why" sh -c 'printf "%s\n" "$1" | grep -q "^  BLOCKED   .*kgate.s own"' _ "$out"
done
finish
