/* bench_denyexec.c: how long the exec deny list takes to decide on a
 * command line, with a deny list of 100 entries, as `kgate run` does it:
 * build the list (a PATH lookup per entry and per known wrapper), then
 * check.  Three checks are timed: with the fingerprint cache warm (held in
 * memory), reread from its file, and cold (no cache at all, so the files
 * whose size collides with a denied one are read and hashed).
 *
 *   ninja -C build bench/bench_denyexec && build/bench/bench_denyexec [N] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench-stats.h"
#include "denyexec.h"

/* A file of exactly size bytes that is not the file it is sized after:
 * the deny list must read both to tell them apart. */
static char *decoy(const char *dir, const char *like)
{
    struct stat st;
    if (stat(like, &st) != 0) return NULL;
    char *p = NULL;
    if (asprintf(&p, "%s/decoy-%s", dir, strrchr(like, '/') + 1) < 0) return NULL;
    FILE *f = fopen(p, "w");
    if (!f) return NULL;
    for (off_t i = 0; i < st.st_size; i++) fputc((int)(i * 7 + 1) & 0xff, f);
    fclose(f);
    chmod(p, 0755);
    return p;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)atoi(argv[1]) : 2000;
    if (n < 10) n = 10;
    char tmpl[] = "/tmp/kgate-bench-deny.XXXXXX";
    char *dir = mkdtemp(tmpl);
    if (!dir) return 1;
    char cache[256];
    snprintf(cache, sizeof cache, "%s/cache", dir);

    /* 100 entries: names found on PATH, names that are not there, paths,
     * and two decoys the size of programs the command line runs. */
    static const char *const found[] = {
        "curl",      "wget",   "nc",       "ssh",    "scp",     "rsync", "ftp",       "telnet",
        "socat",     "dd",     "mkfs",     "fdisk",  "parted",  "mount", "umount",    "chown",
        "chmod",     "sudo",   "su",       "passwd", "crontab", "at",    "systemctl", "journalctl",
        "iptables",  "ip",     "ifconfig", "route",  "tcpdump", "nmap",  "gpg",       "openssl",
        "base64",    "xxd",    "strace",   "ltrace", "gdb",     "perl",  "ruby",      "lua",
        "php",       "node",   "docker",   "podman", "kubectl", "aws",   "gcloud",    "az",
        "terraform", "ansible"};
    kg_strv *deny = kg_strv_new();
    for (size_t i = 0; i < sizeof found / sizeof *found; i++) kg_strv_push(deny, found[i]);
    for (int i = 0; kg_strv_len(deny) < 96; i++) {
        char name[64];
        snprintf(name, sizeof name, "not-installed-tool-%02d", i);
        kg_strv_push(deny, name);
    }
    kg_strv_push(deny, "/usr/sbin/reboot");
    kg_strv_push(deny, "~/bin/deploy");
    char *d1 = decoy(dir, "/usr/bin/env"), *d2 = decoy(dir, "/usr/bin/make");
    kg_strv_push(deny, d1 ? d1 : "/nonexistent/a");
    kg_strv_push(deny, d2 ? d2 : "/nonexistent/b");

    const char *path = getenv("PATH");
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    /* What an agent typically runs: a wrapper, a shell string, a pipe. */
    const char *cmd[] = {
        "env", "CC=gcc", "sh", "-c", "make -j2 test 2>&1 | tail -n 20 && git status --short", NULL};
    size_t cmdc = 5;

    double *t_new = calloc(n, sizeof(double)), *t_warm = calloc(n, sizeof(double)),
           *t_file = calloc(n, sizeof(double)), *t_cold = calloc(n, sizeof(double)),
           *t_all = calloc(n, sizeof(double));
    if (!t_new || !t_warm || !t_file || !t_cold || !t_all) return 1;
    kg_error err = {0};
    char reason[512];
    int verdict = -2;

    /* Construction, and the whole of what kgate run does (new + check +
     * free) with the cache file in place. */
    for (size_t i = 0; i < n; i++) {
        double t0 = kgb_now_us();
        kg_denyexec *d = kg_denyexec_new(deny, path, cache, &err);
        double t1 = kgb_now_us();
        if (!d) {
            fprintf(stderr, "bench_denyexec: %s\n", err.msg);
            return 1;
        }
        verdict = kg_denyexec_check(d, cmd, cmdc, dir, reason, sizeof reason, &err);
        kg_denyexec_free(d);
        double t2 = kgb_now_us();
        t_new[i] = t1 - t0;
        t_all[i] = t2 - t0;
    }
    if (verdict != 0) {
        fprintf(stderr, "bench_denyexec: the command was %s: %s\n",
                verdict > 0 ? "blocked" : "not decided", verdict > 0 ? reason : err.msg);
        return 1;
    }

    kg_denyexec *d = kg_denyexec_new(deny, path, cache, &err);
    kg_denyexec_check(d, cmd, cmdc, dir, reason, sizeof reason, &err);
    for (size_t i = 0; i < n; i++) {
        double t0 = kgb_now_us();
        kg_denyexec_check(d, cmd, cmdc, dir, reason, sizeof reason, &err);
        t_warm[i] = kgb_now_us() - t0;
    }
    for (size_t i = 0; i < n; i++) {
        kg_denyexec_forget_cache(d);
        double t0 = kgb_now_us();
        kg_denyexec_check(d, cmd, cmdc, dir, reason, sizeof reason, &err);
        t_file[i] = kgb_now_us() - t0;
    }
    kg_denyexec_free(d);
    /* No cache directory: every fingerprint is computed from the bytes. */
    d = kg_denyexec_new(deny, path, NULL, &err);
    for (size_t i = 0; i < n; i++) {
        kg_denyexec_forget_cache(d);
        double t0 = kgb_now_us();
        kg_denyexec_check(d, cmd, cmdc, dir, reason, sizeof reason, &err);
        t_cold[i] = kgb_now_us() - t0;
    }
    kg_denyexec_free(d);

    printf("deny    %zu entries, command: env CC=gcc sh -c '%s'\n", kg_strv_len(deny), cmd[4]);
    kgb_report("deny", "build the list", t_new, n);
    kgb_report("deny", "check, cache warm", t_warm, n);
    kgb_report("deny", "check, cache from file", t_file, n);
    kgb_report("deny", "check, cache cold", t_cold, n);
    kgb_report("deny", "build+check+free (run)", t_all, n);
    printf("deny    cold/warm = %.2f\n", t_cold[n / 2] / t_warm[n / 2]);

    char rm[300];
    snprintf(rm, sizeof rm, "%s/cache/exec-fingerprints", dir);
    unlink(rm);
    snprintf(rm, sizeof rm, "%s/cache", dir);
    rmdir(rm);
    if (d1) unlink(d1);
    if (d2) unlink(d2);
    rmdir(dir);
    free(d1);
    free(d2);
    free(t_new);
    free(t_warm);
    free(t_file);
    free(t_cold);
    free(t_all);
    kg_strv_free(deny);
    return 0;
}
