/* test_agentwrap.c: the one boxed form of an agent's command and its
 * quoting (core/cli/agentwrap.c).  Every hostile string, wrapped, must be
 * one word to the agent's shell: a real /bin/sh parses the wrapped form with
 * a stand-in "kgate" that prints its arguments, and the last one must be the
 * string, byte for byte, and nothing else may have run. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agentwrap.h"
#include "testutil.h"

static char *wrap(const char *kgate, const char *cmd)
{
    UT_string *u;
    utstring_new(u);
    kg_agent_wrap(u, kgate, cmd);
    char *r = strdup(utstring_body(u));
    utstring_free(u);
    return r;
}

static const char *const hostile[] = {
    "echo hi",
    "",
    "it's",
    "'",
    "''",
    "'\\''",
    "a\"b\"c",
    "x\ny\n",
    "$(touch MARK)",
    "`touch MARK`",
    "trailing\\",
    "\\",
    "-- --help -c",
    "--",
    "-e",
    "; touch MARK",
    "' ; touch MARK ; '",
    "'\"$(touch MARK)\"'",
    "&& touch MARK",
    "| touch MARK",
    "\ttab\r\n",
    "caf\xc3\xa9 \xf0\x9f\x98\x80",
    "$HOME ${HOME} ~ * ? [a]",
    "!! !$",
    "#comment",
};

START_TEST(quoting_is_the_single_form)
{
    UT_string *u;
    utstring_new(u);
    kg_sh_quote(u, "it's");
    ck_assert_str_eq(utstring_body(u), "'it'\\''s'");
    utstring_clear(u);
    kg_sh_quote(u, "");
    ck_assert_str_eq(utstring_body(u), "''");
    utstring_free(u);
    char *w = wrap("/usr/bin/kgate", "ls -l");
    ck_assert_str_eq(w, "'/usr/bin/kgate' run --no-pty -- /bin/sh -c -- 'ls -l'");
    free(w);
}
END_TEST

/* The wrapped form, parsed by /bin/sh with "kgate" a script that prints
 * each argument NUL-terminated: the arguments are exactly run --no-pty --
 * /bin/sh -c -- STRING, and no MARK file appears. */
START_TEST(the_shell_sees_one_word)
{
    char dir[] = "/tmp/kg-agentwrap-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char fake[256], mark[256], out[256];
    snprintf(fake, sizeof fake, "%s/kgate", dir);
    snprintf(mark, sizeof mark, "%s/MARK", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    kgt_write_file(fake, "#!/bin/sh\nprintf '%s\\0' \"$@\"\n", 29, 0755);
    for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++) {
        char *w = wrap(fake, hostile[i]);
        UT_string *script;
        utstring_new(script);
        utstring_printf(script, "cd '%s' && %s > '%s'", dir, w, out);
        pid_t pid = fork();
        if (pid == 0) {
            execl("/bin/sh", "sh", "-c", utstring_body(script), (char *)NULL);
            _exit(127);
        }
        int st;
        ck_assert_int_eq(waitpid(pid, &st, 0), pid);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "case %zu: sh failed", i);
        FILE *f = fopen(out, "rb");
        char got[4096];
        size_t n = fread(got, 1, sizeof got, f);
        fclose(f);
        const char *want[] = {"run", "--no-pty", "--", "/bin/sh", "-c", "--", hostile[i]};
        size_t at = 0;
        for (size_t k = 0; k < 7; k++) {
            size_t l = strlen(want[k]);
            ck_assert_msg(at + l < n + 1 && memcmp(got + at, want[k], l) == 0 &&
                              got[at + l] == '\0',
                          "case %zu: argument %zu differs", i, k);
            at += l + 1;
        }
        ck_assert_msg(at == n, "case %zu: more arguments than seven", i);
        ck_assert_msg(access(mark, F_OK) != 0, "case %zu: something ran outside", i);
        utstring_free(script);
        free(w);
    }
    unlink(fake);
    unlink(out);
    rmdir(dir);
}
END_TEST

START_TEST(unwrap_takes_only_the_exact_form)
{
    const char *k = "/usr/bin/kgate";
    for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++) {
        char *w = wrap(k, hostile[i]);
        char *inner = kg_agent_unwrap(k, w);
        ck_assert_msg(inner && strcmp(inner, hostile[i]) == 0, "case %zu", i);
        free(inner);
        free(w);
    }
    static const char *const lookalike[] = {
        "'/usr/bin/kgate' run --no-pty -- /bin/sh -c -- 'ls'; touch MARK",
        "'/usr/bin/kgate' run --no-pty -- /bin/sh -c -- 'ls' && touch MARK",
        "'/usr/bin/kgate' run --no-pty -- /bin/sh -c -- 'ls''x'",
        "'/usr/bin/kgate' run --no-pty -- /bin/sh -c -- 'a'\\'",
        "'/usr/bin/kgate' run --no-pty -- /bin/sh -c -- ls",
        "'/usr/bin/kgate' run --no-pty -- /bin/sh -c -- \"ls\"",
        "'/usr/bin/kgate' run --no-pty -- /bin/sh -c -- 'ls' ",
        "'/usr/bin/kgate' run --no-pty -- /bin/sh -c -- 'ls\n' x",
        "'/usr/bin/kgate' run --no-pty -- /bin/sh -c -- '",
        "'/usr/bin/kgate' run --no-pty --allow-path / -- /bin/sh -c -- 'ls'",
        "'/tmp/kgate' run --no-pty -- /bin/sh -c -- 'ls'",
        "/usr/bin/kgate run --no-pty -- /bin/sh -c -- 'ls'",
        "kgate run -- ls",
        " '/usr/bin/kgate' run --no-pty -- /bin/sh -c -- 'ls'",
        "'/usr/bin/kgate' run --no-pty -- /bin/sh -c -- 'it'\"'\"'s'",
        "'/usr/bin/kgate' run --no-pty -- /bin/sh -c 'ls'", /* the form without -- */
    };
    for (size_t i = 0; i < sizeof lookalike / sizeof *lookalike; i++)
        ck_assert_msg(kg_agent_unwrap(k, lookalike[i]) == NULL, "look-alike %zu taken", i);
}
END_TEST

/* A 1 MiB command: wrapped and unwrapped whole. */
START_TEST(big_command)
{
    size_t n = 1 << 20;
    char *big = malloc(n + 1);
    for (size_t i = 0; i < n; i++) big[i] = "a'\n$`\\"[i % 6];
    big[n] = '\0';
    char *w = wrap("/k/kgate", big);
    char *inner = kg_agent_unwrap("/k/kgate", w);
    ck_assert_ptr_nonnull(inner);
    ck_assert(strcmp(inner, big) == 0);
    free(inner);
    free(w);
    free(big);
}
END_TEST

START_TEST(self_is_absolute)
{
    char buf[4096];
    kg_error err = {0};
    ck_assert_int_eq(kg_agent_self(buf, sizeof buf, &err), 0);
    ck_assert(buf[0] == '/');
    ck_assert_int_eq(access(buf, X_OK), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("agentwrap");
    TCase *tc = tcase_create("wrap");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, quoting_is_the_single_form);
    tcase_add_test(tc, the_shell_sees_one_word);
    tcase_add_test(tc, unwrap_takes_only_the_exact_form);
    tcase_add_test(tc, big_command);
    tcase_add_test(tc, self_is_absolute);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
