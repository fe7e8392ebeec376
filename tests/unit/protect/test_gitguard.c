/* test_gitguard.c: what a run leaves for the host's git (core/protect/gitguard.c).
 * The repositories are made with the real git, so the index formats are
 * the ones git writes. */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gitguard.h"
#include "testutil.h"

static char root[PATH_MAX];

static void setup(void)
{
    char t[] = "/tmp/kgtest-gitguard.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(t));
    ck_assert_ptr_nonnull(realpath(t, root));
    setenv("GIT_AUTHOR_NAME", "kg", 1);
    setenv("GIT_AUTHOR_EMAIL", "kg@example.org", 1);
    setenv("GIT_COMMITTER_NAME", "kg", 1);
    setenv("GIT_COMMITTER_EMAIL", "kg@example.org", 1);
    setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
    setenv("HOME", root, 1);
}

static void teardown(void)
{
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    ck_assert_int_eq(system(cmd), 0);
}

/* Runs a shell script in root (the test's own text, no outside input). */
static void sh(const char *script)
{
    char cmd[PATH_MAX + 4096];
    ck_assert_uint_lt(strlen(script), 4000);
    snprintf(cmd, sizeof cmd, "cd '%s' && { %s ; } >/dev/null 2>&1", root, script);
    ck_assert_msg(system(cmd) == 0, "failed: %s", script);
}

static char *at(const char *rel)
{
    static char p[4][PATH_MAX + 64];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", root, rel);
    return p[k];
}

/* A repository r with a file and a nested repository n as a gitlink. */
#define REPO_WITH_GITLINK                                          \
    "git init -q r && cd r && echo a > a.txt && git init -q n && " \
    "git -C n commit -q --allow-empty -m n && git add a.txt n && git commit -qm one"

static void expect_links(const char *gitdir, const char *want)
{
    kg_strv *v = kg_strv_new();
    ck_assert_int_eq(kg_gitguard_index_gitlinks(gitdir, v), 0);
    ck_assert_uint_eq(kg_strv_len(v) > 0, 1);
    ck_assert_str_eq(kg_strv_get(v, 0), want);
    kg_strv_free(v);
}

START_TEST(index_versions)
{
    sh(REPO_WITH_GITLINK " && mkdir -p deep/er && git init -q deep/er/m && "
                         "git -C deep/er/m commit -q --allow-empty -m m && git add deep/er/m");
    const char *gd = at("r/.git");
    expect_links(gd, "deep/er/m");
    /* version 3: an intent-to-add entry carries the extended flags */
    sh("cd r && echo b > b.txt && git add -N b.txt && git update-index --index-version 3");
    expect_links(gd, "deep/er/m");
    /* version 4: names are prefix-compressed */
    sh("cd r && git update-index --index-version 4");
    kg_strv *v = kg_strv_new();
    ck_assert_int_eq(kg_gitguard_index_gitlinks(gd, v), 0);
    ck_assert_uint_eq(kg_strv_len(v), 2);
    ck_assert_str_eq(kg_strv_get(v, 0), "deep/er/m");
    ck_assert_str_eq(kg_strv_get(v, 1), "n");
    kg_strv_free(v);
    /* split: the gitlinks sit in the shared index */
    sh("cd r && git update-index --index-version 2 && git update-index --split-index");
    v = kg_strv_new();
    ck_assert_int_eq(kg_gitguard_index_gitlinks(gd, v), 0);
    ck_assert_uint_ge(kg_strv_len(v), 2);
    kg_strv_free(v);
    /* SHA-256 repositories have longer entries */
    sh("git init -q --object-format=sha256 s && cd s && git init -q --object-format=sha256 n && "
       "git -C n commit -q --allow-empty -m n && git add n");
    expect_links(at("s/.git"), "n");
    /* not an index: refused, not read as empty */
    kgt_write_text(at("r/.git/index"), "DIRC garbage");
    v = kg_strv_new();
    ck_assert_int_eq(kg_gitguard_index_gitlinks(gd, v), -1);
    kg_strv_free(v);
}
END_TEST

