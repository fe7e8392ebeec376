/* kgate-hostspec.c: parsing an allow_hosts entry (kgate-hostspec.h).
 * Pure: no allocation, no locale (isalpha and friends would follow
 * LC_CTYPE), no I/O. */
#include "kgate/kgate-hostspec.h"

#include <string.h>
#include <strings.h>

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* A dotted quad of exactly four parts 0..255, no leading zeros ("010" is
 * octal to some resolvers, decimal to others). */
static int ipv4_literal(const char *s, size_t len)
{
    size_t i = 0;
    int parts = 0;
    while (i < len) {
        size_t start = i;
        unsigned v = 0;
        while (i < len && is_digit(s[i])) {
            v = v * 10 + (unsigned)(s[i] - '0');
            if (i - start >= 3 || v > 255) return 0;
            i++;
        }
        size_t digits = i - start;
        if (digits == 0) return 0;
        if (digits > 1 && s[start] == '0') return 0;
        parts++;
        if (i < len) {
            if (s[i] != '.') return 0;
            i++;
            if (i == len) return 0;
        }
    }
    return parts == 4;
}

/* RFC 1123 over s[0..len); *labels gets the number of labels.  On failure
 * *why says what is wrong. */
static int name_valid(const char *s, size_t len, int *labels, const char **why)
{
    int n = 0, all_numeric = 1;
    size_t i = 0;
    while (i <= len) {
        size_t start = i;
        while (i < len && s[i] != '.') {
            char c = s[i];
            if (!is_alpha(c) && !is_digit(c) && c != '-') {
                *why = "not a host name (letters, digits, '-' and '.' only)";
                return 0;
            }
            if (!is_digit(c)) all_numeric = 0;
            i++;
        }
        size_t l = i - start;
        if (l == 0) {
            *why = i == len && len > 0 ? "host name ends with '.'" : "empty label in host name";
            return 0;
        }
        if (l > 63) {
            *why = "label longer than 63 characters";
            return 0;
        }
        if (s[start] == '-' || s[i - 1] == '-') {
            *why = "label starts or ends with '-'";
            return 0;
        }
        n++;
        i++; /* past the '.', or past the end */
    }
    if (all_numeric) {
        *why = "digits and dots only, but not an IPv4 address a.b.c.d";
        return 0;
    }
    *labels = n;
    return 1;
}

/* Printable ASCII without spaces: 1, or 0 with why. */
static int chars_valid(const char *entry, size_t len, const char **why)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)entry[i];
        if (c < 0x20 || c == 0x7f) {
            *why = "control character in entry";
            return 0;
        }
        if (c >= 0x80) {
            *why = "non-ASCII character (write the name in its xn-- form)";
            return 0;
        }
        if (c == ' ') {
            *why = "white space in entry";
            return 0;
        }
    }
    return 1;
}

/* The port after the entry's one ':' (colon): 1 with *port set to
 * 1..65535, or 0 with why.  Two colons are an IPv6 address or a typo;
 * neither is something this list can hold. */
static int port_valid(const char *entry, const char *colon, unsigned *port, const char **why)
{
    if (strchr(colon + 1, ':') || entry[0] == '[') {
        *why = "IPv6 addresses are not supported (IPv4 addresses and names only)";
        return 0;
    }
    const char *p = colon + 1;
    if (!*p) {
        *why = "empty port after ':'";
        return 0;
    }
    if (*p == '+' || *p == '-') {
        *why = "port with a sign (write 1..65535)";
        return 0;
    }
    if (*p == '0') {
        *why = is_digit(p[1]) ? "port with a leading zero"
                              : "port 0 (omit the port to allow every port)";
        return 0;
    }
    unsigned v = 0;
    for (const char *q = p; *q; q++) {
        if (!is_digit(*q)) {
            *why = "port is not a number 1..65535";
            return 0;
        }
        if (q - p >= 5) {
            *why = "port above 65535";
            return 0;
        }
        v = v * 10 + (unsigned)(*q - '0');
    }
    if (v > 65535) {
        *why = "port above 65535";
        return 0;
    }
    *port = v;
    return 1;
}

int kgate_hostspec_parse(const char *entry, kgate_hostspec *out, const char **why)
{
    const char *dummy;
    if (!why) why = &dummy;
    if (!entry || !out) {
        *why = "no entry";
        return -1;
    }
    size_t len = strlen(entry);
    if (len == 0) {
        *why = "empty entry";
        return -1;
    }
    if (!chars_valid(entry, len, why)) return -1;

    if (strstr(entry, "://")) {
        *why = "a URL, not a host entry (write the host name alone)";
        return -1;
    }

    /* The port: after the one ':' (port_valid). */
    const char *colon = strchr(entry, ':');
    size_t hlen = colon ? (size_t)(colon - entry) : len;
    unsigned port = 0;
    if (colon && !port_valid(entry, colon, &port, why)) return -1;

    const char *host = entry;
    int wildcard = 0;
    if (hlen == 1 && host[0] == '*') {
        *why = "\"*\" alone would allow every host (use network: open)";
        return -1;
    }
    if (hlen >= 2 && host[0] == '*' && host[1] == '.') {
        wildcard = 1;
        host += 2;
        hlen -= 2;
    }
    if (memchr(host, '*', hlen)) {
        *why = "'*' is allowed only as a leading \"*.\"";
        return -1;
    }
    if (hlen == 0) {
        *why = colon ? "no host before ':'" : "empty host name";
        return -1;
    }
    if (hlen > 253) {
        *why = "host name longer than 253 characters";
        return -1;
    }
    /* RFC 6761: localhost and every name under it are this machine; only
     * the one spelling with a port means something here. */
    if (hlen >= 9 && strncasecmp(host + hlen - 9, "localhost", 9) == 0 &&
        (hlen == 9 || host[hlen - 10] == '.')) {
        if (wildcard || hlen != 9) {
            *why = "names under localhost are the machine itself: write localhost:PORT";
            return -1;
        }
        if (!port) {
            *why = "localhost needs a port: localhost:PORT reaches that TCP port of the "
                   "host's loopback, and no more";
            return -1;
        }
    }

    int labels = 0;
    if (ipv4_literal(host, hlen)) {
        if (wildcard) {
            *why = "a wildcard over an IPv4 address";
            return -1;
        }
    } else if (!name_valid(host, hlen, &labels, why)) {
        return -1;
    } else if (wildcard && labels < 2) {
        *why = "a wildcard over a whole top-level domain (\"*.com\")";
        return -1;
    }

    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < hlen; i++) {
        char c = host[i];
        out->name[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    out->name[hlen] = '\0';
    out->wildcard = wildcard;
    out->port = port;
    out->host_loopback = strcmp(out->name, "localhost") == 0;
    return 0;
}
