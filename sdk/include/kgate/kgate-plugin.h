/* kgate-plugin.h: the contract between the kgate core and a backend plugin.
 *
 * A backend turns one effective policy into the thing a kernel installs: a
 * bwrap argument vector on Linux, a Seatbelt profile for sandbox-exec on
 * macOS, or anything a third party writes.  The core does everything that is
 * the same on every kernel (config, narrowing, the exec deny list, the audit
 * log, output masking, exit codes, signals); a backend only answers four
 * questions:
 *
 *   probe   can I run on this machine at all, and what did I find?
 *   doctor  given those findings, can I enforce this policy?  (pure: no I/O)
 *   plan    which argv (and helper files) would enforce it?   (pure: no I/O
 *           beyond reading the files the policy names)
 *   launch  start that plan with the stdio and environment the core hands me.
 *
 * ABI rules
 * ---------
 * - A plugin is a shared object (.so on Linux, .dylib on macOS) that exports
 *   exactly one symbol, KGATE_PLUGIN_ENTRY_SYMBOL.  Build it with
 *   -fvisibility=hidden; KGATE_PLUGIN_DEFINE() marks the one export.
 * - Every struct that crosses the boundary starts with its own size.  Fields
 *   are only ever appended; a reader checks the size before touching a field
 *   that came in a later minor version (KGATE_HAS_FIELD()).
 * - abi_major changes when anything is removed, reordered or changes meaning.
 *   The core refuses a plugin whose major differs from its own, and one whose
 *   kgate_backend is smaller than the major's first release.
 * - abi_minor grows when fields or methods are appended.  A newer core loads
 *   an older plugin of the same major: methods it does not have are NULL.
 * - Whoever allocates frees.  Plans and reports are owned by the core; a
 *   plugin fills them through the kgate_host functions and never frees them.
 *   A probe's state is the plugin's: the core only hands it back through
 *   release (kgate_probe.state).
 * - Plugins never call exit(), never write to stdout, and report failure by
 *   returning a negative value with a message in kgate_err.
 */
#ifndef KGATE_PLUGIN_H
#define KGATE_PLUGIN_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KGATE_ABI_MAJOR 2
#define KGATE_ABI_MINOR 3

/* The one symbol a plugin exports.  Its type is kgate_plugin_entry_fn. */
#define KGATE_PLUGIN_ENTRY_SYMBOL "kgate_plugin_entry"

#if defined(__GNUC__) || defined(__clang__)
#define KGATE_EXPORT __attribute__((visibility("default")))
#define KGATE_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define KGATE_EXPORT
#define KGATE_PRINTF(fmt, args)
#endif

/* True when a struct that declares its own size is large enough to hold
 * FIELD, i.e. it was produced by a peer that knows that field. */
#define KGATE_HAS_FIELD(ptr, type, field) \
    ((ptr)->struct_size >= offsetof(type, field) + sizeof(((type *)0)->field))

/* ------------------------------------------------------------------------ */
/* The effective policy                                                      */
/* ------------------------------------------------------------------------ */

typedef enum kgate_network {
    KGATE_NET_OFF = 0, /* no route anywhere; loopback only */
    KGATE_NET_RESTRICTED = 1, /* only the addresses allow_hosts resolve to */
    KGATE_NET_OPEN = 2, /* the host's network, unfiltered */
} kgate_network;

typedef enum kgate_macos_profile {
    KGATE_MACOS_PERMISSIVE = 0, /* (allow default), known doors closed */
    KGATE_MACOS_STRICT = 1, /* (deny default) and a commented allow list */
} kgate_macos_profile;

/* A read-only list of strings.  v[n] is not guaranteed to be NULL. */
typedef struct kgate_strlist {
    const char *const *v;
    size_t n;
} kgate_strlist;

