/* boxhome.c: the files the core makes for one run, for the box (boxhome.h).
 *
 * Why a .gitconfig of the box's own.  The box hides the home, and with it
 * ~/.gitconfig: git commit inside then stops at "Author identity unknown",
 * and committing ends an agent's every task.  Showing the user's file
 * whole would show what it may hold beside the identity: a credential
 * helper, url.<base>.insteadOf with a token in the URL, includes of other
 * files, core.sshCommand, aliases that run programs.  So the box gets a
 * file written here, with the keys of one allow list (allowed[] below,
 * listed in docs/escapes.md and kgate.yaml(5)) copied from the user's
 * global files, read as text by the small parser below: git is not run on
 * them, so nothing they name can run.  Left out on purpose: includes (the
 * included files are not read), anything in a section with a subsection,
 * signing (the keys are hidden, so commit.gpgSign would only make every
 * commit fail), and every key that names a program or a credential.
 *
 * Why an excludes file.  The placeholders (protected.c) are untracked
 * files in the project while the run lasts: git add -A would commit them,
 * and after the run the user's git status would show them deleted.  The
 * box's .gitconfig names an excludes file that lists each one the run
 * holds, anchored at the top ("/.envrc"), after the user's own global
 * excludes, so git status, add -A, add . and stash -u leave them out.
 * Tracked files are not affected by excludes, and git add -f still adds
 * one (an agent that insists gets an empty file in its commit; the host's
 * git check after the run is the backstop for what matters there). */
#include "boxhome.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "oom.h"
#include "paths.h"

/* The keys the box may have, as git writes them (the lookup ignores
 * case).  Each is who the user is, or how git shows and merges text: none
 * names a program, a file to read, a host or a credential. */
static const char *const allowed[] = {
    "user.name",
    "user.email",
    "author.name",
    "author.email",
    "committer.name",
    "committer.email",
    "init.defaultBranch",
    "core.autocrlf",
    "core.eol",
    "core.safecrlf",
    "core.quotePath",
    "core.whitespace",
    "core.ignoreCase",
    "core.precomposeUnicode",
    "pull.rebase",
    "pull.ff",
    "push.default",
    "push.autoSetupRemote",
    "merge.conflictStyle",
    "merge.ff",
    "diff.algorithm",
    "diff.renames",
    "diff.colorMoved",
    "rebase.autoStash",
    "rebase.autoSquash",
    "rebase.updateRefs",
    "fetch.prune",
    "commit.verbose",
    "color.ui",
    "log.date",
    "status.short",
    "status.branch",
    "rerere.enabled",
    "advice.detachedHead",
    NULL,
};

/* Read from the user's files to find their excludes, never copied. */
#define EXCLUDES_KEY "core.excludesfile"

/* A config file larger than this is not a hand-written one: read no
 * further (what was read is used). */
#define MAX_CONFIG (1024 * 1024)

int kg_boxgit_allowed(const char *key)
{
    for (size_t i = 0; allowed[i]; i++)
        if (strcasecmp(key, allowed[i]) == 0) return 1;
    return 0;
}

/* ---- the parser: git's config syntax, as much as the list needs ---------- */

typedef struct scan {
    const char *p, *end;
    char section[64]; /* lower case; "" inside a section with a subsection */
} scan;

static void skip_line(scan *s)
{
    while (s->p < s->end && *s->p != '\n') s->p++;
}

/* [section], [section "sub"], [section.sub]: only the first kind can
 * hold an allowed key. */
static void read_header(scan *s)
{
    size_t n = 0;
    int sub = 0;
    s->p++; /* '[' */
    while (s->p < s->end && (isalnum((unsigned char)*s->p) || *s->p == '-')) {
        if (n + 1 < sizeof s->section) s->section[n++] = (char)tolower((unsigned char)*s->p);
        s->p++;
    }
    s->section[n] = '\0';
    if (s->p < s->end && *s->p != ']') sub = 1; /* a subsection, or not a header */
    if (sub || n == 0) s->section[0] = '\0';
    skip_line(s);
}

/* The escape after a backslash; -1 for one git refuses or a continued
 * line (a value that spans lines is not taken). */
static int unescape(char c)
{
    switch (c) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'b': return '\b';
    case '"': return '"';
    case '\\': return '\\';
    default: return -1;
    }
}

/* The value after '=', to the end of the line: quotes joined, escapes
 * read, a comment outside quotes dropped, trailing blanks outside quotes
 * trimmed.  NULL when it cannot be taken whole. */
