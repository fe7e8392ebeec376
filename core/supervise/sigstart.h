/* sigstart.h: the signal dispositions kgate was started with. */
#ifndef KG_SIGSTART_H
#define KG_SIGSTART_H

/* Reads which signals are ignored, once, before anything of kgate installs
 * a handler: main() calls it first.  A later call does nothing. */
void kg_sigstart_record(void);

/* The signals ignored at the start, as kgate_launch.sig_ignored_at_start
 * wants them (signal s is bit (s - 1) % 64 of out[(s - 1) / 64]).  Before
 * kg_sigstart_record (a unit test), what is ignored now. */
void kg_sigstart_ignored(unsigned long long out[2]);

#endif
