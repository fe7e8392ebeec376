/* auditverify.c: `kgate audit verify`, the check of the audit chain.
 *
 * Each record ends with ,"prev":"<SHA-256 of the record before it>"}.
 * Reading the files in order, a record follows when its prev is the hash
 * of the exact bytes of the record read before it.  What is caught:
 *   - a changed record: its successor's prev no longer matches;
 *   - a removed record, a moved one, two records swapped: the first record
 *     after the gap names a hash that is not its predecessor's;
 *   - a cut inside a record: the last record has no newline;
 *   - records cut from the end, or the whole file emptied: the last record
 *     is not the one LOG.head names (audit.c keeps it).
 * Records before the first chained one (written by a kgate from before the
 * chain) are counted and reported, never vouched for; an unchained record
 * after a chained one is a break.  The first record of the first file may
 * name any predecessor (the last record of a rotated file): the report
 * says which, and `kgate audit verify LOG.1 LOG` checks the link. */
#include "audit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PREV_KEY ",\"prev\":\""
#define PREV_KEY_LEN (sizeof PREV_KEY - 1)
#define HASH_LEN (KG_AUDIT_HASH_HEX - 1)

/* The prev a record names, or NULL when it carries none. */
static const char *prev_of(const char *line, size_t len)
{
    size_t suffix = PREV_KEY_LEN + HASH_LEN + 2;
    if (len < suffix || memcmp(line + len - 2, "\"}", 2) != 0) return NULL;
    const char *p = line + len - suffix;
    if (memcmp(p, PREV_KEY, PREV_KEY_LEN) != 0) return NULL;
    p += PREV_KEY_LEN;
    for (size_t i = 0; i < HASH_LEN; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f'))) return NULL;
    return p;
}

typedef struct chain {
    char last[KG_AUDIT_HASH_HEX]; /* hash of the record read last */
    bool have_last;
    bool chained; /* a chained record was seen */
    char first_prev[KG_AUDIT_HASH_HEX];
    size_t records, unchained;
    const char *last_file;
    size_t last_no; /* its number in last_file */
    bool follows_rotated; /* the first names the last of FILE.1 */
} chain;

/* One record: 0 when it follows, 1 with out set when not. */
static int check_record(chain *c, const char *file, size_t no, const char *line, size_t len,
                        UT_string *out)
{
    bool nl = len > 0 && line[len - 1] == '\n';
    size_t body = nl ? len - 1 : len;
    if (!nl) {
        utstring_printf(out, "%s: record %zu is incomplete: the file was cut inside it", file, no);
        return 1;
    }
    const char *p = prev_of(line, body);
    if (!p && c->chained) {
        utstring_printf(out, "%s: record %zu carries no chain: it was inserted or changed", file,
                        no);
        return 1;
    }
    if (!p) {
        c->unchained++;
    } else if (c->have_last && memcmp(p, c->last, HASH_LEN) != 0) {
        utstring_printf(out,
                        "%s: record %zu does not follow the record before it "
                        "(%s record %zu): a record was removed, inserted, changed or "
                        "moved there",
                        file, no, c->last_file, c->last_no);
        return 1;
    } else if (!c->have_last) {
        memcpy(c->first_prev, p, HASH_LEN);
    }
    if (p) c->chained = true;
    kg_audit_hash(line, len, c->last);
    c->have_last = true;
    c->last_file = file;
    c->last_no = no;
    return 0;
}

static int check_file(chain *c, const char *file, UT_string *out, kg_error *err)
{
    FILE *f = fopen(file, "re");
    if (!f) return kg_err_set(err, errno, "cannot read %s: %s", file, strerror(errno));
    char *line = NULL;
    size_t cap = 0, no = 0;
    ssize_t len;
    int r = 0;
    while (r == 0 && (len = getline(&line, &cap, f)) > 0) {
        c->records++;
        r = check_record(c, file, ++no, line, (size_t)len, out);
    }
    if (r == 0 && ferror(f)) r = kg_err_set(err, EIO, "cannot read %s", file);
    free(line);
    fclose(f);
    return r;
}

/* Whether the last record of file.1 hashes to hash. */
static bool rotated_tail_is(const char *file, const char *hash)
{
    char *old = NULL;
    if (asprintf(&old, "%s.1", file) < 0) kg_oom();
    int fd = open(old, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    free(old);
    if (fd < 0) return false;
    char hex[KG_AUDIT_HASH_HEX];
    bool same = kg_audit_tail_hash(fd, hex, NULL) == 1 && memcmp(hex, hash, HASH_LEN) == 0;
    close(fd);
    return same;
}

/* LOG.head names the last record written to LOG: the last file read must
 * end with it.  No head (a rotated file, a log from before the chain):
 * nothing to compare. */
static int check_head(const chain *c, const char *file, UT_string *out)
{
    char *hp = NULL;
    if (asprintf(&hp, "%s.head", file) < 0) kg_oom();
    FILE *f = fopen(hp, "re");
    free(hp);
    if (!f) return 0;
    char buf[KG_AUDIT_HASH_HEX + 1] = "";
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (n != KG_AUDIT_HASH_HEX || buf[HASH_LEN] != '\n') {
        utstring_printf(out, "%s.head is not a hash: it was changed", file);
        return 1;
    }
    if (c->have_last && memcmp(buf, c->last, HASH_LEN) == 0) return 0;
    if (!c->have_last || c->last_file != file) {
        /* Just rotated, no record since: the head names LOG.1's last. */
        if (rotated_tail_is(file, buf)) return 0;
        utstring_printf(out, "%s: no record, but %s.head names one: the file was emptied", file,
                        file);
    } else
        utstring_printf(out,
                        "%s: record %zu is not the last one written (%s.head names "
                        "another): records were cut from the end, or the last one was "
                        "changed",
                        file, c->last_no, file);
    return 1;
}

/* The first record of a log names either nothing (all zeros: the first
 * record there ever was) or the last record of the file the log was
 * rotated from, FILE.1.  Anything else means records were removed from
 * the start, or the file before it is elsewhere (compressed, older): then
 * the files are verified together. */
static int check_start(chain *c, const char *first, UT_string *out)
{
    static const char zeros[HASH_LEN + 1] =
        "0000000000000000000000000000000000000000000000000000000000000000";
    if (memcmp(c->first_prev, zeros, HASH_LEN) == 0) return 0;
    if (rotated_tail_is(first, c->first_prev)) {
        c->follows_rotated = true;
        return 0;
    }
    utstring_printf(out,
                    "%s: record 1 follows a record that is not there (%.12s...): "
                    "records were removed from the start, or the file it was rotated "
                    "from is elsewhere (then: kgate audit verify OLDER... %s)",
                    first, c->first_prev, first);
    return 1;
}

int kg_audit_verify(const char *const *files, size_t n, size_t *records, UT_string *out,
                    kg_error *err)
{
    chain c = {0};
    int r = 0;
    for (size_t i = 0; i < n && r == 0; i++) r = check_file(&c, files[i], out, err);
    if (r == 0 && n > 0) r = check_head(&c, files[n - 1], out);
    *records = c.records;
    if (r == 0 && c.chained && c.unchained == 0) r = check_start(&c, files[0], out);
    if (r != 0) return r;
    utstring_printf(out, "intact, %zu record%s", c.records, c.records == 1 ? "" : "s");
    if (c.unchained)
        utstring_printf(out, " (the first %zu written before the chain: not covered)", c.unchained);
    if (c.follows_rotated)
        utstring_printf(out, "; the first follows the last record of %s.1", files[0]);
    return 0;
}
