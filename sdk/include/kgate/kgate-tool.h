/* kgate-tool.h: where the core and every backend find the programs they
 * start outside the box (bwrap, slirp4netns, dnsmasq, nft, git,
 * sandbox-exec), so that no such program can come from a place a box can
 * write.  It is in libkgate-common.a (pkg-config kgate-plugin); the
 * symbols are hidden, so a plugin does not export them.
 *
 * The rule (docs/threat-model.md, "No tool from a place a box can
 * write"):
 *
 *   1. PATH is never read.  A box writes its project, and a project
 *      directory is on PATH more often than not (direnv's layout node, any
 *      `npm run` script put node_modules/.bin there), so a bwrap the box
 *      wrote there would run, outside any box, at the next run.  A tool is
 *      looked up in KGATE_TOOL_DIRS only, in that order (Debian's PATH for
 *      root: an administrator's newer build in /usr/local wins, as it did).
 *   2. The first candidate that exists is resolved (realpath), and the
 *      file it resolves to and every directory above that file must be
 *      owned by root or by the user kgate runs as, and none of them group-
 *      or other-writable: nobody but the user and root can change what
 *      runs.  A candidate that fails this is passed over (and named when no
 *      other is found); the resolved path is what is executed, so a link
 *      along the way cannot be re-pointed between the check and the exec.
 *   3. The resolved file must not lie under any place the policy lets the
 *      box write (kgate_tool_outside_policy): the user's files are
 *      writable by the box where the policy says so, and the check of rule
 *      2 cannot tell the two apart.
 *
 * What rule 2 leaves open is a change made between the check and the exec
 * by root or the user outside the box: both are trusted, and a box can do
 * neither (rule 3). */
#ifndef KGATE_TOOL_H
#define KGATE_TOOL_H

#include <stddef.h>

#include "kgate/kgate-plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Searched in this order; nothing else. */
#define KGATE_TOOL_DIRS "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* Finds the program name (no slash) in KGATE_TOOL_DIRS under rule 2.
 * 0 with its resolved path in out; -1 with err saying why: not in any of
 * the directories, or the first candidate found and why it is not
 * trusted ("/usr/local/bin/bwrap: /usr/local/bin is writable by others
 * (mode 0777)").  The message begins with name. */
int kgate_tool_find(const char *name, char *out, size_t outsz, kgate_err *err);

/* Rule 2 for one absolute path: 0 with the resolved path in real (may be
 * NULL), or -1 with err saying which file or directory fails, and how. */
int kgate_tool_trusted(const char *path, char *real, size_t realsz, kgate_err *err);

/* Rule 3: -1 with err when tool (a resolved path) lies under the project,
 * an allow_paths entry or TMPDIR of the policy; else 0. */
int kgate_tool_outside_policy(const char *tool, const kgate_policy *policy, kgate_err *err);

/* Rule 3 for the directories themselves: -1 with err when the policy lets
 * the box write one of KGATE_TOOL_DIRS (resolved) or a directory above
 * it, where it could put a tool for a later run to find; else 0.  The
 * core refuses such a policy before anything starts. */
int kgate_tool_dirs_outside_policy(const kgate_policy *policy, kgate_err *err);

#ifdef __cplusplus
}
#endif

#endif
