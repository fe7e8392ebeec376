/* test_plugin_check.c: a plugin file cut short, empty, random or not a
 * library is refused with one line before dlopen() can map it; whole
 * libraries (ours, the test plugins, every shared library of the system)
 * are accepted.  Linux only: the plugins here are ELF (the Mach-O check is
 * tested on images made here). */
#include <check.h>
#include <dirent.h>
#include <elf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader.h"
#include "plugin-check.h"
#include "testutil.h"

#define SUFFIX KG_TEST_PLUGIN_SUFFIX

static char tmpdir[] = "/tmp/kgate-pcheck-XXXXXX";
static unsigned char *good;
static size_t good_len;

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    struct stat st;
    ck_assert_int_eq(fstat(fileno(f), &st), 0);
    unsigned char *b = malloc((size_t)st.st_size + 1);
    *len = fread(b, 1, (size_t)st.st_size, f);
    fclose(f);
    return b;
}

static void setup(void)
{
    strcpy(tmpdir, "/tmp/kgate-pcheck-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    unsetenv("KGATE_DEBUG");
    good = slurp(KG_TEST_PLUGIN_DIR "/tp_good" SUFFIX, &good_len);
}

static void teardown(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    free(good);
}

static char *put(const char *name, const void *data, size_t len)
{
    static char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    kgt_write_file(path, data, len, 0755);
    return path;
}

/* Loads tmpdir: the good plugin (as z-good) must load whatever else is
 * there, and every other file must be one refusal. */
static kg_registry *load_with_good(size_t others)
{
    put("z-good" SUFFIX, good, good_len);
    kg_strv *dirs = kg_strv_new();
    kg_strv_push(dirs, tmpdir);
    kg_registry *r = kg_registry_load_dirs(dirs, 0);
    kg_strv_free(dirs);
    ck_assert_ptr_nonnull(kg_registry_find(r, "good"));
    ck_assert_uint_eq(kg_strv_len(r->refusals), others);
    for (size_t i = 0; i < others; i++)
        ck_assert_ptr_null(strchr(kg_strv_get(r->refusals, i), '\n'));
    return r;
}

static int check_file(const char *path, char *why, size_t len)
{
    why[0] = '\0';
    int r = kg_plugin_file_check(path, why, len);
    if (r < 0) ck_assert_msg(why[0] && !strchr(why, '\n'), "reason: '%s'", why);
    return r;
}

START_TEST(whole_plugin_accepted)
{
    char why[256];
    ck_assert_int_eq(check_file(put("a" SUFFIX, good, good_len), why, sizeof why), 0);
    ck_assert_int_eq(kg_elf_check_mem(good, good_len, why, sizeof why), 0);
    kg_registry_free(load_with_good(1)); /* a: the same name again */
}
END_TEST

/* The case: the first 3,000 bytes of a real plugin (and other
 * cuts) killed every kgate command with SIGBUS.  In fork mode a SIGBUS
 * here is a test error, so this fails without the check. */
START_TEST(cut_short_refused_others_load)
{
    size_t cuts[] = {
        0, 1, 4, 16, 52, 63, 64, 100, 1000, 3000, good_len / 2, good_len - 64, good_len - 1};
    size_t n = sizeof cuts / sizeof cuts[0];
    char why[256];
    for (size_t i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "cut-%05zu" SUFFIX, cuts[i]);
        const char *p = put(name, good, cuts[i]);
        ck_assert_msg(check_file(p, why, sizeof why) < 0, "cut at %zu accepted", cuts[i]);
        ck_assert_int_lt(kg_elf_check_mem(good, cuts[i], why, sizeof why), 0);
    }
    /* Every cut, in memory: none is accepted (the section header table is
     * the last thing a linker writes). */
    for (size_t k = 0; k < good_len; k++)
        ck_assert_msg(kg_elf_check_mem(good, k, why, sizeof why) < 0, "cut at %zu accepted", k);
    kg_registry *r = load_with_good(n);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "%s/cut-03000" SUFFIX ": cut short: ", tmpdir);
    int found = 0;
    for (size_t i = 0; i < n; i++)
        found |= strncmp(kg_strv_get(r->refusals, i), want, strlen(want)) == 0;
    ck_assert_msg(found, "no 'cut short' line for the 3,000-byte cut");
    kg_registry_free(r);
}
END_TEST

