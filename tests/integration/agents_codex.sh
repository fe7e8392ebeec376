#!/usr/bin/env bash
# agents_codex.sh: Codex CLI (npm, the version agents_lib.sh pins) with
# `kgate setup codex`, against a scripted Responses API on 127.0.0.1
# (agent_model.py; a model_providers entry with base_url), as root and as
# the unprivileged uid, on the host and where user namespaces cannot be
# made.  Codex does not run a changed command, so the hook refuses: the
# model's first, unboxed command is refused and the refusal names the exact
# prefix (it never ran: no marker); then the model sends the four commands
# of agents_lib.sh in that form, and session_checks holds for them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agents_lib.sh"
need_bwrap
need_nouserns
need_agents
CODEX=$AGENTS_DIR/node_modules/.bin/codex
"$CODEX" --version >/dev/null 2>&1 ||
    skip_all "codex does not start: $("$CODEX" --version 2>&1 | head -1)"
echo "# $("$CODEX" --version 2>&1 | head -1)"

OUT=$KG_TMP/out
ERR=$KG_TMP/err

# The user's config: the scripted model as the provider.  setup appends to
# it.
user_config() {
    mkdir -p "$KG_HOME/.codex"
    cat >"$KG_HOME/.codex/config.toml" <<TOML
model = "kgate-test"
model_provider = "scripted"

[model_providers.scripted]
name = "scripted"
base_url = "http://127.0.0.1:$MODEL_PORT/v1"
wire_api = "responses"
env_key = "KGATE_TEST_KEY"
request_max_retries = 0
stream_max_retries = 0
TOML
    chown -R "$KG_UID:$KG_GID" "$KG_HOME/.codex"
}

# The first try unboxed, then the four commands boxed, as JSON.
codex_script() {
    python3 -c 'import json,sys
k, first = sys.argv[1], sys.argv[2]
steps = json.loads(sys.argv[3])
box = lambda c: "\x27%s\x27 run --no-pty -- /bin/sh -c -- \x27%s\x27" % (k, c.replace("\x27", "\x27\\\x27\x27"))
print(json.dumps([first] + [box(c) for c in steps]))' "$KGATE_BIN" "touch $KG_HOME/unboxed-ran" "$(script)"
}

codex_session() {
    # -s danger-full-access: Codex's own bwrap sandbox off (its helper
    # binary is not installed by npm here); kgate is the box under test.
    # --dangerously-bypass-hook-trust: a hook new to Codex otherwise waits
    # for the user's review (docs/agents.md).
    in_place "$1" env KGATE_TEST_KEY=kgate-test "$CODEX" exec --skip-git-repo-check \
        --dangerously-bypass-hook-trust -s danger-full-access "run the steps" \
        </dev/null >"$OUT" 2>"$ERR"
}

for who in $(test_users); do
    for place in host disable_userns seccomp_nouserns; do
        fresh_home "$who"
        start_model codex "$(codex_script)"
        user_config
        kg setup codex >"$OUT" 2>"$ERR"
        check "$place: setup added the hook" grep -q "hook codex" "$KG_HOME/.codex/config.toml"
        codex_session "$place"
        check "$place: the unboxed command was refused" result_has 0 'kgate: refused: every shell command must run boxed'
        check "$place: the refusal names the exact prefix" result_has 0 "'$KGATE_BIN' run --no-pty -- /bin/sh -c -- "
        check "$place: the unboxed command never ran" [ ! -e "$KG_HOME/unboxed-ran" ]
        # The quote as the model must type it: one backslash, not escaped.
        check "$place: the refusal shows '\\'' as it is typed" result_has_text 0 "each ' in it written as '\''>"
        R0=1 session_checks "$place"
    done

    # Control: without the hook the unboxed command runs, and the secret
    # reaches the model.
    fresh_home "$who"
    start_model codex "$(python3 -c 'import json,sys; print(json.dumps(["touch %s/unboxed-ran" % sys.argv[1]] + json.loads(sys.argv[2])))' "$KG_HOME" "$(script)")"
    user_config
    kg setup codex >/dev/null
    kg setup codex --remove >"$OUT"
    codex_session host
    check "control: without the hook the unboxed command runs" [ -e "$KG_HOME/unboxed-ran" ]
    check "control: without the hook the secret reaches the model" result_has 2 "$SECRET"
    rm -f "$KG_HOME/landed.txt"
done
finish
