/* test_loader.c: plugin discovery and every refusal the loader makes, with
 * plugins built by tests/unit/plugins/meson.build; and the frozen layout of
 * the SDK structs. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kgate-config.h"
#include "loader.h"
#include "testutil.h"

#define SUFFIX KG_TEST_PLUGIN_SUFFIX

static char tmpdir[] = "/tmp/kgate-loader-XXXXXX";

static void setup(void)
{
    strcpy(tmpdir, "/tmp/kgate-loader-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    unsetenv("KGATE_DEBUG");
}

static void teardown(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
}

static void copy_file(const char *from, const char *to, mode_t mode)
{
    FILE *in = fopen(from, "rb");
    ck_assert_msg(in != NULL, "cannot open %s", from);
    FILE *out = fopen(to, "wb");
    ck_assert_ptr_nonnull(out);
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) ck_assert_uint_eq(fwrite(buf, 1, n, out), n);
    fclose(in);
    fclose(out);
    ck_assert_int_eq(chmod(to, mode), 0);
}

/* Puts test plugin variant as tmpdir/name. */
static void put(const char *variant, const char *name)
{
    char from[1024], to[1024];
    snprintf(from, sizeof from, "%s/tp_%s%s", KG_TEST_PLUGIN_DIR, variant, SUFFIX);
    snprintf(to, sizeof to, "%s/%s", tmpdir, name);
    copy_file(from, to, 0755);
}

static kg_registry *load_tmp(int verbose)
{
    kg_strv *dirs = kg_strv_new();
    kg_strv_push(dirs, tmpdir);
    kg_registry *r = kg_registry_load_dirs(dirs, verbose);
    kg_strv_free(dirs);
    ck_assert_ptr_nonnull(r);
    return r;
}

/* The one refusal a directory holding only name produced. */
static void assert_refused(kg_registry *r, const char *name, const char *reason)
{
    char line[2048];
    snprintf(line, sizeof line, "%s/%s: %s", tmpdir, name, reason);
    ck_assert_uint_eq(kg_strv_len(r->refusals), 1);
    ck_assert_str_eq(kg_strv_get(r->refusals, 0), line);
    ck_assert_uint_eq(HASH_COUNT(r->by_name), 0);
}

static void refused_variant(const char *variant, const char *reason)
{
    char name[64];
    snprintf(name, sizeof name, "%s%s", variant, SUFFIX);
    put(variant, name);
    kg_registry *r = load_tmp(0);
    assert_refused(r, name, reason);
    kg_registry_free(r);
}

START_TEST(loads_valid_plugin)
{
    put("good", "good" SUFFIX);
    kg_registry *r = load_tmp(0);
    ck_assert_uint_eq(kg_strv_len(r->refusals), 0);
    kg_plugin *p = kg_registry_find(r, "good");
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(p->be.description, "a valid test backend");
    ck_assert(p->be.probe != NULL);
    ck_assert(p->be.launch != NULL);
    ck_assert_ptr_nonnull(p->handle);
    ck_assert_uint_eq(p->abi_minor, KGATE_ABI_MINOR);
    ck_assert_int_eq(p->probed, 0);
    char path[1024];
    snprintf(path, sizeof path, "%s/good%s", tmpdir, SUFFIX);
    ck_assert_str_eq(p->path, path);
    ck_assert_ptr_null(kg_registry_find(r, "missing"));
    kg_registry_free(r);
}
END_TEST

START_TEST(refuses_wrong_major)
{
    char why[64];
    snprintf(why, sizeof why, "ABI major %d, kgate needs %d", KGATE_ABI_MAJOR + 1, KGATE_ABI_MAJOR);
    refused_variant("major", why);
}
END_TEST

/* A plugin built for ABI 1 (launch without the probe) would be called
 * with the wrong arguments: its major refuses it, before any method. */
START_TEST(refuses_old_major)
{
    char why[64];
    snprintf(why, sizeof why, "ABI major 1, kgate needs %d", KGATE_ABI_MAJOR);
    refused_variant("old", why);
}
END_TEST

START_TEST(refuses_missing_symbol) { refused_variant("nosym", "no kgate_plugin_entry symbol"); }
END_TEST

START_TEST(refuses_small_struct)
{
    char why[64];
    snprintf(why, sizeof why, "kgate_backend too small (%zu bytes)",
             offsetof(kgate_backend, release));
    refused_variant("small", why);
}
END_TEST

