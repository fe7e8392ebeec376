/* test_config.c: the YAML config parser and writer (core/policy/config.c). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "testutil.h"

static kg_config *parse(const char *yaml, kg_error *err)
{
    return kg_config_parse("t.yaml", yaml, strlen(yaml), err);
}

/* Parsing must fail with exactly this message. */
static void expect_error(const char *yaml, const char *msg)
{
    kg_error err = {0};
    kg_config *c = parse(yaml, &err);
    ck_assert_msg(c == NULL, "parsed although it should fail: %s", yaml);
    ck_assert_str_eq(err.msg, msg);
}

/* Parsing must fail with a message that starts with prefix. */
static void expect_error_prefix(const char *yaml, size_t len, const char *prefix)
{
    kg_error err = {0};
    kg_config *c = kg_config_parse("t.yaml", yaml, len, &err);
    ck_assert_msg(c == NULL, "parsed although it should fail");
    ck_assert_msg(strncmp(err.msg, prefix, strlen(prefix)) == 0,
                  "message '%s' does not start with '%s'", err.msg, prefix);
}

static void assert_list(const kg_strv *v, const char *const *want, size_t n)
{
    ck_assert_uint_eq(kg_strv_len(v), n);
    for (size_t i = 0; i < n; i++) ck_assert_str_eq(kg_strv_get(v, i), want[i]);
}

