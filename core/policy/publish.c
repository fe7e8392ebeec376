/* publish.c: the --publish specs, checked before anything starts.  The
 * rule the whole feature rests on is here: the host side of a published
 * port is a loopback address, so nothing but this machine can connect. */
#include "publish.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"

/* 1..65535 written in decimal digits only (no sign, no space, no 0x, no
 * leading zero: as allow_hosts ports). */
static int port_of(const char *s, size_t len, uint16_t *out)
{
    if (len == 0 || len > 5 || (len > 1 && s[0] == '0')) return -1;
    unsigned v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (v == 0 || v > 65535) return -1;
    *out = (uint16_t)v;
    return 0;
}

static int addr_of(const char *s, size_t len, char out[16], const char **why)
{
    char a[64];
    if (len == 0) {
        *why = "the address is empty (leave it out for " KG_PUBLISH_DEFAULT_ADDR ")";
        return -1;
    }
    if (len >= sizeof a) {
        *why = "the address is too long";
        return -1;
    }
    memcpy(a, s, len);
    a[len] = '\0';
    struct in_addr in;
    if (inet_pton(AF_INET, a, &in) != 1) {
        /* A name could resolve anywhere, and differently tomorrow. */
        *why = strspn(a, "0123456789.") == len ? "the address is not a dotted IPv4 address"
                                               : "the address must be a numeric IPv4 loopback "
                                                 "address such as " KG_PUBLISH_DEFAULT_ADDR
                                                 ", not a name";
        return -1;
    }
    if ((ntohl(in.s_addr) >> 24) != 127) {
        *why = "kgate publishes only on the host's loopback (127.0.0.0/8), so that "
               "no other machine can connect";
        return -1;
    }
    if (!inet_ntop(AF_INET, &in, out, 16)) {
        *why = "the address cannot be written back";
        return -1;
    }
    return 0;
}

int kg_publish_parse(const char *spec, kgate_publish *out, kg_error *err)
{
    char q[64];
    kg_msg_quote(q, sizeof q, spec, strlen(spec));
    memset(out, 0, sizeof *out);
    const char *c1 = strchr(spec, ':');
    const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c1 || (c2 && strchr(c2 + 1, ':')))
        return kg_err_set(err, EINVAL,
                          "--publish '%s': expected [ADDR:]HOSTPORT:PORT, for example "
                          "8080:80 or " KG_PUBLISH_DEFAULT_ADDR ":8080:80 (IPv4 only)",
                          q);
    const char *why = NULL;
    const char *hp = spec, *gp = c1 + 1;
    if (c2) {
        if (addr_of(spec, (size_t)(c1 - spec), out->host_addr, &why) < 0)
            return kg_err_set(err, EINVAL, "--publish '%s': %s", q, why);
        hp = c1 + 1;
        gp = c2 + 1;
    } else {
        memcpy(out->host_addr, KG_PUBLISH_DEFAULT_ADDR, sizeof KG_PUBLISH_DEFAULT_ADDR);
    }
    size_t hlen = (size_t)((c2 ? c2 : c1) - hp);
    if (port_of(hp, hlen, &out->host_port) < 0)
        return kg_err_set(err, EINVAL,
                          "--publish '%s': the host port must be a number "
                          "from 1 to 65535 (no leading zero)",
                          q);
    if (port_of(gp, strlen(gp), &out->port) < 0)
        return kg_err_set(err, EINVAL,
                          "--publish '%s': the port inside the box must be a "
                          "number from 1 to 65535 (no leading zero)",
                          q);
    return 0;
}

int kg_publish_list(const kg_strv *specs, kgate_publish **out, size_t *n, kg_strv *canon,
                    kg_error *err)
{
    size_t len = kg_strv_len(specs);
    *out = NULL;
    *n = 0;
    if (len == 0) return 0;
    kgate_publish *v = calloc(len, sizeof *v);
    if (!v) return kg_err_set(err, ENOMEM, "out of memory");
    for (size_t i = 0; i < len; i++) {
        if (kg_publish_parse(kg_strv_get(specs, i), &v[i], err) < 0) goto fail;
        for (size_t k = 0; k < i; k++) {
            if (v[k].host_port == v[i].host_port && strcmp(v[k].host_addr, v[i].host_addr) == 0) {
                kg_err_set(err, EINVAL,
                           "--publish: %s:%u is given twice: one port of the "
                           "host can be published once",
                           v[i].host_addr, (unsigned)v[i].host_port);
                goto fail;
            }
        }
    }
    for (size_t i = 0; i < len; i++) {
        char c[40];
        snprintf(c, sizeof c, "%s:%u:%u", v[i].host_addr, (unsigned)v[i].host_port,
                 (unsigned)v[i].port);
        kg_strv_push(canon, c);
    }
    *out = v;
    *n = len;
    return 0;
fail:
    free(v);
    return -1;
}
