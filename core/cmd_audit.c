/* cmd_audit.c: `kgate audit`, what a person reads instead of grepping the
 * JSON of ~/.kgate/audit.log.
 *
 *   kgate audit verify [FILE...]   the chain (auditverify.c): exit 0 when
 *                                  intact, 1 when a record does not follow
 *                                  or a file cannot be read */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "commands.h"
#include "msg.h"

static const char audit_usage[] =
    "usage: kgate audit verify [FILE...]\n";

/* ~/.kgate/audit.log, or NULL (with the line said) when HOME is unusable. */
static char *default_log(void)
{
    const char *home = getenv("HOME");
    if (!home || home[0] != '/') {
        kg_say("HOME is not set to an absolute path: name the log file");
        return NULL;
    }
    char *p = NULL;
    if (asprintf(&p, "%s/.kgate/audit.log", home) < 0) kg_oom();
    return p;
}

static int cmd_verify(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (kg_cli_is_help(argv[i])) return kg_cli_help(audit_usage);
        if (argv[i][0] == '-' && strcmp(argv[i], "-") != 0)
            return kg_cli_usage_error(audit_usage, "audit verify: unknown option '%s'",
                                      argv[i]);
    }
    char *def = NULL;
    const char *one[1];
    const char *const *files = (const char *const *)argv + 1;
    size_t n = (size_t)argc - 1;
    if (n == 0) {
        if (!(def = default_log())) return KG_EXIT_FAIL;
        one[0] = def;
        files = one;
        n = 1;
    }
    UT_string *out;
    utstring_new(out);
    kg_error err = {0};
    size_t records = 0;
    int r = kg_audit_verify(files, n, &records, out, &err);
    if (r < 0)
        kg_say("%s", err.msg);
    else
        kg_msg_line(stdout, "", "%s", utstring_body(out));
    utstring_free(out);
    free(def);
    if (fflush(stdout) != 0) return KG_EXIT_FAIL;
    return r == 0 ? KG_EXIT_OK : KG_EXIT_FAIL;
}

int kg_cmd_audit(int argc, char **argv)
{
    if (argc < 2) return kg_cli_usage_error(audit_usage, "audit: no subcommand given");
    const char *sub = argv[1];
    if (kg_cli_is_help(sub)) return kg_cli_help(audit_usage);
    if (strcmp(sub, "verify") == 0) return cmd_verify(argc - 1, argv + 1);
    return kg_cli_usage_error(audit_usage, "audit: unknown subcommand '%s'", sub);
}