/* ABI 2.2: one port published for the host (`kgate run --publish`): a TCP
 * port the program listens on inside the box, reachable on the host at
 * host_addr:host_port for as long as the run lasts.  host_addr is a
 * numeric IPv4 address the core has checked: always a loopback address
 * (127.0.0.0/8), so the port is never offered to another machine.  Both
 * ports are 1..65535; no two entries share host_addr and host_port.  This
 * struct is frozen within major 2: anything more is a new field of
 * kgate_policy. */
typedef struct kgate_publish {
    char host_addr[16]; /* dotted quad, NUL-terminated */
    uint16_t host_port;
    uint16_t port; /* inside the box */
} kgate_publish;

/* ABI 2.3: a file the core made for this run, for the box to show in the
 * program's HOME at name (relative to HOME: ".gitconfig").  source is a
 * host file, private to the run and removed after it; the box shows its
 * content, and what the program writes there is thrown away.  Frozen
 * within major 2. */
typedef struct kgate_home_file {
    const char *name;
    const char *source;
} kgate_home_file;

/* One plain data structure: the user config, narrowed by the project file,
 * widened by the one-shot flags, with every path already resolved.
 *
 * Paths: absolute, realpath()-resolved, no trailing slash.  The core has
 * already refused any path whose resolved location differs from what the
 * user wrote because of a symlink, so a backend can paste these into its
 * plan without resolving again.  deny_read and protect_paths entries may name
 * files that do not exist (yet): their parent directory is resolved.
 *
 * network is the effective mode: "restricted" with no hosts arrives here as
 * KGATE_NET_OFF, so a backend never has to special-case it.  configured_network
 * keeps what the files said, for messages. */
typedef struct kgate_policy {
    size_t struct_size;

    kgate_network network;
    kgate_network configured_network;
    kgate_strlist allow_hosts; /* validated host names, lowercase */

    const char *project; /* the working directory: always writable */
    const char *home; /* hidden, except what the lists below give back */
    const char *tmpdir; /* resolved $TMPDIR, or NULL when unset or /tmp */
    uid_t uid;
    gid_t gid;

    kgate_strlist allow_paths; /* extra read-write paths */
    kgate_strlist read_paths; /* extra read-only paths */
    kgate_strlist deny_read; /* hidden inside the sandbox */
    kgate_strlist protect_paths; /* read-only although inside a writable root
                                    (.git/hooks, .kgate.yaml, ...) */
    kgate_strlist allow_sockets; /* host Unix sockets the program may reach */

    kgate_macos_profile macos_profile;
    kgate_strlist macos_allow_mach; /* mach services re-allowed by the user */

    /* The command, already checked against the exec deny list.  argv[0] is
     * the name as typed; command_path is what PATH resolved it to. */
    kgate_strlist argv;
    const char *command_path;

    /* 1 when the core gives the program a pseudo-terminal of its own (see
     * kgate_launch.pty).  The plan must let the program take that pty as
     * its controlling terminal, in a session that no process outside the
     * sandbox shares: a Ctrl-C typed into the pty signals every process of
     * the terminal's foreground group.  (The bubblewrap backend keeps
     * --new-session and runs the command through a shim that takes the
     * terminal inside the sandbox; docs/interactive.md.) */
    int pty;

    /* ABI 2.2 (check with KGATE_HAS_FIELD): the ports to publish on the
     * host's loopback, n_publish of them (0: none).  The core hands a
     * non-empty list only to a launcher that sets kgate_backend.publishes;
     * such a launcher forwards every entry before the program can run,
     * refuses the launch when one cannot be forwarded, and stops listening
     * on the host when the run ends. */
    const kgate_publish *publish;
    size_t n_publish;

    /* ABI 2.3 (check with KGATE_HAS_FIELD): the files the program's HOME
     * holds although the real home is hidden: the box's .gitconfig (the
     * user's identity and a few harmless keys, never the whole file) and
     * the excludes file it names, n_home_files of them.  A box whose HOME
     * is hidden shows each; a later read_paths or allow_paths entry at the
     * same place wins (the user gave the real file back). */
    const kgate_home_file *home_files;
    size_t n_home_files;
    /* ABI 2.3: an empty regular file, read-only, private to the run (NULL
     * when the core made none): what a box that covers a deny_read file
     * by a bind can show instead, so that a write there fails as on any
     * read-only file rather than vanishing into /dev/null.  Its mode is
     * 0 (issue 43): a program without capabilities cannot open it at all,
     * as the Landlock box refuses a deny_read file. */
    const char *empty_file;
} kgate_policy;

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

