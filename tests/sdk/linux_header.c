/* linux_header.c: the SDK's Linux support header on its own, compiled as
 * strict C99 and as C++ by tests/unit/meson.build, as an out-of-tree Linux
 * backend's compiler sees it. */
#include <kgate/kgate-linux.h>

int main(void)
{
    kgl_pins *p = 0;
    kgl_guard g;
    kgate_err err;
    g.pid = 0;
    g.wfd = -1;
    err.code = 0;
    (void)p;
    (void)g;
    return kgl_seccomp_rule_count() > 0 && kgl_seccomp_fd(&err) >= 0 ? 0 : 1;
}
