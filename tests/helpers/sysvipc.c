/* sysvipc.c: SysV IPC from both sides of a box without an IPC namespace
 * (landlock.sh).  python3 has no SysV IPC module by default.
 *
 *   make KEY          outside: a segment (KEY), a queue (KEY+1) and a
 *                     semaphore set (KEY+2), mode 0600, each holding a
 *                     secret; prints "SHMID MSGID SEMID"
 *   intact KEY S M E  outside, after: all three still there under their
 *                     keys, unchanged (the segment's text, one message in
 *                     the queue, the semaphore at 42); prints INTACT
 *   remove S M E      outside: IPC_RMID all three
 *   attack KEY S M E  the attacker: by key, by the ids the outside got,
 *                     by ids around them and by index, tries to read,
 *                     write and remove; a line LEAK-what for each success,
 *                     and markers before and after
 *   own KEY           the program's own IPC: made, attached, written and
 *                     read back, also from a forked child (which makes
 *                     KEY+5); *_INFO and *_STAT refused (EPERM); prints
 *                     OWN-* lines and "OWN-IDS ..."
 *   gone ID...        outside, after: "GONE" when no object of these
 *                     (type:id, shm:1 msg:2 ...) is left
 *   compat            shmget through i386's ipc() multiplexer and its
 *                     direct call (int 0x80): "COMPAT name ok|ERRNO" each
 *                     (the objects made are removed), or COMPAT-NONE
 *                     where this kernel has no i386 entry
 *   mqmake NAME, mqattack NAME, mqintact NAME, mqremove NAME: the same
 *                     for a POSIX message queue (also in the IPC
 *                     namespace): made with a secret message, attacked
 *                     (opened, read, unlinked), checked, removed
 *
 * Exit status 0 unless a step of make, intact or own failed. */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#define SECRET "kgate-ipc-secret"
#define SHM_SIZE 4096

union semun {
    int val;
    struct semid_ds *buf;
    unsigned short *array;
};

struct msg {
    long type;
    char text[64];
};

static int make(int key)
{
    int shm = shmget(key, SHM_SIZE, IPC_CREAT | IPC_EXCL | 0600);
    int msg = msgget(key + 1, IPC_CREAT | IPC_EXCL | 0600);
    int sem = semget(key + 2, 1, IPC_CREAT | IPC_EXCL | 0600);
    if (shm < 0 || msg < 0 || sem < 0) {
        perror("make");
        return 1;
    }
    char *p = shmat(shm, NULL, 0);
    if (p == (void *)-1) return 1;
    strcpy(p, SECRET);
    shmdt(p);
    struct msg m = {1, SECRET};
    union semun u = {.val = 42};
    if (msgsnd(msg, &m, sizeof m.text, 0) < 0 || semctl(sem, 0, SETVAL, u) < 0) {
        perror("make");
        return 1;
    }
    printf("%d %d %d\n", shm, msg, sem);
    return 0;
}

static int intact(int key, int shm, int msg, int sem)
{
    struct msqid_ds q;
    int bad = 0;
    if (shmget(key, 0, 0) != shm || msgget(key + 1, 0) != msg || semget(key + 2, 0, 0) != sem) {
        printf("NOT-INTACT keys\n");
        bad = 1;
    }
    char *p = shmat(shm, NULL, SHM_RDONLY);
    if (p == (void *)-1 || strcmp(p, SECRET) != 0) {
        printf("NOT-INTACT shm\n");
        bad = 1;
    }
    if (msgctl(msg, IPC_STAT, &q) < 0 || q.msg_qnum != 1) {
        printf("NOT-INTACT msg\n");
        bad = 1;
    }
    if (semctl(sem, 0, GETVAL) != 42) {
        printf("NOT-INTACT sem\n");
        bad = 1;
    }
    if (!bad) printf("INTACT\n");
    return bad;
}

static void leak(const char *what, int id) { printf("LEAK-%s %d\n", what, id); }

/* Everything a program could do to one id of each kind.  Writes and
 * removal come after the reads, so a leak shows as a read first. */
static void try_shm(int id, int rm)
{
    struct shmid_ds ds;
    char *p = shmat(id, NULL, SHM_RDONLY);
    if (p != (void *)-1) {
        leak(strncmp(p, SECRET, strlen(SECRET)) == 0 ? "shm-read-secret" : "shm-read", id);
        shmdt(p);
    }
    p = shmat(id, NULL, 0);
    if (p != (void *)-1) {
        leak("shm-attach-rw", id);
        shmdt(p);
    }
    if (shmctl(id, IPC_STAT, &ds) == 0) leak("shm-stat", id);
    if (rm && shmctl(id, IPC_RMID, NULL) == 0) leak("shm-rmid", id);
}

