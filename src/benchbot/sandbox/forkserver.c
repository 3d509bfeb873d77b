/* benchbot's fork server: the small process that starts and times every run, so that a
 * run's peak memory starts from this process's few hundred KiB rather than from the
 * Python process that asks for it (src/benchbot/sandbox/forkserver.py says why and how). Runs
 * are started with vfork: the child borrows this process's address space until its exec
 * (so the floor of a run's peak is this process's own high-water mark), and nothing is
 * copied inside the timed region.
 *
 * Usage: forkserver FD, where FD is a stream socket to the process that asks. Requests
 * are an 8-byte header (one command byte, three zero bytes, the payload's length as a
 * native uint32) carrying file descriptors (SCM_RIGHTS), then the payload:
 *
 *   'R' a run; descriptors: its stdin, stdout, stderr; payload: NUL-terminated fields
 *       timeout_ms, pin ("" or "0,2,3"), cwd, program, argc, argv[0..argc-1], then every
 *       remaining field is an environment entry. Answer (one line):
 *       "R wall_ns status utime_us stime_us maxrss_kib timed_out stage errno leftovers"
 *       stage: '-' it ran; 'c' chdir, 'p' the CPU pin, 'f' fork, 'e' exec failed (errno).
 *   'F' the floor: the peak RSS (KiB) a run started from here has before its exec (a
 *       vfork child reads it). Answer "F kib".
 *   'T' the CPU time (µs) this process and the children it reaped used so far. Answer
 *       "T us".
 *   'P' a perf counter on this process (perf_event_open(attr, 0, -1, -1, CLOEXEC));
 *       payload: the perf_event_attr. Answer "P errno", with the counter's descriptor
 *       when errno is 0 (this process keeps no copy of it).
 *
 * It ends when the socket closes. It is undumpable (a run, the same user, can neither
 * ptrace it nor open /proc/<it>/fd) and a child subreaper: what a run left running comes
 * back to it, and is killed and reaped before the answer (the answer says how many).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef PERF_FLAG_FD_CLOEXEC
#define PERF_FLAG_FD_CLOEXEC 8UL
#endif

#define MAX_FDS 3
#define MAX_PAYLOAD (64u << 20)

static int sock = -1;
/* Written by a vfork child, which shares this process's memory until its exec. */
static volatile int exec_errno;
static volatile struct rusage probed;

static void die(const char *what)
{
    fprintf(stderr, "benchbot fork server: %s: %s\n", what, strerror(errno));
    exit(3);
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Read exactly n bytes; 0 at a clean end of input before the first byte, 1 when read. */
static int read_exact(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            die("read");
        if (r == 0) {
            if (got == 0)
                return 0;
            errno = EPROTO;
            die("a request cut short");
        }
        got += (size_t)r;
    }
    return 1;
}

/* The header and the descriptors it carries; 0 at the end of input. */
static int read_header(unsigned char header[8], int fds[MAX_FDS], int *nfds)
{
    union {
        char buf[CMSG_SPACE(sizeof(int) * MAX_FDS)];
        struct cmsghdr align;
    } control;
    struct iovec iov = {header, 8};
    struct msghdr msg = {0};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.buf;
    msg.msg_controllen = sizeof control.buf;
    ssize_t r;
    do
        r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        die("recvmsg");
    if (r == 0)
        return 0;
    *nfds = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            for (int i = 0; i < n; i++) {
                int fd;
                memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                if (*nfds < MAX_FDS)
                    fds[(*nfds)++] = fd;
                else
                    close(fd);
            }
        }
    }
    if (r < 8 && !read_exact(sock, header + r, 8 - (size_t)r)) {
        errno = EPROTO;
        die("a header cut short");
    }
    return 1;
}

