/* ll-launch.c: build the ruleset here, then let kgl_spawn's child lock
 * itself in and exec the command in place.
 *
 * The ruleset is made and filled in kgate's process (a ruleset restricts
 * no one until a process calls landlock_restrict_self with it), so every
 * path is opened here, without following a final symbolic link, and a
 * failure is an error before anything runs.  The child (prepare, below)
 * then only makes system calls: a session of its own (no controlling
 * terminal of the user's; in pty mode the pty instead), the capability
 * bounding set emptied, no_new_privs, landlock_restrict_self, the seccomp
 * filter(s), and last the SysV IPC filter whose listener goes to the IPC
 * supervisor (kgl-ipc.c: no IPC namespace here), or, with the filesystem
 * supervisor, whose filter notifies SysV IPC too, only the IPC refusals.
 * A step that fails is reported by kgl_spawn and kgate exits 125 with
 * nothing run.
 *
 * There is no PID namespace to take the program's children with it.  The
 * launch child stays outside the box as the reaper, the run's child
 * subreaper, and ends the program's way; if kgate dies it kills the whole
 * run (ll-reaper.c).  After the program, the core (subreaper above it)
 * kills every process left, in rounds until none is left (proctree.h).
 * The private TMPDIR is removed by a helper when the core ends it, after
 * that (or, kgate dead, once the reaper is): the helper walks it with a
 * fixed number of descriptors, without following a link (ll-rmtree.c). */
#include "ll-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

/* The uapi structs, as of ABI 6 (the kernel takes a shorter ruleset
 * attribute from an older caller: its size says which fields it has). */
struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};
struct ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

typedef struct child_ctx {
    int ruleset;
    int sup_ruleset; /* the supervisor's, or -1: no supervisor */
    const kgl_un_policy *un;
    int nonet;
    int pty;
    int tty;
    int ipc_end; /* the SysV IPC supervisor's socket */
    int ipc_notify; /* supervised (1) or refused (0) */
    int ready_w; /* "R" to kgate once locked in */
    int go_r; /* "G" from kgate once the launch line is written */
} child_ctx;

static void close_pair(int *p)
{
    for (int i = 0; i < 2; i++)
        if (p[i] >= 0) close(p[i]);
}

/* In the forked child: system calls only. */
static int child_prepare(void *p)
{
    const child_ctx *c = p;
    if (setsid() < 0) return -1;
    /* Without CAP_SETPCAP (an ordinary user) this fails: such a process
     * has no capabilities to lose, and no_new_privs keeps a setuid
     * program from bringing any. */
    for (int cap = 0; cap < 64; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL && errno != EPERM)
            return -1;
    if (c->pty) (void)ioctl(c->tty, TIOCSCTTY, 0);
    /* The session leader stays outside the box as the run's reaper
     * (ll-reaper.c); the program is this process's child from here. */
    if (ll_reaper_fork() < 0) return -1;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) return -1;
    /* With a supervisor: first its rights (the program's plus write on
     * the managed directories), the filters, then the fork; this process
     * stays as the supervisor (kgl-unotify.c) and the child, nested one
     * domain below it, goes on to the program's rights and the
     * notifying filter, installed last. */
    int sup = c->sup_ruleset >= 0;
    if (syscall(SYS_landlock_restrict_self, sup ? c->sup_ruleset : c->ruleset, 0U) < 0) return -1;
    if (kgl_seccomp_apply() < 0) return -1;
    /* Network off with the network supervisor: IPv4 sockets too, each
     * bind, listen, connect and send of them the supervisor's. */
    if (c->nonet && (c->un->net.on ? kgl_seccomp_nonet_lo_apply() : kgl_seccomp_nonet_apply()) < 0)
        return -1;
    if (sup) {
        int sock = kgl_un_fork_supervisor(c->un);
        if (sock < 0) return -1;
        if (syscall(SYS_landlock_restrict_self, c->ruleset, 0U) < 0 ||
            kgl_un_install(sock, c->un->reads,
                           !c->un->net.on    ? KGL_UN_NET_NONE
                           : c->un->net.open ? KGL_UN_NET_UNIX
                                             : KGL_UN_NET_ALL) < 0)
            return -1;
        close(c->sup_ruleset);
    }
    close(c->ruleset);
    /* Last: from here on a SysV IPC call of this process would wait for
     * the IPC supervisor.  With the filesystem supervisor's listener
     * already in the chain the kernel takes no second one: its filter
     * notifies the SysV IPC calls as well and the supervisor passes them
     * on to the IPC supervisor (kgl-ipc.c), so only the refusals of POSIX
     * queues and 32-bit entries are loaded here. */
    int ipc = sup && c->ipc_notify ? KGL_IPC_ROUTED : c->ipc_notify;
    if (kgl_ipc_apply(c->ipc_end, ipc) < 0) return -1;
    /* Locked in: the core writes its audit launch line now
     * (kgate_launch.commit), and only then may the program run. */
    char b = 'R';
    if (write(c->ready_w, &b, 1) != 1) return -1;
    ssize_t n;
    while ((n = read(c->go_r, &b, 1)) < 0 && errno == EINTR) {}
    if (n != 1 || b != 'G') {
        errno = ECANCELED;
        return -1;
    }
    return 0;
}

