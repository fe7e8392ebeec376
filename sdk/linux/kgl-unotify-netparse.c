/* kgl-unotify-netparse.c: the texts and messages the network side of the
 * supervisor reads: resolv.conf and a hosts file at launch (kgate's
 * process), and the filtering resolver's answers while the program runs
 * (the supervisor).  DNS messages are read with libresolv's ns_initparse
 * and ns_parserr only.  Pure, for tests/fuzz/fuzz-unotify-net.c;
 * whatever does not parse adds nothing (an address never allowed). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kgate/kgate-unotify.h"

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netinet/in.h>
#include <resolv.h>
#include <string.h>
#include <strings.h>

/* The next line of text[*at..len) into line (cut at '#', NUL ended, at
 * most size-1 bytes; a longer line is skipped whole); 0 at the end. */
static int next_line(const char *text, size_t len, size_t *at, char *line, size_t size)
{
    if (*at >= len) return 0;
    const char *s = text + *at;
    const char *nl = memchr(s, '\n', len - *at);
    size_t n = nl ? (size_t)(nl - s) : len - *at;
    *at += n + (nl ? 1 : 0);
    const char *hash = memchr(s, '#', n);
    if (hash) n = (size_t)(hash - s);
    if (n >= size || memchr(s, '\0', n)) n = 0;
    memcpy(line, s, n);
    line[n] = '\0';
    return 1;
}

/* Splits line in place into at most max words (blanks between). */
static int words(char *line, char **w, int max)
{
    int k = 0;
    for (char *p = line; *p && k < max;) {
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == ';') *p++ = '\0';
        if (!*p) break;
        w[k++] = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != ';') p++;
    }
    return k;
}

int kgl_un_parse_resolv(const char *text, size_t len, char *out, size_t outsz)
{
    char line[512], *w[3];
    size_t at = 0;
    while (next_line(text, len, &at, line, sizeof line)) {
        struct in_addr a;
        if (words(line, w, 3) >= 2 && strcmp(w[0], "nameserver") == 0 &&
            inet_pton(AF_INET, w[1], &a) == 1 && a.s_addr != 0 && strlen(w[1]) < outsz) {
            memcpy(out, w[1], strlen(w[1]) + 1);
            return 0;
        }
    }
    return -1;
}

int kgl_un_parse_hosts(const char *text, size_t len, const char *name,
                       void (*add)(void *ctx, uint32_t addr), void *ctx)
{
    char line[1024], *w[64];
    size_t at = 0;
    int found = 0;
    while (next_line(text, len, &at, line, sizeof line)) {
        int k = words(line, w, 64);
        struct in_addr a;
        if (k < 2 || inet_pton(AF_INET, w[0], &a) != 1) continue;
        for (int i = 1; i < k; i++) {
            size_t n = strlen(w[i]);
            if (n && w[i][n - 1] == '.') w[i][--n] = '\0';
            if (strcasecmp(w[i], name) == 0) {
                add(ctx, a.s_addr);
                found++;
                break;
            }
        }
    }
    return found;
}

int kgl_un_parse_answer(const unsigned char *msg, size_t len, char *qname, size_t qsz, int *rcode,
                        void (*add)(void *ctx, uint32_t addr, uint32_t ttl), void *ctx)
{
    ns_msg h;
    ns_rr rr;
    if (qsz) qname[0] = '\0';
    if (len > 65535 || ns_initparse(msg, (int)len, &h) < 0) return -1;
    *rcode = ns_msg_getflag(h, ns_f_rcode);
    /* One question, as every resolver asks: its name is the one the
     * answer's addresses are allowed for. */
    if (ns_msg_count(h, ns_s_qd) != 1 || ns_parserr(&h, ns_s_qd, 0, &rr) < 0) return -1;
    const char *qn = ns_rr_name(rr);
    if (strlen(qn) >= qsz) return -1;
    memcpy(qname, qn, strlen(qn) + 1);
    if (!add) return 0;
    int n = 0;
    for (int i = 0; i < ns_msg_count(h, ns_s_an); i++) {
        if (ns_parserr(&h, ns_s_an, i, &rr) < 0) return n;
        if (ns_rr_type(rr) != ns_t_a || ns_rr_class(rr) != ns_c_in || ns_rr_rdlen(rr) != 4)
            continue;
        uint32_t a;
        memcpy(&a, ns_rr_rdata(rr), 4);
        add(ctx, a, ns_rr_ttl(rr));
        n++;
    }
    return n;
}

int kgl_un_host_matches(const kgl_un_host *h, const char *name)
{
    size_t ln = strlen(name), lb = strlen(h->name);
    if (ln && name[ln - 1] == '.') ln--;
    if (!lb) return 0;
    if (!h->wildcard) return ln == lb && strncasecmp(name, h->name, ln) == 0;
    /* "*.name": below name at any depth, not name itself. */
    return ln > lb + 1 && name[ln - lb - 1] == '.' && strncasecmp(name + ln - lb, h->name, lb) == 0;
}
