/* boxhome.h: the files the core makes for one run, for the box to show:
 * the box's own git configuration (the user's identity and a few harmless
 * settings from their global config, and an excludes file that keeps
 * kgate's placeholders out of git add), and an empty file of mode 0 to
 * cover a deny_read file with, which the box cannot open (docs/escapes.md, "git in the box").
 *
 * The user's config is read as data: no git is run on it, so nothing it
 * names (a credential helper, core.sshCommand, an alias with "!") can run,
 * and only the keys of the allow list below ever reach the box. */
#ifndef KG_BOXHOME_H
#define KG_BOXHOME_H
#include <stddef.h>

#include "error.h"
#include "strv.h"

/* The allowed keys of one config file's text, appended to kv as pairs
 * (the key as "section.name", lower case; its value).  Sections with a
 * subsection ([url "..."], [includeIf ...]) and keys not on the list are
 * skipped, as is a value holding a control character. */
void kg_boxgit_scan(const char *text, size_t len, kg_strv *kv);

/* 1 when key (lower case) is one the box's .gitconfig may carry. */
int kg_boxgit_allowed(const char *key);

/* The box's .gitconfig: the last value of each allowed key in kv (git's
 * rule: a later file, or a later line, wins), and core.excludesFile
 * naming excludes (a path as git reads it in the box: "~/..."). */
char *kg_boxgit_render(const kg_strv *kv, const char *excludes);

typedef struct kg_boxhome kg_boxhome;

/* Makes the run's files in a private directory of /tmp: the .gitconfig
 * from home's ~/.gitconfig and xdg_config/git/config (xdg_config NULL:
 * home/.config), the excludes file (the user's own global excludes,
 * unless under a deny_read path; the deny_read entries inside the
 * project; "/NAME" for each top-level name in placeholders), and the
 * empty file.  NULL with err when the directory or a file cannot be
 * made. */
typedef struct kg_boxhome_in {
    const char *home; /* the real one */
    const char *xdg_config; /* $XDG_CONFIG_HOME, or NULL */
    const char *project;
    const kg_strv *deny_read; /* resolved */
    const kg_strv *placeholders; /* top-level names (kg_placeholders_top) */
} kg_boxhome_in;
kg_boxhome *kg_boxhome_make(const kg_boxhome_in *in, kg_error *err);

/* The same names with nothing made, as the plan of a dry run shows them
 * (a dry run writes nothing, as it makes no placeholders). */
kg_boxhome *kg_boxhome_names(void);

/* The files for the box's HOME: name below HOME, and the host file. */
size_t kg_boxhome_count(const kg_boxhome *bh);
const char *kg_boxhome_name(const kg_boxhome *bh, size_t i);
const char *kg_boxhome_source(const kg_boxhome *bh, size_t i);
/* The empty file of mode 0 (nobody without capabilities opens it). */
const char *kg_boxhome_empty(const kg_boxhome *bh);

/* Removes the files and the directory; accepts NULL. */
void kg_boxhome_free(kg_boxhome *bh);

#endif
