/* The head of tests/security/test_counted_runs.py: argv[1] (or UNITS) units of work,
   done the way argv[2] (or HOW) says, each way a try at a count smaller than the work:
     plain      in this process
     overwrite  in a forked child; then the parent finds valgrind's log among its own
                descriptors and writes "summary: 1000" over the child's out file
     kill       in a forked child, which the parent kills (SIGKILL) once the work is done
     exec       in this process, which then execs itself with no work (exec: count reset)
     execveat   the same through execveat(2) on a descriptor
     setuid     in this process, which then execs a setuid program (su)
     forkexec   in a forked child, which then execs the program with no work
     preload    in a forked child that removes valgrind's preload from its environment and
                execs itself with the work
     link       in a forked child, whose out file the parent makes beforehand as a link to
                a file of its own in the worker's scratch, and writes "summary: 1000" into
                once the child is gone
     linkbeside the same, its own file beside valgrind's directory
     early      in a forked child; the parent writes "summary: 1000" into the child's out
                file while the child still runs (callgrind makes it as a process starts:
                tests/security/test_profiled_runs.py) */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static volatile unsigned long sink;

static void work(long units) {
    for (long i = 0; i < units * 1000; i++) sink = sink * 31 + (unsigned long)i;
}

/* The directory of valgrind's log, found among this process's descriptors ("" if none). */
static void valgrind_dir(char *dir, size_t size) {
    dir[0] = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char link[300], target[4096];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0) continue;
        target[n] = 0;
        char *slash = strrchr(target, '/');
        if (slash && strncmp(slash + 1, "vg.benchbot.", 12) == 0) {
            *slash = 0;
            snprintf(dir, size, "%s", target);
        }
    }
    if (d) closedir(d);
}

static void forge(const char *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return;
    const char *text = "events: Ir\nsummary: 1000\n";
    if (write(fd, text, strlen(text)) < 0) {}
    close(fd);
}

#ifndef UNITS
#define UNITS 0
#define HOW "plain"
#endif

int main(int argc, char **argv) {
    long units = argc > 1 ? atol(argv[1]) : UNITS;
    const char *how = argc > 2 ? argv[2] : HOW;
    char dir[4096], path[4200], own[4200];
    if (strcmp(how, "plain") == 0) { work(units); return 0; }
    if (strcmp(how, "exec") == 0) {
        work(units);
        execl(argv[0], argv[0], "0", "plain", (char *)0);
        return 9;
    }
    if (strcmp(how, "execveat") == 0) {
        work(units);
        int fd = open(argv[0], O_RDONLY | O_CLOEXEC);
        char *args[] = {argv[0], "0", "plain", (char *)0};
        syscall(SYS_execveat, fd, "", args, environ, AT_EMPTY_PATH);
        return 9;
    }
    if (strcmp(how, "setuid") == 0) {
        work(units);
        char *args[] = {"su", "--help", (char *)0};
        execve("/usr/bin/su", args, environ);  /* valgrind will not run it: the exec fails */
        return 0;
    }
    valgrind_dir(dir, sizeof dir);
    int ready[2];
    if (pipe(ready) != 0) return 9;
    pid_t child = fork();
    if (child == 0) {
        close(ready[0]);
        if (strcmp(how, "preload") == 0) {
            unsetenv("LD_PRELOAD");
            char arg[32];
            snprintf(arg, sizeof arg, "%ld", units);
            execl(argv[0], argv[0], arg, "plain", (char *)0);
            _exit(9);
        }
        work(units);
        if (strcmp(how, "forkexec") == 0) execl(argv[0], argv[0], "0", "plain", (char *)0);
        if (write(ready[1], "x", 1) < 0) {}
        if (strcmp(how, "kill") == 0) pause();
        if (strcmp(how, "early") == 0) usleep(300000);  /* the parent writes its file first */
        _exit(0);
    }
    close(ready[1]);
    snprintf(path, sizeof path, "%s/cg.benchbot.%d", dir, (int)child);
    int held = -1;
    if (strncmp(how, "link", 4) == 0 && dir[0]) {
        /* beside the worker's scratch (link), or beside valgrind's directory (linkbeside) */
        snprintf(own, sizeof own, "%s/%s/own.%d", dir,
                 strcmp(how, "link") == 0 ? "../.." : "..", (int)child);
        held = open(own, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (link(own, path) != 0) {}
        unlink(own);
    }
    char c;
    if (read(ready[0], &c, 1) < 0) {}
    if (strcmp(how, "kill") == 0) kill(child, SIGKILL);
    if (strcmp(how, "early") == 0 && dir[0]) forge(path);  /* before valgrind writes it */
    int status;
    waitpid(child, &status, 0);
    if (strcmp(how, "overwrite") == 0 && dir[0]) forge(path);
    if (held >= 0) {
        const char *text = "events: Ir\nsummary: 1000\n";
        if (ftruncate(held, 0) != 0 || pwrite(held, text, strlen(text), 0) < 0) {}
        close(held);
    }
    return 0;
}