static char *read_value(scan *s)
{
    size_t cap = 64, n = 0, keep = 0;
    char *v = malloc(cap);
    int quoted = 0, ok = 1;
    if (!v) kg_oom();
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t')) s->p++;
    for (; s->p < s->end && *s->p != '\n'; s->p++) {
        int c = (unsigned char)*s->p;
        if (!quoted && (c == '#' || c == ';')) break;
        if (c == '"') {
            quoted = !quoted;
            keep = n;
            continue;
        }
        if (c == '\\') {
            c = s->p + 1 < s->end ? unescape(s->p[1]) : -1;
            if (c < 0) ok = 0;
            s->p++;
        } else if (c < 0x20 && c != '\t') {
            ok = 0; /* a carriage return, a NUL: not a value to copy */
        }
        if (n + 2 > cap && !(v = realloc(v, cap *= 2))) kg_oom();
        v[n++] = (char)c;
        if (quoted || (c != ' ' && c != '\t') || s->p[-1] == '\\') keep = n;
    }
    skip_line(s);
    v[keep] = '\0';
    if (quoted || !ok) {
        free(v);
        return NULL;
    }
    return v;
}

/* name [= value] in the current section; a bare name is "true". */
static void read_entry(scan *s, kg_strv *kv)
{
    char name[64], key[160];
    size_t n = 0;
    while (s->p < s->end && (isalnum((unsigned char)*s->p) || *s->p == '-')) {
        if (n + 1 < sizeof name) name[n++] = *s->p;
        s->p++;
    }
    name[n] = '\0';
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t')) s->p++;
    snprintf(key, sizeof key, "%s.%s", s->section, name);
    for (char *k = key; *k; k++) *k = (char)tolower((unsigned char)*k);
    int wanted = s->section[0] && (kg_boxgit_allowed(key) || strcmp(key, EXCLUDES_KEY) == 0);
    char *value = NULL;
    if (s->p < s->end && *s->p == '=') {
        s->p++;
        value = wanted ? read_value(s) : NULL;
    } else if (wanted && (s->p >= s->end || strchr("\n#;", *s->p))) {
        value = strdup("true");
        if (!value) kg_oom();
    }
    skip_line(s);
    if (!value) return;
    kg_strv_push(kv, key);
    kg_strv_push(kv, value);
    free(value);
}

void kg_boxgit_scan(const char *text, size_t len, kg_strv *kv)
{
    scan s = {.p = text, .end = text + len, .section = ""};
    while (s.p < s.end) {
        unsigned char c = (unsigned char)*s.p;
        if (isspace(c)) {
            s.p++;
        } else if (c == '[') {
            read_header(&s);
        } else if (isalpha(c)) {
            read_entry(&s, kv);
        } else {
            skip_line(&s); /* a comment, or a line git would refuse */
        }
    }
}

/* ---- the box's .gitconfig ------------------------------------------------ */

/* The last value of key in kv, or NULL. */
static const char *last_value(const kg_strv *kv, const char *key)
{
    const char *v = NULL;
    for (size_t i = 0; i + 1 < kg_strv_len(kv); i += 2)
        if (strcmp(kg_strv_get(kv, i), key) == 0) v = kg_strv_get(kv, i + 1);
    return v;
}

/* value quoted for git: every byte as it is but the two git escapes, and
 * the escapes git reads back (read_value refused any other control). */
static void put_value(FILE *f, const char *v)
{
    fputc('"', f);
    for (; *v; v++) {
        if (*v == '"' || *v == '\\')
            fprintf(f, "\\%c", *v);
        else if (*v == '\n')
            fputs("\\n", f);
        else if (*v == '\t')
            fputs("\\t", f);
        else if (*v == '\b')
            fputs("\\b", f);
        else
            fputc(*v, f);
    }
    fputc('"', f);
}