START_TEST(empty_random_and_text_refused)
{
    unsigned char rnd[8192];
    uint64_t s = 0x9e3779b97f4a7c15ULL;
    for (size_t i = 0; i < sizeof rnd; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        rnd[i] = (unsigned char)(s >> 56);
    }
    char why[256];
    ck_assert_int_lt(check_file(put("empty" SUFFIX, "", 0), why, sizeof why), 0);
    ck_assert_int_lt(check_file(put("random" SUFFIX, rnd, sizeof rnd), why, sizeof why), 0);
    ck_assert_str_eq(why, "not an ELF file");
    const char *text = "#!/bin/sh\necho not a library\n";
    ck_assert_int_lt(check_file(put("text" SUFFIX, text, strlen(text)), why, sizeof why), 0);
    ck_assert_str_eq(why, "not an ELF file");
    /* Random bytes behind a valid ELF header's first bytes. */
    memcpy(rnd, good, 64);
    ck_assert_int_lt(check_file(put("elfrandom" SUFFIX, rnd, sizeof rnd), why, sizeof why), 0);
    kg_registry_free(load_with_good(4));
}
END_TEST

/* Each check on its own: one field of a whole plugin made wrong. */
typedef void (*mutate_fn)(unsigned char *b, size_t len);

static Elf64_Ehdr *eh(unsigned char *b) { return (Elf64_Ehdr *)b; }
static Elf64_Phdr *ph(unsigned char *b, int type)
{
    Elf64_Phdr *p = (Elf64_Phdr *)(b + eh(b)->e_phoff);
    for (int i = 0; i < eh(b)->e_phnum; i++)
        if (p[i].p_type == (Elf64_Word)type) return &p[i];
    ck_abort_msg("no segment of type %d", type);
    return NULL;
}
static Elf64_Dyn *dyn_tag(unsigned char *b, Elf64_Sxword tag)
{
    Elf64_Dyn *d = (Elf64_Dyn *)(b + ph(b, PT_DYNAMIC)->p_offset);
    for (; d->d_tag != DT_NULL; d++)
        if (d->d_tag == tag) return d;
    ck_abort_msg("no dynamic tag %lld", (long long)tag);
    return NULL;
}

static void m_class(unsigned char *b, size_t l)
{
    (void)l;
    b[EI_CLASS] = ELFCLASS32;
}
static void m_type(unsigned char *b, size_t l)
{
    (void)l;
    eh(b)->e_type = ET_EXEC;
}
static void m_phoff(unsigned char *b, size_t l) { eh(b)->e_phoff = l - 8; }
static void m_phentsize(unsigned char *b, size_t l)
{
    (void)l;
    eh(b)->e_phentsize = 40;
}
static void m_shoff(unsigned char *b, size_t l) { eh(b)->e_shoff = l; }
static void m_load_past_end(unsigned char *b, size_t l) { ph(b, PT_LOAD)->p_filesz = l; }
static void m_load_wrap(unsigned char *b, size_t l)
{
    (void)l;
    ph(b, PT_LOAD)->p_offset = UINT64_MAX - 8;
}
static void m_dynamic_unloaded(unsigned char *b, size_t l)
{
    (void)l;
    ph(b, PT_DYNAMIC)->p_vaddr = 0x7fff0000;
}
static void m_strtab(unsigned char *b, size_t l)
{
    (void)l;
    dyn_tag(b, DT_STRTAB)->d_un.d_ptr = 0x7fff0000;
}
static void m_strsz(unsigned char *b, size_t l)
{
    (void)l;
    dyn_tag(b, DT_STRSZ)->d_un.d_val = 1u << 30;
}
static void m_no_dt_null(unsigned char *b, size_t l)
{
    (void)l;
    Elf64_Phdr *d = ph(b, PT_DYNAMIC);
    Elf64_Dyn *x = (Elf64_Dyn *)(b + d->p_offset);
    for (size_t i = 0; i < d->p_filesz / sizeof *x; i++)
        if (x[i].d_tag == DT_NULL) x[i].d_tag = DT_DEBUG;
}

START_TEST(each_field_checked)
{
    static const struct {
        const char *what;
        mutate_fn f;
    } m[] = {
        {"32-bit class", m_class},
        {"not ET_DYN", m_type},
        {"program headers past the end", m_phoff},
        {"odd program header size", m_phentsize},
        {"section headers past the end", m_shoff},
        {"a loaded segment past the end", m_load_past_end},
        {"a segment offset that wraps", m_load_wrap},
        {"dynamic section not loaded", m_dynamic_unloaded},
        {"string table outside", m_strtab},
        {"string table size outside", m_strsz},
        {"no DT_NULL", m_no_dt_null},
    };
    char why[256];
    ck_assert_int_eq(kg_elf_check_mem(good, good_len, why, sizeof why), 0);
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        unsigned char *b = malloc(good_len);
        memcpy(b, good, good_len);
        m[i].f(b, good_len);
        why[0] = '\0';
        ck_assert_msg(kg_elf_check_mem(b, good_len, why, sizeof why) < 0, "%s accepted", m[i].what);
        ck_assert_msg(why[0] && !strchr(why, '\n'), "%s: reason '%s'", m[i].what, why);
        free(b);
    }
}
END_TEST

