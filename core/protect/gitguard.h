/* gitguard.h: what the sandboxed program could leave for the host's git.
 *
 * Host git reads configuration and hooks, and runs what they name, from
 * places inside the project: the git directory, the one its commondir
 * names, per-worktree config, the git directories of submodules and of
 * nested repositories that the index records as gitlinks, and the rebase
 * todo list.  The backends keep what they can read-only for the length of
 * the run (bubblewrap: .git bound onto itself, config, hooks, modules,
 * worktrees and every gitlink's .git read-only).  What a mount cannot keep
 * from being created is checked here, by the core, so that it holds for
 * every backend:
 *
 *   - before the launch, a repository that is already redirected (a
 *     commondir in a main git directory) is refused;
 *   - after the run, what the program planted is moved aside under a
 *     name git never reads; cmd_run prints one "kgate: git:" line and
 *     writes one "git" audit event for each.  Files are read as git reads
 *     them (a .git file whole, up to git's 1 MiB), gitlinks are followed
 *     into the gitlinks of their own index, and what cannot be read that
 *     way counts as planted; a finding is never only reported (a name
 *     made after the run when the usual one is taken, or else the index
 *     that records it moved aside).
 *
 * docs/escapes.md ("Host git") says what is covered and what is not. */
#ifndef KG_GITGUARD_H
#define KG_GITGUARD_H
#include <stdio.h>

#include "error.h"
#include "strv.h"

typedef struct kg_gitguard kg_gitguard;

/* Before the launch.  NULL with err set when the project's repository
 * already makes git read configuration from somewhere the program could
 * have written (the launch is refused); else a snapshot to compare with.
 * With place, a .git directory without a commondir gets a placeholder one
 * ("."), held until kg_gitguard_end or _free, for the backend to bind
 * read-only (gitguard.c says why); a dry run passes 0. */
kg_gitguard *kg_gitguard_begin(const char *project, int place, kg_error *err);

/* After the run: moves aside what the run planted (see above) and adds
 * one line per finding to out (what, why, where it went; control bytes
 * shown as \xNN).  Returns the number of findings. */
int kg_gitguard_end(kg_gitguard *g, kg_strv *out);

void kg_gitguard_free(kg_gitguard *g); /* accepts NULL */

/* The paths to keep read-only during the run besides the built-in ones:
 * the .git of every populated gitlink in the index, and in the indexes of
 * those repositories in turn, and the git directory a gitfile there points
 * to; a .git file at the project's top, and in each git directory
 * kg_gitguard_gitdirs finds, the names the built-in table protects below
 * .git.  Appended to out, absolute. */
void kg_gitguard_pins(const char *project, kg_strv *out);

/* The git directories the project's git uses other than a .git
 * directory at its top, which the built-in table names: the one its .git
 * file (or a symbolic link at .git) names, and the one that names in its
 * commondir (a linked worktree's main git directory).  Each resolved,
 * appended to out when it lies in the project (nothing outside is
 * writable from the box).  Read as git reads them, never by running git;
 * -1 when a .git or commondir is there but cannot be read that way (too
 * long, no "gitdir: ", a NUL, naming nothing): kg_gitguard_begin refuses
 * the launch then.  kg_gitguard_pins adds what the built-in table keeps
 * below .git (config, hooks, ...) for each, and the .git file itself. */
int kg_gitguard_gitdirs(const char *project, kg_strv *out);

/* The hooks directory host git uses in the project when the repository's
 * configuration names one with core.hooksPath (husky's .husky, .githooks),
 * as git resolves it, absolute; NULL when it is .git/hooks or lies
 * outside the project.  Protected like .git/hooks (core/policy/policy.c); with
 * place, kg_gitguard_begin makes it when it is missing, so that there is
 * something to keep read-only.  Runs git rev-parse (gitguard.c says why). */
char *kg_gitguard_hooks_dir(const char *project);

/* Exposed for the unit tests.  The gitlink paths recorded in an index
 * file (and in its shared index, when it is split), relative to the work
 * tree; -1 when the file is not an index this parser understands. */
int kg_gitguard_index_gitlinks(const char *gitdir, kg_strv *out);
/* 1 when a git config file only sets keys that run nothing (the allow
 * list in gitguard.c), 0 when it sets anything else or cannot be read in
 * the strict form this parser accepts, 1 when it does not exist. */
int kg_gitguard_config_inert(const char *path);

#endif