START_TEST(config_allow_list)
{
    sh("git init -q r && git -C r remote add origin /x && "
       "git -C r config branch.main.remote origin");
    ck_assert_int_eq(kg_gitguard_config_inert(at("r/.git/config")), 1);
    ck_assert_int_eq(kg_gitguard_config_inert(at("missing")), 1);
    const char *bad[] = {
        "[core]\n\tfsmonitor = touch x\n",
        "[core]\n\thooksPath = h\n",
        "[include]\n\tpath = other\n",
        "[includeIf \"gitdir:/\"]\n\tpath = other\n",
        "[core] fsmonitor = x\n", /* a key on the header's line */
        "[user]\n\tname = a\\\n\tfsmonitor\n", /* a continuation line */
        "[alias]\n\tst = !sh\n",
        "[submodule \"s\"]\n\tupdate = !sh\n",
        "fsmonitor = x\n", /* a key outside any section */
        "[core\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kgt_write_text(at("c"), bad[i]);
        ck_assert_msg(kg_gitguard_config_inert(at("c")) == 0, "inert: %s", bad[i]);
    }
    kgt_write_text(at("c"), "# c\n[remote \"o\"]\n\turl = /x ; c\n[branch.main]\nmerge = m\n");
    ck_assert_int_eq(kg_gitguard_config_inert(at("c")), 1);
}
END_TEST

START_TEST(begin_refuses_a_commondir)
{
    sh("git init -q r && echo x > r/.git/commondir");
    kg_error err = {0};
    ck_assert_ptr_null(kg_gitguard_begin(at("r"), 0, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "commondir exists"));
}
END_TEST

/* Runs the check; the findings joined into buf, one per line. */
static int end_of(kg_gitguard *g, char *buf, size_t n)
{
    kg_strv *v = kg_strv_new();
    int found = kg_gitguard_end(g, v);
    ck_assert_uint_eq(kg_strv_len(v), (size_t)found);
    buf[0] = '\0';
    for (size_t i = 0; i < kg_strv_len(v); i++) {
        ck_assert_ptr_null(strchr(kg_strv_get(v, i), '\n'));
        strncat(buf, kg_strv_get(v, i), n - strlen(buf) - 2);
        strcat(buf, "\n");
    }
    kg_strv_free(v);
    return found;
}

START_TEST(end_moves_aside_what_was_planted)
{
    char out[4096];
    struct stat st;
    sh(REPO_WITH_GITLINK);
    kg_error err = {0};
    kg_gitguard *g = kg_gitguard_begin(at("r"), 0, &err);
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(end_of(g, out, sizeof out), 0); /* nothing happened */
    /* planted: a commondir, a nested repository running fsmonitor as a
     * gitlink, an exec line in a rebase todo */
    sh("cd r && git init -q p && "
       "git -C p commit -q --allow-empty -m p && git -C p config core.fsmonitor 'touch x' && "
       "git add p && mkdir -p .git/rebase-merge && "
       "echo 'exec touch x' > .git/rebase-merge/git-rebase-todo && echo x > .git/commondir");
    ck_assert_int_eq(end_of(g, out, sizeof out), 3);
    ck_assert_ptr_nonnull(strstr(out, "commondir was planted by the run"));
    ck_assert_int_eq(lstat(at("r/.git/commondir"), &st), -1);
    ck_assert_int_eq(lstat(at("r/.git/commondir.kgate-quarantine"), &st), 0);
    ck_assert_int_eq(lstat(at("r/p/.git.kgate-quarantine"), &st), 0);
    ck_assert_int_eq(lstat(at("r/.git/rebase-merge/git-rebase-todo"), &st), -1);
    /* the nested repository that was there before is left alone */
    ck_assert_int_eq(lstat(at("r/n/.git"), &st), 0);
    kg_gitguard_free(g);

    /* an ordinary nested repository made by the run stays */
    g = kg_gitguard_begin(at("r"), 0, &err);
    ck_assert_ptr_nonnull(g);
    sh("cd r && git init -q q && git -C q commit -q --allow-empty -m q && git add q");
    ck_assert_int_eq(end_of(g, out, sizeof out), 0);
    ck_assert_int_eq(lstat(at("r/q/.git"), &st), 0);
    kg_gitguard_free(g);
}
END_TEST

/* A symlink on the way (another box could swap one in) does not make
 * kgate move a repository outside the project. */
