/* loader.c: finding backend plugins, dlopen()ing them, and refusing the
 * ones the core cannot trust to speak its ABI.
 *
 * Every refusal is one line naming the file and the reason, and never stops
 * the other plugins from loading: a broken third-party plugin must not take
 * the working backends down with it. */
#include "loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kgate-config.h"
#include "plugtrust.h"
#include "plugin-check.h"
#include "msg.h"

/* ------------------------------------------------------------------------ */
/* Registry                                                                  */
/* ------------------------------------------------------------------------ */

kg_registry *kg_registry_new(void)
{
    kg_registry *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->refusals = kg_strv_new();
    r->refused_files = kg_strv_new();
    r->refused_reasons = kg_strv_new();
    r->searched = kg_strv_new();
    r->exposed = kg_strv_new();
    return r;
}

void kg_registry_free(kg_registry *r)
{
    if (!r) return;
    kg_plugin *p, *tmp;
    HASH_ITER(hh, r->by_name, p, tmp)
    {
        HASH_DEL(r->by_name, p);
        /* The release code lives in the plugin: before dlclose. */
        kg_plugin_release_state(p);
        if (p->handle) dlclose(p->handle);
        free(p->name);
        free(p->path);
        free(p);
    }
    kg_strv_free(r->refusals);
    kg_strv_free(r->refused_files);
    kg_strv_free(r->refused_reasons);
    kg_strv_free(r->searched);
    kg_strv_free(r->exposed);
    kg_strv_free(r->untrusted);
    free(r);
}

void kg_plugin_release_state(kg_plugin *p)
{
    void *state = p->probe.state;
    if (!state) return;
    p->probe.state = NULL;
    if (p->be.release) p->be.release(state);
}

kg_plugin *kg_registry_find(kg_registry *r, const char *name)
{
    kg_plugin *p = NULL;
    if (r && name) HASH_FIND_STR(r->by_name, name, p);
    return p;
}

/* File names and dlerror() texts end up in a one-line message (and in the
 * audit log): a newline or an escape sequence in a file name must not forge
 * a second line.  msg.c decides how (kg_msg_flatten). */
void kg_registry_refuse(kg_registry *r, const char *file, const char *reason, int print)
{
    char *f = strdup(file ? file : ""), *why = strdup(reason ? reason : "");
    if (f && why) {
        kg_msg_flatten(f);
        kg_msg_flatten(why);
        char *line = NULL;
        if (asprintf(&line, "%s: %s", f, why) >= 0) {
            kg_strv_push(r->refusals, line);
            kg_strv_push(r->refused_files, f);
            kg_strv_push(r->refused_reasons, why);
            if (print) kg_say("plugin %s", line);
            free(line);
        }
    }
    free(f);
    free(why);
}

/* ------------------------------------------------------------------------ */
/* Checking a descriptor                                                     */
/* ------------------------------------------------------------------------ */

int kg_backend_name_valid(const char *name)
{
    if (!name) return 0;
    size_t n = strlen(name);
    if (n == 0 || n > 64) return 0;
    return strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-") == n;
}

size_t kg_backend_copy(void *dst, size_t dst_size, const kgate_backend *src)
{
    size_t n = src->struct_size < dst_size ? src->struct_size : dst_size;
    memset(dst, 0, dst_size);
    memcpy(dst, src, n);
    return n;
}