static int make_ruleset(const ll_rules *r, kgate_err *err)
{
    struct ll_ruleset_attr attr = {r->fs_handled, r->net_handled, r->scoped};
    size_t size = r->abi >= 6 ? sizeof attr : r->abi >= 4 ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
    int fd = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0U);
    if (fd < 0)
        return kgate_err_set(err, errno, "cannot create a Landlock ruleset: %s", strerror(errno));
    /* Above 2, clear of the stdio numbers the child fills. */
    int hi = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    close(fd);
    if (hi < 0) return kgate_err_set(err, errno, "cannot move the ruleset: %s", strerror(errno));
    for (size_t i = 0; i < r->n; i++) {
        int pfd = open(r->v[i].path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
        if (pfd < 0 && errno == ENOENT) continue; /* gone: nothing to grant */
        if (pfd < 0) {
            int e = errno;
            close(hi);
            return kgate_err_set(err, e, "cannot open %s for its Landlock rule: %s", r->v[i].path,
                                 strerror(e));
        }
        struct stat st;
        uint64_t access = r->v[i].access;
        if (fstat(pfd, &st) < 0 || S_ISLNK(st.st_mode)) {
            /* Replaced by a link since the rules were built: grant nothing. */
            close(pfd);
            continue;
        }
        if (!S_ISDIR(st.st_mode)) access &= LL_FS_FILE_RIGHTS;
        struct ll_path_beneath_attr pb = {access, pfd};
        long rc = access ? syscall(SYS_landlock_add_rule, hi, LL_RULE_PATH_BENEATH, &pb, 0U) : 0;
        int e = errno;
        close(pfd);
        if (rc < 0) {
            close(hi);
            return kgate_err_set(err, e, "cannot add the Landlock rule for %s: %s", r->v[i].path,
                                 strerror(e));
        }
    }
    return hi;
}

