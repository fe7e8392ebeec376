/* termfilter.h: what a program in pty mode may say to the user's terminal.
 *
 * The program's output reaches a real terminal.  Most control sequences
 * only draw (colours, cursor movement, erase, scroll regions, the alternate
 * screen, bracketed paste, titles): they pass.  Some make the terminal
 * answer on its input (device attributes, status and cursor reports, window
 * and colour reports, DECRQSS, XTVERSION, ...) or reach the clipboard
 * (OSC 52): an answer that arrives after kgate has restored the terminal
 * is typed into the user's shell.  Those are dropped, the way tmux and mosh
 * keep their clients off the outer terminal.  The list is in
 * docs/interactive.md.  Streaming: a sequence split across feeds is judged
 * whole; a sequence still open at kg_termfilter_flush() is dropped. */
#ifndef KG_TERMFILTER_H
#define KG_TERMFILTER_H

#include <stddef.h>

typedef struct kg_termfilter kg_termfilter;

/* Called with the bytes that may reach the terminal, in order; returns 0,
 * or -1 when the output is gone. */
typedef int (*kg_termfilter_sink)(void *ctx, const char *buf, size_t len);

kg_termfilter *kg_termfilter_new(kg_termfilter_sink sink, void *ctx);
void kg_termfilter_free(kg_termfilter *f); /* accepts NULL */

/* Filters len bytes; returns 0, or -1 when the sink failed. */
int kg_termfilter_feed(kg_termfilter *f, const char *buf, size_t len);
/* End of stream: an unfinished sequence is dropped. */
int kg_termfilter_flush(kg_termfilter *f);

/* Sequences dropped so far (for tests and the debug log). */
size_t kg_termfilter_dropped(const kg_termfilter *f);

#endif
