#!/usr/bin/env bash
# sdk_example.sh: what a third party does.  Install kgate into a private
# prefix (and check a staged `meson install --destdir`), build the example
# backend out of tree with nothing but that prefix's pkg-config file, then
# let the installed kgate find it through KGATE_PLUGIN_PATH.
. "$(dirname "$0")/lib.sh"
need_cmd meson ninja make pkg-config cc python3
: "${KGATE_SOURCE_ROOT:?run through meson test}"

T=$KG_TMP/sdk
PREFIX=$T/prefix
mkdir -p "$T"
chmod 0755 "$T"

KG_WHO=setup
# A build of its own: the test must not touch the build it runs from.
if ! meson setup "$T/build" "$KGATE_SOURCE_ROOT" --prefix="$PREFIX" -Dtests=false \
    >"$T/setup.log" 2>&1; then
    cat "$T/setup.log"
    check "meson setup of a private prefix" false
    finish
fi
check "build and install into a private prefix" \
    sh -c "ninja -C '$T/build' >'$T/build.log' 2>&1 && meson install -C '$T/build' >'$T/install.log' 2>&1"

PC=$(find "$PREFIX" -name kgate-plugin.pc | head -n 1)
check "kgate-plugin.pc is installed" test -n "$PC"
check "the header is installed" test -f "$PREFIX/include/kgate/kgate-plugin.h"
check "kgate is installed" test -x "$PREFIX/bin/kgate"
PCDIR=$(dirname "$PC")

# Staged install, as a distribution package build does it.
check "meson install --destdir stages the SDK" \
    sh -c "meson install -C '$T/build' --no-rebuild --destdir '$T/stage' >/dev/null 2>&1 &&
           test -f '$T/stage$PREFIX/include/kgate/kgate-plugin.h' &&
           test -f '$T/stage$PC'"

# pkg-config sees only this prefix: PKG_CONFIG_LIBDIR replaces the
# system's search path, so a kgate installed elsewhere cannot help.
export PKG_CONFIG_LIBDIR=$PCDIR
unset PKG_CONFIG_PATH
check "pkg-config --cflags points into the prefix" \
    sh -c "pkg-config --cflags kgate-plugin | grep -qF -- '-I$PREFIX/include'"
SUF=$(pkg-config --variable=pluginsuffix kgate-plugin)
check "pkg-config gives the plugin suffix" test -n "$SUF"
check "pkg-config gives the plugin directory" \
    sh -c "[ \"\$(pkg-config --variable=plugindir kgate-plugin)\" = \"\$(pkg-config --variable=libdir kgate-plugin)/kgate/plugins\" ]"
ABI=$(pkg-config --variable=abi_major kgate-plugin).$(pkg-config --variable=abi_minor kgate-plugin)
check "the .pc ABI is the one kgate speaks" \
    sh -c "'$PREFIX/bin/kgate' --version | grep -qF 'plugin ABI $ABI'"

# The Linux support library, as an out-of-tree Linux backend links it:
# pkg-config kgate-linux alone.  A module linked with it still exports only
# its entry (the library is hidden), and a program linked with it gets the
# rule table and the embedded BPF program.
if [ "$(uname -s)" = Linux ]; then
    check "kgate-linux.pc and its header are installed" \
        sh -c "pkg-config --exists kgate-linux && test -f '$PREFIX/include/kgate/kgate-linux.h'"
    check "pkg-config --libs kgate-linux names the static library" \
        sh -c "pkg-config --libs kgate-linux | grep -qF -- '-lkgate-linux' &&
               test -f \"\$(pkg-config --variable=libdir kgate-linux)/libkgate-linux.a\""
    KGL=$T/kgl
    mkdir -p "$KGL"
    cat >"$KGL/use.c" <<'EOF2'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <kgate/kgate-linux.h>

int main(void)
{
    kgate_err err = {0};
    int fd = kgl_seccomp_fd(&err);
    char *text = kgl_seccomp_describe();
    if (fd < 0 || !text) return 1;
    printf("rules %zu fd-ok %d\n", kgl_seccomp_rule_count(), fd >= 10);
    free(text);
    close(fd);
    return 0;
}
EOF2
    cat >"$KGL/mod.c" <<'EOF2'
#include <kgate/kgate-linux.h>