/* A plugin failure: one line, no trailing newline, no "kgate:" prefix (the
 * core adds it and the backend's name). */
typedef struct kgate_err {
    int code; /* an errno value when one applies, else 0 */
    char msg[512];
} kgate_err;

static inline int kgate_err_vset(kgate_err *err, int code, const char *fmt, va_list ap)
    KGATE_PRINTF(3, 0);
static inline int kgate_err_vset(kgate_err *err, int code, const char *fmt, va_list ap)
{
    if (err) {
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    }
    return -1;
}

/* Fills err and returns -1, so a plugin can write
 *     return kgate_err_set(err, ENOENT, "bwrap not found in %s", path);  */
static inline int kgate_err_set(kgate_err *err, int code, const char *fmt, ...) KGATE_PRINTF(3, 4);
static inline int kgate_err_set(kgate_err *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kgate_err_vset(err, code, fmt, ap);
    va_end(ap);
    return -1;
}

/* ------------------------------------------------------------------------ */
/* Probe results                                                             */
/* ------------------------------------------------------------------------ */

typedef enum kgate_verdict {
    KGATE_READY = 0,
    KGATE_DEGRADED = 1,
    KGATE_BLOCKED = 2,
} kgate_verdict;

/* How hard probe may look.  QUICK is what `kgate run` asks for on every
 * command: stat a binary, read a sysctl, run no tool (a fork that execs
 * nothing, such as kgl_userns_trial, is fine).  THOROUGH is
 * what `kgate doctor` and `kgate plugins` ask for: it may try the tool. */
typedef enum kgate_probe_depth {
    KGATE_PROBE_QUICK = 0,
    KGATE_PROBE_THOROUGH = 1,
} kgate_probe_depth;

#define KGATE_PROBE_MAX_FACTS 16

/* What probe found.  doctor() is a pure function of this and the policy, so
 * that tests can hand a backend made-up findings (a macOS machine, a Linux
 * machine without slirp4netns) and check its verdict table anywhere.
 *
 * facts[] are named booleans the backend defines for itself ("bwrap",
 * "userns", "slirp4netns", ...); kgate_probe_fact() reads one. */
typedef struct kgate_probe {
    size_t struct_size;
    int available; /* 1: this backend can start programs here */
    int score; /* higher wins among backends that can enforce the policy */
    char version[64]; /* the tool's version, or "" */
    char tool_path[256]; /* the tool that launch will exec, or "" */
    char reason[256]; /* why not available, or a one-line summary */
    size_t n_facts;
    struct {
        char name[32];
        int value;
    } facts[KGATE_PROBE_MAX_FACTS];
    /* The backend's own state (ABI 2.0): whatever its probe found that the
     * fields above cannot hold (tool paths, an open descriptor, ...),
     * allocated by probe and freed by the core through
     * kgate_backend.release when it drops this probe.  The core hands the
     * same probe to doctor, plan and launch, so the state lives from probe
     * to the end of the command; a backend keeps no globals.  NULL when
     * the backend keeps none, and in probes a test makes up: doctor and
     * plan must not need it; launch refuses without what it needs. */
    void *state;
} kgate_probe;

static inline void kgate_probe_init(kgate_probe *p)
{
    /* memset rather than a compound literal: the header must also compile
     * as C++ before C++20, where designated initializers are not allowed. */
    memset(p, 0, sizeof *p);
    p->struct_size = sizeof(kgate_probe);
}

