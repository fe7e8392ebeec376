#!/usr/bin/env bash
# agents_setup.sh: kgate setup claude-code | gemini | codex edits the
# agent's settings as its user: everything else in the file is kept, a
# second run changes nothing, --remove takes out only what setup added, a
# file it cannot read or whose shape it does not know is left untouched
# (one kgate: line), a symbolic link is refused, --project writes the
# project's file.  No agent is needed (agents_claude.sh and friends run them).
. "$(dirname "$0")/lib.sh"
need_cmd python3 sha256sum

OUT=$KG_TMP/out
ERR=$KG_TMP/err
same_json() {
    python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1])) == json.load(open(sys.argv[2])) else 1)' "$1" "$2"
}
sum() { sha256sum "$1" | cut -d' ' -f1; }

for who in $(test_users); do
    use_user "$who"
    for agent in claude-code gemini; do
        dir=.claude
        [ "$agent" = gemini ] && dir=.gemini
        f=$KG_HOME/$dir/settings.json
        mkdir -p "$KG_HOME/$dir"
        # The user's own hook, rules, unicode (a surrogate pair) and numbers.
        printf '%s\n' '{"model":"m","n":1.50,"hooks":{"PreToolUse":[{"matcher":"Edit","hooks":[{"type":"command","command":"echo mine"}]}],"BeforeTool":[{"matcher":"x","hooks":[]}]},"permissions":{"deny":["Read(./.env)"]},"env":{"X":"\ud83d\ude00 \"q\""}}' >"$f"
        chmod 0640 "$f"
        chown -R "$KG_UID:$KG_GID" "$KG_HOME/$dir"
        cp "$f" "$KG_TMP/orig.json"

        kg setup "$agent" >"$OUT" 2>"$ERR"
        check "$agent: setup added the hook" grep -q "hook $agent\"" "$f"
        check "$agent: it names this kgate by its absolute path" grep -qF "'$KGATE_BIN' hook $agent" "$f"
        check "$agent: the user's own hook is kept" grep -q 'echo mine' "$f"
        check "$agent: the mode is kept" [ "$(stat -c %a "$f")" = 640 ]
        check "$agent: the file is still one JSON object" python3 -c "import json; json.load(open('$f'))"
        first=$(sum "$f")
        kg setup "$agent" >"$OUT" 2>"$ERR"
        check "$agent: a second run changes nothing" [ "$(sum "$f")" = "$first" ]
        check "$agent: and says so" grep -q 'nothing to change' "$OUT"
        kg setup "$agent" --remove >"$OUT" 2>"$ERR"
        check "$agent: --remove gives back the same settings" same_json "$f" "$KG_TMP/orig.json"
        kg setup "$agent" --remove >"$OUT" 2>"$ERR"
        check "$agent: --remove twice changes nothing" grep -q 'nothing to change' "$OUT"

        # Unreadable or unknown shapes: untouched, one line, exit 1.
        for bad in '{"a":1,' '{"a":1,"a":2}' '[1]' '{"hooks":[]}' '{"hooks":{"PreToolUse":{}, "BeforeTool":{}}}' \
            '{"permissions":{"deny":"x"}}' $'{"x":"\xff"}'; do
            [ "$agent" = gemini ] && [ "$bad" = '{"permissions":{"deny":"x"}}' ] && continue
            printf '%s' "$bad" >"$f"
            before=$(sum "$f")
            RC=0
            kg setup "$agent" >"$OUT" 2>"$ERR" || RC=$?
            check "$agent: refuses $(printf %q "$bad") with exit 1" [ "$RC" -eq 1 ]
            check "$agent: ... in one kgate: line" sh -c "[ \$(wc -l <'$ERR') -eq 1 ] && grep -q '^kgate: ' '$ERR'"
            check "$agent: ... and leaves the file untouched" [ "$(sum "$f")" = "$before" ]
        done

        # A symbolic link: refused, its target untouched.
        printf '{}' >"$KG_TMP/target.json"
        rm -f "$f"
        ln -s "$KG_TMP/target.json" "$f"
        RC=0
        kg setup "$agent" >"$OUT" 2>"$ERR" || RC=$?
        check "$agent: a symbolic link is refused" [ "$RC" -eq 1 ]
        check "$agent: its target is untouched" [ "$(cat "$KG_TMP/target.json")" = '{}' ]
        rm -f "$f"

        # --project: the project's file, made when missing.
        kg setup "$agent" --project >"$OUT" 2>"$ERR"
        check "$agent: --project writes the project's settings" grep -q "hook $agent" "$KG_PROJ/$dir/settings.json"
        check "$agent: --project leaves the user's alone" [ ! -e "$f" ]
        kg setup "$agent" --project --remove >"$OUT" 2>"$ERR"
        check "$agent: --project --remove takes it out" sh -c "! grep -q 'hook $agent' '$KG_PROJ/$dir/settings.json'"
    done

    # Claude Code: the deny rules that keep its file tools off the hook.
    f=$KG_HOME/.claude/settings.json
    rm -f "$f"
    kg setup claude-code >"$OUT" 2>"$ERR"
    check "claude-code: the settings file is denied to Edit" grep -qF '"Edit(~/.claude/settings.json)"' "$f"
    check "claude-code: ~/.kgate is denied to Edit" grep -qF '"Edit(~/.kgate/**)"' "$f"

    # Codex: one marked block appended, the rest byte for byte.
    f=$KG_HOME/.codex/config.toml
    mkdir -p "$KG_HOME/.codex"
    printf 'model = "o"\n[profiles.x]\nmodel = "p"' >"$f"
    chown -R "$KG_UID:$KG_GID" "$KG_HOME/.codex"
    cp "$f" "$KG_TMP/orig.toml"
    kg setup codex >"$OUT" 2>"$ERR"
    check "codex: the block is there" grep -qF "command = \"'$KGATE_BIN' hook codex\"" "$f"
    check "codex: in [[hooks.PreToolUse]]" grep -qx '\[\[hooks.PreToolUse\]\]' "$f"
    check "codex: the rest is kept" sh -c "head -c \$(stat -c %s '$KG_TMP/orig.toml') '$f' | cmp -s - '$KG_TMP/orig.toml'"
    first=$(sum "$f")
    kg setup codex >"$OUT" 2>"$ERR"
    check "codex: a second run changes nothing" [ "$(sum "$f")" = "$first" ]
    kg setup codex --remove >"$OUT" 2>"$ERR"
    check "codex: --remove takes out the block alone" sh -c "grep -q 'model = \"p\"' '$f' && ! grep -q kgate '$f'"
    printf '# >>> kgate setup codex: every shell command runs boxed (kgate setup codex --remove) >>>\nx = 1\n' >"$f"
    before=$(sum "$f")
    RC=0
    kg setup codex >"$OUT" 2>"$ERR" || RC=$?
    check "codex: a begin marker without its end is refused" [ "$RC" -eq 1 ]
    check "codex: ... and the file left untouched" [ "$(sum "$f")" = "$before" ]
done
finish
