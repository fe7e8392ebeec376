/* protected.h: the built-in protected paths, in one table.
 *
 * Each is a name in the project that a program on the host reads and acts
 * on later, outside the box (git, direnv, an editor, an agent), or that
 * sets kgate's own policy.  A sandboxed program that could write, create,
 * replace or move one could run code on the host the next time that tool
 * starts.  Every entry is protected whether it exists at launch or not
 * (docs/escapes.md, "Planted hooks"); docs/man/kgate.yaml.5 lists the same
 * names, and a unit test holds the two together. */
#ifndef KG_PROTECTED_H
#define KG_PROTECTED_H
#include <stddef.h>

#include "error.h"
#include "strv.h"

typedef enum kg_prot_kind {
    KG_PROT_DIR, /* made an empty directory when missing */
    KG_PROT_FILE, /* made an empty file when missing */
    KG_PROT_GIT, /* missing: gitguard.c keeps it (the commondir placeholder) */
} kg_prot_kind;

typedef struct kg_protected_entry {
    const char *name; /* relative to the project */
    kg_prot_kind kind; /* what a tool expects there */
    const char *why; /* what runs it later, and when */
    const char *since; /* the kgate version that protects it */
} kg_protected_entry;

/* The table, in the order the man page lists it. */
const kg_protected_entry *kg_protected_table(size_t *n);

/* Placeholders for the missing ones (protected.c says why).  For each
 * table entry in protect_paths (so not one unprotect_paths took out)
 * whose parent is a directory in project and which is missing, an empty
 * file or directory without write permission is made; one another run
 * made is shared.  Each is held (a shared flock) until
 * kg_placeholders_release, which removes it when no other run holds it
 * and it is still empty.  NULL with err set when one could not be made
 * for a reason other than that nobody with this uid could create it
 * either (EACCES, EROFS). */
typedef struct kg_placeholders kg_placeholders;
kg_placeholders *kg_placeholders_make(const char *project, const kg_strv *protect_paths,
                                      kg_error *err);
/* Accepts NULL. */
void kg_placeholders_release(kg_placeholders *ph);
/* How many this run holds (for the tests). */
size_t kg_placeholders_count(const kg_placeholders *ph);
/* The names of those directly in the project, pushed to names: what git
 * in the box must not add (boxhome.c). */
void kg_placeholders_top(const kg_placeholders *ph, kg_strv *names);

#endif