size_t kgl_example_rules(void);
size_t kgl_example_rules(void) { return kgl_seccomp_rule_count(); }
EOF2
    # shellcheck disable=SC2046
    check "a program links libkgate-linux through pkg-config" \
        sh -c "cc -std=c99 -Wall -Wextra -Werror -pedantic \$(pkg-config --cflags kgate-linux) \
               -o '$KGL/use' '$KGL/use.c' \$(pkg-config --libs kgate-linux) >'$KGL/cc.log' 2>&1 ||
               { cat '$KGL/cc.log'; exit 1; }"
    check "it gets the rule table and the embedded program" \
        sh -c "'$KGL/use' | grep -qE '^rules [1-9][0-9]* fd-ok 1\$'"
    if command -v nm >/dev/null; then
        check "a module linked with it exports none of its kgl_ symbols" \
            sh -c "cc -fPIC -fvisibility=hidden -shared \$(pkg-config --cflags kgate-linux) \
                   -o '$KGL/mod.so' '$KGL/mod.c' \$(pkg-config --libs kgate-linux) &&
                   nm '$KGL/mod.so' | grep -q ' kgl_seccomp_rule_count\$' &&
                   ! nm -D --defined-only '$KGL/mod.so' | grep -q ' kgl_seccomp'"
    fi
fi

# The host entry parser kgate itself uses (kgate-hostspec.h), from
# libkgate-common.a through pkg-config kgate-plugin: a program gets the
# core's answers, and a module linked with it does not export the symbol.
HS=$T/hostspec
mkdir -p "$HS"
cat >"$HS/use.c" <<'EOF2'
#include <stdio.h>
#include <kgate/kgate-hostspec.h>

int main(void)
{
    kgate_hostspec h;
    const char *why = "";
    if (kgate_hostspec_parse("*.Example.COM:443", &h, &why) != 0) return 1;
    printf("%s %d %u\n", h.name, h.wildcard, h.port);
    return kgate_hostspec_parse("*.com", &h, &why) == -1 && why[0] ? 0 : 2;
}
EOF2
check "a program links kgate_hostspec_parse through pkg-config kgate-plugin" \
    sh -c "cc -std=c99 -Wall -Wextra -Werror -pedantic \$(pkg-config --cflags kgate-plugin) \
           -o '$HS/use' '$HS/use.c' \$(pkg-config --libs kgate-plugin) >'$HS/cc.log' 2>&1 ||
           { cat '$HS/cc.log'; exit 1; }"
check "it reads an entry as kgate does" sh -c "[ \"\$('$HS/use')\" = 'example.com 1 443' ]"
if command -v nm >/dev/null && [ "$(uname -s)" = Linux ]; then
    printf '#include <kgate/kgate-hostspec.h>\nint hs_ok(const char *e);\nint hs_ok(const char *e) { kgate_hostspec h; const char *w; return kgate_hostspec_parse(e, &h, &w); }\n' >"$HS/mod.c"
    check "a module linked with it does not export kgate_hostspec_parse" \
        sh -c "cc -fPIC -fvisibility=hidden -shared \$(pkg-config --cflags kgate-plugin) \
               -o '$HS/mod.so' '$HS/mod.c' \$(pkg-config --libs kgate-plugin) &&
               nm '$HS/mod.so' | grep -q ' kgate_hostspec_parse\$' &&
               ! nm -D --defined-only '$HS/mod.so' | grep -q kgate_hostspec"
fi

# Out of tree: a copy of the example, far from the source tree.
EX=$T/hello
cp -r "$KGATE_SOURCE_ROOT/sdk/examples/hello" "$EX"
chmod -R go-w "$EX"
chmod 0755 "$EX"
check "the example builds with pkg-config alone" \
    sh -c "make -C '$EX' >'$T/make.log' 2>&1 || { cat '$T/make.log'; exit 1; }"
check "it was compiled against the installed header" grep -qF -- "-I$PREFIX/include" "$T/make.log"
check "the plugin is where the Makefile says" test -f "$EX/hello$SUF"
if command -v nm >/dev/null && [ "$(uname -s)" = Linux ]; then
    check "it exports only kgate_plugin_entry" \
        sh -c "[ \"\$(nm -D --defined-only '$EX/hello$SUF' | awk '{print \$3}' | grep -v '^_' )\" = kgate_plugin_entry ]"
fi

# It runs a program: launch, called as kgate calls it (kgate itself never
# picks hello, whose doctor says BLOCKED), starts /bin/sh in the project
# and hands back a pid whose status is the program's own.  On Linux the
# example uses the support library's spawn helper, so a step that fails
# before the exec comes back as an error, not as a status.
DRV=$T/drive
mkdir -p "$DRV"
cat >"$DRV/drive.c" <<'EOF2'
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <kgate/kgate-plugin.h>