/* Host entries are stored in their normal form: lowercase, one copy. */
START_TEST(test_host_entries_normalized)
{
    kg_error err = {0};
    kg_config *c = parse("allow_hosts: [\"*.Example.COM:443\", API.example.org, "
                         "\"*.example.com:443\", \"198.18.0.9:80\", api.example.org]\n",
                         &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    const char *want[] = {"*.example.com:443", "api.example.org", "198.18.0.9:80"};
    assert_list(c->lists[KG_KEY_ALLOW_HOSTS], want, 3);
    kg_config_free(c);

    /* The normal form is written digit by digit: every port width, and
     * the longest entry (a wildcard over 253 characters, port 65535). */
    static const char *const ports[][2] = {{"a.test:1", "a.test:1"},
                                           {"A.test:10", "a.test:10"},
                                           {"*.B.test:100", "*.b.test:100"},
                                           {"c.test:9999", "c.test:9999"},
                                           {"*.c.test:65535", "*.c.test:65535"},
                                           {"localhost:5432", "localhost:5432"}};
    for (size_t i = 0; i < sizeof ports / sizeof ports[0]; i++) {
        char norm[KG_HOST_ENTRY_MAX];
        ck_assert(kg_host_entry_norm(ports[i][0], norm, NULL));
        ck_assert_str_eq(norm, ports[i][1]);
    }
    char longest[300], norm[KG_HOST_ENTRY_MAX], want_long[300];
    memcpy(longest, "*.", 2);
    size_t n = 2;
    for (int label = 0; label < 4; label++) { /* 4 x 63 + 3 dots = 255; cut to 253 */
        if (label) longest[n++] = '.';
        memset(longest + n, label == 3 ? 'Z' : 'x', 63);
        n += 63;
    }
    longest[2 + 253] = '\0';
    strcpy(want_long, longest);
    for (char *q = want_long; *q; q++)
        if (*q == 'Z') *q = 'z';
    strcat(longest, ":65535");
    strcat(want_long, ":65535");
    ck_assert(kg_host_entry_norm(longest, norm, NULL));
    ck_assert_str_eq(norm, want_long);
    ck_assert(!kg_host_entry_norm("a.test:0", norm, NULL));
    ck_assert(!kg_host_entry_norm("a.test:65536", norm, NULL));
}
END_TEST

/* audit_sink: file, journald or syslog; nothing else (issue 31). */
START_TEST(test_audit_sink)
{
    kg_error err = {0};
    static const char *const names[] = {"file", "journald", "syslog"};
    for (int i = 0; i < 3; i++) {
        char y[64];
        snprintf(y, sizeof y, "audit_sink: %s\n", names[i]);
        kg_config *c = parse(y, &err);
        ck_assert_ptr_nonnull(c);
        ck_assert(c->has_audit_sink);
        ck_assert_int_eq(c->audit_sink, i);
        kg_config_free(c);
    }
    ck_assert_ptr_null(parse("audit_sink: Syslog\n", &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "audit_sink"));
    ck_assert_ptr_null(parse("audit_sink: [file]\n", &err));
    ck_assert_ptr_null(parse("audit_sink: file\naudit_sink: file\n", &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "duplicate"));
    kg_config *c = parse("network: off\n", &err);
    ck_assert(!c->has_audit_sink);
    kg_config_free(c);
}
END_TEST

/* max_processes: a count, or unlimited; nothing else (issue 18). */
START_TEST(test_max_processes)
{
    kg_error err = {0};
    kg_config *c = parse("max_processes: 30\n", &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    ck_assert(c->has_max_processes);
    ck_assert_int_eq(c->max_processes, 30);
    kg_config_free(c);
    c = parse("max_processes: unlimited\n", &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    ck_assert_int_eq(c->max_processes, 0);
    kg_config_free(c);
    c = parse("network: off\n", &err);
    ck_assert(!c->has_max_processes);
    kg_config_free(c);
    c = kg_config_defaults();
    ck_assert_int_eq(c->max_processes, KG_DEFAULT_MAX_PROCESSES);
    kg_config_free(c);
    const char *bad[] = {"max_processes: 0\n",        "max_processes: -1\n",
                         "max_processes: 1e3\n",      "max_processes: 0x10\n",
                         "max_processes: 99999999\n", "max_processes: [1]\n",
                         "max_processes: ''\n",       "max_processes: 10\nmax_processes: 20\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memset(&err, 0, sizeof err);
        c = parse(bad[i], &err);
        ck_assert_msg(c == NULL, "accepted: %s", bad[i]);
        ck_assert_msg(strstr(err.msg, "max_processes") != NULL, "%s: %s", bad[i], err.msg);
    }
}
END_TEST

START_TEST(test_every_key)
{
    const char *yaml = "network: open\n"
                       "allow_hosts: [GitHub.com, api.example.org, 198.18.0.2]\n"
                       "allow_paths: [~/cache, /opt/x]\n"
                       "read_paths:\n  - ~/.gitconfig\n"
                       "deny_read: [.env, secrets/key.pem]\n"
                       "deny_exec: [curl, /usr/bin/nc]\n"
                       "mask_prefixes: [myco_]\n"
                       "pass_env: [GITHUB_TOKEN]\n"
                       "deny_env: [AWS_*, DB_PASS]\n"
                       "protect_paths: [Makefile]\n"
                       "unprotect_paths: [.vscode]\n"
                       "allow_sockets: [/run/user/1000/ssh-agent.sock]\n"
                       "macos_allow_mach: [com.apple.securityd.xpc]\n"
                       "macos_profile: strict\n";
    kg_error err = {0};
    kg_config *c = parse(yaml, &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    ck_assert(c->has_network);
    ck_assert_int_eq(c->network, KGATE_NET_OPEN);
    ck_assert(c->has_macos_profile);
    ck_assert_int_eq(c->macos_profile, KGATE_MACOS_STRICT);
    for (int k = 0; k < KG_N_LIST_KEYS; k++) ck_assert_msg(c->has[k], "%s", kg_list_key_name(k));
    const char *hosts[] = {"github.com", "api.example.org", "198.18.0.2"};
    assert_list(c->lists[KG_KEY_ALLOW_HOSTS], hosts, 3);
    const char *ap[] = {"~/cache", "/opt/x"};
    assert_list(c->lists[KG_KEY_ALLOW_PATHS], ap, 2);
    const char *rp[] = {"~/.gitconfig"};
    assert_list(c->lists[KG_KEY_READ_PATHS], rp, 1);
    const char *dr[] = {".env", "secrets/key.pem"};
    assert_list(c->lists[KG_KEY_DENY_READ], dr, 2);
    const char *de[] = {"curl", "/usr/bin/nc"};
    assert_list(c->lists[KG_KEY_DENY_EXEC], de, 2);
    const char *mp[] = {"myco_"};
    assert_list(c->lists[KG_KEY_MASK_PREFIXES], mp, 1);
    const char *pe[] = {"GITHUB_TOKEN"};
    assert_list(c->lists[KG_KEY_PASS_ENV], pe, 1);
    const char *den[] = {"AWS_*", "DB_PASS"};
    assert_list(c->lists[KG_KEY_DENY_ENV], den, 2);
    const char *pp[] = {"Makefile"};
    assert_list(c->lists[KG_KEY_PROTECT_PATHS], pp, 1);
    const char *up[] = {".vscode"};
    assert_list(c->lists[KG_KEY_UNPROTECT_PATHS], up, 1);
    const char *as[] = {"/run/user/1000/ssh-agent.sock"};
    assert_list(c->lists[KG_KEY_ALLOW_SOCKETS], as, 1);
    const char *mm[] = {"com.apple.securityd.xpc"};
    assert_list(c->lists[KG_KEY_MACOS_ALLOW_MACH], mm, 1);
    kg_config_free(c);
}
END_TEST

START_TEST(test_enum_values)
{
    static const struct {
        const char *yaml;
        kgate_network net;
    } nets[] = {{"network: off\n", KGATE_NET_OFF},
                {"network: restricted\n", KGATE_NET_RESTRICTED},
                {"network: \"open\"\n", KGATE_NET_OPEN}};
    for (size_t i = 0; i < 3; i++) {
        kg_error err = {0};
        kg_config *c = parse(nets[i].yaml, &err);
        ck_assert_msg(c != NULL, "%s", err.msg);
        ck_assert_int_eq(c->network, nets[i].net);
        kg_config_free(c);
    }
    expect_error("network: maybe\n",
                 "t.yaml:1:10: network: invalid value 'maybe' (expected off, restricted or open)");
    expect_error("network: Off\n",
                 "t.yaml:1:10: network: invalid value 'Off' (expected off, restricted or open)");
    expect_error("macos_profile: lax\n",
                 "t.yaml:1:16: macos_profile: invalid value 'lax' (expected permissive or strict)");
}
END_TEST

START_TEST(test_absent_and_empty)
{
    kg_error err = {0};
    const char *empties[] = {"", "# only a comment\n", "---\n", "---\n...\n", "\n\n"};
    for (size_t i = 0; i < sizeof empties / sizeof empties[0]; i++) {
        kg_config *c = parse(empties[i], &err);
        ck_assert_msg(c != NULL, "'%s': %s", empties[i], err.msg);
        ck_assert(!c->has_network);
        ck_assert(!c->has_macos_profile);
        for (int k = 0; k < KG_N_LIST_KEYS; k++) {
            ck_assert(!c->has[k]);
            ck_assert_ptr_nonnull(c->lists[k]);
        }
        kg_config_free(c);
    }
    /* A null value is an empty list that is set (so a project can drop
     * every entry by writing "allow_hosts:"). */
    kg_config *c = parse("allow_hosts:\ndeny_read: ~\npass_env: []\n", &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    ck_assert(c->has[KG_KEY_ALLOW_HOSTS]);
    ck_assert(c->has[KG_KEY_DENY_READ]);
    ck_assert(c->has[KG_KEY_PASS_ENV]);
    ck_assert_uint_eq(kg_strv_len(c->lists[KG_KEY_ALLOW_HOSTS]), 0);
    ck_assert(!c->has[KG_KEY_ALLOW_PATHS]);
    kg_config_free(c);
}
END_TEST

START_TEST(test_wrong_types)
{
    expect_error("allow_hosts: github.com\n",
                 "t.yaml:1:14: allow_hosts: expected a list, got a scalar");
    expect_error("deny_read:\n  path: .env\n",
                 "t.yaml:2:3: deny_read: expected a list, got a mapping");
    expect_error("deny_exec:\n  - curl\n  - {name: wget}\n",
                 "t.yaml:3:5: deny_exec: list entries must be scalars, got a mapping");
    expect_error("allow_paths: [[/a]]\n",
                 "t.yaml:1:15: allow_paths: list entries must be scalars, got a list");
    expect_error("network: [off]\n", "t.yaml:1:10: network: expected a scalar, got a list");
    expect_error("macos_profile: {a: b}\n",
                 "t.yaml:1:16: macos_profile: expected a scalar, got a mapping");
    expect_error("- network\n", "t.yaml:1:1: the top level must be a mapping of keys, got a list");
    expect_error("network\n", "t.yaml:1:1: the top level must be a mapping of keys, got a scalar");
    expect_error("[a]: b\n", "t.yaml:1:1: keys must be plain names, got a list");
    expect_error("deny_read: [.env, ~]\n", "t.yaml:1:19: deny_read: empty list entry");
    expect_error("deny_read: [.env, \"\"]\n", "t.yaml:1:19: deny_read: empty entry ''");
}
END_TEST

START_TEST(test_unknown_and_duplicate_keys)
{
    expect_error("network: off\nallow_host: [a.com]\n", "t.yaml:2:1: unknown key 'allow_host'");
    expect_error("network: off\n  # x\nnetwork: open\n", "t.yaml:3:1: duplicate key 'network'");
    expect_error("deny_read: []\ndeny_read: [.env]\n", "t.yaml:2:1: duplicate key 'deny_read'");
    expect_error("macos_profile: strict\nmacos_profile: strict\n",
                 "t.yaml:2:1: duplicate key 'macos_profile'");
    /* A key with a control character is shown without it. */
    expect_error("\"bad\\nkey\": 1\n", "t.yaml:1:1: unknown key 'bad?key'");
}
END_TEST

START_TEST(test_entry_validation)
{
    expect_error("allow_hosts: [ok.com, bad_host.com]\n",
                 "t.yaml:1:23: allow_hosts: invalid host name 'bad_host.com': not a host "
                 "name (letters, digits, '-' and '.' only)");
    expect_error("allow_hosts:\n  - -lead.com\n",
                 "t.yaml:2:5: allow_hosts: invalid host name '-lead.com': label starts or "
                 "ends with '-'");
    expect_error("allow_hosts: [\"http://x.com\"]\n",
                 "t.yaml:1:15: allow_hosts: invalid host name 'http://x.com': a URL, not a "
                 "host entry (write the host name alone)");
    /* Wildcards and ports (kgate-hostspec.h): what is too wide or malformed. */
    expect_error("allow_hosts: [a.com, \"*\"]\n",
                 "t.yaml:1:22: allow_hosts: invalid host name '*': \"*\" alone would allow "
                 "every host (use network: open)");
    expect_error("allow_hosts:\n  - \"*.com\"\n",
                 "t.yaml:2:5: allow_hosts: invalid host name '*.com': a wildcard over a "
                 "whole top-level domain (\"*.com\")");
    expect_error("allow_hosts: [\"a.*.com\"]\n",
                 "t.yaml:1:15: allow_hosts: invalid host name 'a.*.com': '*' is allowed only "
                 "as a leading \"*.\"");
    expect_error("allow_hosts: [\"a.com:0\"]\n",
                 "t.yaml:1:15: allow_hosts: invalid host name 'a.com:0': port 0 (omit the "
                 "port to allow every port)");
    expect_error("allow_hosts: [\"a.com:65536\"]\n",
                 "t.yaml:1:15: allow_hosts: invalid host name 'a.com:65536': port above 65535");
    expect_error("allow_hosts: [\"a.com:0443\"]\n",
                 "t.yaml:1:15: allow_hosts: invalid host name 'a.com:0443': port with a "
                 "leading zero");
    expect_error("allow_hosts: [\"::1\"]\n",
                 "t.yaml:1:15: allow_hosts: invalid host name '::1': IPv6 addresses are not "
                 "supported (IPv4 addresses and names only)");
    /* Unquoted, "*.x" is a YAML alias: the syntax error says to quote it. */
    expect_error("allow_hosts:\n  - *.example.com\n",
                 "t.yaml:2:6: YAML syntax error: did not find expected alphabetic or numeric "
                 "character while scanning an alias at 2:5 (quote an entry that starts with "
                 "'*': \"*.example.com\")");
    expect_error("pass_env: [\"A=B\"]\n",
                 "t.yaml:1:12: pass_env: not a variable name or a glob over names 'A=B'");
    expect_error("macos_allow_mach: [\"com.apple.x\\\")(allow default\"]\n",
                 "t.yaml:1:20: macos_allow_mach: not a mach service name ([A-Za-z0-9._-]) "
                 "'com.apple.x\")(allow default'");
    expect_error("deny_read: [\"a\\nb\"]\n",
                 "t.yaml:1:13: deny_read: control character in entry 'a?b'");
    expect_error("mask_prefixes: [\"a b\"]\n",
                 "t.yaml:1:17: mask_prefixes: white space in entry 'a b'");
}
END_TEST

START_TEST(test_host_names)
{
    static const struct {
        const char *h;
        bool ok;
    } cases[] = {
        {"github.com", true},
        {"a", true},
        {"localhost", false},
        {"localhost:5432", true},
        {"x-y.example", true},
        {"1.2.3.4", true},
        {"255.255.255.255", true},
        {"xn--bcher-kva.ch", true},
        {"3com.net", true},
        {"", false},
        {"a..b", false},
        {".a", false},
        {"a.", false},
        {"-a.com", false},
        {"a-.com", false},
        {"a_b.com", false},
        {"a b", false},
        {"1.2.3", false},
        {"256.1.1.1", false},
        {"01.2.3.4", false},
        {"1.2.3.4.5", false},
        {"::1", false},
        {"*.example.com", true},
        {"host:80", true},
        {"a/b", false},
        {"*", false},
        {"*.com", false},
        {"host:0", false},
        {"a.*.b", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_msg(kg_host_name_valid(cases[i].h) == cases[i].ok, "%s", cases[i].h);
    char label[70];
    memset(label, 'a', 64);
    label[64] = '\0';
    ck_assert(!kg_host_name_valid(label)); /* a 64-character label */
    label[63] = '\0';
    ck_assert(kg_host_name_valid(label));
    char longname[300];
    size_t n = 0;
    for (; n < 254; n++) longname[n] = (n % 2) ? '.' : 'a';
    longname[254] = '\0';
    ck_assert(!kg_host_name_valid(longname));
}
END_TEST

START_TEST(test_malformed_yaml)
{
    /* The first position is where libyaml noticed, the second where the
     * construct began. */
    expect_error("deny_read: [a\n",
                 "t.yaml:2:1: YAML syntax error: did not find expected ',' or ']' "
                 "while parsing a flow sequence at 1:12");
    expect_error("deny_read:\n  - a\n  b: c\n",
                 "t.yaml:3:3: YAML syntax error: did not find expected '-' indicator "
                 "while parsing a block collection at 2:3");
    expect_error("network: off\nnetwork open\n",
                 "t.yaml:3:1: YAML syntax error: could not find expected ':' while "
                 "scanning a simple key at 2:1");
    expect_error("network: \"off\n",
                 "t.yaml:2:1: YAML syntax error: found unexpected end of stream "
                 "while scanning a quoted scalar at 1:10");
    expect_error("\tnetwork: off\n",
                 "t.yaml:1:1: YAML syntax error: found character that cannot start any "
                 "token while scanning for the next token at 1:1");
    expect_error("network: off\n---\nnetwork: open\n", "t.yaml:2:1: more than one YAML document");
    expect_error("%YAML 1.1\n---\nnetwork: off\n",
                 "t.yaml:1:1: YAML directives are not allowed in a kgate config");
}
END_TEST

START_TEST(test_hostile_aliases_and_tags)
{
    const char *laughs = "deny_read: &a [\"lol\",\"lol\",\"lol\",\"lol\"]\n"
                         "deny_exec: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
                         "deny_env: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n";
    expect_error(laughs, "t.yaml:1:12: YAML anchors are not allowed in a kgate config");
    expect_error("deny_read: &x [.env]\n",
                 "t.yaml:1:12: YAML anchors are not allowed in a kgate config");
    expect_error("deny_read: [.env]\ndeny_exec: *x\n",
                 "t.yaml:2:12: YAML aliases are not allowed in a kgate config");
    expect_error("network: !!str off\n",
                 "t.yaml:1:10: YAML tags are not allowed in a kgate config");
    expect_error("deny_read: !custom [a]\n",
                 "t.yaml:1:12: YAML tags are not allowed in a kgate config");
    expect_error("--- !map\nnetwork: off\n",
                 "t.yaml:1:5: YAML tags are not allowed in a kgate config");
}
END_TEST

START_TEST(test_hostile_nesting)
{
    /* 500 000 open brackets: no tree is built, the first nested list is an
     * error at its own position, and nothing recurses. */
    size_t depth = 500000;
    char *buf = malloc(depth + 32);
    ck_assert_ptr_nonnull(buf);
    int n = sprintf(buf, "allow_paths: ");
    memset(buf + n, '[', depth);
    buf[(size_t)n + depth] = '\0';
    expect_error_prefix(buf, strlen(buf),
                        "t.yaml:1:15: allow_paths: list entries must be scalars, got a list");
    memset(buf, '[', depth);
    buf[depth] = '\0';
    expect_error_prefix(buf, depth, "t.yaml:1:1: the top level must be a mapping");
    /* Nested mappings as a value. */
    size_t m = 0;
    m += (size_t)sprintf(buf, "deny_read:");
    for (int i = 0; i < 10000; i++) m += (size_t)sprintf(buf + m, " {a:");
    buf[m] = '\0';
    expect_error_prefix(buf, m, "t.yaml:1:12: deny_read: expected a list, got a mapping");
    free(buf);
}
END_TEST

START_TEST(test_hostile_sizes)
{
    /* Over 1 MiB: refused before parsing, whatever the content. */
    size_t big = 1024 * 1024 + 1;
    char *buf = malloc(big + 1);
    ck_assert_ptr_nonnull(buf);
    memset(buf, '#', big);
    buf[big] = '\0';
    expect_error_prefix(buf, big, "t.yaml:1:1: file larger than 1048576 bytes");
    /* Exactly 1 MiB of comment is fine. */
    kg_error err = {0};
    kg_config *c = kg_config_parse("t.yaml", buf, big - 1, &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    kg_config_free(c);

    /* A scalar over 4 KiB. */
    int n = sprintf(buf, "deny_read:\n  - ");
    memset(buf + n, 'x', 5000);
    buf[n + 5000] = '\0';
    expect_error(buf, "t.yaml:2:5: deny_read: value longer than 4096 bytes");
    /* 4096 is still fine. */
    buf[n + 4096] = '\0';
    c = parse(buf, &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    ck_assert_uint_eq(strlen(kg_strv_get(c->lists[KG_KEY_DENY_READ], 0)), 4096);
    kg_config_free(c);
    /* A long key. */
    buf[0] = '?';
    buf[1] = ' ';
    memset(buf + 2, 'k', 5000);
    strcpy(buf + 5002, "\n: 1\n");
    expect_error(buf, "t.yaml:1:3: key: value longer than 4096 bytes");
    free(buf);
}
END_TEST

START_TEST(test_hostile_bytes)
{
    /* A raw NUL byte in the middle of the file. */
    const char raw[] = "network: off\ndeny_read: [a\0b]\n";
    expect_error_prefix(raw, sizeof raw - 1, "t.yaml:2:14: invalid input: control characters");
    /* A NUL through an escape in a quoted scalar. */
    expect_error("deny_read: [\"a\\0b\"]\n", "t.yaml:1:13: deny_read: NUL byte in value");
    /* Invalid UTF-8. */
    const char bad8[] = "deny_read: [\"\xff\xfe\"]\n";
    expect_error_prefix(bad8, sizeof bad8 - 1, "t.yaml:1:14: invalid input: invalid leading UTF-8");
    /* Valid UTF-8 in a path is fine. */
    kg_error err = {0};
    kg_config *c = parse("deny_read: [\"caf\xc3\xa9/x\"]\n", &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    kg_config_free(c);
}
END_TEST

static char tmpdir[64];

static void make_tmp(void)
{
    strcpy(tmpdir, "/tmp/kgtest-config.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmp(void)
{
    if (!tmpdir[0]) return;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    tmpdir[0] = '\0';
}

START_TEST(test_load_file)
{
    make_tmp();
    char path[128];
    snprintf(path, sizeof path, "%s/config.yaml", tmpdir);
    kg_error err = {0};
    ck_assert_ptr_null(kg_config_load(path, &err));
    ck_assert_int_eq(err.code, ENOENT);

    kgt_write_file(path, "network: off\nbogus: 1\n", 22, 0644);
    ck_assert_ptr_null(kg_config_load(path, &err));
    char want[256];
    snprintf(want, sizeof want, "%s:2:1: unknown key 'bogus'", path);
    ck_assert_str_eq(err.msg, want);

    /* A file over 1 MiB on disk. */
    size_t big = 2 * 1024 * 1024;
    char *buf = malloc(big);
    ck_assert_ptr_nonnull(buf);
    memset(buf, '\n', big);
    kgt_write_file(path, buf, big, 0644);
    free(buf);
    ck_assert_ptr_null(kg_config_load(path, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "file larger than 1048576 bytes"));

    /* A FIFO must not block the load. */
    char fifo[160];
    snprintf(fifo, sizeof fifo, "%s/fifo.yaml", tmpdir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_ptr_null(kg_config_load(fifo, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "not a regular file"));

    /* A directory is not a config file. */
    ck_assert_ptr_null(kg_config_load(tmpdir, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "not a regular file"));

    kgt_write_file(path, "network: open\n", 14, 0644);
    kg_config *c = kg_config_load(path, &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    ck_assert_str_eq(c->file, path);
    ck_assert_int_eq(c->network, KGATE_NET_OPEN);
    kg_config_free(c);
}
END_TEST

/* A project file that is a link, a FIFO, a directory, a second name or
 * another uid's is refused without being read; the refusal quotes nothing
 * of what the name points at. */
START_TEST(test_load_project_refusals)
{
    make_tmp();
    char secret[160], proj[160], want[512];
    snprintf(secret, sizeof secret, "%s/hosts.yml", tmpdir);
    snprintf(proj, sizeof proj, "%s/.kgate.yaml", tmpdir);
    const char *hosts = "github.com:\n  oauth_token: gho_kgtestSECRET7731\n";
    kgt_write_file(secret, hosts, strlen(hosts), 0600);
    kg_error err = {0};

    /* The case: the user's own loader reads through the link and
     * quotes the key; the project loader refuses the link. */
    ck_assert_int_eq(symlink(secret, proj), 0);
    ck_assert_ptr_null(kg_config_load(proj, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "unknown key 'github.com'"));
    memset(&err, 0, sizeof err);
    ck_assert_ptr_null(kg_config_load_project(proj, &err));
    snprintf(want, sizeof want, "%s: is a symbolic link", proj);
    ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "%s", err.msg);
    ck_assert_ptr_null(strstr(err.msg, "github"));
    ck_assert_ptr_null(strstr(err.msg, "gho_"));
    unlink(proj);

    /* A link to a file with a valid config is refused just the same. */
    char good[160];
    snprintf(good, sizeof good, "%s/good.yaml", tmpdir);
    kgt_write_file(good, "network: off\n", 13, 0600);
    ck_assert_int_eq(symlink(good, proj), 0);
    ck_assert_ptr_null(kg_config_load_project(proj, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "symbolic link"));
    unlink(proj);

    /* A hard link: a second name for another file. */
    ck_assert_int_eq(link(secret, proj), 0);
    ck_assert_ptr_null(kg_config_load_project(proj, &err));
    ck_assert_msg(strstr(err.msg, "has 2 hard links") != NULL, "%s", err.msg);
    ck_assert_ptr_null(strstr(err.msg, "github"));
    unlink(proj);

    /* A FIFO (must not hang) and a directory. */
    ck_assert_int_eq(mkfifo(proj, 0600), 0);
    ck_assert_ptr_null(kg_config_load_project(proj, &err));
    ck_assert_msg(strstr(err.msg, "not a regular file") != NULL, "%s", err.msg);
    unlink(proj);
    ck_assert_int_eq(mkdir(proj, 0700), 0);
    ck_assert_ptr_null(kg_config_load_project(proj, &err));
    ck_assert_msg(strstr(err.msg, "not a regular file") != NULL, "%s", err.msg);
    rmdir(proj);

    /* Another uid's file (needs root to make one). */
    kgt_write_file(proj, "network: off\n", 13, 0644);
    if (geteuid() == 0) {
        ck_assert_int_eq(chown(proj, 65534, 65534), 0);
        ck_assert_ptr_null(kg_config_load_project(proj, &err));
        ck_assert_msg(strstr(err.msg, "owned by uid 65534") != NULL, "%s", err.msg);
        ck_assert_int_eq(chown(proj, 0, 0), 0);
    }

    /* The user's regular file with one name loads. */
    kg_config *c = kg_config_load_project(proj, &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    ck_assert_int_eq(c->network, KGATE_NET_OFF);
    ck_assert(c->quiet);
    kg_config_free(c);
}
END_TEST

/* Every parse error of a project file names the position and kgate's own
 * words, never the file's text; the same errors in the user's file quote. */
START_TEST(test_project_messages_quote_nothing)
{
    static const struct {
        const char *yaml, *quiet, *loud;
    } cases[] = {
        {"network: off\ngithub.com: x\n",
         "p:2:1: unknown key (not shown: ", "p:2:1: unknown key 'github.com'"},
        {"network: gho_SECRET\n",
         "p:1:10: network: invalid value (expected off, restricted or open)",
         "p:1:10: network: invalid value 'gho_SECRET' (expected"},
        {"macos_profile: gho_SECRET\n", "p:1:16: macos_profile: invalid value (expected",
         "'gho_SECRET'"},
        {"max_processes: gho_SECRET\n", "p:1:16: max_processes: invalid value (expected a number",
         "'gho_SECRET'"},
        {"allow_hosts: [a.com, gho_SECRET!]\n",
         "p:1:22: allow_hosts: invalid host name: ", "invalid host name 'gho_SECRET!'"},
        {"mask_prefixes: [\"gho SECRET\"]\n", "p:1:17: mask_prefixes: white space in entry",
         "'gho SECRET'"},
        {"pass_env: [gho.SECRET]\n", "p:1:12: pass_env: not a variable name", "'gho.SECRET'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kg_error err = {0};
        const char *y = cases[i].yaml;
        ck_assert_ptr_null(kg_config_parse_project("p", y, strlen(y), &err));
        ck_assert_msg(strncmp(err.msg, cases[i].quiet, strlen(cases[i].quiet)) == 0,
                      "case %zu: '%s' does not start with '%s'", i, err.msg, cases[i].quiet);
        ck_assert_msg(strstr(err.msg, "SECRET") == NULL && strstr(err.msg, "github") == NULL,
                      "case %zu quotes the file: %s", i, err.msg);
        memset(&err, 0, sizeof err);
        ck_assert_ptr_null(kg_config_parse("p", y, strlen(y), &err));
        ck_assert_msg(strstr(err.msg, cases[i].loud) != NULL, "case %zu: user: %s", i, err.msg);
    }
    /* The line of each entry is kept for later messages. */
    kg_error err = {0};
    const char *y = "network: off\nallow_hosts:\n  - a.com\n  - a.com\n  - b.com\n";
    kg_config *c = kg_config_parse_project("p", y, strlen(y), &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    ck_assert_uint_eq(kg_strv_len(c->lists[KG_KEY_ALLOW_HOSTS]), 2);
    ck_assert_uint_eq(kg_config_entry_line(c, KG_KEY_ALLOW_HOSTS, 0), 3);
    ck_assert_uint_eq(kg_config_entry_line(c, KG_KEY_ALLOW_HOSTS, 1), 5);
    ck_assert_uint_eq(kg_config_entry_line(c, KG_KEY_ALLOW_HOSTS, 2), 0);
    kg_config_free(c);
}
END_TEST

START_TEST(test_defaults)
{
    kg_config *d = kg_config_defaults();
    ck_assert(d->has_network);
    ck_assert_int_eq(d->network, KGATE_NET_RESTRICTED);
    ck_assert_int_eq(d->macos_profile, KGATE_MACOS_PERMISSIVE);
    const char *dr[] = {".env"};
    assert_list(d->lists[KG_KEY_DENY_READ], dr, 1);
    const char *de[] = {"curl", "wget"};
    assert_list(d->lists[KG_KEY_DENY_EXEC], de, 2);
    for (int k = 0; k < KG_N_LIST_KEYS; k++) {
        ck_assert(d->has[k]);
        if (k != KG_KEY_DENY_READ && k != KG_KEY_DENY_EXEC)
            ck_assert_uint_eq(kg_strv_len(d->lists[k]), 0);
    }
    kg_config_free(d);
    kg_config_free(NULL);
}
END_TEST

START_TEST(test_write_round_trip)
{
    make_tmp();
    char path[128];
    snprintf(path, sizeof path, "%s/config.yaml", tmpdir);
    kg_error err = {0};

    kg_config *d = kg_config_defaults();
    ck_assert_int_eq(kg_config_write(d, path, &err), 0);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_eq(st.st_mode & 07777, 0600);
    kg_config *back = kg_config_load(path, &err);
    ck_assert_msg(back != NULL, "%s", err.msg);
    ck_assert(back->has_network && back->network == KGATE_NET_RESTRICTED);
    ck_assert(back->has_macos_profile && back->macos_profile == KGATE_MACOS_PERMISSIVE);
    for (int k = 0; k < KG_N_LIST_KEYS; k++) {
        ck_assert_msg(back->has[k], "%s not written", kg_list_key_name(k));
        ck_assert_uint_eq(kg_strv_len(back->lists[k]), kg_strv_len(d->lists[k]));
    }
    kg_config_free(back);

    /* Awkward paths survive the trip unchanged. */
    const char *weird[] = {"/a b/c",      "x: y",        "# not a comment",
                           "\"quoted\"",  "back\\slash", "- dash",
                           "caf\xc3\xa9", "null",        "~",
                           "[x]",         "'single'",    "&anchor",
                           "*alias",      "!tag",        "%pct",
                           "@at",         "`tick`"};
    size_t nw = sizeof weird / sizeof weird[0];
    for (size_t i = 0; i < nw; i++) kg_strv_push(d->lists[KG_KEY_DENY_READ], weird[i]);
    d->network = KGATE_NET_OFF;
    d->macos_profile = KGATE_MACOS_STRICT;
    kg_strv_push(d->lists[KG_KEY_ALLOW_HOSTS], "example.org");
    ck_assert_int_eq(kg_config_write(d, path, &err), 0);
    back = kg_config_load(path, &err);
    ck_assert_msg(back != NULL, "%s", err.msg);
    ck_assert_int_eq(back->network, KGATE_NET_OFF);
    ck_assert_int_eq(back->macos_profile, KGATE_MACOS_STRICT);
    ck_assert_uint_eq(kg_strv_len(back->lists[KG_KEY_DENY_READ]), nw + 1);
    for (size_t i = 0; i < nw; i++)
        ck_assert_str_eq(kg_strv_get(back->lists[KG_KEY_DENY_READ], i + 1), weird[i]);
    ck_assert_str_eq(kg_strv_get(back->lists[KG_KEY_ALLOW_HOSTS], 0), "example.org");
    kg_config_free(back);

    /* Keys a layer does not set are written with their defaults. */
    kg_config *partial = kg_config_parse("p", "network: open\n", 14, &err);
    ck_assert_int_eq(kg_config_write(partial, path, &err), 0);
    back = kg_config_load(path, &err);
    ck_assert_int_eq(back->network, KGATE_NET_OPEN);
    ck_assert_str_eq(kg_strv_get(back->lists[KG_KEY_DENY_EXEC], 1), "wget");
    kg_config_free(back);
    kg_config_free(partial);

    /* No temporary file is left behind; a missing directory is an error. */
    char cmd[256];
    snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) -eq 1", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(path, sizeof path, "%s/missing/config.yaml", tmpdir);
    ck_assert_int_eq(kg_config_write(d, path, &err), -1);
    ck_assert_int_eq(err.code, ENOENT);
    kg_config_free(d);
}
END_TEST

START_TEST(test_apply)
{
    kg_error err = {0};
    kg_config *base = kg_config_defaults();
    kg_config *layer = parse("network: off\ndeny_exec: [nc]\n", &err);
    kg_config_apply(base, layer);
    ck_assert_int_eq(base->network, KGATE_NET_OFF);
    const char *de[] = {"nc"};
    assert_list(base->lists[KG_KEY_DENY_EXEC], de, 1);
    const char *dr[] = {".env"};
    assert_list(base->lists[KG_KEY_DENY_READ], dr, 1);
    ck_assert_int_eq(base->macos_profile, KGATE_MACOS_PERMISSIVE);
    kg_config_free(layer);
    kg_config_free(base);
    ck_assert_str_eq(kg_list_key_name(KG_KEY_MACOS_ALLOW_MACH), "macos_allow_mach");
    ck_assert_str_eq(kg_network_name(KGATE_NET_RESTRICTED), "restricted");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("config");
    tcase_add_checked_fixture(tc, NULL, remove_tmp);
    tcase_add_test(tc, test_every_key);
    tcase_add_test(tc, test_max_processes);
    tcase_add_test(tc, test_audit_sink);
    tcase_add_test(tc, test_host_entries_normalized);
    tcase_add_test(tc, test_enum_values);
    tcase_add_test(tc, test_absent_and_empty);
    tcase_add_test(tc, test_wrong_types);
    tcase_add_test(tc, test_unknown_and_duplicate_keys);
    tcase_add_test(tc, test_entry_validation);
    tcase_add_test(tc, test_host_names);
    tcase_add_test(tc, test_malformed_yaml);
    tcase_add_test(tc, test_hostile_aliases_and_tags);
    tcase_add_test(tc, test_hostile_nesting);
    tcase_add_test(tc, test_hostile_sizes);
    tcase_add_test(tc, test_hostile_bytes);
    tcase_add_test(tc, test_load_file);
    tcase_add_test(tc, test_load_project_refusals);
    tcase_add_test(tc, test_project_messages_quote_nothing);
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_write_round_trip);
    tcase_add_test(tc, test_apply);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