/* No false refusals: kgate's own plugins and every shared library in the
 * system's library directories pass. */
START_TEST(real_libraries_accepted)
{
    size_t seen = 0;
    const char *dirs[] = {getenv("KGATE_PLUGIN_PATH"), "/usr/lib/x86_64-linux-gnu",
                          "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64"};
    for (size_t k = 0; k < sizeof dirs / sizeof dirs[0]; k++) {
        if (!dirs[k]) continue;
        char *list = strdup(dirs[k]), *save = NULL;
        for (char *d = strtok_r(list, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
            DIR *dh = opendir(d);
            if (!dh) continue;
            struct dirent *e;
            while ((e = readdir(dh))) {
                if (!strstr(e->d_name, ".so")) continue;
                char p[PATH_MAX];
                snprintf(p, sizeof p, "%s/%s", d, e->d_name);
                struct stat st;
                unsigned char hd[18];
                if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) continue;
                FILE *f = fopen(p, "rb");
                if (!f) continue;
                size_t got = fread(hd, 1, sizeof hd, f);
                fclose(f);
                /* Linker scripts (libc.so) and executables are not ours. */
                if (got < 18 || memcmp(hd, ELFMAG, SELFMAG) != 0 || hd[16] != ET_DYN) continue;
                char why[256];
                ck_assert_msg(check_file(p, why, sizeof why) == 0, "%s refused: %s", p, why);
                seen++;
            }
            closedir(dh);
        }
        free(list);
    }
    ck_assert_uint_gt(seen, 3);
}
END_TEST

/* The Mach-O check (used on macOS) on images made here: a 64-bit header
 * and one LC_SEGMENT_64 whose file bytes are the image's tail. */
static void le32put(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void le64put(unsigned char *p, uint64_t v)
{
    le32put(p, (uint32_t)v);
    le32put(p + 4, (uint32_t)(v >> 32));
}
static void be32put(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (24 - 8 * i));
}

static size_t macho(unsigned char *b, uint64_t seg_size)
{
    memset(b, 0, 4096);
    le32put(b, 0xfeedfacf); /* MH_MAGIC_64 */
    le32put(b + 12, 6); /* MH_DYLIB */
    le32put(b + 16, 1); /* ncmds */
    le32put(b + 20, 72); /* sizeofcmds */
    unsigned char *lc = b + 32;
    le32put(lc, 0x19); /* LC_SEGMENT_64 */
    le32put(lc + 4, 72);
    le64put(lc + 40, 512); /* fileoff */
    le64put(lc + 48, seg_size);
    return 512 + 1024;
}

START_TEST(macho_extents)
{
    unsigned char b[8192];
    char why[256];
    size_t n = macho(b, 1024);
    ck_assert_int_eq(kg_macho_check_mem(b, n, why, sizeof why), 0);
    ck_assert_int_lt(kg_macho_check_mem(b, n - 1, why, sizeof why), 0);
    ck_assert_str_eq(why, "cut short: segment 0 ends past the end of the file");
    ck_assert_int_lt(kg_macho_check_mem(b, 40, why, sizeof why), 0);
    ck_assert_int_lt(kg_macho_check_mem(b, 0, why, sizeof why), 0);
    ck_assert_int_lt(kg_macho_check_mem(good, good_len, why, sizeof why), 0);
    macho(b, UINT64_MAX - 100); /* a size that wraps */
    ck_assert_int_lt(kg_macho_check_mem(b, n, why, sizeof why), 0);
    macho(b, 1024);
    le32put(b + 20, 4000); /* commands past the end */
    ck_assert_int_lt(kg_macho_check_mem(b, 200, why, sizeof why), 0);
    /* A universal file with the image as its one slice at 4096. */
    unsigned char u[8192];
    memset(u, 0, sizeof u);
    be32put(u, 0xcafebabe);
    be32put(u + 4, 1);
    be32put(u + 8 + 8, 4096);
    be32put(u + 8 + 12, (uint32_t)n);
    macho(u + 4096, 1024);
    ck_assert_int_eq(kg_macho_check_mem(u, 4096 + n, why, sizeof why), 0);
    ck_assert_int_lt(kg_macho_check_mem(u, 4096 + n - 1, why, sizeof why), 0);
    ck_assert_str_eq(why, "cut short: slice 0 ends past the end of the file");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("plugin_check");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, whole_plugin_accepted);
    tcase_add_test(tc, cut_short_refused_others_load);
    tcase_add_test(tc, empty_random_and_text_refused);
    tcase_add_test(tc, each_field_checked);
    tcase_add_test(tc, real_libraries_accepted);
    tcase_add_test(tc, macho_extents);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