static void send_answer(const char *text, int fd)
{
    struct iovec iov = {(void *)text, strlen(text)};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr msg = {0};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (fd >= 0) {
        msg.msg_control = control.buf;
        msg.msg_controllen = sizeof control.buf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    while (sendmsg(sock, &msg, MSG_NOSIGNAL) < 0) {
        if (errno != EINTR)
            die("sendmsg");
    }
}

/* --- what a run left behind -------------------------------------------------------- */

struct proc {
    pid_t pid, ppid;
};

/* Every process this one can see, with its parent (from /proc/N/stat). */
static struct proc *list_processes(size_t *count)
{
    size_t cap = 256, n = 0;
    struct proc *all = malloc(cap * sizeof *all);
    DIR *dir = opendir("/proc");
    if (!all || !dir) {
        free(all);
        if (dir)
            closedir(dir);
        *count = 0;
        return NULL;
    }
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        char path[300], buf[512];
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t len = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (len <= 0)
            continue;
        buf[len] = '\0';
        /* The command name is in parentheses and may hold anything: parse after the last ')'. */
        char *paren = strrchr(buf, ')');
        char state;
        int ppid;
        if (!paren || sscanf(paren + 1, " %c %d", &state, &ppid) != 2)
            continue;
        if (n == cap) {
            struct proc *more = realloc(all, 2 * cap * sizeof *all);
            if (!more)
                break;
            all = more;
            cap *= 2;
        }
        all[n].pid = (pid_t)atoi(e->d_name);
        all[n].ppid = (pid_t)ppid;
        n++;
    }
    closedir(dir);
    *count = n;
    return all;
}

/* Kill and reap every process below this one (none of them is wanted after a run: the
 * run itself is reaped), again until none is left (one may fork while the others die).
 * Returns how many were found. */
static int end_leftovers(void)
{
    int ended = 0, unseen = 0;
    pid_t me = getpid();
    for (;;) {
        siginfo_t info;
        if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) < 0)
            return ended; /* ECHILD: no child at all, as after nearly every run */
        size_t n;
        struct proc *all = list_processes(&n);
        if (!all)
            return ended;
        /* Mark the processes below this one: repeat until no new one is found. */
        char *below = calloc(n ? n : 1, 1);
        int grew = 1;
        while (below && grew) {
            grew = 0;
            for (size_t i = 0; i < n; i++) {
                if (below[i])
                    continue;
                int under = all[i].ppid == me;
                for (size_t j = 0; !under && j < n; j++)
                    under = below[j] && all[j].pid == all[i].ppid;
                if (under)
                    below[i] = grew = 1;
            }
        }
        int found = 0;
        for (size_t i = 0; below && i < n; i++) {
            if (below[i]) {
                kill(all[i].pid, SIGKILL);
                found++;
            }
        }
        for (size_t i = 0; below && i < n; i++) {
            if (below[i] && all[i].ppid == me)
                waitpid(all[i].pid, NULL, 0);
        }
        free(below);
        free(all);
        ended += found;
        if (!found) { /* none seen in /proc (another PID namespace's?): reap what ended */
            while (waitpid(-1, NULL, WNOHANG) > 0)
                ended++;
            if (++unseen > 100)
                return ended;
            struct timespec pause = {0, 1000000};
            nanosleep(&pause, NULL);
        }
    }
}

/* --- a run --------------------------------------------------------------------------- */

static int pin_to(const char *list, cpu_set_t *previous)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof *previous, previous) < 0)
        return -1;
    for (const char *p = list; *p;) {
        char *end;
        long cpu = strtol(p, &end, 10);
        if (end == p || cpu < 0 || cpu >= CPU_SETSIZE) {
            errno = EINVAL;
            return -1;
        }
        CPU_SET((int)cpu, &set);
        p = *end == ',' ? end + 1 : end;
    }
    return sched_setaffinity(0, sizeof set, &set);
}

