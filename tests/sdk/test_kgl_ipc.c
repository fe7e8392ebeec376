/* test_kgl_ipc.c: the SysV IPC supervisor's decision (sdk/linux/kgl-ipc.c)
 * on made-up notifications, against the kernel's real IPC objects: what
 * it makes, what it continues, what it refuses, what it removes.  The
 * loop and the filter around it are tested from inside the Landlock box
 * (tests/integration/landlock.sh).
 *
 * Objects "outside" are made here directly, as the user's other processes
 * would.  Where the test may make an IPC namespace of its own (root), it
 * does, so it never meets anyone else's objects. */
#include "testutil.h"

#include "kgate/kgate-linux.h"
#include "kgl-ipc.h"

#include <linux/audit.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>

#define CONTINUE (-1000)

static kgl_ipc_set set;
static int key_base;

/* The answer to one call: its value, -errno, or CONTINUE. */
static long ask(long nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
    struct seccomp_notif req;
    struct seccomp_notif_resp resp;
    memset(&req, 0, sizeof req);
    req.id = 77;
    req.data.nr = (int)nr;
    req.data.arch = AUDIT_ARCH_X86_64;
    req.data.args[0] = a0;
    req.data.args[1] = a1;
    req.data.args[2] = a2;
    ck_assert_int_eq(kgl_ipc_answer(&set, &req, &resp), 0);
    ck_assert(resp.id == 77);
    if (resp.flags & SECCOMP_USER_NOTIF_FLAG_CONTINUE) {
        ck_assert_int_eq(resp.error, 0);
        return CONTINUE;
    }
    return resp.error ? resp.error : resp.val;
}

static void setup(void)
{
    memset(&set, 0, sizeof set);
    key_base = 0x4c000000 + (int)((unsigned)getpid() % 4096) * 64;
}

static void teardown(void) { kgl_ipc_remove_all(&set); }

START_TEST(private_objects_are_made_and_continued)
{
    long shm = ask(SYS_shmget, IPC_PRIVATE, 4096, IPC_CREAT | 0600);
    long msg = ask(SYS_msgget, IPC_PRIVATE, IPC_CREAT | 0600, 0);
    long sem = ask(SYS_semget, IPC_PRIVATE, 2, IPC_CREAT | 0600);
    ck_assert_int_ge(shm, 0);
    ck_assert_int_ge(msg, 0);
    ck_assert_int_ge(sem, 0);
    ck_assert_uint_eq(set.n, 3);
    struct shmid_ds ds;
    ck_assert_int_eq(shmctl((int)shm, IPC_STAT, &ds), 0); /* really made */
    ck_assert_int_eq(ask(SYS_shmat, (uint64_t)shm, 0, 0), CONTINUE);
    ck_assert_int_eq(ask(SYS_shmctl, (uint64_t)shm, IPC_STAT | 0x100, 0), CONTINUE);
    ck_assert_int_eq(ask(SYS_shmctl, (uint64_t)shm, SHM_LOCK, 0), CONTINUE);
    ck_assert_int_eq(ask(SYS_msgsnd, (uint64_t)msg, 0x1000, 8), CONTINUE);
    ck_assert_int_eq(ask(SYS_msgrcv, (uint64_t)msg, 0x1000, 8), CONTINUE);
    ck_assert_int_eq(ask(SYS_msgctl, (uint64_t)msg, IPC_SET, 0), CONTINUE);
    ck_assert_int_eq(ask(SYS_semop, (uint64_t)sem, 0x1000, 1), CONTINUE);
    ck_assert_int_eq(ask(SYS_semtimedop, (uint64_t)sem, 0x1000, 1), CONTINUE);
    ck_assert_int_eq(ask(SYS_semctl, (uint64_t)sem, 0, SETVAL), CONTINUE);
    ck_assert_int_eq(ask(SYS_semctl, (uint64_t)sem, 1, GETALL), CONTINUE);
    ck_assert_int_eq(ask(SYS_shmdt, 0x7000, 0, 0), CONTINUE);
}
END_TEST

