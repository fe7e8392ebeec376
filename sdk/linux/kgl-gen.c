/* kgl-gen.c: the build-time generators' shared main and emitter
 * (kgl-gen.h).  A program is exported to a memfd, read back whole and
 * written as a C array; the size is checked to be whole BPF instructions
 * (8 bytes each), so a short export cannot be embedded. */
#include "kgl-gen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The program as bytes (malloc'd, *len set), or NULL with msg. */
static unsigned char *export_bytes(kgl_gen_export_fn export, int which, size_t *len, char *msg,
                                   size_t msglen)
{
    struct stat st = {0};
    unsigned char *buf = NULL;
    int fd = memfd_create("kgl-gen", MFD_CLOEXEC);
    if (fd < 0) {
        snprintf(msg, msglen, "memfd_create: %s", strerror(errno));
        return NULL;
    }
    if (export(fd, which, msg, msglen) < 0) goto fail;
    if (fstat(fd, &st) < 0 || st.st_size <= 0 || st.st_size % 8 != 0) {
        snprintf(msg, msglen, "the exported program is not whole BPF instructions");
        goto fail;
    }
    *len = (size_t)st.st_size;
    buf = malloc(*len);
    if (!buf || pread(fd, buf, *len, 0) != (ssize_t)*len) {
        snprintf(msg, msglen, "cannot read the program back");
        free(buf);
        buf = NULL;
    }
fail:
    close(fd);
    return buf;
}

static int emit(FILE *out, const char *tool, kgl_gen_export_fn export, const kgl_gen_prog *prog)
{
    char msg[512] = "";
    size_t len = 0;
    unsigned char *buf = export_bytes(export, prog->which, &len, msg, sizeof msg);
    if (!buf) {
        fprintf(stderr, "%s: %s: %s\n", tool, prog->name, msg[0] ? msg : strerror(errno));
        return -1;
    }
    fprintf(out, "static const unsigned char %s[%zu] = {", prog->name, len);
    for (size_t i = 0; i < len; i++) fprintf(out, "%s0x%02x,", i % 12 ? " " : "\n    ", buf[i]);
    fprintf(out, "\n};\n");
    free(buf);
    return 0;
}

int kgl_gen_main(int argc, char **argv, const char *tool, const char *banner,
                 kgl_gen_export_fn export, const kgl_gen_prog *progs, size_t n)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTPUT.h\n", argv[0]);
        return 2;
    }
    FILE *out = fopen(argv[1], "w");
    if (!out) {
        fprintf(stderr, "%s: %s: %s\n", tool, argv[1], strerror(errno));
        return 1;
    }
    fputs(banner, out);
    for (size_t i = 0; i < n; i++)
        if (emit(out, tool, export, &progs[i]) < 0) {
            fclose(out);
            return 1;
        }
    return fclose(out) == 0 ? 0 : 1;
}