kg_plugin *kg_registry_add(kg_registry *r, const kgate_backend *be, const char *file, void *handle,
                           kg_error *err)
{
    if (!be) {
        kg_err_set(err, 0, "%s() returned NULL", KGATE_PLUGIN_ENTRY_SYMBOL);
        return NULL;
    }
    /* The version fields are all a plugin of another major shares with us,
     * so they are checked before anything else is read. */
    if (be->struct_size < offsetof(kgate_backend, name)) {
        kg_err_set(err, 0, "kgate_backend too small (%zu bytes)", be->struct_size);
        return NULL;
    }
    if (be->abi_major != KGATE_ABI_MAJOR) {
        kg_err_set(err, 0, "ABI major %u, kgate needs %d", (unsigned)be->abi_major,
                   KGATE_ABI_MAJOR);
        return NULL;
    }
    if (be->struct_size < KG_BACKEND_MIN_SIZE) {
        kg_err_set(err, 0, "kgate_backend too small (%zu bytes)", be->struct_size);
        return NULL;
    }
    kg_plugin *p = calloc(1, sizeof *p);
    if (!p) {
        kg_err_set(err, ENOMEM, "out of memory");
        return NULL;
    }
    kg_backend_copy(&p->be, sizeof p->be, be);
    /* From here on the host copy is what counts: it says what we read. */
    p->be.struct_size = sizeof p->be;
    p->abi_minor = be->abi_minor;
    if (!p->be.name) {
        kg_err_set(err, 0, "backend has no name");
        goto fail;
    }
    if (!kg_backend_name_valid(p->be.name)) {
        char shown[KG_MSG_QUOTE_MAX + 4];
        kg_msg_quote(shown, sizeof shown, p->be.name, strlen(p->be.name));
        kg_err_set(err, 0, "invalid name \"%s\" (must be 1 to 64 of [a-z0-9-])", shown);
        goto fail;
    }
    if (p->be.kind != KGATE_KIND_BOX && p->be.kind != KGATE_KIND_NETWORK) {
        kg_err_set(err, 0, "unknown backend kind %d", (int)p->be.kind);
        goto fail;
    }
    kg_plugin *old = kg_registry_find(r, p->be.name);
    if (old) {
        kg_err_set(err, 0, "duplicate name %s (already loaded from %s)", p->be.name, old->path);
        goto fail;
    }
    p->name = strdup(p->be.name);
    p->path = strdup(file ? file : "(built in)");
    if (!p->name || !p->path) {
        kg_err_set(err, ENOMEM, "out of memory");
        free(p->name);
        free(p->path);
        goto fail;
    }
    p->handle = handle;
    HASH_ADD_KEYPTR(hh, r->by_name, p->name, strlen(p->name), p);
    return p;
fail:
    free(p);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Files                                                                     */
/* ------------------------------------------------------------------------ */

static int has_suffix(const char *name, const char *suffix)
{
    size_t n = strlen(name), s = strlen(suffix);
    /* ".so" alone is a hidden file, not a plugin. */
    return n > s && strcmp(name + n - s, suffix) == 0;
}

/* Only the superuser and the user running kgate may own code it loads
 * (kg_plugtrust_owner_ok: inside a user namespace that does not map root,
 * root shows as the overflow uid), and nobody else may be able to write it: a plugin runs inside kgate
 * with the rights of whoever types `kgate run`, and decides the sandbox. */
static int unsafe_file(const struct stat *st, char *why, size_t len)
{
    if (!S_ISREG(st->st_mode)) {
        snprintf(why, len, "not a regular file");
        return 1;
    }
    if (!kg_plugtrust_owner_ok(st->st_uid)) {
        snprintf(why, len, "owned by uid %u, neither root nor the user running kgate",
                 (unsigned)st->st_uid);
        return 1;
    }
    if (st->st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(why, len, "writable by %s (mode %04o)",
                 (st->st_mode & S_IWOTH) ? "others" : "its group", (unsigned)(st->st_mode & 07777));
        return 1;
    }
    return 0;
}

/* dlerror() usually starts with the path we already print. */
static const char *strip_path(const char *msg, const char *path)
{
    size_t n = strlen(path);
    if (strncmp(msg, path, n) == 0 && strncmp(msg + n, ": ", 2) == 0) return msg + n + 2;
    return msg;
}

/* The path rule of plugtrust.h; 0 when path may be loaded. */
static int refuse_untrusted(kg_registry *r, const char *path, int installed, int print)
{
    char why[1024];
    int t = kg_plugtrust_check(path, r->untrusted, why, sizeof why);
    if (t == KG_TRUST_OK) return 0;
    /* The installed directory may simply not exist (nothing packaged) and
     * lies where only root or the user who installed kgate can create it. */
    if (t == KG_TRUST_MISSING && installed) return 1;
    kg_registry_refuse(r, path, why, print);
    if (t == KG_TRUST_EXPOSED)
        kg_strv_push(r->exposed, kg_strv_get(r->refusals, kg_strv_len(r->refusals) - 1));
    return 1;
}

static void load_file(kg_registry *r, const char *path, int print)
{
    struct stat st;
    char why[256];
    if (refuse_untrusted(r, path, 0, print)) return;
    /* A symlink is followed (packagers link plugins into place), but what
     * it points to must pass the same checks as a plain file. */
    if (stat(path, &st) != 0) {
        snprintf(why, sizeof why, "%s", strerror(errno));
        kg_registry_refuse(r, path, why, print);
        return;
    }
    if (unsafe_file(&st, why, sizeof why)) {
        kg_registry_refuse(r, path, why, print);
        return;
    }
    /* A file cut short would be mapped past its end: SIGBUS, not an error. */
    if (kg_plugin_file_check(path, why, sizeof why) < 0) {
        kg_registry_refuse(r, path, why, print);
        return;
    }
    dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        kg_registry_refuse(r, path, e ? strip_path(e, path) : "dlopen failed", print);
        return;
    }
    dlerror();
    void *sym = dlsym(h, KGATE_PLUGIN_ENTRY_SYMBOL);
    if (!sym) {
        kg_registry_refuse(r, path, "no " KGATE_PLUGIN_ENTRY_SYMBOL " symbol", print);
        dlclose(h);
        return;
    }
    /* ISO C has no cast from an object pointer to a function pointer;
     * POSIX guarantees the representation is the same. */
    kgate_plugin_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry);
    kg_error err = {0};
    if (!kg_registry_add(r, entry(), path, h, &err)) {
        kg_registry_refuse(r, path, err.msg, print);
        dlclose(h);
    }
}

