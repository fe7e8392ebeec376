#!/usr/bin/env bash
# plugin_trust.sh: issue 13 §1.  A program inside the box builds a plugin
# with a constructor where the user's next kgate command would look for
# plugins: in the project, through a symlinked directory, in a directory
# that does not exist yet, in an allow_paths entry.  The constructor must
# never run (its marker file stays absent), and kgate must say so in one
# line.  Control: the same library in a trusted directory does run, so the
# marker is a real witness.  docs/plugins.md, "Where a plugin may live".
. "$(dirname "$0")/lib.sh"
need_bwrap
need_nouserns
need_cmd cc

BASE_PATH=$KGATE_PLUGIN_PATH
ERR=$KG_TMP/err
OUT=$KG_TMP/out

lines_are() { # lines_are N FILE
    [ "$(wc -l <"$2")" -eq "$1" ] || { echo "wanted $1 lines in:"; cat "$2"; return 1; }
}
has() { grep -q -- "$1" "$2" || { echo "no '$1' in:"; cat "$2"; return 1; }; }
absent() { [ ! -e "$1" ] || { echo "$1 exists: the constructor ran"; return 1; }; }
present() { [ -e "$1" ] || { echo "$1 is missing: the constructor did not run"; return 1; }; }

for who in $(test_users); do
    use_user "$who"
    MARK=$KG_HOME/ran-outside
    # The constructor writes the marker where the box cannot (the home is
    # hidden inside): if it exists, the code ran outside every box.
    cat >"$KG_PROJ/evil.c" <<EOF
