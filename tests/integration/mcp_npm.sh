# mcp_npm.sh: sourced by mcp.sh and mcp_claude.sh (after lib.sh).
#
# npm_cached PACKAGE VERSION NAME [NPM-ARG...]: sets NPM_DIR to a directory
# whose node_modules holds PACKAGE at exactly VERSION, installing it there
# once: into a cache shared across runs and suites, one directory per
# package and version (/var/cache/kgate-test-npm/NAME-VERSION as root,
# else under $XDG_CACHE_HOME or ~/.cache; KGATE_TEST_NPM_CACHE overrides),
# through a temporary directory renamed into place, so two suites at once
# never see half of one.  A package that cannot be installed skips the
# suite (fails it in CI) with npm's last words.
npm_cached() {
    local pkg=$1 ver=$2 name=$3 base tmp
    shift 3
    if [ "$(id -u)" -eq 0 ]; then base=${KGATE_TEST_NPM_CACHE:-/var/cache/kgate-test-npm}
    else base=${KGATE_TEST_NPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kgate-test-npm}; fi
    NPM_DIR=$base/$name-$ver
    local pj=$NPM_DIR/node_modules/$pkg/package.json
    if ! grep -q "\"version\": \"$ver\"" "$pj" 2>/dev/null; then
        mkdir -p "$base" || skip_all "cannot make the npm cache $base"
        tmp=$(mktemp -d "$base/.$name.XXXXXX")
        if ! timeout 900 npm install --prefix "$tmp" --cache "$base/.npm" --no-audit --no-fund \
            --loglevel=error "$@" "$pkg@$ver" >"$KG_TMP/npm.log" 2>&1; then
            rm -rf "$tmp"
            skip_all "cannot install $pkg@$ver from npm: $(tail -3 "$KG_TMP/npm.log" | tr '\n' ' ')"
        fi
        chmod -R a+rX "$tmp"
        mv -T "$tmp" "$NPM_DIR" 2>/dev/null || rm -rf "$tmp"
    fi
    grep -q "\"version\": \"$ver\"" "$pj" ||
        skip_all "the npm cache $NPM_DIR does not hold $pkg $ver"
    # The unprivileged uid runs it too.
    [ "$(id -u)" -ne 0 ] || chmod -R a+rX "$NPM_DIR"
}
