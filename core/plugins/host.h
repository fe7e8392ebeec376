/* host.h: the core's side of the SDK: the objects a plugin fills (plans,
 * doctor reports) and the kgate_host table that lets it fill them. */
#ifndef KG_HOST_H
#define KG_HOST_H

#include <stdbool.h>
#include <stdio.h>
#include "oom.h" /* uthash, utarray, utstring */

#include "kgate/kgate-plugin.h"
#include "strv.h"

struct kgate_plan {
    kg_strv *argv;
    kg_strv *file_labels;
    kg_strv *file_contents;
    kg_strv *notes;
    int failed; /* an allocation or format error happened while filling */
};

typedef struct kg_report_item {
    kgate_verdict verdict;
    char *id; /* valid (kg_finding_id_ok) */
    char *text;
} kg_report_item;

struct kgate_report {
    kgate_verdict verdict; /* worst of items */
    kg_report_item *items;
    size_t n_items;
    kg_strv *detail_keys;
    kg_strv *detail_values;
    /* false: report_detail keeps nothing.  Details are for `kgate doctor`
     * only, and a run with 10,000 allowed hosts made 40,000 copies of
     * them (the stage's report and the composed one) for nobody. */
    bool keep_details;
    /* The first finding id that was not valid, as given (cut to a bound;
     * shown escaped), or NULL.  Its finding was not recorded, and the
     * report is BLOCKED (select.c says why in one finding). */
    char *bad_id;
};

/* The table handed to plugins, plus what the core needs behind it.  pub
 * must stay first: plugins get &host->pub and the core casts back. */
typedef struct kg_host {
    kgate_host pub;
    /* Name used as the prefix of warnings ("kgate: bubblewrap: ..."). */
    const char *current;
    int debug; /* KGATE_DEBUG set */
    /* Whether the reports made for this host keep their details (true
     * after kg_host_init; a run, which shows none, says false). */
    bool details;
    /* QUICK probes kept between runs (probecache.h); NULL: none, as in
     * doctor, plugins and the tests. */
    struct kg_probecache *probes;
} kg_host;

void kg_host_init(kg_host *host);

/* Never NULL: out of memory ends in kg_oom(). */
kgate_plan *kg_plan_new(void);
void kg_plan_free(kgate_plan *plan); /* accepts NULL */
/* --dry-run output: the argv as one shell-quoted line, then each helper
 * file and note. */
void kg_plan_print(const kgate_plan *plan, FILE *out);

/* Never NULL: out of memory ends in kg_oom(). */
kgate_report *kg_report_new(void);
void kg_report_free(kgate_report *rep); /* accepts NULL */
const char *kg_verdict_name(kgate_verdict v);

/* 1 when id is a valid finding id (kgate-plugin.h: 1 to
 * KGATE_FINDING_ID_MAX bytes of [a-z0-9.-], a letter first, no empty part
 * between dots, no '.' or '-' last), else 0.  NULL is not valid. */
int kg_finding_id_ok(const char *id);

/* Appends s quoted for a POSIX shell, only when it needs quoting.  For
 * display only: kgate never hands a string to a shell. */
void kg_shell_quote(UT_string *out, const char *s);

#endif