START_TEST(end_never_moves_outside)
{
    char out[4096];
    struct stat st;
    sh("git init -q r && git init -q o/n && git -C o/n commit -q --allow-empty -m n");
    kg_error err = {0};
    kg_gitguard *g = kg_gitguard_begin(at("r"), 0, &err);
    ck_assert_ptr_nonnull(g);
    sh("cd r && mkdir x && git init -q x/n && git -C x/n commit -q --allow-empty -m n && "
       "git add x/n && rm -rf x && ln -s ../o x && git -C ../o/n config core.fsmonitor 'touch y'");
    ck_assert_int_eq(end_of(g, out, sizeof out), 1);
    ck_assert_ptr_nonnull(strstr(out, "could not move it aside, so it moved the index"));
    ck_assert_int_eq(lstat(at("o/n/.git"), &st), 0);
    ck_assert_int_eq(lstat(at("o/n/.git.kgate-quarantine"), &st), -1);
    /* never only reported: the index that records it went instead */
    ck_assert_int_eq(lstat(at("r/.git/index"), &st), -1);
    ck_assert_int_eq(lstat(at("r/.git/index.kgate-quarantine"), &st), 0);
    kg_gitguard_free(g);
}
END_TEST

/* A git directory evil/ that runs fsmonitor, and r/n a gitlink to it in
 * r's index with no .git yet: each test then plants r/n/.git its way. */
#define EVIL_AND_LINK                                                                       \
    "git init -q r && git -C r commit -q --allow-empty -m r && git init -q e && "           \
    "git -C e commit -q --allow-empty -m e && git -C e config core.fsmonitor 'touch x' && " \
    "mkdir r/n && git -C r update-index --add --cacheinfo 160000,$(git -C e rev-parse HEAD),n"

/* Plants r/n/.git with script (run in r after EVIL_AND_LINK moved e's git
 * directory to r/<gd>), runs the check, and wants r/n/.git moved aside. */
static void planted_moved(const char *gd, const char *script, const char *moved)
{
    char out[8192], buf[4096];
    struct stat st;
    sh(EVIL_AND_LINK);
    snprintf(buf, sizeof buf, "mv e/.git 'r/%s'", gd);
    sh(buf);
    kg_error err = {0};
    kg_gitguard *g = kg_gitguard_begin(at("r"), 0, &err);
    ck_assert_ptr_nonnull(g);
    snprintf(buf, sizeof buf, "cd r && %s", script);
    sh(buf);
    ck_assert_int_eq(end_of(g, out, sizeof out), 1);
    ck_assert_int_eq(lstat(at(moved), &st), -1);
    char q[60];
    snprintf(q, sizeof q, "%s.kgate-quarantine", moved);
    ck_assert_int_eq(lstat(at(q), &st), 0);
    kg_gitguard_free(g);
}

static void planted_link_moved(const char *gd, const char *script)
{
    planted_moved(gd, script, "r/n/.git");
}

/* The .git file read as git reads it (measured with git 2.39). */
START_TEST(gitfile_longer_than_a_page)
{
    planted_link_moved(
        "gd", "{ printf 'gitdir: ../gd'; head -c 9000 /dev/zero | tr '\\0' '\\n'; } > n/.git");
}
END_TEST

START_TEST(gitfile_name_with_cr_lf)
{
    planted_link_moved("gd\rx\ny", "printf 'gitdir: ../gd\\rx\\ny\\r\\n\\n' > n/.git");
}
END_TEST

START_TEST(gitfile_nul_ends_the_name)
{
    planted_link_moved("gd", "printf 'gitdir: ../gd\\0junk\\n' > n/.git");
}
END_TEST

START_TEST(gitfile_through_a_symlink) { planted_link_moved("gd", "ln -s ../gd n/.git"); }
END_TEST

/* What kgate cannot read as git does is moved aside, not skipped. */
START_TEST(gitfile_unreadable_is_unsafe)
{
    planted_link_moved(
        "gd", "{ printf 'gitdir: ../gd'; head -c 1048576 /dev/zero | tr '\\0' '\\n'; } > n/.git");
}
END_TEST

START_TEST(gitfile_dangling_is_unsafe) { planted_link_moved("gd", "ln -s ../nowhere n/.git"); }
END_TEST

