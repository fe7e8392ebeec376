/* mcprun.h: one child kgate for `kgate mcp` (cmd_mcp.c), started with
 * pipes for its stdout, stderr and refusal channel, read into bounded
 * buffers until it ends, killed when its time is up or when the MCP
 * client goes away.  The child is always the kgate binary itself: the
 * server never runs a shell outside the box. */
#ifndef KG_MCPRUN_H
#define KG_MCPRUN_H

#include <stdbool.h>
#include <stddef.h>
#include "oom.h" /* uthash, utarray, utstring */

/* What to start.  argv[0] is what the child sees as its name; exe is the
 * file executed.  The child's working directory is dirfd (fchdir), its
 * stdin /dev/null, and with events its descriptor 3 the write end of the
 * refusal channel (the caller puts "--events-fd 3" in argv). */
typedef struct kg_mcp_job {
    const char *exe;
    char *const *argv;
    int dirfd;
    bool events;
    long timeout_ms; /* 0: none */
    size_t limit; /* bytes kept of each stream; the rest is counted */
    /* The server's own input, watched while the child runs: bytes that
     * arrive are appended to input (the server reads them after), and end
     * of file kills the run (the client is gone).  -1: not watched. */
    int input_fd;
    UT_string *input;
    size_t input_cap; /* input is not read further past this size */
} kg_mcp_job;

/* One stream of the child, its first bytes and how many were cut. */
typedef struct kg_mcp_stream {
    UT_string *buf;
    size_t cut;
} kg_mcp_stream;

typedef struct kg_mcp_out {
    kg_mcp_stream out, err, events;
    int status; /* as a shell reports it: code, or 128+N for signal N */
    bool started; /* false: fork failed, why says so */
    bool timed_out; /* killed after timeout_ms */
    bool input_eof; /* killed because the server's input ended */
    char why[256];
} kg_mcp_out;

void kg_mcp_out_init(kg_mcp_out *o);
void kg_mcp_out_free(kg_mcp_out *o);

/* Runs the job to its end (or kill).  Returns 0 when the child ran and
 * was waited for, -1 with o->why when it could not be started. */
int kg_mcp_run(const kg_mcp_job *j, kg_mcp_out *o);

#endif