static void try_msg(int id, int rm)
{
    struct msg m;
    struct msqid_ds ds;
    if (msgctl(id, IPC_STAT, &ds) == 0) leak("msg-stat", id);
    if (msgrcv(id, &m, sizeof m.text, 0, IPC_NOWAIT) >= 0)
        leak(strcmp(m.text, SECRET) == 0 ? "msg-read-secret" : "msg-read", id);
    m.type = 2;
    strcpy(m.text, "planted");
    if (msgsnd(id, &m, sizeof m.text, IPC_NOWAIT) == 0) leak("msg-write", id);
    if (rm && msgctl(id, IPC_RMID, NULL) == 0) leak("msg-rmid", id);
}

static void try_sem(int id, int rm)
{
    struct sembuf op = {0, 1, IPC_NOWAIT};
    union semun u = {.val = 7};
    if (semctl(id, 0, GETVAL) >= 0) leak("sem-read", id);
    if (semop(id, &op, 1) == 0) leak("sem-op", id);
    if (semctl(id, 0, SETVAL, u) == 0) leak("sem-write", id);
    if (rm && semctl(id, 0, IPC_RMID) == 0) leak("sem-rmid", id);
}

/* By index: the *_STAT commands walk the namespace's table. */
static void try_index(void)
{
    struct shmid_ds sd;
    struct msqid_ds md;
    union semun u;
    struct semid_ds ed;
    u.buf = &ed;
    for (int i = 0; i < 256; i++) {
        if (shmctl(i, SHM_STAT, &sd) >= 0) leak("shm-index", i);
        if (shmctl(i, 15 /* SHM_STAT_ANY */, &sd) >= 0) leak("shm-index-any", i);
        if (msgctl(i, MSG_STAT, &md) >= 0) leak("msg-index", i);
        if (semctl(i, 0, SEM_STAT, u) >= 0) leak("sem-index", i);
    }
}

/* The ids the outside got, and ids around them: the same slot in nearby
 * generations (id = seq * 32768 + slot), nearby slots, the first ids. */
static void try_ids(void (*fn)(int, int), int id)
{
    int seq = id / 32768, slot = id % 32768;
    fn(id, 0);
    for (int s = seq - 3; s <= seq + 3; s++)
        for (int k = 0; k < 64; k++)
            if (s >= 0 && s * 32768 + k != id) fn(s * 32768 + k, 0);
    for (int k = slot - 16; k < slot + 16; k++)
        if (k >= 64 && seq * 32768 + k != id) fn(seq * 32768 + k, 0);
    for (int k = 0; k < 256; k++)
        if (k != id) fn(k, 0);
}

static int attack(int key, int shm, int msg, int sem)
{
    printf("M-ipc-key\n");
    if (shmget(key, 0, 0) >= 0) leak("shmget-key", key);
    if (msgget(key + 1, 0) >= 0) leak("msgget-key", key + 1);
    if (semget(key + 2, 0, 0) >= 0) leak("semget-key", key + 2);
    int r;
    if ((r = shmget(key, SHM_SIZE, IPC_CREAT | 0600)) >= 0 && r == shm)
        leak("shmget-key-create", r);
    if ((r = msgget(key + 1, IPC_CREAT | 0600)) >= 0 && r == msg) leak("msgget-key-create", r);
    if ((r = semget(key + 2, 1, IPC_CREAT | 0600)) >= 0 && r == sem) leak("semget-key-create", r);
    printf("M-ipc-ids\n");
    try_ids(try_shm, shm);
    try_ids(try_msg, msg);
    try_ids(try_sem, sem);
    printf("M-ipc-index\n");
    try_index();
    printf("M-ipc-rmid\n");
    try_shm(shm, 1);
    try_msg(msg, 1);
    try_sem(sem, 1);
    printf("M-ipc-end\n");
    return 0;
}

/* Across a fork: the child reaches the parent's objects by id, and the
 * parent finds one the child made by key (key + 5).  Its id, or -1. */
