#!/usr/bin/env bash
# agents_claude.sh: Claude Code (npm, the version agents_lib.sh pins) with
# `kgate setup claude-code`, against a scripted model on 127.0.0.1
# (agent_model.py), as root and as the unprivileged uid, on the host
# (bubblewrap) and where user namespaces cannot be made (the Landlock box,
# picked by kgate itself).  The model runs four commands through Claude's
# Bash tool; what each gave back, as the model received it, shows:
#   the command ran (its output reached the model),
#   a secret in $HOME stayed unreadable, a write to $HOME did not land,
#   curl (on the deny list) was refused and the reason reached the model,
# and the audit log has the run.  A control session without the hook reads
# the secret (so the check can fail).  The hook binary itself is attacked
# with hostile commands and inputs (docs/agents.md).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agents_lib.sh"
need_bwrap
need_nouserns
need_agents
CLAUDE=$AGENTS_DIR/node_modules/.bin/claude
"$CLAUDE" --version >/dev/null 2>&1 ||
    skip_all "claude does not start: $("$CLAUDE" --version 2>&1 | head -1)"
echo "# claude $("$CLAUDE" --version 2>&1 | head -1)"

OUT=$KG_TMP/out
ERR=$KG_TMP/err


claude_session() {
    local place=$1
    in_place "$place" env ANTHROPIC_BASE_URL="http://127.0.0.1:$MODEL_PORT" \
        ANTHROPIC_API_KEY=sk-kgate-test CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
        DISABLE_AUTOUPDATER=1 "$CLAUDE" -p "run the steps" --allowedTools Bash \
        </dev/null >"$OUT" 2>"$ERR"
}

# ---- the hook binary, attacked ----

# hook_json CMD [CWD]: Claude's PreToolUse input for a Bash call.
hook_json() {
    python3 -c 'import json,sys; print(json.dumps({"session_id": "s", "cwd": sys.argv[2],
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "t",
        "tool_input": {"command": sys.argv[1], "timeout": 5000, "description": "d",
                       "run_in_background": False}}))' "$1" "${2:-$KG_PROJ}"
}
updated_command() {
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["hookSpecificOutput"]
assert d["hookEventName"] == "PreToolUse" and "permissionDecision" not in d
u=d["updatedInput"]
assert (u["timeout"], u["description"], u["run_in_background"]) == (5000, "d", False)
sys.stdout.write(u["command"])' "$OUT"
}

