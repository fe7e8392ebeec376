/* cleanup.h: release by scope.  A local declared kg_autofree (a pointer
 * from malloc), kg_autoclose (a descriptor) or kg_autostrv (a kg_strv) is
 * released when it goes out of scope, on every return, so a function
 * with several ways out does not repeat its unwinding at each.  Each
 * release accepts the unset value (NULL, -1): initialise every such local
 * to it.  kg_steal() hands the value on and leaves the unset value behind,
 * so that what is returned is not released.
 *
 * GCC's and clang's cleanup attribute (the model: bubblewrap's utils.h,
 * crun's cleanup_free/cleanup_close).  It does not run on exit(): kg_oom
 * ends the process, and the kernel releases the rest. */
#ifndef KG_CLEANUP_H
#define KG_CLEANUP_H

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "strv.h"

static inline void kg_freep(void *p) { free(*(void **)p); }

/* Keeps errno: a close on the way out must not change the reason a
 * caller is about to read. */
static inline void kg_closep(int *fd)
{
    if (*fd < 0) return;
    int e = errno;
    close(*fd);
    errno = e;
}

static inline void kg_strv_freep(kg_strv **v) { kg_strv_free(*v); }

#define kg_autofree __attribute__((cleanup(kg_freep)))
#define kg_autoclose __attribute__((cleanup(kg_closep)))
#define kg_autostrv __attribute__((cleanup(kg_strv_freep)))

/* The pointer *pp, which becomes NULL.  The conditional keeps the type of
 * *pp (and refuses what is not a pointer to a pointer) for the compiler's
 * checks, without evaluating it. */
static inline void *kg_steal_ptr(void *pp)
{
    void **p = (void **)pp;
    void *v = *p;
    *p = NULL;
    return v;
}
#define kg_steal(pp) (0 ? *(pp) : kg_steal_ptr(pp))

/* The descriptor *fd, which becomes -1. */
static inline int kg_steal_fd(int *fd)
{
    int v = *fd;
    *fd = -1;
    return v;
}

#endif
