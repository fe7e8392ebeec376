#!/bin/bash
# one_view.sh: one view of the system in both Linux boxes (issue 43,
# docs/one-view.md).  The same probe (what a program can stat, list, read
# and write) runs over the same places in the bubblewrap box and in the
# Landlock box (forced on the host, and picked by kgate itself inside
# another agent's bwrap --disable-userns and under a Docker-like seccomp
# profile), as root and as an unprivileged uid.  Every row and operation
# must come out the same in both boxes, or be listed, with its reason, as
# an expected difference in docs/one-view.md, which this reads.  Beside
# the comparison, what must hold in every box is checked on its own: a file
# left in the host's /tmp or /var/tmp and a deny_read path are never read.
. "$(dirname "$0")/lib.sh"
need_bwrap
need_nouserns
need_cmd python3 tar
check_hermetic .so
[ "$(landlock_abi)" -ge 1 ] || skip_all "Landlock is not enabled in this kernel"

DOC=$(dirname "$0")/../../docs/one-view.md
[ -r "$DOC" ] || { echo "FAIL: $DOC is missing"; exit 1; }
# The expected differences: "ROW.OP BWRAP LANDLOCK" from the table under
# "## Expected differences", whose first three columns are the row, what
# bubblewrap gives and what the Landlock box gives.  A listed row must come
# out as listed in each box: the page cannot go stale, and a difference of
# another kind is not hidden behind one that is documented.
EXPECTED=$(awk '/^## /{on = ($0 ~ /^## Expected differences/)} on && /^\| `/' "$DOC" |
    sed -n 's/^| `\([a-z_]*\.[a-z]*\)` | \([A-Za-z0-9]*\) | \([A-Za-z0-9]*\) |.*/\1 \2 \3/p')
[ -n "$EXPECTED" ] || { echo "FAIL: no expected differences read from $DOC"; exit 1; }
# expected ID BWRAP LANDLOCK: the page lists ID with these results (as classes).
expected() {
    local want
    want=$(printf '%s\n' "$EXPECTED" | awk -v id="$1" '$1 == id {print $2, $3}')
    [ -n "$want" ] && [ "$(class "${want% *}") $(class "${want#* }")" = "$(class "$2") $(class "$3")" ]
}

PROBE=$(cat "$(dirname "$0")/one_view_probe.py")
TAG=ov-$$
# Places outside the project, made for the test: a file a user left in
# /tmp and in /var/tmp, another user's home under /home (mode 0755, as
# useradd makes them on Debian), something on /mnt.
HOSTTMP=/tmp/kgt-left-$TAG.txt
HOSTVT=/var/tmp/kgt-left-$TAG.txt
OTHER=/home/kgt-$TAG
for f in "$HOSTTMP" "$HOSTVT"; do echo "left-$TAG" >"$f" && chmod 0644 "$f"; done
mkdir -m 0755 "$OTHER" && echo "other-$TAG" >"$OTHER/notes.txt" && chmod 0644 "$OTHER/notes.txt"
at_exit "rm -rf '$HOSTTMP' '$HOSTVT' '$OTHER'"

# The rows: ID=OPS:PATH (one_view_probe.py).  The project's deny_read
# file and directory, and the places of the system a program may look at.
rows() {
    local uid=$1
    printf '%s\n' \
        "tmp=slw:/tmp" \
        "tmp_file=sr:$HOSTTMP" \
        "var_tmp=slw:/var/tmp" \
        "var_tmp_file=sr:$HOSTVT" \
        "run=sl:/run" \
        "run_user=sl:/run/user" \
        "run_user_own=slw:/run/user/$uid" \
        "dev=sl:/dev" \
        "dev_null=srw:/dev/null" \
        "dev_shm=slw:/dev/shm" \
        "proc=sl:/proc" \
        "proc_self=sr:/proc/self/status" \
        "proc_one=sr:/proc/1/cmdline" \
        "home=sl:/home" \
        "home_other=sl:$OTHER" \
        "home_other_file=sr:$OTHER/notes.txt" \
        "real_home=sl:$KG_HOME" \
        "real_home_file=sr:$KG_HOME/secret.txt" \
        "mnt=sl:/mnt" \
        "media=sl:/media" \
        "root=sl:/" \
        "etc_file=srw:/etc/hostname" \
        "usr=slw:/usr" \
        "project=slwt:$KG_PROJ" \
        "deny_file=srw:$KG_PROJ/.env" \
        "deny_dir=slw:$KG_PROJ/private" \
        "deny_dir_file=sr:$KG_PROJ/private/key"
}

# probe_in BOX WHERE: the probe's rows in $KG_TMP/view.BOX.WHO, one
# "ROW ID OP=RESULT" line per operation; BOX bwrap or landlock.
probe_in() {
    local box=$1 where=$2 force=() out=$KG_TMP/view.$1.$2.$KG_WHO
    [ "$box" = landlock ] && [ "$where" = host ] && force=(--backend landlock)
    mapfile -t args < <(rows "$KG_UID")
    in_where "$where" "$KGATE_BIN" run "${force[@]}" -- python3 -c "$PROBE" "${args[@]}" \
        >"$out.raw" 2>"$out.err"
    # One operation a line, so that two views compare line by line.
    awk '/^ROW /{for (i = 3; i <= NF; i++) print $2 "." $i}' "$out.raw" | sort >"$out"
    printf '%s\n' "$out"
}

# The class of a result: what a program can tell.  A refusal is a
# refusal whichever of EACCES, EPERM, EROFS says it (a read-only mount
# under bubblewrap, a missing Landlock right); ENOENT says nothing is
# there; anything else is itself.
class() {
    case $1 in
    ok | ENOENT) echo "$1" ;;
    EACCES | EPERM | EROFS) echo refused ;;
    *) echo "$1" ;;
    esac
}

