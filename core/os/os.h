/* os.h: the few things the core needs that POSIX does not give it the same
 * way on every kernel.  Each group is one subsystem with one file per
 * system, chosen in core/meson.build by host_machine.system():
 *
 *   os-fd-linux.c    / os-fd-macos.c     descriptors and file metadata
 *   os-relay-linux.c / os-relay-macos.c  copy-free output relay (or none)
 *   os-proc-linux.c  / os-proc-macos.c   reaping orphans; what a box shares
 *   os-hash-linux.c  / os-hash-macos.c   SHA-256 (libcrypto / CommonCrypto)
 *
 * Shared core files call these and carry no #ifdef for the system.  Where
 * macOS cannot do what Linux does, the macOS file says what is lost, and
 * docs/seatbelt.md lists it. */
#ifndef KG_OS_H
#define KG_OS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

/* ---- descriptors and file metadata (os-fd-*.c) --------------------------- */

/* A pipe whose two ends are close-on-exec, and non-blocking when asked.
 * Linux sets the flags atomically (pipe2); macOS right after pipe(), which
 * is the same thing for kgate: it has one thread, so no fork can come
 * between.  Returns 0, or -1 with errno. */
int kg_os_pipe(int p[2], bool nonblock);

/* Asks for a pipe of at least size bytes, best effort (F_SETPIPE_SZ).
 * macOS sizes its pipes itself (they grow to 64 KiB on demand): a no-op
 * there.  Only ever grows the pipe. */
void kg_os_pipe_grow(int fd, int size);

/* A descriptor of a directory that is used only as the dirfd of fstatat and
 * faccessat.  Linux opens it with O_PATH (works on a directory that may
 * only be searched); macOS needs read permission on it (O_RDONLY), and a
 * directory it cannot open is looked up by name as before.  -1 on failure. */
int kg_os_open_dir_handle(const char *path);

/* The same, for the entry name of the directory dfd, never following a
 * symbolic link there (O_NOFOLLOW).  -1 on failure. */
int kg_os_openat_dir_handle(int dfd, const char *name);

/* Renames from to to, both in the directory dfd, failing with EEXIST
 * instead of replacing an existing to (Linux renameat2 RENAME_NOREPLACE,
 * macOS renameatx_np RENAME_EXCL). */
int kg_os_rename_noreplace(int dfd, const char *from, const char *to);

/* Makes every descriptor from lowfd up close-on-exec in one call where the
 * kernel offers one (close_range).  Returns 0 when done, -1 when the caller
 * must walk kg_os_fd_dir() itself. */
int kg_os_cloexec_range(int lowfd);

/* The directory that lists this process's open descriptors. */
const char *kg_os_fd_dir(void);

/* The modification and status-change times of a stat result: struct stat
 * spells them st_mtim on Linux and st_mtimespec on macOS. */
struct timespec kg_os_stat_mtime(const struct stat *st);
struct timespec kg_os_stat_ctime(const struct stat *st);

/* What an owner uid that stat() reported means for trusting the file.
 * Inside a user namespace (Linux) every owner the namespace cannot name
 * shows as the kernel's overflow uid (/proc/sys/kernel/overflowuid, 65534).
 *   KG_OWNER_PLAIN     uid is who it says: not the overflow uid, or not in
 *                      a user namespace (and always on macOS, which has none)
 *   KG_OWNER_UNMAPPED  the overflow uid in a namespace whose uid map leaves
 *                      out the real root: root or some other unmapped uid
 *   KG_OWNER_UNKNOWN   the overflow uid in a namespace that maps root, or
 *                      /proc could not say: some uid, maybe not ours */
enum { KG_OWNER_PLAIN = 0, KG_OWNER_UNMAPPED = 1, KG_OWNER_UNKNOWN = 2 };
int kg_os_owner_kind(uid_t uid);

/* ---- copy-free relay (os-relay-*.c) --------------------------------------- */

/* Whether kg_os_tee and kg_os_splice work here.  false on macOS: the output
 * relay reads into kgate's buffer and writes from it (the same bytes reach
 * the same place, at the cost of one copy). */
bool kg_os_relay_zero_copy(void);

/* tee(2) without blocking: duplicates up to n bytes of the pipe in into the
 * pipe out without consuming them.  -1 with ENOSYS where it does not exist. */
ssize_t kg_os_tee(int in, int out, size_t n);

/* splice(2): moves up to n bytes from the pipe in to the pipe out.  -1 with
 * ENOSYS where it does not exist. */
ssize_t kg_os_splice(int in, int out, size_t n);

/* ---- processes (os-proc-*.c) -------------------------------------------- */

/* Makes this process the reaper of its descendants' orphans (true), or
 * not (false).  False when the system has no such thing (macOS). */
bool kg_os_subreaper(bool on);

/* The pids of this process's children, as the kernel lists them; NULL
 * (with *n = 0) when they cannot be listed. */
pid_t *kg_os_children(size_t *n);

/* Calls each(arg, entry) for every process the system lists (its pid,
 * its parent's, whether it is a zombie), in the order it reads them, so
 * that the caller can act on one before the next is read (proctree.h).
 * -1 with errno when the list cannot be read (ENOSYS on macOS). */
typedef struct kg_procent {
    pid_t pid;
    pid_t ppid;
    /* Ended, not yet reaped: it cannot run, but it is there.  A leader
     * whose other threads still run is not one (it is killed). */
    bool zombie;
} kg_procent;
int kg_os_proc_scan(void (*each)(void *arg, const struct kg_procent *e), void *arg);

/* SIGKILLs pid if it is still a child of ppid: through a pidfd, so the
 * signal reaches the process that was checked even if pid is reaped and
 * reused meanwhile.  0 when sent or when it is no longer there. */
int kg_os_kill_child_of(pid_t pid, pid_t ppid);

/* Host directories that every box this system's backend starts can write
 * whatever the policy says (macOS: /private/tmp and $TMPDIR); at most max
 * put in out.  Their strings live as long as the environment. */
size_t kg_os_box_shared_dirs(const char **out, size_t max);

/* ---- hashing (os-hash-*.c) ----------------------------------------------- */

/* SHA-256 of len bytes: the system's implementation (OpenSSL's libcrypto on
 * Linux, CommonCrypto on macOS), never kgate's own. */
void kg_os_sha256(const void *data, size_t len, unsigned char out[32]);

#endif