START_TEST(refuses_null_entry) { refused_variant("null", "kgate_plugin_entry() returned NULL"); }
END_TEST

START_TEST(refuses_missing_name) { refused_variant("noname", "backend has no name"); }
END_TEST

START_TEST(refuses_invalid_name_on_one_line)
{
    refused_variant("badname", "invalid name \"Bad?Name\" (must be 1 to 64 of [a-z0-9-])");
}
END_TEST

START_TEST(refuses_non_library)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/notalib%s", tmpdir, SUFFIX);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("this is text, not an ELF or Mach-O file\n", f);
    fclose(f);
    kg_registry *r = load_tmp(0);
    ck_assert_uint_eq(kg_strv_len(r->refusals), 1);
    /* The reason is dlerror()'s, without the path repeated in front. */
    ck_assert_str_eq(kg_strv_get(r->refused_files, 0), path);
    const char *why = kg_strv_get(r->refused_reasons, 0);
    ck_assert_uint_gt(strlen(why), 0);
    ck_assert_ptr_null(strstr(why, path));
    ck_assert_ptr_null(strchr(why, '\n'));
    kg_registry_free(r);
}
END_TEST

START_TEST(refuses_duplicate_name_keeps_first)
{
    /* Sorted by file name: a_first loads, b_second is the duplicate. */
    put("dup", "a_first" SUFFIX);
    put("good", "b_second" SUFFIX);
    kg_registry *r = load_tmp(0);
    char why[2048];
    snprintf(why, sizeof why, "duplicate name good (already loaded from %s/a_first%s)", tmpdir,
             SUFFIX);
    ck_assert_uint_eq(kg_strv_len(r->refusals), 1);
    ck_assert_str_eq(kg_strv_get(r->refused_reasons, 0), why);
    kg_plugin *p = kg_registry_find(r, "good");
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(strstr(p->path, "a_first"));
    kg_registry_free(r);
}
END_TEST

START_TEST(newer_minor_loads_as_known_part)
{
    put("newer", "newer" SUFFIX);
    kg_registry *r = load_tmp(0);
    ck_assert_uint_eq(kg_strv_len(r->refusals), 0);
    kg_plugin *p = kg_registry_find(r, "newer");
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(p->abi_minor, KGATE_ABI_MINOR + 1);
    ck_assert_uint_eq(p->be.struct_size, sizeof(kgate_backend));
    ck_assert(p->be.launch != NULL);
    kg_registry_free(r);
}
END_TEST

/* The other direction: a core of a later minor (simulated by a bigger host
 * struct) reading a 2.0 plugin sees the methods it lacks as NULL. */
START_TEST(older_plugin_reads_null_methods)
{
    typedef struct {
        kgate_backend base;
        int (*later_method)(void);
        void *later_field;
    } later_host;
    kgate_backend old = {KGATE_BACKEND_INIT, .name = "old"};
    later_host h;
    memset(&h, 0xAB, sizeof h);
    size_t n = kg_backend_copy(&h, sizeof h, &old);
    ck_assert_uint_eq(n, sizeof(kgate_backend));
    ck_assert(h.later_method == NULL);
    ck_assert(h.later_field == NULL);
    ck_assert_str_eq(h.base.name, "old");

    /* And a bigger plugin struct is cut to what the host knows. */
    kgate_backend small_host;
    later_host big = {.base = {KGATE_BACKEND_INIT, .name = "big"}};
    big.base.struct_size = sizeof big;
    ck_assert_uint_eq(kg_backend_copy(&small_host, sizeof small_host, &big.base),
                      sizeof small_host);
}
END_TEST

START_TEST(partial_plugin_loads)
{
    put("partial", "partial" SUFFIX);
    kg_registry *r = load_tmp(0);
    kg_plugin *p = kg_registry_find(r, "partial");
    ck_assert_ptr_nonnull(p);
    ck_assert(p->be.plan == NULL);
    ck_assert(p->be.launch == NULL);
    kg_registry_free(r);
}
END_TEST

