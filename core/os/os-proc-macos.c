/* os-proc-macos.c: child reaping and the box's shared places on macOS
 * (see os.h).
 *
 * What differs from Linux: there is no child subreaper.  A process the
 * program leaves behind is reparented to launchd, which reaps it; the
 * watcher (plugins/seatbelt) kills the program's process group when the
 * program ends, so nothing of the box keeps running (docs/seatbelt.md). */
#include "os.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>

bool kg_os_subreaper(bool on)
{
    (void)on;
    return false;
}

pid_t *kg_os_children(size_t *n)
{
    *n = 0;
    return NULL;
}

size_t kg_os_box_shared_dirs(const char **out, size_t max)
{
    /* Seatbelt leaves these writable (docs/seatbelt.md), unlike Linux,
     * where bubblewrap gives the box an empty /tmp of its own. */
    size_t n = 0;
    if (n < max) out[n++] = "/private/tmp";
    const char *tmp = getenv("TMPDIR");
    if (tmp && tmp[0] == '/' && n < max) out[n++] = tmp;
    return n;
}

/* Not used: without a subreaper (above) the core has no tree to end. */
int kg_os_proc_scan(void (*each)(void *arg, const struct kg_procent *e), void *arg)
{
    (void)each;
    (void)arg;
    errno = ENOSYS;
    return -1;
}

int kg_os_kill_child_of(pid_t pid, pid_t ppid)
{
    (void)ppid;
    return kill(pid, SIGKILL);
}
