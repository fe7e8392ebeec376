/* denyexec.c: the exec deny list.  A command line is walked the way the
 * programs in it would walk it (wrappers, shells, short scripts), and every
 * word that would be executed is compared with the deny list by name, by
 * file identity and by content.  What this cannot see is written down in
 * docs/deny-exec.md; the kernel box, not this check, is the boundary.
 * Shell strings are walked in denyexec_sh.c; content fingerprints are
 * cached by fpcache.c. */
#include "denyexec.h"
#include "denyexec_int.h"
#include "cleanup.h"
#include "fpcache.h"
#include "msg.h"
#include "os.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "oom.h" /* uthash, utarray, utstring */

#define SCRIPT_MAX (64 * 1024)
#define MAX_DEPTH 40
#define MAX_SCRIPTS 64

/* What the shell walker (denyexec_sh.c) hands each command it finds to. */
static const kg_dx_visitor dx_visitor = {
    .command = kg_dx_check_argv,
    .name = kg_dx_check_name,
    .source = kg_dx_check_source,
    .block = kg_dx_block,
    .enter = kg_dx_enter,
    .leave = kg_dx_leave,
    .take_stdin_args = kg_dx_take_stdin_args,
    .is_cd = kg_dx_is_cd,
};

/* ---- what a command word can be ---------------------------------------- */

typedef enum {
    K_NONE,
    K_SHELL,
    K_ENV,
    K_XARGS,
    K_COMMAND,
    K_FIND,
    K_BUSYBOX,
    K_EVAL,
    K_SOURCE,
    K_TRAP,
    K_ALIAS,
    K_WATCH,
    K_FLOCK,
    K_CD,
    K_CSTRING,
    K_LOADER,
    K_WRAP, /* the simple kind: options, then npos operands, then the command */
    K_COPY, /* copies, links or reads a file it names: cp, ln, mv, cat, dd if= */
} kind;

/* How a wrapper's own arguments look.  shorts: option letters that take a
 * value; longs: " name name " of long options that take one. */
typedef struct tool_spec {
    const char *name;
    kind k;
    bool file; /* also recognised by file (renamed copies); each one
                      * costs a PATH lookup when the list is built */
    const char *shorts, *longs;
    unsigned npos; /* operands before the command (timeout's DURATION) */
    bool digits; /* -N is an option (nice -5) */
    bool assigns; /* NAME=value words before the command (sudo) */
} tool_spec;

static const tool_spec tools[] = {
    {"sh", K_SHELL, true, 0, 0, 0, 0, 0},
    {"bash", K_SHELL, true, 0, 0, 0, 0, 0},
    {"dash", K_SHELL, true, 0, 0, 0, 0, 0},
    {"zsh", K_SHELL, true, 0, 0, 0, 0, 0},
    {"ksh", K_SHELL, true, 0, 0, 0, 0, 0},
    {"mksh", K_SHELL, true, 0, 0, 0, 0, 0},
    {"ash", K_SHELL, false, 0, 0, 0, 0, 0},
    {"rbash", K_SHELL, false, 0, 0, 0, 0, 0},
    {"ksh93", K_SHELL, false, 0, 0, 0, 0, 0},
    {"posh", K_SHELL, false, 0, 0, 0, 0, 0},
    {"yash", K_SHELL, false, 0, 0, 0, 0, 0},
    {"env", K_ENV, true, 0, 0, 0, 0, 0},
    {"xargs", K_XARGS, true, "adEILnPs",
     " arg-file delimiter max-args max-procs max-chars process-slot-var ", 0, 0, 0},
    {"command", K_COMMAND, false, 0, 0, 0, 0, 0},
    {"find", K_FIND, true, 0, 0, 0, 0, 0},
    {"eval", K_EVAL, false, 0, 0, 0, 0, 0},
    {"source", K_SOURCE, false, 0, 0, 0, 0, 0},
    {".", K_SOURCE, false, 0, 0, 0, 0, 0},
    {"trap", K_TRAP, false, 0, 0, 0, 0, 0},
    {"alias", K_ALIAS, false, 0, 0, 0, 0, 0},
    {"watch", K_WATCH, true, "nq", " interval equexit ", 0, 0, 0},
    {"flock", K_FLOCK, true, "wE", " timeout wait conflict-exit-code ", 0, 0, 0},
    {"cd", K_CD, false, 0, 0, 0, 0, 0},
    {"pushd", K_CD, false, 0, 0, 0, 0, 0},
    /* -c STRING runs a shell on STRING */
    {"su", K_CSTRING, false, "cgGsw", " command group supp-group shell whitelist-environment ", 0,
     0, 0},
    {"runuser", K_CSTRING, false, "cgGsuw",
     " command group supp-group shell user whitelist-environment ", 0, 0, 0},
    {"script", K_CSTRING, false, "cEIOBTmo",
     " command echo log-in log-out log-io log-timing logging-format output-limit ", 0, 0, 0},
    {"nice", K_WRAP, true, "n", " adjustment ", 0, true, false},
    {"nohup", K_WRAP, true, "", "", 0, 0, 0},
    {"timeout", K_WRAP, true, "sk", " signal kill-after ", 1, 0, 0},
    {"exec", K_WRAP, false, "a", "", 0, 0, 0},
    {"builtin", K_WRAP, false, "", "", 0, 0, 0},
    {"stdbuf", K_WRAP, true, "ioe", " input output error ", 0, 0, 0},
    {"setsid", K_WRAP, true, "", "", 0, 0, 0},
    {"time", K_WRAP, true, "fo", " format output ", 0, 0, 0},
    {"sudo", K_WRAP, true, "CDghpRrTtUu",
     " user group close-from chdir host prompt role type other-user chroot command-timeout ", 0, 0,
     true},
    {"doas", K_WRAP, false, "uC", "", 0, 0, 0},
    {"ionice", K_WRAP, false, "cnpPu", " class classdata pid pgid uid ", 0, 0, 0},
    {"taskset", K_WRAP, false, "", "", 1, 0, 0},
    {"chrt", K_WRAP, false, "TPD", " sched-runtime sched-period sched-deadline ", 1, 0, 0},
    {"setpriv", K_WRAP, false, "",
     " reuid regid ruid rgid euid egid groups inh-caps ambient-caps bounding-set securebits "
     "pdeathsig selinux-label apparmor-profile landlock-access landlock-rule ",
     0, 0, 0},
    {"unshare", K_WRAP, false, "RwSGl",
     " setgroups map-user map-group map-users map-groups propagation root wd setuid setgid "
     "load-interp ",
     0, 0, 0},
    {"nsenter", K_WRAP, false, "tSGE", " target setuid setgid env ", 0, 0, 0},
    {"chroot", K_WRAP, false, "", " userspec groups ", 1, 0, 0},
    {"strace", K_WRAP, false, "abeEIoOpPsSuUX",
     " output attach signal trace status quiet silent decode-fds env user string-limit columns ", 0,
     0, 0},
    {"ltrace", K_WRAP, false, "aAeElLnoOpsuDwx", " output ", 0, 0, 0},
    {"valgrind", K_WRAP, false, "", "", 0, 0, 0},
    {"systemd-run", K_WRAP, false, "pEuMHdS",
     " property setenv unit description slice uid gid nice working-directory machine host "
     "on-active on-boot on-startup on-unit-active on-unit-inactive on-calendar timer-property "
     "path-property socket-property ",
     0, 0, 0},
    {"unbuffer", K_WRAP, false, "", "", 0, 0, 0},
    {"rlwrap", K_WRAP, false, "abcfFhHlOpPqsStw", "", 0, 0, 0},
    {"faketime", K_WRAP, false, "mp", "", 1, 0, 0},
    {"fakeroot", K_WRAP, false, "lsi", " lib faked ", 0, 0, 0},
    {"torsocks", K_WRAP, false, "uapP", " user pass address port ", 0, 0, 0},
    {"proxychains", K_WRAP, false, "f", "", 0, 0, 0},
    {"proxychains4", K_WRAP, false, "f", "", 0, 0, 0},
    {"catchsegv", K_WRAP, false, "", "", 0, 0, 0},
    {"numactl", K_WRAP, false, "CNmPpilw",
     " cpunodebind physcpubind membind preferred interleave localalloc ", 0, 0, 0},
    {"cgexec", K_WRAP, false, "g", "", 0, 0, 0},
    {"ld.so", K_LOADER, false, 0, 0, 0, 0, 0},
    /* A copy or link made and run inside one shell string does not exist
     * when kgate looks (cp /usr/bin/curl x && ./x): the tools that would
     * make it are checked for a denied file among their operands. */
    {"cp", K_COPY, false, 0, 0, 0, 0, 0},
    {"ln", K_COPY, false, 0, 0, 0, 0, 0},
    {"link", K_COPY, false, 0, 0, 0, 0, 0},
    {"mv", K_COPY, false, 0, 0, 0, 0, 0},
    {"install", K_COPY, false, 0, 0, 0, 0, 0},
    {"rsync", K_COPY, false, 0, 0, 0, 0, 0},
    {"cat", K_COPY, false, 0, 0, 0, 0, 0},
    {"dd", K_COPY, false, 0, 0, 0, 0, 0},
};
#define NTOOLS (sizeof tools / sizeof tools[0])

