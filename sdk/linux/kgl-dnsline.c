/* kgl-dnsline.c: dnsmasq configuration lines shared by many names, and
 * the forwarding rule, for both resolvers that kgate starts (the Landlock
 * box's and the slirp stage's).  Why lines are shared and how long one
 * may be: kgate-linux.h. */
#include "kgate/kgate-linux.h"

#include <stdlib.h>
#include <string.h>

int kgl_dns_line_end(kgl_dns_line *l)
{
    if (l->len) fprintf(l->out, "%s/%s\n", l->line, l->tail);
    l->len = 0;
    return l->too_long ? -1 : 0;
}

void kgl_dns_line_add(kgl_dns_line *l, const char *pfx, const char *name, const char *tail)
{
    size_t add = 1 + strlen(pfx) + strlen(name), end = 1 + strlen(tail) + 1;
    if (l->len && (strcmp(l->tail, tail) != 0 || l->len + add + end > KGL_DNS_LINE_MAX))
        (void)kgl_dns_line_end(l);
    if (!l->len) {
        if (strlen(l->key) + add + end > KGL_DNS_LINE_MAX) {
            l->too_long = 1;
            return;
        }
        l->len = (size_t)snprintf(l->line, sizeof l->line, "%s", l->key);
        snprintf(l->tail, sizeof l->tail, "%s", tail);
    }
    /* Copied, not printed: three lines of this a name made snprintf a
     * tenth of a 10,000-name launch.  The bound is checked above (add). */
    size_t lp = strlen(pfx), ln = strlen(name);
    l->line[l->len++] = '/';
    memcpy(l->line + l->len, pfx, lp);
    memcpy(l->line + l->len + lp, name, ln);
    l->len += lp + ln;
    l->line[l->len] = '\0';
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* 1 when a wildcard at or above name lets the names under name through.
 * wild: the wildcards' names, sorted (a search each: 10,000 entries cost
 * n log n, not n squared). */
static int covered(const char *const *wild, size_t n_wild, const char *name)
{
    for (const char *up = name; up; up = strchr(up, '.')) {
        if (*up == '.') up++;
        if (n_wild && bsearch(&up, wild, n_wild, sizeof *wild, cmp_str)) return 1;
    }
    return 0;
}

int kgl_dns_forward(FILE *out, const kgl_dns_name *v, size_t n, const char *upstream)
{
    const char **wild = malloc((n ? n : 1) * sizeof *wild);
    if (!wild) return -1;
    size_t n_wild = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i].wildcard) wild[n_wild++] = v[i].name;
    qsort(wild, n_wild, sizeof *wild, cmp_str);
    kgl_dns_line srv = KGL_DNS_LINE(out, "server="), loc = KGL_DNS_LINE(out, "local=");
    for (size_t i = 0; i < n; i++) {
        kgl_dns_line_add(&srv, v[i].wildcard ? "*." : "", v[i].name, upstream);
        if (!v[i].wildcard && !covered(wild, n_wild, v[i].name))
            kgl_dns_line_add(&loc, "*.", v[i].name, "");
    }
    free(wild);
    int a = kgl_dns_line_end(&srv), b = kgl_dns_line_end(&loc);
    return a < 0 || b < 0 ? -1 : 0;
}
