/* cli.c: the manners every command shares.  `--help` is an answer (the
 * usage on stdout, exit 0); a usage error is a mistake of the caller (what
 * is wrong in one "kgate:" line, then the usage, on stderr, exit 2), kept
 * apart from 125, which says a launch was refused. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "msg.h"

bool kg_cli_is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int kg_cli_help(const char *usage)
{
    fputs(usage, stdout);
    /* A help that cannot be printed is not an answer. */
    return fflush(stdout) == 0 ? KG_EXIT_OK : KG_EXIT_FAIL;
}

int kg_cli_usage_error(const char *usage, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    /* The wrong argument is the caller's text: one escaped line (msg.h). */
    kg_msg_vline(stderr, "kgate: ", fmt, ap);
    va_end(ap);
    fputs(usage, stderr);
    return KG_EXIT_USAGE;
}