/* Records a named finding (ignored when the table is full). */
static inline void kgate_probe_set_fact(kgate_probe *p, const char *name, int value)
{
    size_t i;
    for (i = 0; i < p->n_facts; i++) {
        const char *a = p->facts[i].name, *b = name;
        while (*a && *a == *b) a++, b++;
        if (*a == *b) {
            p->facts[i].value = value;
            return;
        }
    }
    if (p->n_facts < KGATE_PROBE_MAX_FACTS) {
        size_t k = 0;
        for (; name[k] && k + 1 < sizeof p->facts[0].name; k++)
            p->facts[p->n_facts].name[k] = name[k];
        p->facts[p->n_facts].name[k] = '\0';
        p->facts[p->n_facts].value = value;
        p->n_facts++;
    }
}

/* A named finding, or dflt when probe did not record it. */
static inline int kgate_probe_fact(const kgate_probe *p, const char *name, int dflt)
{
    size_t i;
    for (i = 0; i < p->n_facts; i++) {
        const char *a = p->facts[i].name, *b = name;
        while (*a && *a == *b) a++, b++;
        if (*a == *b) return p->facts[i].value;
    }
    return dflt;
}

/* ------------------------------------------------------------------------ */
/* Services the core offers a plugin                                         */
/* ------------------------------------------------------------------------ */

/* Finding ids.  Every doctor finding carries one: a short dotted name
 * ("net.hosts-unsupported", "fs.home-hidden") that stays the same when its
 * sentence is reworded, so that programs (`kgate doctor --json`, another
 * backend composing this one, a plan agreeing with its doctor) compare ids
 * and never sentences.  Valid: 1 to KGATE_FINDING_ID_MAX bytes of
 * [a-z0-9.-], starting with a letter, no empty part between dots, not
 * ending with '.' or '-'.  The ids of the backends built with kgate are a
 * stable interface, listed in docs/doctor.md; a backend names its own with
 * its own prefix, and reuses a listed id when it means the same thing. */
#define KGATE_FINDING_ID_MAX 48

/* The ids the core itself reads.
 *
 * NET_HOSTS_UNSUPPORTED: this box cannot enforce a host allow list by
 * itself (bubblewrap, seatbelt).  For `network: restricted` with hosts the
 * core composes such a box with a network stage (KGATE_KIND_NETWORK) that
 * supplies the list, and drops exactly this finding from the box's report;
 * any other BLOCKED finding keeps the box out. */
#define KGATE_FINDING_NET_HOSTS_UNSUPPORTED "net.hosts-unsupported"

/* The ids more than one backend reports, each meaning the same thing
 * whichever backend says it: named once, so that no backend can spell one
 * another way. */
#define KGATE_FINDING_HOST_NOT_LINUX "host.not-linux"
#define KGATE_FINDING_TOOL_MISSING "tool.missing"
#define KGATE_FINDING_USERNS_UNAVAILABLE "userns.unavailable"
#define KGATE_FINDING_FS_HOME_HIDDEN "fs.home-hidden"
#define KGATE_FINDING_FS_PROTECT_PATHS "fs.protect-paths"
#define KGATE_FINDING_NET_OFF "net.off"
#define KGATE_FINDING_NET_OPEN "net.open"
#define KGATE_FINDING_NET_MODE_UNKNOWN "net.mode-unknown"
#define KGATE_FINDING_SOCKETS_UNIX "sockets.unix"
#define KGATE_FINDING_SOCKETS_ABSTRACT "sockets.abstract"
#define KGATE_FINDING_TTY_ISOLATED "tty.isolated"
#define KGATE_FINDING_SECCOMP_FILTER "seccomp.filter"

/* Owned by the core; a plugin only adds to them through kgate_host. */
typedef struct kgate_plan kgate_plan;
typedef struct kgate_report kgate_report;
struct kgate_backend;

typedef enum kgate_log_level {
    KGATE_LOG_DEBUG = 0, /* shown with KGATE_DEBUG=1 */
    KGATE_LOG_WARN = 1, /* shown as "kgate: <backend>: ..." on stderr */
} kgate_log_level;

