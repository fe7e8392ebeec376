/* envfilter.h: which environment variables reach the program. */
#ifndef KG_ENVFILTER_H
#define KG_ENVFILTER_H

#include <stdbool.h>

#include "strv.h"

/* True when a variable of this name is withheld by default (its name looks
 * like a secret: KEY, SECRET, TOKEN, PASSWORD, ...). */
bool kg_env_name_looks_secret(const char *name);

/* True for the names the built-in patterns never withhold (PATH, HOME,
 * USER, LANG, LC_*, TERM, SHELL, PWD, SSH_AUTH_SOCK, ...).  An explicit
 * deny_env entry still withholds them. */
bool kg_env_always_passes(const char *name);

/* Copies environ into out ("NAME=value" strings), leaving out what the
 * built-in patterns and deny_env withhold unless pass_env names it (deny_env
 * beats pass_env).  Withheld names, never values, go to withheld.
 * deny_env and pass_env entries are exact names or shell globs ("AWS_*").
 * withheld may be NULL; it comes out sorted and without duplicates. */
void kg_env_filter(char *const *environ_in, const kg_strv *pass_env, const kg_strv *deny_env,
                   kg_strv *out, kg_strv *withheld);

#endif