START_TEST(keys_of_the_run)
{
    int key = key_base + 1;
    ck_assert_int_eq(ask(SYS_shmget, (uint64_t)key, 4096, 0600), -ENOENT);
    long id = ask(SYS_shmget, (uint64_t)key, 4096, IPC_CREAT | 0600);
    ck_assert_int_ge(id, 0);
    ck_assert_int_eq(ask(SYS_shmget, (uint64_t)key, 0, 0), id);
    ck_assert_int_eq(ask(SYS_shmget, (uint64_t)key, 4096, IPC_CREAT | 0600), id);
    ck_assert_int_eq(ask(SYS_shmget, (uint64_t)key, 4096, IPC_CREAT | IPC_EXCL | 0600), -EEXIST);
    /* The kernel still checks what it checks: a size over the segment's. */
    ck_assert_int_eq(ask(SYS_shmget, (uint64_t)key, 1 << 20, 0), -EINVAL);
    ck_assert_int_eq(shmget(key, 0, 0), id);
    long q = ask(SYS_msgget, (uint64_t)key, IPC_CREAT | 0600, 0);
    ck_assert_int_ge(q, 0); /* each kind has its own keys */
    ck_assert_int_eq(ask(SYS_msgget, (uint64_t)key, 0, 0), q);
}
END_TEST

START_TEST(objects_outside_are_out_of_reach)
{
    int key = key_base + 2;
    int shm = shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0600);
    int msg = msgget(key, IPC_CREAT | IPC_EXCL | 0600);
    int sem = semget(key, 1, IPC_CREAT | IPC_EXCL | 0600);
    ck_assert(shm >= 0 && msg >= 0 && sem >= 0);
    /* By key: not there (as in another namespace), and not to be made. */
    ck_assert_int_eq(ask(SYS_shmget, (uint64_t)key, 0, 0), -ENOENT);
    ck_assert_int_eq(ask(SYS_shmget, (uint64_t)key, 4096, IPC_CREAT | 0600), -EACCES);
    ck_assert_int_eq(ask(SYS_msgget, (uint64_t)key, IPC_CREAT | 0600, 0), -EACCES);
    ck_assert_int_eq(ask(SYS_semget, (uint64_t)key, 1, IPC_CREAT | 0600), -EACCES);
    ck_assert_int_eq(ask(SYS_semget, (uint64_t)key, 1, IPC_CREAT | IPC_EXCL | 0600), -EEXIST);
    /* By id: no such id. */
    ck_assert_int_eq(ask(SYS_shmat, (uint64_t)shm, 0, SHM_RDONLY), -EINVAL);
    ck_assert_int_eq(ask(SYS_shmctl, (uint64_t)shm, IPC_STAT, 0), -EINVAL);
    ck_assert_int_eq(ask(SYS_shmctl, (uint64_t)shm, IPC_RMID, 0), -EINVAL);
    ck_assert_int_eq(ask(SYS_msgrcv, (uint64_t)msg, 0x1000, 8), -EINVAL);
    ck_assert_int_eq(ask(SYS_msgsnd, (uint64_t)msg, 0x1000, 8), -EINVAL);
    ck_assert_int_eq(ask(SYS_msgctl, (uint64_t)msg, IPC_RMID, 0), -EINVAL);
    ck_assert_int_eq(ask(SYS_semop, (uint64_t)sem, 0x1000, 1), -EINVAL);
    ck_assert_int_eq(ask(SYS_semctl, (uint64_t)sem, 0, GETVAL), -EINVAL);
    ck_assert_int_eq(ask(SYS_semctl, (uint64_t)sem, 0, IPC_RMID), -EINVAL);
    ck_assert_uint_eq(set.n, 0);
    /* Only 32 bits of an id count, as in the kernel. */
    ck_assert_int_eq(ask(SYS_shmat, (uint64_t)shm | (1ULL << 40), 0, 0), -EINVAL);
    kgl_ipc_remove_all(&set);
    struct shmid_ds ds;
    ck_assert_int_eq(shmctl(shm, IPC_STAT, &ds), 0); /* untouched */
    ck_assert_int_eq(semctl(sem, 0, GETVAL), 0);
    shmctl(shm, IPC_RMID, NULL);
    msgctl(msg, IPC_RMID, NULL);
    semctl(sem, 0, IPC_RMID);
}
END_TEST