typedef struct kgate_host {
    size_t struct_size;
    uint32_t abi_major;
    uint32_t abi_minor;

    void (*log)(const struct kgate_host *host, kgate_log_level level, const char *fmt, ...)
        KGATE_PRINTF(3, 4);

    /* Plan building.  Each call copies its strings.  They return 0, or -1
     * when memory runs out (the plan is then unusable: return an error). */
    int (*plan_arg)(kgate_plan *plan, const char *arg);
    int (*plan_argf)(kgate_plan *plan, const char *fmt, ...) KGATE_PRINTF(2, 3);
    /* Appends every string of list, in order. */
    int (*plan_args)(kgate_plan *plan, const kgate_strlist *list);
    /* A helper file the launch needs (a profile, a rules file, a
     * resolv.conf).  label names it in --dry-run; content is shown verbatim. */
    int (*plan_file)(kgate_plan *plan, const char *label, const char *content);
    /* A line shown after the argv in --dry-run ("resolved inside the
     * namespace at launch: ..."). */
    int (*plan_note)(kgate_plan *plan, const char *fmt, ...) KGATE_PRINTF(2, 3);

    /* Reading a plan back (for launch; a network stage reads the box's). */
    const char *const *(*plan_argv)(const kgate_plan *plan, size_t *argc);
    const char *(*plan_file_content)(const kgate_plan *plan, const char *label);

    /* Doctor findings.  The overall verdict is the worst one added.  id
     * names the finding for programs (KGATE_FINDING_ID_MAX, below); the
     * sentence is for people and may change.  A finding whose id is not
     * valid is not recorded: the call returns -1 and the core refuses the
     * whole report (BLOCKED, core.finding-id-invalid). */
    int (*report)(kgate_report *rep, kgate_verdict verdict, const char *id, const char *fmt, ...)
        KGATE_PRINTF(4, 5);
    /* An extra key for `doctor --json` and a "key: value" line in text. */
    int (*report_detail)(kgate_report *rep, const char *key, const char *value);

} kgate_host;

/* ------------------------------------------------------------------------ */
/* Launch                                                                    */
/* ------------------------------------------------------------------------ */

/* What the core hands launch().  The program must get stdin_fd, stdout_fd
 * and stderr_fd as its 0, 1 and 2, envp as its environment, and the
 * project as its working directory.  Every other descriptor the core owns
 * is close-on-exec. */
