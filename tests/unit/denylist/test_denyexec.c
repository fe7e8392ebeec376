/* test_denyexec.c: every route of the exec deny list, each with a command
 * that must be blocked and a neighbour that must run. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "denyexec.h"
#include "fpcache.h"

#ifdef __APPLE__ /* macOS spells the timestamps of struct stat its own way */
#define st_mtim st_mtimespec
#define st_ctim st_ctimespec
#endif
#include "testutil.h"

static char tmp[PATH_MAX];
static char bin[PATH_MAX + 8], work[PATH_MAX + 8], hidden[PATH_MAX + 8], cache[PATH_MAX + 8];
static char path_env[4 * PATH_MAX];
static char reason[512];
static kg_denyexec *dx;

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "fopen %s", path);
    char *buf = malloc(4 << 20);
    *len = fread(buf, 1, 4 << 20, f);
    fclose(f);
    return buf;
}

/* /usr/bin/true with a tag appended: runnable, and a content of its own. */
static void make_binary(const char *path, const char *tag)
{
    size_t len;
    char *b = read_all("/usr/bin/true", &len);
    size_t tl = strlen(tag);
    memcpy(b + len, tag, tl);
    kgt_write_file(path, b, len + tl, 0755);
    free(b);
}

static void copy_file(const char *from, const char *to)
{
    size_t len;
    char *b = read_all(from, &len);
    kgt_write_file(to, b, len, 0755);
    free(b);
}

static char *pj(const char *dir, const char *name)
{
    static char buf[8][PATH_MAX * 2];
    static int k;
    char *r = buf[k++ % 8];
    snprintf(r, PATH_MAX * 2, "%s/%s", dir, name);
    return r;
}

static kg_denyexec *make(const char *first, ...)
{
    kg_strv *v = kg_strv_new();
    va_list ap;
    va_start(ap, first);
    for (const char *s = first; s; s = va_arg(ap, const char *)) kg_strv_push(v, s);
    va_end(ap);
    kg_error err = {0};
    kg_denyexec *d = kg_denyexec_new(v, path_env, cache, &err);
    ck_assert_msg(d != NULL, "%s", err.msg);
    kg_strv_free(v);
    return d;
}

/* Runs the check on the words given (NULL-terminated) from work/. */
static int run(const char *first, ...)
{
    const char *argv[64];
    size_t n = 0;
    va_list ap;
    va_start(ap, first);
    for (const char *s = first; s; s = va_arg(ap, const char *)) argv[n++] = s;
    va_end(ap);
    kg_error err = {0};
    int r = kg_denyexec_check(dx, argv, n, work, reason, sizeof reason, &err);
    ck_assert_msg(r >= 0, "check failed: %s", err.msg);
    if (r) ck_assert_msg(strchr(reason, '\n') == NULL && reason[0], "reason: %s", reason);
    return r;
}

#define BLOCKED(...) ck_assert_msg(run(__VA_ARGS__, NULL) == 1, "not blocked: %s", #__VA_ARGS__)
#define ALLOWED(...) \
    ck_assert_msg(run(__VA_ARGS__, NULL) == 0, "blocked: %s (%s)", #__VA_ARGS__, reason)

static void setup(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/kg-denyexec.XXXXXX");
    ck_assert(mkdtemp(tmp) != NULL);
    snprintf(bin, sizeof bin, "%s/bin", tmp);
    snprintf(work, sizeof work, "%s/work", tmp);
    snprintf(hidden, sizeof hidden, "%s/hidden", tmp);
    snprintf(cache, sizeof cache, "%s/cache", tmp);
    mkdir(bin, 0755);
    mkdir(work, 0755);
    mkdir(hidden, 0755);
    snprintf(path_env, sizeof path_env, "%s:/usr/local/bin:/usr/bin:/bin", bin);

    /* denyme and okay have the same size and different bytes. */
    make_binary(pj(bin, "denyme"), "denyme-marker\n");
    make_binary(pj(bin, "okay"), "okay-marker-x\n");
    make_binary(pj(bin, "pathonly"), "pathonly-mark\n");
    copy_file(pj(bin, "denyme"), pj(work, "copy"));
    copy_file(pj(bin, "denyme"), pj(hidden, "x"));
    copy_file(pj(bin, "okay"), pj(work, "other"));
    ck_assert_int_eq(link(pj(bin, "denyme"), pj(work, "hl")), 0);
    ck_assert_int_eq(symlink(pj(bin, "denyme"), pj(work, "sl")), 0);
    /* A multi-call binary with two applets, one of them denied. */
    make_binary(pj(bin, "busybox"), "busybox-multi\n");
    ck_assert_int_eq(symlink("busybox", pj(bin, "fetch")), 0);
    ck_assert_int_eq(symlink("busybox", pj(bin, "lister")), 0);
    /* Renamed shells and wrappers are still shells and wrappers. */
    copy_file("/bin/sh", pj(work, "mysh"));
    copy_file("/usr/bin/env", pj(work, "myenv"));

    const char *s;
    s = "#!/bin/sh\necho start\ndenyme --now\n";
    kgt_write_file(pj(work, "bad.sh"), s, strlen(s), 0755);
    s = "#!/bin/sh\n# denyme in a comment\necho denyme\ncat <<'EOF'\ndenyme\nEOF\n";
    kgt_write_file(pj(work, "good.sh"), s, strlen(s), 0755);
    s = "echo no shebang\ndenyme\n";
    kgt_write_file(pj(work, "noshebang"), s, strlen(s), 0755);
    s = "echo no shebang\ntrue\n";
    kgt_write_file(pj(work, "noshebang-ok"), s, strlen(s), 0755);
    s = "#!/usr/bin/env sh\nset -e\nif true; then denyme; fi\n";
    kgt_write_file(pj(work, "env.sh"), s, strlen(s), 0755);
    s = "#!/usr/bin/env bash\nfor f in a b; do echo \"$f\"; done\n";
    kgt_write_file(pj(work, "env-ok.sh"), s, strlen(s), 0755);
    s = "#!/usr/bin/python3\nimport os\nos.system('denyme')\n";
    kgt_write_file(pj(work, "script.py"), s, strlen(s), 0755);
    s = "#!/bin/sh\n./bad.sh\n";
    kgt_write_file(pj(work, "calls-bad.sh"), s, strlen(s), 0755);
    s = "#!/bin/sh\n[ -n \"$1\" ] || ./self.sh again\necho done\n";
    kgt_write_file(pj(work, "self.sh"), s, strlen(s), 0755);
    char sheb[PATH_MAX + 32];
    snprintf(sheb, sizeof sheb, "#!%s/denyme -x\n", bin);
    kgt_write_file(pj(work, "interp-denied"), sheb, strlen(sheb), 0755);
    s = "denyme\n"; /* sourced, not executable */
    kgt_write_file(pj(work, "lib.sh"), s, strlen(s), 0644);

    dx = make("denyme", "fetch", "curl", pj(bin, "pathonly"), NULL);
}

static void rm_rf(const char *p)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", p);
    ck_assert_int_eq(system(cmd), 0);
}