/* The hosts file's text (NULL when unreadable: no addresses from it). */
static char *read_hosts_file(void)
{
    FILE *f = fopen("/etc/hosts", "re");
    if (!f) return NULL;
    char *buf = calloc(1, 1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (buf) buf[n] = '\0';
    return buf;
}

/* Names on the network: the allow list for the supervisor, and the
 * filtering resolver (its pid in *resolver, a helper the core ends). */
static int start_net(const kgate_policy *pol, const kgate_launch *io, kgl_un_policy *un,
                     pid_t *resolver, kgate_err *err)
{
    char up[64];
    char *hosts = read_hosts_file();
    int rc = kgl_un_net_init(un, (const char *const *)pol->allow_hosts.v, pol->allow_hosts.n, hosts,
                             err);
    free(hosts);
    kgl_un_resolver res = {-1, 0, -1};
    if (rc < 0 || kgl_un_upstream(up, sizeof up, err) < 0 ||
        kgl_un_resolver_start(un, up, &res, err) < 0)
        return -1;
    un->net.resolver_port = res.port;
    un->net.log_fd = res.log_fd;
    un->net.events_fd = KGATE_HAS_FIELD(io, kgate_launch, events_fd) ? io->events_fd : -1;
    *resolver = res.pid;
    return 0;
}

/* Network off with the supervisor (issue 41): no host and no resolver, so
 * that the only Internet connections are to the run's own loopback
 * servers (kgl-unotify-net.c).  No records, as in the bubblewrap box's
 * network off: a refusal there is the kernel's, not a decision. */
static int start_loopback(kgl_un_policy *un, kgate_err *err)
{
    if (kgl_un_net_init(un, NULL, 0, NULL, err) < 0) return -1;
    un->net.events_fd = -1;
    return 0;
}

/* Network open with the supervisor (issue 43): Internet calls made as
 * asked, only host Unix sockets by path decided; no records. */
static int start_open(kgl_un_policy *un, kgate_err *err)
{
    if (start_loopback(un, err) < 0) return -1;
    un->net.open = 1;
    return 0;
}

/* The supervisor's ruleset in *rs_sup when the kernel has user
 * notification (it decides host Unix sockets by path in every network
 * mode, and gives back the project's split directories), or the network
 * is restricted to hosts (then it is required); -1 there (and 0
 * returned) when the box runs without one, as before it existed. */
static int use_supervisor(const kgate_host *host, const kgate_policy *pol, const kgate_probe *pr,
                          const kgate_launch *io, const ll_rules *r, kgl_un_policy *un,
                          ll_rules *sup, int *rs_sup, pid_t *resolver, kgate_err *err)
{
    *rs_sup = -1;
    char why[128];
    int net = ll_net_hosts(pol);
    /* Read here as well as in the probe: a probe may come from the core's
     * cache (docs/plugins.md), which does not know this variable. */
    if (!ll_net_ready(pr, why, sizeof why)) {
        if (net) return kgate_err_set(err, ENOTSUP, "%s (%s)", ll_hosts_sentence(), why);
        if (kgate_probe_fact(pr, LL_FACT_UNOTIFY, 0) != 1) return 0;
        const char *off = getenv(LL_ENV_NO_UNOTIFY);
        if (off && *off && strcmp(off, "0") != 0) return 0;
    }
    /* Network off: the supervisor also runs, for the run's own loopback
     * servers, where it can (without it, no Internet socket at all). */
    int lo = r->nonet; /* user notification is there (above) */
    int k = ll_un_build(pol, r, un, sup, err);
    if (k < 0) return k;
    if (k == 0) {
        /* Nothing to manage: the supervisor's rights are the program's. */
        *sup = *r;
        sup->v = calloc(r->n ? r->n : 1, sizeof *sup->v);
        if (!sup->v) return kgate_err_set(err, ENOMEM, "out of memory");
        memcpy(sup->v, r->v, r->n * sizeof *r->v);
    }
    /* The supervisor makes the program's binds and connects: Landlock's
     * TCP rules (network off, ABI 4) stay the program's alone. */
    if (lo) sup->net_handled = 0;
    if (ll_un_pin_unix(pol, r, un, err) < 0) return -1;
    *rs_sup = make_ruleset(sup, err);
    if (*rs_sup < 0 || (net && start_net(pol, io, un, resolver, err) < 0) ||
        (lo && start_loopback(un, err) < 0) || (!net && !lo && start_open(un, err) < 0))
        return -1;
    host->log(host, KGATE_LOG_DEBUG,
              "landlock: supervisor for %zu managed directories%s, host Unix sockets (%zu "
              "allowed, %zu places)%s",
              un->n_managed, un->reads ? " (every open notified: a deny_read entry below one)" : "",
              un->net.n_unix_socks, un->net.n_unix_places,
              net  ? " and the network"
              : lo ? " and the run's loopback servers"
                   : "");
    return 0;
}

/* The helper that removes the private TMPDIR once the core ends it
 * (SIGTERM after the program, or kgate's death, then only once the
 * reaper told on *told has ended the run: ll_reaper_await). */
static pid_t start_cleaner(const char *tmp, int *told)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) return -1;
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    pid_t kgate = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        /* kgate gone before the prctl: no SIGTERM will come, so the
         * cleaning is not waited for. */
        int orphan = kgl_tie_to_parent(SIGTERM, kgate) < 0;
        /* Nothing of kgate's: a copy of the output pipe held here would
         * keep the relay waiting for an end of file. */
        /* Kept: our end of the socket, as 0. */
        if (dup2(sv[1], 0) < 0) _exit(1);
        for (int fd = 1; fd < 3; fd++) close(fd);
