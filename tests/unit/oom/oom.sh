#!/usr/bin/env bash
# oom.sh: one out-of-memory policy.  Makes memory run out at every
# allocation of `kgate run --dry-run` in turn (failmalloc.so, preloaded)
# and checks each run ends as kgate promises: its plan (exit 0, nothing on
# stderr) or exit 125 with exactly one "kgate:" line, never a signal, a
# 255 from uthash's default exit(-1), or silence.  At least one run must
# end in kg_oom()'s own line, or the sweep did not reach the hooks.
# Also checks what keeps the policy in one place: the core includes
# uthash's headers only through core/base/oom.h, and calls no abort().
#
# Usage: oom.sh KGATE_BIN FAILMALLOC_SO TEST_PLUGIN_DIR PLUGIN_SUFFIX
set -u
KGATE_BIN=$(realpath "$1") FM=$(realpath "$2") TPDIR=$(realpath "$3") SUF=$4
SRC=${KGATE_SOURCE_ROOT:?run through meson test}
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }

# ---- the policy stays in one place ----------------------------------------
direct=$(grep -lE '#include <(uthash|utarray|utstring)\.h>' "$SRC"/core/*/*.[ch] | grep -v '/oom\.h$')
[ -z "$direct" ] && ok "the core includes uthash headers only through oom.h" ||
    bad "uthash headers included directly (their hook would be exit(-1)): $direct"
aborts=$(grep -nE '\babort[[:space:]]*\(' "$SRC"/core/*/*.[ch])
[ -z "$aborts" ] && ok "no abort() in the core" || bad "abort() in the core: $aborts"
# A plugin never exits: no exit(), no uthash (whose hook would exit).
pexit=$(grep -nE '(^|[^_a-zA-Z])(exit|abort)[[:space:]]*\(' "$SRC"/plugins/*/*.[ch] "$SRC"/sdk/include/kgate/*.h |
    grep -vE '^[^:]*:[0-9]+:[[:space:]]*(\*|/\*|//)')
[ -z "$pexit" ] && ok "no exit() or abort() in the plugins and the SDK" || bad "in a plugin: $pexit"
put=$(grep -lE '#include <(uthash|utarray|utstring)\.h>' "$SRC"/plugins/*/*.[ch] "$SRC"/sdk/include/kgate/*.h)
[ -z "$put" ] && ok "no plugin uses uthash (its out-of-memory hook exits)" || bad "uthash in a plugin: $put"

# ---- the sweeps --------------------------------------------------------------
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/home/.kgate" "$T/home/proj" "$T/plugins"
cp "$TPDIR/tp_good$SUF" "$T/plugins/good$SUF"
chmod 0755 "$T/plugins"
chmod 0644 "$T/plugins/good$SUF"
printf 'network: off\n' >"$T/home/.kgate/config.yaml"
# kg PLUGIN_PATH VAR=VALUE... -- KGATE ARGS...
kg() {
    local path=$1
    shift
    local vars=()
    while [ "$1" != -- ]; do vars+=("$1"); shift; done
    shift
    (cd "$T/home/proj" && env HOME="$T/home" KGATE_PLUGIN_PATH="$path" \
        LD_PRELOAD="$FM" "${vars[@]}" "$KGATE_BIN" "$@" >"$T/out" 2>"$T/err")
}

# sweep NAME PLUGIN_PATH OKCODES KGATE ARGS...: memory runs out at each
# allocation in turn.  OKCODES: the statuses of a complete answer (no
# stderr, something on stdout).
sweep() {
    local name=$1 path=$2 okcodes=$3
    shift 3
    kg "$path" KG_FAILMALLOC_COUNT="$T/count" -- "$@"
    local rc=$? total
    total=$(cat "$T/count" 2>/dev/null || echo 0)
    if [[ " $okcodes " == *" $rc "* ]] && [ -s "$T/out" ] && [ "$total" -gt 0 ]; then
        ok "$name: control: with memory it answers (exit $rc, $total allocations)"
    else
        bad "$name: control failed (exit $rc, $total allocations): $(cat "$T/err")"
        return
    fi
    kg "$path" KG_FAILMALLOC_AFTER=1000000000 -- "$@"
    [ $? -eq "$rc" ] && [ -s "$T/out" ] && ok "$name: control: the library fails nothing unless asked" ||
        bad "$name: control: the library broke a run it should not have"

    # Every allocation up to 800, then a spread to the end.
    local points k wrong=0 oomline=0 runs=0 lines kglines
    points=$(seq 0 $((total < 800 ? total : 800)); [ "$total" -gt 800 ] && seq 801 $(((total - 800) / 200 + 1)) "$total")
    for k in $points; do
        runs=$((runs + 1))
        kg "$path" KG_FAILMALLOC_AFTER="$k" -- "$@"
        rc=$?
        lines=$(wc -l <"$T/err")
        kglines=$(grep -c '^kgate: ' "$T/err")
        if [[ " $okcodes " == *" $rc "* ]] && [ "$lines" -eq 0 ] && [ -s "$T/out" ]; then
            continue # memory ran out where nothing needed it any more
        fi
        # A run prints its plan whole or not at all.
        if [ "$rc" -eq 125 ] && [ "$lines" -eq 1 ] && [ "$kglines" -eq 1 ] &&
            { [ "$1" != run ] || [ ! -s "$T/out" ]; }; then
            grep -qx 'kgate: out of memory' "$T/err" && oomline=$((oomline + 1))
            continue
        fi
        wrong=$((wrong + 1))
        [ "$wrong" -le 10 ] && echo "# $name: failing allocation $k: exit $rc, stdout $(wc -c <"$T/out") bytes, stderr: $(head -c 300 "$T/err")"
    done
    [ "$wrong" -eq 0 ] && ok "$name: $runs runs out of memory: each a whole answer or exit 125 with one kgate: line" ||
        bad "$name: $wrong of $runs runs out of memory ended otherwise"
    [ "$oomline" -gt 0 ] && ok "$name: $oomline of them ended in kg_oom(): 'kgate: out of memory', 125" ||
        bad "$name: no run reached kg_oom()"
}

sweep "run --dry-run (test plugin)" "$T/plugins" 0 run --dry-run --backend good -- true
sweep "doctor (test plugin)" "$T/plugins" "0 1" doctor --backend good
# The real bubblewrap plugin where it can plan here: its probe and plan
# go through the host table, whose lists are the core's.
REAL=${KGATE_PLUGIN_PATH:-}
if [ -n "$REAL" ] && (cd "$T/home/proj" && HOME="$T/home" KGATE_PLUGIN_PATH="$REAL" \
    "$KGATE_BIN" run --dry-run --backend bubblewrap -- true >/dev/null 2>&1); then
    sweep "run --dry-run (bubblewrap)" "$REAL" 0 run --dry-run --backend bubblewrap -- true
else
    echo "# bubblewrap cannot plan here: its sweep is not run (the test plugin's is)"
fi
echo "1..$n"
exit $failed