char *kg_boxgit_render(const kg_strv *kv, const char *excludes)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) kg_oom();
    fputs("# Made by kgate for this run: the allowed keys of your global git\n"
          "# config (kgate.yaml(5)), and the excludes that keep kgate's\n"
          "# placeholders out of git add.  Thrown away when the run ends.\n",
          f);
    const char *last = NULL; /* the section written last */
    for (size_t i = 0; allowed[i]; i++) {
        char key[64];
        snprintf(key, sizeof key, "%s", allowed[i]);
        for (char *k = key; *k; k++) *k = (char)tolower((unsigned char)*k);
        const char *v = last_value(kv, key);
        if (!v) continue;
        const char *dot = strchr(allowed[i], '.');
        int slen = (int)(dot - allowed[i]);
        if (!last || strncmp(last, allowed[i], (size_t)slen + 1) != 0)
            fprintf(f, "[%.*s]\n", slen, allowed[i]);
        last = allowed[i];
        fprintf(f, "\t%s = ", dot + 1);
        put_value(f, v);
        fputc('\n', f);
    }
    if (excludes) {
        fputs(last && strncmp(last, "core.", 5) == 0 ? "\texcludesFile = "
                                                     : "[core]\n\texcludesFile = ",
              f);
        put_value(f, excludes);
        fputc('\n', f);
    }
    if (fclose(f) != 0) kg_oom();
    return text;
}

/* ---- the run's files ----------------------------------------------------- */

/* The box's names for its files, below its HOME. */
#define GITCONFIG_NAME ".gitconfig"
#define EXCLUDES_NAME ".config/git/kgate-excludes"

struct kg_boxhome {
    int lock; /* the directory, flock'ed while the run lasts; -1 */
    char *dir; /* the private directory on the host */
    char *gitconfig, *excludes, *empty; /* its files */
    int made; /* 0: names only, for a dry run */
};

/* Up to max bytes of a regular file (following a symbolic link: a
 * dotfile manager's), or NULL when there is none or it cannot be read. */
static char *read_text(const char *path, size_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0) return NULL;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return NULL;
    }
    char *buf = malloc(max + 1);
    if (!buf) kg_oom();
    size_t n = 0;
    ssize_t r;
    while (n < max && (r = read(fd, buf + n, max - n)) != 0) {
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    *len = n;
    return buf;
}

static int under_any(const char *path, const kg_strv *list)
{
    for (size_t i = 0; list && i < kg_strv_len(list); i++)
        if (kg_path_is_within(path, kg_strv_get(list, i))) return 1;
    return 0;
}

/* A file under a deny_read path is not read: the user wants none of it
 * shown, not even the identity. */
static void scan_file(const char *path, const kg_strv *deny_read, kg_strv *kv)
{
    if (under_any(path, deny_read)) return;
    size_t len = 0;
    char *text = read_text(path, MAX_CONFIG, &len);
    if (text) kg_boxgit_scan(text, len, kv);
    free(text);
}

/* The user's global files, in git's order (the later wins). */
static kg_strv *read_user(const char *home, const char *xdg_config, const kg_strv *deny_read)
{
    kg_strv *kv = kg_strv_new();
    char *p = NULL;
    if (xdg_config && *xdg_config == '/') {
        if (asprintf(&p, "%s/git/config", xdg_config) < 0) kg_oom();
    } else if (asprintf(&p, "%s/.config/git/config", home) < 0) {
        kg_oom();
    }
    scan_file(p, deny_read, kv);
    free(p);
    if (asprintf(&p, "%s/.gitconfig", home) < 0) kg_oom();
    scan_file(p, deny_read, kv);
    free(p);
    return kv;
}

/* The user's own global excludes file: core.excludesFile ("~/" is the
 * home), else git's default under the XDG directory. */
static char *user_excludes_path(const kg_strv *kv, const char *home, const char *xdg_config)
{
    const char *v = last_value(kv, EXCLUDES_KEY);
    char *p = NULL;
    int r;
    if (v && strncmp(v, "~/", 2) == 0)
        r = asprintf(&p, "%s/%s", home, v + 2);
    else if (v && v[0] == '/')
        r = asprintf(&p, "%s", v);
    else if (v)
        return NULL; /* relative: git reads it from wherever it runs */
    else if (xdg_config && *xdg_config == '/')
        r = asprintf(&p, "%s/git/ignore", xdg_config);
    else
        r = asprintf(&p, "%s/.config/git/ignore", home);
    if (r < 0) kg_oom();
    return p;
}

/* The deny_read entries inside the project, as patterns anchored at its
 * top: neither box lets them be opened, so git add -A would stop at one
 * it cannot read. */
static void put_denied(FILE *f, const char *project, const kg_strv *deny_read)
{
    size_t pl = project ? strlen(project) : 0;
    for (size_t i = 0; pl && deny_read && i < kg_strv_len(deny_read); i++) {
        const char *d = kg_strv_get(deny_read, i);
        if (strncmp(d, project, pl) == 0 && d[pl] == '/' && d[pl + 1]) fprintf(f, "%s\n", d + pl);
    }
}