#ifdef SYS_close_range
        if (syscall(SYS_close_range, 3U, ~0U, 0U) < 0)
#endif
            for (int fd = 3; fd < 4096; fd++) close(fd);
        sigset_t term;
        sigemptyset(&term);
        sigaddset(&term, SIGTERM);
        int sig = 0;
        while (!orphan && sigwait(&term, &sig) != 0) {}
        /* By then the core, or if kgate died the reaper, has ended every
         * process of the run: nothing writes into the tree while it goes
         * (ll-rmtree.c). */
        ll_reaper_await(0, 10000);
        const char *base = strrchr(tmp, '/');
        int parent = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _exit(parent >= 0 && base && ll_rmtree(parent, base + 1) == 0 ? 0 : 1);
    }
    int e = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        errno = e;
        return -1;
    }
    *told = sv[0];
    return pid;
}

static void stop_helper(pid_t pid)
{
    if (pid <= 0) return;
    kill(pid, SIGTERM);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
}

#define LL_TMP_TEMPLATE "/tmp/kgate-landlock.XXXXXX"

/* One launch's state.  Every field starts unset (LL_RUN_INIT); whatever
 * is still set when ll_launch's scope ends is undone by ll_run_release,
 * and what the core is given (hand_over) is unset first. */
typedef struct ll_run {
    char tmp[sizeof LL_TMP_TEMPLATE]; /* the private TMPDIR, "" until made */
    char home[sizeof LL_TMP_TEMPLATE + sizeof "/home"]; /* tmp/home */
    ll_rules r;
    ll_rules sup; /* its paths are r's: only the array is ours */
    kgl_un_policy un;
    int rs, rs_sup; /* the program's ruleset; the supervisor's */
    pid_t cleaner, resolver;
    int cleaner_sock; /* the reaper's pidfd goes there (ll_reaper_tell) */
    char **argv, **envp, *tmpvar[2];
    kgl_guard guard;
    kgl_ipc ipc;
} ll_run;
#define LL_RUN_INIT                                                                     \
    {                                                                                   \
        .tmp = "", .home = "", .r = {0}, .sup = {0}, .un = {0}, .rs = -1, .rs_sup = -1, \
        .cleaner = -1, .cleaner_sock = -1, .resolver = -1, .argv = NULL, .envp = NULL,  \
        .tmpvar = {NULL, NULL}, .guard = {.pid = -1, .wfd = -1}, .ipc = {               \
            .pid = -1,                                                                  \
            .child_end = -1                                                             \
        }                                                                               \
    }

/* A launch refused before the cleaner runs: the TMPDIR and its HOME
 * are still empty and are removed here. */
static void remove_empty_tmp(const char *tmp, const char *home)
{
    rmdir(home);
    rmdir(tmp);
}

