/* The built-in protected paths: the table (core/protect/protected.c) against
 * kgate.yaml(5), and the placeholders that keep a missing one from being
 * created (shared between runs, removed by the last). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kgate-config.h"
#include "protected.h"
#include "testutil.h"

#ifndef KG_MAN5
#error "KG_MAN5 must name docs/man/kgate.yaml.5"
#endif

static char *slurp_file(const char *path)
{
    FILE *f = fopen(path, "re");
    ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
    char *b = malloc(1 << 20);
    ck_assert_ptr_nonnull(b);
    size_t n = fread(b, 1, (1 << 20) - 1, f);
    fclose(f);
    b[n] = '\0';
    return b;
}

/* What kgate.yaml(5) must say, made from the table: hyphens as \-. */
static void troff(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '-') fputc('\\', out);
        fputc(*s, out);
    }
}

static char *man_section(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(out);
    size_t n;
    const kg_protected_entry *t = kg_protected_table(&n);
    for (size_t i = 0; i < n; i++) {
        fputs(".TP\n.I ", out);
        troff(out, t[i].name);
        fputc('\n', out);
        troff(out, t[i].why);
        fputs(".\nSince kgate ", out);
        troff(out, t[i].since);
        fputs(".\n", out);
    }
    fclose(out);
    return text;
}

START_TEST(table_is_sound)
{
    size_t n;
    const kg_protected_entry *t = kg_protected_table(&n);
    ck_assert_uint_ge(n, 18);
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(t[i].name[0] == '.', "%s", t[i].name);
        ck_assert_msg(strlen(t[i].why) > 20, "%s: say why", t[i].name);
        /* a version kgate has had: not after this build's */
        ck_assert_msg(strcmp(t[i].since, KGATE_VERSION) <= 0, "%s: since %s", t[i].name,
                      t[i].since);
        /* one level below the project at most (protected.c opens it so) */
        const char *s = strchr(t[i].name, '/');
        ck_assert_msg(!s || !strchr(s + 1, '/'), "%s", t[i].name);
        for (size_t j = 0; j < i; j++) ck_assert_str_ne(t[i].name, t[j].name);
    }
}
END_TEST

/* kgate.yaml(5)'s PROTECTED PATHS section is the table, entry for entry. */
START_TEST(man_page_lists_the_table)
{
    char *man = slurp_file(KG_MAN5);
    char *want = man_section();
    const char *sec = strstr(man, "\n.SH PROTECTED PATHS\n");
    ck_assert_msg(sec != NULL, "kgate.yaml.5 has no PROTECTED PATHS section");
    const char *end = strstr(sec + 1, "\n.SH ");
    ck_assert_ptr_nonnull(end);
    /* the entries are the section's last part, after its introduction */
    const char *first = strstr(sec, "\n.TP\n");
    ck_assert_msg(first && first < end, "no entries in PROTECTED PATHS");
    size_t got = (size_t)(end - first - 1);
    ck_assert_msg(got == strlen(want) - 1 && strncmp(first + 1, want, got) == 0,
                  "kgate.yaml.5's PROTECTED PATHS entries differ from core/protect/protected.c; "
                  "they should read:\n%s",
                  want);
    free(want);
    free(man);
}
END_TEST

static char proj[PATH_MAX];

