/* bwrap-pty.c: where the pty shim (pty-shim.c, installed as kgate-pty-shim)
 * is, for plans made in pty mode.
 *
 * First next to the plugin's own shared object: that is where the build
 * tree puts it (plugins/bubblewrap/), and where anyone who copies the
 * plugin directory somewhere (the integration tests do) copies it too.
 * Then the installed path, fixed at build time (BWRAP_PTY_SHIM_PATH, under
 * libexecdir).  There is deliberately no environment variable: the shim is
 * bound into the sandbox when it lies in a hidden place, and a variable
 * naming an arbitrary file would be a way to show that file to the program
 * that nobody typed as --allow-path and the audit log never saw.  Whoever
 * can put a file next to the plugin can replace the plugin itself. */
#include "bwrap-internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* No default: a path that does not come from meson's prefix and libexecdir
 * is the wrong one for every install but one (a /usr/local or --prefix
 * install then found no shim and every pty run failed). */
#ifndef BWRAP_PTY_SHIM_PATH
#error "BWRAP_PTY_SHIM_PATH is set by plugins/bubblewrap/meson.build from prefix and libexecdir"
#endif

/* Set by the tests, which link the plan builder into an executable of
 * their own (dladdr then names that executable, not a plugin). */
static const char *shim_override;

void bwrap_pty_shim_set_override(const char *path) { shim_override = path; }

/* An absolute path to a regular file we may execute. */
static int usable(const char *p)
{
    struct stat st;
    return p[0] == '/' && stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

/* "DIR/kgate-pty-shim" for the directory of the object this code is in. */
static char *beside_plugin(void)
{
    static const char anchor = 0; /* a data address: no function-pointer cast */
    Dl_info info;
    if (!dladdr(&anchor, &info) || !info.dli_fname || info.dli_fname[0] != '/') return NULL;
    const char *slash = strrchr(info.dli_fname, '/');
    char *p = NULL;
    int dirlen = (int)(slash - info.dli_fname);
    if (asprintf(&p, "%.*s/%s", dirlen, info.dli_fname, BWRAP_PTY_SHIM_NAME) < 0) return NULL;
    return p;
}

char *bwrap_pty_shim_find(kgate_err *err)
{
    if (shim_override) {
        if (usable(shim_override)) return strdup(shim_override);
        kgate_err_set(err, ENOENT, "pty shim %s is not an executable file", shim_override);
        return NULL;
    }
    char *p = beside_plugin();
    if (p && usable(p)) return p;
    free(p);
    if (usable(BWRAP_PTY_SHIM_PATH)) return strdup(BWRAP_PTY_SHIM_PATH);
    kgate_err_set(err, ENOENT,
                  "%s, which gives the program its terminal inside the "
                  "sandbox, is not installed (not beside the plugin, not %s); "
                  "reinstall the bubblewrap backend, or run with --no-pty",
                  BWRAP_PTY_SHIM_NAME, BWRAP_PTY_SHIM_PATH);
    return NULL;
}
