/* cmd_doctor.c: not written yet. */
#include <stdio.h>
#include "commands.h"
int kg_cmd_doctor(int argc, char **argv) { (void)argc; (void)argv; fputs("kgate: doctor: not implemented yet\n", stderr); return KG_EXIT_REFUSED; }
int kg_cmd_plugins(int argc, char **argv) { (void)argc; (void)argv; fputs("kgate: plugins: not implemented yet\n", stderr); return KG_EXIT_REFUSED; }
