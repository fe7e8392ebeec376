/* protected.c: the built-in protected paths (protected.h), and the
 * placeholders that keep the missing ones from being created.
 *
 * Why placeholders.  Seatbelt denies a path whether or not it exists, and
 * the Landlock box grants a project that holds a protected path entry by
 * entry, so nothing new can be made at its level.  bubblewrap protects a
 * path with a read-only mount, and a mount needs something to sit on: a
 * missing name gets no mount and stays creatable (a .git/config made from
 * inside a .git without one, a .claude/settings.json with hooks in a
 * project that had no .claude).  So before the launch, on Linux, kgate
 * makes each missing one, empty and without write permission, and every
 * backend then sees it as present and keeps it read-only; a mount point
 * cannot be removed, renamed or replaced from inside (EBUSY).  After the
 * run the placeholder is removed again.
 *
 * Runs in the same project share a placeholder: each holds a shared flock
 * on it, and the one that can take it exclusively at its end (the last)
 * removes it.  Removing it while another run still has it mounted would
 * detach that run's mount (Linux 3.18 and later let an unlink in one mount
 * namespace take a mount point away from the others), so no run removes
 * one another holds.  A placeholder is known by its shape: empty, owned by
 * the user, mode 0444 (a file) or 0555 (a directory) exactly.  One the
 * user has since written to, or chmod'ed, is theirs and stays. */
#include "protected.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "os.h"

#define V "0.1.0" /* meson.build's version when the entry was added */

static const kg_protected_entry table[] = {
    {".git/hooks", KG_PROT_DIR,
     "git runs the hooks in it at the next commit, merge, checkout or push", V},
    {".git/config", KG_PROT_FILE,
     "git reads it at every command: core.hooksPath, core.fsmonitor, core.pager, "
     "alias.* and filter drivers run programs (a plain git status runs fsmonitor)",
     V},
    {".git/config.worktree", KG_PROT_FILE,
     "git reads it like .git/config once extensions.worktreeConfig is on "
     "(git sparse-checkout turns it on)",
     V},
    {".git/modules", KG_PROT_DIR,
     "submodules' git directories: their config and hooks run at git status "
     "and at commands inside the submodule",
     V},
    {".git/worktrees", KG_PROT_DIR,
     "linked worktrees' git directories: their config.worktree, commondir and "
     "hooks apply to git run in those worktrees",
     V},
    {".git/commondir", KG_PROT_GIT,
     "sends git to another directory's config and hooks (a main .git never has "
     "one; gitguard.c keeps a placeholder holding \".\" when missing)",
     V},
    {".kgate.yaml", KG_PROT_FILE,
     "kgate's project policy, read at the next run: it may only narrow, but "
     "rewriting it drops what the project added (a deny_read, a protect_paths)",
     V},
    {".envrc", KG_PROT_FILE,
     "direnv runs it as shell when a shell enters the project, once allowed", V},
    {".vscode", KG_PROT_DIR,
     "VS Code: tasks.json (a task with runOn folderOpen), settings.json (paths "
     "of interpreters, linters, terminals), launch.json; in a trusted folder "
     "they run when it is opened",
     V},
    {".idea", KG_PROT_DIR,
     "JetBrains IDEs: run configurations, startup tasks and external tools, "
     "run in a trusted project",
     V},
    {".claude", KG_PROT_DIR,
     "Claude Code: settings.json and settings.local.json hooks run shell "
     "commands at session start and around every tool call, and "
     "enableAllProjectMcpServers starts .mcp.json's servers unasked; a "
     "settings.json created where none was is CVE-2026-25725 (fixed in "
     "Claude Code 2.1.2)",
     V},
    {".mcp.json", KG_PROT_FILE,
     "MCP clients (Claude Code and others) start the servers it lists as host "
     "commands when a session opens in the project",
     V},
    {".cursor", KG_PROT_DIR,
     "Cursor: mcp.json starts MCP servers, hooks.json runs commands around "
     "agent steps, sandbox.json outranks the user's own sandbox settings",
     V},
    {".gemini", KG_PROT_DIR,
     "Gemini CLI: settings.json starts MCP servers, tool discovery and call "
     "commands, and hooks when the CLI starts in the project",
     V},
    {".codex", KG_PROT_DIR,
     "Codex CLI: the project's config.toml (MCP servers, notify and other "
     "commands) is read when Codex starts in a trusted project",
     V},
    {".husky", KG_PROT_DIR,
     "husky sets core.hooksPath to .husky/_, whose hooks run the scripts in "
     ".husky at the next commit or push",
     V},
    {".devcontainer", KG_PROT_DIR,
     "VS Code Dev Containers and the devcontainer CLI run its "
     "devcontainer.json initializeCommand on the host when the container is "
     "built or reopened",
     V},
    {".devcontainer.json", KG_PROT_FILE,
     "the same file at the project's top level (initializeCommand runs on "
     "the host)",
     V},
};

