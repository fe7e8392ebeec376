/* Prints the built-in protected paths (core/protect/protected.c), one a line:
 * "dir NAME", "file NAME" or "git NAME", for the integration tests to
 * attack every entry the table holds, and only those. */
#include <stdio.h>

#include "protected.h"

int main(void)
{
    static const char *const kind[] = {
        [KG_PROT_DIR] = "dir", [KG_PROT_FILE] = "file", [KG_PROT_GIT] = "git"};
    size_t n;
    const kg_protected_entry *t = kg_protected_table(&n);
    for (size_t i = 0; i < n; i++) printf("%s %s\n", kind[t[i].kind], t[i].name);
    return ferror(stdout) ? 1 : 0;
}
