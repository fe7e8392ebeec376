/* kgate-pty-shim: the last step before the program, inside the sandbox, in
 * pty mode.  Usage: kgate-pty-shim PATH [ARG...]
 *
 * bwrap runs with --new-session, so the program starts in a session of its
 * own with no controlling terminal, away from bwrap's outer process.  That
 * is what keeps a Ctrl-C typed into the pty from killing the outer bwrap
 * (whose death would SIGKILL the sandbox through --die-with-parent).  But a
 * program without a controlling terminal has no job control, no /dev/tty and
 * no Ctrl-C at all.  This shim gives it the pty back: it leaves bwrap's
 * session for one of its own (bwrap's setsid() made pid 1 the leader, not
 * the program), takes fd 0, the pty slave that nobody holds as a controlling
 * terminal, as its controlling terminal (which also makes its process group
 * the foreground one), and execs PATH in place.  No fork: the pid, the exit
 * status and a death by signal are the program's own.
 *
 * A failure to take the terminal is reported and the program still runs:
 * without the terminal it only loses job control, never its confinement.
 * (The pty belongs to kgate, not to the user's terminal, either way.) */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2 || argv[1][0] != '/') {
        fprintf(stderr, "kgate-pty-shim: usage: kgate-pty-shim /PATH/TO/PROGRAM "
                        "[ARG...]\n");
        return 127;
    }
    /* EPERM: already a process group leader.  Then we must already lead
     * our session (a leader of some other session's group cannot take a
     * terminal), which TIOCSCTTY below checks for us. */
    if (setsid() < 0 && errno != EPERM)
        fprintf(stderr, "kgate-pty-shim: setsid: %s\n", strerror(errno));
    if (ioctl(STDIN_FILENO, TIOCSCTTY, 0) < 0)
        fprintf(stderr,
                "kgate-pty-shim: cannot make the pseudo-terminal the "
                "controlling terminal (%s): no job control\n",
                strerror(errno));
    execv(argv[1], argv + 1);
    int e = errno;
    fprintf(stderr, "kgate-pty-shim: %s: %s\n", argv[1], strerror(e));
    return e == ENOENT ? 127 : 126;
}
