/* cmd_init.c: `kgate init` and `kgate network`, the two commands that write
 * the user's config.  Both write through kg_config_write (mode 0600, temp
 * file + rename), so a crash never leaves half a policy behind.
 *
 * Exit statuses: 0 done (or --help); 1 refused (file exists, invalid host,
 * unreadable or broken config, I/O error); 2 usage error.  Every failure is one line
 * on stderr starting with "kgate:". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "config.h"
#include "msg.h"
#include "strv.h"

static int fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kg_msg_vline(stderr, "kgate: ", fmt, ap);
    va_end(ap);
    return status;
}

/* ~/.kgate, created 0700 when missing.  An existing directory is left as
 * it is (the user may have reasons); a non-directory is an error. */
static int config_paths(char **dir, char **file, kg_error *err)
{
    const char *home = getenv("HOME");
    if (!home || home[0] != '/')
        return kg_err_set(err, EINVAL, "HOME is not set to an absolute path");
    if (asprintf(dir, "%s/.kgate", home) < 0) return kg_err_set(err, ENOMEM, "out of memory");
    if (asprintf(file, "%s/.kgate/config.yaml", home) < 0) {
        free(*dir);
        *dir = NULL;
        return kg_err_set(err, ENOMEM, "out of memory");
    }
    return 0;
}

static int ensure_dir(const char *dir, kg_error *err)
{
    if (mkdir(dir, 0700) == 0) {
        /* mkdir is subject to the umask; the mode is part of the contract. */
        if (chmod(dir, 0700) < 0) return kg_err_set(err, errno, "%s: %s", dir, strerror(errno));
        return 0;
    }
    if (errno != EEXIST) return kg_err_set(err, errno, "%s: %s", dir, strerror(errno));
    struct stat st;
    if (stat(dir, &st) < 0) return kg_err_set(err, errno, "%s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode)) return kg_err_set(err, ENOTDIR, "%s: not a directory", dir);
    return 0;
}

int kg_cmd_init(int argc, char **argv)
{
    static const char init_usage[] = "usage: kgate init [--force]\n";
    bool force = false;
    for (int i = 1; i < argc; i++) {
        if (kg_cli_is_help(argv[i])) return kg_cli_help(init_usage);
        if (strcmp(argv[i], "--force") == 0)
            force = true;
        else
            return kg_cli_usage_error(init_usage, "init: unknown argument '%s'", argv[i]);
    }
    kg_error err = {0};
    char *dir = NULL, *file = NULL;
    if (config_paths(&dir, &file, &err) < 0) return fail(KG_EXIT_FAIL, "init: %s", err.msg);
    int status = KG_EXIT_FAIL;
    struct stat st;
    kg_config *c = NULL;
    if (ensure_dir(dir, &err) < 0) {
        fail(KG_EXIT_FAIL, "init: %s", err.msg);
        goto out;
    }
    /* lstat: a dangling symlink is an existing file too. */
    if (!force && lstat(file, &st) == 0) {
        fail(KG_EXIT_FAIL, "init: %s already exists; use --force to overwrite it", file);
        goto out;
    }
    c = kg_config_defaults();
    if (!c || kg_config_write(c, file, &err) < 0) {
        fail(KG_EXIT_FAIL, "init: %s", c ? err.msg : "out of memory");
        goto out;
    }
    kg_msg_line(stdout, "kgate: ", "wrote %s", file);
    status = KG_EXIT_OK;
out:
    kg_config_free(c);
    free(dir);
    free(file);
    return status;
}

static const char network_usage[] = "usage: kgate network off | open\n"
                                    "       kgate network restricted [HOST...]\n";

int kg_cmd_network(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (kg_cli_is_help(argv[i])) return kg_cli_help(network_usage);
    if (argc < 2) return kg_cli_usage_error(network_usage, "network: no mode given");
    const char *mode = argv[1];
    kgate_network net;
    if (strcmp(mode, "off") == 0)
        net = KGATE_NET_OFF;
    else if (strcmp(mode, "open") == 0)
        net = KGATE_NET_OPEN;
    else if (strcmp(mode, "restricted") == 0)
        net = KGATE_NET_RESTRICTED;
    else
        return kg_cli_usage_error(network_usage, "network: unknown mode '%s'", mode);
    if (net != KGATE_NET_RESTRICTED && argc > 2)
        return kg_cli_usage_error(network_usage, "network %s takes no host names", mode);

    kg_strv *hosts = kg_strv_new();
    for (int i = 2; i < argc; i++) {
        char h[KG_HOST_ENTRY_MAX];
        const char *why = "invalid";
        if (!kg_host_entry_norm(argv[i], h, &why)) {
            kg_strv_free(hosts);
            char shown[80];
            kg_msg_quote(shown, sizeof shown, argv[i], strlen(argv[i]));
            return fail(KG_EXIT_FAIL, "network: invalid host name '%s': %s", shown, why);
        }
        if (!kg_strv_contains(hosts, h)) kg_strv_push(hosts, h);
    }

    kg_error err = {0};
    char *dir = NULL, *file = NULL;
    kg_config *c = NULL, *f = NULL;
    int status = KG_EXIT_FAIL;
    if (config_paths(&dir, &file, &err) < 0) {
        fail(KG_EXIT_FAIL, "network: %s", err.msg);
        goto out;
    }
    /* The file as it is, over the defaults: keys it does not set keep
     * their default value, which is also what they meant before. */
    c = kg_config_defaults();
    struct stat st;
    if (lstat(file, &st) < 0 && errno == ENOENT) {
        if (ensure_dir(dir, &err) < 0) {
            fail(KG_EXIT_FAIL, "network: %s", err.msg);
            goto out;
        }
    } else {
        f = kg_config_load(file, &err);
        if (!f) {
            fail(KG_EXIT_FAIL, "network: %s", err.msg);
            goto out;
        }
        kg_config_apply(c, f);
    }
    c->has_network = true;
    c->network = net;
    if (net == KGATE_NET_RESTRICTED && kg_strv_len(hosts) > 0) {
        kg_strv_free(c->lists[KG_KEY_ALLOW_HOSTS]);
        c->lists[KG_KEY_ALLOW_HOSTS] = hosts;
        c->has[KG_KEY_ALLOW_HOSTS] = true;
        hosts = NULL;
    }
    if (kg_config_write(c, file, &err) < 0) {
        fail(KG_EXIT_FAIL, "network: %s", err.msg);
        goto out;
    }
    UT_string *line;
    utstring_new(line);
    utstring_printf(line, "network %s", kg_network_name(net));
    if (net == KGATE_NET_RESTRICTED) {
        const kg_strv *h = c->lists[KG_KEY_ALLOW_HOSTS];
        if (kg_strv_len(h) == 0) utstring_printf(line, " (no hosts: behaves as off)");
        for (size_t i = 0; i < kg_strv_len(h); i++)
            utstring_printf(line, "%s%s", i ? " " : ": ", kg_strv_get(h, i));
    }
    kg_msg_line(stdout, "kgate: ", "%s", utstring_body(line));
    utstring_free(line);
    status = KG_EXIT_OK;
out:
    kg_strv_free(hosts);
    kg_config_free(c);
    kg_config_free(f);
    free(dir);
    free(file);
    return status;
}
