/* envfilter.c: which environment variables reach the program.
 *
 * A name is split into words at every byte that is not a letter or digit
 * (AWS_SECRET_ACCESS_KEY -> AWS SECRET ACCESS KEY) and compared without
 * regard to case.  It looks secret when
 *   - the name contains SECRET, TOKEN, PASSWORD, PASSWD, PASSPHRASE,
 *     CREDENTIAL, PRIVATE, COOKIE, APIKEY or AUTHORIZATION anywhere
 *     (CLIENTSECRET, GITHUB_TOKEN, NPM_CONFIG__AUTHTOKEN, DB_PASSWORD_FILE);
 *   - or a word is KEY, KEYS, PASS, AUTH, AUTHN, AUTHZ, API, SESSION, CREDS,
 *     DSN, or ends in KEY (ACCESSKEY, PRIVKEY).  PASS only as a whole word:
 *     as a suffix it would catch COMPASS and BYPASS.
 * Words rather than substrings for the short ones, so that PATH, PWD,
 * KEYBOARD_LAYOUT, GIT_AUTHOR_NAME and COMPASS_DIR are not caught: a filter
 * that withholds PATH is a filter people turn off.
 *
 * git's configuration by environment (GIT_CONFIG_GLOBAL,
 * GIT_CONFIG_COUNT with GIT_CONFIG_KEY_n and GIT_CONFIG_VALUE_n,
 * GIT_CONFIG_PARAMETERS, GIT_CONFIG_SYSTEM) is withheld too: it can carry
 * a credential helper or a URL with a token under names that look like
 * nothing, and it would outrank the box's own .gitconfig, which holds
 * only the keys kgate allows (core/protect/boxhome.c).
 *
 * Whatever the patterns say, the names in always_pass[] are never withheld
 * by the built-in patterns (only an explicit deny_env can withhold them).
 * Names that start with KGATE_ never reach the program at all. */
#include "envfilter.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

static const char *const contains_words[] = {
    "SECRET",  "TOKEN",  "PASSWORD", "PASSWD",        "PASSPHRASE", "CREDENTIAL",
    "PRIVATE", "COOKIE", "APIKEY",   "AUTHORIZATION", NULL,
};

static const char *const whole_words[] = {
    "KEY", "KEYS", "PASS", "AUTH", "AUTHN", "AUTHZ", "API", "SESSION", "CREDS", "DSN", NULL,
};

static const char *const suffix_words[] = {"KEY", NULL};

/* The environment an ordinary tool needs, and names that only point at
 * things the sandbox controls by other means (SSH_AUTH_SOCK is a path; the
 * socket itself is reachable only when allow_sockets names it). */
static const char *const always_pass[] = {
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "COLORTERM",
    "LANG",
    "LANGUAGE",
    "TZ",
    "PWD",
    "OLDPWD",
    "TMPDIR",
    "SHLVL",
    "HOSTNAME",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_SESSION_ID",
    "XDG_SESSION_TYPE",
    "XDG_SESSION_CLASS",
    "XDG_SESSION_DESKTOP",
    "SSH_AUTH_SOCK",
    "GPG_TTY",
    "NO_COLOR",
    "CI",
    "MAKEFLAGS",
    "CC",
    "CXX",
    "CFLAGS",
    "LDFLAGS",
    NULL,
};

bool kg_env_always_passes(const char *name)
{
    for (size_t i = 0; always_pass[i]; i++)
        if (strcmp(name, always_pass[i]) == 0) return true;
    /* Locale categories: LC_ALL, LC_CTYPE, ... */
    return strncmp(name, "LC_", 3) == 0;
}

static bool in_list(const char *w, size_t len, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (strlen(list[i]) == len && memcmp(w, list[i], len) == 0) return true;
    return false;
}

static bool ends_with_one(const char *w, size_t len, const char *const *list)
{
    for (size_t i = 0; list[i]; i++) {
        size_t l = strlen(list[i]);
        if (len > l && memcmp(w + len - l, list[i], l) == 0) return true;
    }
    return false;
}

bool kg_env_name_looks_secret(const char *name)
{
    if (!name || kg_env_always_passes(name)) return false;
    size_t n = strlen(name);
    char *up = malloc(n + 1);
    if (!up) return true; /* when unsure, withhold */
    for (size_t i = 0; i <= n; i++) up[i] = (char)toupper((unsigned char)name[i]);

    bool secret = strncmp(up, "GIT_CONFIG", 10) == 0;
    for (size_t i = 0; contains_words[i] && !secret; i++)
        secret = strstr(up, contains_words[i]) != NULL;

    for (size_t i = 0; i < n && !secret;) {
        while (i < n && !isalnum((unsigned char)up[i])) i++;
        size_t start = i;
        while (i < n && isalnum((unsigned char)up[i])) i++;
        size_t len = i - start;
        if (len == 0) break;
        secret =
            in_list(up + start, len, whole_words) || ends_with_one(up + start, len, suffix_words);
    }
    free(up);
    return secret;
}

static bool matches_any(const kg_strv *pats, const char *name)
{
    for (size_t i = 0; i < kg_strv_len(pats); i++) {
        const char *p = kg_strv_get(pats, i);
        if (strcmp(p, name) == 0 || fnmatch(p, name, 0) == 0) return true;
    }
    return false;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void kg_env_filter(char *const *environ_in, const kg_strv *pass_env, const kg_strv *deny_env,
                   kg_strv *out, kg_strv *withheld)
{
    kg_strv *names = kg_strv_new();
    for (size_t i = 0; environ_in && environ_in[i]; i++) {
        const char *kv = environ_in[i];
        const char *eq = strchr(kv, '=');
        if (!eq || eq == kv) continue; /* not NAME=value: nobody can use it */
        /* kgate's own settings (KGATE_PLUGIN_PATH, KGATE_DEBUG) are never
         * the program's business: a plugin path inside would tell it where
         * to write code that kgate runs later.  Not even pass_env passes
         * them, and they are not secrets to report as withheld. */
        if (strncmp(kv, "KGATE_", 6) == 0) continue;
        char *name = strndup(kv, (size_t)(eq - kv));
        if (!name) continue;
        bool deny;
        if (matches_any(deny_env, name))
            deny = true;
        else if (matches_any(pass_env, name))
            deny = false;
        else
            deny = kg_env_name_looks_secret(name);
        if (deny) {
            if (!kg_strv_contains(names, name)) kg_strv_push(names, name);
        } else {
            kg_strv_push(out, kv);
        }
        free(name);
    }
    /* Sorted, so that audit lines do not depend on the order of environ. */
    if (kg_strv_len(names) > 1) utarray_sort(names, cmp_str);
    for (size_t i = 0; withheld && i < kg_strv_len(names); i++)
        kg_strv_push(withheld, kg_strv_get(names, i));
    kg_strv_free(names);
}