static void teardown(void)
{
    kg_denyexec_free(dx);
    dx = NULL;
    rm_rf(tmp);
}

START_TEST(resolve_like_execvp)
{
    char *r = kg_exec_resolve("denyme", path_env, work);
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(r, pj(bin, "denyme"));
    free(r);
    r = kg_exec_resolve("./copy", path_env, work);
    ck_assert_str_eq(r, pj(work, "copy"));
    free(r);
    r = kg_exec_resolve("copy", path_env, work); /* not on PATH */
    ck_assert_ptr_null(r);
    char p2[PATH_MAX * 2];
    snprintf(p2, sizeof p2, "/nonexistent::%s", bin); /* empty entry = cwd */
    r = kg_exec_resolve("copy", p2, work);
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(r, pj(work, "copy"));
    free(r);
    ck_assert_ptr_null(kg_exec_resolve("lib.sh", ".", work)); /* not executable */
    ck_assert_ptr_null(kg_exec_resolve("work", tmp, "/")); /* a directory */
    r = kg_exec_resolve("sl", ".", work); /* realpath */
    ck_assert_str_eq(r, pj(bin, "denyme"));
    free(r);
    ck_assert_ptr_null(kg_exec_resolve("", path_env, work));
}
END_TEST

START_TEST(name_and_path)
{
    BLOCKED("denyme");
    ck_assert_str_eq(reason, "denyme is on the deny list (matched \"denyme\")");
    ALLOWED("okay");
    ALLOWED("true");
    BLOCKED(pj(bin, "denyme"));
    BLOCKED("curl", "https://example.com"); /* by name, installed or not */
    ALLOWED("curly");
    ALLOWED("echo", "denyme"); /* an argument is not a command */
    ALLOWED("git", "commit", "-m", "denyme is bad");
    ALLOWED("echo", "curl");
    ALLOWED("git", "commit", "-m", "curl is bad");
    ALLOWED("sh", "-c", "echo curl");
    /* A path entry: the file it names, however it is reached. */
    BLOCKED("pathonly");
    BLOCKED(pj(bin, "pathonly"));
}
END_TEST

START_TEST(links_and_copies)
{
    BLOCKED("./hl");
    ck_assert_msg(strstr(reason, "same file as") != NULL, "%s", reason);
    BLOCKED("./sl");
    BLOCKED("./copy");
    char want[PATH_MAX * 2];
    snprintf(want, sizeof want, "denyme is on the deny list (./copy is a copy of %s/denyme)", bin);
    ck_assert_str_eq(reason, want);
    ALLOWED("./other"); /* same size, other bytes */
    /* The same check again answers the same (now from the cache). */
    BLOCKED("./copy");
    ALLOWED("./other");
}
END_TEST

START_TEST(multicall)
{
    BLOCKED("fetch");
    ALLOWED("lister"); /* same busybox file, another applet */
    ALLOWED(pj(bin, "busybox"), "lister");
    BLOCKED(pj(bin, "busybox"), "fetch");
    BLOCKED("env", "busybox", "fetch");
}
END_TEST