START_TEST(one_bad_plugin_does_not_stop_the_others)
{
    put("badname", "a" SUFFIX);
    put("major", "b" SUFFIX);
    put("good", "c" SUFFIX);
    put("nosym", "d" SUFFIX);
    put("dup", "e" SUFFIX);
    put("small", "f" SUFFIX);
    put("newer", "g" SUFFIX);
    put("null", "h" SUFFIX);
    kg_registry *r = load_tmp(0);
    ck_assert_uint_eq(HASH_COUNT(r->by_name), 2);
    ck_assert_uint_eq(kg_strv_len(r->refusals), 6);
    /* Load order is file-name order. */
    ck_assert_str_eq(r->by_name->name, "good");
    ck_assert_str_eq(((kg_plugin *)r->by_name->hh.next)->name, "newer");
    for (size_t i = 1; i < kg_strv_len(r->refused_files); i++)
        ck_assert_int_lt(
            strcmp(kg_strv_get(r->refused_files, i - 1), kg_strv_get(r->refused_files, i)), 0);
    kg_registry_free(r);
}
END_TEST

START_TEST(only_suffix_and_regular_files)
{
    put("good", "good.txt");
    put("good", ".hidden" SUFFIX);
    put("good", "good" SUFFIX ".1");
    char d[1024];
    snprintf(d, sizeof d, "%s/dir%s", tmpdir, SUFFIX);
    ck_assert_int_eq(mkdir(d, 0755), 0);
    kg_registry *r = load_tmp(0);
    ck_assert_uint_eq(HASH_COUNT(r->by_name), 0);
    assert_refused(r, "dir" SUFFIX, "not a regular file");
    kg_registry_free(r);
}
END_TEST

START_TEST(symlink_to_plugin_is_followed)
{
    char real[1024], link[1024];
    put("good", "real.bin");
    snprintf(real, sizeof real, "%s/real.bin", tmpdir);
    snprintf(link, sizeof link, "%s/good%s", tmpdir, SUFFIX);
    ck_assert_int_eq(symlink(real, link), 0);
    kg_registry *r = load_tmp(0);
    ck_assert_uint_eq(kg_strv_len(r->refusals), 0);
    ck_assert_ptr_nonnull(kg_registry_find(r, "good"));
    kg_registry_free(r);
}
END_TEST

START_TEST(refuses_writable_by_others)
{
    put("good", "good" SUFFIX);
    char path[1024];
    snprintf(path, sizeof path, "%s/good%s", tmpdir, SUFFIX);
    ck_assert_int_eq(chmod(path, 0757), 0);
    kg_registry *r = load_tmp(0);
    assert_refused(r, "good" SUFFIX, "writable by others (mode 0757)");
    kg_registry_free(r);
    ck_assert_int_eq(chmod(path, 0775), 0);
    r = load_tmp(0);
    assert_refused(r, "good" SUFFIX, "writable by its group (mode 0775)");
    kg_registry_free(r);
}
END_TEST

START_TEST(search_path_from_environment)
{
    setenv("KGATE_PLUGIN_PATH", "::/a::rel:/b:", 1);
    kg_strv *d = kg_plugin_search_path();
    ck_assert_uint_eq(kg_strv_len(d), 4);
    ck_assert_str_eq(kg_strv_get(d, 0), "/a");
    ck_assert_str_eq(kg_strv_get(d, 1), "rel");
    ck_assert_str_eq(kg_strv_get(d, 2), "/b");
    ck_assert_str_eq(kg_strv_get(d, 3), KGATE_PLUGINDIR);
    kg_strv_free(d);
    unsetenv("KGATE_PLUGIN_PATH");
    d = kg_plugin_search_path();
    ck_assert_uint_eq(kg_strv_len(d), 1);
    kg_strv_free(d);
}
END_TEST

START_TEST(relative_and_repeated_directories)
{
    put("good", "good" SUFFIX);
    char env[2048];
    snprintf(env, sizeof env, "%s:relative/dir:%s/", tmpdir, tmpdir);
    setenv("KGATE_PLUGIN_PATH", env, 1);
    kg_registry *r = kg_registry_load(0);
    ck_assert_ptr_nonnull(kg_registry_find(r, "good"));
    /* The repeated directory is not a source of duplicates. */
    ck_assert_uint_eq(kg_strv_len(r->refusals), 1);
    ck_assert_str_eq(kg_strv_get(r->refusals, 0),
                     "relative/dir: relative directory in plugin path, ignored");
    ck_assert_str_eq(kg_strv_get(r->searched, 0), tmpdir);
    kg_registry_free(r);
    unsetenv("KGATE_PLUGIN_PATH");
}
END_TEST

