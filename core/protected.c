/* protected.c: the built-in protected paths (protected.h), one table:
 * what each one runs later, and since which kgate version. */
#include "protected.h"


#define V "0.1.0" /* meson.build's version when the entry was added */

static const kg_protected_entry table[] = {
    {".git/hooks", KG_PROT_DIR,
     "git runs the hooks in it at the next commit, merge, checkout or push", V},
    {".git/config", KG_PROT_FILE,
     "git reads it at every command: core.hooksPath, core.fsmonitor, core.pager, "
     "alias.* and filter drivers run programs (a plain git status runs fsmonitor)",
     V},
    {".git/config.worktree", KG_PROT_FILE,
     "git reads it like .git/config once extensions.worktreeConfig is on "
     "(git sparse-checkout turns it on)",
     V},
    {".git/modules", KG_PROT_DIR,
     "submodules' git directories: their config and hooks run at git status "
     "and at commands inside the submodule",
     V},
    {".git/worktrees", KG_PROT_DIR,
     "linked worktrees' git directories: their config.worktree, commondir and "
     "hooks apply to git run in those worktrees",
     V},
    {".git/commondir", KG_PROT_GIT,
     "sends git to another directory's config and hooks (a main .git never has "
     "one; gitguard.c keeps a placeholder holding \".\" when missing)",
     V},
    {".kgate.yaml", KG_PROT_FILE,
     "kgate's project policy, read at the next run: it may only narrow, but "
     "rewriting it drops what the project added (a deny_read, a protect_paths)",
     V},
    {".envrc", KG_PROT_FILE,
     "direnv runs it as shell when a shell enters the project, once allowed", V},
    {".vscode", KG_PROT_DIR,
     "VS Code: tasks.json (a task with runOn folderOpen), settings.json (paths "
     "of interpreters, linters, terminals), launch.json; in a trusted folder "
     "they run when it is opened",
     V},
    {".idea", KG_PROT_DIR,
     "JetBrains IDEs: run configurations, startup tasks and external tools, "
     "run in a trusted project",
     V},
};

const kg_protected_entry *kg_protected_table(size_t *n)
{
    *n = sizeof table / sizeof table[0];
    return table;
}

