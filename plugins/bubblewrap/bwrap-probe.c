/* bwrap-probe.c: is bwrap here, and may this user create user namespaces?
 *
 * QUICK (every `kgate run`) stats files, reads sysctls and forks once to
 * try unshare(CLONE_NEWUSER) (no exec).  THOROUGH
 * (doctor, plugins) also runs bwrap twice: --version, and a trial sandbox,
 * because a sysctl that says yes does not prove it (AppArmor, seccomp in a
 * container, a setuid-less build on a kernel without userns). */
#include "bwrap-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Where bwrap is: never PATH, which a box can reach (kgate-tool.h). */
static int find_bwrap(char *out, size_t outsz, kgate_err *why)
{
    return kgate_tool_find("bwrap", out, outsz, why) == 0;
}

/* An integer sysctl, or -1 when the file does not exist on this kernel. */
static int read_sysctl(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buf[32];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = '\0';
    char *end;
    long v = strtol(buf, &end, 10);
    if (end == buf) return -1;
    return v > 1000000000L ? 1000000000 : (int)v;
}

void bwrap_probe_from_sysctls(kgate_probe *p, int have_bwrap, int is_root, int max_userns,
                              int userns_clone, int apparmor_restrict, int trial)
{
    /* Root may create user namespaces whatever the Debian knob says; no one
     * may when the limit is 0. */
    int max0 = max_userns == 0;
    int clone0 = !is_root && userns_clone == 0;
    int apparmor = !is_root && apparmor_restrict == 1;
    int userns = !max0 && !clone0;

    kgate_probe_set_fact(p, BWRAP_FACT_LINUX, 1);
    kgate_probe_set_fact(p, BWRAP_FACT_BWRAP, have_bwrap);
    kgate_probe_set_fact(p, BWRAP_FACT_USERNS, userns);
    kgate_probe_set_fact(p, BWRAP_FACT_USERNS_MAX0, max0);
    kgate_probe_set_fact(p, BWRAP_FACT_USERNS_CLONE0, clone0);
    kgate_probe_set_fact(p, BWRAP_FACT_APPARMOR, apparmor);
    kgate_probe_set_fact(p, BWRAP_FACT_TRIAL, trial);

    p->score = 50;
    p->available = have_bwrap && userns && trial != 0;
    if (!have_bwrap)
        snprintf(p->reason, sizeof p->reason, "bwrap not found");
    else if (max0)
        snprintf(p->reason, sizeof p->reason,
                 "user namespaces are disabled (user.max_user_namespaces=0)");
    else if (clone0)
        snprintf(p->reason, sizeof p->reason,
                 "unprivileged user namespaces are disabled "
                 "(kernel.unprivileged_userns_clone=0)");
    else if (trial == 0)
        snprintf(p->reason, sizeof p->reason, "bwrap could not create a user namespace%s",
                 apparmor ? " (AppArmor restricts unprivileged user namespaces)" : "");
    else
        /* The version has its own field: `kgate plugins` prints it once. */
        snprintf(p->reason, sizeof p->reason, "user namespaces %s",
                 trial == 1 ? "work" : "allowed by the sysctls (not tried)");
}

/* Runs argv with stdio on /dev/null, or stdout on out_fd when it is not -1;
 * returns the wait status, or -1. */
static int run_quiet(char *const argv[], int out_fd)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, all;
    pid_t pid;
    int r, status = -1;

    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (out_fd >= 0)
        posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    else
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    /* Whatever the core blocks or ignores is not bwrap's business. */
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    r = posix_spawn(&pid, argv[0], &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (r != 0) return -1;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return status;
}

static void read_version(const char *bwrap, char *out, size_t outsz)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) return;
    char *const argv[] = {(char *)bwrap, (char *)"--version", NULL};
    /* bwrap --version prints one short line: it fits in the pipe, so
     * reading after the wait cannot deadlock. */
    int st = run_quiet(argv, fds[1]);
    close(fds[1]);
    char buf[128];
    ssize_t n = st == 0 ? read(fds[0], buf, sizeof buf - 1) : -1;
    close(fds[0]);
    if (n <= 0) return;
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    const char *v = strncmp(buf, "bubblewrap ", 11) == 0 ? buf + 11 : buf;
    /* Truncating an overlong version string is fine: it is for display. */
    size_t len = strnlen(v, outsz - 1);
    memcpy(out, v, len);
    out[len] = '\0';
}

static int trial(const char *bwrap)
{
    const char *t = access("/bin/true", X_OK) == 0 ? "/bin/true" : "/usr/bin/true";
    /* The namespaces every plan needs, and --disable-userns, which writes
     * a sysctl inside the new namespace and so can fail on its own. */
    char *const argv[] = {(char *)bwrap,
                          (char *)"--unshare-user",
                          (char *)"--disable-userns",
                          (char *)"--unshare-pid",
                          (char *)"--unshare-ipc",
                          (char *)"--unshare-uts",
                          (char *)"--ro-bind",
                          (char *)"/",
                          (char *)"/",
                          (char *)"--",
                          (char *)t,
                          NULL};
    int st = run_quiet(argv, -1);
    return st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int bwrap_probe(const kgate_host *host, kgate_probe_depth depth, kgate_probe *probe, kgate_err *err)
{
    kgate_err why = {0};
    int have = find_bwrap(probe->tool_path, sizeof probe->tool_path, &why);
    int t = -1;
    if (have && depth == KGATE_PROBE_THOROUGH) {
        read_version(probe->tool_path, probe->version, sizeof probe->version);
        t = trial(probe->tool_path);
    } else if (have && kgl_userns_trial() == 0) {
        /* The quick probe cannot run bwrap, but it can try the one thing
         * bwrap needs first: where a container's seccomp profile or an
         * outer bwrap --disable-userns refuses user namespaces, the
         * sysctls still say yes, and picking bubblewrap would fail at
         * launch instead of letting a box that needs none (Landlock) run.
         * A fork without exec (kgl-userns.c). */
        t = 0;
    }
    bwrap_probe_from_sysctls(
        probe, have, geteuid() == 0, read_sysctl("/proc/sys/user/max_user_namespaces"),
        read_sysctl("/proc/sys/kernel/unprivileged_userns_clone"),
        read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"), t);
    /* Not found, or found only where it is not trusted: say which. */
    if (!have)
        snprintf(probe->reason, sizeof probe->reason, "%.*s", (int)sizeof probe->reason - 1,
                 why.msg);
    return 0;
}
