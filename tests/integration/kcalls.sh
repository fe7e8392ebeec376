# kcalls.sh: sourced by the tests that try the seccomp filter's kernel
# surface from inside a box (escapes.sh: bubblewrap; landlock.sh: the
# Landlock box; restricted_net.sh: the slirp stage).  The calls are made by
# tests/helpers/kcalls.c (io_uring, AF_ALG, the twins of refused calls,
# native, i386 through int 0x80 and x32 where this kernel has them).

# kcalls_setup: copies the helper into $KG_PROJ, where every box can run
# it, as ./kcalls.  Skips the file (fails under KGATE_MUST_WORK) when the
# helper was not built.
kcalls_setup() {
    [ -x "${KGATE_TEST_KCALLS:-}" ] ||
        skip_all "tests/helpers/kcalls.c was not built (KGATE_TEST_KCALLS)"
    cp "$KGATE_TEST_KCALLS" "$KG_PROJ/kcalls" &&
        chown "$KG_UID:$KG_GID" "$KG_PROJ/kcalls" && chmod 0755 "$KG_PROJ/kcalls"
}

# kcalls_control: outside any box, as the test user, none of the calls
# gets the filter's errno (so the same answer inside is the filter's).
kcalls_control() {
    local out
    out=$(as_user "$KG_PROJ/kcalls" outside 2>&1) || {
        printf '%s\n' "$out" | head -40
        return 1
    }
}

# kcalls_refused CMD...: CMD runs ./kcalls inside a box; it must print
# kg-ran (its run happened: a box that did not start prints nothing) and
# then every call refused with the filter's errno.
kcalls_refused() {
    local out
    out=$("$@" 2>&1)
    printf '%s\n' "$out" | grep -qx kg-ran &&
        printf '%s\n' "$out" | grep -q '^kcalls: [0-9]* calls, each refused as the filter says$' || {
        printf 'want kg-ran, then every call refused:\n%s\n' "$out" | head -40
        return 1
    }
}
