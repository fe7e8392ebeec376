/* mcptools.h: the tools `kgate mcp` offers (run, doctor): their list with
 * schemas, and a tools/call answered as a JSON-RPC result object. */
#ifndef KG_MCPTOOLS_H
#define KG_MCPTOOLS_H

#include <stdbool.h>

#include "jsonread.h"
#include "oom.h" /* uthash, utarray, utstring */

/* JSON-RPC 2.0's error codes. */
enum {
    KG_RPC_PARSE_ERROR = -32700,
    KG_RPC_INVALID_REQUEST = -32600,
    KG_RPC_NO_METHOD = -32601,
    KG_RPC_INVALID_PARAMS = -32602,
};

/* What a tool needs of the server: fixed when it starts. */
typedef struct kg_mcp_server {
    char *project; /* the working directory at start, resolved */
    int projfd; /* a handle on it: where every run starts from */
    char *self; /* the kgate binary that runs every tool */
    const char *backend; /* --backend, handed to every run; NULL: none */
    int input_fd; /* the server's input, watched while a tool runs */
    UT_string *input; /* what arrived on it and was not handled yet */
    size_t input_cap; /* input is not read further past this size */
    bool input_ended; /* a tool saw the input end (and its run was ended) */
} kg_mcp_server;

/* Appends the result object of tools/list. */
void kg_mcp_tools_list(UT_string *out);

/* Answers tools/call.  Returns 0 with the result object appended to out
 * (a tool that failed is a result with isError), or a JSON-RPC error code
 * with msg set (unknown tool, arguments that do not fit the schema). */
int kg_mcp_tools_call(kg_mcp_server *s, const kg_jv *params, UT_string *out, char *msg,
                      size_t msglen);

#endif
