/* test_envfilter.c: which environment variables reach the program. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "envfilter.h"
#include "testutil.h"

START_TEST(secret_names_withheld)
{
    static const char *const secret[] = {"AWS_ACCESS_KEY_ID",
                                         "AWS_SECRET_ACCESS_KEY",
                                         "AWS_SESSION_TOKEN",
                                         "GITHUB_TOKEN",
                                         "GH_TOKEN",
                                         "OPENAI_API_KEY",
                                         "ANTHROPIC_API_KEY",
                                         "NPM_TOKEN",
                                         "NPM_CONFIG__AUTHTOKEN",
                                         "DB_PASSWORD",
                                         "PGPASSWORD",
                                         "MYSQL_PWD_PASS",
                                         "SMTP_PASS",
                                         "HTPASSWD",
                                         "GPG_PASSPHRASE",
                                         "GOOGLE_APPLICATION_CREDENTIALS",
                                         "AZURE_CLIENT_SECRET",
                                         "SSH_PRIVATE_KEY",
                                         "SESSION_COOKIE",
                                         "HTTP_AUTHORIZATION",
                                         "AUTH",
                                         "MY_API",
                                         "STRIPE_APIKEY",
                                         "SENTRY_DSN",
                                         "DOCKER_CREDS",
                                         "api_key",
                                         "github_token",
                                         "Secret",
                                         "HF_TOKEN",
                                         "SLACK_BOT_TOKEN",
                                         "ENCRYPTION_KEYS",
                                         "PRIVKEY",
                                         "DBUS_SESSION_BUS_ADDRESS",
                                         "GIT_CONFIG_GLOBAL",
                                         "GIT_CONFIG_COUNT",
                                         "GIT_CONFIG_KEY_0",
                                         "GIT_CONFIG_VALUE_0",
                                         "GIT_CONFIG_PARAMETERS",
                                         "GIT_CONFIG_SYSTEM"};
    for (size_t i = 0; i < sizeof secret / sizeof *secret; i++)
        ck_assert_msg(kg_env_name_looks_secret(secret[i]), "%s passed", secret[i]);
}
END_TEST

START_TEST(ordinary_names_pass)
{
    static const char *const plain[] = {"PATH",
                                        "HOME",
                                        "USER",
                                        "LOGNAME",
                                        "LANG",
                                        "LC_ALL",
                                        "LC_CTYPE",
                                        "TERM",
                                        "SHELL",
                                        "PWD",
                                        "OLDPWD",
                                        "TMPDIR",
                                        "EDITOR",
                                        "PAGER",
                                        "TZ",
                                        "GIT_AUTHOR_NAME",
                                        "GIT_AUTHOR_EMAIL",
                                        "GIT_COMMITTER_NAME",
                                        "KEYBOARD_LAYOUT",
                                        "COMPASS_DIR",
                                        "PASSTHROUGH_MODE",
                                        "MANPATH",
                                        "PYTHONPATH",
                                        "GOPATH",
                                        "CARGO_HOME",
                                        "XDG_SESSION_TYPE",
                                        "SSH_AUTH_SOCK",
                                        "DISPLAY",
                                        "HOSTNAME",
                                        "SHLVL",
                                        "CC",
                                        "MAKEFLAGS",
                                        "JAVA_HOME",
                                        "NODE_OPTIONS",
                                        "RUSTFLAGS",
                                        "MONKEYS_COUNT"};
    for (size_t i = 0; i < sizeof plain / sizeof *plain; i++)
        ck_assert_msg(!kg_env_name_looks_secret(plain[i]), "%s withheld", plain[i]);
}
END_TEST

static kg_strv *strv_of(const char *const *v)
{
    kg_strv *s = kg_strv_new();
    for (; v && *v; v++) kg_strv_push(s, *v);
    return s;
}

START_TEST(filter_with_pass_and_deny)
{
    char *env[] = {"PATH=/usr/bin:/bin",
                   "HOME=/home/u",
                   "GITHUB_TOKEN=ghp_x",
                   "AWS_SECRET_ACCESS_KEY=abc",
                   "AWS_REGION=eu-west-1",
                   "AWS_PROFILE=dev",
                   "NPM_TOKEN=n",
                   "CI_JOB_TOKEN=ci",
                   "MY_DATABASE_URL=postgres://u:p@h/db",
                   "NOEQUALS",
                   "=bad",
                   "GITHUB_TOKEN=second",
                   "EMPTY=",
                   NULL};
    static const char *const pass[] = {"GITHUB_TOKEN", "CI_*", "AWS_*", NULL};
    static const char *const deny[] = {"AWS_SECRET_*", "MY_DATABASE_URL", "CI_JOB_TOKEN", NULL};
    kg_strv *pass_env = strv_of(pass), *deny_env = strv_of(deny);
    kg_strv *out = kg_strv_new(), *withheld = kg_strv_new();
    kg_env_filter(env, pass_env, deny_env, out, withheld);

    /* pass_env lets GITHUB_TOKEN and AWS_REGION through; deny_env beats
     * pass_env for CI_JOB_TOKEN and AWS_SECRET_ACCESS_KEY. */
    static const char *const want_out[] = {"PATH=/usr/bin:/bin",
                                           "HOME=/home/u",
                                           "GITHUB_TOKEN=ghp_x",
                                           "AWS_REGION=eu-west-1",
                                           "AWS_PROFILE=dev",
                                           "GITHUB_TOKEN=second",
                                           "EMPTY="};
    ck_assert_uint_eq(kg_strv_len(out), sizeof want_out / sizeof *want_out);
    for (size_t i = 0; i < kg_strv_len(out); i++)
        ck_assert_str_eq(kg_strv_get(out, i), want_out[i]);

    static const char *const want_withheld[] = {"AWS_SECRET_ACCESS_KEY", "CI_JOB_TOKEN",
                                                "MY_DATABASE_URL", "NPM_TOKEN"};
    ck_assert_uint_eq(kg_strv_len(withheld), 4);
    for (size_t i = 0; i < 4; i++) ck_assert_str_eq(kg_strv_get(withheld, i), want_withheld[i]);
    /* Names only: no value ever reaches the withheld list. */
    for (size_t i = 0; i < kg_strv_len(withheld); i++)
        ck_assert_ptr_null(strchr(kg_strv_get(withheld, i), '='));

    kg_strv_free(pass_env);
    kg_strv_free(deny_env);
    kg_strv_free(out);
    kg_strv_free(withheld);
}
END_TEST

