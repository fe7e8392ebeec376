/* sf-nft.c: the packet filter loaded into the stage's network namespace,
 * in one transaction: the whole ruleset is in place, or none of it.
 *
 * The keeper loads it through libnftables, the library the nft tool is a
 * front end to (the same parser and the same netlink batch as `nft -f`),
 * opened with dlopen in the keeper alone: kgate, and every launch without
 * a host list, never map it.  An nft process cost each run about 10 ms
 * more CPU on a 2-vCPU VM (its exec, its mappings, its exit; measured with
 * the same ruleset in fresh network namespaces: 20.7 ms against 11.9 ms,
 * docs/performance.md), and a host list's launch is a chain of processes
 * on few CPUs.
 *
 * The nft tool stays the way where the library cannot be opened (a build
 * of nftables without it): the ruleset on its stdin, as before.  The probe
 * and the doctor still ask for the tool (docs/network.md). */
#include "sf-internal.h"

#include "kgate/kgate-linux.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* libnftables.so.1's functions used here, as its header (libnftables.h)
 * declares them.  Declared, not included: the build then needs no
 * libnftables-dev, and the soname fixes the ABI. */
struct nft_ctx;
typedef struct nft_ctx *(*nft_ctx_new_fn)(uint32_t flags);
typedef void (*nft_ctx_free_fn)(struct nft_ctx *ctx);
typedef int (*nft_ctx_buffer_fn)(struct nft_ctx *ctx);
typedef const char *(*nft_ctx_get_error_buffer_fn)(struct nft_ctx *ctx);
typedef int (*nft_run_cmd_from_buffer_fn)(struct nft_ctx *ctx, const char *buf);

typedef struct nftlib {
    nft_ctx_new_fn ctx_new;
    nft_ctx_free_fn ctx_free;
    nft_ctx_buffer_fn buffer_output;
    nft_ctx_buffer_fn buffer_error;
    nft_ctx_get_error_buffer_fn get_error_buffer;
    nft_run_cmd_from_buffer_fn run_cmd_from_buffer;
} nftlib;

/* The first line of text into msg (nft's errors go on with the input line
 * and a caret under it). */
static void first_line(char *msg, size_t cap, const char *text)
{
    snprintf(msg, cap, "%s", text && text[0] ? text : "no output");
    msg[strcspn(msg, "\n")] = '\0';
}

/* dlsym's result as a function pointer: POSIX guarantees the conversion,
 * ISO C does not, so it goes through memcpy. */
static int sym(void *h, const char *name, void *out, size_t size)
{
    void *p = dlsym(h, name);
    if (!p) return -1;
    memcpy(out, &p, size);
    return 0;
}

static int nftlib_open(nftlib *lib, const char *soname, char *msg, size_t cap)
{
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        first_line(msg, cap, dlerror());
        return -1;
    }
    if (sym(h, "nft_ctx_new", &lib->ctx_new, sizeof lib->ctx_new) < 0 ||
        sym(h, "nft_ctx_free", &lib->ctx_free, sizeof lib->ctx_free) < 0 ||
        sym(h, "nft_ctx_buffer_output", &lib->buffer_output, sizeof lib->buffer_output) < 0 ||
        sym(h, "nft_ctx_buffer_error", &lib->buffer_error, sizeof lib->buffer_error) < 0 ||
        sym(h, "nft_ctx_get_error_buffer", &lib->get_error_buffer, sizeof lib->get_error_buffer) <
            0 ||
        sym(h, "nft_run_cmd_from_buffer", &lib->run_cmd_from_buffer,
            sizeof lib->run_cmd_from_buffer) < 0) {
        first_line(msg, cap, dlerror());
        dlclose(h);
        return -1;
    }
    return 0;
}

int sf_nft_load_library(const char *soname, const char *ruleset, char *msg, size_t cap)
{
    nftlib lib;
    if (nftlib_open(&lib, soname, msg, cap) < 0) return 1;
    struct nft_ctx *ctx = lib.ctx_new(0 /* NFT_CTX_DEFAULT */);
    if (!ctx) {
        first_line(msg, cap, "libnftables: no context");
        return -1;
    }
    /* Both buffered: nothing is printed, the error is read back. */
    lib.buffer_output(ctx);
    lib.buffer_error(ctx);
    int r = lib.run_cmd_from_buffer(ctx, ruleset);
    if (r != 0) first_line(msg, cap, lib.get_error_buffer(ctx));
    lib.ctx_free(ctx);
    /* The library stays mapped: the keeper only waits from here on. */
    return r != 0 ? -1 : 0;
}

int sf_nft_tool_start(const char *nft, const char *ruleset, sf_nft_job *j)
{
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) < 0) return -1;
    if (pipe2(out, O_CLOEXEC) < 0) {
        close(in[0]);
        close(in[1]);
        return -1;
    }
    j->pid = fork();
    if (j->pid < 0) {
        int e = errno;
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        errno = e;
        return -1;
    }
    if (j->pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(out[1], 2);
        signal(SIGPIPE, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        char *const argv[] = {(char *)nft, "-f", "-", NULL};
        char *const envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
        execve(nft, argv, envp);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    /* A large ruleset outgrows the pipe: nft reads it all before it
     * works, and a tool that died early gives EPIPE (SIGPIPE is ignored
     * by the caller). */
    j->werr = kgl_write_all(in[1], ruleset, strlen(ruleset));
    close(in[1]);
    j->out = out[0];
    return 0;
}

int sf_nft_tool_finish(sf_nft_job *j, int wait_ms)
{
    char out[256] = "";
    ssize_t got = kgl_read_to_eof(j->out, out, sizeof out, wait_ms, KGL_READ_DRAIN);
    close(j->out);
    j->out = -1;
    int st = 0;
    while (waitpid(j->pid, &st, 0) < 0 && errno == EINTR) {}
    j->pid = -1;
    if (j->werr == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
    first_line(j->msg, sizeof j->msg, got > 0 ? out : NULL);
    return -1;
}

void sf_nft_begin(const char *soname, const char *nft, const char *ruleset, sf_nft_job *j)
{
    j->pid = -1;
    j->out = -1;
    j->werr = 0;
    j->failed = 0;
    int r = sf_nft_load_library(soname, ruleset, j->msg, sizeof j->msg);
    if (r <= 0) {
        j->failed = r < 0;
        return;
    }
    /* No library: the tool, which works on while the keeper goes on. */
    if (sf_nft_tool_start(nft, ruleset, j) < 0) {
        snprintf(j->msg, sizeof j->msg, "cannot start %s: %s", nft, strerror(errno));
        j->failed = 1;
    }
}

int sf_nft_end(sf_nft_job *j, int wait_ms)
{
    if (j->failed) return -1;
    if (j->pid < 0) return 0;
    return sf_nft_tool_finish(j, wait_ms);
}