/* The user's excludes (unless deny_read hides them), the deny_read
 * entries of the project, then each placeholder's name. */
static char *excludes_text(const kg_strv *kv, const kg_boxhome_in *in)
{
    const char *home = in->home, *xdg_config = in->xdg_config;
    const kg_strv *deny_read = in->deny_read, *placeholders = in->placeholders;
    char *text = NULL, *path = user_excludes_path(kv, home, xdg_config);
    size_t len = 0, ulen = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) kg_oom();
    char *user = path && !under_any(path, deny_read) ? read_text(path, MAX_CONFIG, &ulen) : NULL;
    if (user) {
        fprintf(f, "# your global excludes (%s)\n", path);
        fwrite(user, 1, ulen, f);
        if (ulen && user[ulen - 1] != '\n') fputc('\n', f);
    }
    fputs("# deny_read in the project: unreadable in the box\n", f);
    put_denied(f, in->project, deny_read);
    fputs("# kgate's placeholders for this run (protected.c)\n", f);
    for (size_t i = 0; placeholders && i < kg_strv_len(placeholders); i++)
        fprintf(f, "/%s\n", kg_strv_get(placeholders, i));
    if (fclose(f) != 0) kg_oom();
    free(user);
    free(path);
    return text;
}

/* dir/name holding text, with mode; its path, or NULL with err. */
static char *write_file(const char *dir, const char *name, const char *text, mode_t mode,
                        kg_error *err)
{
    char *p = NULL;
    if (asprintf(&p, "%s/%s", dir, name) < 0) kg_oom();
    int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
    size_t len = strlen(text), off = 0;
    while (fd >= 0 && off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) break;
        off += (size_t)w;
    }
    int e = fd < 0 ? errno : off < len ? errno : 0;
    if (fd >= 0 && (fchmod(fd, mode) < 0 || close(fd) < 0) && !e) e = errno;
    if (!e) return p;
    kg_err_set(err, e, "cannot write the box's file %s: %s", p, strerror(e));
    free(p);
    return NULL;
}

#define BOX_DIR "/tmp"
#define BOX_PREFIX "kgate-box."
static const char *const box_files[] = {"gitconfig", "excludes", "empty"};

/* A directory younger than this is its maker's, locked or not: mkdtemp
 * and flock are two calls, and a sweep between them took a starting run's
 * directory from under it (run_audit's 40 concurrent runs: 3 refused).
 * The run markers have the same rule (auditrun.c). */
#define BOX_YOUNG_S 60

/* A run's directory whose lock nobody holds, and that is not young, is
 * left by a kgate that was killed (SIGKILL, a crash): its files go.  A
 * lock, not a pid, because a pid may be in another pid namespace sharing
 * /tmp, or reused. */