START_TEST(wrappers)
{
    BLOCKED("env", "-i", "FOO=1", "denyme");
    ck_assert_str_eq(reason, "denyme is on the deny list (matched \"denyme\" run by env)");
    ALLOWED("env", "FOO=1", "true");
    ALLOWED("env");
    BLOCKED("env", "-u", "HOME", "--", "denyme");
    BLOCKED("env", "--unset=HOME", "./copy");
    BLOCKED("env", "-C", hidden, "./x");
    ALLOWED("env", "-C", work, "./other");
    BLOCKED("env", "-S", "denyme -x");
    BLOCKED("env", "--split-string=true; denyme");
    BLOCKED("env", pj("PATH=", hidden), "x");
    ALLOWED("env", "PATH=/usr/bin", "x");
    BLOCKED("./myenv", "denyme"); /* a copy of env */
    BLOCKED("nice", "-n", "5", "denyme");
    BLOCKED("nice", "-5", "denyme");
    BLOCKED("nice", "--adjustment", "3", "denyme");
    ALLOWED("nice", "-n", "5", "true");
    BLOCKED("nohup", "denyme");
    ALLOWED("nohup", "true");
    BLOCKED("timeout", "-s", "KILL", "-k", "2", "5", "denyme");
    BLOCKED("timeout", "--kill-after=1", "5s", "denyme");
    BLOCKED("timeout", "--signal", "TERM", "5", "./copy");
    ALLOWED("timeout", "5", "true");
    ALLOWED("timeout", "5", "echo", "denyme");
    BLOCKED("xargs", "-n", "1", "-P", "2", "denyme");
    BLOCKED("xargs", "-0", "-I{}", "denyme", "{}");
    ALLOWED("xargs", "-0", "true");
    ALLOWED("xargs");
    BLOCKED("xargs", "sh", "-c"); /* the string would come from stdin */
    BLOCKED("xargs", "env");
    ALLOWED("xargs", "sh", "-c", "echo \"$@\"", "_");
    BLOCKED("xargs", "sh", "-c", "\"$@\"", "_");
    BLOCKED("xargs", "-n1", "bash", "-c", "$1 -x", "_");
    BLOCKED("stdbuf", "-o", "L", "denyme");
    BLOCKED("stdbuf", "-oL", "-e0", "denyme");
    ALLOWED("stdbuf", "--output=L", "true");
    BLOCKED("setsid", "-w", "denyme");
    ALLOWED("setsid", "-f", "true");
    BLOCKED("time", "-p", "denyme");
    BLOCKED("time", "-f", "%e", "denyme");
    ALLOWED("time", "-o", "denyme", "true"); /* -o names an output file */
    BLOCKED("sudo", "-u", "nobody", "A=1", "denyme");
    ALLOWED("sudo", "-u", "denyme", "true");
    BLOCKED("env", "nice", "timeout", "5", "denyme");
    BLOCKED("nohup", "env", "-i", "stdbuf", "-oL", "setsid", "nice", "-n1", "timeout", "1", "./sl");
    ALLOWED("env", "nice", "timeout", "5", "true", "denyme");
    BLOCKED("watch", "-n", "1", "denyme", "-x");
    ALLOWED("watch", "-n", "1", "echo", "denyme");
    BLOCKED("flock", "/tmp/lock", "denyme");
    BLOCKED("flock", "-w", "1", "/tmp/lock", "-c", "true && denyme");
    ALLOWED("flock", "/tmp/lock", "true");
    BLOCKED("ionice", "-c", "3", "denyme");
    BLOCKED("taskset", "-c", "0", "denyme");
    BLOCKED("chrt", "-b", "0", "denyme");
    BLOCKED("su", "-", "nobody", "-c", "denyme x");
    BLOCKED("su", "-s", "/bin/sh", "--command=true; denyme");
    ALLOWED("su", "-c", "echo denyme", "nobody");
    BLOCKED("runuser", "-u", "nobody", "--", "denyme");
    ALLOWED("runuser", "-u", "nobody", "--", "true", "denyme");
    BLOCKED("script", "-q", "-c", "denyme", "/dev/null");
    BLOCKED("setpriv", "--reuid", "65534", "--clear-groups", "denyme");
    BLOCKED("unshare", "-r", "-n", "--wd", "/", "denyme");
    BLOCKED("chroot", "/", "denyme");
    BLOCKED("strace", "-f", "-o", "/dev/null", "denyme");
    BLOCKED("systemd-run", "--user", "-p", "X=1", "--wait", "denyme");
    BLOCKED("faketime", "-f", "2020-01-01", "denyme");
    ALLOWED("strace", "-o", "denyme", "true");
}
END_TEST

START_TEST(find_exec)
{
    BLOCKED("find", ".", "-name", "*.c", "-exec", "denyme", "{}", ";");
    ck_assert_msg(strstr(reason, "run by find -exec") != NULL, "%s", reason);
    BLOCKED("find", ".", "-execdir", "./copy", "{}", "+");
    BLOCKED("find", ".", "-ok", "sh", "-c", "denyme {}", ";");
    BLOCKED("find", ".", "-exec", "true", "{}", ";", "-exec", "denyme", ";");
    ALLOWED("find", ".", "-name", "denyme");
    ALLOWED("find", ".", "-exec", "grep", "denyme", "{}", "+");
}
END_TEST