typedef struct kgate_launch {
    size_t struct_size;
    int stdin_fd;
    int stdout_fd;
    int stderr_fd;
    const char *const *envp;
    /* 1 when stdin_fd is the slave side of a pseudo-terminal the core
     * opened: the program must get it as its controlling terminal.  When
     * the launch child becomes the program (sandbox-exec execs in place),
     * the child calls setsid() and TIOCSCTTY on stdin_fd before it execs.
     * When a process stays outside the sandbox (bwrap's outer process), it
     * must not get the terminal; the program takes it inside (see
     * kgate_policy.pty).  The core then forwards signals through the pty
     * (its foreground group, or its session's leader), falling back to
     * signal_pid while no session holds the terminal. */
    int pty;

    /* ABI 2.1: where a backend reports what it refused while the program
     * runs (a name its resolver would not answer, a connection its packet
     * filter dropped), or -1 when the core takes no events.  Check with
     * KGATE_HAS_FIELD(io, kgate_launch, events_fd) before reading it.
     *
     * It is the write end of a pipe the core reads while it relays the
     * program's output; the core turns each record into an audit line and,
     * after the program ends, one summary line.  The backend may hand it to
     * its helpers (dup it without O_CLOEXEC); the program must never get
     * it.  A record is one line of at most KGATE_EVENT_MAX bytes, written
     * with one write() so records from several writers never interleave:
     *
     *     net <verdict> <name> <addr> <port>[ <reason>]\n
     *
     * verdict is "refused"; name is the DNS name the program asked for or
     * the name the address was answered for ("-" when there is none), every
     * byte outside [A-Za-z0-9.*_-] written as \DDD (three decimal digits,
     * as in a DNS zone file); addr is a numeric IPv4 or IPv6 address or
     * "-"; port is a decimal TCP/UDP port, 0 when there is none.  reason
     * (added in ABI 2.1's later cores; a record without it still parses)
     * says why, so that what the user reads is what happened: "unlisted"
     * (a name not in allow_hosts), "private" (a listed name whose answer
     * was a private, loopback or link-local address, emptied by a rebind
     * guard), "never" (an address no answer may open: this host's, a
     * metadata service's), "unanswered" (an address no listed name
     * resolved to), "listen" (a server that asked to listen where the box
     * lets none: ADDR:PORT is where); any other word makes the record
     * unreadable.  The core
     * ignores (and counts) a record it cannot parse, and never blocks the
     * program for it: a backend writes with O_NONBLOCK and drops a record
     * rather than wait. */
    int events_fd;

    /* ABI 2.1, for a backend that sets kgate_backend.commits: the core's
     * audit launch line, written when commit is called and not before.
     * Such a backend calls commit exactly once, after everything of its
     * launch that can fail is in place (helpers started, filters loaded,
     * mounts checked) and before the program can run; when commit fails
     * it must not start the program, and returns -1 with the err commit
     * filled.  So a launch that fails on the way leaves a refusal in the
     * log, never a launch line for a program that never ran.  A launch
     * that returns 0 without calling commit is killed by the core (fail
     * closed).  Use kgate_launch_commit(), which checks the field. */
    int (*commit)(void *commit_ctx, kgate_err *err);
    void *commit_ctx;

    /* ABI 2.1, added later (check with KGATE_HAS_FIELD): the signals that
     * were ignored when kgate started, before it installed a handler of
     * its own; signal s (1..128) is bit (s - 1) % 64 of word (s - 1) / 64.
     * The program must start with exactly these ignored and every other
     * signal at its default, as it would have without kgate: a handler of
     * the core's (SIGCHLD, SIGWINCH, ...) is no sign of what kgate's caller
     * gave it (nohup's SIGHUP, a script's SIGINT for a background job).
     * SIGCHLD is never in the set (sandbox tools wait for their children;
     * POSIX leaves an ignored SIGCHLD across exec unspecified). */
    unsigned long long sig_ignored_at_start[2];
} kgate_launch;

/* 0 when there is nothing to commit (an older core, or a backend the core
 * writes the launch line for itself). */
static inline int kgate_launch_commit(const kgate_launch *io, kgate_err *err)
{
    if (!KGATE_HAS_FIELD(io, kgate_launch, commit_ctx) || !io->commit) return 0;
    return io->commit(io->commit_ctx, err);
}

/* The longest event record, newline included (below PIPE_BUF, so one
 * write() is atomic). */
#define KGATE_EVENT_MAX 512

#define KGATE_MAX_HELPERS 8

/* What launch() hands back.  pid is the process whose wait status is the
 * program's (a signal death of the program must show as a signal death of
 * pid).  signal_pid, when not 0, is where the core forwards SIGINT, SIGTERM,
 * SIGHUP and SIGQUIT instead of pid (a negative value is a process group).
 * helpers are started by the backend (slirp4netns, ...): the core sends them
 * SIGTERM and reaps them once pid has exited, and on every error path. */
typedef struct kgate_proc {
    size_t struct_size;
    pid_t pid;
    pid_t signal_pid;
    pid_t helpers[KGATE_MAX_HELPERS];
    size_t n_helpers;
} kgate_proc;

/* ------------------------------------------------------------------------ */
/* The backend                                                               */
/* ------------------------------------------------------------------------ */

