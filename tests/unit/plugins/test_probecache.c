/* The probe cache (core/plugins/probecache.c): an entry comes back only for
 * the same plugin file, tool and situation, and anything odd about the
 * file or its directory means it is ignored.  The integration test
 * tests/integration/probe_cache.sh covers the situations a unit test
 * cannot make (namespaces, sysctls, another user, the box's view). */
#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probecache.h"
#include "testutil.h"

static char top[64], dir[96], plugin[96], tool[96], entry[128];

static void touch_file(const char *p, const char *text)
{
    FILE *f = fopen(p, "we");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void setup(void)
{
    snprintf(top, sizeof top, "/tmp/kgt-pc.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(top));
    snprintf(dir, sizeof dir, "%s/cache", top);
    snprintf(plugin, sizeof plugin, "%s/box.so", top);
    snprintf(tool, sizeof tool, "%s/tool", top);
    snprintf(entry, sizeof entry, "%s/probe.box", dir);
    touch_file(plugin, "plugin");
    touch_file(tool, "tool");
}

static void teardown(void)
{
    char cmd[PATH_MAX * 3];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    ck_assert_int_eq(system(cmd), 0);
}

static kgate_probe sample(void)
{
    kgate_probe p;
    kgate_probe_init(&p);
    p.available = 1;
    p.score = 50;
    snprintf(p.version, sizeof p.version, "1.2");
    snprintf(p.tool_path, sizeof p.tool_path, "%s", tool);
    snprintf(p.reason, sizeof p.reason, "user namespaces work");
    kgate_probe_set_fact(&p, "userns", 1);
    kgate_probe_set_fact(&p, "userns_trial", 1);
    return p;
}

/* Writes the sample with a fresh cache object, as one run would. */
static void put_sample(void)
{
    kg_probecache *c = kg_probecache_new(dir);
    kgate_probe p = sample();
    kg_probecache_put(c, "box", plugin, &p);
    kg_probecache_free(c);
}

/* What the next run would get: 1 on a hit. */
static int get_now(kgate_probe *out)
{
    kg_probecache *c = kg_probecache_new(dir);
    kgate_probe_init(out);
    int r = kg_probecache_get(c, "box", plugin, out);
    kg_probecache_free(c);
    return r;
}

START_TEST(round_trip)
{
    kgate_probe got;
    ck_assert_int_eq(get_now(&got), 0); /* nothing yet */
    put_sample();
    struct stat st;
    ck_assert_int_eq(stat(dir, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0700);
    ck_assert_int_eq(stat(entry, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    ck_assert_int_eq(get_now(&got), 1);
    kgate_probe want = sample();
    ck_assert_int_eq(got.available, 1);
    ck_assert_int_eq(got.score, 50);
    ck_assert_str_eq(got.version, want.version);
    ck_assert_str_eq(got.tool_path, want.tool_path);
    ck_assert_str_eq(got.reason, want.reason);
    ck_assert_uint_eq(got.n_facts, 2);
    ck_assert_int_eq(kgate_probe_fact(&got, "userns_trial", -1), 1);
    ck_assert_ptr_null(got.state);
}
END_TEST

START_TEST(state_is_never_kept)
{
    kg_probecache *c = kg_probecache_new(dir);
    kgate_probe p = sample();
    int mine;
    p.state = &mine; /* launch needs it: this probe must run every time */
    kg_probecache_put(c, "box", plugin, &p);
    kg_probecache_free(c);
    ck_assert_int_ne(access(entry, F_OK), 0);
}
END_TEST

START_TEST(plugin_or_tool_changed)
{
    kgate_probe got;
    put_sample();
    ck_assert_int_eq(get_now(&got), 1);
    /* the plugin replaced by another file (a new inode) */
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.new", plugin);
    touch_file(tmp, "plugin");
    ck_assert_int_eq(rename(tmp, plugin), 0);
    ck_assert_int_eq(get_now(&got), 0);
    put_sample();
    ck_assert_int_eq(get_now(&got), 1);
    /* the tool rewritten in place (its size and times) */
    touch_file(tool, "another tool");
    ck_assert_int_eq(get_now(&got), 0);
    put_sample();
    /* the tool removed */
    ck_assert_int_eq(unlink(tool), 0);
    ck_assert_int_eq(get_now(&got), 0);
}
END_TEST

START_TEST(situation_changed)
{
    kgate_probe got;
    const char *old = getenv("PATH");
    char *saved = old ? strdup(old) : NULL;
    put_sample();
    ck_assert_int_eq(get_now(&got), 1);
    /* another PATH may find another tool */
    setenv("PATH", "/usr/bin:/bin", 1);
    ck_assert_int_eq(get_now(&got), 0);
    if (saved)
        setenv("PATH", saved, 1);
    else
        unsetenv("PATH");
    free(saved);
    ck_assert_int_eq(get_now(&got), 1);
    /* a launch that failed drops the entry */
    kg_probecache *c = kg_probecache_new(dir);
    kg_probecache_forget(c, "box");
    kg_probecache_free(c);
    ck_assert_int_eq(get_now(&got), 0);
}
END_TEST

/* Rewrites byte at of the entry (from its end when at < 0). */
static void poke(long at, unsigned char v)
{
    int fd = open(entry, O_RDWR);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_ge(lseek(fd, at, at < 0 ? SEEK_END : SEEK_SET), 0);
    ck_assert_int_eq(write(fd, &v, 1), 1);
    close(fd);
}

START_TEST(odd_files_are_ignored)
{
    kgate_probe got;
    put_sample();
    /* readable by others: not the user's private file */
    ck_assert_int_eq(chmod(entry, 0644), 0);
    ck_assert_int_eq(get_now(&got), 0);
    ck_assert_int_eq(chmod(entry, 0600), 0);
    ck_assert_int_eq(get_now(&got), 1);
    /* a directory others can write */
    ck_assert_int_eq(chmod(dir, 0777), 0);
    ck_assert_int_eq(get_now(&got), 0);
    ck_assert_int_eq(chmod(dir, 0700), 0);
    /* one byte more, one byte less */
    FILE *f = fopen(entry, "ae");
    fputc('x', f);
    fclose(f);
    ck_assert_int_eq(get_now(&got), 0);
    ck_assert_int_eq(truncate(entry, 100), 0);
    ck_assert_int_eq(get_now(&got), 0);
    /* a flipped byte in the magic, in the key, in a flag */
    put_sample();
    poke(0, 'X');
    ck_assert_int_eq(get_now(&got), 0);
    put_sample();
    poke(30, 0xff); /* inside the key */
    ck_assert_int_eq(get_now(&got), 0);
    put_sample();
    /* a symlink to a good entry elsewhere is not followed */
    char elsewhere[PATH_MAX + 32];
    snprintf(elsewhere, sizeof elsewhere, "%s/saved", top);
    ck_assert_int_eq(rename(entry, elsewhere), 0);
    ck_assert_int_eq(symlink(elsewhere, entry), 0);
    ck_assert_int_eq(get_now(&got), 0);
}
END_TEST

/* The entry's count of facts, 712 bytes into the entry (two file
 * identities of 64 bytes, two int32, 64 + 256 + 256 bytes of strings); the
 * entry is the file's last 1296 bytes (16 facts of 36, padded to 8).  The
 * test reads the sample's 2 there first, so a new layout fails it loudly. */
START_TEST(counts_out_of_range_are_ignored)
{
    kgate_probe got;
    put_sample();
    struct stat st;
    ck_assert_int_eq(stat(entry, &st), 0);
    long at = (long)st.st_size - 1296 + 712;
    int fd = open(entry, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    unsigned char n = 0;
    ck_assert_int_eq(pread(fd, &n, 1, at), 1);
    close(fd);
    ck_assert_int_eq(n, 2);
    poke(at, 17); /* more facts than a probe holds */
    ck_assert_int_eq(get_now(&got), 0);
    put_sample();
    poke(at - 4 - 256 - 256 - 64 - 8, 2); /* available = 2 */
    ck_assert_int_eq(get_now(&got), 0);
}
END_TEST

/* KGATE_DEBUG, read by kg_debug (the one switch), shows what the cache
 * did; "0" does not.  The name is a plugin's: the line is escaped. */
START_TEST(debug_line_is_one_escaped_line)
{
    char log[160], buf[256] = "";
    snprintf(log, sizeof log, "%s/stderr", top);
    int fd = open(log, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ck_assert_int_ge(fd, 0);
    int saved = dup(STDERR_FILENO);
    kgate_probe p = sample();
    fflush(stderr);
    dup2(fd, STDERR_FILENO);
    kg_probecache *c = kg_probecache_new(dir);
    setenv("KGATE_DEBUG", "0", 1);
    kg_probecache_put(c, "quiet", plugin, &p);
    setenv("KGATE_DEBUG", "1", 1);
    kg_probecache_put(c, "x\033[2J\ny", plugin, &p);
    unsetenv("KGATE_DEBUG");
    kg_probecache_free(c);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    ck_assert_int_gt(pread(fd, buf, sizeof buf - 1, 0), 0);
    close(fd);
    ck_assert_str_eq(buf, "kgate: probe cache: x\\e[2J\\ny: written\n");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("probecache");
    TCase *tc = tcase_create("cache");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, state_is_never_kept);
    tcase_add_test(tc, plugin_or_tool_changed);
    tcase_add_test(tc, situation_changed);
    tcase_add_test(tc, odd_files_are_ignored);
    tcase_add_test(tc, counts_out_of_range_are_ignored);
    tcase_add_test(tc, debug_line_is_one_escaped_line);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
