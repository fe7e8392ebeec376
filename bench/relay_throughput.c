/* relay_throughput.c: a command run under kg_supervise with a backend that
 * only forks and execs it, so that what is measured is the relay (pipe,
 * mask, write) and nothing of bubblewrap.  Compare
 *
 *   dd if=/dev/zero bs=1M count=2000 | dd of=/dev/null bs=1M
 *   build/bench/relay_throughput dd if=/dev/zero bs=1M count=2000 | dd of=/dev/null bs=1M
 *
 * The exit status is the command's, as under kgate run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "supervise.h"

extern char **environ;

static int launch(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
                  const kgate_plan *plan, const kgate_launch *io, kgate_proc *proc, kgate_err *err)
{
    (void)policy;
    (void)probe;
    size_t argc;
    const char *const *argv = host->plan_argv(plan, &argc);
    char **v = calloc(argc + 1, sizeof *v);
    if (!v) return kgate_err_set(err, 0, "out of memory");
    memcpy(v, argv, argc * sizeof *v);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(io->stdout_fd, 1);
        dup2(io->stderr_fd, 2);
        execvp(v[0], v);
        _exit(127);
    }
    free(v);
    if (pid < 0) return kgate_err_set(err, 0, "fork failed");
    proc->pid = pid;
    return 0;
}

static const kgate_backend bench = {
    KGATE_BACKEND_INIT,
    .name = "bench",
    .launch = launch,
};

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: relay_throughput COMMAND [ARG...]\n");
        return 2;
    }
    kg_host host;
    kg_host_init(&host);
    kgate_plan *plan = kg_plan_new();
    for (int i = 1; i < argc; i++) host.pub.plan_arg(plan, argv[i]);
    kg_supervise_opts opts = {0};
    kg_error err = {0};
    int status = 125;
    if (kg_supervise(&bench, &host, NULL, NULL, plan, (const char *const *)environ, &opts, &status,
                     &err) < 0) {
        fprintf(stderr, "relay_throughput: %s\n", err.msg);
        status = 125;
    }
    kg_plan_free(plan);
    if (getenv("RELAY_CPU")) {
        /* The relay's own CPU time, which the machine's load does not
         * change the way it changes wall time. */
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        fprintf(stderr, "relay cpu: user %.3f s, sys %.3f s\n",
                (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
                (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
    }
    return status;
}
