/* cmd_run.c: not written yet. */
#include <stdio.h>
#include "commands.h"
int kg_cmd_run(int argc, char **argv) { (void)argc; (void)argv; fputs("kgate: run: not implemented yet\n", stderr); return KG_EXIT_REFUSED; }
