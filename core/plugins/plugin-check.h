/* plugin-check.h: is a plugin file whole enough to hand to the dynamic
 * loader?  dlopen() maps a library's segments straight from the file; a
 * file cut short (an interrupted upgrade, a full disk) gets pages past its
 * end mapped, and the first touch of one kills kgate with SIGBUS before
 * dlopen() can return an error.  So the headers, the segment table and the
 * dynamic section are read and checked against the file's size first, and a
 * file that fails is refused like any other broken plugin: one line, and
 * the others still load.
 *
 * What this cannot see: bytes that are wrong but in place (a relocation
 * that points anywhere, corrupt code).  It is a check for files that are
 * short or not libraries at all, not a verifier. */
#ifndef KG_PLUGIN_CHECK_H
#define KG_PLUGIN_CHECK_H

#include <stddef.h>
#include <stdint.h>

/* 0 when the file at path may be given to dlopen(); -1 with a one-line
 * reason in why otherwise.  ELF on Linux and the BSDs, Mach-O on macOS. */
int kg_plugin_file_check(const char *path, char *why, size_t len);

/* The ELF check over a file held in memory (size bytes), for the tests and
 * the fuzzer.  Same answers as kg_plugin_file_check on a file. */
int kg_elf_check_mem(const void *data, size_t size, char *why, size_t len);
/* The Mach-O check over a file in memory (thin 64-bit, or universal). */
int kg_macho_check_mem(const void *data, size_t size, char *why, size_t len);

#endif