/* A file on the deny list, or a known wrapper/shell found on PATH. */
typedef struct target {
    char *entry; /* as configured (deny) or the tool's name */
    char *name; /* name to match a word's basename against, or NULL */
    char *path; /* realpath of the file, NULL when there is none */
    bool multicall; /* busybox and the like: the name picks the program */
    bool ok; /* st is valid for this check */
    struct stat st;
    kind k;
} target;

struct kg_denyexec {
    char *matched; /* the entry the last check blocked on, if one */
    target *deny;
    size_t ndeny;
    target tool[NTOOLS];
    size_t ntool;
    char *path_env;
    /* One per entry of path_env, in order: a kg_os_open_dir_handle of an
     * absolute directory, DIR_BY_NAME (look it up by its name, as before:
     * relative, empty, or could not be opened), or DIR_REPEATED (the same
     * text as an earlier entry, which was already tried). */
    int *dirfd;
    char **dirreal; /* realpath of each opened directory, found on first use */
    size_t ndir;
    kg_fpcache *fp;
};

#define DIR_BY_NAME (-1)
#define DIR_REPEATED (-2)

/* ---- small helpers ----------------------------------------------------- */

static bool is_multicall_name(const char *b)
{
    return strncmp(b, "busybox", 7) == 0 || strcmp(b, "toybox") == 0;
}

/* The dynamic loader runs the program named after its options:
 * /lib64/ld-linux-x86-64.so.2 /usr/bin/curl. */
static bool is_loader_name(const char *b)
{
    return strncmp(b, "ld-linux", 8) == 0 || strncmp(b, "ld-musl-", 8) == 0 ||
           strncmp(b, "ld.so", 5) == 0 || strncmp(b, "ld64.so", 7) == 0;
}

/* Regular and executable by us: what execve would accept. */
static char *try_exec_file(const char *p, struct stat *st)
{
    struct stat s;
    if (stat(p, &s) != 0 || !S_ISREG(s.st_mode)) return NULL;
    if (access(p, X_OK) != 0) return NULL;
    char *r = realpath(p, NULL);
    if (r && st) *st = s;
    return r;
}

/* try_exec_file for the name in PATH directory k of d, open as dfd: the
 * same three questions, without walking the directory's path again for
 * every name looked up.  The realpath of a file that is not a symlink is
 * its directory's realpath and its name, and the directory's is looked up
 * once. */