/* The commands that walk the table by index or count it: refused even
 * with an id of the run (they ignore it or take it as an index). */
START_TEST(index_and_count_commands_are_refused)
{
    long shm = ask(SYS_shmget, IPC_PRIVATE, 4096, IPC_CREAT | 0600);
    long msg = ask(SYS_msgget, IPC_PRIVATE, IPC_CREAT | 0600, 0);
    long sem = ask(SYS_semget, IPC_PRIVATE, 1, IPC_CREAT | 0600);
    ck_assert(shm >= 0 && msg >= 0 && sem >= 0);
    static const int shm_cmds[] = {IPC_INFO, SHM_STAT, SHM_INFO, 15 /* SHM_STAT_ANY */};
    static const int msg_cmds[] = {IPC_INFO, MSG_STAT, MSG_INFO, 13 /* MSG_STAT_ANY */};
    static const int sem_cmds[] = {IPC_INFO, SEM_STAT, SEM_INFO, 20 /* SEM_STAT_ANY */};
    for (size_t i = 0; i < 4; i++) {
        ck_assert_int_eq(ask(SYS_shmctl, (uint64_t)shm, (uint64_t)shm_cmds[i], 0), -EPERM);
        ck_assert_int_eq(ask(SYS_shmctl, 0, (uint64_t)shm_cmds[i] | 0x100, 0), -EPERM);
        ck_assert_int_eq(ask(SYS_msgctl, (uint64_t)msg, (uint64_t)msg_cmds[i], 0), -EPERM);
        ck_assert_int_eq(ask(SYS_semctl, (uint64_t)sem, 0, (uint64_t)sem_cmds[i]), -EPERM);
    }
    ck_assert_int_eq(ask(SYS_shmctl, (uint64_t)shm, 99, 0), -EINVAL);
}
END_TEST

START_TEST(removal_is_made_here_and_forgotten)
{
    long shm = ask(SYS_shmget, IPC_PRIVATE, 4096, IPC_CREAT | 0600);
    long sem = ask(SYS_semget, (uint64_t)key_base + 3, 1, IPC_CREAT | 0600);
    ck_assert(shm >= 0 && sem >= 0);
    ck_assert_int_eq(ask(SYS_shmctl, (uint64_t)shm, IPC_RMID, 0), 0);
    struct shmid_ds ds;
    ck_assert_int_lt(shmctl((int)shm, IPC_STAT, &ds), 0);
    ck_assert_int_eq(ask(SYS_shmat, (uint64_t)shm, 0, 0), -EINVAL);
    ck_assert_int_eq(ask(SYS_semctl, (uint64_t)sem, 0, IPC_RMID | 0x100), 0);
    ck_assert_int_eq(ask(SYS_semget, (uint64_t)key_base + 3, 1, 0600), -ENOENT);
    ck_assert_uint_eq(set.n, 0);
}
END_TEST

