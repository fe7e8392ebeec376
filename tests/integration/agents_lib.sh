# agents_lib.sh: what the agents' end-to-end suites (agents_claude.sh,
# agents_gemini.sh, agents_codex.sh) share: the agents' CLIs from npm at
# pinned versions, installed once into one directory and reused, and the
# scripted model server (agent_model.py) on 127.0.0.1.  Source after lib.sh.

# The versions tested (docs/agents.md names them too).
AGENT_PKGS=(@anthropic-ai/claude-code@2.1.337 @google/gemini-cli@0.61.0 @openai/codex@0.171.0)
# Gemini CLI needs Node.js 20 or later and Debian 12's is 18: the npm
# registry's own Node.js package (its binary comes from the registry too)
# runs all three, whatever node the machine has.
AGENT_PKGS+=(node@20.20.2)
# One directory for all three, world-readable so the unprivileged test uid
# runs the same binaries; kept between runs (KGATE_AGENTS_DIR to move it).
AGENTS_DIR=${KGATE_AGENTS_DIR:-/var/tmp/kgate-test-agents}
AGENTS_STAMP=$AGENTS_DIR/installed-$(printf '%s ' "${AGENT_PKGS[@]}" | sha256sum | cut -c1-16)

# need_agents: installs the pinned CLIs unless this exact set is there.
need_agents() {
    need_cmd npm node python3
    # The CLIs' "#!/usr/bin/env node" finds the pinned Node.js first.
    export PATH="$AGENTS_DIR/node_modules/.bin:$PATH"
    [ -e "$AGENTS_STAMP" ] && return 0
    mkdir -p "$AGENTS_DIR" && chmod 0755 "$AGENTS_DIR" ||
        skip_all "cannot make $AGENTS_DIR"
    echo "# installing ${AGENT_PKGS[*]} into $AGENTS_DIR"
    if ! npm install --prefix "$AGENTS_DIR" --no-audit --no-fund --loglevel=error \
        "${AGENT_PKGS[@]}" >"$KG_TMP/npm.log" 2>&1; then
        tail -5 "$KG_TMP/npm.log"
        skip_all "npm could not install ${AGENT_PKGS[*]}"
    fi
    chmod -R a+rX "$AGENTS_DIR"
    "$AGENTS_DIR/node_modules/.bin/node" --version >/dev/null 2>&1 ||
        skip_all "npm's node@20 does not run here"
    touch "$AGENTS_STAMP"
}

# start_model API SCRIPT-JSON: starts agent_model.py; sets MODEL_PORT and
# MODEL_LOG (one JSON line per tool result the agent sent back).
start_model() {
    local dir
    dir=$(mktemp -d "$KG_TMP/model.XXXXXX")
    printf '%s' "$2" >"$dir/script.json"
    MODEL_LOG=$dir/log
    python3 "$(dirname "$0")/agent_model.py" "$1" "$dir/port" "$dir/script.json" "$MODEL_LOG" \
        2>"$dir/err" &
    local pid=$!
    at_exit "kill $pid 2>/dev/null"
    poll 300 test -s "$dir/port" || { cat "$dir/err"; echo "FAIL: the model server did not start"; exit 1; }
    MODEL_PORT=$(cat "$dir/port")
}

# result N: the text the agent sent back for the Nth command (from 0).
result() {
    python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["n"] == int(sys.argv[2]): print(r["result"])' "$MODEL_LOG" "$1" 2>/dev/null
}
result_has() {
    result "$1" | grep -q -- "$2" || { echo "# result $1 has no '$2':"; result "$1" | sed 's/^/#   /' | head -20; return 1; }
}
# result_has_text N TEXT: the same, TEXT a fixed string (no pattern).
result_has_text() {
    result "$1" | grep -qF -- "$2" || { echo "# result $1 has no '$2':"; result "$1" | sed 's/^/#   /' | head -20; return 1; }
}
result_hasnt() {
    ! result "$1" | grep -q -- "$2" || { echo "# result $1 has '$2':"; result "$1" | sed 's/^/#   /' | head -20; return 1; }
}

# in_place PLACE CMD...: CMD as the test user on the host, or where user
# namespaces cannot be made (lib.sh's stand-ins), where kgate must pick
# the Landlock box by itself.
in_place() {
    local place=$1
    shift
    case "$place" in
    host) as_user "$@" ;;
    disable_userns) in_disable_userns "$@" ;;
    seccomp_nouserns) in_seccomp_nouserns "$@" ;;
    esac
}

# The last launch record's backend in the test user's audit log.
last_backend() {
    python3 -c 'import json,sys
r = [json.loads(l) for l in open(sys.argv[1])]
print([x for x in r if x["kind"] == "launch"][-1]["backend"])' "$KG_HOME/.kgate/audit.log" 2>/dev/null
}
audit_has() { grep -q -- "$1" "$KG_HOME/.kgate/audit.log" 2>/dev/null; }

# ---- one session's checks, the same for every agent ----

SECRET=kgate-secret-$$-value

# fresh_home WHO: a new HOME for the test user with a secret in it.
fresh_home() {
    use_user "$1"
    printf '%s\n' "$SECRET" >"$KG_HOME/secret.txt"
    chmod 0600 "$KG_HOME/secret.txt"
    chown -R "$KG_UID:$KG_GID" "$KG_HOME"
}

# The four commands the model runs, as JSON.
script() {
    python3 -c 'import json,sys; h=sys.argv[1]; print(json.dumps([
        "echo model-ran-$((6*7))",
        "cat %s/secret.txt; echo read-ran" % h,
        "echo x > %s/landed.txt; echo write-ran" % h,
        "curl -s http://127.0.0.1:9/; echo curl-ran"]))' "$KG_HOME"
}

# session_checks PLACE: what the model got back for the four commands of
# script(), and the audit log.  R0: the number of results before them
# (Codex: the refusal of the unboxed first try).
session_checks() {
    local place=$1 R0=${R0:-0}
    check "$place: the agent ended with an answer" [ -s "$OUT" ]
    check "$place: the command ran, its output reached the model" result_has $((R0 + 0)) model-ran-42
    check "$place: the secret's command ran (marker)" result_has $((R0 + 1)) read-ran
    check "$place: the secret in \$HOME did not reach the model" result_hasnt $((R0 + 1)) "$SECRET"
    check "$place: the write's command ran (marker)" result_has $((R0 + 2)) write-ran
    check "$place: the write to \$HOME did not land" [ ! -e "$KG_HOME/landed.txt" ]
    check "$place: curl was refused, the reason reached the model" result_has $((R0 + 3)) "deny list"
    check "$place: curl never started" result_hasnt $((R0 + 3)) curl-ran
    check "$place: the audit log has the run" audit_has 'model-ran-\$((6\*7))'
    check "$place: the audit log has the refusal" audit_has '"kind":"block"'
    local want=bubblewrap
    [ "$place" = host ] || want=landlock
    check "$place: kgate picked $want" [ "$(last_backend)" = "$want" ]
}

