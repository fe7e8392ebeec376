/* termfilter.c: dropping the control sequences that make a terminal
 * answer, or that reach its clipboard, from a pty program's output.
 *
 * A small VT parser (ECMA-48 states, the way terminals read their input):
 * text passes as it comes; a CSI or an ESC sequence is collected whole and
 * then passed or dropped by its final byte, private marker and
 * intermediates; an OSC, DCS, SOS, PM or APC string is judged by its start
 * (the OSC number, the DCS intermediates and final) and then passed or
 * dropped as it streams, so a megabyte of sixel or of clipboard payload is
 * never held.  C0 controls inside a CSI are executed by terminals and so
 * passed in place; CAN and SUB abort a sequence.  UTF-8 encoded C1 controls
 * (C2 9B is CSI to a terminal in UTF-8 mode) are read as their 7-bit forms
 * and written that way when they pass.
 *
 * Why an allow list for strings and a deny list for CSI: CSI sequences that
 * answer are a short, known list, while new OSC/DCS/APC protocols appear all
 * the time (and several of them answer).  Unknown strings are dropped. */
#include "termfilter.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define ESC 0x1b
#define BEL 0x07
/* A CSI longer than this is not a sequence any program needs: dropped. */
#define SEQ_MAX 256
/* How much of a string is collected to judge it. */
#define STR_HEAD 64

enum state {
    GROUND,
    C2, /* saw 0xC2: a UTF-8 encoded C1 control may follow */
    ESCAPE, /* saw ESC */
    ESC_INT, /* ESC and intermediates */
    CSI, /* collecting a CSI */
    STR, /* inside an OSC/DCS/SOS/PM/APC string */
    STR_ESC, /* ESC inside a string: ST (ESC \) or a new sequence */
};

enum verdict { UNDECIDED, PASS, DROP };

struct kg_termfilter {
    kg_termfilter_sink sink;
    void *ctx;
    enum state st;
    char kind; /* the string's introducer: ']' 'P' 'X' '^' '_' */
    enum verdict str_verdict;
    bool seq_long; /* the CSI outgrew seq: dropped */
    unsigned char seq[SEQ_MAX];
    size_t seq_len;
    unsigned char head[STR_HEAD]; /* the start of a string, undecided */
    size_t head_len;
    size_t dropped;
};

kg_termfilter *kg_termfilter_new(kg_termfilter_sink sink, void *ctx)
{
    kg_termfilter *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->sink = sink;
    f->ctx = ctx;
    return f;
}

void kg_termfilter_free(kg_termfilter *f) { free(f); }

size_t kg_termfilter_dropped(const kg_termfilter *f) { return f ? f->dropped : 0; }

static int out(kg_termfilter *f, const void *p, size_t n)
{
    if (n == 0) return 0;
    return f->sink(f->ctx, p, n) < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------------ */
/* Judging                                                                   */
/* ------------------------------------------------------------------------ */

/* A whole CSI: ESC [ then seq[2..n), the last byte its final. */
static bool csi_answers(const unsigned char *s, size_t n)
{
    unsigned char fin = s[n - 1];
    unsigned char priv = n > 3 && s[2] >= 0x3c && s[2] <= 0x3f ? s[2] : 0;
    unsigned char inter = 0;
    for (size_t i = 2; i + 1 < n; i++)
        if (s[i] >= 0x20 && s[i] <= 0x2f) inter = s[i];
    switch (fin) {
    case 'c': return true; /* DA1, DA2 (>), DA3 (=) */
    case 'n': return true; /* DSR: status, cursor position, ... */
    case 't': return true; /* XTWINOPS: reports, and moving the user's window */
    case 'x': return inter == 0; /* DECREQTPARM */
    case 'p': return inter == '$'; /* DECRQM */
    case 'q': return priv == '>'; /* XTVERSION (SP q, the cursor style, passes) */
    case 'u': return priv == '?' || inter == '$'; /* kitty keyboard query, DECRQTSR */
    case 'm': return priv == '?'; /* XTQMODKEYS */
    case 'S': return priv == '?'; /* XTSMGRAPHICS */
    case '|': return inter == '#' || inter == '\''; /* XTREPORTSGR, DECRQLP */
    case 'y': return inter == '*'; /* DECRQCRA */
    case 'w': return inter == '$'; /* DECRQPSR */
    case 'v': return inter == '"'; /* DECRQDE */
    default: return false;
    }
}

/* A whole ESC sequence other than CSI: ESC, intermediates, final. */
static bool esc_answers(const unsigned char *s, size_t n)
{
    /* DECID is DA1 by another name; a stray ST ends nothing, and after a
     * dropped string it would only be its leftover. */
    return n == 2 && (s[1] == 'Z' || s[1] == '\\');
}

/* Whether a parameter of the string is exactly "?" (a query). */
static bool has_query(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == '?' && (i == 0 || s[i - 1] == ';') && (i + 1 == n || s[i + 1] == ';'))
            return true;
    return false;
}

