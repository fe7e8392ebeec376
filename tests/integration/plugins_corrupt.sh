#!/usr/bin/env bash
# plugins_corrupt.sh: a plugin file that is cut short (an interrupted
# upgrade, a full disk), empty, random or not a library, in front of the
# real plugins, is refused with one line each; `kgate plugins` lists the
# rest and `kgate run` runs with them (issue 18: the first 3,000 bytes of a
# real plugin made every command die with SIGBUS, exit 135).
. "$(dirname "$0")/lib.sh"
need_bwrap
need_cmd head

REAL=
IFS=: read -r -a kg_dirs <<<"$KGATE_PLUGIN_PATH"
for d in "${kg_dirs[@]}"; do
    [ -f "$d/kgate-bubblewrap.so" ] && REAL=$d/kgate-bubblewrap.so
done
[ -n "$REAL" ] || skip_all "kgate-bubblewrap.so not built"

BAD=$KG_TMP/bad
mkdir -p "$BAD"
head -c 3000 "$REAL" >"$BAD/a-cut3000.so"
head -c "$(($(stat -c %s "$REAL") / 2))" "$REAL" >"$BAD/b-cuthalf.so"
: >"$BAD/c-empty.so"
head -c 4096 /dev/urandom >"$BAD/d-random.so"
printf '#!/bin/sh\necho not a library\n' >"$BAD/e-text.so"
# A whole library beside them (the control: this directory is read).
cp "$KGATE_BUILD_ROOT/tests/unit/plugins/tp_partial.so" "$BAD/f-whole.so"
chmod 0755 "$BAD" && chmod 0644 "$BAD"/*
export KGATE_PLUGIN_PATH=$BAD:$KGATE_PLUGIN_PATH

OUT=$KG_TMP/out
ERR=$KG_TMP/err
r() {
    RC=0
    kg "$@" >"$OUT" 2>"$ERR" || RC=$?
}
rc_is() { [ "$RC" -eq "$1" ] || { echo "exit $RC, wanted $1"; cat "$ERR"; return 1; }; }
refused() { grep -q "^refused: $BAD/$1: $2" "$OUT" || { cat "$OUT"; return 1; }; }

for who in $(test_users); do
    use_user "$who"

    r plugins
    check "kgate plugins exits 0 (not 135)" rc_is 0
    check "the 3,000-byte cut is refused as cut short" refused a-cut3000.so "cut short"
    check "the half cut is refused" refused b-cuthalf.so "cut short"
    check "the empty file is refused" refused c-empty.so "not an ELF file"
    check "the random file is refused" refused d-random.so "not an ELF file"
    check "the text file is refused" refused e-text.so "not an ELF file"
    check "one stderr line per refusal" test "$(grep -c "^kgate: plugin $BAD/" "$ERR")" -eq 5
    check "the whole library in the same directory loads" \
        grep -q "partial (ABI 2.3) $BAD/f-whole.so" "$OUT"
    check "the real backend is still listed" grep -q "bubblewrap (ABI" "$OUT"

    r run --backend bubblewrap -- sh -c 'echo inside'
    check "kgate run goes on with the others" rc_is 0
    check "the program ran" grep -qx inside "$OUT"
done
finish