const kg_protected_entry *kg_protected_table(size_t *n)
{
    *n = sizeof table / sizeof table[0];
    return table;
}

/* ---- placeholders ------------------------------------------------------ */

#if defined(__linux__)

typedef struct held {
    int dfd; /* the parent directory (O_PATH) */
    int fd; /* the placeholder, shared-locked */
    char *leaf;
    int dir;
    int top; /* directly in the project (git add would see it) */
} held;

struct kg_placeholders {
    held *v;
    size_t n;
};

static mode_t want_mode(int dir) { return dir ? 0555 : 0444; }

/* An empty directory: nothing but "." and "..". */
static int dir_empty(int fd)
{
    int d = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *ds = d >= 0 ? fdopendir(d) : NULL;
    if (!ds) {
        if (d >= 0) close(d);
        return 0;
    }
    int empty = 1;
    struct dirent *e;
    while (empty && (e = readdir(ds)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = 0;
    closedir(ds);
    return empty;
}

/* fd is a placeholder (see the head of this file). */
static int is_placeholder(int fd, int dir)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 07777) != want_mode(dir))
        return 0;
    return dir ? S_ISDIR(st.st_mode) && dir_empty(fd) : S_ISREG(st.st_mode) && st.st_size == 0;
}

/* Makes the placeholder leaf in dfd: 0, or -1 with errno (EEXIST when
 * something is there already).  Made whole under a name of its own, then
 * renamed into place without replacing anything: another run never sees
 * it before it has its mode, which is what marks it as a placeholder. */
