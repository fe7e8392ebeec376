/* denyexec_sh.c: the deny list's view of a shell string.
 *
 * Not a shell: enough of the POSIX/bash grammar to know which words stand
 * in command position.  Expansions are not performed; a word whose text
 * depends on one is "dynamic" and is looked up in the assignments the
 * string itself makes.  Every simple command found goes back to
 * the visitor it is given (kg_dx_visitor: kg_dx_check_argv() and its
 * kin in denyexec.c, which know the wrappers and the deny list). */
#include "denyexec_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "oom.h" /* uthash, utarray, utstring */

typedef kg_dx_scope scope;
typedef kg_dx_chk chk;

typedef enum {
    ST_CMD,
    ST_ARGS,
    ST_SKIP,
    ST_FOR,
    ST_CASE_WORD,
    ST_CASE_IN,
    ST_CASE_PAT,
    ST_DBRACKET,
    ST_FUNCNAME
} wstate;

typedef struct walker {
    const kg_dx_visitor *vis; /* the deny list: each command found goes there */
    chk *c;
    scope sc;
    char *path_own, *cwd_own;
    const char *where;
    char **pos;
    size_t npos;
    bool stdin_args;
    kg_strv *words;
    UT_array *dyn; /* int per word: depends on an expansion */
    kg_strv *vars; /* "NAME=value" as assigned in the string */
    wstate st;
    bool redir_target;
    bool redir_in; /* the target is read: "< FILE", "<> FILE" */
    bool funcdef; /* NAME ( seen: a function definition */
    bool fn_parens; /* after "function NAME": optional () */
    bool coproc_next; /* "coproc" seen: a NAME may come before a compound */
    bool coproc_name; /* words[0] may be that NAME */
    char *for_var; /* for NAME [in WORDS]; do: NAME, once seen */
    bool for_in;
    kg_strv *pos_own; /* positional parameters after "set --" or "shift" */
    char **pos_vec;
    int case_depth;
    int result; /* 0, 1 blocked, -1 error */
} walker;

typedef struct heredoc {
    char *delim;
    bool quoted, strip;
} heredoc;

typedef struct lexer {
    walker *w;
    const char *s;
    size_t n, i;
    bool failed;
    heredoc hd[16];
    int nhd;
} lexer;

