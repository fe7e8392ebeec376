/* denyexec_str.c: the deny list's string helpers, shared by its argv walk
 * (denyexec.c) and its shell-string walk (denyexec_sh.c). */
#include "denyexec_int.h"

#include <stdlib.h>
#include <string.h>
#include "oom.h"

const char *kg_dx_base(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

char *kg_dx_strdup(const char *s)
{
    char *r = strdup(s);
    if (!r) kg_oom(); /* the core treats allocation failure as fatal */
    return r;
}

char *kg_dx_join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *r = malloc(a + b + 2);
    if (!r) kg_oom();
    memcpy(r, dir, a);
    size_t o = a;
    if (a == 0 || dir[a - 1] != '/') r[o++] = '/';
    memcpy(r + o, name, b + 1);
    return r;
}
