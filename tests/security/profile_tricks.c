/* A run that tries to hide from, or get at, its own time profile (benchbot.timeprofile):
   switches off the perf counters attached to it, renames itself "bwrap" (the process
   whose samples are left out), looks for perf's file and for perf's process, and then
   does its work in hidden_work. What it found goes to ./found.txt. With "nowalk" it
   does not look for files (outside the sandbox: the whole machine). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

static FILE *out;

static int look(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st; (void)flag;
  const char *name = path + ftw->base;
  if (strcmp(path, "/proc") == 0 || strcmp(path, "/sys") == 0 || strcmp(path, "/usr") == 0)
    return FTW_SKIP_SUBTREE;
  if (strstr(name, "perf.data") || strstr(name, "benchbot-timeprofile"))
    fprintf(out, "file %s\n", path);
  return FTW_CONTINUE;
}

__attribute__((noinline)) static double hidden_work(double seconds) {
  struct timespec t0, t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
  double x = 1.0;
  do {
    for (int i = 0; i < 100000; i++) x = x * 1.0000001 + 1e-9;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  } while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
  return x;
}

int main(int argc, char **argv) {
  out = fopen("found.txt", "w");
  if (!out) return 2;
  int r = prctl(PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0);
  fprintf(out, "disable %d %d\n", r, r ? errno : 0);
  prctl(PR_SET_NAME, "bwrap", 0, 0, 0);
  if (argc < 2 || strcmp(argv[1], "nowalk") != 0) nftw("/", look, 32, FTW_PHYS | FTW_ACTIONRETVAL);
  DIR *proc = opendir("/proc");
  struct dirent *e;
  while (proc && (e = readdir(proc))) {
    char p[300], comm[64] = "";
    snprintf(p, sizeof p, "/proc/%s/comm", e->d_name);
    FILE *f = fopen(p, "r");
    if (!f) continue;
    if (fgets(comm, sizeof comm, f) && strncmp(comm, "perf", 4) == 0) fprintf(out, "process %s %s", e->d_name, comm);
    fclose(f);
  }
  if (proc) closedir(proc);
  fclose(out);
  printf("%f\n", hidden_work(0.3));
  return 0;
}
