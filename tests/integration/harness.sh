#!/usr/bin/env bash
# The example agent harness (docs/examples/agent-harness.py) sees the exit
# status and masked output that docs/agent-harness.md promises, for an
# allowed, a blocked and a kernel-denied command.
. "$(dirname "$0")/lib.sh"
need_cmd python3
need_bwrap
# A copy the test user can read: the clone may sit under a private
# directory such as /root (lib.sh does the same for the binary).
HARNESS=$KG_TMP/agent-harness.py
install -m 0644 "$KGATE_SOURCE_ROOT/docs/examples/agent-harness.py" "$HARNESS"

field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

for who in $(test_users); do
    use_user "$who"
    printf 'network: off\n' | write_config
    echo "real secret" >"$KG_HOME/secret.txt"
    chown "$KG_UID:$KG_GID" "$KG_HOME/secret.txt"

    out=$(as_user python3 "$HARNESS" --kgate "$KGATE_BIN" --json \
        'echo hello; echo ghp_0123456789abcdefghijklmnop >&2')
    check "allowed command exits 0" test "$(field "$out" exit)" = 0
    check "allowed command output reaches the harness" test "$(field "$out" stdout)" = hello
    check "a token on stderr is masked for the harness" \
        test "$(field "$out" stderr)" = 'ghp_***'

    out=$(as_user python3 "$HARNESS" --kgate "$KGATE_BIN" --json 'curl http://198.18.0.1/')
    check "blocked command exits 126" test "$(field "$out" exit)" = 126
    check "blocked command is explained in one kgate: line" \
        sh -c '[ "$(printf "%s" "$1" | grep -c "^kgate:")" = 1 ]' _ "$(field "$out" stderr)"

    out=$(as_user python3 "$HARNESS" --kgate "$KGATE_BIN" --json 'touch /usr/kgate-denied')
    check "kernel-denied write fails with the program's own status" \
        test "$(field "$out" exit)" = 1
    check "the kernel's refusal reaches the harness" \
        sh -c 'printf "%s" "$1" | grep -q "Read-only file system"' _ "$(field "$out" stderr)"
    check "nothing was created outside the box" test ! -e /usr/kgate-denied

    out=$(as_user python3 "$HARNESS" --kgate "$KGATE_BIN" --json \
        "echo planted > $KG_HOME/secret.txt")
    check "a write into the hidden home succeeds inside (it is a tmpfs)" \
        test "$(field "$out" exit)" = 0
    check "and the real file is untouched" grep -qx "real secret" "$KG_HOME/secret.txt"
    out=$(as_user python3 "$HARNESS" --kgate "$KGATE_BIN" --json "cat $KG_HOME/secret.txt")
    check "a file in \$HOME is not readable through the harness" \
        test "$(field "$out" exit)" = 1
    check "because cat ran and found nothing there (not a refusal)" \
        sh -c 'printf "%s" "$1" | grep -q "No such file"' _ "$(field "$out" stderr)"
done
finish