static void ll_run_release(ll_run *run)
{
    kgl_guard_stop(&run->guard);
    kgl_ipc_stop(&run->ipc);
    /* The cleaner removes the TMPDIR when it is stopped; before it runs,
     * a failed launch removes the (still empty) directory itself. */
    if (run->cleaner > 0)
        stop_helper(run->cleaner);
    else if (run->tmp[0])
        remove_empty_tmp(run->tmp, run->home);
    stop_helper(run->resolver);
    kgl_closep(&run->cleaner_sock);
    kgl_closep(&run->rs);
    kgl_closep(&run->rs_sup);
    free(run->sup.v);
    kgl_un_policy_free(&run->un);
    ll_rules_free(&run->r);
    free(run->argv);
    free(run->envp);
    free(run->tmpvar[0]);
    free(run->tmpvar[1]);
}
#define ll_autorun __attribute__((cleanup(ll_run_release)))

/* The run's private TMPDIR and its HOME, tmp/home (env_with_tmp). */
static int make_tmp(ll_run *run, kgate_err *err)
{
    /* mkdtemp's template is a copy: run->tmp stays "" unless made. */
    char tmp[] = LL_TMP_TEMPLATE;
    if (!mkdtemp(tmp))
        return kgate_err_set(err, errno, "cannot make the private TMPDIR in /tmp: %s",
                             strerror(errno));
    memcpy(run->tmp, tmp, sizeof tmp);
    snprintf(run->home, sizeof run->home, "%s/home", tmp);
    if (mkdir(run->home, 0700) == 0) return 0;
    int e = errno;
    return kgate_err_set(err, e, "cannot make the private HOME in %s: %s", tmp, strerror(e));
}

/* io->envp with TMPDIR set to tmp and HOME to home (malloc'd array;
 * its strings borrowed except the two new ones, owned[0] and owned[1]).
 * bubblewrap's box puts an empty tmpfs over $HOME at its own path; here
 * nothing can be mounted, so HOME names an empty directory of the run
 * instead, which goes with the TMPDIR: the caches and dotfiles a tool
 * writes there (npm's ~/.npm, git's, pip's) work and are thrown away. */
static char **env_with_tmp(const char *const *envp, const char *tmp, const char *home, char **owned)
{
    size_t n = 0;
    while (envp && envp[n]) n++;
    char **v = calloc(n + 3, sizeof *v);
    owned[0] = owned[1] = NULL;
    if (!v || asprintf(&owned[0], "TMPDIR=%s", tmp) < 0 ||
        asprintf(&owned[1], "HOME=%s", home) < 0) {
        free(v);
        free(owned[0]);
        owned[0] = NULL;
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(envp[i], "TMPDIR=", 7) != 0 && strncmp(envp[i], "HOME=", 5) != 0)
            v[k++] = (char *)envp[i];
    v[k++] = owned[0];
    v[k++] = owned[1];
    v[k] = NULL;
    return v;
}

/* The child is locked in ("R"), or its report says why not (an EOF
 * here): the core writes its launch line, and only then may the program
 * run ("G").  -1 with err (the child abandoned) when the core refuses;
 * closes both ends. */
static int await_lock_in(int ready_r, int go_w, const kgate_launch *io, kgl_child *child,
                         kgate_err *err)
{
    char b = 0;
    ssize_t n;
    while ((n = read(ready_r, &b, 1)) < 0 && errno == EINTR) {}
    close(ready_r);
    if (n == 1 && b == 'R' && kgate_launch_commit(io, err) < 0) {
        close(go_w);
        kgl_spawn_abandon(child);
        return -1;
    }
    if (n == 1 && b == 'R') (void)!write(go_w, "G", 1);
    close(go_w);
    return 0;
}

/* The plan's argv with the policy's argv[0] (what the program sees of
 * its own name); malloc'd, its strings borrowed. */
static char **command_argv(const kgate_policy *pol, const char *const *pargv, size_t argc)
{
    char **argv = calloc(argc + 1, sizeof *argv);
    if (!argv) return NULL;
    argv[0] = (char *)(pol->argv.n ? pol->argv.v[0] : pargv[0]);
    for (size_t i = 1; i < argc; i++) argv[i] = (char *)pargv[i];
    return argv;
}

/* A rule of its own on each unnamed file of the supervisor's pool, in
 * the program's ruleset: read, write and execute on that inode wherever
 * the supervisor links it (kgate-unotify.h, pool).  Landlock takes a rule
 * on a file from any descriptor of it, an O_PATH one of an O_TMPFILE
 * inode too. */
