/* agentwrap.c: see agentwrap.h. */
#include "agentwrap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void kg_sh_quote(UT_string *out, const char *s)
{
    /* utstring grows by just what is asked: the whole size first, so a
     * command of megabytes is not copied again at each quote in it. */
    size_t quotes = 0;
    for (const char *p = strchr(s, '\''); p; p = strchr(p + 1, '\'')) quotes++;
    utstring_reserve(out, strlen(s) + 3 * quotes + 3);
    utstring_bincpy(out, "'", 1);
    for (const char *p = s;;) {
        const char *q = strchr(p, '\'');
        utstring_bincpy(out, p, q ? (size_t)(q - p) : strlen(p));
        if (!q) break;
        utstring_bincpy(out, "'\\''", 4);
        p = q + 1;
    }
    utstring_bincpy(out, "'", 1);
}

void kg_agent_prefix(UT_string *out, const char *kgate)
{
    kg_sh_quote(out, kgate);
    /* --no-pty: an agent reads pipes; /bin/sh by absolute path, so the
     * box's PATH does not choose the shell; -- after -c, or a command that
     * starts with - would be read as sh's options (sh -c [options]
     * string: dash refused "-- --help" as one, the hook's test found). */
    utstring_printf(out, " run --no-pty -- /bin/sh -c -- ");
}

void kg_agent_wrap(UT_string *out, const char *kgate, const char *cmd)
{
    kg_agent_prefix(out, kgate);
    kg_sh_quote(out, cmd);
}

/* The string a quoted word q stands for, when q is 'seg'('\''seg)* with no
 * ' in any seg: the only shape kg_sh_quote writes.  NULL otherwise. */
static char *unquote(const char *q)
{
    if (*q != '\'') return NULL;
    UT_string *o;
    utstring_new(o);
    utstring_reserve(o, strlen(q) + 1);
    const char *p = q + 1;
    for (;;) {
        const char *end = strchr(p, '\'');
        if (!end) break;
        utstring_bincpy(o, p, (size_t)(end - p));
        if (end[1] == '\0') {
            char *r = strdup(utstring_body(o));
            utstring_free(o);
            if (!r) kg_oom();
            return r;
        }
        if (strncmp(end, "'\\''", 4) != 0) break;
        utstring_bincpy(o, "'", 1);
        p = end + 4;
    }
    utstring_free(o);
    return NULL;
}

char *kg_agent_unwrap(const char *kgate, const char *cmd)
{
    UT_string *pre;
    utstring_new(pre);
    kg_agent_prefix(pre, kgate);
    char *inner = NULL;
    if (strncmp(cmd, utstring_body(pre), utstring_len(pre)) == 0)
        inner = unquote(cmd + utstring_len(pre));
    utstring_free(pre);
    if (!inner) return NULL;
    /* Decided by the exact form: written again, it must be cmd. */
    UT_string *again;
    utstring_new(again);
    kg_agent_wrap(again, kgate, inner);
    bool same = strcmp(utstring_body(again), cmd) == 0;
    utstring_free(again);
    if (!same) {
        free(inner);
        return NULL;
    }
    return inner;
}

int kg_agent_self(char *buf, size_t size, kg_error *err)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    if (n < 0)
        return kg_err_set(err, errno, "cannot tell where kgate is (/proc/self/exe): %s",
                          strerror(errno));
    if ((size_t)n >= size - 1)
        return kg_err_set(err, ENAMETOOLONG, "the path of kgate is too long");
    buf[n] = '\0';
    if (buf[0] != '/' || strstr(buf, " (deleted)"))
        return kg_err_set(err, ENOENT, "kgate's own binary is gone (%s): reinstall it", buf);
    return 0;
}
