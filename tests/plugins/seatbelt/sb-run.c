/* sb-run: builds a profile with the seatbelt builder and execs
 * /usr/bin/sandbox-exec with it, the way the plugin's plan does, so the
 * macOS smoke test (sandbox-exec.sh) exercises the real kernel path without
 * the rest of kgate.
 *
 *   sb-run [--strict] [--open] [--print] HOME PROJECT [DENY_READ] -- CMD [ARG...]
 *
 * --print writes the argv instead of executing it (for a failing test's
 * log).  TMPDIR from the environment, resolved by the caller, is used. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sb-profile.h"

int main(int argc, char **argv)
{
    kgate_policy pol = {
        .struct_size = sizeof pol, .network = KGATE_NET_OFF, .configured_network = KGATE_NET_OFF};
    int print = 0, i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0 && argv[i][2]; i++) {
        if (strcmp(argv[i], "--strict") == 0)
            pol.macos_profile = KGATE_MACOS_STRICT;
        else if (strcmp(argv[i], "--open") == 0)
            pol.network = KGATE_NET_OPEN;
        else if (strcmp(argv[i], "--print") == 0)
            print = 1;
        else {
            fprintf(stderr, "sb-run: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    const char *pos[3] = {NULL, NULL, NULL};
    int n = 0;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (n < 3) pos[n++] = argv[i];
    if (n < 2 || i + 1 >= argc) {
        fprintf(stderr, "usage: sb-run [--strict] [--open] [--print] HOME PROJECT "
                        "[DENY_READ] -- CMD [ARG...]\n");
        return 2;
    }
    pol.home = pos[0];
    pol.project = pos[1];
    if (pos[2]) pol.deny_read = (kgate_strlist){&pos[2], 1};
    const char *t = getenv("TMPDIR");
    if (t && *t == '/') pol.tmpdir = t;

    sb_profile prof;
    kgate_err err = {0};
    if (sb_build(&pol, SB_FORM_PARAMS, &prof, &err) < 0) {
        fprintf(stderr, "sb-run: %s\n", err.msg);
        return 2;
    }
    char **av = calloc(prof.n_params * 2 + (size_t)(argc - i) + 4, sizeof *av);
    if (!av) return 2;
    size_t k = 0;
    av[k++] = "/usr/bin/sandbox-exec";
    for (size_t p = 0; p < prof.n_params; p++) {
        av[k++] = "-D";
        av[k++] = prof.params[p];
    }
    av[k++] = "-p";
    av[k++] = prof.text;
    for (int a = i + 1; a < argc; a++) av[k++] = argv[a];
    av[k] = NULL;
    if (print) {
        for (size_t a = 0; a < k; a++) printf("%s\n", av[a]);
        return 0;
    }
    execv(av[0], av);
    perror("sb-run: exec /usr/bin/sandbox-exec");
    return 127;
}
