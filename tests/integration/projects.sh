# projects.sh: the real projects an agent builds and tests all day, as
# recipes shared by the integration suite real_projects.sh and by
# bench/projects (issue 41).  Sourced; needs a cache filled by
# scripts/fetch-projects.
#
# project_unpack NAME CACHE DIR: lays project NAME out in DIR (made here).
# project_steps NAME: the shell command that builds and tests it, run with
# DIR as its working directory (inside a box, or plainly for the bench).
# PROJECTS: every NAME.
PROJECTS=(zlib libyaml-autotools libyaml-cmake jq python-venv npm-mocha)

# The upstream tarball of Debian's source package PKG in CACHE, unpacked
# into DIR without its top directory.
project_untar() {
    local tarball
    tarball=$(ls "$2/src/$1"_*.orig.tar.* 2>/dev/null | head -n 1)
    [ -n "$tarball" ] || {
        echo "no $1 tarball in $2/src (scripts/fetch-projects)" >&2
        return 1
    }
    # --no-same-owner: the files are the unpacker's, as a user's tar makes
    # them; root's tar would keep the packer's uid and modes 0600/0700
    # (jq's tarball), which root in a box, without capabilities, cannot
    # open.
    mkdir -p "$3" && tar -xf "$tarball" -C "$3" --strip-components=1 --no-same-owner
}

# An express app, and a mocha test that starts it on loopback and asks it:
# what a web project's `npm test` does.  Its packages come from the npm
# cache scripts/fetch-projects filled, copied into the project, installed
# inside the box with --offline (the box has no network).
project_npm() {
    mkdir -p "$2/test" &&
        cp -r "$1/npm/cache" "$2/.npm-cache" &&
        cat >"$2/package.json" <<'EOF' &&
{"name": "kgate-npm-project", "version": "1.0.0", "private": true,
 "scripts": {"test": "mocha --exit"},
 "dependencies": {"express": "4.21.2"},
 "devDependencies": {"mocha": "10.8.2"}}
EOF
        cat >"$2/app.js" <<'EOF' &&
const express = require('express');
const app = express();
app.get('/hello', (req, res) => res.json({hello: 'world'}));
module.exports = app;
EOF
        cat >"$2/test/app.test.js" <<'EOF'
const assert = require('assert');
const http = require('http');
const app = require('../app');
describe('the app on loopback', function () {
  let server;
  before((done) => { server = app.listen(0, '127.0.0.1', done); });
  after((done) => { server.close(done); });
  it('answers /hello', (done) => {
    http.get({host: '127.0.0.1', port: server.address().port, path: '/hello'}, (res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => { assert.deepStrictEqual(JSON.parse(body), {hello: 'world'}); done(); });
    }).on('error', done);
  });
});
EOF
}

project_unpack() {
    case $1 in
    zlib) project_untar zlib "$2" "$3" ;;
    libyaml-*) project_untar libyaml "$2" "$3" ;;
    jq) project_untar jq "$2" "$3" ;;
    python-venv) project_untar python-toml "$2" "$3" ;;
    npm-mocha) project_npm "$2" "$3" ;;
    *) return 1 ;;
    esac
}

project_steps() {
    case $1 in
    zlib) echo './configure && make && make test' ;;
    libyaml-autotools) echo 'autoreconf -fi && ./configure && make && make check' ;;
    libyaml-cmake)
        echo 'cmake -S . -B build -DBUILD_TESTING=ON && cmake --build build && ctest --test-dir build'
        ;;
    jq)
        # jq's own tests run under valgrind when it is installed (it is, for
        # kgate's): ten times slower, and not what an agent's loop runs.
        echo 'autoreconf -fi && ./configure --disable-docs --disable-maintainer-mode' \
            '--disable-valgrind &&' \
            'make && make check'
        ;;
    python-venv)
        # Two of its tests read the toml-test corpus, a separate repository
        # its tarball does not ship (they fail the same way outside a box).
        echo '/usr/bin/python3 -m venv --system-site-packages .venv &&' \
            ".venv/bin/python -m pytest -q tests -k 'not test_valid_tests and not test_invalid_tests'"
        ;;
    npm-mocha)
        echo 'npm install --offline --cache ./.npm-cache --no-audit --no-fund &&' \
            'node_modules/.bin/mocha --version && npm test'
        ;;
    *) return 1 ;;
    esac
}
