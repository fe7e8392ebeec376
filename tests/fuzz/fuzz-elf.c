/* fuzz-elf: the plugin file checks (core/plugins/plugin-check-elf.c, and the
 * Mach-O one of plugin-check-macos.c) on any bytes.
 *
 * It reads files that may be cut short or garbage, so it must itself never
 * read out of bounds, overflow, or loop; a refusal is one line.  (Whether an
 * accepted file then loads is dlopen's business, tested in test_loader with
 * real libraries.) */
#include <string.h>

#include "fuzz-util.h"
#include "plugin-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size copy, so ASan sees any read past the end. */
    unsigned char *copy = malloc(size ? size : 1);
    if (size) memcpy(copy, data, size);
    for (int k = 0; k < 2; k++) {
        char why[256] = "";
        int r = k ? kg_macho_check_mem(copy, size, why, sizeof why)
                  : kg_elf_check_mem(copy, size, why, sizeof why);
        FZ_CHECK(r == 0 || r == -1, "returned %d", r);
        if (r < 0) {
            FZ_CHECK(why[0], "refused without a reason");
            for (const unsigned char *p = (const unsigned char *)why; *p; p++)
                FZ_CHECK(*p >= 0x20 && *p < 0x7f, "odd byte in reason: %s", why);
        }
    }
    free(copy);
    return 0;
}