/* Runs a load with stderr captured into buf. */
static void load_capturing(int verbose, char *buf, size_t len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/stderr.txt", tmpdir);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    dup2(fd, 2);
    close(fd);
    kg_registry *r = load_tmp(verbose);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    kg_registry_free(r);
    FILE *f = fopen(path, "r");
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
}

START_TEST(refusal_lines_on_stderr_only_when_asked)
{
    put("nosym", "nosym" SUFFIX);
    char buf[4096], want[2048];
    snprintf(want, sizeof want, "kgate: plugin %s/nosym%s: no kgate_plugin_entry symbol\n", tmpdir,
             SUFFIX);
    load_capturing(1, buf, sizeof buf);
    ck_assert_str_eq(buf, want);
    load_capturing(0, buf, sizeof buf);
    ck_assert_str_eq(buf, "");
    setenv("KGATE_DEBUG", "1", 1);
    load_capturing(0, buf, sizeof buf);
    ck_assert_str_eq(buf, want);
    setenv("KGATE_DEBUG", "0", 1);
    load_capturing(0, buf, sizeof buf);
    ck_assert_str_eq(buf, "");
}
END_TEST

/* A named directory that does not exist is refused, not skipped: whoever
 * can create it later would choose what kgate loads.  The installed one
 * may be missing (nothing packaged) and stays silent. */
START_TEST(missing_directory_is_refused)
{
    kg_strv *dirs = kg_strv_new();
    kg_strv_push(dirs, "/nonexistent/kgate/plugins");
    kg_strv_push(dirs, KGATE_PLUGINDIR);
    kg_registry *r = kg_registry_load_dirs(dirs, 1);
    ck_assert_uint_eq(kg_strv_len(r->refusals), 1);
    ck_assert_str_eq(kg_strv_get(r->refusals, 0), "/nonexistent/kgate/plugins: does not exist");
    ck_assert_uint_eq(kg_strv_len(r->exposed), 0);
    ck_assert_uint_eq(HASH_COUNT(r->by_name), 0);
    kg_registry_free(r);
    kg_strv_free(dirs);
    kg_registry_free(NULL);
}
END_TEST

/* Loads dir with root as the one place a box could write. */
static kg_registry *load_exposed(const char *dir, const char *root)
{
    kg_strv *dirs = kg_strv_new(), *untrusted = kg_strv_new();
    kg_strv_push(dirs, dir);
    kg_strv_push(untrusted, root);
    kg_registry *r = kg_registry_load_dirs_in(dirs, untrusted, 0);
    kg_strv_free(dirs);
    kg_strv_free(untrusted);
    ck_assert_ptr_nonnull(r);
    return r;
}

START_TEST(refuses_directory_a_box_could_write)
{
    char proj[1024], plug[1100], line[4096];
    snprintf(proj, sizeof proj, "%s/proj", tmpdir);
    snprintf(plug, sizeof plug, "%s/plugins", proj);
    ck_assert_int_eq(mkdir(proj, 0755), 0);
    ck_assert_int_eq(mkdir(plug, 0755), 0);
    char from[1024], to[1200];
    snprintf(from, sizeof from, "%s/tp_good%s", KG_TEST_PLUGIN_DIR, SUFFIX);
    snprintf(to, sizeof to, "%s/good%s", plug, SUFFIX);
    copy_file(from, to, 0644);

    /* Control: with nothing exposed, the same directory loads. */
    kg_registry *r = load_exposed(plug, "/nonexistent-root");
    ck_assert_ptr_nonnull(kg_registry_find(r, "good"));
    kg_registry_free(r);

    r = load_exposed(plug, proj);
    ck_assert_ptr_null(kg_registry_find(r, "good"));
    snprintf(line, sizeof line, "%s: lies inside %s, which a program kgate runs here could write",
             plug, proj);
    ck_assert_uint_eq(kg_strv_len(r->refusals), 1);
    ck_assert_str_eq(kg_strv_get(r->refusals, 0), line);
    ck_assert_uint_eq(kg_strv_len(r->exposed), 1);
    ck_assert_str_eq(kg_strv_get(r->exposed, 0), line);
    kg_registry_free(r);

    /* Through a symbolic link that lies outside: judged where it leads. */
    char link[1200];
    snprintf(link, sizeof link, "%s/link", tmpdir);
    ck_assert_int_eq(symlink(plug, link), 0);
    r = load_exposed(link, proj);
    ck_assert_ptr_null(kg_registry_find(r, "good"));
    ck_assert_uint_eq(kg_strv_len(r->exposed), 1);
    snprintf(line, sizeof line,
             "%s: resolves to %s, inside %s, which a program kgate runs "
             "here could write",
             link, plug, proj);
    ck_assert_str_eq(kg_strv_get(r->exposed, 0), line);
    kg_registry_free(r);

    /* A file linked into a trusted directory from inside: the same. */
    char trusted[1100], flink[1200];
    snprintf(trusted, sizeof trusted, "%s/trusted", tmpdir);
    ck_assert_int_eq(mkdir(trusted, 0755), 0);
    snprintf(flink, sizeof flink, "%s/good%s", trusted, SUFFIX);
    ck_assert_int_eq(symlink(to, flink), 0);
    r = load_exposed(trusted, proj);
    ck_assert_ptr_null(kg_registry_find(r, "good"));
    ck_assert_uint_eq(kg_strv_len(r->exposed), 1);
    kg_registry_free(r);

    /* A directory that does not exist yet, where the box could make it. */
    char later[1200];
    snprintf(later, sizeof later, "%s/not/yet", proj);
    r = load_exposed(later, proj);
    ck_assert_uint_eq(kg_strv_len(r->exposed), 1);
    snprintf(line, sizeof line, "%s: lies inside %s, which a program kgate runs here could write",
             later, proj);
    ck_assert_str_eq(kg_strv_get(r->exposed, 0), line);
    kg_registry_free(r);
}
END_TEST

