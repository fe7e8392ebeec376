/* commands.h: one function per kgate command.  Each gets the arguments
 * after the command name (argv[0] is the command name itself) and returns
 * the process exit status; only main() exits. */
#ifndef KG_COMMANDS_H
#define KG_COMMANDS_H

#include <stdbool.h>

#include "exitcode.h"

/* Usage texts end with a newline and may span lines.  kg_cli_help prints
 * one on stdout and returns 0; kg_cli_usage_error prints "kgate: <what>"
 * and then the usage on stderr and returns 2. */
bool kg_cli_is_help(const char *arg);
int kg_cli_help(const char *usage);
int kg_cli_usage_error(const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

int kg_cmd_init(int argc, char **argv);
int kg_cmd_network(int argc, char **argv);
int kg_cmd_doctor(int argc, char **argv);
int kg_cmd_plugins(int argc, char **argv);
int kg_cmd_run(int argc, char **argv);
int kg_cmd_audit(int argc, char **argv);
int kg_cmd_hook(int argc, char **argv);
int kg_cmd_setup(int argc, char **argv);
int kg_cmd_mcp(int argc, char **argv);

#endif