static void setup(void)
{
    snprintf(proj, sizeof proj, "/tmp/kgt-prot.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(proj));
    char p[PATH_MAX * 2];
    snprintf(p, sizeof p, "%s/.git", proj);
    ck_assert_int_eq(mkdir(p, 0755), 0);
}

static void teardown(void)
{
    char cmd[PATH_MAX * 3];
    snprintf(cmd, sizeof cmd, "chmod -R u+w '%s' && rm -rf '%s'", proj, proj);
    ck_assert_int_eq(system(cmd), 0);
}

/* Every table entry as protect_paths would hold it, but skip. */
static kg_strv *all_but(const char *skip)
{
    kg_strv *v = kg_strv_new();
    size_t n;
    const kg_protected_entry *t = kg_protected_table(&n);
    for (size_t i = 0; i < n; i++) {
        if (skip && strcmp(t[i].name, skip) == 0) continue;
        char p[PATH_MAX * 2];
        snprintf(p, sizeof p, "%s/%s", proj, t[i].name);
        kg_strv_push(v, p);
    }
    return v;
}

static int lstat_at(const char *name, struct stat *st)
{
    char p[PATH_MAX * 2];
    snprintf(p, sizeof p, "%s/%s", proj, name);
    return lstat(p, st);
}

START_TEST(placeholders_made_shared_removed)
{
    /* the user's own .envrc stays as it is; .idea is opted out */
    char p[PATH_MAX * 2];
    snprintf(p, sizeof p, "%s/.envrc", proj);
    kgt_write_text(p, "export A=1\n");
    kg_strv *prot = all_but(".idea");
    kg_error err = {0};
    kg_placeholders *a = kg_placeholders_make(proj, prot, &err);
    ck_assert_msg(a != NULL, "%s", err.msg);
    kg_placeholders *b = kg_placeholders_make(proj, prot, &err); /* a second run */
    ck_assert_msg(b != NULL, "%s", err.msg);
    size_t n, made = 0;
    const kg_protected_entry *t = kg_protected_table(&n);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        int r = lstat_at(t[i].name, &st);
        if (!strcmp(t[i].name, ".idea") || t[i].kind == KG_PROT_GIT) {
            ck_assert_msg(r < 0, "%s was made", t[i].name);
        } else if (!strcmp(t[i].name, ".envrc")) {
            ck_assert_int_eq(st.st_mode & 0777, 0644);
        } else {
            ck_assert_msg(r == 0, "%s was not made", t[i].name);
            int dir = t[i].kind == KG_PROT_DIR;
            ck_assert_msg(dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode), "%s", t[i].name);
            ck_assert_uint_eq(st.st_mode & 07777, dir ? 0555 : 0444);
            made++;
        }
    }
    ck_assert_uint_eq(kg_placeholders_count(a), made);
    ck_assert_uint_eq(kg_placeholders_count(b), made);
    /* the first run ends while the second still runs: nothing goes */
    kg_placeholders_release(a);
    struct stat st;
    ck_assert_int_eq(lstat_at(".claude", &st), 0);
    ck_assert_int_eq(lstat_at(".git/config", &st), 0);
    /* the user wrote into one meanwhile: it is theirs now */
    snprintf(p, sizeof p, "%s/.mcp.json", proj);
    ck_assert_int_eq(chmod(p, 0644), 0);
    kgt_write_text(p, "{}\n");
    kg_placeholders_release(b);
    for (size_t i = 0; i < n; i++) {
        int r = lstat_at(t[i].name, &st);
        if (!strcmp(t[i].name, ".envrc") || !strcmp(t[i].name, ".mcp.json"))
            ck_assert_msg(r == 0, "%s was removed", t[i].name);
        else
            ck_assert_msg(r < 0, "%s was left behind", t[i].name);
    }
    kg_strv_free(prot);
}
END_TEST

/* A kgate killed during its run leaves its placeholders: the next run
 * takes them for its own and removes them at its end. */
START_TEST(placeholders_left_by_a_killed_run)
{
    char p[PATH_MAX * 2];
    snprintf(p, sizeof p, "%s/.claude", proj);
    ck_assert_int_eq(mkdir(p, 0555), 0);
    ck_assert_int_eq(chmod(p, 0555), 0);
    snprintf(p, sizeof p, "%s/.mcp.json", proj);
    int fd = open(p, O_CREAT | O_EXCL | O_WRONLY, 0444);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(chmod(p, 0444), 0);
    kg_strv *prot = all_but(NULL);
    kg_error err = {0};
    kg_placeholders *a = kg_placeholders_make(proj, prot, &err);
    ck_assert_msg(a != NULL, "%s", err.msg);
    kg_placeholders_release(a);
    struct stat st;
    ck_assert_int_ne(lstat_at(".claude", &st), 0);
    ck_assert_int_ne(lstat_at(".mcp.json", &st), 0);
    kg_strv_free(prot);
}
END_TEST

/* No .git directory: nothing is made below it (a .git file either). */
START_TEST(placeholders_need_the_parent)
{
    char p[PATH_MAX * 2];
    snprintf(p, sizeof p, "%s/.git", proj);
    ck_assert_int_eq(rmdir(p), 0);
    kgt_write_text(p, "gitdir: /elsewhere\n");
    kg_strv *prot = all_but(NULL);
    kg_error err = {0};
    kg_placeholders *a = kg_placeholders_make(proj, prot, &err);
    ck_assert_msg(a != NULL, "%s", err.msg);
    struct stat st;
    ck_assert_int_eq(lstat_at(".claude", &st), 0);
    ck_assert_int_ne(lstat_at(".git/hooks", &st), 0);
    /* a symlink where a placeholder would go is left to the policy (which
     * refuses it) and never followed */
    kg_placeholders_release(a);
    snprintf(p, sizeof p, "%s/.cursor", proj);
    ck_assert_int_eq(symlink("/nonexistent-kgt", p), 0);
    a = kg_placeholders_make(proj, prot, &err);
    ck_assert_msg(a != NULL, "%s", err.msg);
    ck_assert_int_ne(access("/nonexistent-kgt", F_OK), 0);
    kg_placeholders_release(a);
    ck_assert_int_eq(lstat(p, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    kg_strv_free(prot);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("protected");
    TCase *tc = tcase_create("table");
    tcase_add_test(tc, table_is_sound);
    tcase_add_test(tc, man_page_lists_the_table);
    suite_add_tcase(s, tc);
    tc = tcase_create("placeholders");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, placeholders_made_shared_removed);
    tcase_add_test(tc, placeholders_need_the_parent);
    tcase_add_test(tc, placeholders_left_by_a_killed_run);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