START_TEST(shell_strings)
{
    BLOCKED("sh", "-c", "denyme");
    ck_assert_str_eq(reason, "denyme is on the deny list (matched \"denyme\" in the sh -c string)");
    ALLOWED("sh", "-c", "echo denyme");
    ALLOWED("sh", "-c", "make test && echo ok");
    BLOCKED("bash", "-lc", "true && denyme x");
    BLOCKED("sh", "-e", "-c", "cd /tmp; denyme");
    BLOCKED("bash", "-o", "pipefail", "-c", "true | denyme");
    BLOCKED("dash", "-c", "false || denyme");
    BLOCKED("zsh", "-c", "sleep 1 & denyme");
    BLOCKED("ksh", "-c", "true\ndenyme");
    BLOCKED("sh", "-c", "echo $(denyme x)");
    BLOCKED("sh", "-c", "echo \"$(true; denyme x)\"");
    BLOCKED("sh", "-c", "echo `denyme x`");
    BLOCKED("sh", "-c", "(denyme)");
    BLOCKED("sh", "-c", "{ denyme; }");
    BLOCKED("sh", "-c", ">/dev/null 2>&1 denyme");
    BLOCKED("sh", "-c", "FOO=1 BAR='a b' denyme");
    BLOCKED("sh", "-c", "X=$(denyme) true");
    BLOCKED("sh", "-c", "cat <(denyme)");
    BLOCKED("sh", "-c", "exec denyme");
    BLOCKED("sh", "-c", "command denyme");
    ALLOWED("sh", "-c", "command -v denyme >/dev/null || echo missing");
    BLOCKED("sh", "-c", "time denyme");
    BLOCKED("sh", "-c", "\"denyme\" x");
    BLOCKED("sh", "-c", "de\\nyme");
    BLOCKED("sh", "-c", "./copy");
    BLOCKED("sh", "-c", "cd ../hidden && ./x");
    ALLOWED("sh", "-c", "cd ../work && ./other");
    BLOCKED("sh", "-c", "PATH=../hidden:$PATH; x");
    BLOCKED("sh", "-c", "export PATH=\"$PATH:../hidden\"\nx");
    /* Nested shells. */
    BLOCKED("sh", "-c", "bash -c 'denyme x'");
    BLOCKED("sh", "-c", "bash -c \"sh -c 'env denyme'\"");
    ALLOWED("sh", "-c", "bash -c \"sh -c 'echo denyme'\"");
    BLOCKED("./mysh", "-c", "denyme"); /* a copy of sh */
    BLOCKED("sh", "-c", "eval 'denyme x'");
    BLOCKED("sh", "-c", "trap 'denyme' EXIT; true");
    BLOCKED("sh", "-c", "alias x='denyme -q'");
    /* Variables and positional parameters the string is given. */
    BLOCKED("sh", "-c", "c=denyme; $c x");
    BLOCKED("sh", "-c", "c='denyme -s'; ${c} x");
    BLOCKED("sh", "-c", "\"$@\"", "sh", "denyme", "x");
    BLOCKED("sh", "-c", "$1 x", "sh", "denyme");
    BLOCKED("sh", "-c", "${c:-denyme} x");
    BLOCKED("sh", "-c", "x=; de${x}nyme -q");
    BLOCKED("sh", "-c", "a=den b=yme; \"$a$b\"");
    ALLOWED("sh", "-c", "CC=cc; $CC -o x x.c; ${MAKE:-make} all");
    BLOCKED("sh", "-c", "w=denyme; exec $w");
    BLOCKED("sh", "-c", "exec \"$@\"", "sh", "denyme");
    BLOCKED("sh", "-c", "env FOO=1 \"$1\" x", "sh", "denyme");
    ALLOWED("sh", "-c", "exec \"$@\"", "sh", "echo", "denyme");
    BLOCKED("bash", "-c", "coproc denyme x");
    BLOCKED("sh", "-c", "${PREFIX}denyme x");
    ALLOWED("sh", "-c", "timeout \"$T\" grep \"denyme x\" file");
    ALLOWED("sh", "-c", "x=5; timeout \"$x\" grep \"denyme x\" file");
    BLOCKED("sh", "-c", "echo $(( $(denyme) + 1 ))");
    ALLOWED("sh", "-c", "\"$@\"", "sh", "echo", "denyme");
    ALLOWED("sh", "-c", "git commit -m \"denyme is bad\"");
}
END_TEST

START_TEST(keywords)
{
    BLOCKED("sh", "-c", "if denyme; then :; fi");
    BLOCKED("sh", "-c", "if true; then denyme; fi");
    BLOCKED("sh", "-c", "if false; then :; elif true; then :; else denyme; fi");
    BLOCKED("sh", "-c", "while true; do denyme; done");
    BLOCKED("sh", "-c", "until denyme; do :; done");
    BLOCKED("sh", "-c", "! denyme");
    BLOCKED("sh", "-c", "for x in a b; do denyme \"$x\"; done");
    ALLOWED("sh", "-c", "for x in denyme curl; do echo \"$x\"; done");
    BLOCKED("sh", "-c", "case $1 in a) denyme;; esac");
    BLOCKED("sh", "-c", "case $1 in\n (a|b) true ;;\n *) denyme ;;\nesac");
    ALLOWED("sh", "-c", "case $1 in denyme) echo x;; curl|wget) echo y;; esac");
    ALLOWED("sh", "-c", "case x in a) echo $(case y in b) echo z;; esac);; esac; echo ok");
    BLOCKED("sh", "-c", "f() { denyme; }; f");
    BLOCKED("bash", "-c", "function f { denyme; }");
    ALLOWED("bash", "-c", "function f() { echo denyme; }; f");
    ALLOWED("bash", "-c", "[[ $x == denyme ]] && echo yes");
    BLOCKED("bash", "-c", "[[ -n $x ]] && denyme");
    ALLOWED("bash", "-c", "(( i = 1 + 2 )); echo $((i * 2))");
    ALLOWED("bash", "-c", "for ((denyme=0; denyme<3; denyme++)); do echo $denyme; done");
    BLOCKED("bash", "-c", "for ((i=0; i<3; i++)); do denyme; done");
    ALLOWED("sh", "-c", "# denyme\necho ok # denyme");
    ALLOWED("sh", "-c", "cat <<EOF\ndenyme\nEOF\necho done");
    BLOCKED("sh", "-c", "cat <<EOF\n$(denyme)\nEOF");
    ALLOWED("sh", "-c", "cat <<'EOF'\n$(denyme)\nEOF");
    BLOCKED("sh", "-c", "cat <<-EOF\n\tok\n\tEOF\ndenyme");
    ALLOWED("sh", "-c", "echo x > denyme");
    ALLOWED("sh", "-c", "cat <<< denyme");
}
END_TEST