#include <stdio.h>
__attribute__((constructor)) static void outside(void)
{
    FILE *f = fopen("$MARK", "w");
    if (f) { fputs("constructor ran\n", f); fclose(f); }
}
EOF
    chown -R "$KG_UID:$KG_GID" "$KG_PROJ"

    # The attack: the box builds the plugin in the project.
    RC=0
    kg run -- sh -c 'mkdir -p plugins && cc -shared -fPIC -o plugins/evil.so evil.c && echo built' \
        >"$OUT" 2>"$ERR" || RC=$?
    check "inside, the program built a library in the project" has '^built$' "$OUT"
    absent "$MARK" || exit 1

    # ...and the next kgate command looks there.
    RC=0
    KGATE_PLUGIN_PATH=$BASE_PATH:$KG_PROJ/plugins kg plugins >"$OUT" 2>"$ERR" || RC=$?
    check "plugins: the project's plugin is not loaded (no marker)" absent "$MARK"
    check "plugins: one line says why" has "^kgate: plugin $KG_PROJ/plugins: lies inside $KG_PROJ, which a program kgate runs here could write$" "$ERR"

    RC=0
    KGATE_PLUGIN_PATH=$BASE_PATH:$KG_PROJ/plugins kg run -- echo launched >"$OUT" 2>"$ERR" || RC=$?
    check "run: not loaded (no marker)" absent "$MARK"
    check "run: the box that could write it is not started (125)" [ "$RC" -eq 125 ]
    check "run: nothing ran" lines_are 0 "$OUT"
    check "run: in one kgate: line" lines_are 1 "$ERR"
    check "run: the line names the directory" has "^kgate: refusing to run: plugin $KG_PROJ/plugins: lies inside" "$ERR"

    # Through a symbolic link that lies outside the project.
    ln -s "$KG_PROJ/plugins" "$KG_HOME/linked"
    RC=0
    KGATE_PLUGIN_PATH=$BASE_PATH:$KG_HOME/linked kg run -- echo launched >"$OUT" 2>"$ERR" || RC=$?
    check "symlinked directory: not loaded (no marker)" absent "$MARK"
    check "symlinked directory: judged where it leads" has "^kgate: refusing to run: plugin $KG_HOME/linked: resolves to $KG_PROJ/plugins, inside $KG_PROJ" "$ERR"

    # From another project, with the first one given back by --allow-path.
    mkdir -p "$KG_HOME/other"
    chown "$KG_UID:$KG_GID" "$KG_HOME/other"
    RC=0
    KG_CWD=$KG_HOME/other KGATE_PLUGIN_PATH=$BASE_PATH:$KG_PROJ/plugins \
        kg run --allow-path "$KG_PROJ" -- echo launched >"$OUT" 2>"$ERR" || RC=$?
    check "an allow_paths entry counts as writable (125)" [ "$RC" -eq 125 ]
    check "allow_paths: not loaded (no marker)" absent "$MARK"

    # A directory that does not exist yet: the box could create it.
    RC=0
    KGATE_PLUGIN_PATH=$BASE_PATH:$KG_PROJ/later kg run -- sh -c 'mkdir later && cp plugins/evil.so later/ && echo planted' \
        >"$OUT" 2>"$ERR" || RC=$?
    check "missing directory in the project: the box is not started" [ "$RC" -eq 125 ]
    check "missing directory: nothing planted" [ ! -e "$KG_PROJ/later" ]
    RC=0
    KGATE_PLUGIN_PATH=$BASE_PATH:$KG_TMP/nowhere-$who kg plugins >"$OUT" 2>"$ERR" || RC=$?
    check "a named directory that does not exist is refused, not skipped" \
        has "^kgate: plugin $KG_TMP/nowhere-$who: does not exist$" "$ERR"

    # kgate's own variables never reach the program.
    RC=0
    KGATE_PLUGIN_PATH=$BASE_PATH KGATE_DEBUG=0 kg run -- env >"$OUT" 2>"$ERR" || RC=$?
    check "inside, the environment holds no KGATE_ variable" sh -c "! grep -q '^KGATE_' '$OUT'"
    check "control: the program's environment was printed" has '^PATH=' "$OUT"
    check "control: kgate itself had them" [ -n "$BASE_PATH" ]

    # Control: the very same library in a trusted directory runs.
    TRUSTED=$KG_TMP/trusted-$who
    mkdir -p "$TRUSTED"
    cp "$KG_PROJ/plugins/evil.so" "$TRUSTED/"
    chmod 0755 "$TRUSTED"
    chmod 0644 "$TRUSTED/evil.so"
    RC=0
    KGATE_PLUGIN_PATH=$BASE_PATH:$TRUSTED kg plugins >"$OUT" 2>"$ERR" || RC=$?
    check "control: from a trusted directory the constructor runs" present "$MARK"
    check "control: and the missing entry symbol is reported" has "^kgate: plugin $TRUSTED/evil.so: no kgate_plugin_entry symbol$" "$ERR"
    rm -f "$MARK"
    RC=0
    KGATE_PLUGIN_PATH=$BASE_PATH:$TRUSTED kg run -- true >"$OUT" 2>"$ERR" || RC=$?
    check "run prints a refused plugin too (one line)" lines_are 1 "$ERR"
    check "run: still runs with the good backends" [ "$RC" -eq 0 ]
    rm -f "$MARK"

    # A refused plugin's name goes through kg_msg_escape: a right-to-left
    # override (U+202E) in its directory is shown as \u{202e}, not as the
    # raw bytes, which would reorder the rest of the terminal line.
    RLO=$(printf '\342\200\256')
    BIDI=$KG_TMP/bidi-$RLO-$who
    mkdir -p "$BIDI"
    cp "$KG_PROJ/plugins/evil.so" "$BIDI/"
    chmod 0755 "$BIDI"
    chmod 0644 "$BIDI/evil.so"
    RC=0
    KGATE_PLUGIN_PATH=$BASE_PATH:$BIDI kg run -- true >"$OUT" 2>"$ERR" || RC=$?
    check "run: a refused plugin's bidi control is escaped" has 'bidi-\\u{202e}-' "$ERR"
    check "run: and its raw bytes are not printed" sh -c "! grep -q '$RLO' '$ERR'"
    check "control: the bidi-named plugin was refused (one line)" lines_are 1 "$ERR"
    rm -f "$MARK"

    # Inside a user namespace that does not map root (bwrap --unshare-user
    # --disable-userns as an ordinary user: another agent's sandbox), every
    # root-owned directory shows as the overflow uid 65534.  kgate must
    # still load its own plugins there; for root, bwrap maps root and
    # nothing changes.  docs/plugins.md, "Inside a user namespace".
    RC=0
    in_disable_userns "$KGATE_BIN" plugins >"$OUT" 2>"$ERR" || RC=$?
    check "userns: the built plugins load (bubblewrap listed)" has '^[* ] bubblewrap (ABI' "$OUT"
    check "userns: and nothing is refused" lines_are 0 "$ERR"
    EXPECT=65534
    [ "$who" = root ] && EXPECT=0
    check "userns: it is a namespace where / shows as uid $EXPECT" \
        [ "$(in_disable_userns stat -c %u /)" = "$EXPECT" ]
    # The unprivileged uid 65534 is the overflow uid itself, so it would
    # pass for the owner of everything; another uid shows the fix.
    if [ "$who" = user ] && [ "$(id -u)" -eq 0 ]; then
        H4=$KG_TMP/home-4242
        mkdir -p "$H4/proj"
        chown -R 4242:4242 "$H4"
        RC=0
        KG_TEST_UID=4242 KG_TEST_GID=4242 KG_HOME=$H4 KG_PROJ=$H4/proj \
            in_disable_userns "$KGATE_BIN" plugins >"$OUT" 2>"$ERR" || RC=$?
        check "userns as uid 4242: the built plugins load" has '^[* ] bubblewrap (ABI' "$OUT"
        check "userns as uid 4242: and nothing is refused" lines_are 0 "$ERR"
    fi

    # Main's mode rule still holds there: an overflow-owned (root's, seen
    # from inside) directory or file its group may write is refused.
    GW=$KG_TMP/groupwritable-$who
    mkdir -p "$GW"
    cp "$TRUSTED/evil.so" "$GW/"
    chmod 0644 "$GW/evil.so"
    chmod 0775 "$GW"
    RC=0
    KGATE_PLUGIN_PATH=$BASE_PATH:$GW in_disable_userns "$KGATE_BIN" plugins >"$OUT" 2>"$ERR" || RC=$?
    check "userns: a group-writable directory is refused (no marker)" absent "$MARK"
    check "userns: group-writable directory: one line says why" \
        has "^kgate: plugin $GW: $GW is writable by its group (mode 0775)$" "$ERR"
    chmod 0755 "$GW"
    chmod 0664 "$GW/evil.so"
    RC=0
    KGATE_PLUGIN_PATH=$BASE_PATH:$GW in_disable_userns "$KGATE_BIN" plugins >"$OUT" 2>"$ERR" || RC=$?
    check "userns: a group-writable file is refused (no marker)" absent "$MARK"
    check "userns: group-writable file: one line says why" \
        has "^kgate: plugin $GW/evil.so: writable by its group (mode 0664)$" "$ERR"
    chmod 0644 "$GW/evil.so"
    RC=0
    KGATE_PLUGIN_PATH=$BASE_PATH:$GW in_disable_userns "$KGATE_BIN" plugins >"$OUT" 2>"$ERR" || RC=$?
    check "userns: control: the same, writable by its owner only, runs" present "$MARK"
    rm -f "$MARK"
