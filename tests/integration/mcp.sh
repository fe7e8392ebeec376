#!/bin/bash
# mcp.sh: `kgate mcp` (issue 42 part 4, docs/agents.md, "MCP") as an agent's
# MCP client drives it: the official TypeScript SDK's client over its stdio
# transport (mcp_client.mjs), then raw JSON-RPC no SDK would send
# (mcp_raw.py).  As root and as an unprivileged uid.
#
# MCP_BOX=bubblewrap (the default): the plain host, bubblewrap's box.
# MCP_BOX=landlock: the Landlock box, forced with kgate mcp --backend
# landlock on the host, and picked by kgate itself inside another agent's
# bwrap --disable-userns and under a Docker-like seccomp profile
# (landlock.sh's places).
#
# The SDK is installed from npm at a pinned version into a cache shared
# across runs (/var/cache/kgate-test-npm as root, else $XDG_CACHE_HOME or
# ~/.cache); a machine where it cannot be installed skips, with the reason.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mcp_npm.sh"
need_cmd node npm python3 setpriv
MCP_BOX=${MCP_BOX:-bubblewrap}
case $MCP_BOX in
bubblewrap) need_bwrap ;;
landlock)
    need_nouserns
    ABI=$(landlock_abi)
    [ "$ABI" -ge 1 ] || skip_all "Landlock is not enabled in this kernel"
    ;;
*) echo "FAIL: MCP_BOX=$MCP_BOX is not bubblewrap or landlock"; exit 1 ;;
esac
node -e 'process.exit(+process.versions.node.split(".")[0] >= 18 ? 0 : 1)' ||
    skip_all "node $(node --version) is older than the SDK's 18"

MCP_SDK_VERSION=1.32.2

npm_cached @modelcontextprotocol/sdk "$MCP_SDK_VERSION" mcp-sdk --ignore-scripts
MCP_SDK_DIR=$NPM_DIR
echo "# MCP SDK $MCP_SDK_VERSION in $MCP_SDK_DIR, box $MCP_BOX"
CLIENT=$(kg_reachable "$(dirname "$0")/mcp_client.mjs")
RAW=$(kg_reachable "$(dirname "$0")/mcp_raw.py")

# count_lines FILE LABEL: every "ok"/"not ok" line the driver printed is a
# check here; a driver that printed none, or died, fails.
count_lines() {
    local file=$1 label=$W$2 line n=0
    while IFS= read -r line; do
        case $line in
        "ok - "*) check "$label: ${line#ok - }" true; n=$((n + 1)) ;;
        "not ok - "*) check "$label: ${line#not ok - }" false; n=$((n + 1)) ;;
        "# "*) echo "$line" ;;
        esac
    done <"$file"
    check "$label: the driver ran its checks to the end" grep -q "^# .* done, " "$file"
    [ "$n" -gt 0 ] || sed 's/^/#   /' "$file" | tail -20
}

# no_process PATTERN: nothing runs whose command line matches (the run of
# that name was ended).  Bounded: kgate ends a run's tree in seconds.
# The pattern's first letter in brackets: it does not match the shell that
# runs pgrep, whose own command line holds the pattern.
no_process() { poll 300 sh -c "! pgrep -f -- '[${1:0:1}]${1:1}' >/dev/null"; }

test_where() {
    local where=$1 who=$2 args=() backend=$MCP_BOX
    [ "$where" = host ] && [ "$MCP_BOX" = landlock ] && args=(--backend landlock)
    use_user "$who"
    # as_user drops to the unprivileged uid when KG_WHO is "user": the
    # place goes into each check's name instead.
    W="$where: "
    write_config <<EOF
network: off
EOF
    echo TOPSECRET >"$KG_HOME/secret.txt"
    mkdir -p "$KG_PROJ/sub"
    ln -s /tmp "$KG_PROJ/link-out"
    chown -R "$KG_UID:$KG_GID" "$KG_PROJ" "$KG_HOME/secret.txt"
    chmod 0600 "$KG_HOME/secret.txt"
    local tag=$$$RANDOM out=$KG_TMP/client.$who.$where
    in_where "$where" env MCP_SDK_DIR="$MCP_SDK_DIR" KGATE_BIN="$KGATE_BIN" \
        MCP_SERVER_ARGS="${args[*]}" REAL_HOME="$KG_HOME" MCP_EXPECT_BACKEND="$backend" \
        MCP_TAG="$tag" timeout 300 node "$CLIENT" >"$out" 2>&1
    count_lines "$out" sdk
    check "${W}the audit log has the run the client asked for" \
        grep -q "MCP-AUDIT-$tag" "$KG_HOME/.kgate/audit.log"
    check "${W}the timed-out run's process is gone" no_process "sleep 61$tag"
    # The client closed while a run went on (its marker: long-started).
    check "${W}the run of a client that left is ended" no_process "sleep 62$tag"
    check "${W}... and never reached its end" test ! -e "$KG_PROJ/long-ended"
    check "${W}the write into \$HOME did not land (checked outside)" test ! -e "$KG_HOME/planted"
    out=$KG_TMP/raw.$who.$where
    KG_CWD=$KG_PROJ in_where "$where" timeout 300 python3 "$RAW" "$KGATE_BIN" "${args[@]}" \
        >"$out" 2>&1
    count_lines "$out" raw
}

if [ "$MCP_BOX" = landlock ]; then places="host disable seccomp"; else places=host; fi
for who in ${MCP_USERS:-$(test_users)}; do
    for where in $places; do test_where "$where" "$who"; done
done
finish