static int own_fork(int shm, int msg, int sem, int key)
{
    pid_t pid = fork();
    if (pid == 0) {
        char *p = shmat(shm, NULL, 0);
        struct msg m = {4, "from-child"};
        struct sembuf up = {0, 1, 0};
        if (p == (void *)-1) _exit(1);
        strcpy(p, "child-data");
        int ok = shmdt(p) == 0 && msgsnd(msg, &m, sizeof m.text, 0) == 0 &&
                 semop(sem, &up, 1) == 0 && shmget(key + 5, SHM_SIZE, IPC_CREAT | 0600) >= 0;
        _exit(ok ? 0 : 1);
    }
    int st = 0, ok = pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st);
    struct msg back;
    char *p = shmat(shm, NULL, SHM_RDONLY);
    int k = shmget(key + 5, 0, 0);
    if (ok && p != (void *)-1 && strcmp(p, "child-data") == 0 &&
        msgrcv(msg, &back, sizeof back.text, 4, IPC_NOWAIT) >= 0 &&
        strcmp(back.text, "from-child") == 0 && semctl(sem, 0, GETVAL) == 5 && k >= 0)
        printf("OWN-FORK-OK\n");
    if (p != (void *)-1) shmdt(p);
    return k;
}

/* The commands that read the namespace's table by index or count it. */
static void own_info(void)
{
    struct shm_info si;
    struct msginfo mi;
    struct seminfo ei;
    struct shmid_ds sd;
    union semun u = {.buf = (struct semid_ds *)(void *)&ei};
    int n = 0;
    n += shmctl(0, IPC_INFO, (struct shmid_ds *)(void *)&si) < 0 && errno == EPERM;
    n += shmctl(0, SHM_INFO, (struct shmid_ds *)(void *)&si) < 0 && errno == EPERM;
    n += shmctl(0, SHM_STAT, &sd) < 0 && errno == EPERM;
    n += msgctl(0, MSG_INFO, (struct msqid_ds *)(void *)&mi) < 0 && errno == EPERM;
    n += semctl(0, 0, SEM_INFO, u) < 0 && errno == EPERM;
    if (n == 5) printf("OWN-INFO-EPERM\n");
}

static int own(int key)
{
    /* A segment of its own: two attachments see one memory. */
    int shm = shmget(IPC_PRIVATE, SHM_SIZE, IPC_CREAT | 0600);
    char *a = shm >= 0 ? shmat(shm, NULL, 0) : (void *)-1;
    char *b = shm >= 0 ? shmat(shm, NULL, SHM_RDONLY) : (void *)-1;
    if (a == (void *)-1 || b == (void *)-1) {
        perror("own shm");
        return 1;
    }
    strcpy(a, "own-data");
    struct shmid_ds ds;
    if (strcmp(b, "own-data") == 0 && shmctl(shm, IPC_STAT, &ds) == 0 && ds.shm_nattch == 2)
        printf("OWN-SHM-OK\n");
    shmdt(a);
    shmdt(b);
    /* By key: made, then found again under the same key. */
    int k1 = shmget(key, SHM_SIZE, IPC_CREAT | 0600), k2 = shmget(key, 0, 0);
    if (k1 >= 0 && k1 == k2) printf("OWN-KEY-OK\n");
    int msg = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
    struct msg m = {3, "own-message"}, back;
    if (msg >= 0 && msgsnd(msg, &m, sizeof m.text, 0) == 0 &&
        msgrcv(msg, &back, sizeof back.text, 3, IPC_NOWAIT) >= 0 &&
        strcmp(back.text, "own-message") == 0)
        printf("OWN-MSG-OK\n");
    int sem = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
    union semun u = {.val = 5};
    struct sembuf op = {0, -1, IPC_NOWAIT};
    if (sem >= 0 && semctl(sem, 0, SETVAL, u) == 0 && semop(sem, &op, 1) == 0 &&
        semctl(sem, 0, GETVAL) == 4)
        printf("OWN-SEM-OK\n");
    int kf = own_fork(shm, msg, sem, key);
    own_info();
    /* Removed by the program itself, then gone for it too. */
    int tmp = shmget(IPC_PRIVATE, SHM_SIZE, IPC_CREAT | 0600);
    if (tmp >= 0 && shmctl(tmp, IPC_RMID, NULL) == 0 && shmctl(tmp, IPC_STAT, &ds) < 0)
        printf("OWN-RMID-OK\n");
    printf("OWN-IDS shm:%d shm:%d msg:%d sem:%d shm:%d\n", shm, k1, msg, sem, kf);
    return 0;
}

