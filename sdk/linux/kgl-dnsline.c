/* kgl-dnsline.c: dnsmasq configuration lines shared by many names, for
 * both resolvers that kgate starts (the Landlock box's and the slirp
 * stage's).  Why lines are shared and how long one may be: kgate-linux.h. */
#include "kgate/kgate-linux.h"

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
    l->len += (size_t)snprintf(l->line + l->len, sizeof l->line - l->len, "/%s%s", pfx, name);
}