/* The verdict on a string from its start (head, head_len bytes after the
 * introducer); complete when the terminator has been seen. */
static enum verdict str_judge(const kg_termfilter *f, bool complete)
{
    const unsigned char *h = f->head;
    size_t n = f->head_len;
    if (f->kind == ']') {
        size_t i = 0;
        unsigned num = 0;
        while (i < n && h[i] >= '0' && h[i] <= '9' && num < 100000) num = num * 10 + (h[i++] - '0');
        if (i == n && !complete) return UNDECIDED;
        if (i == 0 || (i < n && h[i] != ';')) return DROP;
        switch (num) {
        case 0:
        case 1:
        case 2: /* titles: a title report (CSI 21 t) is dropped */
        case 7: /* the working directory */
        case 8: /* hyperlinks */
        case 133:
        case 633: /* shell integration marks */ return PASS;
        case 4:
        case 5:
        case 10:
        case 11:
        case 12:
        case 13:
        case 14:
        case 15:
        case 16:
        case 17:
        case 18:
        case 19:
        case 104:
        case 105:
        case 110:
        case 111:
        case 112:
        case 113:
        case 114:
        case 115:
        case 116:
        case 117:
        case 118:
        case 119:
            /* Colours: setting passes, a "?" asks for a report. */
            if (i < n && has_query(h + i + 1, n - i - 1)) return DROP;
            if (!complete) return n == STR_HEAD ? DROP : UNDECIDED;
            return PASS;
        default: /* 52 (clipboard), 50 (font query), 1337, unknown */ return DROP;
        }
    }
    if (f->kind == 'P') {
        /* Sixel (parameters, then q) passes; DECRQSS ($ q), XTGETTCAP (+ q),
         * DECUDK (|: programs the user's keys), tmux passthrough and
         * anything else are dropped. */
        for (size_t i = 0; i < n; i++) {
            if ((h[i] >= '0' && h[i] <= '9') || h[i] == ';') continue;
            return h[i] == 'q' ? PASS : DROP;
        }
        return complete ? DROP : UNDECIDED;
    }
    return DROP; /* SOS, PM, APC (kitty graphics answers) */
}

/* ------------------------------------------------------------------------ */
/* Streaming                                                                 */
/* ------------------------------------------------------------------------ */

static void start_seq(kg_termfilter *f, unsigned char second)
{
    f->seq[0] = ESC;
    f->seq[1] = second;
    f->seq_len = 2;
    f->seq_long = false;
}

static int start_string(kg_termfilter *f, char kind)
{
    f->st = STR;
    f->kind = kind;
    f->head_len = 0;
    f->str_verdict = UNDECIDED;
    return 0;
}

/* The string's verdict became known: write what was held if it passes. */
static int str_decided(kg_termfilter *f, enum verdict v)
{
    f->str_verdict = v;
    if (v == DROP) {
        f->dropped++;
        return 0;
    }
    unsigned char intro[2] = {ESC, (unsigned char)f->kind};
    return out(f, intro, 2) < 0 || out(f, f->head, f->head_len) < 0 ? -1 : 0;
}

/* The string ended (by BEL when bel, else by ST). */
static int str_end(kg_termfilter *f, bool bel)
{
    int r = 0;
    if (f->str_verdict == UNDECIDED) r = str_decided(f, str_judge(f, true));
    if (r == 0 && f->str_verdict == PASS) r = bel ? out(f, "\a", 1) : out(f, "\x1b\\", 2);
    f->st = GROUND;
    return r;
}

/* A byte of the string's body. */
static int str_byte(kg_termfilter *f, unsigned char c)
{
    if (f->str_verdict == PASS) return out(f, &c, 1);
    if (f->str_verdict == DROP) return 0;
    f->head[f->head_len++] = c;
    enum verdict v = str_judge(f, false);
    if (v == UNDECIDED && f->head_len == STR_HEAD) v = DROP;
    return v == UNDECIDED ? 0 : str_decided(f, v);
}

/* Passes or drops the collected CSI or ESC sequence. */
static int seq_done(kg_termfilter *f, bool csi)
{
    f->st = GROUND;
    bool drop =
        f->seq_long || (csi ? csi_answers(f->seq, f->seq_len) : esc_answers(f->seq, f->seq_len));
    if (drop) {
        f->dropped++;
        return 0;
    }
    return out(f, f->seq, f->seq_len);
}

/* ESC (or its C1 form) followed by c: what starts. */
static int after_esc(kg_termfilter *f, unsigned char c)
{
    switch (c) {
    case '[':
        start_seq(f, c);
        f->st = CSI;
        return 0;
    case ']':
    case 'P':
    case 'X':
    case '^':
    case '_': return start_string(f, (char)c);
    default: break;
    }
    start_seq(f, c);
    if (c >= 0x20 && c <= 0x2f) {
        f->st = ESC_INT;
        return 0;
    }
    if (c >= 0x30 && c <= 0x7e) return seq_done(f, false);
    /* Not a sequence: the ESC alone reaches the terminal, which ignores
     * it, and c is read again as text. */
    f->st = GROUND;
    return -2;
}