static int gone(int argc, char **argv)
{
    int left = 0;
    for (int i = 0; i < argc; i++) {
        int id = atoi(strchr(argv[i], ':') ? strchr(argv[i], ':') + 1 : argv[i]);
        struct shmid_ds sd;
        struct msqid_ds md;
        int there = strncmp(argv[i], "shm:", 4) == 0   ? shmctl(id, IPC_STAT, &sd) == 0
                    : strncmp(argv[i], "msg:", 4) == 0 ? msgctl(id, IPC_STAT, &md) == 0
                                                       : semctl(id, 0, GETVAL) >= 0;
        if (there) {
            printf("LEFT %s\n", argv[i]);
            left = 1;
        }
    }
    if (!left) printf("GONE\n");
    return 0;
}

static int mq(const char *how, const char *name)
{
    char buf[8192];
    if (strcmp(how, "mqmake") == 0) {
        mqd_t q = mq_open(name, O_CREAT | O_EXCL | O_RDWR, 0600, NULL);
        if (q == (mqd_t)-1 || mq_send(q, SECRET, sizeof SECRET, 0) < 0) {
            perror("mqmake");
            return 1;
        }
        return 0;
    }
    if (strcmp(how, "mqattack") == 0) {
        printf("M-mq\n");
        mqd_t q = mq_open(name, O_RDWR | O_NONBLOCK);
        if (q != (mqd_t)-1) {
            leak("mq-open", 0);
            if (mq_receive(q, buf, sizeof buf, NULL) >= 0)
                leak(strcmp(buf, SECRET) == 0 ? "mq-read-secret" : "mq-read", 0);
        }
        if (mq_unlink(name) == 0) leak("mq-unlink", 0);
        printf("M-mq-end\n");
        return 0;
    }
    if (strcmp(how, "mqintact") == 0) {
        struct mq_attr a;
        mqd_t q = mq_open(name, O_RDONLY);
        int ok = q != (mqd_t)-1 && mq_getattr(q, &a) == 0 && a.mq_curmsgs == 1;
        printf(ok ? "INTACT\n" : "NOT-INTACT mq\n");
        return !ok;
    }
    return mq_unlink(name) == 0 ? 0 : 1;
}

#if defined(__x86_64__)
static long int80(long nr, long a, long b, long c, long d)
{
    long ret;
    __asm__ volatile("int $0x80"
                     : "=a"(ret)
                     : "a"(nr), "b"(a), "c"(b), "d"(c), "S"(d), "D"(0L)
                     : "memory", "r8", "r9", "r10", "r11");
    return (long)(int)ret;
}

static void compat_one(const char *name, long r)
{
    if (r >= 0) {
        shmctl((int)r, IPC_RMID, NULL);
        printf("COMPAT %s ok\n", name);
    } else {
        printf("COMPAT %s %s\n", name, strerrorname_np((int)-r));
    }
}

/* int 0x80 kills a process where the i386 entry is off: tried in a child
 * first. */
static int compat(void)
{
    pid_t pid = fork();
    if (pid == 0) _exit(int80(20 /* getpid */, 0, 0, 0, 0) > 0 ? 0 : 1);
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
        printf("COMPAT-NONE\n");
        return 0;
    }
    /* ipc(SHMGET = 23, key, size, flags) and shmget (395) */
    compat_one("ipc(SHMGET)", int80(117, 23, IPC_PRIVATE, 4096, IPC_CREAT | 0600));
    compat_one("shmget", int80(395, IPC_PRIVATE, 4096, IPC_CREAT | 0600, 0));
    return 0;
}
#else
static int compat(void)
{
    printf("COMPAT-NONE\n");
    return 0;
}
#endif

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 3 && strcmp(argv[1], "make") == 0) return make(atoi(argv[2]));
    if (argc == 6 && strcmp(argv[1], "intact") == 0)
        return intact(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
    if (argc == 5 && strcmp(argv[1], "remove") == 0) {
        shmctl(atoi(argv[2]), IPC_RMID, NULL);
        msgctl(atoi(argv[3]), IPC_RMID, NULL);
        semctl(atoi(argv[4]), 0, IPC_RMID);
        return 0;
    }
    if (argc == 6 && strcmp(argv[1], "attack") == 0)
        return attack(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
    if (argc == 3 && strcmp(argv[1], "own") == 0) return own(atoi(argv[2]));
    if (argc >= 2 && strcmp(argv[1], "gone") == 0) return gone(argc - 2, argv + 2);
    if (argc == 3 && strncmp(argv[1], "mq", 2) == 0) return mq(argv[1], argv[2]);
    if (argc == 2 && strcmp(argv[1], "compat") == 0) return compat();
    fprintf(stderr, "usage: see sysvipc.c\n");
    return 2;
}