hook_attacks() {
    local i=0 cmd wrapped
    local -a hostile=(
        "echo \"it's\" 'q'; touch $KG_HOME/pwned-0; echo ran-0"
        $'echo a\ntouch '"$KG_HOME"$'/pwned-1\necho ran-1'
        "echo \$(touch $KG_HOME/pwned-2) \`touch $KG_HOME/pwned-2\`; echo ran-2"
        "touch $KG_HOME/pwned-3; echo ran-3; echo trailing\\"
        "-- --help; touch $KG_HOME/pwned-4; echo ran-4"
        "'; touch $KG_HOME/pwned-5; echo ran-5; '"
        "touch $KG_HOME/pwned-6; echo ran-6 # ' \" \\ ;"
    )
    for cmd in "${hostile[@]}"; do
        local n=$i
        i=$((i + 1))
        hook_json "$cmd" / >"$KG_TMP/in"
        as_user "$KGATE_BIN" hook claude-code <"$KG_TMP/in" >"$OUT" 2>"$ERR"
        wrapped=$(updated_command) || { check "hostile $n: the hook answered" false; continue; }
        # What Claude's shell would do with the answer: run it as one string.
        as_user bash -c "$wrapped" >"$KG_TMP/ran" 2>&1
        check "hostile $n: it ran (marker)" grep -q "ran-$n" "$KG_TMP/ran"
        check "hostile $n: nothing it did landed outside the box" [ ! -e "$KG_HOME/pwned-$n" ]
    done

    # Invalid UTF-8, NUL escapes, a lone surrogate, a duplicate key, other
    # shapes: refused (exit 2, a reason), no answer.
    local -a bad=(
        $'{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls \xff"}}'
        '{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls\u0000; touch x"}}'
        '{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"\ud800"}}'
        '{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls","command":"id"}}'
        '{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":["ls"]}}'
        '{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls","shell":"/bin/zsh"}}'
        '{"hook_event_name":"PreToolUse","tool_name":"Bash"}'
        '{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}'
        '{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}} x'
        'not json'
    )
    i=0
    for cmd in "${bad[@]}"; do
        local rc=0
        printf '%s' "$cmd" | as_user "$KGATE_BIN" hook claude-code >"$OUT" 2>"$ERR" || rc=$?
        check "bad input $i: refused with exit 2" [ "$rc" -eq 2 ]
        check "bad input $i: a reason on stderr, no answer" \
            sh -c "grep -q '^kgate: refused: ' '$ERR' && [ ! -s '$OUT' ]"
        i=$((i + 1))
    done

    # A 1 MiB command: answered whole, and what runs, runs boxed.
    python3 -c 'import sys; print("touch '"$KG_HOME"'/pwned-big; : " + "a" * (1 << 20))' >"$KG_TMP/big"
    python3 -c 'import json,sys; print(json.dumps({"hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": open(sys.argv[1]).read(), "timeout": 5000,
        "description": "d", "run_in_background": False}}))' "$KG_TMP/big" >"$KG_TMP/in"
    as_user "$KGATE_BIN" hook claude-code <"$KG_TMP/in" >"$OUT" 2>"$ERR"
    check "1 MiB: answered" [ "$(updated_command | wc -c)" -gt $((1 << 20)) ]
    as_user bash -c "$(updated_command)" >/dev/null 2>&1
    check "1 MiB: nothing landed outside the box" [ ! -e "$KG_HOME/pwned-big" ]

    # Already the exact boxed form: no answer, it runs as it is.  A
    # look-alike with more after it is boxed again.
    local exact="'$KGATE_BIN' run --no-pty -- /bin/sh -c -- 'echo exact'"
    hook_json "$exact" >"$KG_TMP/in"
    as_user "$KGATE_BIN" hook claude-code <"$KG_TMP/in" >"$OUT" 2>"$ERR"
    check "the exact boxed form is not wrapped twice" [ ! -s "$OUT" ]
    hook_json "$exact; touch $KG_HOME/pwned-look; echo ran-look" >"$KG_TMP/in"
    as_user "$KGATE_BIN" hook claude-code <"$KG_TMP/in" >"$OUT" 2>"$ERR"
    as_user bash -c "$(updated_command)" >"$KG_TMP/ran" 2>&1
    check "a look-alike is boxed again and runs (marker)" grep -q ran-look "$KG_TMP/ran"
    check "a look-alike's tail ran in the box" [ ! -e "$KG_HOME/pwned-look" ]

    # Another tool: no answer.  A doctor that says BLOCKED: refused.
    printf '{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/etc/passwd"}}' |
        as_user "$KGATE_BIN" hook claude-code >"$OUT" 2>"$ERR"
    check "another tool: no answer, exit 0" [ ! -s "$OUT" ]
    write_config <<<'deny_exec: ['
    hook_json "echo hi" >"$KG_TMP/in"
    local rc=0
    as_user "$KGATE_BIN" hook claude-code <"$KG_TMP/in" >"$OUT" 2>"$ERR" || rc=$?
    check "doctor BLOCKED: refused with exit 2" [ "$rc" -eq 2 ]
    check "doctor BLOCKED: the reason names doctor" grep -q 'doctor: BLOCKED' "$ERR"
    rm -f "$KG_HOME/.kgate/config.yaml"
}

for who in $(test_users); do
    fresh_home "$who"
    hook_attacks

    for place in host disable_userns seccomp_nouserns; do
        fresh_home "$who"
        kg setup claude-code >"$OUT" 2>"$ERR"
        check "$place: setup added the hook" grep -q "hook claude-code" "$KG_HOME/.claude/settings.json"
        start_model claude "$(script)"
        claude_session "$place"
        session_checks "$place"
    done

    # Control: without the hook the same command reads the secret.
    fresh_home "$who"
    kg setup claude-code >/dev/null
    kg setup claude-code --remove >"$OUT"
    check "control: --remove took the hook out" sh -c "! grep -q 'hook claude-code' '$KG_HOME/.claude/settings.json'"
    start_model claude "$(script)"
    claude_session host
    check "control: without the hook the secret reaches the model" result_has 1 "$SECRET"
    rm -f "$KG_HOME/landed.txt"
done
finish