# compare A B LABEL: every operation of view B against view A.
compare() {
    local a=$1 b=$2 label=$3 id op ra rb
    local same=0 listed=0 unlisted=""
    while IFS= read -r line; do
        id=${line%%=*}
        ra=${line#*=}
        rb=$(sed -n "s/^$(printf '%s' "$id" | sed 's/\./\\./')=//p" "$b")
        if [ "$(class "$ra")" = "$(class "${rb:-missing}")" ]; then
            same=$((same + 1))
        elif expected "$id" "$ra" "${rb:-missing}"; then
            listed=$((listed + 1))
            echo "# $label: $id: bubblewrap $ra, Landlock ${rb:-missing} (docs/one-view.md)"
        else
            unlisted="$unlisted $id(bwrap $ra, landlock ${rb:-missing})"
        fi
    done <"$a"
    echo "# $label: $same the same, $listed expected differences"
    check "$label: every row the same in both boxes or an expected difference" \
        sh -c "[ -z '$unlisted' ] || { echo 'differs, not in docs/one-view.md:$unlisted' >&2; false; }"
}

# view_has VIEW ID.OP CLASS...: the operation came out as one of CLASS.
view_has() {
    local v=$1 id=$2 r
    shift 2
    r=$(sed -n "s/^$(printf '%s' "$id" | sed 's/\./\\./')=//p" "$v")
    for c in "$@"; do [ "$(class "${r:-missing}")" = "$c" ] && return 0; done
    echo "$id: ${r:-missing}, wanted $*" >&2
    return 1
}

# must_hold VIEW LABEL: what every box does, whatever the other does.
must_hold() {
    local v=$1 label=$2
    check "$label: the probe ran (first and last marker)" \
        sh -c "grep -qx PROBE-START '$v.raw' && grep -qx PROBE-END '$v.raw'"
    check "$label: control: the project is listed and written" \
        sh -c "grep -qx project.list=ok '$v' && grep -qx project.write=ok '$v'"
    check "$label: control: /dev/null is read and written" \
        sh -c "grep -qx dev_null.read=ok '$v' && grep -qx dev_null.write=ok '$v'"
    for id in tmp_file.read var_tmp_file.read real_home_file.read deny_file.read \
        deny_file.write deny_dir.list deny_dir_file.read home_other_file.read; do
        check "$label: $id is not done" view_has "$v" "$id" ENOENT refused
    done
    # A tool that walks the project is told what it could not read: tar
    # exits 2 (it archived an empty .env when the cover read empty).
    check "$label: tar of the project reports the deny_read paths" \
        grep -qx project.tar=EXIT2 "$v"
    check "$label: a deny_read file and directory still stat" \
        sh -c "grep -qx deny_file.stat=ok '$v' && grep -qx deny_dir.stat=ok '$v'"
    check "$label: nothing left in the host's /tmp or /var/tmp reached the output" \
        sh -c "! grep -q 'left-$TAG\|other-$TAG\|TOKEN=\|deny-key' '$v.raw' '$v.err'"
}

for who in $(test_users); do
    use_user "$who"
    write_config <<CFG
network: off
deny_read: [.env, private]
CFG
    echo "home secret" >"$KG_HOME/secret.txt"
    echo "TOKEN=abc" >"$KG_PROJ/.env"
    mkdir -p "$KG_PROJ/private"
    echo "deny-key" >"$KG_PROJ/private/key"
    chown -R "$KG_UID:$KG_GID" "$KG_HOME"
    # The file a user left in /var/tmp is that user's.
    chown "$KG_UID:$KG_GID" "$HOSTTMP" "$HOSTVT"

    check "$who: control: outside, the places the rows name are readable" \
        as_user sh -c "cat '$HOSTVT' '$HOSTTMP' '$OTHER/notes.txt' '$KG_PROJ/.env' >/dev/null"
    base=$(probe_in bwrap host)
    must_hold "$base" "$who bwrap"
    for where in host disable seccomp; do
        v=$(probe_in landlock "$where")
        if [ "$where" != host ] && [ "$HERMETIC" = 1 ]; then
            check "$who landlock $where: kgate picked the Landlock box by itself" \
                python3 -c 'import json,sys; e=[r for r in map(json.loads, open(sys.argv[1])) if r["kind"]=="launch"][-1]; sys.exit(0 if e["backend"]=="landlock" else 1)' "$KG_HOME/.kgate/audit.log"
        fi
        must_hold "$v" "$who landlock $where"
        compare "$base" "$v" "$who landlock $where"
    done
    check "$who: nothing was written in the host's /var/tmp or /usr" \
        sh -c "! ls /var/tmp/kgt-ov-* /usr/kgt-ov-* /tmp/kgt-ov-* 2>/dev/null | grep -q ."
done
finish
