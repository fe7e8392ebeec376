/* os-proc-linux.c: child reaping and the box's shared places on Linux
 * (see os.h). */
#include "os.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

bool kg_os_subreaper(bool on)
{
    return prctl(PR_SET_CHILD_SUBREAPER, on ? 1 : 0, 0, 0, 0) == 0;
}

pid_t *kg_os_children(size_t *n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%ld/children", (long)getpid());
    FILE *f = fopen(path, "re");
    *n = 0;
    if (!f) return NULL;
    size_t cap = 16;
    pid_t *v = malloc(cap * sizeof *v);
    long pid;
    while (v && fscanf(f, "%ld", &pid) == 1) {
        if (*n == cap) {
            pid_t *nv = realloc(v, (cap *= 2) * sizeof *v);
            if (!nv) {
                free(v);
                v = NULL;
                break;
            }
            v = nv;
        }
        v[(*n)++] = (pid_t)pid;
    }
    fclose(f);
    return v;
}

size_t kg_os_box_shared_dirs(const char **out, size_t max)
{
    /* bubblewrap gives every box an empty /tmp and $HOME of its own: no
     * host directory is writable by the box unless the policy says so. */
    (void)out;
    (void)max;
    return 0;
}