/* The payload's fields: pointers to its NUL-terminated strings (NULL on a bad payload). */
static char **fields_of(char *payload, size_t length, size_t *count)
{
    size_t n = 0;
    for (size_t i = 0; i < length; i++)
        n += payload[i] == '\0';
    if (length == 0 || payload[length - 1] != '\0')
        return NULL;
    char **out = malloc((n + 1) * sizeof *out);
    if (!out)
        return NULL;
    char *p = payload;
    for (size_t i = 0; i < n; i++) {
        out[i] = p;
        p += strlen(p) + 1;
    }
    out[n] = NULL;
    *count = n;
    return out;
}

static void run(char *payload, size_t length, const int fds[MAX_FDS], int nfds)
{
    char answer[256];
    size_t n = 0;
    char **f = fields_of(payload, length, &n);
    long argc = n > 4 ? strtol(f[4], NULL, 10) : -1;
    if (!f || nfds != MAX_FDS || argc < 1 || (size_t)argc > n - 5) {
        snprintf(answer, sizeof answer, "E a bad run request\n");
        send_answer(answer, -1);
        free(f);
        return;
    }
    long timeout_ms = strtol(f[0], NULL, 10);
    const char *pin = f[1], *cwd = f[2], *program = f[3];
    char **envp = f + 5 + argc; /* the rest, NULL-terminated by fields_of */
    char **argv = malloc(((size_t)argc + 1) * sizeof *argv);
    if (!argv)
        die("malloc");
    memcpy(argv, f + 5, (size_t)argc * sizeof *argv);
    argv[argc] = NULL;

    char stage = '-';
    int err = 0, status = 0, timed_out = 0;
    struct rusage usage;
    memset(&usage, 0, sizeof usage);
    int64_t start = 0, end = 0;
    cpu_set_t previous;
    int pinned = 0;
    if (*pin) {
        if (pin_to(pin, &previous) < 0) {
            stage = 'p';
            err = errno;
        } else {
            pinned = 1;
        }
    }
    if (stage == '-' && chdir(cwd) < 0) {
        stage = 'c';
        err = errno;
    }
    pid_t pid = -1;
    if (stage == '-') {
        exec_errno = 0;
        start = now_ns();
        pid = vfork(); /* this process waits until the child's exec (or exit) */
        if (pid == 0) {
            dup2(fds[0], 0);
            dup2(fds[1], 1);
            dup2(fds[2], 2);
            setsid();
            execve(program, argv, envp);
            exec_errno = errno; /* our memory is this process's until _exit */
            _exit(127);
        }
        if (pid < 0) {
            stage = 'f';
            err = errno;
        } else {
            int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
            if (pidfd >= 0) {
                struct pollfd p = {pidfd, POLLIN, 0};
                int waited;
                do
                    waited = poll(&p, 1, timeout_ms > INT_MAX ? INT_MAX : (int)timeout_ms);
                while (waited < 0 && errno == EINTR);
                if (waited == 0) {
                    timed_out = 1;
                    kill(-pid, SIGKILL);
                    kill(pid, SIGKILL);
                }
                close(pidfd);
            }
            while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR)
                ;
            end = now_ns();
            if (exec_errno) {
                stage = 'e';
                err = exec_errno;
            }
        }
    }
    if (pinned)
        sched_setaffinity(0, sizeof previous, &previous);
    int leftovers = 0;
    if (pid > 0) {
        kill(-pid, SIGKILL); /* whatever the run left behind, in its group */
        leftovers = end_leftovers(); /* and outside it */
    }
    snprintf(answer, sizeof answer, "R %lld %d %lld %lld %ld %d %c %d %d\n",
             (long long)(end - start), status,
             (long long)usage.ru_utime.tv_sec * 1000000 + usage.ru_utime.tv_usec,
             (long long)usage.ru_stime.tv_sec * 1000000 + usage.ru_stime.tv_usec,
             usage.ru_maxrss, timed_out, stage, err, leftovers);
    send_answer(answer, -1);
    free(argv);
    free(f);
}

/* The peak RSS a run started from here has before its exec: a child started as a run is
 * reads it (its address space is this process's until it execs). */
