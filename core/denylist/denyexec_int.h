/* denyexec_int.h: between the deny list's argv walk (denyexec.c) and its
 * shell-string walk (denyexec_sh.c).  Not used elsewhere. */
#ifndef KG_DENYEXEC_INT_H
#define KG_DENYEXEC_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "denyexec.h"

/* Where the words at one level are looked up. */
typedef struct kg_dx_scope {
    const char *path; /* PATH */
    const char *cwd;
} kg_dx_scope;

/* One kg_denyexec_check() in progress. */
typedef struct kg_dx_chk kg_dx_chk;

/* Checks one command (argv[0] and whatever it runs): 0 allowed, 1 blocked
 * (the reason is set).  where says where the words came from ("in the
 * sh -c string"), for the reason. */
int kg_dx_check_argv(kg_dx_chk *c, char **w, size_t n, kg_dx_scope sc, const char *where,
                     int flags);
/* Checks a word as a command name only (the name and the file it resolves
 * to), without following wrappers. */
int kg_dx_check_name(kg_dx_chk *c, const char *word, kg_dx_scope sc, const char *where);
/* Checks a word that names a file a command would copy, link or read
 * (cp's operand, a "<" redirection): 1 when it is a denied file, the same
 * file under another name, or a copy of one; tool names the reader. */
int kg_dx_check_source(kg_dx_chk *c, const char *tool, const char *word, kg_dx_scope sc,
                       const char *where);
/* What the shell walker reports to (a visitor): the walker only finds the
 * simple commands, redirections and nesting of a string; the deny list
 * decides on each.  Passed in, not called by name, so that the walker
 * does not call back into denyexec.c: the two files are no call cycle
 * (tests/unit/cycles.py), and the walker knows nothing of the list. */
typedef struct kg_dx_visitor {
    /* A simple command found (kg_dx_check_argv). */
    int (*command)(kg_dx_chk *c, char **w, size_t n, kg_dx_scope sc, const char *where, int flags);
    /* A word that may be a command name, when the string cannot be parsed
     * (kg_dx_check_name). */
    int (*name)(kg_dx_chk *c, const char *word, kg_dx_scope sc, const char *where);
    /* The file of a "<" redirection (kg_dx_check_source). */
    int (*source)(kg_dx_chk *c, const char *tool, const char *word, kg_dx_scope sc,
                  const char *where);
    int (*block)(kg_dx_chk *c, const char *entry, const char *where, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
    bool (*enter)(kg_dx_chk *c);
    void (*leave)(kg_dx_chk *c);
    bool (*take_stdin_args)(kg_dx_chk *c);
    bool (*is_cd)(const char *name);
} kg_dx_visitor;

/* Checks every command in a shell string (denyexec_sh.c); pos are its $0,
 * $1...  Each command goes to vis. */
int kg_dx_check_string(const kg_dx_visitor *vis, kg_dx_chk *c, const char *s, size_t len,
                       kg_dx_scope sc, const char *where, char **pos, size_t npos);
/* Sets the reason (entry NULL: a refusal of its own) and returns 1. */
int kg_dx_block(kg_dx_chk *c, const char *entry, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Nesting depth: false when too deep (then do not call kg_dx_leave). */
bool kg_dx_enter(kg_dx_chk *c);
void kg_dx_leave(kg_dx_chk *c);
/* True once after a shell under xargs: its $1... come from stdin. */
bool kg_dx_take_stdin_args(kg_dx_chk *c);
bool kg_dx_is_cd(const char *name);

char *kg_dx_strdup(const char *s);
char *kg_dx_join(const char *dir, const char *name);
const char *kg_dx_base(const char *p);

#endif