START_TEST(deny_env_beats_always_pass)
{
    char *env[] = {"PATH=/bin", "LANG=C", "HOME=/h", NULL};
    static const char *const deny[] = {"LANG", NULL};
    kg_strv *deny_env = strv_of(deny);
    kg_strv *out = kg_strv_new();
    kg_env_filter(env, NULL, deny_env, out, NULL);
    ck_assert_uint_eq(kg_strv_len(out), 2);
    ck_assert_str_eq(kg_strv_get(out, 0), "PATH=/bin");
    ck_assert_str_eq(kg_strv_get(out, 1), "HOME=/h");
    kg_strv_free(deny_env);
    kg_strv_free(out);
}
END_TEST

/* kgate's own variables never reach the program, not even through
 * pass_env: KGATE_PLUGIN_PATH would tell it where to write a plugin. */
START_TEST(kgate_variables_never_pass)
{
    char *env[] = {"KGATE_PLUGIN_PATH=/p", "KGATE_DEBUG=1", "KGATEWAY=x", "PATH=/bin", NULL};
    static const char *const pass[] = {"KGATE_PLUGIN_PATH", "KGATE_*", NULL};
    kg_strv *pass_env = strv_of(pass);
    kg_strv *out = kg_strv_new(), *withheld = kg_strv_new();
    kg_env_filter(env, pass_env, NULL, out, withheld);
    ck_assert_uint_eq(kg_strv_len(out), 2);
    ck_assert_str_eq(kg_strv_get(out, 0), "KGATEWAY=x");
    ck_assert_str_eq(kg_strv_get(out, 1), "PATH=/bin");
    ck_assert_uint_eq(kg_strv_len(withheld), 0);
    kg_strv_free(pass_env);
    kg_strv_free(out);
    kg_strv_free(withheld);
}
END_TEST

START_TEST(empty_environment)
{
    kg_strv *out = kg_strv_new(), *withheld = kg_strv_new();
    kg_env_filter(NULL, NULL, NULL, out, withheld);
    ck_assert_uint_eq(kg_strv_len(out), 0);
    ck_assert_uint_eq(kg_strv_len(withheld), 0);
    kg_strv_free(out);
    kg_strv_free(withheld);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("envfilter");
    TCase *tc = tcase_create("names");
    tcase_add_test(tc, secret_names_withheld);
    tcase_add_test(tc, ordinary_names_pass);
    tcase_add_test(tc, filter_with_pass_and_deny);
    tcase_add_test(tc, deny_env_beats_always_pass);
    tcase_add_test(tc, empty_environment);
    tcase_add_test(tc, kgate_variables_never_pass);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