static int add_pool_rules(int rs, const kgl_un_policy *un, const ll_rules *r, kgate_err *err)
{
    uint64_t access =
        (LL_FS_READ_FILE | LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_TRUNCATE) & r->fs_handled;
    for (size_t i = 0; i < un->pool.n; i++) {
        struct ll_path_beneath_attr pb = {access, un->pool.fd[i]};
        if (syscall(SYS_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0U) < 0)
            return kgate_err_set(err, errno,
                                 "cannot add the Landlock rule of an exec pool file: %s",
                                 strerror(errno));
    }
    return 0;
}

/* The program's rules and ruleset, and the supervisor's where one runs
 * (use_supervisor). */
static int make_rulesets(const kgate_host *host, const kgate_policy *pol, const kgate_probe *pr,
                         const kgate_launch *io, int abi, ll_run *run, kgate_err *err)
{
    if (ll_rules_build(pol, abi, run->tmp, &run->r, err) < 0) return -1;
    run->rs = make_ruleset(&run->r, err);
    if (run->rs < 0) return -1;
    if (use_supervisor(host, pol, pr, io, &run->r, &run->un, &run->sup, &run->rs_sup,
                       &run->resolver, err) < 0)
        return -1;
    /* A published port is the supervisor's loopback listen: none, no port. */
    if (ll_publish_check(pol, pr, err) < 0) return -1;
    if (run->rs_sup < 0 && KGATE_HAS_FIELD(pol, kgate_policy, n_publish) && pol->n_publish)
        return kgate_err_set(err, ENOTSUP, "--publish: the Landlock box's supervisor does not run");
    return run->rs_sup >= 0 ? add_pool_rules(run->rs, &run->un, &run->r, err) : 0;
}

/* What the child needs before it forks: the TMPDIR's cleaner, the
 * command's argv and environment, the IPC supervisor and the guard. */
static int start_helpers(const kgate_policy *pol, const kgate_probe *pr, const kgate_launch *io,
                         const char *const *pargv, size_t argc, ll_run *run, kgate_err *err)
{
    run->cleaner = start_cleaner(run->tmp, &run->cleaner_sock);
    if (run->cleaner < 0)
        return kgate_err_set(err, errno, "cannot start the TMPDIR cleaner: %s", strerror(errno));
    /* After the cleaner: it removes what is put in the HOME. */
    if (ll_home_fill(pol, run->home, err) < 0) return -1;
    run->argv = command_argv(pol, pargv, argc);
    run->envp = env_with_tmp(io->envp, run->tmp, run->home, run->tmpvar);
    if (!run->argv || !run->envp) return kgate_err_set(err, ENOMEM, "out of memory");
    if (kgl_ipc_start(&run->ipc, err) < 0) return -1;
    /* The filesystem supervisor passes the SysV IPC calls on (it holds
     * the one listener) when the IPC supervisor can decide them. */
    run->un.ipc.on = kgate_probe_fact(pr, LL_FACT_IPC, 0) == 1;
    run->un.ipc.fd = run->ipc.child_end;
    return kgl_guard_start(&run->guard, -1, err);
}

/* The child forked, locked in (child_prepare), the core's launch line
 * written and the program exec'd: its pid in *pid, or -1 with err. */