static char *try_exec_at(kg_denyexec *d, size_t k, const char *dir, const char *name,
                         struct stat *st)
{
    int dfd = d->dirfd[k];
    struct stat s, l;
    if (fstatat(dfd, name, &s, 0) != 0 || !S_ISREG(s.st_mode)) return NULL;
    if (faccessat(dfd, name, X_OK, 0) != 0) return NULL;
    char *r = NULL;
    if (fstatat(dfd, name, &l, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(l.st_mode)) {
        if (!d->dirreal[k]) d->dirreal[k] = realpath(dir, NULL);
        if (d->dirreal[k]) r = kg_dx_join(d->dirreal[k], name);
    }
    if (!r) {
        char *j = kg_dx_join(dir, name);
        r = realpath(j, NULL);
        free(j);
    }
    if (r && st) *st = s;
    return r;
}

/* d (may be NULL) lends its open PATH directories when path_env is its
 * own: building a list of 100 entries looks up 100 names in every PATH
 * directory, and most of those lookups fail. */
static char *resolve_in(kg_denyexec *d, const char *cmd, const char *path_env, const char *cwd,
                        struct stat *st)
{
    if (!cmd || !*cmd) return NULL;
    if (strchr(cmd, '/')) {
        if (cmd[0] == '/' || !cwd) return try_exec_file(cmd, st);
        char *j = kg_dx_join(cwd, cmd);
        char *r = try_exec_file(j, st);
        free(j);
        return r;
    }
    bool own = d && d->dirfd && path_env && path_env == d->path_env;
    /* execvp's default when PATH is unset. */
    const char *p = path_env ? path_env : "/bin:/usr/bin";
    for (size_t k = 0;; k++) {
        const char *e = strchr(p, ':');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int fd = own && k < d->ndir ? d->dirfd[k] : DIR_BY_NAME;
        char *r = NULL;
        if (fd != DIR_REPEATED) {
            char *dir = strndup(p, len);
            if (!dir) kg_oom();
            if (fd >= 0) {
                r = try_exec_at(d, k, dir, cmd, st);
            } else {
                char *cand;
                if (len == 0) /* an empty entry is the working directory */
                    cand = kg_dx_join(cwd ? cwd : ".", cmd);
                else if (dir[0] != '/' && cwd) {
                    char *d2 = kg_dx_join(cwd, dir);
                    cand = kg_dx_join(d2, cmd);
                    free(d2);
                } else
                    cand = kg_dx_join(dir, cmd);
                r = try_exec_file(cand, st);
                free(cand);
            }
            free(dir);
        }
        if (r) return r;
        if (!e) return NULL;
        p = e + 1;
    }
}

static char *resolve(const char *cmd, const char *path_env, const char *cwd, struct stat *st)
{
    return resolve_in(NULL, cmd, path_env, cwd, st);
}

/* Opens the absolute directories of d->path_env once.  A directory that
 * cannot be opened is looked up by name as before, so a failure here
 * changes nothing but the speed. */
static void open_path_dirs(kg_denyexec *d)
{
    if (!d->path_env) return;
    size_t n = 1;
    for (const char *c = d->path_env; *c; c++) n += *c == ':';
    d->dirfd = malloc(n * sizeof *d->dirfd);
    d->dirreal = calloc(n, sizeof *d->dirreal);
    if (!d->dirfd || !d->dirreal) kg_oom();
    d->ndir = n;
    const char *p = d->path_env;
    for (size_t k = 0; k < n; k++) {
        const char *e = strchr(p, ':');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        d->dirfd[k] = DIR_BY_NAME;
        if (len > 0 && p[0] == '/') {
            /* The same text twice: execvp would try it twice and find the
             * same nothing the second time. */
            const char *q = d->path_env;
            for (size_t j = 0; j < k; j++) {
                const char *qe = strchr(q, ':');
                if ((size_t)(qe - q) == len && memcmp(q, p, len) == 0 &&
                    d->dirfd[j] != DIR_BY_NAME) {
                    d->dirfd[k] = DIR_REPEATED;
                    break;
                }
                q = qe + 1;
            }
            if (d->dirfd[k] == DIR_BY_NAME) {
                char *dir = strndup(p, len);
                if (!dir) kg_oom();
                int fd = kg_os_open_dir_handle(dir);
                free(dir);
                if (fd >= 0) d->dirfd[k] = fd;
            }
        }
        if (!e) break;
        p = e + 1;
    }
}

char *kg_exec_resolve(const char *cmd, const char *path_env, const char *cwd)
{
    return resolve(cmd, path_env, cwd, NULL);
}

/* 0: different, 1: same file, 2: a copy (same bytes), 3: cannot tell (the
 * file has the target's size but cannot be read, or changed while kgate
 * read it): a file that could be a copy is treated as one. */
static int compare_file(kg_denyexec *d, const char *path, const struct stat *st, const target *t)
{
    if (!t->ok || t->multicall) return 0;
    if (st->st_dev == t->st.st_dev && st->st_ino == t->st.st_ino) return 1;
    if (st->st_size != t->st.st_size) return 0;
    uint64_t a, b;
    if (kg_fpcache_get(d->fp, t->path, &t->st, &b) != 0) return 0; /* the target moved */
    if (kg_fpcache_get(d->fp, path, st, &a) != 0) return 3;
    if (a != b) return 0;
    return kg_fp_same_content(path, t->path) ? 2 : 0;
}

/* ---- construction ------------------------------------------------------ */

static void target_init(kg_denyexec *d, target *t, const char *entry, const char *path_env,
                        const char *cwd)
{
    t->entry = kg_dx_strdup(entry);
    t->name = strchr(entry, '/') ? NULL : kg_dx_strdup(entry);
    t->path = resolve_in(d, entry, path_env, cwd, &t->st);
    t->ok = t->path != NULL;
    t->multicall = t->path && is_multicall_name(kg_dx_base(t->path));
}

kg_denyexec *kg_denyexec_new(const kg_strv *deny, const char *path_env, const char *cache_dir,
                             kg_error *err)
{
    kg_denyexec *d = calloc(1, sizeof *d);
    if (!d) kg_oom();
    d->path_env = path_env ? kg_dx_strdup(path_env) : NULL;
    open_path_dirs(d);
    d->fp = kg_fpcache_new(cache_dir);
    size_t n = kg_strv_len(deny);
    d->deny = calloc(n ? n : 1, sizeof *d->deny);
    if (!d->deny) kg_oom();
    const char *home = getenv("HOME");
    for (size_t i = 0; i < n; i++) {
        const char *e = kg_strv_get(deny, i);
        if (!*e) {
            kg_denyexec_free(d);
            kg_err_set(err, EINVAL, "deny_exec: an entry is empty");
            return NULL;
        }
        if (e[0] == '~' && (e[1] == '/' || !e[1]) && home) {
            char *x = kg_dx_join(home, e[1] ? e + 2 : "");
            target_init(d, &d->deny[d->ndeny], x, d->path_env, NULL);
            free(x);
        } else
            target_init(d, &d->deny[d->ndeny], e, d->path_env, NULL);
        d->ndeny++;
    }
    for (size_t i = 0; i < NTOOLS; i++) {
        if (!tools[i].file) continue;
        target *t = &d->tool[d->ntool];
        target_init(d, t, tools[i].name, d->path_env, NULL);
        t->k = tools[i].k;
        if (t->path)
            d->ntool++;
        else {
            free(t->entry);
            free(t->name);
            memset(t, 0, sizeof *t);
        }
    }
    return d;
}

static void target_free(target *t)
{
    free(t->entry);
    free(t->name);
    free(t->path);
}

void kg_denyexec_free(kg_denyexec *d)
{
    if (!d) return;
    free(d->matched);
    for (size_t i = 0; i < d->ndeny; i++) target_free(&d->deny[i]);
    for (size_t i = 0; i < d->ntool; i++) target_free(&d->tool[i]);
    free(d->deny);
    for (size_t i = 0; i < d->ndir; i++) {
        if (d->dirfd[i] >= 0) close(d->dirfd[i]);
        free(d->dirreal[i]);
    }
    free(d->dirfd);
    free(d->dirreal);
    kg_fpcache_free(d->fp);
    free(d->path_env);
    free(d);
}

void kg_denyexec_forget_cache(kg_denyexec *d)
{
    if (!d) return;
    kg_fpcache_forget(d->fp);
}

/* ---- one check --------------------------------------------------------- */

typedef kg_dx_scope scope;

/* A plain command word (no wrapper, no shell) allowed once in this check
 * is allowed again with the same PATH and directory: a long script repeats
 * grep and sed hundreds of times. */
typedef struct memo {
    char *key;
    UT_hash_handle hh;
} memo;

typedef struct kg_dx_chk {
    kg_denyexec *d;
    char *reason;
    size_t reason_len;
    int depth;
    int nscripts;
    bool stdin_args; /* the next shell string gets its $1.. from xargs */
    UT_array *seen; /* dev/ino pairs of scripts already read */
    struct memo *memo; /* plain commands already found allowed */
} chk;

enum { F_XARGS = 1 };

int kg_dx_block(chk *c, const char *entry, const char *where, const char *fmt, ...)
{
    char how[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(how, sizeof how, fmt, ap);
    va_end(ap);
    if (entry && !c->d->matched) {
        c->d->matched = strdup(entry);
        if (!c->d->matched) kg_oom();
    }
    if (c->reason && c->reason_len) {
        if (entry)
            snprintf(c->reason, c->reason_len, "%s is on the deny list (%s%s%s)", entry, how,
                     *where ? " " : "", where);
        else
            snprintf(c->reason, c->reason_len, "%s%s%s", how, *where ? " " : "", where);
        kg_msg_flatten(c->reason); /* one line, whatever the command held */
    }
    return 1;
}

typedef struct word_info {
    char *path; /* resolved, NULL when not found */
    struct stat st;
    kind k;
    const tool_spec *t;
} word_info;

static const tool_spec *tool_by_name(const char *b)
{
    for (size_t i = 0; i < NTOOLS; i++)
        if (strcmp(b, tools[i].name) == 0) return &tools[i];
    return NULL;
}

static kind kind_by_name(const char *b)
{
    const tool_spec *t = tool_by_name(b);
    if (t) return t->k;
    if (is_multicall_name(b)) return K_BUSYBOX;
    if (is_loader_name(b)) return K_LOADER;
    return K_NONE;
}

/* The command word itself: its name, then the file it resolves to. */
static int check_word(chk *c, const char *word, scope sc, const char *where, word_info *wi)
{
    kg_denyexec *d = c->d;
    memset(wi, 0, sizeof *wi);
    const char *b = kg_dx_base(word);
    for (size_t i = 0; i < d->ndeny; i++) {
        const target *t = &d->deny[i];
        if ((t->name && strcmp(b, t->name) == 0) || strcmp(word, t->entry) == 0)
            return kg_dx_block(c, t->entry, where, "matched \"%s\"", word);
    }
    wi->k = kind_by_name(b);
    wi->t = tool_by_name(b);
    char *home_word = NULL;
    if (word[0] == '~' && word[1] == '/' && getenv("HOME"))
        word = home_word = kg_dx_join(getenv("HOME"), word + 2);
    wi->path = resolve_in(d, word, sc.path, sc.cwd, &wi->st);
    int r = 0;
    if (!wi->path) goto out;
    for (size_t i = 0; i < d->ndeny; i++) {
        const target *t = &d->deny[i];
        if (t->path && strcmp(wi->path, t->path) == 0 && !t->multicall) {
            r = kg_dx_block(c, t->entry, where, "matched \"%s\"", word);
            goto out;
        }
        int m = compare_file(d, wi->path, &wi->st, t);
        if (m == 1) {
            r = kg_dx_block(c, t->entry, where, "%s is the same file as %s", word, t->path);
            goto out;
        }
        if (m == 2) {
            r = kg_dx_block(c, t->entry, where, "%s is a copy of %s", word, t->path);
            goto out;
        }
        if (m == 3) {
            r = kg_dx_block(c, t->entry, where,
                            "%s has the size of %s and cannot be compared with it "
                            "(unreadable, or changed while kgate read it)",
                            word, t->path);
            goto out;
        }
    }
    /* A renamed wrapper or shell is still that wrapper or shell. */
    for (size_t i = 0; wi->k == K_NONE && i < d->ntool; i++)
        if (compare_file(d, wi->path, &wi->st, &d->tool[i])) {
            wi->k = d->tool[i].k;
            wi->t = tool_by_name(d->tool[i].entry);
        }
    if (wi->k == K_NONE && is_loader_name(kg_dx_base(wi->path))) wi->k = K_LOADER;
out:
    free(home_word);
    return r;
}

int kg_dx_check_name(chk *c, const char *word, scope sc, const char *where)
{
    word_info wi;
    int r = check_word(c, word, sc, where, &wi);
    free(wi.path);
    return r;
}

/* Whether the file word names (relative to dir) is a denied file, the same
 * file under another name, or a copy of one: 1 (blocked) if so.  tool is
 * what would copy or read it ("cp", "<"). */
static int check_source_at(chk *c, const char *tool, const char *word, const char *dir,
                           const char *where)
{
    kg_denyexec *d = c->d;
    char *p = word[0] == '/' ? kg_dx_strdup(word) : kg_dx_join(dir ? dir : ".", word);
    struct stat st;
    int r = 0;
    if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) goto out;
    for (size_t i = 0; i < d->ndeny && !r; i++) {
        const target *t = &d->deny[i];
        int m = compare_file(d, p, &st, t);
        if (m == 1 && strcmp(p, t->path) == 0)
            r = kg_dx_block(c, t->entry, where, "%s of %s would let it run under another name",
                            tool, word);
        else if (m == 1 || m == 2)
            r = kg_dx_block(c, t->entry, where,
                            "%s of %s, %s %s, would let it run under another name", tool, word,
                            m == 1 ? "the same file as" : "a copy of", t->path);
        else if (m == 3)
            r = kg_dx_block(c, t->entry, where,
                            "%s of %s, which has the size of %s and cannot be compared "
                            "with it",
                            tool, word, t->path);
    }
out:
    free(p);
    return r;
}

int kg_dx_check_source(chk *c, const char *tool, const char *word, scope sc, const char *where)
{
    char *home_word = NULL;
    if (word[0] == '~' && word[1] == '/' && getenv("HOME"))
        word = home_word = kg_dx_join(getenv("HOME"), word + 2);
    int r = check_source_at(c, tool, word, sc.cwd, where);
    free(home_word);
    return r;
}

/* cp, ln, mv, install, rsync, cat: every operand (a source, or a target
 * that would be overwritten); dd: if=FILE.  An option's value is checked
 * too, harmlessly: it does not name a denied regular file.  The target of
 * a relative symbolic link is relative to the link's directory: for ln it
 * is looked up there as well. */
static int check_copy(chk *c, char **w, size_t n, scope sc, const char *where)
{
    const char *tool = kg_dx_base(w[0]);
    bool is_dd = strcmp(tool, "dd") == 0, is_ln = strcmp(tool, "ln") == 0;
    bool opts = true;
    size_t last = 0;
    for (size_t i = 1; i < n; i++)
        if (w[i][0] != '-' || !opts) last = i;
    int r = 0;
    for (size_t i = 1; i < n && !r; i++) {
        const char *a = w[i];
        if (opts && strcmp(a, "--") == 0) {
            opts = false;
            continue;
        }
        if (is_dd) {
            if (strncmp(a, "if=", 3) == 0 && a[3])
                r = kg_dx_check_source(c, tool, a + 3, sc, where);
            continue;
        }
        if (opts && a[0] == '-' && a[1]) continue;
        r = kg_dx_check_source(c, tool, a, sc, where);
        if (!r && is_ln && a[0] != '/' && last && i != last) {
            /* ln -s TARGET NAME: TARGET is read from NAME's directory, or
             * from inside NAME when NAME is a directory. */
            char *ld = w[last][0] == '/' ? kg_dx_strdup(w[last])
                                         : kg_dx_join(sc.cwd ? sc.cwd : ".", w[last]);
            struct stat st;
            if (stat(ld, &st) == 0 && S_ISDIR(st.st_mode)) {
                r = check_source_at(c, tool, a, ld, where);
            } else {
                char *slash = strrchr(ld, '/');
                if (slash) *slash = '\0';
                r = check_source_at(c, tool, a, slash ? (*ld ? ld : "/") : ".", where);
            }
            free(ld);
        }
    }
    return r;
}

bool kg_dx_enter(chk *c)
{
    if (c->depth >= MAX_DEPTH) return false;
    c->depth++;
    return true;
}

void kg_dx_leave(chk *c) { c->depth--; }

bool kg_dx_take_stdin_args(chk *c)
{
    bool b = c->stdin_args;
    c->stdin_args = false;
    return b;
}

bool kg_dx_is_cd(const char *name) { return kind_by_name(name) == K_CD; }

static bool seen_file(chk *c, const struct stat *st)
{
    for (size_t i = 0; i < utarray_len(c->seen); i++) {
        const uint64_t *p = (const uint64_t *)utarray_eltptr(c->seen, (unsigned)i);
        if (p[0] == (uint64_t)st->st_dev && p[1] == (uint64_t)st->st_ino) return true;
    }
    return false;
}

static void mark_seen(chk *c, const struct stat *st)
{
    uint64_t p[2] = {(uint64_t)st->st_dev, (uint64_t)st->st_ino};
    utarray_push_back(c->seen, &p);
}

/* Reads at most max bytes of path; *len gets the count. */
static char *read_head(const char *path, size_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    char *buf = malloc(max + 1);
    if (!buf) kg_oom();
    size_t got = 0;
    while (got < max) {
        ssize_t r = read(fd, buf + got, max - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    *len = got;
    return buf;
}

/* A file a shell will read as commands (sh FILE, . FILE, a #!/bin/sh
 * script).  Larger files are not read: see docs/deny-exec.md. */
static int check_shell_file(chk *c, const char *path, const struct stat *st, scope sc,
                            const char *shown, char **pos, size_t npos)
{
    if (seen_file(c, st)) return 0;
    mark_seen(c, st);
    if (st->st_size > SCRIPT_MAX) return 0;
    if (++c->nscripts > MAX_SCRIPTS)
        return kg_dx_block(c, NULL, "", "too many nested scripts to check (at %s)", shown);
    size_t len;
    char *buf = read_head(path, SCRIPT_MAX, &len);
    if (!buf) return 0; /* unreadable: the shell cannot read it either */
    char where[PATH_MAX + 32];
    snprintf(where, sizeof where, "in script %s", shown);
    int r = kg_dx_check_string(&dx_visitor, c, buf, len, sc, where, pos, npos);
    free(buf);
    return r;
}

/* A file executed directly.  The kernel runs "#!" lines; execvp hands a
 * file with neither "#!" nor a binary format to /bin/sh. */
static int check_exec_file(chk *c, const word_info *wi, char **w, size_t n, scope sc,
                           const char *where)
{
    size_t len;
    char *head = read_head(wi->path, 512, &len);
    if (!head) return 0;
    int r = 0;
    if (len >= 4 && memcmp(head, "\177ELF", 4) == 0) goto out;
    if (len >= 2 && head[0] == '#' && head[1] == '!') {
        char *nl = memchr(head, '\n', len);
        if (nl) *nl = '\0';
        char *p = head + 2;
        while (*p == ' ' || *p == '\t') p++;
        char *interp = p;
        while (*p && *p != ' ' && *p != '\t') p++;
        char *arg = NULL;
        if (*p) {
            *p++ = '\0';
            while (*p == ' ' || *p == '\t') p++;
            char *e = p + strlen(p);
            while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) *--e = '\0';
            if (*p) arg = p;
        }
        if (!*interp) goto out;
        /* The argv the kernel builds: interpreter, its one argument, the
         * script, then the original arguments. */
        char **v = calloc(n + 3, sizeof *v);
        if (!v) kg_oom();
        size_t k = 0;
        v[k++] = interp;
        if (arg) v[k++] = arg;
        v[k++] = wi->path; /* the kernel passes the path it opened */
        for (size_t i = 1; i < n; i++) v[k++] = w[i];
        char wh[PATH_MAX + 64];
        snprintf(wh, sizeof wh, "in the #! line of %s%s%s", w[0], *where ? " " : "", where);
        r = kg_dx_check_argv(c, v, k, sc, wh, 0);
        free(v);
        goto out;
    }
    if (memchr(head, '\0', len)) goto out; /* some other binary */
    r = check_shell_file(c, wi->path, &wi->st, sc, w[0], w + 1, n - 1);
out:
    free(head);
    return r;
}

/* ---- wrappers, shells and the rest of the argv walk --------------------- */

/* Skips options the way getopt with a leading '+' does (stop at the first
 * operand).  short_arg: letters that take a value; long_arg: long options
 * that take one (also abbreviated, as GNU getopt allows).  Getting
 * this wrong in the direction of "no value" only costs a false positive. */
/* True when the long option a (without "--", len l) abbreviates a name in
 * the space-separated list. */
static bool long_takes(const char *list, const char *a, size_t l)
{
    if (!list || l == 0) return false;
    for (const char *p = list; (p = strchr(p, ' ')) != NULL;) {
        p++;
        if (!*p) break;
        const char *e = strchr(p, ' ');
        size_t nl = e ? (size_t)(e - p) : strlen(p);
        if (l <= nl && strncmp(p, a, l) == 0) return true;
        p += nl;
    }
    return false;
}

static size_t skip_opts(char **w, size_t n, size_t i, const char *short_arg, const char *long_arg,
                        bool digits_are_opts)
{
    while (i < n) {
        const char *a = w[i];
        if (strcmp(a, "--") == 0) return i + 1;
        if (a[0] != '-' || a[1] == '\0') return i;
        i++;
        if (a[1] == '-') {
            if (!strchr(a, '=') && long_takes(long_arg, a + 2, strlen(a + 2))) i++;
            continue;
        }
        if (digits_are_opts && a[1] >= '0' && a[1] <= '9') continue;
        for (const char *p = a + 1; *p; p++)
            if (short_arg && strchr(short_arg, *p)) {
                if (!p[1]) i++;
                break;
            }
    }
    return i;
}

static bool has_short(char **w, size_t from, size_t to, char letter)
{
    for (size_t i = from; i < to; i++)
        if (w[i][0] == '-' && w[i][1] != '-' && strchr(w[i] + 1, letter)) return true;
    return false;
}

/* The command a wrapper runs starts at w[i]. */
static int inner(chk *c, char **w, size_t n, size_t i, scope sc, const char *tool,
                 const char *where, int flags)
{
    if (i >= n) {
        if (flags & F_XARGS)
            return kg_dx_block(c, NULL, where, "xargs would run %s with a command read from stdin",
                               tool);
        return 0;
    }
    char wh[PATH_MAX + 64];
    if (*where)
        snprintf(wh, sizeof wh, "run by %s %s", tool, where);
    else
        snprintf(wh, sizeof wh, "run by %s", tool);
    return kg_dx_check_argv(c, w + i, n - i, sc, wh, flags);
}

static char *join_words(char **w, size_t n)
{
    UT_string *s;
    utstring_new(s);
    for (size_t i = 0; i < n; i++) utstring_printf(s, "%s%s", i ? " " : "", w[i]);
    char *r = kg_dx_strdup(utstring_body(s));
    utstring_free(s);
    return r;
}

static int shell_string(chk *c, const char *str, scope sc, const char *what, const char *where,
                        char **pos, size_t npos)
{
    char wh[PATH_MAX + 64];
    if (*where)
        snprintf(wh, sizeof wh, "in the %s string %s", what, where);
    else
        snprintf(wh, sizeof wh, "in the %s string", what);
    return kg_dx_check_string(&dx_visitor, c, str, strlen(str), sc, wh, pos, npos);
}

/* sh [options] [-c string [name [arg...]] | file [arg...]] */
static int check_shell(chk *c, char **w, size_t n, scope sc, const char *where, int flags)
{
    bool cmode = false;
    size_t i = 1;
    while (i < n) {
        const char *a = w[i];
        if (strcmp(a, "--") == 0 || strcmp(a, "-") == 0) {
            i++;
            break;
        }
        if (a[0] == '-' && a[1] == '-') {
            i += (strcmp(a, "--rcfile") == 0 || strcmp(a, "--init-file") == 0) ? 2 : 1;
            continue;
        }
        if ((a[0] != '-' && a[0] != '+') || !a[1]) break;
        i++;
        for (const char *p = a + 1; *p; p++) {
            if (*p == 'c' && a[0] == '-') cmode = true;
            if (*p == 'o' || *p == 'O') i++; /* -o option-name */
        }
    }
    const char *sh = kg_dx_base(w[0]);
    if (cmode) {
        if (i >= n)
            return (flags & F_XARGS)
                       ? kg_dx_block(c, NULL, where,
                                     "xargs would pass %s -c a string read from stdin", sh)
                       : 0;
        char what[64];
        snprintf(what, sizeof what, "%s -c", sh);
        c->stdin_args = (flags & F_XARGS) != 0;
        return shell_string(c, w[i], sc, what, where, w + i + 1, n - i - 1);
    }
    if (i >= n)
        return (flags & F_XARGS)
                   ? kg_dx_block(c, NULL, where, "xargs would run %s on a file named on stdin", sh)
                   : 0;
    /* sh FILE: the file is read as commands whatever its first line says;
     * bash looks a name without a slash up in PATH when it is not here. */
    struct stat st;
    char *j = w[i][0] == '/' ? kg_dx_strdup(w[i]) : kg_dx_join(sc.cwd ? sc.cwd : ".", w[i]);
    int r = 0;
    if (stat(j, &st) == 0 && S_ISREG(st.st_mode))
        r = check_shell_file(c, j, &st, sc, w[i], w + i, n - i);
    else if (!strchr(w[i], '/')) {
        char *p = resolve_in(c->d, w[i], sc.path, sc.cwd, &st);
        if (p) r = check_shell_file(c, p, &st, sc, w[i], w + i, n - i);
        free(p);
    }
    free(j);
    return r;
}

static int check_find(chk *c, char **w, size_t n, scope sc, const char *where)
{
    for (size_t i = 1; i < n; i++) {
        const char *a = w[i];
        if (strcmp(a, "-exec") && strcmp(a, "-execdir") && strcmp(a, "-ok") && strcmp(a, "-okdir"))
            continue;
        size_t j = i + 1, k = j;
        while (k < n && strcmp(w[k], ";") != 0 &&
               !(strcmp(w[k], "+") == 0 && k > j && strcmp(w[k - 1], "{}") == 0))
            k++;
        char tool[32];
        snprintf(tool, sizeof tool, "find %s", a);
        int r = k > j ? inner(c, w, k, j, sc, tool, where, 0) : 0;
        if (r) return r;
        i = k;
    }
    return 0;
}

/* One command of a kind (word_info.k) that runs another, as the checks
 * below see it: the words, where they are looked up, and the command's
 * own name (tool) for the reason. */
typedef struct cmd_view {
    chk *c;
    char **w;
    size_t n;
    scope sc;
    const char *where;
    int flags;
    const char *tool;
    const word_info *wi;
} cmd_view;

static int inner_at(const cmd_view *v, size_t i, scope sc, int flags)
{
    return inner(v->c, v->w, v->n, i, sc, v->tool, v->where, flags);
}

static int shell_at(const cmd_view *v, const char *str, scope sc, const char *what)
{
    return shell_string(v->c, str, sc, what, v->where, NULL, 0);
}

/* env's one option: the letter (u, C, S or P) and its value, NULL when
 * the option takes none or it is missing; *i moves past what was read. */
static char env_option(char **w, size_t n, size_t *i, const char **val)
{
    const char *a = w[*i];
    char opt = 0;
    *val = NULL;
    if (a[1] == '-') {
        /* GNU accepts any unambiguous prefix of a long option. */
        const char *eq = strchr(a, '=');
        size_t l = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
        if (l >= 2 && strncmp("chdir", a + 2, l) == 0)
            opt = 'C';
        else if (l >= 2 && strncmp("split-string", a + 2, l) == 0)
            opt = 'S';
        else if (l >= 2 && strncmp("unset", a + 2, l) == 0)
            opt = 'u';
        if (opt) *val = eq ? eq + 1 : (*i + 1 < n ? w[++*i] : NULL);
    } else {
        for (const char *p = a + 1; *p; p++) {
            if (*p == 'u' || *p == 'C' || *p == 'S' || *p == 'P') {
                opt = *p;
                *val = p[1] ? p + 1 : (*i + 1 < n ? w[++*i] : NULL);
                break;
            }
        }
    }
    ++*i;
    return opt;
}

/* env [-C DIR] [-P PATH] [-S STRING] [NAME=VALUE]... COMMAND: walked by
 * hand, since -C and -S change what runs, not just how. */
static int check_env(const cmd_view *v)
{
    char **w = v->w;
    size_t n = v->n, i = 1;
    scope in = v->sc;
    kg_autofree char *cwd_own = NULL;
    kg_autofree char *path_own = NULL;
    int r = 0;
    while (i < n && !r) {
        const char *a = w[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(a, "-") == 0) {
            i++;
            continue;
        } /* "env -" is env -i */
        if (a[0] != '-' || !a[1]) break;
        const char *val = NULL;
        char opt = env_option(w, n, &i, &val);
        if (!val) continue;
        if (opt == 'C') {
            /* Joined before the old one is freed: a second -C is
             * relative to the first (found by fuzz-denyexec). */
            char *nc = val[0] == '/' ? kg_dx_strdup(val) : kg_dx_join(in.cwd ? in.cwd : ".", val);
            free(cwd_own);
            cwd_own = nc;
            in.cwd = cwd_own;
        } else if (opt == 'P') {
            free(path_own);
            path_own = kg_dx_strdup(val);
            in.path = path_own;
        } else if (opt == 'S') {
            r = shell_string(v->c, val, in, "env -S", v->where, NULL, 0);
        }
    }
    for (; i < n && !r && strchr(w[i], '='); i++) {
        if (strncmp(w[i], "PATH=", 5) == 0) {
            free(path_own);
            path_own = kg_dx_strdup(w[i] + 5);
            in.path = path_own;
        }
    }
    if (!r) r = inner_at(v, i, in, v->flags);
    return r;
}

static int check_wrap(const cmd_view *v)
{
    const tool_spec *t = v->wi->t;
    size_t i = skip_opts(v->w, v->n, 1, t->shorts, t->longs, t->digits) + t->npos;
    while (t->assigns && i < v->n && strchr(v->w[i], '=')) i++;
    return inner_at(v, i, v->sc, v->flags);
}

static int check_xargs(const cmd_view *v)
{
    size_t i = skip_opts(v->w, v->n, 1, v->wi->t->shorts, v->wi->t->longs, false);
    return i < v->n ? inner_at(v, i, v->sc, v->flags | F_XARGS) : 0; /* echo */
}

static int check_command(const cmd_view *v)
{
    size_t i = skip_opts(v->w, v->n, 1, NULL, NULL, false);
    /* command -v / -V only look the name up. */
    if (has_short(v->w, 1, i, 'v') || has_short(v->w, 1, i, 'V')) return 0;
    return inner_at(v, i, v->sc, v->flags);
}

/* su and runuser take -c anywhere (GNU getopt permutes). */
static int check_cstring(const cmd_view *v)
{
    char **w = v->w;
    size_t n = v->n, i = 1;
    int r = 0;
    char what[64] = "";
    snprintf(what, sizeof what, "%s -c", v->tool);
    for (i = 1; i < n && !r; i++) {
        const char *val = NULL;
        if (strcmp(w[i], "--") == 0) break;
        if (strcmp(w[i], "-c") == 0 || strcmp(w[i], "--command") == 0)
            val = i + 1 < n ? w[++i] : NULL;
        else if (strncmp(w[i], "--command=", 10) == 0)
            val = w[i] + 10;
        else if (w[i][0] == '-' && w[i][1] != '-' && strchr(w[i], 'c')) {
            const char *cp = strchr(w[i], 'c');
            val = cp[1] ? cp + 1 : (i + 1 < n ? w[++i] : NULL);
        }
        if (val) r = shell_at(v, val, v->sc, what);
    }
    /* runuser -u USER COMMAND... */
    const tool_spec *t = v->wi->t;
    if (!r && strcmp(t ? t->name : "", "runuser") == 0 && has_short(w, 1, n, 'u')) {
        i = skip_opts(w, n, 1, t->shorts, t->longs, false);
        r = inner_at(v, i, v->sc, v->flags);
    }
    return r;
}

static int check_loader(const cmd_view *v)
{
    size_t i = skip_opts(
        v->w, v->n, 1, NULL,
        " library-path preload argv0 audit inhibit-rpath glibc-hwcaps-prepend glibc-hwcaps-mask ",
        false);
    return inner_at(v, i, v->sc, v->flags);
}

static int check_flock(const cmd_view *v)
{
    char **w = v->w;
    size_t n = v->n;
    const tool_spec *t = v->wi->t ? v->wi->t : tool_by_name("flock");
    size_t i = skip_opts(w, n, 1, t->shorts, t->longs, false) + 1; /* after the lock file */
    if (i < n && (strcmp(w[i], "-c") == 0 || strcmp(w[i], "--command") == 0))
        return i + 1 < n ? shell_at(v, w[i + 1], v->sc, "flock -c") : 0;
    return inner_at(v, skip_opts(w, n, i, t->shorts, t->longs, false), v->sc, v->flags);
}

static int check_watch(const cmd_view *v)
{
    const tool_spec *t = v->wi->t ? v->wi->t : tool_by_name("watch");
    size_t i = skip_opts(v->w, v->n, 1, t->shorts, t->longs, false);
    if (has_short(v->w, 1, i, 'x')) return inner_at(v, i, v->sc, v->flags);
    if (i >= v->n) return 0;
    kg_autofree char *s = join_words(v->w + i, v->n - i); /* watch runs sh -c */
    return shell_at(v, s, v->sc, "watch");
}

static int check_eval(const cmd_view *v)
{
    if (v->n <= 1) return 0;
    kg_autofree char *s = join_words(v->w + 1, v->n - 1);
    return shell_at(v, s, v->sc, "eval");
}

static int check_alias(const cmd_view *v)
{
    int r = 0;
    for (size_t i = 1; i < v->n && !r; i++) {
        const char *eq = strchr(v->w[i], '=');
        if (eq) r = shell_at(v, eq + 1, v->sc, "alias");
    }
    return r;
}

/* The file ". FILE" or "source FILE" reads: found on PATH when it has no
 * slash, or beside us; it does not need the execute bit.  NULL: none. */
static char *sourced_file(chk *c, const char *name, scope sc, struct stat *st)
{
    char *p = NULL;
    if (!strchr(name, '/')) {
        p = resolve_in(c->d, name, sc.path, sc.cwd, st);
        if (p) return p;
    }
    char *j = name[0] == '/' ? kg_dx_strdup(name) : kg_dx_join(sc.cwd ? sc.cwd : ".", name);
    if (stat(j, st) == 0 && S_ISREG(st->st_mode)) return j;
    free(j);
    return NULL;
}

static int check_source(const cmd_view *v)
{
    if (v->n <= 1) return 0;
    struct stat st;
    kg_autofree char *p = sourced_file(v->c, v->w[1], v->sc, &st);
    return p ? check_shell_file(v->c, p, &st, v->sc, v->w[1], v->w + 1, v->n - 1) : 0;
}

/* What runs inside a command of a kind that runs others: one check each. */
static int check_by_kind(const cmd_view *v)
{
    switch (v->wi->k) {
    case K_NONE: return 0;
    case K_SHELL: return check_shell(v->c, v->w, v->n, v->sc, v->where, v->flags);
    case K_ENV: return check_env(v);
    case K_WRAP: return check_wrap(v);
    case K_XARGS: return check_xargs(v);
    case K_COMMAND: return check_command(v);
    case K_CSTRING: return check_cstring(v);
    case K_LOADER: return check_loader(v);
    case K_FLOCK: return check_flock(v);
    case K_WATCH: return check_watch(v);
    case K_FIND: return check_find(v->c, v->w, v->n, v->sc, v->where);
    /* busybox APPLET args: the applet is chosen by name. */
    case K_BUSYBOX: return v->n > 1 && v->w[1][0] != '-' ? inner_at(v, 1, v->sc, v->flags) : 0;
    case K_EVAL: return check_eval(v);
    case K_TRAP:
        return v->n > 2 && strcmp(v->w[1], "-") != 0 && v->w[1][0] != '-'
                   ? shell_at(v, v->w[1], v->sc, "trap")
                   : 0;
    case K_ALIAS: return check_alias(v);
    case K_SOURCE: return check_source(v);
    case K_CD: return 0;
    case K_COPY: return check_copy(v->c, v->w, v->n, v->sc, v->where);
    }
    return 0;
}

int kg_dx_check_argv(chk *c, char **w, size_t n, scope sc, const char *where, int flags)
{
    if (n == 0) return 0;
    if (++c->depth > MAX_DEPTH) {
        c->depth--;
        return kg_dx_block(c, NULL, where, "commands nested too deeply to check");
    }
    char *key = NULL;
    if (asprintf(&key, "%s\x01%s\x01%s", sc.path ? sc.path : "", sc.cwd ? sc.cwd : "", w[0]) < 0)
        kg_oom();
    memo *m;
    HASH_FIND_STR(c->memo, key, m);
    if (m) {
        free(key);
        c->depth--;
        return 0;
    }
    word_info wi = {0};
    int r = check_word(c, w[0], sc, where, &wi);
    /* Whatever its name says, a script is also read (fakeroot, for one,
     * is a shell script that runs its arguments). */
    if (!r && wi.path) r = check_exec_file(c, &wi, w, n, sc, where);
    if (!r) {
        cmd_view v = {.c = c,
                      .w = w,
                      .n = n,
                      .sc = sc,
                      .where = where,
                      .flags = flags,
                      .tool = kg_dx_base(w[0]),
                      .wi = &wi};
        r = check_by_kind(&v);
    }
    if (r == 0 && wi.k == K_NONE) {
        m = calloc(1, sizeof *m);
        if (!m) kg_oom();
        m->key = key;
        key = NULL;
        HASH_ADD_KEYPTR(hh, c->memo, m->key, strlen(m->key), m);
    }
    free(key);
    free(wi.path);
    c->depth--;
    return r;
}

int kg_denyexec_check(kg_denyexec *d, const char *const *argv, size_t argc, const char *cwd,
                      char *reason, size_t reason_len, kg_error *err)
{
    if (reason && reason_len) reason[0] = '\0';
    if (!d || (!argv && argc)) return kg_err_set(err, EINVAL, "deny list: no command");
    free(d->matched);
    d->matched = NULL;
    /* Each deny entry is looked at once per check: a file replaced since
     * the list was built is compared as it is now. */
    for (size_t i = 0; i < d->ndeny; i++) {
        target *t = &d->deny[i];
        t->ok = t->path && stat(t->path, &t->st) == 0 && S_ISREG(t->st.st_mode);
    }
    chk c = {.d = d, .reason = reason, .reason_len = reason_len};
    static const UT_icd pair_icd = {2 * sizeof(uint64_t), NULL, NULL, NULL};
    utarray_new(c.seen, &pair_icd);
    char **v = calloc(argc + 1, sizeof *v);
    if (!v) kg_oom();
    for (size_t i = 0; i < argc; i++) v[i] = (char *)argv[i];
    scope sc = {.path = d->path_env, .cwd = cwd};
    int r = kg_dx_check_argv(&c, v, argc, sc, "", 0);
    free(v);
    utarray_free(c.seen);
    memo *m, *tmp;
    HASH_ITER(hh, c.memo, m, tmp)
    {
        HASH_DEL(c.memo, m);
        free(m->key);
        free(m);
    }
    kg_fpcache_save(d->fp);
    return r;
}

const char *kg_denyexec_matched(const kg_denyexec *d) { return d ? d->matched : NULL; }