static bool is_name_start(char ch)
{
    return ch == '_' || (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z');
}
static bool is_name_char(char ch) { return is_name_start(ch) || (ch >= '0' && ch <= '9'); }

/* NAME= or NAME+= or NAME[..]= at the start of an unquoted word. */
static size_t assignment_len(const char *s)
{
    if (!is_name_start(*s)) return 0;
    size_t i = 1;
    while (is_name_char(s[i])) i++;
    if (s[i] == '[') {
        while (s[i] && s[i] != ']') i++;
        if (s[i]) i++;
    }
    if (s[i] == '+') i++;
    return s[i] == '=' ? i + 1 : 0;
}

static const char *var_value(walker *w, const char *name, size_t nl, size_t *from)
{
    for (size_t i = *from; i < kg_strv_len(w->vars); i++) {
        const char *v = kg_strv_get(w->vars, i);
        if (strncmp(v, name, nl) == 0 && v[nl] == '=') {
            *from = i + 1;
            return v + nl + 1;
        }
    }
    return NULL;
}

static char *subst_path(const char *value, const char *old)
{
    UT_string *s;
    utstring_new(s);
    for (const char *p = value; *p;) {
        if (strncmp(p, "$PATH", 5) == 0 && !is_name_char(p[5])) {
            utstring_printf(s, "%s", old ? old : "");
            p += 5;
        } else if (strncmp(p, "${PATH}", 7) == 0) {
            utstring_printf(s, "%s", old ? old : "");
            p += 7;
        } else
            utstring_bincpy(s, p++, 1);
    }
    char *r = kg_dx_strdup(utstring_body(s));
    utstring_free(s);
    return r;
}

static char *expand_simple(walker *w, const char *lit, bool keep_unknown);

static void walker_assign_one(walker *w, const char *word);

/* NAME=VALUE as written, and, when the value holds an expansion, once more
 * with it expanded from what the string assigned so far: y=${x}url after
 * x=c gives y the value curl, which a later $y runs. */
static void walker_assign(walker *w, const char *word, bool dyn)
{
    walker_assign_one(w, word);
    if (!dyn || !strchr(word, '$')) return;
    char *x = expand_simple(w, word, false);
    if (strcmp(x, word) != 0) walker_assign_one(w, x);
    free(x);
}

static void walker_assign_one(walker *w, const char *word)
{
    kg_strv_push(w->vars, word);
    if (strncmp(word, "PATH=", 5) == 0) {
        char *np = subst_path(word + 5, w->sc.path);
        free(w->path_own);
        w->path_own = np;
        w->sc.path = np;
    }
}

static void walker_cd(walker *w, const char *dir)
{
    char *j = dir[0] == '/' ? kg_dx_strdup(dir) : kg_dx_join(w->sc.cwd ? w->sc.cwd : ".", dir);
    char *r = realpath(j, NULL);
    free(j);
    if (!r) return;
    free(w->cwd_own);
    w->cwd_own = r;
    w->sc.cwd = r;
}

static const char *var_last(walker *w, const char *name, size_t nl)
{
    const char *last = NULL, *v;
    size_t from = 0;
    while ((v = var_value(w, name, nl, &from))) last = v;
    return last;
}

/* The word with $NAME, ${NAME} and ${NAME:-WORD} (and -, :=, =) replaced
 * by the last value the string assigned, or by the default word, or by
 * nothing (keep_unknown: left as written).  A guess at what the shell will
 * run, checked beside the word. */
static char *expand_simple(walker *w, const char *lit, bool keep_unknown)
{
    UT_string *s;
    utstring_new(s);
    for (const char *p = lit; *p;) {
        if (*p != '$') {
            utstring_bincpy(s, p++, 1);
            continue;
        }
        const char *q = p + 1;
        bool brace = *q == '{';
        if (brace) q++;
        if (*q == '@' || *q == '*' || (*q >= '1' && *q <= '9')) {
            const char *e = q + 1;
            if (brace && *e != '}') {
                utstring_bincpy(s, p++, 1);
                continue;
            }
            if (*q >= '1' && *q <= '9') {
                size_t k = (size_t)(*q - '0');
                if (k < w->npos) utstring_printf(s, "%s", w->pos[k]);
            } else
                for (size_t k = 1; k < w->npos; k++)
                    utstring_printf(s, "%s%s", k > 1 ? " " : "", w->pos[k]);
            p = brace ? e + 1 : e;
            continue;
        }
        size_t nl = 0;
        while (is_name_char(q[nl])) nl++;
        if (!nl || !is_name_start(*q)) {
            utstring_bincpy(s, p++, 1);
            continue;
        }
        const char *val = var_last(w, q, nl);
        const char *e = q + nl;
        if (!brace) {
            if (val)
                utstring_printf(s, "%s", val);
            else if (keep_unknown)
                utstring_bincpy(s, p, (size_t)(e - p));
            p = e;
            continue;
        }
        const char *close = strchr(e, '}');
        if (!close) {
            utstring_bincpy(s, p++, 1);
            continue;
        }
        const char *def = NULL;
        if (*e == ':' && (e[1] == '-' || e[1] == '='))
            def = e + 2;
        else if (*e == '-' || *e == '=')
            def = e + 1;
        if (val && *val)
            utstring_printf(s, "%s", val);
        else if (def)
            utstring_bincpy(s, def, (size_t)(close - def));
        else if (keep_unknown && !val)
            utstring_bincpy(s, p, (size_t)(close + 1 - p));
        p = close + 1;
    }
    char *r = kg_dx_strdup(utstring_body(s));
    utstring_free(s);
    return r;
}

/* Checks words (split like an unquoted expansion) followed by rest. */
static void check_split(walker *w, const char *value, char **rest, size_t nrest)
{
    kg_strv *nv = kg_strv_new();
    char *copy = kg_dx_strdup(value), *sv = NULL;
    for (char *t = strtok_r(copy, " \t\n", &sv); t; t = strtok_r(NULL, " \t\n", &sv))
        kg_strv_push(nv, t);
    free(copy);
    for (size_t i = 0; i < nrest; i++) kg_strv_push(nv, rest[i]);
    char **nvv = kg_strv_nullterm(nv);
    if (kg_strv_len(nv) && w->result == 0)
        w->result = w->vis->command(w->c, nvv, kg_strv_len(nv), w->sc, w->where, 0);
    free(nvv);
    kg_strv_free(nv);
}

/* The positional parameters become words[from..n) (set -- a b), or lose
 * their first k (shift k).  $0 stays. */
static void set_positional(walker *w, char **words, size_t n, size_t from, const int *dyn,
                           size_t drop)
{
    kg_strv *nv = kg_strv_new();
    kg_strv_push(nv, w->npos > 0 ? w->pos[0] : "sh");
    if (words) {
        for (size_t i = from; i < n; i++) {
            if (!dyn[i] || !strchr(words[i], '$')) {
                kg_strv_push(nv, words[i]);
                continue;
            }
            char *x = expand_simple(w, words[i], false), *sv = NULL;
            for (char *t = strtok_r(x, " \t\n", &sv); t; t = strtok_r(NULL, " \t\n", &sv))
                kg_strv_push(nv, t);
            free(x);
        }
    } else {
        for (size_t i = 1 + drop; i < w->npos; i++) kg_strv_push(nv, w->pos[i]);
    }
    char **vec = kg_strv_nullterm(nv);
    if (!vec) kg_oom();
    free(w->pos_vec);
    kg_strv_free(w->pos_own);
    w->pos_own = nv;
    w->pos_vec = vec;
    w->pos = vec;
    w->npos = kg_strv_len(nv);
}

/* set [options] [--] [ARG...] and shift [N]: the arguments "$@" gives
 * from now on. */
static void walker_setpos(walker *w, char **v, size_t n, size_t skip, const int *dyn)
{
    const char *cw = v[skip];
    if (strcmp(cw, "shift") == 0) {
        size_t k = 1;
        if (n - skip > 1) {
            char *end;
            unsigned long u = strtoul(v[skip + 1], &end, 10);
            if (*end || dyn[skip + 1]) return;
            k = (size_t)u;
        }
        if (k < w->npos) set_positional(w, NULL, 0, 0, NULL, k);
        return;
    }
    for (size_t i = skip + 1; i < n; i++) {
        if (strcmp(v[i], "--") == 0) {
            set_positional(w, v, n, i + 1, dyn, 0);
            return;
        }
        if ((v[i][0] == '-' || v[i][0] == '+') && v[i][1] && !dyn[i]) {
            if (strcmp(v[i] + 1, "o") == 0) i++; /* -o NAME */
            continue;
        }
        set_positional(w, v, n, i, dyn, 0);
        return;
    }
}

/* The command word is one variable ($NAME, ${NAME}, $1, "$@"): what the
 * string assigned, or the positional parameters it was given, is checked.
 * False when the word is more than a variable. */
static bool flush_variable(walker *w, char **v, size_t n, size_t skip)
{
    const char *cw = v[skip];
    const char *p = cw + 1;
    bool brace = *p == '{';
    if (brace) p++;
    size_t nl = 0;
    if (*p == '@' || *p == '*' || (*p >= '0' && *p <= '9'))
        nl = 1;
    else
        while (is_name_char(p[nl])) nl++;
    const char *rest = p + nl;
    if (brace && *rest == '}') rest++;
    if (!nl || *rest) return false;
    bool positional = *p == '@' || *p == '*' || (*p >= '0' && *p <= '9');
    if (positional && w->stdin_args && !(*p == '0')) {
        w->result = w->vis->block(w->c, NULL, w->where, "xargs would supply the command as %s", cw);
        return true;
    }
    if (*p == '@' || *p == '*') {
        kg_strv *nv = kg_strv_new();
        for (size_t i = 1; i < w->npos; i++) kg_strv_push(nv, w->pos[i]);
        for (size_t i = skip + 1; i < n; i++) kg_strv_push(nv, v[i]);
        char **nvv = kg_strv_nullterm(nv);
        if (kg_strv_len(nv))
            w->result = w->vis->command(w->c, nvv, kg_strv_len(nv), w->sc, w->where, 0);
        free(nvv);
        kg_strv_free(nv);
    } else if (*p >= '0' && *p <= '9') {
        size_t k = (size_t)(*p - '0');
        if (k < w->npos) {
            char *save = v[skip];
            v[skip] = w->pos[k];
            w->result = w->vis->command(w->c, v + skip, n - skip, w->sc, w->where, 0);
            v[skip] = save;
        }
    } else {
        /* Every value the string gives the variable. */
        size_t from = 0;
        const char *val;
        while (w->result == 0 && (val = var_value(w, p, nl, &from)))
            check_split(w, val, v + skip + 1, n - skip - 1);
    }
    return true;
}

/* The whole command with every expansion guessed, so that a variable
 * behind a wrapper (exec $c, env "$@") is seen too. */
static void flush_guessed(walker *w, char **v, size_t n, size_t skip)
{
    bool any = false;
    for (size_t i = skip; i < n; i++)
        if (*(int *)utarray_eltptr(w->dyn, (unsigned)i) && strchr(v[i], '$')) any = true;
    if (!any) return;
    /* Only the expanded words are split; a quoted literal stays one word,
     * and a variable the string does not set stays as written, so a
     * wrapper's operands keep their places. */
    kg_strv *ev = kg_strv_new();
    for (size_t i = skip; i < n; i++) {
        if (!*(int *)utarray_eltptr(w->dyn, (unsigned)i)) {
            kg_strv_push(ev, v[i]);
            continue;
        }
        char *x = expand_simple(w, v[i], true), *sv = NULL;
        if (strcmp(x, v[i]) == 0)
            kg_strv_push(ev, v[i]);
        else
            for (char *t = strtok_r(x, " \t\n", &sv); t; t = strtok_r(NULL, " \t\n", &sv))
                kg_strv_push(ev, t);
        free(x);
    }
    char **evv = kg_strv_nullterm(ev);
    if (kg_strv_len(ev))
        w->result = w->vis->command(w->c, evv, kg_strv_len(ev), w->sc, w->where, 0);
    free(evv);
    kg_strv_free(ev);
}

/* Runs the collected simple command through check_argv. */
static void walker_flush(walker *w)
{
    size_t n = kg_strv_len(w->words);
    if (n == 0 || w->result != 0) {
        kg_strv_clear(w->words);
        utarray_clear(w->dyn);
        return;
    }
    char **v = kg_strv_nullterm(w->words);
    if (!v) kg_oom();
    size_t skip = 0;
    /* Leading assignments apply to this command only, except PATH, whose
     * effect on the lookup matters here and which a later bare assignment
     * would make permanent anyway. */
    const int *dv = (const int *)utarray_front(w->dyn);
    while (skip < n && assignment_len(v[skip])) {
        walker_assign(w, v[skip], dv[skip]);
        skip++;
    }
    if (skip < n) {
        const char *cw = v[skip];
        int dyn = *(int *)utarray_eltptr(w->dyn, (unsigned)skip);
        const char *b = kg_dx_base(cw);
        if (w->vis->is_cd(b) && n - skip == 2 &&
            !*(int *)utarray_eltptr(w->dyn, (unsigned)skip + 1))
            walker_cd(w, v[skip + 1]);
        if ((strcmp(cw, "export") == 0 || strcmp(cw, "local") == 0 || strcmp(cw, "readonly") == 0 ||
             strcmp(cw, "declare") == 0 || strcmp(cw, "typeset") == 0)) {
            for (size_t i = skip + 1; i < n; i++)
                if (assignment_len(v[i])) walker_assign(w, v[i], dv[i]);
        }
        if (!dyn && (strcmp(cw, "set") == 0 || strcmp(cw, "shift") == 0))
            walker_setpos(w, v, n, skip, dv);
        if (dyn && cw[0] == '$' && flush_variable(w, v, n, skip)) goto done;
        /* The command word with unknown variables taken as empty:
         * ${PREFIX}curl is curl. */
        if (dyn && strchr(cw, '$')) {
            char *x = expand_simple(w, cw, false);
            if (strcmp(x, cw) != 0) check_split(w, x, v + skip + 1, n - skip - 1);
            free(x);
            if (w->result) goto done;
        }
        flush_guessed(w, v, n, skip);
        if (w->result) goto done;
        w->result = w->vis->command(w->c, v + skip, n - skip, w->sc, w->where, 0);
    }
done:
    free(v);
    kg_strv_clear(w->words);
    utarray_clear(w->dyn);
    w->coproc_name = false;
}

static bool kw_is(const char *word, int dyn, const char *kw)
{
    return !dyn && strcmp(word, kw) == 0;
}

/* for NAME in WORDS; do: each word is a value NAME takes in the body (for
 * c in curl; do $c; done); without "in", the positional parameters.  d:
 * the word cannot be a keyword. */
static void for_word(walker *w, const char *word, bool dyn, int d)
{
    if (kw_is(word, d, "do")) {
        if (w->for_var && !w->for_in)
            for (size_t i = 1; i < w->npos; i++) {
                char *a = NULL;
                if (asprintf(&a, "%s=%s", w->for_var, w->pos[i]) < 0) kg_oom();
                walker_assign_one(w, a);
                free(a);
            }
        free(w->for_var);
        w->for_var = NULL;
        w->for_in = false;
        w->st = ST_CMD;
    } else if (!w->for_var) {
        w->for_var = kg_dx_strdup(word);
    } else if (!w->for_in && kw_is(word, d, "in")) {
        w->for_in = true;
    } else if (w->for_in) {
        char *a = NULL;
        if (asprintf(&a, "%s=%s", w->for_var, word) < 0) kg_oom();
        walker_assign(w, a, dyn);
        free(a);
    }
}

/* A keyword in command position (the first word): the state it puts the
 * walker in.  true when word was one, and is not a command. */
static bool first_word_keyword(walker *w, const char *word, int d)
{
    if (kw_is(word, d, "coproc")) {
        w->coproc_next = true;
        return true;
    }
    static const char *const next_cmd[] = {"if",    "then", "else", "elif", "while",
                                           "until", "do",   "!",    "{",    NULL};
    for (int i = 0; next_cmd[i]; i++)
        if (kw_is(word, d, next_cmd[i])) return true;
    static const char *const ends[] = {"fi", "done", "}", NULL};
    for (int i = 0; ends[i]; i++)
        if (kw_is(word, d, ends[i])) {
            w->st = ST_SKIP;
            return true;
        }
    if (kw_is(word, d, "esac") && w->case_depth > 0) {
        w->case_depth--;
        w->st = ST_SKIP;
        return true;
    }
    if (kw_is(word, d, "for") || kw_is(word, d, "select")) {
        w->st = ST_FOR;
        return true;
    }
    if (kw_is(word, d, "case")) {
        w->case_depth++;
        w->st = ST_CASE_WORD;
        return true;
    }
    if (kw_is(word, d, "[[")) {
        w->st = ST_DBRACKET;
        return true;
    }
    if (kw_is(word, d, "function")) {
        w->st = ST_FUNCNAME;
        return true;
    }
    return false;
}

static void walker_word(walker *w, const char *word, bool dyn, bool quoted)
{
    if (w->result) return;
    if (w->redir_target) {
        /* cat < /usr/bin/curl > x: the file read is checked like cp's
         * operand (a literal name only). */
        if (w->redir_in && !dyn) w->result = w->vis->source(w->c, "<", word, w->sc, w->where);
        w->redir_target = w->redir_in = false;
        return;
    }
    w->fn_parens = false;
    int d = dyn || quoted; /* a quoted or expanded word is never a keyword */
    switch (w->st) {
    case ST_SKIP: return;
    case ST_FOR: for_word(w, word, dyn, d); return;
    case ST_CASE_WORD: w->st = ST_CASE_IN; return;
    case ST_CASE_IN:
        if (kw_is(word, d, "in")) w->st = ST_CASE_PAT;
        return;
    case ST_CASE_PAT:
        if (kw_is(word, d, "esac")) {
            w->case_depth--;
            w->st = ST_SKIP;
        }
        return;
    case ST_DBRACKET:
        if (kw_is(word, d, "]]")) w->st = ST_SKIP;
        return;
    case ST_FUNCNAME:
        w->st = ST_CMD;
        w->fn_parens = true;
        return;
    case ST_CMD:
        if (kg_strv_len(w->words) == 0 && w->coproc_next) {
            /* coproc [NAME] COMPOUND: a NAME here is the coprocess's name
             * when a compound command follows; that is known one word
             * later (walker_word below, OP_OPEN). */
            w->coproc_next = false;
            static const char *const compound[] = {"{",      "while", "until", "if", "for",
                                                   "select", "case",  "[[",    NULL};
            bool kw = false;
            for (int i = 0; compound[i]; i++) kw = kw || kw_is(word, d, compound[i]);
            if (!kw && !d && is_name_start(word[0])) w->coproc_name = true;
        }
        if (kg_strv_len(w->words) == 0 && first_word_keyword(w, word, d)) return;
        /* Leading assignments keep the command position open. */
        if (!assignment_len(word)) w->st = ST_ARGS;
        break;
    case ST_ARGS:
        if (w->coproc_name && kg_strv_len(w->words) == 1) {
            w->coproc_name = false;
            static const char *const compound[] = {"{",      "while", "until", "if", "for",
                                                   "select", "case",  "[[",    NULL};
            for (int i = 0; compound[i]; i++)
                if (kw_is(word, d, compound[i])) {
                    /* The first word was the coprocess's name. */
                    kg_strv_clear(w->words);
                    utarray_clear(w->dyn);
                    w->st = ST_CMD;
                    walker_word(w, word, dyn, quoted);
                    return;
                }
        }
        break;
    }
    kg_strv_push(w->words, word);
    int di = dyn;
    utarray_push_back(w->dyn, &di);
}

typedef enum { OP_SEQ, OP_PIPE, OP_CASE_END, OP_OPEN, OP_CLOSE, OP_REDIR, OP_REDIR_IN } opkind;

static void walker_op(walker *w, opkind op)
{
    if (w->result) return;
    switch (op) {
    case OP_REDIR: w->redir_target = true; return;
    case OP_REDIR_IN: w->redir_target = w->redir_in = true; return;
    case OP_SEQ:
    case OP_PIPE:
        /* Inside [[ ]], a for header, or between case and its patterns,
         * separators are not command boundaries. */
        if (w->st == ST_DBRACKET || w->st == ST_FOR || w->st == ST_CASE_PAT ||
            w->st == ST_CASE_WORD || w->st == ST_CASE_IN || w->st == ST_FUNCNAME)
            return;
        walker_flush(w);
        w->st = ST_CMD;
        return;
    case OP_CASE_END:
        walker_flush(w);
        w->st = w->case_depth > 0 ? ST_CASE_PAT : ST_CMD;
        return;
    case OP_OPEN:
        if (w->st == ST_DBRACKET || w->st == ST_CASE_PAT || w->fn_parens) return;
        if (w->coproc_name && kg_strv_len(w->words) == 1) {
            /* coproc NAME ( ... ): a subshell, not a function NAME(). */
            w->coproc_name = false;
            kg_strv_clear(w->words);
            utarray_clear(w->dyn);
            w->st = ST_CMD;
            return;
        }
        if (kg_strv_len(w->words) == 1 && w->st == ST_ARGS) {
            w->funcdef = true;
            return;
        }
        walker_flush(w);
        w->st = ST_CMD;
        return;
    case OP_CLOSE:
        if (w->st == ST_DBRACKET) return;
        if (w->st == ST_CASE_PAT) {
            w->st = ST_CMD;
            return;
        }
        if (w->funcdef || w->fn_parens) {
            w->funcdef = w->fn_parens = false;
            kg_strv_clear(w->words);
            utarray_clear(w->dyn);
            w->st = ST_CMD;
            return;
        }
        walker_flush(w);
        w->st = ST_SKIP;
        return;
    }
}

static int lex_list(lexer *lx, bool stop_at_paren);

/* Runs a nested command list ($( ), backticks, <( )) in its own walker. */
static int nested_string(lexer *lx, const char *s, size_t len)
{
    walker *w = lx->w;
    int r = kg_dx_check_string(w->vis, w->c, s, len, w->sc, w->where, w->pos, w->npos);
    if (r && !w->result) w->result = r;
    return r;
}

/* $( ... ) starting after "$(" (or "<(" ">("): lexes it in a fresh walker
 * in place, so that quotes and nesting inside are understood. */
static void nested_paren(lexer *lx)
{
    walker *outer = lx->w;
    /* Each level is a few C stack frames: counted with every other kind of
     * nesting, so "$($($(..." refuses at the limit instead of overflowing
     * the stack. */
    if (!outer->vis->enter(outer->c)) {
        if (!outer->result)
            outer->result = outer->vis->block(outer->c, NULL, outer->where,
                                              "commands nested too deeply to check");
        lx->failed = true;
        return;
    }
    walker inner = *outer;
    inner.path_own = inner.cwd_own = NULL;
    inner.words = kg_strv_new();
    utarray_new(inner.dyn, &ut_int_icd);
    inner.vars = kg_strv_dup(outer->vars);
    inner.st = ST_CMD;
    inner.redir_target = inner.redir_in = inner.funcdef = inner.fn_parens = false;
    inner.coproc_next = inner.coproc_name = inner.for_in = false;
    inner.for_var = NULL;
    inner.pos_own = NULL;
    inner.pos_vec = NULL;
    inner.case_depth = 0;
    inner.result = 0;
    lx->w = &inner;
    lex_list(lx, true);
    walker_flush(&inner);
    lx->w = outer;
    if (inner.result && !outer->result) outer->result = inner.result;
    kg_strv_free(inner.words);
    utarray_free(inner.dyn);
    kg_strv_free(inner.vars);
    free(inner.path_own);
    free(inner.cwd_own);
    free(inner.for_var);
    kg_strv_free(inner.pos_own);
    free(inner.pos_vec);
    outer->vis->leave(outer->c);
}

/* Skips a balanced region opened by open (already consumed). */
static bool skip_balanced(lexer *lx, char open, char close)
{
    int depth = 1;
    while (lx->i < lx->n) {
        char ch = lx->s[lx->i++];
        if (ch == '\\') {
            lx->i++;
            continue;
        }
        if (ch == '\'') {
            while (lx->i < lx->n && lx->s[lx->i] != '\'') lx->i++;
            if (lx->i >= lx->n) return false;
            lx->i++;
            continue;
        }
        if (ch == '"') {
            while (lx->i < lx->n && lx->s[lx->i] != '"') {
                if (lx->s[lx->i] == '\\') lx->i++;
                lx->i++;
            }
            if (lx->i >= lx->n) return false;
            lx->i++;
            continue;
        }
        if (ch == '$' && lx->i + 1 < lx->n && lx->s[lx->i] == '(' && lx->s[lx->i + 1] != '(') {
            lx->i++; /* a command substitution, also inside $(( )) */
            nested_paren(lx);
            if (lx->failed) return false;
            continue;
        }
        if (ch == open)
            depth++;
        else if (ch == close && --depth == 0)
            return true;
    }
    return false;
}

/* `...`: the body with its backslash escapes undone, lexed as a string. */
static bool backtick(lexer *lx, UT_string *lit)
{
    UT_string *body;
    utstring_new(body);
    while (lx->i < lx->n && lx->s[lx->i] != '`') {
        char ch = lx->s[lx->i++];
        if (ch == '\\' && lx->i < lx->n && strchr("$`\\", lx->s[lx->i])) ch = lx->s[lx->i++];
        utstring_bincpy(body, &ch, 1);
    }
    bool ok = lx->i < lx->n;
    if (ok) {
        lx->i++;
        nested_string(lx, utstring_body(body), utstring_len(body));
        utstring_printf(lit, "$(..)");
    }
    utstring_free(body);
    return ok;
}

/* $... inside or outside double quotes: appended to lit as written. */
static bool dollar(lexer *lx, UT_string *lit)
{
    const char *s = lx->s;
    lx->i++; /* the '$' */
    if (lx->i < lx->n && s[lx->i] == '(') {
        lx->i++;
        if (lx->i < lx->n && s[lx->i] == '(') { /* $(( arithmetic )) */
            lx->i++;
            if (!skip_balanced(lx, '(', ')')) return false;
            if (lx->i < lx->n && s[lx->i] == ')') lx->i++;
        } else {
            nested_paren(lx);
            if (lx->failed) return false;
        }
        utstring_printf(lit, "$(..)");
        return true;
    }
    if (lx->i < lx->n && s[lx->i] == '{') {
        size_t st = lx->i;
        lx->i++;
        if (!skip_balanced(lx, '{', '}')) return false;
        utstring_printf(lit, "$");
        utstring_bincpy(lit, s + st, lx->i - st);
        return true;
    }
    utstring_printf(lit, "$");
    if (lx->i < lx->n && (is_name_start(s[lx->i]))) {
        while (lx->i < lx->n && is_name_char(s[lx->i])) utstring_bincpy(lit, s + lx->i++, 1);
    } else if (lx->i < lx->n && strchr("@*#?$!-0123456789", s[lx->i]))
        utstring_bincpy(lit, s + lx->i++, 1);
    return true;
}

/* A $ or ` expansion at lx->i, in a word or inside double quotes:
 * appended to lit as written, and *dyn set (the word is not a literal).
 * 1 when one was taken, 0 when the character starts none, -1 when it is
 * malformed. */
static int expansion(lexer *lx, UT_string *lit, bool *dyn)
{
    char ch = lx->s[lx->i];
    if (ch != '$' && ch != '`') return 0;
    *dyn = true;
    if (ch == '$') return dollar(lx, lit) ? 1 : -1;
    lx->i++;
    return backtick(lx, lit) ? 1 : -1;
}

static bool dquote(lexer *lx, UT_string *lit, bool *dyn)
{
    const char *s = lx->s;
    while (lx->i < lx->n && s[lx->i] != '"') {
        char ch = s[lx->i];
        if (ch == '\\' && lx->i + 1 < lx->n) {
            char nx = s[lx->i + 1];
            if (nx == '\n') {
                lx->i += 2;
                continue;
            }
            if (strchr("$`\"\\", nx)) {
                utstring_bincpy(lit, &nx, 1);
                lx->i += 2;
                continue;
            }
            utstring_bincpy(lit, &ch, 1);
            lx->i++;
            continue;
        }
        int e = expansion(lx, lit, dyn);
        if (e < 0) return false;
        if (e > 0) continue;
        utstring_bincpy(lit, &ch, 1);
        lx->i++;
    }
    if (lx->i >= lx->n) return false;
    lx->i++;
    return true;
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

static void put_utf8(UT_string *lit, unsigned long cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80)
        b[0] = (char)cp, n = 1;
    else if (cp < 0x800)
        b[0] = (char)(0xC0 | (cp >> 6)), b[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    else if (cp < 0x10000)
        b[0] = (char)(0xE0 | (cp >> 12)), b[1] = (char)(0x80 | ((cp >> 6) & 0x3F)),
        b[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
    else if (cp <= 0x10FFFF)
        b[0] = (char)(0xF0 | (cp >> 18)), b[1] = (char)(0x80 | ((cp >> 12) & 0x3F)),
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), b[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    else
        return;
    utstring_bincpy(lit, b, n);
}

/* One backslash escape of $'...' at s[i] (the backslash), decoded the way
 * bash decodes it: \a \b \e \E \f \n \r \t \v \\ \' \" \?, \NNN octal,
 * \xHH, \uHHHH, \UHHHHHHHH, \cX.  An unknown escape keeps its backslash.
 * A NUL ends the string's value (*cut).  Returns the index after it. */
static size_t ansi_c_escape(const char *s, size_t n, size_t i, UT_string *lit, bool *cut)
{
    char e = s[i + 1];
    i += 2;
    unsigned long v = 0;
    int digits = 0;
    char out;
    switch (e) {
    case 'a': out = '\a'; break;
    case 'b': out = '\b'; break;
    case 'e':
    case 'E': out = 0x1b; break;
    case 'f': out = '\f'; break;
    case 'n': out = '\n'; break;
    case 'r': out = '\r'; break;
    case 't': out = '\t'; break;
    case 'v': out = '\v'; break;
    case '\\':
    case '\'':
    case '"':
    case '?': out = e; break;
    case 'c':
        if (i >= n) return i;
        out = (char)(s[i++] & 0x1f);
        break;
    case 'x':
    case 'u':
    case 'U': {
        int max = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        while (digits < max && i < n && hexval(s[i]) >= 0)
            v = v * 16 + (unsigned long)hexval(s[i++]), digits++;
        if (!digits) { /* not an escape after all */
            if (!*cut) {
                utstring_bincpy(lit, "\\", 1);
                utstring_bincpy(lit, &e, 1);
            }
            return i;
        }
        if (e != 'x') {
            if (!*cut && v) put_utf8(lit, v);
            if (!v) *cut = true;
            return i;
        }
        out = (char)v;
        break;
    }
    default:
        if (e >= '0' && e <= '7') {
            v = (unsigned long)(e - '0');
            while (digits < 2 && i < n && s[i] >= '0' && s[i] <= '7')
                v = v * 8 + (unsigned long)(s[i++] - '0'), digits++;
            out = (char)(v & 0xff);
            break;
        }
        if (!*cut) {
            utstring_bincpy(lit, "\\", 1);
            utstring_bincpy(lit, &e, 1);
        }
        return i;
    }
    if (out == 0) *cut = true;
    if (!*cut) utstring_bincpy(lit, &out, 1);
    return i;
}

/* Reads one word at lx->i.  Returns false on a parse failure. */
static bool read_word(lexer *lx, UT_string *lit, bool *dyn, bool *quoted)
{
    const char *s = lx->s;
    *dyn = *quoted = false;
    while (lx->i < lx->n) {
        char ch = s[lx->i];
        if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || strchr(";&|<>()", ch)) {
            /* NAME=( array ) belongs to the word. */
            if (ch == '(' && !*quoted && utstring_len(lit) &&
                assignment_len(utstring_body(lit)) == utstring_len(lit)) {
                lx->i++;
                if (!skip_balanced(lx, '(', ')')) return false;
                utstring_printf(lit, "(..)");
                continue;
            }
            break;
        }
        if (ch == '\\') {
            if (lx->i + 1 >= lx->n) {
                lx->i++;
                break;
            }
            if (s[lx->i + 1] != '\n') {
                utstring_bincpy(lit, s + lx->i + 1, 1);
                *quoted = true;
            }
            lx->i += 2;
            continue;
        }
        if (ch == '\'') {
            const char *e = memchr(s + lx->i + 1, '\'', lx->n - lx->i - 1);
            if (!e) return false;
            utstring_bincpy(lit, s + lx->i + 1, (size_t)(e - s) - lx->i - 1);
            lx->i = (size_t)(e - s) + 1;
            *quoted = true;
            continue;
        }
        if (ch == '"') {
            lx->i++;
            *quoted = true;
            if (!dquote(lx, lit, dyn)) return false;
            continue;
        }
        if (ch == '$' && lx->i + 1 < lx->n && s[lx->i + 1] == '\'') { /* $'...' */
            lx->i += 2;
            *quoted = true;
            bool cut = false; /* after \0: bash drops the rest */
            while (lx->i < lx->n && s[lx->i] != '\'') {
                if (s[lx->i] == '\\' && lx->i + 1 < lx->n) {
                    lx->i = ansi_c_escape(s, lx->n, lx->i, lit, &cut);
                    continue;
                }
                if (!cut) utstring_bincpy(lit, s + lx->i, 1);
                lx->i++;
            }
            if (lx->i >= lx->n) return false;
            lx->i++;
            continue;
        }
        if (ch == '$' && lx->i + 1 < lx->n && s[lx->i + 1] == '"') {
            lx->i++;
            continue;
        }
        int e = expansion(lx, lit, dyn);
        if (e < 0) return false;
        if (e > 0) continue;
        utstring_bincpy(lit, &ch, 1);
        lx->i++;
    }
    return true;
}

/* After a newline: the bodies of pending here-documents.  An unquoted
 * delimiter means $( ) and backticks inside run. */
static void heredoc_bodies(lexer *lx)
{
    /* Taken off the lexer first: a $( ) in a body is lexed with this same
     * lexer, and a here-document it opens must start a list of its own,
     * not see (and free) these. */
    heredoc pending[16];
    int np = lx->nhd;
    memcpy(pending, lx->hd, (size_t)np * sizeof *pending);
    lx->nhd = 0;
    for (int h = 0; h < np; h++) {
        heredoc *hd = &pending[h];
        size_t body_start = lx->i, body_end = lx->n;
        while (lx->i < lx->n) {
            size_t ls = lx->i;
            const char *nl = memchr(lx->s + ls, '\n', lx->n - ls);
            size_t le = nl ? (size_t)(nl - lx->s) : lx->n;
            size_t p = ls;
            if (hd->strip)
                while (p < le && lx->s[p] == '\t') p++;
            lx->i = nl ? le + 1 : lx->n;
            if (le - p == strlen(hd->delim) && memcmp(lx->s + p, hd->delim, le - p) == 0) {
                body_end = ls;
                break;
            }
        }
        if (!hd->quoted) {
            size_t save_i = lx->i, save_n = lx->n;
            for (size_t i = body_start; i < body_end && !lx->failed; i++) {
                if (lx->s[i] == '\\') {
                    i++;
                    continue;
                }
                if (lx->s[i] == '$' && i + 1 < body_end && lx->s[i + 1] == '(') {
                    UT_string *tmp;
                    utstring_new(tmp);
                    lx->i = i;
                    lx->n = body_end;
                    if (!dollar(lx, tmp)) lx->failed = true;
                    i = lx->i - 1;
                    utstring_free(tmp);
                } else if (lx->s[i] == '`') {
                    UT_string *tmp;
                    utstring_new(tmp);
                    lx->i = i + 1;
                    lx->n = body_end;
                    if (!backtick(lx, tmp)) lx->failed = true;
                    i = lx->i - 1;
                    utstring_free(tmp);
                }
            }
            lx->i = save_i;
            lx->n = save_n;
        }
        free(hd->delim);
    }
}

/* A redirection operator at lx->i: a here-document's delimiter is read
 * and queued (its body comes after the line), any other operator goes to
 * the walker, which checks the file a "<" reads.  lit is scratch. */
static void lex_redirect(lexer *lx, UT_string *lit)
{
    const char *s = lx->s;
    const char *p = s + lx->i;
    size_t left = lx->n - lx->i;
    bool here = left >= 2 && p[0] == '<' && p[1] == '<' && !(left >= 3 && p[2] == '<');
    bool strip = here && left >= 3 && p[2] == '-';
    size_t k = 1;
    if (left >= 2 && strchr("<>&|", p[1])) k = 2;
    if (left >= 3 && p[0] == '<' && p[1] == '<' && (p[2] == '<' || p[2] == '-')) k = 3;
    lx->i += k;
    if (here) {
        while (lx->i < lx->n && (s[lx->i] == ' ' || s[lx->i] == '\t')) lx->i++;
        utstring_clear(lit);
        bool dyn, quoted;
        if (!read_word(lx, lit, &dyn, &quoted)) {
            lx->failed = true;
            return;
        }
        if (lx->nhd < 16) {
            heredoc *hd = &lx->hd[lx->nhd++];
            hd->delim = kg_dx_strdup(utstring_body(lit));
            hd->quoted = quoted;
            hd->strip = strip;
        }
        return;
    }
    /* "<" and "<>" read the file; "<&", "<<<" and the rest do not
     * name one to read. */
    bool reads = p[0] == '<' && (k == 1 || (k == 2 && p[1] == '>'));
    walker_op(lx->w, reads ? OP_REDIR_IN : OP_REDIR);
}

/* Blanks, a line continuation, a comment or a newline (which ends a
 * command and starts the here-documents' bodies) at lx->i: consumed, and
 * true. */
static bool lex_blank(lexer *lx, char ch)
{
    const char *s = lx->s;
    if (ch == ' ' || ch == '\t' || ch == '\r') {
        lx->i++;
        return true;
    }
    if (ch == '\\' && lx->i + 1 < lx->n && s[lx->i + 1] == '\n') {
        lx->i += 2;
        return true;
    }
    if (ch == '#') {
        while (lx->i < lx->n && s[lx->i] != '\n') lx->i++;
        return true;
    }
    if (ch == '\n') {
        lx->i++;
        walker_op(lx->w, OP_SEQ);
        heredoc_bodies(lx);
        return true;
    }
    return false;
}

static int lex_list(lexer *lx, bool stop_at_paren)
{
    const char *s = lx->s;
    int depth = 0;
    UT_string *lit;
    utstring_new(lit);
    while (lx->i < lx->n && !lx->failed && !lx->w->result) {
        char ch = s[lx->i];
        if (lex_blank(lx, ch)) continue;
        const char *p = s + lx->i;
        size_t left = lx->n - lx->i;
        if (left >= 2 && (p[0] == '<' || p[0] == '>') && p[1] == '(') { /* <( ) */
            lx->i += 2;
            nested_paren(lx);
            walker_word(lx->w, "<(..)", true, false);
            continue;
        }
        if (ch == ';') {
            if (left >= 2 && (p[1] == ';' || p[1] == '&')) {
                lx->i += (left >= 3 && p[1] == ';' && p[2] == '&') ? 3 : 2;
                walker_op(lx->w, OP_CASE_END);
            } else {
                lx->i++;
                walker_op(lx->w, OP_SEQ);
            }
            continue;
        }
        if (ch == '&') {
            if (left >= 2 && p[1] == '>') {
                lx->i += (left >= 3 && p[2] == '>') ? 3 : 2;
                walker_op(lx->w, OP_REDIR);
                continue;
            }
            lx->i += (left >= 2 && p[1] == '&') ? 2 : 1;
            walker_op(lx->w, OP_SEQ);
            continue;
        }
        if (ch == '|') {
            lx->i += (left >= 2 && (p[1] == '|' || p[1] == '&')) ? 2 : 1;
            walker_op(lx->w, OP_PIPE);
            continue;
        }
        if (ch == '(') {
            bool in_for = lx->w->st == ST_FOR; /* for (( ; ; )) */
            if (left >= 2 && p[1] == '(' &&
                ((lx->w->st == ST_CMD && kg_strv_len(lx->w->words) == 0) || in_for)) {
                lx->i += 2; /* (( arithmetic )) */
                if (!skip_balanced(lx, '(', ')')) {
                    lx->failed = true;
                    break;
                }
                if (lx->i < lx->n && s[lx->i] == ')') lx->i++;
                if (!in_for) lx->w->st = ST_SKIP;
                continue;
            }
            lx->i++;
            if (lx->w->st != ST_CASE_PAT) depth++;
            walker_op(lx->w, OP_OPEN);
            continue;
        }
        if (ch == ')') {
            lx->i++;
            if (lx->w->st == ST_CASE_PAT) {
                walker_op(lx->w, OP_CLOSE);
                continue;
            }
            if (depth == 0 && stop_at_paren) {
                utstring_free(lit);
                return 0;
            }
            if (depth > 0) depth--;
            walker_op(lx->w, OP_CLOSE);
            continue;
        }
        if (ch == '<' || ch == '>') {
            lex_redirect(lx, lit);
            continue;
        }
        utstring_clear(lit);
        bool dyn, quoted;
        if (!read_word(lx, lit, &dyn, &quoted)) {
            lx->failed = true;
            break;
        }
        /* "2>" and "{fd}>": the number belongs to the redirection. */
        if (lx->i < lx->n && (s[lx->i] == '<' || s[lx->i] == '>') && !quoted && !dyn) {
            const char *b = utstring_body(lit);
            size_t l = utstring_len(lit), j = 0;
            while (j < l && b[j] >= '0' && b[j] <= '9') j++;
            if (j == l || (b[0] == '{' && b[l - 1] == '}')) continue;
        }
        walker_word(lx->w, utstring_body(lit), dyn, quoted);
    }
    utstring_free(lit);
    if (stop_at_paren && !lx->w->result) lx->failed = true; /* no closing ) */
    return 0;
}

/* When the string cannot be parsed, every word in it is treated as a
 * possible command name: fail towards blocking, not towards running. */
static int check_all_words(const kg_dx_visitor *vis, chk *c, const char *s, size_t len, scope sc,
                           const char *where)
{
    char *buf = strndup(s, len);
    if (!buf) kg_oom();
    int r = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, " \t\r\n;&|<>()`$\"'{}\\", &save); t && !r;
         t = strtok_r(NULL, " \t\r\n;&|<>()`$\"'{}\\", &save)) {
        char wh[PATH_MAX + 64];
        snprintf(wh, sizeof wh, "%s, which could not be parsed", where);
        r = vis->name(c, t, sc, wh);
    }
    free(buf);
    return r;
}

int kg_dx_check_string(const kg_dx_visitor *vis, chk *c, const char *s, size_t len, scope sc,
                       const char *where, char **pos, size_t npos)
{
    if (!vis->enter(c)) return vis->block(c, NULL, where, "commands nested too deeply to check");
    walker w = {.vis = vis,
                .c = c,
                .sc = sc,
                .where = where,
                .pos = pos,
                .npos = npos,
                .stdin_args = vis->take_stdin_args(c),
                .st = ST_CMD};
    w.words = kg_strv_new();
    utarray_new(w.dyn, &ut_int_icd);
    w.vars = kg_strv_new();
    lexer lx = {.w = &w, .s = s, .n = len};
    lex_list(&lx, false);
    if (!lx.failed) walker_flush(&w);
    for (int h = 0; h < lx.nhd; h++) free(lx.hd[h].delim);
    int r = w.result;
    if (r == 0 && lx.failed) r = check_all_words(vis, c, s, len, sc, where);
    kg_strv_free(w.words);
    utarray_free(w.dyn);
    kg_strv_free(w.vars);
    free(w.path_own);
    free(w.cwd_own);
    free(w.for_var);
    kg_strv_free(w.pos_own);
    free(w.pos_vec);
    vis->leave(c);
    return r;
}