static int spawn_locked(const kgate_policy *pol, const kgate_launch *io, const char *path,
                        ll_run *run, pid_t *pid, kgate_err *err)
{
    int ready[2] = {-1, -1}, go[2] = {-1, -1};
    if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0) {
        kgate_err_set(err, errno, "pipe: %s", strerror(errno));
        close_pair(ready);
        return -1;
    }
    child_ctx ctx = {.ruleset = run->rs,
                     .sup_ruleset = run->rs_sup,
                     .un = &run->un,
                     .nonet = run->r.nonet,
                     .pty = io->pty,
                     .ipc_end = run->ipc.child_end,
                     .ipc_notify = run->un.ipc.on, /* start_helpers read the probe */
                     .tty = io->stdin_fd,
                     .ready_w = ready[1],
                     .go_r = go[0]};
    const kgl_spawn spawn = {
        .path = path,
        .argv = run->argv,
        .envp = run->envp,
        .stdio = {io->stdin_fd, io->stdout_fd, io->stderr_fd},
        .dir = pol->project,
        .group = run->guard.pid,
        .pdeathsig = 1,
        .prepare = child_prepare,
        .ctx = &ctx,
        .prepare_name = "lock itself in (Landlock, seccomp)",
        .ignored = kgl_launch_ignored(io),
    };
    kgl_child child = {.pid = -1, .report = -1};
    int started = kgl_spawn_start(&spawn, &child, err);
    kgl_ipc_release(&run->ipc); /* the child's now, and the supervisor's */
    close(ready[1]);
    close(go[0]);
    if (started < 0) {
        close(ready[0]);
        close(go[1]);
        return -1;
    }
    if (await_lock_in(ready[0], go[1], io, &child, err) < 0 ||
        kgl_spawn_finish(&spawn, &child, err) < 0)
        return -1;
    *pid = child.pid;
    return 0;
}

/* The program and the helpers the core ends after it, which are then
 * no longer the launch's to undo (the cleaner removes the TMPDIR). */
static void hand_over(kgate_proc *proc, pid_t pid, ll_run *run)
{
    /* No pid for the guard: pid is the reaper (ll-reaper.c), which must
     * outlive kgate long enough to kill the run, and the program's group
     * is the reaper's.  The guard keeps its first role, the launch child
     * before its setsid, in the guard's group. */
    kgl_guard_tell(&run->guard, 0);
    ll_reaper_tell(run->cleaner_sock, pid);
    kgl_closep(&run->cleaner_sock);
    const pid_t helpers[] = {run->guard.pid, run->cleaner, run->ipc.pid, run->resolver};
    const size_t n = sizeof helpers / sizeof helpers[0];
    proc->pid = pid;
    /* setsid() in the child, which stays as the reaper: its group is its
     * pid, the program's and its children's unless they leave (the core
     * ends those after the program; the reaper if kgate dies). */
    proc->signal_pid = -pid;
    for (size_t i = 0; i < n && i < KGATE_MAX_HELPERS; i++) proc->helpers[i] = helpers[i];
    proc->n_helpers = n < KGATE_MAX_HELPERS ? n : KGATE_MAX_HELPERS;
    run->guard.pid = -1;
    run->cleaner = -1;
    run->ipc.pid = -1;
    run->resolver = -1;
    run->tmp[0] = '\0';
}

int ll_launch(const kgate_host *host, const kgate_policy *pol, const kgate_probe *pr,
              const kgate_plan *plan, const kgate_launch *io, kgate_proc *proc, kgate_err *err)
{
    size_t argc = 0;
    const char *const *pargv = host->plan_argv(plan, &argc);
    if (argc < 1 || !pargv[0] || pargv[0][0] != '/')
        return kgate_err_set(err, EINVAL,
                             "the plan does not start with an "
                             "absolute command path");
    int abi = kgate_probe_fact(pr, LL_FACT_ABI, 0);
    if (abi < 1)
        return kgate_err_set(err, ENOTSUP,
                             "launch was not given a probe that "
                             "found Landlock");
    ll_run run ll_autorun = LL_RUN_INIT;
    pid_t pid = -1;
    if (make_tmp(&run, err) < 0 || make_rulesets(host, pol, pr, io, abi, &run, err) < 0 ||
        start_helpers(pol, pr, io, pargv, argc, &run, err) < 0 ||
        spawn_locked(pol, io, pargv[0], &run, &pid, err) < 0)
        return -1;
    hand_over(proc, pid, &run);
    host->log(host, KGATE_LOG_DEBUG, "landlock: program pid %ld, %zu rules, ABI %d", (long)pid,
              run.r.n, run.r.abi);
    return 0;
}
