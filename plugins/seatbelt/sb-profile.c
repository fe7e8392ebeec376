/* sb-profile.c: policy -> SBPL profile text, in the order that makes it true.
 *
 * Seatbelt evaluates every rule and the LAST matching one decides.  The
 * order below is the mechanism (design note 001): blanket write deny, home
 * read deny, temp write allows, home write deny again (so a temp directory
 * inside a tree that was just opened cannot reopen home), the project and
 * the configured paths, and only then the narrowing rules (deny_read,
 * protect_paths) so that no allow can come after them and undo them.
 */
#include "sb-profile.h"

#include "kgate/kgate-path.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------------ */
/* A growable string; a failed allocation sticks and is reported once.      */

typedef struct sb_buf {
    char *p;
    size_t len, cap;
    int failed;
} sb_buf;

static void buf_add(sb_buf *b, const char *s, size_t n)
{
    if (b->failed) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void buf_adds(sb_buf *b, const char *s) { buf_add(b, s, strlen(s)); }

static void buf_addf(sb_buf *b, const char *fmt, ...) KGATE_PRINTF(2, 3);
static void buf_addf(sb_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        buf_add(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->failed = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    buf_add(b, big, (size_t)n);
    free(big);
}

/* ------------------------------------------------------------------------ */
/* Escaping and validation                                                   */

char *sb_quote(const char *s)
{
    sb_buf b = {0};
    buf_add(&b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': buf_add(&b, "\\\"", 2); break;
        case '\\': buf_add(&b, "\\\\", 2); break;
        case '\n': buf_add(&b, "\\n", 2); break;
        case '\t': buf_add(&b, "\\t", 2); break;
        case '\r': buf_add(&b, "\\r", 2); break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                buf_addf(&b, "\\x%02x", *p);
            else
                buf_add(&b, (const char *)p, 1);
        }
    }
    buf_add(&b, "\"", 1);
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

const char *sb_restricted_hosts_sentence(void)
{
    return "sandbox-exec only accepts * or localhost as a host: a per-host "
           "allow list cannot be installed on macOS (use network off or open)";
}

const char *sb_refusal_id(const kgate_err *err)
{
    return err->code == ENOTSUP ? KGATE_FINDING_NET_HOSTS_UNSUPPORTED : "seatbelt.profile-refused";
}

int sb_mach_name_ok(const char *name)
{
    static const char ok[] = "abcdefghijklmnopqrstuvwxyz"
                             "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
    size_t n = name ? strlen(name) : 0;
    return n > 0 && n <= 200 && strspn(name, ok) == n;
}

const char *sb_profile_name(kgate_macos_profile p)
{
    return p == KGATE_MACOS_STRICT ? "strict" : "permissive";
}

/* The doors out of the box that no file or network rule covers.  A mach
 * service is either a full name or, when it ends in '.', every name with
 * that prefix (LaunchServices has several lsd.* endpoints). */
typedef struct sb_door {
    const char *door;
    const char *why;
    const char *services[4];
} sb_door;

static const sb_door doors[] = {
    {"LaunchServices",
     "open(1) and `open -a` ask launchservicesd to start programs outside the "
     "sandbox",
     {"com.apple.coreservices.launchservicesd", "com.apple.lsd.", NULL}},
    {"Apple Events",
     "osascript can make another, unsandboxed application run a command",
     {"com.apple.coreservices.appleevents", NULL}},
    {"pasteboard",
     "pbpaste/pbcopy read and write the user's clipboard",
     {"com.apple.pasteboard.1", "com.apple.coreservices.uauseractivitypasteboardclient.xpc", NULL}},
    {"keychain",
     "credentials the user's tools stored in the keychain",
     {"com.apple.SecurityServer", "com.apple.securityd", "com.apple.securityd.xpc", NULL}},
};

static int service_matches(const char *pattern, const char *name)
{
    size_t n = strlen(pattern);
    if (n && pattern[n - 1] == '.') return strncmp(pattern, name, n) == 0;
    return strcmp(pattern, name) == 0;
}

const char *sb_door_for_mach(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < sizeof doors / sizeof doors[0]; i++)
        for (size_t k = 0; doors[i].services[k]; k++)
            if (service_matches(doors[i].services[k], name)) return doors[i].door;
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* The builder                                                               */

typedef struct sb_ctx {
    sb_form form;
    sb_buf out;
    char **params;
    size_t n_params;
    int failed;
} sb_ctx;

/* The SBPL expression that stands for path: (param "KG_PATH_n") or a quoted
 * literal.  The same path always gets the same parameter. */
static void add_path_expr(sb_ctx *c, const char *path)
{
    if (c->form == SB_FORM_INLINE) {
        char *q = sb_quote(path);
        if (!q) {
            c->failed = 1;
            return;
        }
        buf_adds(&c->out, q);
        free(q);
        return;
    }
    size_t i;
    for (i = 0; i < c->n_params; i++) {
        const char *v = strchr(c->params[i], '=') + 1;
        if (strcmp(v, path) == 0) break;
    }
    if (i == c->n_params) {
        char **p = realloc(c->params, (c->n_params + 1) * sizeof *p);
        if (!p) {
            c->failed = 1;
            return;
        }
        c->params = p;
        if (asprintf(&c->params[i], "KG_PATH_%zu=%s", i, path) < 0) {
            c->failed = 1;
            return;
        }
        c->n_params++;
    }
    buf_addf(&c->out, "(param \"KG_PATH_%zu\")", i);
}

/* (ACTION OP (FILTER <path>)) on one line. */
static void path_rule(sb_ctx *c, const char *action, const char *op, const char *filter,
                      const char *path)
{
    buf_addf(&c->out, "(%s %s (%s ", action, op, filter);
    add_path_expr(c, path);
    buf_adds(&c->out, "))\n");
}

static void line(sb_ctx *c, const char *s)
{
    buf_adds(&c->out, s);
    buf_adds(&c->out, "\n");
}

/* Seatbelt compares the kernel's spelling of a path with the rule's, byte
 * for byte.  A rule on "/p/./.env" or "/p//.env" matches nothing, so a deny
 * would silently not apply: refuse anything that is not canonical.  (The
 * core resolves paths; this catches a mistake before it fails open.) */
static int check_path(const char *what, const char *p, kgate_err *err)
{
    if (!p || p[0] != '/')
        return kgate_err_set(err, EINVAL,
                             "%s is not an absolute path: a Seatbelt rule "
                             "needs the resolved location",
                             what);
    if (strcmp(p, "/") == 0) return 0;
    for (const char *c = p; *c == '/';) {
        const char *e = strchr(c + 1, '/');
        size_t n = e ? (size_t)(e - c - 1) : strlen(c + 1);
        if (n == 0 || (n == 1 && c[1] == '.') || (n == 2 && c[1] == '.' && c[2] == '.'))
            return kgate_err_set(err, EINVAL,
                                 "%s is not a resolved path (empty, '.' or "
                                 "'..' component, or a trailing '/'): the "
                                 "kernel would never match it",
                                 what);
        if (!e) break;
        c = e;
    }
    return 0;
}

/* 1 when a is b or an ancestor of b. */
static int covers(const char *a, const char *b)
{
    size_t n = strlen(a);
    if (strcmp(a, "/") == 0) return 1;
    return strncmp(a, b, n) == 0 && (b[n] == '\0' || b[n] == '/');
}

static int check_list(const char *what, const kgate_strlist *l, kgate_err *err)
{
    for (size_t i = 0; i < l->n; i++)
        if (check_path(what, l->v[i], err) < 0) return -1;
    return 0;
}

/* strict: (deny default), then what ordinary command-line tools need.  Each
 * group names a tool that stops working without it. */
static void strict_base(sb_ctx *c, const kgate_policy *pol)
{
    line(c, "(deny default)");
    line(c, "; make, git and every shell fork and exec; the children inherit "
            "this profile");
    line(c, "(allow process-fork)");
    line(c, "(allow process-exec)");
    line(c, "; kill(1), make -j and test runners signal and inspect their own "
            "children");
    line(c, "(allow signal (target same-sandbox))");
    line(c, "(allow process-info* (target same-sandbox))");
    line(c, "; realpath(), getcwd(), PATH lookup and `ls -l` stat path "
            "components anywhere; the home rules below take $HOME back");
    line(c, "(allow file-read-metadata)");
    line(c, "; dyld, shells, compilers and interpreters read the system, "
            "Homebrew (/opt) and /etc");
    line(c, "(allow file-read* (literal \"/\") (subpath \"/System\") "
            "(subpath \"/usr\") (subpath \"/bin\") (subpath \"/sbin\") "
            "(subpath \"/Library\") (subpath \"/Applications\") "
            "(subpath \"/opt\") (subpath \"/private/etc\") "
            "(subpath \"/private/var/db/timezone\") "
            "(subpath \"/private/var/select\"))");
    line(c, "; devices every program expects: /dev/null, randomness (TLS, "
            "Python), the terminal, reopened descriptors");
    line(c, "(allow file-read* (literal \"/dev/null\") (literal \"/dev/zero\") "
            "(literal \"/dev/random\") (literal \"/dev/urandom\") "
            "(literal \"/dev/tty\") (subpath \"/dev/fd\"))");
    line(c, "; the temp directories are readable as well as writable (cc, "
            "mktemp, pip)");
    line(c, "(allow file-read* (subpath \"/private/tmp\"))");
    if (pol->tmpdir) path_rule(c, "allow", "file-read*", "subpath", pol->tmpdir);
    line(c, "; openpty(): script(1), expect, Python's pty module, REPLs; "
            "the slave of a pty made in here carries the pty extension");
    line(c, "(allow pseudo-tty)");
    line(c, "(allow file-read* file-ioctl (literal \"/dev/ptmx\"))");
    line(c, "(allow file-read* file-ioctl (require-all "
            "(regex #\"^/dev/ttys[0-9]+$\") "
            "(extension \"com.apple.sandbox.pty\")))");
    line(c, "; isatty() and terminal modes on the terminal the program got");
    line(c, "(allow file-ioctl (literal \"/dev/tty\") "
            "(regex #\"^/dev/ttys[0-9]+$\"))");
    line(c, "; uname(1), Node's os.cpus(), Python's os.cpu_count(), make -j "
            "and Go read these");
    line(c, "(allow sysctl-read (sysctl-name-prefix \"hw.\") "
            "(sysctl-name-prefix \"machdep.cpu.\") "
            "(sysctl-name-prefix \"kern.os\") (sysctl-name \"kern.version\") "
            "(sysctl-name \"kern.hostname\") (sysctl-name \"kern.argmax\") "
            "(sysctl-name \"kern.maxfilesperproc\") "
            "(sysctl-name \"kern.usrstack64\") "
            "(sysctl-name \"kern.secure_kernel\") "
            "(sysctl-name \"sysctl.proc_cputype\") "
            "(sysctl-name \"vm.loadavg\") "
            "(sysctl-name-prefix \"kern.proc.pid.\"))");
    line(c, "; CFPreferences: xcrun, swift and clang read their defaults");
    line(c, "(allow user-preference-read)");
    line(c, "; getpwuid() and group lookups (git, ssh, ~ expansion), "
            "preferences, logging and notify(3), used by libSystem itself");
    line(c, "(allow mach-lookup "
            "(global-name \"com.apple.system.opendirectoryd.libinfo\") "
            "(global-name \"com.apple.system.opendirectoryd.membership\") "
            "(global-name \"com.apple.cfprefsd.daemon\") "
            "(global-name \"com.apple.cfprefsd.agent\") "
            "(global-name \"com.apple.logd\") "
            "(global-name \"com.apple.system.logger\") "
            "(global-name \"com.apple.system.notification_center\"))");
    line(c, "; POSIX semaphores: Python multiprocessing's SemLock");
    line(c, "(allow ipc-posix-sem)");
}

/* What strict needs for an open network beyond the socket itself: name
 * resolution and certificate checks happen in system daemons. */
static void strict_open_network(sb_ctx *c)
{
    line(c, "; network open: sockets, DNS through mDNSResponder and "
            "configd, TLS trust through trustd (curl, git, pip)");
    line(c, "(allow network*)");
    line(c, "(allow system-socket)");
    line(c, "(allow mach-lookup (global-name \"com.apple.dnssd.service\") "
            "(global-name \"com.apple.SystemConfiguration.configd\") "
            "(global-name \"com.apple.SystemConfiguration.DNSConfiguration\") "
            "(global-name \"com.apple.trustd.agent\"))");
}

/* Host Unix sockets (issue 6): a Docker socket is root on the host, an
 * ssh-agent or D-Bus socket is the user's keys.  In network off the blanket
 * outbound deny already covers them; in open this is what does.  After the
 * network rules so that no allow there can reopen them, then the resolver
 * (open only: getaddrinfo asks mDNSResponder over this socket) and each
 * allow_sockets entry, exactly that path. */
static void unix_sockets_section(sb_ctx *c, const kgate_policy *pol)
{
    line(c, "; host Unix sockets: none, except the ones named below");
    line(c, "(deny network-outbound (remote unix-socket))");
    if (pol->network == KGATE_NET_OPEN) {
        line(c, "; network open: name resolution goes through mDNSResponder's "
                "socket");
        line(c, "(allow network-outbound (remote unix-socket (path-literal "
                "\"/private/var/run/mDNSResponder\")))");
    }
    if (pol->allow_sockets.n) line(c, "; allow_sockets");
    for (size_t i = 0; i < pol->allow_sockets.n; i++) {
        buf_adds(&c->out, "(allow network-outbound (remote unix-socket (path-literal ");
        add_path_expr(c, pol->allow_sockets.v[i]);
        buf_adds(&c->out, ")))\n");
    }
}

static void doors_section(sb_ctx *c)
{
    line(c, "; doors out of the box that no file or network rule covers: "
            "programs that run outside the sandbox on our behalf, the "
            "clipboard, the keychain");
    line(c, "(deny appleevent-send)");
    buf_adds(&c->out, "(deny mach-lookup");
    for (size_t i = 0; i < sizeof doors / sizeof doors[0]; i++)
        for (size_t k = 0; doors[i].services[k]; k++) {
            const char *s = doors[i].services[k];
            size_t n = strlen(s);
            buf_addf(&c->out, " (%s \"%s\")",
                     s[n - 1] == '.' ? "global-name-prefix" : "global-name", s);
        }
    buf_adds(&c->out, ")\n");
}

/* What the profile cannot express, or a policy it must not be built for. */
static int check_policy(const kgate_policy *pol, kgate_err *err)
{
    if (pol->network == KGATE_NET_RESTRICTED && pol->allow_hosts.n > 0)
        return kgate_err_set(err, ENOTSUP, "%s", sb_restricted_hosts_sentence());
    /* Issue 43, 5: the box shares the Mac's network, and a rule on the
     * local address to keep a listener to the loopback matched the public
     * address on a real Mac (design note 001); untested here, so refused. */
    if (KGATE_HAS_FIELD(pol, kgate_policy, n_publish) && pol->n_publish > 0)
        return kgate_err_set(err, ENOTSUP,
                             "--publish: seatbelt cannot forward a port: the program "
                             "shares the Mac's network, and no Seatbelt rule kgate can "
                             "trust keeps its listener to the loopback");
    if (check_path("the project", pol->project, err) < 0 ||
        check_path("$HOME", pol->home, err) < 0 ||
        (pol->tmpdir && check_path("$TMPDIR", pol->tmpdir, err) < 0) ||
        check_list("an allow_paths entry", &pol->allow_paths, err) < 0 ||
        check_list("a read_paths entry", &pol->read_paths, err) < 0 ||
        check_list("a deny_read entry", &pol->deny_read, err) < 0 ||
        check_list("a protect_paths entry", &pol->protect_paths, err) < 0 ||
        check_list("an allow_sockets entry", &pol->allow_sockets, err) < 0)
        return -1;
    if (covers(pol->project, pol->home))
        return kgate_err_set(err, EINVAL,
                             "the project covers $HOME: a sandbox whose "
                             "writable root is $HOME is not a sandbox");
    for (size_t i = 0; i < pol->macos_allow_mach.n; i++)
        if (!sb_mach_name_ok(pol->macos_allow_mach.v[i]))
            return kgate_err_set(err, EINVAL,
                                 "macos_allow_mach: a mach service name may "
                                 "only use letters, digits, '.', '_' and '-'");
    return 0;
}

/* The file rules: nothing writable but what the policy gives back, $HOME
 * hidden, then the policy's lists, the denials last. */
/* dir is the project or an allow_paths entry: a writable root. */
static int writable_root(const kgate_policy *pol, const char *dir)
{
    if (strcmp(dir, pol->project) == 0) return 1;
    for (size_t i = 0; i < pol->allow_paths.n; i++)
        if (strcmp(dir, pol->allow_paths.v[i]) == 0) return 1;
    return 0;
}

static int under_writable(const kgate_policy *pol, const char *p)
{
    if (kgate_path_under(p, pol->project)) return 1;
    for (size_t i = 0; i < pol->allow_paths.n; i++)
        if (kgate_path_under(p, pol->allow_paths.v[i])) return 1;
    return 0;
}

/* A deny on a path does not keep the directories above it from being
 * renamed away (mv .realgit old) and made again with a config of the
 * program's choosing where the protected one was (issue 40): each
 * existing directory between a writable root and a protected path gets a
 * literal deny, as .git does, which refuses renaming, removing or
 * replacing it and leaves what is below it writable.  Written once each:
 * the rules already written are in c->out. */
static void protect_parents(sb_ctx *c, const kgate_policy *pol)
{
    char **done = NULL;
    size_t n = 0;
    for (size_t i = 0; i < pol->protect_paths.n && !c->failed; i++) {
        char *a = strdup(pol->protect_paths.v[i]), *slash;
        if (!a) c->failed = 1;
        while (a && !c->failed && (slash = strrchr(a, '/')) && slash != a) {
            *slash = '\0';
            struct stat st;
            if (writable_root(pol, a) || !under_writable(pol, a)) break;
            int seen = 0;
            for (size_t j = 0; j < n && !seen; j++) seen = strcmp(done[j], a) == 0;
            if (seen || lstat(a, &st) < 0 || !S_ISDIR(st.st_mode)) continue;
            char **nd = realloc(done, (n + 1) * sizeof *nd);
            if (nd) done = nd;
            if (!nd || !(nd[n] = strdup(a))) {
                c->failed = 1;
                break;
            }
            n++;
            path_rule(c, "deny", "file-write*", "literal", a);
        }
        free(a);
    }
    for (size_t j = 0; j < n; j++) free(done[j]);
    free(done);
}

static void files_section(sb_ctx *c, const kgate_policy *pol)
{
    line(c, "; nothing is writable unless a rule below gives it back");
    line(c, "(deny file-write*)");
    line(c, "; writing to these opens nothing: the bit bucket, the terminal "
            "the program already has, a descriptor it already holds");
    line(c, "(allow file-write* (literal \"/dev/null\") (literal \"/dev/zero\") "
            "(literal \"/dev/tty\") (subpath \"/dev/fd\"))");
    line(c, "; a pseudo-terminal the program opens itself (script, expect, "
            "tmux): a new master, and only a slave the kernel tagged as made "
            "in here, never another terminal window");
    line(c, "(allow file-write* (literal \"/dev/ptmx\") (require-all "
            "(regex #\"^/dev/ttys[0-9]+$\") "
            "(extension \"com.apple.sandbox.pty\")))");
    line(c, "; $HOME is hidden");
    path_rule(c, "deny", "file-read*", "subpath", pol->home);
    line(c, "; temp directories are writable (the kernel sees /tmp as "
            "/private/tmp)");
    line(c, "(allow file-write* (subpath \"/private/tmp\"))");
    if (pol->tmpdir) path_rule(c, "allow", "file-write*", "subpath", pol->tmpdir);
    line(c, "; again after the temp allows: a temp tree must not reopen home");
    path_rule(c, "deny", "file-write*", "subpath", pol->home);
    line(c, "; the project");
    path_rule(c, "allow", "file-read*", "subpath", pol->project);
    path_rule(c, "allow", "file-write*", "subpath", pol->project);
    if (pol->read_paths.n) line(c, "; read_paths");
    for (size_t i = 0; i < pol->read_paths.n; i++)
        path_rule(c, "allow", "file-read*", "subpath", pol->read_paths.v[i]);
    if (pol->allow_paths.n) line(c, "; allow_paths");
    for (size_t i = 0; i < pol->allow_paths.n; i++) {
        path_rule(c, "allow", "file-read*", "subpath", pol->allow_paths.v[i]);
        path_rule(c, "allow", "file-write*", "subpath", pol->allow_paths.v[i]);
    }
    /* After every allow, so nothing can give them back.  subpath matches the
     * path itself and everything below it, so one rule covers a file, a
     * directory and an entry that does not exist yet. */
    if (pol->deny_read.n) line(c, "; deny_read: hidden (and not writable, as on Linux)");
    for (size_t i = 0; i < pol->deny_read.n; i++) {
        path_rule(c, "deny", "file-read*", "subpath", pol->deny_read.v[i]);
        path_rule(c, "deny", "file-write*", "subpath", pol->deny_read.v[i]);
    }
    if (pol->protect_paths.n) line(c, "; protect_paths: read-only");
    for (size_t i = 0; i < pol->protect_paths.n; i++)
        path_rule(c, "deny", "file-write*", "subpath", pol->protect_paths.v[i]);
    /* The project's .git itself, not below it: it cannot be renamed,
     * removed or replaced, so no git directory of the program's choosing
     * takes its place (docs/escapes.md, "Host git").  Only when there is
     * one: a literal on a missing .git would refuse git init. */
    char *dotgit = NULL;
    struct stat st;
    if (asprintf(&dotgit, "%s/.git", pol->project) < 0) {
        dotgit = NULL;
        c->failed = 1;
    } else if (lstat(dotgit, &st) == 0) {
        path_rule(c, "deny", "file-write*", "literal", dotgit);
    }
    free(dotgit);
    protect_parents(c, pol);
}

static void network_section(sb_ctx *c, const kgate_policy *pol, int strict)
{
    switch (pol->network) {
    case KGATE_NET_OPEN:
        if (strict)
            strict_open_network(c);
        else
            line(c, "; network open: no network rules");
        break;
    default:
        /* Never (local ip ...): on a real Mac it matched the machine's
         * public address and let a connection out (design note 001). */
        line(c, "; network off: outbound denied except to localhost");
        line(c, "(deny network-outbound)");
        line(c, "(allow network-outbound (remote ip \"localhost:*\"))");
        break;
    }
}

int sb_build(const kgate_policy *pol, sb_form form, sb_profile *out, kgate_err *err)
{
    *out = (sb_profile){0};
    if (check_policy(pol, err) < 0) return -1;

    sb_ctx c = {.form = form};
    int strict = pol->macos_profile == KGATE_MACOS_STRICT;

    buf_addf(&c.out, "; kgate seatbelt profile, base: %s\n", sb_profile_name(pol->macos_profile));
    line(&c, "(version 1)");
    if (strict)
        strict_base(&c, pol);
    else
        line(&c, "(allow default)");

    files_section(&c, pol);
    network_section(&c, pol, strict);
    unix_sockets_section(&c, pol);
    doors_section(&c);
    if (pol->macos_allow_mach.n) line(&c, "; macos_allow_mach: services the user allowed back");
    for (size_t i = 0; i < pol->macos_allow_mach.n; i++)
        buf_addf(&c.out, "(allow mach-lookup (global-name \"%s\"))\n", pol->macos_allow_mach.v[i]);

    out->text = c.out.p;
    out->params = c.params;
    out->n_params = c.n_params;
    if (c.failed || c.out.failed) {
        sb_profile_clear(out);
        return kgate_err_set(err, ENOMEM, "out of memory building the profile");
    }
    return 0;
}

void sb_profile_clear(sb_profile *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->n_params; i++) free(p->params[i]);
    free(p->params);
    free(p->text);
    *p = (sb_profile){0};
}