static const char *const plan[] = {"/bin/sh", "-c", "pwd; exit 7"};
static const char *const *plan_argv(const kgate_plan *p, size_t *argc)
{
    (void)p;
    *argc = 3;
    return plan;
}

int main(int argc, char **argv)
{
    void *h = argc == 3 ? dlopen(argv[1], RTLD_NOW) : NULL;
    kgate_plugin_entry_fn entry = NULL;
    if (!h) return 2;
    *(void **)&entry = dlsym(h, KGATE_PLUGIN_ENTRY_SYMBOL);
    const kgate_backend *be = entry ? entry() : NULL;
    if (!be || !be->launch) return 2;
    kgate_host host;
    memset(&host, 0, sizeof host);
    host.struct_size = sizeof host;
    host.plan_argv = plan_argv;
    kgate_policy pol;
    memset(&pol, 0, sizeof pol);
    pol.struct_size = sizeof pol;
    pol.project = argv[2];
    static const char *const envp[] = {"PATH=/usr/bin:/bin", NULL};
    kgate_launch io = {sizeof io, 0, 1, 2, envp, 0, -1, NULL, NULL, {0, 0}}; /* no events, no commit, no signal ignored */
    kgate_proc proc;
    memset(&proc, 0, sizeof proc);
    proc.struct_size = sizeof proc;
    kgate_probe probe;
    memset(&probe, 0, sizeof probe);
    kgate_err err = {0, ""};
    if (be->launch(&host, &pol, &probe, NULL, &io, &proc, &err) < 0) {
        printf("error: %s\n", err.msg);
        return 125;
    }
    fflush(stdout);
    int st = 0;
    if (waitpid(proc.pid, &st, 0) != proc.pid || !WIFEXITED(st)) return 3;
    printf("status %d\n", WEXITSTATUS(st));
    return 0;
}
EOF2
check "a driver that calls launch builds against the installed header" \
    sh -c "cc -std=c99 -Wall -Wextra -Werror \$(pkg-config --cflags kgate-plugin) \
           -o '$DRV/drive' '$DRV/drive.c' -ldl >'$DRV/cc.log' 2>&1 || { cat '$DRV/cc.log'; exit 1; }"
"$DRV/drive" "$EX/hello$SUF" "$DRV" >"$DRV/out" 2>&1 || true
check "hello's launch runs a program in the project, whose status is its own" \
    sh -c "[ \"\$(cat '$DRV/out')\" = \"\$(printf '%s\\nstatus 7' '$DRV')\" ]"
if [ "$(uname -s)" = Linux ]; then
    check "on Linux it links the support library's spawn helper" \
        sh -c "nm '$EX/hello$SUF' | grep -q ' kgl_spawn_run\$'"
    "$DRV/drive" "$EX/hello$SUF" "$DRV/missing" >"$DRV/out" 2>&1 || true
    check "a project it cannot enter is an error naming the step, not a status" \
        grep -qxF "error: could not enter the project $DRV/missing: No such file or directory" "$DRV/out"
fi
mode_of() { stat -c %a "$1" 2>/dev/null || stat -f %Lp "$1"; }
installed_0644() {
    make -C "$EX" install DESTDIR="$T/pkgroot" >/dev/null &&
        [ "$(mode_of "$T/pkgroot$(pkg-config --variable=plugindir kgate-plugin)/hello$SUF")" = 644 ]
}
check "make install puts it in the plugin directory, mode 0644" installed_0644

OUT=$T/out
for who in $(test_users); do
    use_user "$who"
    RC=0
    KGATE_PLUGIN_PATH=$EX as_user "$PREFIX/bin/kgate" plugins >"$OUT" 2>&1 || RC=$?
    check "installed kgate plugins exits 0" test "$RC" -eq 0
    check "lists the example with its ABI and file" grep -qxF "  hello (ABI $ABI) $EX/hello$SUF" "$OUT"
    check "its probe ran" grep -qF "available, score 0, version 1.0" "$OUT"
    check "nothing refused" sh -c "! grep -q '^refused:' '$OUT'"
    RC=0
    KGATE_PLUGIN_PATH=$EX as_user "$PREFIX/bin/kgate" doctor --backend hello >"$OUT" 2>&1 || RC=$?
    check "the example is honest: doctor BLOCKED, exit 1" test "$RC" -eq 1
    check "verdict line: BLOCKED hello" sh -c 'tail -n 1 "$1" | grep -q "^BLOCKED hello: "' _ "$OUT"
    check "with its reason above it" grep -q '^  BLOCKED   hello is an example' "$OUT"
done
finish