START_TEST(documented_routes)
{
    /* env - (the same as env -i) */
    BLOCKED("env", "-", "denyme");
    BLOCKED("env", "-", "PATH=/nonexistent", "denyme");
    ALLOWED("env", "-", "true");
    /* $'...' decoded as bash decodes it */
    BLOCKED("bash", "-c", "$'\\x64enyme' x");
    BLOCKED("bash", "-c", "$'\\144enyme'");
    BLOCKED("bash", "-c", "$'\\u0064enyme'");
    BLOCKED("bash", "-c", "$'\\U00000064enyme'");
    BLOCKED("bash", "-c", "$'d\\x65nym\\x65'");
    BLOCKED("bash", "-c", "$'c\\x75rl'");
    ALLOWED("bash", "-c", "echo $'\\x64enyme'");
    ALLOWED("bash", "-c", "$'\\x64eny\\x00me'"); /* bash stops at the NUL: "deny" */
    /* coproc, with and without a name */
    BLOCKED("bash", "-c", "coproc denyme x");
    BLOCKED("bash", "-c", "coproc F { denyme x; }");
    BLOCKED("bash", "-c", "coproc F (denyme x)");
    BLOCKED("bash", "-c", "coproc F while true; do denyme; done");
    BLOCKED("bash", "-c", "coproc { denyme; }");
    ALLOWED("bash", "-c", "coproc F { sleep 1; }; echo denyme");
    /* set -- and shift change "$@" */
    BLOCKED("bash", "-c", "set -- denyme x; \"$@\"");
    BLOCKED("bash", "-c", "set -e -- denyme x; \"$@\"");
    BLOCKED("bash", "-c", "set denyme x; $1 y");
    BLOCKED("bash", "-c", "set -- true denyme; shift; \"$@\"");
    BLOCKED("bash", "-c", "x=denyme; set -- $x; \"$@\"");
    ALLOWED("bash", "-c", "set -- a denyme; echo \"$@\"");
    ALLOWED("bash", "-c", "set -e; echo denyme");
    /* a for (or select) loop variable takes each word of its list */
    BLOCKED("bash", "-c", "for c in denyme; do $c x; done");
    BLOCKED("bash", "-c", "for c in ls denyme; do \"$c\" x; done");
    BLOCKED("bash", "-c", "for c in $'\\x64enyme'; do $c; done");
    BLOCKED("bash", "-c", "for c; do $c x; done", "_", "denyme");
    BLOCKED("bash", "-c", "select c in denyme; do $c; done");
    BLOCKED("bash", "-c", "for i in 1; do for c in denyme; do ${c}; done; done");
    ALLOWED("bash", "-c", "for c in deny me; do $c; done");
    ALLOWED("bash", "-c", "for c in denyme; do echo $c; done");
    /* a value built from other variables */
    BLOCKED("bash", "-c", "x=d; y=${x}enyme; $y");
    BLOCKED("bash", "-c", "x=d; y=\"${x}enyme\"; \"$y\" z");
    BLOCKED("sh", "-c", "x=d; y=${x}en; z=${y}yme; $z");
    BLOCKED("bash", "-c", "x=d; export y=${x}enyme; $y");
    BLOCKED("bash", "-c", "x=c; y=${x}url; $y");
    ALLOWED("bash", "-c", "x=d; y=${x}enyme; echo $y");
}
END_TEST

/* (issue 26, 5) A copy or link made and run inside one string does not
 * exist when kgate looks: the tools that would make one are refused when
 * an operand is a denied file, another name of it or a copy of it. */
START_TEST(copy_makers)
{
    char den[PATH_MAX * 2], want[PATH_MAX * 4];
    snprintf(den, sizeof den, "%s/denyme", bin);
    /* {reader, text before the path, text after it} */
    const char *routes[][3] = {
        {"cp", "cp ", " x && ./x"},
        {"cp", "cp -p -- ", " x; ./x"},
        {"ln", "ln -s ", " x && ./x"},
        {"ln", "ln ", " x && ./x"},
        {"link", "link ", " x && ./x"},
        {"install", "install -m 0755 ", " x && ./x"},
        {"mv", "mv ", " x && ./x"},
        {"rsync", "rsync -a ", " x && ./x"},
        {"cat", "cat ", " > x; chmod +x x; ./x"},
        {"dd", "dd if=", " of=x bs=1M; chmod +x x; ./x"},
        {"<", "cat < ", " > x; chmod +x x; ./x"},
        {"<", "tee x < ", " >/dev/null; ./x"},
        {"cp", "busybox cp ", " x; ./x"},
        {"cp", "d=", "; cp \"$d\" x; ./x"},
    };
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        char str[PATH_MAX * 3];
        snprintf(str, sizeof str, "%s%s%s", routes[i][1], den, routes[i][2]);
        ck_assert_msg(run("sh", "-c", str, NULL) == 1, "not blocked: %s", str);
        snprintf(want, sizeof want, "denyme is on the deny list (%s of ", routes[i][0]);
        ck_assert_msg(strncmp(reason, want, strlen(want)) == 0, "%s: reason %s", str, reason);
    }
    /* Another name of it (hl, sl), a copy of it, a relative target of a
     * symbolic link, a name entry looked up on PATH, and at the top. */
    BLOCKED("sh", "-c", "cp hl y && ./y");
    BLOCKED("sh", "-c", "cp sl y && ./y");
    BLOCKED("sh", "-c", "cp ./copy y && ./y");
    ck_assert_msg(strstr(reason, "a copy of") != NULL, "%s", reason);
    ck_assert_int_eq(mkdir(pj(work, "sub"), 0755), 0);
    BLOCKED("sh", "-c", "ln -s ../copy sub/y && sub/y");
    BLOCKED("cp", den, "x");
    BLOCKED("bash", "-c", "f() { cp \"$1\" x; }; x=$(true); cp ../bin/denyme x");
    /* Neighbours that run: the same tools on other files, and an allowed
     * copy before a denied one is still checked (no memo). */
    ALLOWED("sh", "-c", "cp other y && ./y");
    ALLOWED("sh", "-c", "ln -s ../bin/okay y; cat other > z; dd if=other of=w; cat < other");
    ALLOWED("sh", "-c", "cp other y; mv y z; cat /etc/hostname; echo denyme > note");
    BLOCKED("sh", "-c", "cp other y; cp copy z; ./z");
    /* A path entry too. */
    BLOCKED("sh", "-c", "cp ../bin/pathonly p && ./p");
}
END_TEST