static int step(kg_termfilter *f, unsigned char c)
{
    for (;;) {
        switch (f->st) {
        case GROUND:
            if (c == ESC) {
                f->st = ESCAPE;
                return 0;
            }
            if (c == 0xc2) {
                f->st = C2;
                return 0;
            }
            if (c == 0x05) { /* ENQ: some terminals answer with a string */
                f->dropped++;
                return 0;
            }
            return out(f, &c, 1);
        case C2:
            f->st = GROUND;
            if (c >= 0x80 && c <= 0x9f) {
                if (c == 0x9c) return 0; /* a stray ST: nothing to end */
                f->st = ESCAPE;
                c = (unsigned char)(c - 0x40);
                continue;
            }
            if (out(f, "\xc2", 1) < 0) return -1;
            continue;
        case ESCAPE: {
            if (c == 0x18 || c == 0x1a) { /* CAN, SUB: abort */
                f->st = GROUND;
                return 0;
            }
            if (c < 0x20 && c != ESC) return out(f, &c, 1); /* executed, ESC stays open */
            if (c == ESC) return 0;
            int r = after_esc(f, c);
            if (r != -2) return r;
            if (out(f, "\x1b", 1) < 0) return -1;
            continue;
        }
        case ESC_INT:
        case CSI: {
            bool csi = f->st == CSI;
            if (c == 0x18 || c == 0x1a) {
                f->st = GROUND;
                f->dropped++;
                return 0;
            }
            if (c == ESC) { /* a new sequence: this one is dropped */
                f->dropped++;
                f->st = ESCAPE;
                return 0;
            }
            if (c < 0x20) return out(f, &c, 1); /* executed in place */
            if (f->seq_len < SEQ_MAX)
                f->seq[f->seq_len++] = c;
            else
                f->seq_long = true;
            bool fin = csi ? (c >= 0x40 && c <= 0x7e) : (c >= 0x30 && c <= 0x7e);
            bool mid = csi ? (c >= 0x20 && c <= 0x3f) : (c >= 0x20 && c <= 0x2f);
            if (fin) {
                if (f->seq_long) f->seq_len = SEQ_MAX;
                return seq_done(f, csi);
            }
            if (mid) return 0;
            /* A byte no sequence takes (DEL, 8-bit): terminals abort. */
            f->st = GROUND;
            f->dropped++;
            return 0;
        }
        case STR:
            if (c == BEL && f->kind == ']') return str_end(f, true);
            if (c == ESC) {
                f->st = STR_ESC;
                return 0;
            }
            if (c == 0x18 || c == 0x1a) {
                if (f->str_verdict == UNDECIDED) f->dropped++;
                /* A passed string must still end, or the terminal would
                 * read what follows as its body. */
                f->st = GROUND;
                return f->str_verdict == PASS ? out(f, &c, 1) : 0;
            }
            return str_byte(f, c);
        case STR_ESC:
            if (c == '\\') return str_end(f, false);
            /* Any other ESC ends the string (terminals do the same) and
             * starts a sequence of its own. */
            if (f->str_verdict == UNDECIDED) {
                if (str_decided(f, str_judge(f, true)) < 0) return -1;
            }
            if (f->str_verdict == PASS && out(f, "\x1b\\", 2) < 0) return -1;
            f->st = ESCAPE;
            continue;
        }
        return 0;
    }
}

int kg_termfilter_feed(kg_termfilter *f, const char *buf, size_t len)
{
    const unsigned char *p = (const unsigned char *)buf;
    size_t i = 0;
    while (i < len) {
        if (f->st == GROUND || (f->st == STR && f->str_verdict != UNDECIDED)) {
            /* The common case: a run of plain text (or of a decided
             * string's body) goes out in one piece. */
            size_t j = i;
            if (f->st == GROUND)
                while (j < len && p[j] != ESC && p[j] != 0xc2 && p[j] != 0x05) j++;
            else
                while (j < len && p[j] != ESC && p[j] != BEL && p[j] != 0x18 && p[j] != 0x1a) j++;
            if (j > i) {
                if (!(f->st == STR && f->str_verdict == DROP) && out(f, p + i, j - i) < 0)
                    return -1;
                i = j;
                continue;
            }
        }
        if (step(f, p[i]) < 0) return -1;
        i++;
    }
    return 0;
}

int kg_termfilter_flush(kg_termfilter *f)
{
    int r = 0;
    if (f->st == C2)
        r = out(f, "\xc2", 1);
    else if (f->st == STR && f->str_verdict == PASS)
        r = out(f, "\x1b\\", 2);
    else if (f->st != GROUND)
        f->dropped++;
    f->st = GROUND;
    return r;
}