/* Another user who can write a directory on the way can swap the plugin:
 * refused unless the directory is sticky (/tmp), where they cannot. */
START_TEST(refuses_directory_others_can_write)
{
    char mid[1024], plug[1100], line[4096];
    snprintf(mid, sizeof mid, "%s/mid", tmpdir);
    snprintf(plug, sizeof plug, "%s/plugins", mid);
    ck_assert_int_eq(mkdir(mid, 0755), 0);
    ck_assert_int_eq(mkdir(plug, 0755), 0);
    char from[1024], to[1200];
    snprintf(from, sizeof from, "%s/tp_good%s", KG_TEST_PLUGIN_DIR, SUFFIX);
    snprintf(to, sizeof to, "%s/good%s", plug, SUFFIX);
    copy_file(from, to, 0644);
    ck_assert_int_eq(chmod(tmpdir, 0755), 0);

    ck_assert_int_eq(chmod(mid, 0777), 0);
    kg_registry *r = load_exposed(plug, "/nonexistent-root");
    ck_assert_ptr_null(kg_registry_find(r, "good"));
    snprintf(line, sizeof line, "%s: %s is writable by others (mode 0777)", plug, mid);
    ck_assert_uint_eq(kg_strv_len(r->refusals), 1);
    ck_assert_str_eq(kg_strv_get(r->refusals, 0), line);
    ck_assert_uint_eq(kg_strv_len(r->exposed), 0);
    kg_registry_free(r);

    ck_assert_int_eq(chmod(mid, 01777), 0);
    r = load_exposed(plug, "/nonexistent-root");
    ck_assert_ptr_nonnull(kg_registry_find(r, "good"));
    kg_registry_free(r);

    /* The plugin directory itself: no exception for the sticky bit. */
    ck_assert_int_eq(chmod(plug, 01777), 0);
    r = load_exposed(plug, "/nonexistent-root");
    ck_assert_ptr_null(kg_registry_find(r, "good"));
    kg_registry_free(r);
    ck_assert_int_eq(chmod(plug, 0775), 0);
    r = load_exposed(plug, "/nonexistent-root");
    snprintf(line, sizeof line, "%s: %s is writable by its group (mode 0775)", plug, plug);
    ck_assert_str_eq(kg_strv_get(r->refusals, 0), line);
    kg_registry_free(r);
}
END_TEST