/* git status in a nested repository enters that repository's gitlinks. */
START_TEST(gitlinks_nested_in_gitlinks)
{
    planted_moved("gd",
                  "git init -q n && git -C n commit -q --allow-empty -m n && "
                  "mkdir n/deep && mv gd n/deep/.git && "
                  "git -C n update-index --add --cacheinfo "
                  "160000,$(git -C n/deep rev-parse HEAD),deep",
                  "r/n/deep/.git");
}
END_TEST

/* The names kgate moves to cannot all be taken in advance, nor can the
 * program keep the directory from being written. */
START_TEST(quarantine_names_taken_in_advance)
{
    char out[8192];
    struct stat st;
    sh(EVIL_AND_LINK " && mv e/.git r/gd");
    kg_error err = {0};
    kg_gitguard *g = kg_gitguard_begin(at("r"), 0, &err);
    ck_assert_ptr_nonnull(g);
    sh("cd r && ln -s ../gd n/.git && mkdir n/.git.kgate-quarantine && "
       "for i in $(seq 1 99); do touch n/.git.kgate-quarantine.$i; done");
    ck_assert_int_eq(end_of(g, out, sizeof out), 1);
    ck_assert_int_eq(lstat(at("r/n/.git"), &st), -1);
    /* moved to a name made after the run: 16 hex digits */
    const char *m = strstr(out, "moved aside to ");
    ck_assert_msg(m, "%s", out);
    char to[PATH_MAX];
    snprintf(to, sizeof to, "%.*s", (int)strcspn(m + 15, "\n"), m + 15);
    ck_assert_uint_eq(strlen(to), strlen(at("r/n/.git.kgate-quarantine.")) + 16);
    ck_assert_int_eq(lstat(to, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    kg_gitguard_free(g);
}
END_TEST

START_TEST(quarantine_in_a_read_only_directory)
{
    char out[8192];
    struct stat st;
    sh(EVIL_AND_LINK " && mv e/.git r/gd");
    kg_error err = {0};
    kg_gitguard *g = kg_gitguard_begin(at("r"), 0, &err);
    ck_assert_ptr_nonnull(g);
    sh("cd r && printf 'gitdir: ../gd\\n' > n/.git && touch n/.git.kgate-quarantine && chmod 555 "
       "n");
    ck_assert_int_eq(end_of(g, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "moved aside to"), "%s", out);
    ck_assert_int_eq(lstat(at("r/n/.git"), &st), -1);
    kg_gitguard_free(g);
}
END_TEST

/* The user's own nested repositories, at every depth, with hooks and
 * fsmonitor of their own, are left alone: they were there at the launch. */
START_TEST(own_nested_repositories_stay)
{
    char out[8192];
    struct stat st;
    sh("git init -q r && cd r && git init -q n && git -C n init -q deep && "
       "git -C n/deep config core.fsmonitor true && git -C n/deep commit -q --allow-empty -m d && "
       "git -C n add deep && git -C n commit -qm n && git add n && git commit -qm r && "
       "touch n/deep/.git/hooks/pre-commit");
    kg_strv *v = kg_strv_new();
    kg_gitguard_pins(at("r"), v);
    ck_assert_uint_eq(kg_strv_len(v), 2);
    ck_assert_str_eq(kg_strv_get(v, 1), at("r/n/deep/.git"));
    kg_strv_free(v);
    kg_error err = {0};
    kg_gitguard *g = kg_gitguard_begin(at("r"), 0, &err);
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(end_of(g, out, sizeof out), 0);
    ck_assert_int_eq(lstat(at("r/n/deep/.git"), &st), 0);
    kg_gitguard_free(g);
}
END_TEST

/* Two runs in one repository share the placeholder; the last removes it;
 * git works with it in place; a config with core.worktree gets none. */
START_TEST(commondir_placeholder)
{
    char out[4096];
    struct stat st;
    sh("git init -q r && git -C r commit -q --allow-empty -m r");
    kg_error err = {0};
    kg_gitguard *a = kg_gitguard_begin(at("r"), 1, &err);
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(lstat(at("r/.git/commondir"), &st), 0);
    ck_assert_int_eq(st.st_size, 2);
    sh("cd r && git status && git commit -q --allow-empty -m two");
    kg_gitguard *b = kg_gitguard_begin(at("r"), 1, &err);
    ck_assert_ptr_nonnull(b);
    kg_gitguard *dry = kg_gitguard_begin(at("r"), 0, &err); /* a dry run beside */
    ck_assert_ptr_nonnull(dry);
    kg_gitguard_free(dry);
    ck_assert_int_eq(end_of(a, out, sizeof out), 0);
    ck_assert_int_eq(lstat(at("r/.git/commondir"), &st), 0); /* b holds it */
    kg_gitguard_free(a);
    ck_assert_int_eq(end_of(b, out, sizeof out), 0);
    ck_assert_int_eq(lstat(at("r/.git/commondir"), &st), -1);
    kg_gitguard_free(b);

    sh("git -C r config core.worktree ..");
    a = kg_gitguard_begin(at("r"), 1, &err);
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(lstat(at("r/.git/commondir"), &st), -1);
    kg_gitguard_free(a);

    /* a commondir that is not a placeholder is refused, with or without */
    kgt_write_text(at("r/.git/commondir"), "x\n");
    ck_assert_ptr_null(kg_gitguard_begin(at("r"), 1, &err));
    sh("git -C r config --unset core.worktree || true");
    ck_assert_ptr_null(kg_gitguard_begin(at("r"), 1, &err));
}
END_TEST

START_TEST(end_new_repository)
{
    char out[4096];
    struct stat st;
    sh("mkdir a b");
    kg_error err = {0};
    kg_gitguard *ga = kg_gitguard_begin(at("a"), 0, &err);
    kg_gitguard *gb = kg_gitguard_begin(at("b"), 0, &err);
    sh("git init -q a && git -C a commit -q --allow-empty -m a && "
       "git init -q b && git -C b config core.fsmonitor 'touch x'");
    ck_assert_int_eq(end_of(ga, out, sizeof out), 0);
    ck_assert_int_eq(lstat(at("a/.git"), &st), 0);
    ck_assert_int_eq(end_of(gb, out, sizeof out), 1);
    ck_assert_int_eq(lstat(at("b/.git.kgate-quarantine"), &st), 0);
    kg_gitguard_free(ga);
    kg_gitguard_free(gb);
    kg_gitguard_free(NULL);
}
END_TEST

/* A finding names the program's path by msg.c's one escape: one line,
 * and a newline or a backslash in the name is told apart from the text. */
START_TEST(finding_escapes_the_path)
{
    char out[4096];
    ck_assert_int_eq(mkdir(at("c\nd\\e"), 0755), 0);
    kg_error err = {0};
    kg_gitguard *g = kg_gitguard_begin(at("c\nd\\e"), 0, &err);
    ck_assert_ptr_nonnull(g);
    sh("cd c?d?e && git init -q && git config core.fsmonitor 'touch x'");
    ck_assert_int_eq(end_of(g, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "c\\nd\\\\e/.git was planted by the run"), "%s", out);
    kg_gitguard_free(g);
}
END_TEST

START_TEST(pins_gitlinks)
{
    sh(REPO_WITH_GITLINK);
    kg_strv *v = kg_strv_new();
    kg_gitguard_pins(at("r"), v);
    ck_assert_uint_eq(kg_strv_len(v), 1);
    ck_assert_str_eq(kg_strv_get(v, 0), at("r/n/.git"));
    kg_strv_free(v);
}
END_TEST

/* core.hooksPath, resolved as git resolves it, only inside the project. */
START_TEST(hooks_dir_follows_core_hookspath)
{
    sh("git init -q r && mkdir -p r/a/b");
    ck_assert_ptr_null(kg_gitguard_hooks_dir(at("r"))); /* .git/hooks */
    sh("git -C r config core.hooksPath .husky");
    char *d = kg_gitguard_hooks_dir(at("r"));
    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(d, at("r/.husky"));
    free(d);
    /* relative to the top of the work tree: outside a project in a/b */
    ck_assert_ptr_null(kg_gitguard_hooks_dir(at("r/a/b")));
    sh("git -C r config core.hooksPath a/b/h");
    d = kg_gitguard_hooks_dir(at("r/a/b"));
    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(d, at("r/a/b/h"));
    free(d);
    sh("git -C r config core.hooksPath '~/hooks'");
    ck_assert_ptr_null(kg_gitguard_hooks_dir(at("r")));
    sh("git -C r config core.hooksPath tools/git/hooks");
    free(kg_gitguard_hooks_dir(at("r"))); /* the policy asks first */
    kg_error err = {0};
    kg_gitguard *g = kg_gitguard_begin(at("r"), 1, &err); /* made when missing */
    ck_assert_ptr_nonnull(g);
    struct stat st;
    ck_assert_int_eq(stat(at("r/tools/git/hooks"), &st), 0);
    ck_assert(S_ISDIR(st.st_mode));
    kg_gitguard_free(g);
}
END_TEST

/* ---- issue 40: the git directory a .git file names -------------------- */

/* kg_gitguard_gitdirs on project p: its return, and the directories it
 * found, relative to root, joined by spaces into buf. */
static int gitdirs_of(const char *p, char *buf, size_t n)
{
    kg_strv *v = kg_strv_new();
    int rc = kg_gitguard_gitdirs(at(p), v);
    buf[0] = '\0';
    for (size_t i = 0; i < kg_strv_len(v); i++) {
        const char *d = kg_strv_get(v, i);
        ck_assert_uint_gt(strlen(d), strlen(root));
        snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", i ? " " : "", d + strlen(root) + 1);
    }
    kg_strv_free(v);
    return rc;
}

#define SEP                                                                                        \
    "mkdir r && git -C r init -q --separate-git-dir=.realgit && git -C r commit -q --allow-empty " \
    "-m r"

START_TEST(gitdirs_read_as_git_does)
{
    char b[4096];
    sh("mkdir none && git init -q plain && " SEP);
    ck_assert_int_eq(gitdirs_of("none", b, sizeof b), 0);
    ck_assert_str_eq(b, "");
    ck_assert_int_eq(gitdirs_of("plain", b, sizeof b), 0); /* the table covers .git */
    ck_assert_str_eq(b, "");
    /* as git init writes it: absolute */
    ck_assert_int_eq(gitdirs_of("r", b, sizeof b), 0);
    ck_assert_str_eq(b, "r/.realgit");
    /* relative, with "..", trailing CR and LFs */
    sh("mkdir r/w && printf 'gitdir: w/../.realgit\\r\\n\\n' > r/.git");
    ck_assert_int_eq(gitdirs_of("r", b, sizeof b), 0);
    ck_assert_str_eq(b, "r/.realgit");
    /* a symbolic link at .git, to the directory or to a .git file */
    sh("rm r/.git && ln -s .realgit r/.git");
    ck_assert_int_eq(gitdirs_of("r", b, sizeof b), 0);
    ck_assert_str_eq(b, "r/.realgit");
    sh("rm r/.git && printf 'gitdir: .realgit\\n' > r/gf && ln -s gf r/.git");
    ck_assert_int_eq(gitdirs_of("r", b, sizeof b), 0);
    ck_assert_str_eq(b, "r/.realgit");
    /* outside the project: nothing to keep (not writable from the box) */
    sh("rm r/.git && mv r/.realgit out && printf 'gitdir: ../out\\n' > r/.git");
    ck_assert_int_eq(gitdirs_of("r", b, sizeof b), 0);
    ck_assert_str_eq(b, "");
    /* through a symbolic link in the project that leads out */
    sh("ln -s ../out r/lnk && printf 'gitdir: lnk\\n' > r/.git");
    ck_assert_int_eq(gitdirs_of("r", b, sizeof b), 0);
    ck_assert_str_eq(b, "");
}
END_TEST

/* What kgate cannot read as git does refuses the launch, never skips. */
START_TEST(gitdirs_unreadable_refuse)
{
    char b[4096];
    static const char *const bad[] = {
        /* Over 1 MiB: a gitdir line and a megabyte of newlines. */
        "rm r/.git && { printf 'gitdir: .realgit'; yes '' | head -c 1048576; } >r/.git",
        "rm r/.git && printf 'git-dir: .realgit\\n' > r/.git",
        "rm r/.git && printf 'gitdir: \\n' > r/.git",
        "rm r/.git && printf 'gitdir: nowhere\\n' > r/.git",
        "rm r/.git && printf 'gitdir: f.txt\\n' > r/.git && touch r/f.txt",
        "rm r/.git && ln -s nowhere r/.git",
        "rm r/.git && mkfifo r/.git",
        "rm r/.git && printf 'gitdir: .\\n' > r/.git",
        "printf '../x\\0y\\n' > r/.realgit/commondir",
        "echo ../nowhere > r/.realgit/commondir",
        "head -c 1048577 /dev/zero | tr '\\0' '.' > r/.realgit/commondir",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char script[512];
        snprintf(script, sizeof script, "rm -rf r; " SEP " && %s", bad[i]);
        sh(script);
        ck_assert_msg(gitdirs_of("r", b, sizeof b) == -1, "not refused: %s", bad[i]);
        kg_error err = {0};
        ck_assert_ptr_null(kg_gitguard_begin(at("r"), 0, &err));
        ck_assert_ptr_nonnull(strstr(err.msg, "cannot be read as git reads it"));
    }
}
END_TEST

/* A linked worktree's git directory, and the main one its commondir
 * names, both in the project. */
START_TEST(gitdirs_follow_commondir)
{
    char b[4096];
    sh("mkdir p && git init -q --bare p/.main && mkdir p/.wtgd && "
       "echo ../.main > p/.wtgd/commondir && echo 'ref: refs/heads/x' > p/.wtgd/HEAD && "
       "printf 'gitdir: .wtgd\\n' > p/.git");
    ck_assert_int_eq(gitdirs_of("p", b, sizeof b), 0);
    ck_assert_str_eq(b, "p/.wtgd p/.main");
    /* outside the project, the main one is not writable from the box */
    sh("echo ../../outside > p/.wtgd/commondir && git init -q --bare outside");
    ck_assert_int_eq(gitdirs_of("p", b, sizeof b), 0);
    ck_assert_str_eq(b, "p/.wtgd");
}
END_TEST

/* The pins: the .git file, and what the table protects below .git, in
 * the git directory it names. */
START_TEST(pins_separate_git_dir)
{
    sh(SEP);
    kg_strv *v = kg_strv_new();
    kg_gitguard_pins(at("r"), v);
    static const char *const want[] = {"r/.git",
                                       "r/.realgit/hooks",
                                       "r/.realgit/config",
                                       "r/.realgit/config.worktree",
                                       "r/.realgit/modules",
                                       "r/.realgit/worktrees",
                                       "r/.realgit/commondir"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(kg_strv_contains(v, at(want[i])), "not pinned: %s", want[i]);
    kg_strv_free(v);
}
END_TEST

/* After the run, in the git directory the unchanged .git file names: what
 * a .git directory is checked for, and the directory itself replaced. */
START_TEST(end_checks_separate_git_dir)
{
    char out[8192];
    struct stat st;
    sh(SEP " && git init -q --bare evil && git -C evil config core.fsmonitor 'touch x'");
    kg_error err = {0};
    kg_gitguard *g = kg_gitguard_begin(at("r"), 0, &err);
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(end_of(g, out, sizeof out), 0); /* nothing happened */
    sh("cd r && echo ../../evil > .realgit/commondir && "
       "printf '[core]\\n\\tfsmonitor = touch x\\n' > .realgit/config.worktree && "
       "printf '[core]\\n\\tfsmonitor = touch x\\n' >> .realgit/config && "
       "printf '#!/bin/sh\\ntouch x\\n' > .realgit/hooks/pre-commit && "
       "mkdir -p .realgit/rebase-merge && echo 'exec touch x' > "
       ".realgit/rebase-merge/git-rebase-todo");
    ck_assert_int_eq(end_of(g, out, sizeof out), 5);
    ck_assert_ptr_nonnull(strstr(out, ".realgit/commondir was planted by the run"));
    ck_assert_int_eq(lstat(at("r/.realgit/commondir.kgate-quarantine"), &st), 0);
    ck_assert_int_eq(lstat(at("r/.realgit/config.worktree.kgate-quarantine"), &st), 0);
    ck_assert_int_eq(lstat(at("r/.realgit/config.kgate-quarantine"), &st), 0);
    ck_assert_int_eq(lstat(at("r/.realgit/hooks.kgate-quarantine"), &st), 0);
    ck_assert_int_eq(lstat(at("r/.realgit/rebase-merge/git-rebase-todo"), &st), -1);
    kg_gitguard_free(g);

    /* replaced by another directory */
    sh("rm -rf r evil && " SEP);
    g = kg_gitguard_begin(at("r"), 0, &err);
    ck_assert_ptr_nonnull(g);
    sh("cd r && mv .realgit old && git init -q --bare .realgit && "
       "git -C .realgit config core.fsmonitor 'touch x'");
    ck_assert_int_eq(end_of(g, out, sizeof out), 1);
    ck_assert_ptr_nonnull(
        strstr(out, "the git directory the project's .git file names was replaced"));
    ck_assert_int_eq(lstat(at("r/.realgit.kgate-quarantine"), &st), 0);
    kg_gitguard_free(g);

    /* the same .git file, through a symbolic link the run pointed elsewhere */
    sh("rm -rf r && " SEP " && cd r && ln -s .realgit lnk && printf 'gitdir: lnk\\n' > .git");
    g = kg_gitguard_begin(at("r"), 0, &err);
    ck_assert_ptr_nonnull(g);
    sh("cd r && git init -q --bare evil && git -C evil config core.fsmonitor 'touch x' && "
       "rm lnk && ln -s evil lnk");
    ck_assert_int_eq(end_of(g, out, sizeof out), 1);
    ck_assert_ptr_nonnull(strstr(out, "leads to another git directory than at the launch"));
    ck_assert_int_eq(lstat(at("r/.git.kgate-quarantine"), &st), 0);
    kg_gitguard_free(g);

    /* a linked worktree's commondir, through a symbolic link pointed elsewhere */
    sh("rm -rf r && mkdir r && git init -q --bare r/.main && ln -s .main r/lnk && "
       "mkdir r/.wtgd && echo ../lnk > r/.wtgd/commondir && "
       "echo 'ref: refs/heads/x' > r/.wtgd/HEAD && printf 'gitdir: .wtgd\\n' > r/.git");
    g = kg_gitguard_begin(at("r"), 0, &err);
    ck_assert_ptr_nonnull(g);
    sh("cd r && git init -q --bare evil && git -C evil config core.fsmonitor 'touch x' && "
       "rm lnk && ln -s evil lnk");
    ck_assert_int_eq(end_of(g, out, sizeof out), 1);
    ck_assert_ptr_nonnull(strstr(out, "its commondir leads to another git directory"));
    ck_assert_int_eq(lstat(at("r/.wtgd/commondir.kgate-quarantine"), &st), 0);
    kg_gitguard_free(g);

    /* ordinary work (a commit) is left alone */
    sh("rm -rf r && " SEP);
    g = kg_gitguard_begin(at("r"), 0, &err);
    ck_assert_ptr_nonnull(g);
    sh("cd r && echo a > a && git add a && git commit -qm a");
    ck_assert_int_eq(end_of(g, out, sizeof out), 0);
    kg_gitguard_free(g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gitguard");
    TCase *tc = tcase_create("gitguard");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, index_versions);
    tcase_add_test(tc, config_allow_list);
    tcase_add_test(tc, begin_refuses_a_commondir);
    tcase_add_test(tc, end_moves_aside_what_was_planted);
    tcase_add_test(tc, end_new_repository);
    tcase_add_test(tc, finding_escapes_the_path);
    tcase_add_test(tc, end_never_moves_outside);
    tcase_add_test(tc, commondir_placeholder);
    tcase_add_test(tc, pins_gitlinks);
    tcase_add_test(tc, gitfile_longer_than_a_page);
    tcase_add_test(tc, gitfile_name_with_cr_lf);
    tcase_add_test(tc, gitfile_nul_ends_the_name);
    tcase_add_test(tc, gitfile_through_a_symlink);
    tcase_add_test(tc, gitfile_unreadable_is_unsafe);
    tcase_add_test(tc, gitfile_dangling_is_unsafe);
    tcase_add_test(tc, gitlinks_nested_in_gitlinks);
    tcase_add_test(tc, quarantine_names_taken_in_advance);
    tcase_add_test(tc, quarantine_in_a_read_only_directory);
    tcase_add_test(tc, own_nested_repositories_stay);
    tcase_add_test(tc, hooks_dir_follows_core_hookspath);
    tcase_add_test(tc, gitdirs_read_as_git_does);
    tcase_add_test(tc, gitdirs_unreadable_refuse);
    tcase_add_test(tc, gitdirs_follow_commondir);
    tcase_add_test(tc, pins_separate_git_dir);
    tcase_add_test(tc, end_checks_separate_git_dir);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
