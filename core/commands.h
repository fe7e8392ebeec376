/* commands.h: one function per kgate command.  Each gets the arguments
 * after the command name (argv[0] is the command name itself) and returns
 * the process exit status; only main() exits. */
#ifndef KG_COMMANDS_H
#define KG_COMMANDS_H

/* Exit statuses of kgate itself (spec: "Exit codes of kgate run"). */
enum {
    KG_EXIT_OK = 0,
    KG_EXIT_FAIL = 1,      /* doctor BLOCKED, usage errors of other commands */
    KG_EXIT_USAGE = 2,
    KG_EXIT_REFUSED = 125, /* refused or failed before the program ran */
    KG_EXIT_BLOCKED = 126, /* on the exec deny list */
    KG_EXIT_NOTFOUND = 127,
};

int kg_cmd_init(int argc, char **argv);
int kg_cmd_network(int argc, char **argv);
int kg_cmd_doctor(int argc, char **argv);
int kg_cmd_plugins(int argc, char **argv);
int kg_cmd_run(int argc, char **argv);

#endif