static int make_one(int dfd, const char *leaf, int dir)
{
    char tmp[300];
    if (snprintf(tmp, sizeof tmp, "%s.kgate-%ld", leaf, (long)getpid()) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (dir) {
        if (mkdirat(dfd, tmp, 0700) < 0) return -1;
    } else {
        int f = openat(dfd, tmp, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
        if (f < 0) return -1;
        close(f);
    }
    /* the mode is the mark: set it whole, whatever the umask */
    int r = fchmodat(dfd, tmp, want_mode(dir), 0);
    if (r == 0) r = kg_os_rename_noreplace(dfd, tmp, leaf);
    int e = errno, renamed = r == 0;
    /* A file system without RENAME_NOREPLACE (some network ones): a file
     * is linked into place, which fails on an existing name too; a
     * directory is made in place, and for a moment has the wrong mode (a
     * run that looks then takes it for the user's and leaves it). */
    if (r < 0 && (e == EINVAL || e == ENOSYS)) {
        r = dir ? mkdirat(dfd, leaf, 0700) : linkat(dfd, tmp, dfd, leaf, 0);
        if (r == 0 && dir) r = fchmodat(dfd, leaf, want_mode(dir), 0);
        e = errno;
    }
    /* Renamed, the temporary name is gone: looking it up again only to be
     * told so cost a failed lookup per placeholder (ENOENT in a directory
     * that churns, about 0.07 ms each in a VM under load). */
    if (!renamed) unlinkat(dfd, tmp, dir ? AT_REMOVEDIR : 0);
    errno = e;
    return r;
}

/* Opens and shared-locks the placeholder at leaf, making it when missing.
 * 1 with *fd set when held; 0 when something else is there (a real file,
 * the user's: the backend protects it as it is) or nobody with this uid
 * could make it (EACCES, EROFS); -1 with errno on an error. */
static int hold_one(int dfd, const char *leaf, int dir, int *fd)
{
    for (int tries = 0; tries < 20; tries++) {
        int f = openat(dfd, leaf,
                       O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | (dir ? O_DIRECTORY : 0));
        if (f < 0 && errno == ENOENT) {
            if (make_one(dfd, leaf, dir) == 0 || errno == EEXIST) continue;
            return errno == EACCES || errno == EROFS ? 0 : -1;
        }
        if (f < 0) /* a symlink, or a file where a directory is wanted */
            return errno == ELOOP || errno == ENOTDIR || errno == EACCES ? 0 : -1;
        struct stat a, b;
        if (flock(f, LOCK_SH) < 0 || fstat(f, &a) < 0) {
            int e = errno;
            close(f);
            errno = e;
            return -1;
        }
        /* the last run may have removed it between our open and our lock */
        if (fstatat(dfd, leaf, &b, AT_SYMLINK_NOFOLLOW) < 0 || a.st_dev != b.st_dev ||
            a.st_ino != b.st_ino) {
            close(f);
            continue;
        }
        if (!is_placeholder(f, dir)) {
            close(f);
            return 0;
        }
        *fd = f;
        return 1;
    }
    errno = EAGAIN;
    return -1;
}

/* The parent of project/name as an O_PATH descriptor, not following a
 * symlink below the project; -1 when it is not a directory there. */
static int open_parent(const char *project, const char *name, const char **leaf)
{
    int fd = kg_os_open_dir_handle(project);
    const char *slash = strrchr(name, '/');
    *leaf = slash ? slash + 1 : name;
    if (fd < 0 || !slash) return fd;
    /* the table's names have one level at most below the project */
    char first[256];
    size_t n = (size_t)(slash - name);
    if (n >= sizeof first) {
        close(fd);
        return -1;
    }
    memcpy(first, name, n);
    first[n] = '\0';
    int sub = kg_os_openat_dir_handle(fd, first);
    close(fd);
    return sub;
}

static void push(kg_placeholders *ph, held h)
{
    held *v = realloc(ph->v, (ph->n + 1) * sizeof *v);
    if (!v) kg_oom();
    ph->v = v;
    ph->v[ph->n++] = h;
}

/* The entry, if protect_paths holds it, is held; -1 with err on an
 * error. */
static int place_entry(kg_placeholders *ph, const char *project, const kg_protected_entry *e,
                       const kg_strv *protect, kg_error *err)
{
    char *path = NULL;
    if (asprintf(&path, "%s/%s", project, e->name) < 0) kg_oom();
    int wanted = kg_strv_contains(protect, path);
    const char *leaf = NULL;
    int dfd = wanted ? open_parent(project, e->name, &leaf) : -1;
    int r = 0, fd = -1, dir = e->kind == KG_PROT_DIR;
    if (dfd >= 0) {
        r = hold_one(dfd, leaf, dir, &fd);
        if (r < 0)
            kg_err_set(err, errno,
                       "cannot make an empty placeholder at the protected path %s "
                       "(missing, it could be created from inside the box): %s",
                       path, strerror(errno));
    }
    if (r == 1) {
        char *l = strdup(leaf);
        if (!l) kg_oom();
        push(ph, (held){dfd, fd, l, dir, strchr(e->name, '/') == NULL});
    } else if (dfd >= 0) {
        close(dfd);
    }
    free(path);
    return r < 0 ? -1 : 0;
}

kg_placeholders *kg_placeholders_make(const char *project, const kg_strv *protect_paths,
                                      kg_error *err)
{
    kg_placeholders *ph = calloc(1, sizeof *ph);
    if (!ph) kg_oom();
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (table[i].kind == KG_PROT_GIT) continue;
        if (place_entry(ph, project, &table[i], protect_paths, err) < 0) {
            kg_placeholders_release(ph);
            return NULL;
        }
    }
    return ph;
}

void kg_placeholders_release(kg_placeholders *ph)
{
    if (!ph) return;
    for (size_t i = 0; i < ph->n; i++) {
        held *h = &ph->v[i];
        struct stat a, b;
        /* Only the last run removes it, and only the one it made, unchanged. */
        if (flock(h->fd, LOCK_EX | LOCK_NB) == 0 && fstat(h->fd, &a) == 0 &&
            fstatat(h->dfd, h->leaf, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_dev == b.st_dev &&
            a.st_ino == b.st_ino && is_placeholder(h->fd, h->dir))
            unlinkat(h->dfd, h->leaf, h->dir ? AT_REMOVEDIR : 0);
        close(h->fd);
        close(h->dfd);
        free(h->leaf);
    }
    free(ph->v);
    free(ph);
}

size_t kg_placeholders_count(const kg_placeholders *ph) { return ph ? ph->n : 0; }

void kg_placeholders_top(const kg_placeholders *ph, kg_strv *names)
{
    for (size_t i = 0; ph && i < ph->n; i++)
        if (ph->v[i].top) kg_strv_push(names, ph->v[i].leaf);
}

#else /* macOS: Seatbelt denies a missing path by name; nothing to make */

struct kg_placeholders {
    size_t n;
};

kg_placeholders *kg_placeholders_make(const char *project, const kg_strv *protect_paths,
                                      kg_error *err)
{
    (void)project, (void)protect_paths, (void)err;
    kg_placeholders *ph = calloc(1, sizeof *ph);
    if (!ph) kg_oom();
    return ph;
}

void kg_placeholders_release(kg_placeholders *ph) { free(ph); }

size_t kg_placeholders_count(const kg_placeholders *ph) { return ph ? ph->n : 0; }

void kg_placeholders_top(const kg_placeholders *ph, kg_strv *names) { (void)ph, (void)names; }

#endif
