/* os-relay-macos.c: macOS has neither tee(2) nor splice(2).  The output
 * relay then reads each chunk into kgate's buffer, masks it and writes it
 * (supervise.c's plain path, which Linux also takes when kgate's output is
 * not a pipe): the same bytes reach the same place, with one more copy. */
#include "os.h"

#include <errno.h>

bool kg_os_relay_zero_copy(void) { return false; }

ssize_t kg_os_tee(int in, int out, size_t n)
{
    (void)in;
    (void)out;
    (void)n;
    errno = ENOSYS;
    return -1;
}

ssize_t kg_os_splice(int in, int out, size_t n)
{
    (void)in;
    (void)out;
    (void)n;
    errno = ENOSYS;
    return -1;
}