static void sweep_one(int tmp, const char *name, time_t now)
{
    struct stat st;
    if (fstatat(tmp, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
        st.st_uid != geteuid() || st.st_mtime > now - BOX_YOUNG_S)
        return;
    int d = openat(tmp, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (d < 0) return;
    if (flock(d, LOCK_EX | LOCK_NB) == 0) {
        for (size_t i = 0; i < sizeof box_files / sizeof box_files[0]; i++)
            unlinkat(d, box_files[i], 0);
        unlinkat(tmp, name, AT_REMOVEDIR);
    }
    close(d);
}

static void sweep(const char *base)
{
    int tmp = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int t2 = tmp >= 0 ? dup(tmp) : -1;
    DIR *ds = t2 >= 0 ? fdopendir(t2) : NULL;
    struct dirent *e;
    time_t now = time(NULL);
    while (ds && (e = readdir(ds)))
        if (strncmp(e->d_name, BOX_PREFIX, strlen(BOX_PREFIX)) == 0) sweep_one(tmp, e->d_name, now);
    if (ds)
        closedir(ds);
    else if (t2 >= 0)
        close(t2);
    if (tmp >= 0) close(tmp);
}

/* In /tmp, not $TMPDIR: a TMPDIR may lie in the project (kgate lets one
 * there stay), where git would list the files and the program could
 * rewrite the sources of its own covers.  Locked for the run (sweep). */
static int make_dir(kg_boxhome *bh, const char *t, kg_error *err)
{
    sweep(t);
    if (asprintf(&bh->dir, "%s/" BOX_PREFIX "XXXXXX", t) < 0) kg_oom();
    if (mkdtemp(bh->dir)) {
        bh->lock = open(bh->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (bh->lock >= 0 && flock(bh->lock, LOCK_EX) == 0) return 0;
        kg_err_set(err, errno, "cannot lock the box's files in %s: %s", bh->dir, strerror(errno));
        rmdir(bh->dir);
        free(bh->dir);
        bh->dir = NULL;
        return -1;
    }
    kg_err_set(err, errno, "cannot make the box's files in %s: %s", t, strerror(errno));
    free(bh->dir);
    bh->dir = NULL;
    return -1;
}

static kg_boxhome *make_in(const kg_boxhome_in *in, const char *base, kg_error *err)
{
    kg_boxhome *bh = calloc(1, sizeof *bh);
    if (!bh) kg_oom();
    bh->made = 1;
    bh->lock = -1;
    if (make_dir(bh, base, err) < 0) {
        free(bh);
        return NULL;
    }
    kg_strv *kv = read_user(in->home, in->xdg_config, in->deny_read);
    char *ex = excludes_text(kv, in);
    char *cfg = kg_boxgit_render(kv, "~/" EXCLUDES_NAME);
    /* The cover of a deny_read file: mode 0, so that the program, which
     * has no capabilities in the box, cannot open it at all (EACCES, as
     * in the Landlock box: docs/one-view.md).  Its name stays "empty" so
     * that sweep() still removes one an older kgate left. */
    int ok = (bh->gitconfig = write_file(bh->dir, "gitconfig", cfg, 0444, err)) &&
             (bh->excludes = write_file(bh->dir, "excludes", ex, 0444, err)) &&
             (bh->empty = write_file(bh->dir, "empty", "", 0, err));
    free(cfg);
    free(ex);
    kg_strv_free(kv);
    if (ok) return bh;
    kg_boxhome_free(bh);
    return NULL;
}

/* A /tmp that is full or read-only does not stop a run (the box has a /tmp
 * of its own): the files go to kgate's own directory, ~/.kgate/box,
 * private to the user and never inside a box, instead. */
kg_boxhome *kg_boxhome_make(const kg_boxhome_in *in, kg_error *err)
{
    kg_boxhome *bh = make_in(in, BOX_DIR, err);
    if (bh || (err->code != ENOSPC && err->code != EDQUOT && err->code != EROFS)) return bh;
    char *own = NULL, *box = NULL;
    if (asprintf(&own, "%s/.kgate", in->home) < 0 || asprintf(&box, "%s/box", own) < 0) kg_oom();
    if ((mkdir(own, 0700) == 0 || errno == EEXIST) && (mkdir(box, 0700) == 0 || errno == EEXIST)) {
        kg_error first = *err;
        bh = make_in(in, box, err);
        if (!bh) kg_err_wrap(err, "%s; then in ~/.kgate/box", first.msg);
    }
    free(own);
    free(box);
    return bh;
}

kg_boxhome *kg_boxhome_names(void)
{
    kg_boxhome *bh = calloc(1, sizeof *bh);
    if (!bh) kg_oom();
    bh->lock = -1;
    bh->dir = strdup("/tmp/kgate-box.XXXXXX");
    bh->gitconfig = strdup("/tmp/kgate-box.XXXXXX/gitconfig");
    bh->excludes = strdup("/tmp/kgate-box.XXXXXX/excludes");
    bh->empty = strdup("/tmp/kgate-box.XXXXXX/empty");
    if (!bh->dir || !bh->gitconfig || !bh->excludes || !bh->empty) kg_oom();
    return bh;
}

size_t kg_boxhome_count(const kg_boxhome *bh) { return bh ? 2 : 0; }

const char *kg_boxhome_name(const kg_boxhome *bh, size_t i)
{
    (void)bh;
    return i == 0 ? GITCONFIG_NAME : EXCLUDES_NAME;
}

const char *kg_boxhome_source(const kg_boxhome *bh, size_t i)
{
    return i == 0 ? bh->gitconfig : bh->excludes;
}

const char *kg_boxhome_empty(const kg_boxhome *bh) { return bh ? bh->empty : NULL; }

void kg_boxhome_free(kg_boxhome *bh)
{
    if (!bh) return;
    char **files[] = {&bh->gitconfig, &bh->excludes, &bh->empty};
    for (size_t i = 0; i < 3; i++) {
        if (*files[i] && bh->made) unlink(*files[i]);
        free(*files[i]);
    }
    if (bh->dir && bh->made) rmdir(bh->dir);
    if (bh->lock >= 0) close(bh->lock);
    free(bh->dir);
    free(bh);
}