static void floor_probe(void)
{
    char answer[64];
    probed.ru_maxrss = -1;
    pid_t pid = vfork();
    if (pid == 0) {
        getrusage(RUSAGE_SELF, (struct rusage *)&probed);
        _exit(0);
    }
    if (pid > 0)
        waitpid(pid, NULL, 0);
    snprintf(answer, sizeof answer, "F %ld\n", pid > 0 ? probed.ru_maxrss : -1L);
    send_answer(answer, -1);
}

static void cpu_time(void)
{
    char answer[64];
    struct rusage self, children;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    long long us = 0;
    const struct timeval *all[] = {&self.ru_utime, &self.ru_stime, &children.ru_utime,
                                   &children.ru_stime};
    for (int i = 0; i < 4; i++)
        us += (long long)all[i]->tv_sec * 1000000 + all[i]->tv_usec;
    snprintf(answer, sizeof answer, "T %lld\n", us);
    send_answer(answer, -1);
}

static void perf_open(const char *attr, size_t length)
{
    char answer[64];
    if (length < 64) {
        send_answer("E a perf attribute shorter than 64 bytes\n", -1);
        return;
    }
    int fd = (int)syscall(SYS_perf_event_open, attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    snprintf(answer, sizeof answer, "P %d\n", fd < 0 ? errno : 0);
    send_answer(answer, fd);
    if (fd >= 0)
        close(fd);
}

/* Signals as a fresh program expects them (the asking process may ignore SIGPIPE, and
 * an ignored signal stays ignored across exec), and no descriptor but 0-2 and the socket. */
static void start_clean(void)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* The raw call: the C library refuses its own real-time signals, which an asking
     * process may have ignored too. */
    struct {
        void (*handler)(int);
        unsigned long flags;
        void (*restorer)(void);
        uint64_t mask;
    } default_action = {SIG_DFL, 0, NULL, 0};
    for (int s = 1; s <= 64; s++) {
        if (s != SIGKILL && s != SIGSTOP)
            syscall(SYS_rt_sigaction, s, &default_action, NULL, sizeof(uint64_t));
    }
    DIR *dir = opendir("/proc/self/fd");
    if (dir) {
        int own = dirfd(dir);
        struct dirent *e;
        while ((e = readdir(dir)) != NULL) {
            int fd = atoi(e->d_name);
            if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && fd > 2 && fd != sock && fd != own)
                close(fd);
        }
        closedir(dir);
    }
    fcntl(sock, F_SETFD, FD_CLOEXEC);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s SOCKET_FD\n", argv[0]);
        return 2;
    }
    sock = atoi(argv[1]);
    start_clean();
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    char *payload = NULL;
    size_t capacity = 0;
    for (;;) {
        unsigned char header[8];
        int fds[MAX_FDS], nfds = 0;
        if (!read_header(header, fds, &nfds))
            return 0;
        uint32_t length;
        memcpy(&length, header + 4, sizeof length);
        if (length > MAX_PAYLOAD) {
            errno = EMSGSIZE;
            die("a request too long");
        }
        if (length + 1 > capacity) {
            free(payload);
            capacity = length + 1;
            payload = malloc(capacity);
            if (!payload)
                die("malloc");
        }
        if (length && !read_exact(sock, payload, length)) {
            errno = EPROTO;
            die("a payload cut short");
        }
        payload[length] = '\0';
        switch (header[0]) {
        case 'R':
            run(payload, length, fds, nfds);
            break;
        case 'F':
            floor_probe();
            break;
        case 'T':
            cpu_time();
            break;
        case 'P':
            perf_open(payload, length);
            break;
        default:
            send_answer("E an unknown command\n", -1);
        }
        for (int i = 0; i < nfds; i++)
            close(fds[i]);
        if (capacity > (64u << 10)) { /* a large request's buffer would raise the floor */
            free(payload);
            payload = NULL;
            capacity = 0;
        }
    }
}