START_TEST(parse_failures)
{
    /* Unparseable: every word is taken as a possible command. */
    BLOCKED("sh", "-c", "echo \"unterminated denyme");
    ck_assert_msg(strstr(reason, "could not be parsed") != NULL, "%s", reason);
    BLOCKED("sh", "-c", "true; echo $(denyme");
    BLOCKED("sh", "-c", "echo `denyme");
    ALLOWED("sh", "-c", "echo 'unterminated");
    ALLOWED("sh", "-c", "make test && echo ok");
}
END_TEST

START_TEST(scripts)
{
    BLOCKED("./bad.sh");
    ck_assert_msg(strstr(reason, "in script") != NULL, "%s", reason);
    ALLOWED("./good.sh");
    BLOCKED("sh", "bad.sh");
    BLOCKED("bash", "./bad.sh", "arg");
    ALLOWED("sh", "good.sh");
    BLOCKED("./noshebang"); /* execvp hands it to /bin/sh */
    ALLOWED("./noshebang-ok");
    BLOCKED("./env.sh");
    ALLOWED("./env-ok.sh");
    BLOCKED("./calls-bad.sh");
    ALLOWED("./self.sh");
    if (access("/lib64/ld-linux-x86-64.so.2", X_OK) == 0) {
        BLOCKED("/lib64/ld-linux-x86-64.so.2", "--library-path", "/lib", "./copy");
        ALLOWED("/lib64/ld-linux-x86-64.so.2", "./other");
    }
    BLOCKED("./interp-denied");
    ck_assert_msg(strstr(reason, "#! line") != NULL, "%s", reason);
    BLOCKED("sh", "-c", ". ./lib.sh");
    BLOCKED("bash", "-c", "source lib.sh");
    BLOCKED("env", "nice", "./bad.sh");
    /* A script that happens to be named like a wrapper is still read. */
    const char *fr = "#!/bin/sh\ndenyme\n\"$@\"\n";
    kgt_write_file(pj(bin, "fakeroot"), fr, strlen(fr), 0755);
    BLOCKED("fakeroot", "true");
    /* Not parsed: other interpreters (docs/deny-exec.md). */
    ALLOWED("./script.py");
    /* Larger than 64 KiB: not parsed either. */
    size_t big = 70 * 1024;
    char *b = malloc(big);
    memset(b, '#', big);
    memcpy(b, "#!/bin/sh\ndenyme\n", 17);
    kgt_write_file(pj(work, "big.sh"), b, big, 0755);
    free(b);
    ALLOWED("./big.sh");
}
END_TEST

