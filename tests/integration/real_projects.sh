#!/usr/bin/env bash
# real_projects.sh: real projects nobody here wrote are built and tested in
# each Linux box, as an agent would in its everyday loop (issue 41): zlib
# (`make test`), libyaml with autotools (`make check`) and with cmake
# (ctest), jq (autoreconf, configure, `make check`), a Python project in a
# venv (pytest), and an npm project whose mocha, from node_modules/.bin,
# tests an express app it serves on loopback.  The recipes are in
# projects.sh; the sources come from Debian's source packages and the npm
# registry through scripts/fetch-projects, outside any box.
#
# Each runs once per box (the cost of a real build), as the unprivileged
# uid (the user it is for), with the default configuration of `kgate init`
# (deny_read: [.env], network off) and a .env at the project's root, in
# the bubblewrap box and in the Landlock box (the Docker-like place: a
# seccomp filter refusing user namespaces).  A project passes when its own
# build and test suite exit 0 and the marker after them was printed (the
# run happened, inside the box named), and its .env is unchanged.  The
# wall time of each is printed; bench/projects compares them with the
# plain run.
. "$(dirname "$0")/lib.sh"
need_bwrap
need_nouserns
need_cmd make cc autoreconf cmake ctest python3 npm node sha256sum
/usr/bin/python3 -c 'import venv, pytest' 2>/dev/null || skip_all "python3-venv or python3-pytest is missing"
. "$(dirname "$0")/projects.sh"

CACHE=${KGATE_PROJECTS_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/kgate-projects}
for p in zlib libyaml jq python-toml; do
    ls "$CACHE/src/$p"_*.orig.tar.* >/dev/null 2>&1 ||
        skip_all "no $p source in $CACHE (run scripts/fetch-projects)"
done
[ -d "$CACHE/npm/cache" ] || skip_all "no npm cache in $CACHE (run scripts/fetch-projects)"

# The ordinary uid only: each project is built once per box (the suites
# around it already run every protection as root and as this uid).
WHO=user
MARK=kgate-project-finished

# in_box BOX CMD...: the command through kgate run in BOX, as the user.
in_box() {
    local box=$1
    shift
    case $box in
    bubblewrap) as_user "$KGATE_BIN" run --backend bubblewrap -- "$@" ;;
    landlock) in_seccomp_nouserns "$KGATE_BIN" run --backend landlock -- "$@" ;;
    esac
}

# build_and_test BOX NAME: NAME laid out in a fresh project of a fresh
# home, built and tested in BOX.
build_and_test() {
    local box=$1 name=$2 steps log start end rc=0 envsum
    use_user "$WHO"
    KG_PROJ=$KG_HOME/proj/$name
    project_unpack "$name" "$CACHE" "$KG_PROJ" || return 1
    printf 'API_KEY=kgate-test-secret-%s\n' "$name" >"$KG_PROJ/.env"
    envsum=$(sha256sum <"$KG_PROJ/.env")
    chown -R "$KG_UID:$KG_GID" "$KG_HOME"
    kg init >/dev/null 2>&1 || { echo "  kgate init failed"; return 1; }
    steps=$(project_steps "$name")
    log=$KG_TMP/$box-$name.log
    start=$(date +%s%N)
    in_box "$box" /bin/sh -c "set -e; $steps; echo $MARK" >"$log" 2>&1 || rc=$?
    end=$(date +%s%N)
    echo "  # $name in $box: exit $rc, $(((end - start) / 1000000)) ms wall"
    if [ "$rc" -ne 0 ] || ! grep -qx "$MARK" "$log"; then
        echo "  $name failed in $box (exit $rc); the end of its output:"
        tail -n 25 "$log" | sed 's/^/  | /'
        return 1
    fi
    [ "$(sha256sum <"$KG_PROJ/.env")" = "$envsum" ] || {
        echo "  .env changed"
        return 1
    }
}

# KGATE_PROJECTS_ONLY="NAME..." narrows the run while a recipe is mended.
read -r -a PROJECTS <<<"${KGATE_PROJECTS_ONLY:-${PROJECTS[*]}}"
for box in bubblewrap landlock; do
    for name in "${PROJECTS[@]}"; do
        check "$box: $name builds and passes its own tests" build_and_test "$box" "$name"
    done
done
finish
