/* cmd_init.c: not written yet. */
#include <stdio.h>
#include "commands.h"
int kg_cmd_init(int argc, char **argv) { (void)argc; (void)argv; fputs("kgate: init: not implemented yet\n", stderr); return KG_EXIT_REFUSED; }
int kg_cmd_network(int argc, char **argv) { (void)argc; (void)argv; fputs("kgate: network: not implemented yet\n", stderr); return KG_EXIT_REFUSED; }
