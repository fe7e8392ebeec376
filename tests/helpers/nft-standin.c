/* A stand-in for libnftables.so.1 that refuses every ruleset, with an
 * error as nft words one: name_filter.sh puts it first in kgate's
 * LD_LIBRARY_PATH to see a filter the kernel refuses refuse the run.  Only
 * what the slirp stage's keeper calls (plugins/slirp-filter/sf-nft.c). */
#include <stdint.h>

struct nft_ctx {
    int unused;
};

static struct nft_ctx one;

struct nft_ctx *nft_ctx_new(uint32_t flags);
void nft_ctx_free(struct nft_ctx *ctx);
int nft_ctx_buffer_output(struct nft_ctx *ctx);
int nft_ctx_buffer_error(struct nft_ctx *ctx);
const char *nft_ctx_get_error_buffer(struct nft_ctx *ctx);
int nft_run_cmd_from_buffer(struct nft_ctx *ctx, const char *buf);

struct nft_ctx *nft_ctx_new(uint32_t flags)
{
    (void)flags;
    return &one;
}

void nft_ctx_free(struct nft_ctx *ctx) { (void)ctx; }

int nft_ctx_buffer_output(struct nft_ctx *ctx)
{
    (void)ctx;
    return 0;
}

int nft_ctx_buffer_error(struct nft_ctx *ctx)
{
    (void)ctx;
    return 0;
}

const char *nft_ctx_get_error_buffer(struct nft_ctx *ctx)
{
    (void)ctx;
    return "Error: library stand-in: cannot load: Message too long\nline two\n";
}

int nft_run_cmd_from_buffer(struct nft_ctx *ctx, const char *buf)
{
    (void)ctx;
    (void)buf;
    return -1;
}