/* What a backend is (kgate_backend.kind).
 *
 * A BOX is the filesystem and process sandbox (bubblewrap, seatbelt): its
 * plan is the whole launch for `network: off` and `open`.
 *
 * A NETWORK stage (slirp-filter) only makes `network: restricted` with
 * hosts possible: it never runs alone.  The core picks the best box whose
 * doctor is not BLOCKED apart from KGATE_FINDING_NET_HOSTS_UNSUPPORTED and
 * the best stage that can run, and composes them:
 *   doctor  the stage's doctor is asked for its own findings only (the
 *           network); the core shows the box's findings above them.
 *   plan    the core asks the box for its plan with the network left to
 *           the stage (kgate_policy.network = KGATE_NET_OPEN: no network
 *           namespace of its own), then the stage's plan with the real
 *           policy and that same plan: the stage adds its files and notes
 *           (and must not change the argv).
 *   launch  the core calls the stage's launch with the composed plan; it
 *           starts the box's argv inside the network it built.
 * A stage never calls a box's functions: it only reads the plan through
 * kgate_host.  Since the stage starts the box's argv, it names the boxes
 * whose plans it knows how to start (kgate_backend.boxes). */
typedef enum kgate_backend_kind {
    KGATE_KIND_BOX = 0,
    KGATE_KIND_NETWORK = 1,
} kgate_backend_kind;

typedef struct kgate_backend {
    size_t struct_size;
    uint32_t abi_major;
    uint32_t abi_minor;

    const char *name; /* unique; [a-z0-9-]+ */
    const char *description; /* one line */

    /* Fills probe (already kgate_probe_init()ed).  Returns 0, or -1 with err
     * when probing itself failed (a missing tool is not a failure: it is
     * available = 0 with a reason). */
    int (*probe)(const kgate_host *host, kgate_probe_depth depth, kgate_probe *probe,
                 kgate_err *err);

    /* Adds findings to rep: at least one line saying what is enforced and
     * how.  Must not touch the system: use only policy and probe. */
    int (*doctor)(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
                  kgate_report *rep);

    /* Fills plan.  The first argument added is the program to exec. */
    int (*plan)(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
                kgate_plan *plan, kgate_err *err);

    /* Starts plan and returns at once with the pids filled in; the core
     * waits.  probe is the one plan was given (with its state).  On
     * failure nothing of the program may be running. */
    int (*launch)(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
                  const kgate_plan *plan, const kgate_launch *io, kgate_proc *proc, kgate_err *err);

    /* Frees probe->state.  The core calls it once for every probe whose
     * state is not NULL (also after a probe that returned -1), before
     * probing again and before it unloads the plugin; never during a call
     * into the plugin.  NULL when the backend keeps no state. */
    void (*release)(void *state);

    /* Optional (a descriptor that ends at release reads as a box). */
    kgate_backend_kind kind;
    /* KGATE_KIND_NETWORK only: the names of the boxes whose plans this
     * stage can start, NULL-terminated (NULL: none, the stage is never
     * composed).  Ignored for a box. */
    const char *const *boxes;

    /* ABI 2.1: 1 when launch calls kgate_launch_commit() before the
     * program can run (kgate_launch.commit); the core then writes its
     * audit launch line there instead of before launch. */
    int commits;

    /* ABI 2.2: 1 when this backend's launch forwards kgate_policy.publish
     * (the launcher: the stage of a composition, else the box).  The core
     * refuses --publish, with one line and nothing started, for a launcher
     * that does not set it, and reads it only from a plugin of minor 2 or
     * later. */
    int publishes;
} kgate_backend;

/* Fills the version fields, so a plugin author cannot get them wrong:
 *     static const kgate_backend backend = {
 *         KGATE_BACKEND_INIT,
 *         .name = "hello", ...
 *     };  */
#define KGATE_BACKEND_INIT \
    .struct_size = sizeof(kgate_backend), .abi_major = KGATE_ABI_MAJOR, .abi_minor = KGATE_ABI_MINOR

typedef const kgate_backend *(*kgate_plugin_entry_fn)(void);

/* Defines the exported entry point of a plugin that returns backend_var. */
#define KGATE_PLUGIN_DEFINE(backend_var)                        \
    KGATE_EXPORT const kgate_backend *kgate_plugin_entry(void); \
    KGATE_EXPORT const kgate_backend *kgate_plugin_entry(void) { return &(backend_var); }

#ifdef __cplusplus
}
#endif

#endif /* KGATE_PLUGIN_H */