static void set_mtime_like(const char *path, const struct stat *st)
{
#ifdef __APPLE__
    struct timespec ts[2] = {st->st_atimespec, st->st_mtimespec};
#else
    struct timespec ts[2] = {st->st_atim, st->st_mtim};
#endif
    ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

START_TEST(cache_file_written)
{
    BLOCKED("./copy");
    kg_denyexec_free(dx); /* writes the cache */
    dx = NULL;
    struct stat st;
    ck_assert_int_eq(stat(pj(cache, "exec-fingerprints"), &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    size_t len;
    char *c = read_all(pj(cache, "exec-fingerprints"), &len);
    ck_assert(len > 30 && memcmp(c, "kgate-exec-fingerprints 1\n", 26) == 0);
    free(c);
    dx = make("denyme", NULL);
    BLOCKED("./copy");
    ALLOWED("./other");
}
END_TEST

START_TEST(cache_corrupt)
{
    mkdir(cache, 0700);
    const char *junk = "kgate-exec-fingerprints 1\nzzzz not a line\n";
    kgt_write_file(pj(cache, "exec-fingerprints"), junk, strlen(junk), 0600);
    BLOCKED("./copy");
    ALLOWED("./other");
    kg_denyexec_free(dx);
    dx = NULL;
    size_t len;
    char *c = read_all(pj(cache, "exec-fingerprints"), &len);
    c[len] = '\0';
    ck_assert_ptr_null(strstr(c, "zzzz"));
    ck_assert_ptr_nonnull(strstr(c, "\nend "));
    free(c);
    /* A valid-looking file with a bad trailer is ignored too. */
    kgt_write_file(pj(cache, "exec-fingerprints"),
                   "kgate-exec-fingerprints 1\nend 0000000000000000\n", 47, 0600);
    dx = make("denyme", NULL);
    BLOCKED("./copy");
}
END_TEST

START_TEST(cache_changed_binary)
{
    /* Cached as "not equal", then the file becomes a copy with the same
     * size and mtime: the cache must not answer for the new bytes. */
    copy_file(pj(bin, "okay"), pj(work, "mut"));
    ALLOWED("./mut");
    kg_denyexec_free(dx);
    struct stat st;
    ck_assert_int_eq(stat(pj(work, "mut"), &st), 0);
    size_t len;
    char *b = read_all(pj(bin, "denyme"), &len);
    int fd = open(pj(work, "mut"), O_WRONLY); /* same inode, same size */
    ck_assert_int_eq(write(fd, b, len), (ssize_t)len);
    close(fd);
    free(b);
    set_mtime_like(pj(work, "mut"), &st);
    dx = make("denyme", NULL);
    BLOCKED("./mut");
    /* And back: a stale "equal" must not block the other bytes. */
    kg_denyexec_free(dx);
    b = read_all(pj(bin, "okay"), &len);
    fd = open(pj(work, "mut"), O_WRONLY);
    ck_assert_int_eq(write(fd, b, len), (ssize_t)len);
    close(fd);
    free(b);
    set_mtime_like(pj(work, "mut"), &st);
    dx = make("denyme", NULL);
    ALLOWED("./mut");
}
END_TEST

START_TEST(cache_forget_and_denied_file_changes)
{
    BLOCKED("./copy");
    kg_denyexec_forget_cache(dx);
    BLOCKED("./copy");
    /* The denied binary itself changes after the list was built: the copy
     * is no longer a copy. */
    make_binary(pj(bin, "denyme"), "denyme-marker2");
    ALLOWED("./copy");
}
END_TEST

/* Issue 13 §2: the cache must not pair one file's identity with another
 * file's bytes.  The program swaps two directories (so neither file's
 * ctime changes) between kgate's stat and its hash: a/x is the copy of the
 * denied binary when stat()ed and the harmless one when read. */
START_TEST(cache_swap_cannot_poison)
{
    char a[PATH_MAX + 16], b[PATH_MAX + 16], t[PATH_MAX + 16], ax[PATH_MAX + 16];
    snprintf(a, sizeof a, "%s/a", work);
    snprintf(b, sizeof b, "%s/b", work);
    snprintf(t, sizeof t, "%s/t", work);
    snprintf(ax, sizeof ax, "%s/a/x", work);
    mkdir(a, 0755);
    mkdir(b, 0755);
    copy_file(pj(bin, "denyme"), ax);
    copy_file(pj(bin, "okay"), pj(b, "x"));
    size_t dl, ol;
    char *dc = read_all(pj(bin, "denyme"), &dl), *oc = read_all(pj(bin, "okay"), &ol);
    ck_assert_uint_eq(dl, ol);
    uint64_t want = kg_fp_hash_mem(dc, dl), other = kg_fp_hash_mem(oc, ol);
    ck_assert(want != other);

    kg_fpcache *c = kg_fpcache_new(cache);
    struct stat st, st2;
    ck_assert_int_eq(stat(ax, &st), 0);
    /* The swap, between the stat and the read. */
    ck_assert_int_eq(rename(a, t), 0);
    ck_assert_int_eq(rename(b, a), 0);
    ck_assert_int_eq(rename(t, b), 0);
    uint64_t h = 0;
    ck_assert_int_eq(kg_fpcache_get(c, ax, &st, &h), -2); /* not the file stat()ed */
    ck_assert(h == other); /* control: the path really held the other bytes */
    /* And back: with nothing racing, a/x is the copy again, with the very
     * identity stat() saw first.  Its hash must be its own. */
    ck_assert_int_eq(rename(a, t), 0);
    ck_assert_int_eq(rename(b, a), 0);
    ck_assert_int_eq(rename(t, b), 0);
    ck_assert_int_eq(stat(ax, &st2), 0);
    ck_assert(st2.st_ino == st.st_ino && st2.st_ctim.tv_nsec == st.st_ctim.tv_nsec);
    ck_assert_int_eq(kg_fpcache_get(c, ax, &st2, &h), 0);
    ck_assert(h == want);
    kg_fpcache_free(c); /* saved: the next run reads the file */
    c = kg_fpcache_new(cache);
    ck_assert_int_eq(kg_fpcache_get(c, ax, &st2, &h), 0);
    ck_assert(h == want);
    kg_fpcache_free(c);
    /* Through the deny list too. */
    kg_denyexec_free(dx);
    dx = make("denyme", NULL);
    BLOCKED("./a/x");
    free(dc);
    free(oc);
}
END_TEST

/* A cache file someone else could write is not read: its directory is a
 * symbolic link, or it is writable by others.  Control: the same forged
 * file where kgate keeps its cache is believed (it is the location that
 * protects the cache, not its checksum). */
static void forge_cache(const char *dir, const char *path, const char *bytes_of)
{
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    size_t len;
    char *content = read_all(bytes_of, &len);
    char *body = NULL;
    ck_assert_int_ge(
        asprintf(&body,
                 "kgate-exec-fingerprints 1\n%016llx %ju:%ju:%jd:%o:%jd.%09ld:%jd.%09ld:%s\n",
                 (unsigned long long)kg_fp_hash_mem(content, len), (uintmax_t)st.st_dev,
                 (uintmax_t)st.st_ino, (intmax_t)st.st_size, (unsigned)st.st_mode,
                 (intmax_t)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (intmax_t)st.st_ctim.tv_sec,
                 st.st_ctim.tv_nsec, path),
        0);
    char *all = NULL;
    ck_assert_int_ge(asprintf(&all, "%send %016llx\n", body,
                              (unsigned long long)kg_fp_hash_mem(body, strlen(body))),
                     0);
    kgt_write_file(pj(dir, "exec-fingerprints"), all, strlen(all), 0600);
    free(content);
    free(body);
    free(all);
}

START_TEST(cache_in_a_writable_place_is_not_read)
{
    char real[PATH_MAX + 16], *copy = realpath(pj(work, "copy"), NULL);
    ck_assert_ptr_nonnull(copy);
    snprintf(real, sizeof real, "%s/elsewhere", tmp);
    mkdir(real, 0700);
    forge_cache(real, copy, pj(bin, "okay"));
    /* The cache directory is a link to it. */
    kg_denyexec_free(dx);
    ck_assert_int_eq(symlink(real, cache), 0);
    dx = make("denyme", NULL);
    BLOCKED("./copy");
    kg_denyexec_free(dx);
    dx = NULL;
    ck_assert_int_eq(unlink(cache), 0);
    /* The cache directory is writable by others. */
    mkdir(cache, 0700);
    forge_cache(cache, copy, pj(bin, "okay"));
    ck_assert_int_eq(chmod(cache, 0777), 0);
    dx = make("denyme", NULL);
    BLOCKED("./copy");
    kg_denyexec_free(dx);
    dx = NULL;
    /* Control: where kgate keeps it, the forgery is believed. */
    ck_assert_int_eq(chmod(cache, 0700), 0);
    forge_cache(cache, copy, pj(bin, "okay"));
    dx = make("denyme", NULL);
    ALLOWED("./copy");
    free(copy);
}
END_TEST

START_TEST(bad_entries)
{
    kg_strv *v = kg_strv_new();
    kg_strv_push(v, "");
    kg_error err = {0};
    ck_assert_ptr_null(kg_denyexec_new(v, path_env, NULL, &err));
    ck_assert(strlen(err.msg) > 0);
    kg_strv_free(v);
    kg_denyexec_free(NULL);
    /* No cache directory at all still works. */
    v = kg_strv_new();
    kg_strv_push(v, "denyme");
    kg_denyexec *d = kg_denyexec_new(v, path_env, NULL, &err);
    const char *argv[] = {"./copy"};
    ck_assert_int_eq(kg_denyexec_check(d, argv, 1, work, reason, sizeof reason, &err), 1);
    const char *argv2[] = {"./other"};
    ck_assert_int_eq(kg_denyexec_check(d, argv2, 1, work, reason, sizeof reason, &err), 0);
    kg_denyexec_free(d);
    kg_strv_free(v);
}
END_TEST

/* The list opens its PATH directories once; every shape of PATH must
 * still find what execvp would: a missing directory first, a relative
 * entry (the working directory's), the same directory twice. */
START_TEST(path_shapes)
{
    kg_strv *v = kg_strv_new();
    kg_strv_push(v, "denyme");
    char pe[4 * PATH_MAX + 64];
    kg_error err = {0};
    const char *copy[] = {"./copy"}, *name[] = {"denyme"}, *other[] = {"okay"};
    /* tmp is the process's cwd, so the relative "bin" is the real one. */
    ck_assert_int_eq(chdir(tmp), 0);
    for (int i = 0; i < 4; i++) {
        if (i == 0) snprintf(pe, sizeof pe, "%s/none:%s", tmp, bin);
        if (i == 1) snprintf(pe, sizeof pe, "bin:%s/none:%s", tmp, bin);
        if (i == 2) snprintf(pe, sizeof pe, "%s/none:%s:%s", tmp, bin, bin);
        if (i == 3) snprintf(pe, sizeof pe, "%s:%s:/usr/bin", bin, bin);
        kg_denyexec *d = kg_denyexec_new(v, pe, NULL, &err);
        ck_assert_msg(d != NULL, "%s", err.msg);
        ck_assert_msg(kg_denyexec_check(d, copy, 1, work, reason, sizeof reason, &err) == 1,
                      "copy not blocked with PATH=%s", pe);
        ck_assert_msg(kg_denyexec_check(d, name, 1, work, reason, sizeof reason, &err) == 1,
                      "name not blocked with PATH=%s", pe);
        ck_assert_msg(kg_denyexec_check(d, other, 1, work, reason, sizeof reason, &err) == 0,
                      "okay blocked with PATH=%s: %s", pe, reason);
        kg_denyexec_free(d);
    }
    kg_strv_free(v);
}
END_TEST

/* Found by fuzz-denyexec and by issue 18: the lexer must neither recurse
 * without bound nor free what a nested here-document shares with it. */
START_TEST(nesting_bounded)
{
    /* sh -c "$(printf '$(%.0s' $(seq 20000))": a stack overflow once. */
    size_t n = 20000;
    char *deep = malloc(2 * n + 1);
    for (size_t i = 0; i < n; i++) memcpy(deep + 2 * i, "$(", 2);
    deep[2 * n] = '\0';
    BLOCKED("sh", "-c", deep);
    ck_assert_msg(strstr(reason, "nested too deeply") != NULL, "%s", reason);
    free(deep);
    /* The limit, not the shape, refuses: 30 levels are read, 45 are not. */
    char buf[1024];
    for (int levels = 30; levels <= 45; levels += 15) {
        size_t o = 0;
        for (int i = 0; i < levels; i++) o += (size_t)snprintf(buf + o, sizeof buf - o, "echo $(");
        o += (size_t)snprintf(buf + o, sizeof buf - o, "true");
        for (int i = 0; i < levels; i++) buf[o++] = ')';
        buf[o] = '\0';
        if (levels == 30)
            ALLOWED("sh", "-c", buf);
        else
            BLOCKED("sh", "-c", buf);
    }
    /* env -C twice: the second is relative to the first (a use after
     * free once, found by fuzz-denyexec). */
    BLOCKED("env", "-C", "..", "-C", "hidden", "./x");
    ALLOWED("env", "-C", "..", "-C", "work", "./other");
    BLOCKED("sh", "-c", "env -C .. -C hidden ./x");
    /* A here-document inside a $( ) inside a here-document. */
    ck_assert_int_ge(run("sh", "-c", "cat <<EOF\n$(t.t <<EOF\n$(t.ra`ra`", NULL), 0);
    BLOCKED("sh", "-c", "cat <<EOF\n$(cat <<END\n$(denyme)\nEND\n)\nEOF\n");
    ALLOWED("sh", "-c", "cat <<EOF\n$(cat <<END\ndenyme\nEND\n)\nEOF\n");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("denyexec");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, resolve_like_execvp);
    tcase_add_test(tc, name_and_path);
    tcase_add_test(tc, links_and_copies);
    tcase_add_test(tc, multicall);
    tcase_add_test(tc, wrappers);
    tcase_add_test(tc, find_exec);
    tcase_add_test(tc, shell_strings);
    tcase_add_test(tc, keywords);
    tcase_add_test(tc, documented_routes);
    tcase_add_test(tc, parse_failures);
    tcase_add_test(tc, nesting_bounded);
    tcase_add_test(tc, scripts);
    tcase_add_test(tc, cache_file_written);
    tcase_add_test(tc, cache_corrupt);
    tcase_add_test(tc, cache_swap_cannot_poison);
    tcase_add_test(tc, cache_in_a_writable_place_is_not_read);
    tcase_add_test(tc, cache_changed_binary);
    tcase_add_test(tc, cache_forget_and_denied_file_changes);
    tcase_add_test(tc, bad_entries);
    tcase_add_test(tc, path_shapes);
    tcase_add_test(tc, copy_makers);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