/* strcmp, not strcoll: the load order (and so the tie-break between equal
 * backends) must not depend on the locale. */
static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_plugin_name(const struct dirent *d)
{
    return d->d_name[0] != '.' && has_suffix(d->d_name, KGATE_PLUGIN_SUFFIX);
}

static void load_dir(kg_registry *r, const char *dir, int print)
{
    struct dirent **list = NULL;
    int n = scandir(dir, &list, is_plugin_name, by_name);
    if (n < 0) {
        /* The installed directory may simply not exist (nothing packaged);
         * anything else is worth a line. */
        if (errno != ENOENT) {
            char why[256];
            snprintf(why, sizeof why, "cannot read directory: %s", strerror(errno));
            kg_registry_refuse(r, dir, why, print);
        }
        return;
    }
    for (int i = 0; i < n; i++) {
        char *path = NULL;
        const char *sep = (*dir && dir[strlen(dir) - 1] == '/') ? "" : "/";
        if (asprintf(&path, "%s%s%s", dir, sep, list[i]->d_name) >= 0) {
            load_file(r, path, print);
            free(path);
        }
        free(list[i]);
    }
    free(list);
}

kg_strv *kg_plugin_search_path(void)
{
    kg_strv *dirs = kg_strv_new();
    const char *env = getenv("KGATE_PLUGIN_PATH");
    if (env) {
        char *copy = strdup(env), *save = NULL;
        for (char *tok = copy ? strtok_r(copy, ":", &save) : NULL; tok;
             tok = strtok_r(NULL, ":", &save))
            kg_strv_push(dirs, tok);
        free(copy);
    }
    kg_strv_push(dirs, KGATE_PLUGINDIR);
    return dirs;
}

kg_registry *kg_registry_load_dirs(const kg_strv *dirs, int verbose)
{
    return kg_registry_load_dirs_in(dirs, NULL, verbose);
}

kg_registry *kg_registry_load_dirs_in(const kg_strv *dirs, const kg_strv *untrusted, int verbose)
{
    kg_registry *r = kg_registry_new();
    if (!r) return NULL;
    r->untrusted = kg_strv_new();
    for (size_t i = 0; r->untrusted && i < kg_strv_len(untrusted); i++)
        kg_strv_push(r->untrusted, kg_strv_get(untrusted, i));
    int print = verbose || kg_debug();
    /* The same directory twice (KGATE_PLUGIN_PATH naming the installed one)
     * would only turn every plugin in it into a duplicate-name refusal. */
    dev_t *seen_dev = calloc(kg_strv_len(dirs) + 1, sizeof *seen_dev);
    ino_t *seen_ino = calloc(kg_strv_len(dirs) + 1, sizeof *seen_ino);
    size_t n_seen = 0;
    for (size_t i = 0; i < kg_strv_len(dirs); i++) {
        const char *d = kg_strv_get(dirs, i);
        if (!*d) continue;
        /* A relative entry would load whatever the current project ships:
         * a repository could then choose its own sandbox. */
        if (d[0] != '/') {
            kg_registry_refuse(r, d, "relative directory in plugin path, ignored", print);
            continue;
        }
        kg_strv_push(r->searched, d);
        if (refuse_untrusted(r, d, strcmp(d, KGATE_PLUGINDIR) == 0, print)) continue;
        struct stat st;
        if (stat(d, &st) == 0 && seen_dev && seen_ino) {
            int dup = 0;
            for (size_t k = 0; k < n_seen; k++)
                if (seen_dev[k] == st.st_dev && seen_ino[k] == st.st_ino) dup = 1;
            if (dup) continue;
            seen_dev[n_seen] = st.st_dev;
            seen_ino[n_seen++] = st.st_ino;
        }
        load_dir(r, d, print);
    }
    free(seen_dev);
    free(seen_ino);
    return r;
}

kg_registry *kg_registry_load(int verbose) { return kg_registry_load_for(NULL, verbose); }

kg_registry *kg_registry_load_for(const kg_strv *writable, int verbose)
{
    kg_strv *dirs = kg_plugin_search_path();
    kg_strv *untrusted = kg_plugtrust_exposed(writable);
    kg_registry *r = kg_registry_load_dirs_in(dirs, untrusted, verbose);
    kg_strv_free(untrusted);
    kg_strv_free(dirs);
    return r;
}
