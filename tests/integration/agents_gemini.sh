#!/usr/bin/env bash
# agents_gemini.sh: Gemini CLI (npm, the version agents_lib.sh pins) with
# `kgate setup gemini`, against a scripted generateContent server on
# 127.0.0.1 (agent_model.py; GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY, a fresh
# HOME), as root and as the unprivileged uid, on the host (bubblewrap) and
# where user namespaces cannot be made (Landlock): the same four commands
# and checks as agents_claude.sh (agents_lib.sh's session_checks), a
# control without the hook, and the hook binary's gemini answers.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agents_lib.sh"
need_bwrap
need_nouserns
need_agents
GEMINI=$AGENTS_DIR/node_modules/.bin/gemini
"$GEMINI" --version >/dev/null 2>&1 ||
    skip_all "gemini does not start: $("$GEMINI" --version 2>&1 | head -1)"
echo "# gemini $("$GEMINI" --version 2>&1 | head -1)"

OUT=$KG_TMP/out
ERR=$KG_TMP/err

# The user's own settings, which setup must keep: an API key login (the
# CLI refuses to start without a chosen method).
user_settings() {
    mkdir -p "$KG_HOME/.gemini"
    printf '{"security":{"auth":{"selectedType":"gemini-api-key"}},"ui":{"theme":"Default"}}\n' \
        >"$KG_HOME/.gemini/settings.json"
    chown -R "$KG_UID:$KG_GID" "$KG_HOME/.gemini"
}

gemini_session() {
    # -m: a fixed model, so the CLI asks no routing question first;
    # GEMINI_CLI_TRUST_WORKSPACE: the project is trusted (else --yolo is
    # turned back to asking, which -p cannot).
    in_place "$1" env GEMINI_API_KEY=kgate-test GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$MODEL_PORT" \
        GEMINI_CLI_TRUST_WORKSPACE=true "$GEMINI" -m gemini-2.5-flash -p "run the steps" --yolo \
        </dev/null >"$OUT" 2>"$ERR"
}

gemini_hook_answers() {
    python3 -c 'import json,sys; print(json.dumps({"session_id": "s", "cwd": "/",
        "hook_event_name": "BeforeTool", "tool_name": "run_shell_command",
        "tool_input": {"command": sys.argv[1], "description": "d", "dir_path": "."}}))' \
        "echo \"it's\" \$(id -u); touch $KG_HOME/pwned-g; echo ran-g" >"$KG_TMP/in"
    as_user "$KGATE_BIN" hook gemini <"$KG_TMP/in" >"$OUT" 2>"$ERR"
    local wrapped
    wrapped=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["hookSpecificOutput"]
assert d["hookEventName"] == "BeforeTool"
t=d["tool_input"]; assert (t["description"], t["dir_path"]) == ("d", ".")
sys.stdout.write(t["command"])' "$OUT")
    check "hook gemini: answered with tool_input" [ -n "$wrapped" ]
    as_user bash -c "$wrapped" >"$KG_TMP/ran" 2>&1
    check "hook gemini: it ran (marker)" grep -q ran-g "$KG_TMP/ran"
    check "hook gemini: nothing landed outside the box" [ ! -e "$KG_HOME/pwned-g" ]
    local rc=0
    printf '{"hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls\\u0000"}}' |
        as_user "$KGATE_BIN" hook gemini >"$OUT" 2>"$ERR" || rc=$?
    check "hook gemini: a NUL in the command is refused (exit 2, no answer)" \
        sh -c "[ $rc -eq 2 ] && [ ! -s '$OUT' ] && grep -q '^kgate: refused' '$ERR'"
    printf '{"hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":{"file_path":"/etc/passwd"}}' |
        as_user "$KGATE_BIN" hook gemini >"$OUT" 2>"$ERR"
    check "hook gemini: another tool, no answer" [ ! -s "$OUT" ]
}

for who in $(test_users); do
    fresh_home "$who"
    gemini_hook_answers

    for place in host disable_userns seccomp_nouserns; do
        fresh_home "$who"
        user_settings
        kg setup gemini >"$OUT" 2>"$ERR"
        check "$place: setup added the hook" grep -q "hook gemini" "$KG_HOME/.gemini/settings.json"
        check "$place: setup kept the user's settings" grep -q gemini-api-key "$KG_HOME/.gemini/settings.json"
        start_model gemini "$(script)"
        gemini_session "$place"
        session_checks "$place"
    done

    fresh_home "$who"
    user_settings
    kg setup gemini >/dev/null
    kg setup gemini --remove >"$OUT"
    check "control: --remove took the hook out" sh -c "! grep -q 'hook gemini' '$KG_HOME/.gemini/settings.json'"
    start_model gemini "$(script)"
    gemini_session host
    check "control: without the hook the secret reaches the model" result_has 1 "$SECRET"
    rm -f "$KG_HOME/landed.txt"
done
finish