START_TEST(in_process_registration)
{
    kg_registry *r = kg_registry_new();
    kg_error err = {0};
    kgate_backend a = {KGATE_BACKEND_INIT, .name = "a"};
    ck_assert_ptr_nonnull(kg_registry_add(r, &a, NULL, NULL, &err));
    ck_assert_ptr_null(kg_registry_add(r, &a, "x", NULL, &err));
    ck_assert_str_eq(err.msg, "duplicate name a (already loaded from (built in))");
    kgate_backend tiny = {.struct_size = 4};
    ck_assert_ptr_null(kg_registry_add(r, &tiny, "x", NULL, &err));
    ck_assert_str_eq(err.msg, "kgate_backend too small (4 bytes)");
    ck_assert_ptr_null(kg_registry_add(r, NULL, "x", NULL, &err));
    ck_assert_int_eq(kg_backend_name_valid("bubblewrap"), 1);
    ck_assert_int_eq(kg_backend_name_valid("slirp-filter"), 1);
    ck_assert_int_eq(kg_backend_name_valid(""), 0);
    ck_assert_int_eq(kg_backend_name_valid("A"), 0);
    ck_assert_int_eq(kg_backend_name_valid("a/b"), 0);
    char longname[80];
    memset(longname, 'a', 65);
    longname[65] = '\0';
    ck_assert_int_eq(kg_backend_name_valid(longname), 0);
    longname[64] = '\0';
    ck_assert_int_eq(kg_backend_name_valid(longname), 1);
    kg_registry_free(r);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* ABI freeze: these numbers are the plugin ABI 2.x on LP64 (Linux and macOS
 * on x86_64 and arm64).  If one changes, every plugin built before breaks:
 * change the major, or only append. */

#define OFF(t, f, v) ck_assert_uint_eq(offsetof(t, f), v)

START_TEST(abi_layout_frozen)
{
#if defined(__LP64__) || defined(_LP64)
    ck_assert_uint_eq(sizeof(kgate_backend), 96);
    OFF(kgate_backend, abi_major, 8);
    OFF(kgate_backend, abi_minor, 12);
    OFF(kgate_backend, name, 16);
    OFF(kgate_backend, description, 24);
    OFF(kgate_backend, probe, 32);
    OFF(kgate_backend, doctor, 40);
    OFF(kgate_backend, plan, 48);
    OFF(kgate_backend, launch, 56);
    OFF(kgate_backend, release, 64); /* 2.0 */
    /* kind and boxes are optional: a descriptor that ends at release is
     * a box (2.0). */
    OFF(kgate_backend, kind, 72);
    OFF(kgate_backend, boxes, 80);
    OFF(kgate_backend, commits, 88); /* 2.1 */
    /* 2.2: in what was padding, so the size stays; the core reads it only
     * from a plugin of minor 2 or later (select.c). */
    OFF(kgate_backend, publishes, 92);
    ck_assert_uint_eq(KG_BACKEND_MIN_SIZE, 72);

    ck_assert_uint_eq(sizeof(kgate_policy), 240);
    OFF(kgate_policy, network, 8);
    OFF(kgate_policy, configured_network, 12);
    OFF(kgate_policy, allow_hosts, 16);
    OFF(kgate_policy, project, 32);
    OFF(kgate_policy, home, 40);
    OFF(kgate_policy, tmpdir, 48);
    OFF(kgate_policy, uid, 56);
    OFF(kgate_policy, gid, 60);
    OFF(kgate_policy, allow_paths, 64);
    OFF(kgate_policy, read_paths, 80);
    OFF(kgate_policy, deny_read, 96);
    OFF(kgate_policy, protect_paths, 112);
    OFF(kgate_policy, allow_sockets, 128);
    OFF(kgate_policy, macos_profile, 144);
    OFF(kgate_policy, macos_allow_mach, 152);
    OFF(kgate_policy, argv, 168);
    OFF(kgate_policy, command_path, 184);
    OFF(kgate_policy, pty, 192); /* 1.0 as first released (appended) */
    OFF(kgate_policy, publish, 200); /* 2.2 */
    OFF(kgate_policy, n_publish, 208);
    OFF(kgate_policy, home_files, 216); /* 2.3 */
    OFF(kgate_policy, n_home_files, 224);
    OFF(kgate_policy, empty_file, 232);
    ck_assert_uint_eq(sizeof(kgate_home_file), 16); /* 2.3, frozen */
    ck_assert_uint_eq(sizeof(kgate_publish), 20); /* 2.2, frozen */
    OFF(kgate_publish, host_port, 16);
    OFF(kgate_publish, port, 18);

    ck_assert_uint_eq(sizeof(kgate_probe), 1184);
    OFF(kgate_probe, available, 8);
    OFF(kgate_probe, score, 12);
    OFF(kgate_probe, version, 16);
    OFF(kgate_probe, tool_path, 80);
    OFF(kgate_probe, reason, 336);
    OFF(kgate_probe, n_facts, 592);
    OFF(kgate_probe, facts, 600);
    OFF(kgate_probe, state, 1176); /* 2.0 */

    ck_assert_uint_eq(sizeof(kgate_launch), 72);
    OFF(kgate_launch, stdin_fd, 8);
    OFF(kgate_launch, stdout_fd, 12);
    OFF(kgate_launch, stderr_fd, 16);
    OFF(kgate_launch, envp, 24);
    OFF(kgate_launch, pty, 32);
    OFF(kgate_launch, events_fd, 36); /* 2.1 */
    OFF(kgate_launch, commit, 40); /* 2.1 */
    OFF(kgate_launch, commit_ctx, 48);
    OFF(kgate_launch, sig_ignored_at_start, 56); /* 2.1, appended */

    ck_assert_uint_eq(sizeof(kgate_proc), 56);
    OFF(kgate_proc, pid, 8);
    OFF(kgate_proc, signal_pid, 12);
    OFF(kgate_proc, helpers, 16);
    OFF(kgate_proc, n_helpers, 48);

    ck_assert_uint_eq(sizeof(kgate_host), 96);
    OFF(kgate_host, abi_major, 8);
    OFF(kgate_host, abi_minor, 12);
    OFF(kgate_host, log, 16);
    OFF(kgate_host, plan_arg, 24);
    OFF(kgate_host, plan_argf, 32);
    OFF(kgate_host, plan_args, 40);
    OFF(kgate_host, plan_file, 48);
    OFF(kgate_host, plan_note, 56);
    OFF(kgate_host, plan_argv, 64);
    OFF(kgate_host, plan_file_content, 72);
    OFF(kgate_host, report, 80);
    OFF(kgate_host, report_detail, 88);

    ck_assert_uint_eq(sizeof(kgate_strlist), 16);
    ck_assert_uint_eq(sizeof(kgate_err), 516);
    ck_assert_int_eq(KGATE_PROBE_MAX_FACTS, 16);
    ck_assert_int_eq(KGATE_MAX_HELPERS, 8);
#else
    /* Other data models: the invariants that do not depend on it. */
    ck_assert_uint_eq(offsetof(kgate_backend, struct_size), 0);
    ck_assert_uint_eq(offsetof(kgate_policy, struct_size), 0);
#endif
    /* Every struct starts with its size, on every platform. */
    OFF(kgate_backend, struct_size, 0);
    OFF(kgate_policy, struct_size, 0);
    OFF(kgate_probe, struct_size, 0);
    OFF(kgate_launch, struct_size, 0);
    OFF(kgate_proc, struct_size, 0);
    OFF(kgate_host, struct_size, 0);
    ck_assert_int_eq(KGATE_ABI_MAJOR, 2);
    ck_assert_str_eq(KGATE_PLUGIN_ENTRY_SYMBOL, "kgate_plugin_entry");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("loader");
    TCase *tc = tcase_create("loader");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, loads_valid_plugin);
    tcase_add_test(tc, refuses_wrong_major);
    tcase_add_test(tc, refuses_missing_symbol);
    tcase_add_test(tc, refuses_small_struct);
    tcase_add_test(tc, refuses_old_major);
    tcase_add_test(tc, refuses_null_entry);
    tcase_add_test(tc, refuses_missing_name);
    tcase_add_test(tc, refuses_invalid_name_on_one_line);
    tcase_add_test(tc, refuses_non_library);
    tcase_add_test(tc, refuses_duplicate_name_keeps_first);
    tcase_add_test(tc, newer_minor_loads_as_known_part);
    tcase_add_test(tc, older_plugin_reads_null_methods);
    tcase_add_test(tc, partial_plugin_loads);
    tcase_add_test(tc, one_bad_plugin_does_not_stop_the_others);
    tcase_add_test(tc, only_suffix_and_regular_files);
    tcase_add_test(tc, symlink_to_plugin_is_followed);
    tcase_add_test(tc, refuses_writable_by_others);
    tcase_add_test(tc, search_path_from_environment);
    tcase_add_test(tc, relative_and_repeated_directories);
    tcase_add_test(tc, refusal_lines_on_stderr_only_when_asked);
    tcase_add_test(tc, missing_directory_is_refused);
    tcase_add_test(tc, refuses_directory_a_box_could_write);
    tcase_add_test(tc, refuses_directory_others_can_write);
    tcase_add_test(tc, in_process_registration);
    tcase_add_test(tc, abi_layout_frozen);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
