/* supervise.c - worker processes (book 10.2): the program forks one per
 * device; this watches them to the end, and stops them all when one fails or
 * a signal comes, so that nobody waits forever at a barrier and no worker
 * outlives its parent.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mgpu-private.h"

/* How long a worker has between SIGTERM and SIGKILL, and how often the
 * parent looks at its workers when nothing happens. */
#define GRACE_S 0.5
#define TICK_NS 50000000L

struct mgpu_workers {
    int started, running;
    pid_t parent;                /* the process that forks them */
    pid_t pid[MGPU_MAX_DEVICES]; /* 0 once reaped */
    char why[200];               /* the first bad end: a fork that failed, a
                                    worker that died or exited unreported */
    long long oom_kills;         /* mgpu_oom_kills before the forks */
    sigset_t watched, old_mask;  /* the signals blocked while they run, and
                                    the mask before, which the workers get */
    struct sigaction old_chld;
};

static void signal_all(const mgpu_workers *w, int sig)
{
    for (int p = 0; p < w->started; p++)
        if (w->pid[p])
            kill(w->pid[p], sig);
}

void mgpu_killed_text(int signo, long long oom_before, char *text, size_t size)
{
    /* SIGKILL is what the out-of-memory killer sends; its count going up
     * while the child ran says it was that, not a user's kill -9 (another
     * process killed at the same moment would look the same: rare). */
    long long oom_after = signo == SIGKILL && oom_before >= 0 ? mgpu_oom_kills() : -1;
    if (oom_after > oom_before)
        snprintf(text, size, "killed by the kernel's out-of-memory killer (signal %d)", signo);
    else
        snprintf(text, size, "killed by signal %d (%s)", signo, strsignal(signo));
}

/* Say in W's why how worker P (PID) ended, if it ended badly: R and STATUS
 * are what waitpid gave.  A worker that fails reports why itself, and
 * exits 1. */
static void describe_end(mgpu_workers *w, int p, pid_t pid, pid_t r, int status)
{
    char *why = w->why;
    size_t size = sizeof w->why;
    if (r < 0) {
        snprintf(why, size, "worker %d (pid %ld): waitpid: %s", p, (long) pid, strerror(errno));
    } else if (WIFSIGNALED(status)) {
        char killed[96];
        mgpu_killed_text(WTERMSIG(status), w->oom_kills, killed, sizeof killed);
        snprintf(why, size, "worker %d (pid %ld) was %s", p, (long) pid, killed);
    } else if (WEXITSTATUS(status) != 0)
        snprintf(why, size, "worker %d (pid %ld) exited with status %d", p, (long) pid,
                 WEXITSTATUS(status));
}

/* Collect the workers that have ended, describing the first bad end. */
static void reap(mgpu_workers *w)
{
    for (int p = 0; p < w->started; p++) {
        if (!w->pid[p])
            continue;
        int status = 0;
        pid_t r = waitpid(w->pid[p], &status, WNOHANG);
        if (r == 0 || (r < 0 && errno == EINTR))
            continue;
        if (!w->why[0])
            describe_end(w, p, w->pid[p], r, status);
        w->pid[p] = 0;
        w->running--;
    }
}

/* Wait until every worker has ended.  When one fails, or SIGINT or SIGTERM
 * comes, the others get SIGTERM, and SIGKILL if they are still there after
 * GRACE_S.  The signals are blocked and taken with sigtimedwait: one that
 * comes while the parent is busy stays pending until it looks. */
static void supervise(mgpu_workers *w, int *interrupted)
{
    bool stopping = false, killed = false;
    double kill_at = 0.0;
    for (;;) {
        reap(w);
        if (w->running == 0)
            return;
        if (!stopping && (w->why[0] || *interrupted)) {
            signal_all(w, SIGTERM);
            stopping = true;
            kill_at = mgpu_now() + GRACE_S;
        } else if (stopping && !killed && mgpu_now() >= kill_at) {
            signal_all(w, SIGKILL);
            killed = true;
        }
        struct timespec tick = {0, TICK_NS};
        int sig = sigtimedwait(&w->watched, NULL, &tick);
        if ((sig == SIGINT || sig == SIGTERM) && !*interrupted)
            *interrupted = sig;
    }
}

/* The signals the parent watches while workers run.  One that the program
 * was started ignoring (a shell starts background jobs ignoring SIGINT)
 * stays ignored. */
static void watched_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGCHLD);
    const int stop[2] = {SIGINT, SIGTERM};
    for (int k = 0; k < 2; k++) {
        struct sigaction now;
        if (sigaction(stop[k], NULL, &now) == 0 && now.sa_handler != SIG_IGN)
            sigaddset(set, stop[k]);
    }
}

mgpu_status mgpu_workers_create(mgpu_workers **workers, int n)
{
    *workers = NULL;
    if (n < 1 || n > MGPU_MAX_DEVICES)
        return mgpu_fail(MGPU_ERR_USAGE, "worker processes: %d is out of range 1..%d", n,
                         MGPU_MAX_DEVICES);
    mgpu_workers *w = calloc(1, sizeof *w);
    if (!w)
        return mgpu_fail(MGPU_ERR_NOMEM, "worker processes: out of host memory");
    w->parent = getpid();
    w->oom_kills = mgpu_oom_kills();
    /* SIGCHLD must not be ignored, or the children's exit statuses are lost. */
    struct sigaction chld = {.sa_handler = SIG_DFL};
    sigemptyset(&chld.sa_mask);
    sigaction(SIGCHLD, &chld, &w->old_chld);
    watched_signals(&w->watched);
    sigprocmask(SIG_BLOCK, &w->watched, &w->old_mask);
    fflush(NULL); /* a child must not write the parent's buffered output again */
    *workers = w;
    return MGPU_OK;
}

/* Each child dies with the parent, whatever ends the parent (SIGKILL
 * included): PR_SET_PDEATHSIG.  The parent may have died before the child
 * asked for that, in which case the child is now someone else's: getppid()
 * tells. */
void mgpu_workers_enter(const mgpu_workers *w)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != w->parent)
        _exit(EXIT_FAILURE);
    sigprocmask(SIG_SETMASK, &w->old_mask, NULL);
}

int mgpu_workers_add(mgpu_workers *w, int index, pid_t pid)
{
    if (pid < 0) {
        /* The workers already running wait at the first barrier until
         * the parent stops them. */
        snprintf(w->why, sizeof w->why, "fork of worker %d: %s", index, strerror(errno));
        return 0;
    }
    w->pid[index] = pid;
    w->started = index + 1;
    w->running++;
    return 1;
}

mgpu_status mgpu_workers_wait(mgpu_workers *w, int *interrupted)
{
    supervise(w, interrupted);
    sigprocmask(SIG_SETMASK, &w->old_mask, NULL);
    sigaction(SIGCHLD, &w->old_chld, NULL);
    char why[sizeof w->why];
    memcpy(why, w->why, sizeof why);
    free(w);
    if (*interrupted)
        return mgpu_fail(MGPU_ERR_INTERRUPTED, "interrupted by %s; every worker was stopped",
                         *interrupted == SIGINT ? "SIGINT" : "SIGTERM");
    if (why[0])
        return mgpu_fail(MGPU_ERR_SYSTEM, "%s", why);
    return MGPU_OK;
}
