/* fuzz-denyexec: the deny list's view of a shell string (sh -c STRING).
 *
 * The lexer is not a shell; what it must never do is crash, loop, recurse
 * without bound, or give an answer it cannot explain.  Checked:
 * - the answer is 0 (allowed) or 1 (blocked), never an error;
 * - a block has a one-line reason (it is printed as a kgate: line);
 * - the same string checked twice gives the same answer;
 * - "curl;" in front of any string is always blocked (the first command
 *   runs whatever follows it).
 * The PATH is a directory of our own so that no answer depends on the
 * machine: a denied name, a script that runs it, and a harmless file. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "denyexec.h"
#include "fuzz-util.h"

static char dir[64];
static kg_denyexec *dx;

static void put(const char *name, const char *text)
{
    char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
    FZ_CHECK(fd >= 0, "create %s", p);
    FZ_CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text), "write %s", p);
    close(fd);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(dir, sizeof dir, "%s/kg-fuzz-dx.XXXXXX", base);
    FZ_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    put("curl", "#!/bin/sh\nexit 0\n");
    put("fetch", "#!/bin/sh\ncurl \"$@\"\n");
    put("ok", "#!/bin/sh\necho ok\n");
    kg_strv *deny = kg_strv_new();
    kg_strv_push(deny, "curl");
    kg_strv_push(deny, "wget");
    kg_error err = {0};
    dx = kg_denyexec_new(deny, dir, NULL, &err);
    FZ_CHECK(dx != NULL, "kg_denyexec_new: %s", err.msg);
    kg_strv_free(deny);
    return 0;
}

static int check(const char *s, char *reason, size_t len)
{
    const char *argv[] = {"sh", "-c", s};
    kg_error err = {0};
    int r = kg_denyexec_check(dx, argv, 3, dir, reason, len, &err);
    FZ_CHECK(r == 0 || r == 1, "check returned %d (%s)", r, err.msg);
    if (r == 1) {
        FZ_CHECK(reason[0], "blocked without a reason");
        for (const unsigned char *p = (const unsigned char *)reason; *p; p++)
            FZ_CHECK(*p >= 0x20 && *p != 0x7f, "control byte in reason: %s", reason);
    }
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A C string: argv cannot hold a NUL. */
    char *s = malloc(size + 6);
    if (!s) return 0;
    memcpy(s, "curl;", 5);
    memcpy(s + 5, data, size);
    s[size + 5] = '\0';
    size_t len = strlen(s + 5);
    (void)len;
    char r1[512], r2[512], r3[512];
    int a = check(s + 5, r1, sizeof r1);
    int b = check(s + 5, r2, sizeof r2);
    FZ_CHECK(a == b && strcmp(r1, r2) == 0, "two checks of one string disagree: %d/%d", a, b);
    FZ_CHECK(check(s, r3, sizeof r3) == 1, "\"curl;\" in front was not blocked");
    free(s);
    return 0;
}
