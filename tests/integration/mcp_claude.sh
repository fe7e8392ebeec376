#!/bin/bash
# mcp_claude.sh: Claude Code (`claude -p --mcp-config`, pinned) with kgate
# mcp as its MCP server, against a scripted model on 127.0.0.1
# (mcp_model.py) that calls the tool mcp__kgate__run twice: a command that
# prints a marker, writes one and tries the secret in $HOME, then curl.
# What the model is sent back is what is checked: the output, the hidden
# secret, the deny list's refusal with its rule; and on disk the marker and
# the audit record.  As root and as an unprivileged uid, in bubblewrap's box.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mcp_npm.sh"
need_cmd node npm python3 setpriv
need_bwrap

CLAUDE_VERSION=2.1.337
# Its postinstall picks the native binary of this platform: scripts run.
npm_cached @anthropic-ai/claude-code "$CLAUDE_VERSION" claude-code
CLAUDE=$NPM_DIR/node_modules/.bin/claude
"$CLAUDE" --version >/dev/null 2>&1 || skip_all "claude $CLAUDE_VERSION does not start here"
echo "# $("$CLAUDE" --version) in $NPM_DIR"
MODEL=$(kg_reachable "$(dirname "$0")/mcp_model.py")

# start_model COMMAND...: the scripted model, its port in PORT, its log of
# what the tools returned in MLOG.  Ended at exit.
start_model() {
    MLOG=$KG_TMP/model.$KG_WHO.log
    local pf=$KG_TMP/model.$KG_WHO.port
    python3 "$MODEL" "$pf" "$MLOG" "$@" >"$KG_TMP/model.$KG_WHO.out" 2>&1 &
    local pid=$!
    at_exit "kill $pid 2>/dev/null"
    poll 100 test -s "$pf" || { echo "# the scripted model did not start"; cat "$KG_TMP/model.$KG_WHO.out"; }
    PORT=$(cat "$pf")
}

# tool_result N FIELD: FIELD (text, is_error) of the Nth tool result the
# model was sent back.
tool_result() {
    python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])]; print(r[int(sys.argv[2])][sys.argv[3]])' \
        "$MLOG" "$1" "$2" 2>/dev/null
}
has() { case $1 in *"$2"*) return 0 ;; esac; return 1; }

test_user() {
    use_user "$1"
    write_config <<EOF
network: off
EOF
    echo TOPSECRET >"$KG_HOME/secret.txt"
    chown "$KG_UID:$KG_GID" "$KG_HOME/secret.txt"
    chmod 0600 "$KG_HOME/secret.txt"
    local tag=$$$RANDOM
    start_model "echo CLAUDE-MARK-$tag; echo x >claude-ran; cat '$KG_HOME/secret.txt'" \
        'curl http://198.18.0.1/'
    cat >"$KG_TMP/mcp.$KG_WHO.json" <<EOF
{"mcpServers": {"kgate": {"type": "stdio", "command": "$KGATE_BIN", "args": ["mcp"],
  "env": {"KGATE_PLUGIN_PATH": "$KGATE_PLUGIN_PATH"}}}}
EOF
    chmod a+r "$KG_TMP/mcp.$KG_WHO.json"
    # ENABLE_TOOL_SEARCH=false: MCP tools are offered to the model at once,
    # not behind Claude Code's tool search (which a scripted model would
    # have to drive first).  --allowedTools: no prompt for the tool in -p.
    as_user env ANTHROPIC_BASE_URL="http://127.0.0.1:$PORT" ANTHROPIC_API_KEY=sk-ant-test \
        ENABLE_TOOL_SEARCH=false CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
        DISABLE_AUTOUPDATER=1 timeout 300 "$CLAUDE" -p "run the commands" \
        --mcp-config "$KG_TMP/mcp.$KG_WHO.json" --strict-mcp-config \
        --allowedTools mcp__kgate__run --output-format json --model claude-sonnet-4-5 \
        </dev/null >"$KG_TMP/claude.$KG_WHO.out" 2>&1
    local rc=$?
    check "claude -p ends with 0" test "$rc" -eq 0
    [ "$rc" -eq 0 ] || tail -c 2000 "$KG_TMP/claude.$KG_WHO.out" | sed 's/^/#   /'
    local t1 t2
    t1=$(tool_result 0 text)
    t2=$(tool_result 1 text)
    check "the model was sent the run's output" has "$t1" "CLAUDE-MARK-$tag"
    check "the run wrote its marker in the project" test -e "$KG_PROJ/claude-ran"
    check "the secret in \$HOME did not reach the model" eval '! has "$t1" TOPSECRET'
    check "the model was sent the deny list's refusal and rule" \
        has "$t2" "rule: deny_exec: curl"
    check "... as a tool error" test "$(tool_result 1 is_error)" = True
    check "the audit log has the run Claude Code asked for" \
        grep -q "CLAUDE-MARK-$tag" "$KG_HOME/.kgate/audit.log"
    [ -n "$t2" ] || sed 's/^/#   /' "$MLOG.requests" 2>/dev/null | cut -c1-300 | tail -5
}

for who in $(test_users); do test_user "$who"; done
finish
