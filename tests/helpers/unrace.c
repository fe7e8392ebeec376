/* unrace: attacks the Landlock box's supervisor (sdk/linux/kgl-unotify.c)
 * from inside, for tests/integration/unotify.sh.
 *
 *   unrace open PROTECTED N     a second thread flips the path buffer
 *                               between "harmless" and PROTECTED while the
 *                               first opens it O_WRONLY|O_CREAT|O_TRUNC and
 *                               writes "PWN"
 *   unrace rename PROTECTED N   the same with rename(buf, "moved")
 *   unrace parent DIR N         a second thread swaps "d" between a real
 *                               directory and a symlink to DIR while the
 *                               first creates d/pre-commit
 *   unrace exec PROTECTED N     in a forked child, a second thread flips
 *                               the path buffer between "harmless" (a
 *                               program made in the run that exits 3) and
 *                               PROTECTED while the first execs it: 3 is
 *                               ok, 126 refused, any other status a breach
 *                               (PROTECTED ran)
 *
 * Prints "RACE MODE tries=N ok=X refused=Y breach=Z" (Z: files made in
 * the protected directory, parent mode); a test also checks the protected
 * file on disk; ok and refused both above 0 show that the race really ran
 * both ways. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static char buf[256];
static const char *prot;
static atomic_int stop;

static void *flip_name(void *arg)
{
    (void)arg;
    size_t n = strlen(prot);
    while (!atomic_load(&stop)) {
        memcpy(buf, "harmless", 9);
        memcpy(buf, prot, n + 1);
    }
    return NULL;
}

/* d and d.other swap places: one a real directory, one a link to prot. */
static void *flip_parent(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop))
        syscall(SYS_renameat2, AT_FDCWD, "d", AT_FDCWD, "d.other", RENAME_EXCHANGE);
    return NULL;
}

/* One exec of buf while a thread of the child flips it: 0 the harmless
 * program ran, -1 refused, 1 something else ran. */
static int exec_once(void)
{
    pid_t c = fork();
    if (c == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, flip_name, NULL) != 0) _exit(125);
        char *av[] = {buf, NULL};
        execve(buf, av, environ);
        _exit(126);
    }
    int st = 0;
    if (c < 0 || waitpid(c, &st, 0) < 0) return -1;
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 255;
    return code == 3 ? 0 : code == 126 ? -1 : 1;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: unrace open|rename|parent|exec NAME N\n");
        return 2;
    }
    const char *mode = argv[1];
    prot = argv[2];
    long n = atol(argv[3]), ok = 0, refused = 0, breach = 0;
    char planted[300];
    snprintf(planted, sizeof planted, "%s/pre-commit", prot);
    if (strlen(prot) >= sizeof buf - 1) return 2;
    memcpy(buf, "harmless", 9);
    pthread_t t;
    int parent = strcmp(mode, "parent") == 0, exec = strcmp(mode, "exec") == 0;
    if (parent) {
        if (mkdir("d", 0755) < 0 || symlink(prot, "d.other") < 0) {
            perror("unrace: setup");
            return 1;
        }
    }
    if (!parent && !exec) {
        int fd = open("harmless", O_WRONLY | O_CREAT, 0644);
        if (fd >= 0) close(fd);
    }
    /* exec: the flipping thread is the child's (fork keeps one thread). */
    if (!exec && pthread_create(&t, NULL, parent ? flip_parent : flip_name, NULL) != 0) return 1;
    /* At least n tries, and on until both outcomes were seen (the flipping
     * thread may not be scheduled at all for a while on a loaded machine),
     * at most 20 n. */
    long i;
    for (i = 0; i < n || ((!ok || !refused) && i < 20 * n); i++) {
        if (i % 64 == 0) sched_yield();
        int r;
        if (exec) {
            int e = exec_once();
            if (e > 0) breach++;
            r = e < 0 ? -1 : 0;
        } else if (parent) {
            int fd = open("d/pre-commit", O_WRONLY | O_CREAT | O_TRUNC, 0755);
            if (fd >= 0) {
                close(fd);
                /* made through the link: the protected directory got it */
                if (faccessat(AT_FDCWD, planted, F_OK, AT_SYMLINK_NOFOLLOW) == 0) breach++;
                unlink("d/pre-commit");
            }
            r = fd >= 0 ? 0 : -1;
        } else if (strcmp(mode, "open") == 0) {
            int fd = open(buf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd >= 0) {
                if (write(fd, "PWN\n", 4) < 0) {}
                close(fd);
            }
            r = fd >= 0 ? 0 : -1;
        } else {
            r = rename(buf, "moved");
            /* put back whatever moved, so the next try has its source */
            if (r == 0 && rename("moved", "harmless") < 0) {}
            if (r < 0 && errno == ENOENT) {
                int fd = open("harmless", O_WRONLY | O_CREAT, 0644);
                if (fd >= 0) close(fd);
            }
        }
        if (r == 0)
            ok++;
        else
            refused++;
    }
    atomic_store(&stop, 1);
    if (!exec) pthread_join(t, NULL);
    printf("RACE %s tries=%ld ok=%ld refused=%ld breach=%ld\n", mode, i, ok, refused, breach);
    return 0;
}