done

# Outside a user namespace the overflow uid is an ordinary uid: a plugin
# owned by 65534 is refused to root (and to anyone but uid 65534).
if [ "$(id -u)" -eq 0 ]; then
    LAST_MARK=$MARK
    use_user root
    OV=$KG_TMP/overflow-owned
    mkdir -p "$OV"
    cp "$TRUSTED/evil.so" "$OV/"
    chmod 0755 "$OV"
    chmod 0644 "$OV/evil.so"
    chown 65534:65534 "$OV/evil.so"
    RC=0
    KGATE_PLUGIN_PATH=$BASE_PATH:$OV kg plugins >"$OUT" 2>"$ERR" || RC=$?
    check "no userns: a 65534-owned plugin is refused (no marker)" absent "$LAST_MARK"
    check "no userns: 65534-owned: one line says why" \
        has "^kgate: plugin $OV/evil.so: owned by uid 65534, neither root nor the user running kgate$" "$ERR"
    # Inside root's bwrap --unshare-user root is mapped, so an overflow-owned
    # file there may be anyone's: refused too.
    RC=0
    KGATE_PLUGIN_PATH=$BASE_PATH:$OV in_disable_userns "$KGATE_BIN" plugins >"$OUT" 2>"$ERR" || RC=$?
    check "userns mapping root: a 65534-owned plugin is refused (no marker)" absent "$LAST_MARK"
    check "userns mapping root: 65534-owned: one line says why" \
        has "^kgate: plugin $OV/evil.so: owned by uid 65534, neither root nor the user running kgate$" "$ERR"
    check "userns mapping root: the built plugins load beside it" has '^[* ] bubblewrap (ABI' "$OUT"
    chown 0:0 "$OV/evil.so"
    RC=0
    KGATE_PLUGIN_PATH=$BASE_PATH:$OV in_disable_userns "$KGATE_BIN" plugins >"$OUT" 2>"$ERR" || RC=$?
    # (The marker lies in uid 65534's home, which root inside its namespace
    # cannot write: the loader's own line shows the file was loaded.)
    check "control: the same file owned by root is loaded (inside root's namespace)" \
        has "^kgate: plugin $OV/evil.so: no kgate_plugin_entry symbol$" "$ERR"
    RC=0
    KGATE_PLUGIN_PATH=$BASE_PATH:$OV kg plugins >"$OUT" 2>"$ERR" || RC=$?
    check "control: the same file owned by root runs (outside)" present "$LAST_MARK"
    rm -f "$LAST_MARK"
fi
finish
