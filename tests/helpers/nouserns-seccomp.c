/* nouserns-seccomp: runs a command where user namespaces cannot be made,
 * the way Docker's and Podman's default seccomp profiles leave a container
 * (tests/integration/lib.sh, in_seccomp_nouserns):
 *   unshare(CLONE_NEWUSER ...)  EPERM
 *   clone(CLONE_NEWUSER ...)    EPERM
 *   clone3(...)                 ENOSYS: a filter cannot look inside clone3's
 *                               struct, so Docker refuses it as "not there"
 *                               and libc falls back to clone
 * Everything else is allowed.  The filter is inherited by everything the
 * command starts, and no_new_privs keeps a setuid program from dropping it.
 *
 * Usage: kgate-test-nouserns-seccomp [--] COMMAND [ARG...]
 * Exit 125 when the filter cannot be set up, 127 when COMMAND cannot run. */
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static int refuse_flag(scmp_filter_ctx ctx, int nr)
{
    /* The flags are the first argument of unshare, and of clone on every
     * architecture Debian builds kgate for except s390x. */
    return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
                            SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
}

int main(int argc, char **argv)
{
    int first = 1;
    if (first < argc && strcmp(argv[first], "--") == 0) first++;
    if (first >= argc) {
        fprintf(stderr, "usage: %s [--] COMMAND [ARG...]\n", argv[0]);
        return 125;
    }
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
        fprintf(stderr, "nouserns-seccomp: seccomp_init failed\n");
        return 125;
    }
    int rc = refuse_flag(ctx, SCMP_SYS(unshare));
    if (rc == 0) rc = refuse_flag(ctx, SCMP_SYS(clone));
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    if (rc == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) rc = -errno;
    if (rc == 0) rc = seccomp_load(ctx);
    seccomp_release(ctx);
    if (rc != 0) {
        fprintf(stderr, "nouserns-seccomp: cannot set up the filter: %s\n", strerror(-rc));
        return 125;
    }
    execvp(argv[first], argv + first);
    fprintf(stderr, "nouserns-seccomp: %s: %s\n", argv[first], strerror(errno));
    return 127;
}
