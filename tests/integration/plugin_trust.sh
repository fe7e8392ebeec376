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
done
finish