/* The end of the run: everything of the run is removed, nothing else. */
START_TEST(the_end_removes_the_runs_objects)
{
    int outside = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
    ck_assert_int_ge(outside, 0);
    long ids[3] = {ask(SYS_shmget, IPC_PRIVATE, 4096, IPC_CREAT | 0600),
                   ask(SYS_msgget, (uint64_t)key_base + 4, IPC_CREAT | 0600, 0),
                   ask(SYS_semget, IPC_PRIVATE, 3, IPC_CREAT | 0600)};
    ck_assert(ids[0] >= 0 && ids[1] >= 0 && ids[2] >= 0);
    kgl_ipc_remove_all(&set);
    ck_assert_uint_eq(set.n, 0);
    struct shmid_ds sd;
    struct msqid_ds md;
    ck_assert_int_lt(shmctl((int)ids[0], IPC_STAT, &sd), 0);
    ck_assert_int_lt(msgctl((int)ids[1], IPC_STAT, &md), 0);
    ck_assert_int_lt(semctl((int)ids[2], 0, GETVAL), 0);
    ck_assert_int_eq(shmctl(outside, IPC_STAT, &sd), 0);
    shmctl(outside, IPC_RMID, NULL);
}
END_TEST

/* Not SysV IPC, or not the native entry: left to the caller. */
START_TEST(other_calls_are_not_answered)
{
    struct seccomp_notif req;
    struct seccomp_notif_resp resp;
    memset(&req, 0, sizeof req);
    req.data.nr = SYS_getpid;
    req.data.arch = AUDIT_ARCH_X86_64;
    ck_assert_int_eq(kgl_ipc_answer(&set, &req, &resp), -1);
    req.data.nr = SYS_shmget;
    req.data.arch = AUDIT_ARCH_I386;
    ck_assert_int_eq(kgl_ipc_answer(&set, &req, &resp), -1);
    ck_assert_uint_eq(set.n, 0);
}
END_TEST

/* The filesystem supervisor's side of the routing: which calls it passes
 * on, and that a request arrives whole, as one message. */
START_TEST(routing_passes_the_sysv_calls_on_whole)
{
    ck_assert(kgl_ipc_is_call(SYS_shmget));
    ck_assert(kgl_ipc_is_call(SYS_semctl));
    ck_assert(kgl_ipc_is_call(SYS_shmdt));
    ck_assert(!kgl_ipc_is_call(SYS_openat));
    ck_assert(!kgl_ipc_is_call(SYS_getpid));
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    struct seccomp_notif req, back;
    memset(&req, 0, sizeof req);
    req.id = 0x1234567890abcdefULL;
    req.pid = 42;
    req.data.nr = SYS_msgget;
    req.data.arch = AUDIT_ARCH_X86_64;
    req.data.args[1] = IPC_CREAT | 0600;
    ck_assert_int_eq(kgl_ipc_route(sv[0], &req), 0);
    ck_assert_int_eq(recv(sv[1], &back, sizeof back, 0), (ssize_t)sizeof back);
    ck_assert(memcmp(&req, &back, sizeof req) == 0);
    /* The IPC supervisor gone: the caller learns it (and refuses). */
    close(sv[1]);
    ck_assert_int_eq(kgl_ipc_route(sv[0], &req), -1);
    close(sv[0]);
}
END_TEST

int main(void)
{
#ifndef __x86_64__
    fprintf(stderr, "# the notifications are made up for x86-64\n");
    return 77;
#endif
    /* A namespace of our own where we may (root): nobody's objects. */
    if (unshare(CLONE_NEWIPC) < 0)
        fprintf(stderr, "# no IPC namespace of its own (%s): random keys\n", strerror(errno));
    Suite *s = suite_create("kgl_ipc");
    TCase *tc = tcase_create("answer");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, private_objects_are_made_and_continued);
    tcase_add_test(tc, keys_of_the_run);
    tcase_add_test(tc, objects_outside_are_out_of_reach);
    tcase_add_test(tc, index_and_count_commands_are_refused);
    tcase_add_test(tc, removal_is_made_here_and_forgotten);
    tcase_add_test(tc, the_end_removes_the_runs_objects);
    tcase_add_test(tc, other_calls_are_not_answered);
    tcase_add_test(tc, routing_passes_the_sysv_calls_on_whole);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
