/* main.c: the kgate command line.  Dispatches to one function per command
 * and is the only place that turns a result into an exit status. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "kgate-config.h"
#include "msg.h"
#include "sigstart.h"
#include "kgate/kgate-plugin.h"

static const char usage[] =
    "usage: kgate init [--force]\n"
    "       kgate network off | open\n"
    "       kgate network restricted [HOST...]\n"
    "       kgate doctor [--json] [--backend NAME]\n"
    "       kgate run [--allow-path PATH]... [--allow-net HOST]... [--backend NAME]\n"
    "                 [--dry-run] [--events-fd N] [--pty | --no-pty] [--quiet]\n"
    "                 -- COMMAND [ARG...]\n"
    "       kgate plugins [--json]\n"
    "       kgate audit verify [FILE...]\n"
    "       kgate audit runs [--since WHEN] | show RUN | refusals [--since WHEN]\n"
    "       kgate setup claude-code | gemini | codex [--project] [--remove]\n"
    "       kgate hook claude-code | gemini | codex\n"
    "       kgate mcp [--backend NAME]\n"
    "       kgate --version | --help\n";

int main(int argc, char **argv)
{
    /* First: before anything of kgate installs a handler (sigstart.c). */
    kg_sigstart_record();
    if (argc < 2) return kg_cli_usage_error(usage, "no command given");
    const char *cmd = argv[1];
    if (kg_cli_is_help(cmd) || strcmp(cmd, "help") == 0) return kg_cli_help(usage);
    if (strcmp(cmd, "--version") == 0) {
        printf("kgate %s (plugin ABI %d.%d)\n", KGATE_VERSION, KGATE_ABI_MAJOR, KGATE_ABI_MINOR);
        return KG_EXIT_OK;
    }
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {
        {"init", kg_cmd_init},       {"network", kg_cmd_network}, {"doctor", kg_cmd_doctor},
        {"plugins", kg_cmd_plugins}, {"run", kg_cmd_run},         {"audit", kg_cmd_audit},
        {"setup", kg_cmd_setup},     {"hook", kg_cmd_hook},       {"mcp", kg_cmd_mcp},
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (strcmp(cmd, cmds[i].name) == 0) return cmds[i].fn(argc - 1, argv + 1);
    return kg_cli_usage_error(usage, "unknown command '%s'", cmd);
}
