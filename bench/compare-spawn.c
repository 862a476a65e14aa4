/* compare-spawn.c - run one program as a child process and collect what it
 * prints: fork and exec with its stdout and stderr on two pipes, read with
 * poll so that neither pipe can fill up and stall the child, and a time
 * limit.  No run outlives mgpu-compare:
 *  - the child leads a process group of its own, and every signal
 *    mgpu-compare sends goes to the whole group: what the child started
 *    (mpirun's ranks, mgpu-fork's workers) stops with it, and whatever of
 *    the group is left when the child has ended is killed;
 *  - when mgpu-compare dies, whatever ends it (SIGKILL included), the
 *    child's group gets SIGKILL from a small process forked for each run
 *    (watchdog) that waits on a pipe from mgpu-compare and sees its end
 *    when mgpu-compare is gone;
 *  - SIGINT and SIGTERM of mgpu-compare stop the child's group first
 *    (SIGTERM, then SIGKILL after a grace time); mgpu-compare then ends
 *    by the same signal (compare.c). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "compare.h"
#include "mgpu.h"
#include "mgpu/harness.h"
#include "mgpu/measurement.h"
#include "mgpu/processes.h"

/* A record is one line; this is room for far more than any program says. */
#define OUT_LIMIT ((size_t) 1 << 20)
/* After SIGTERM, a child has this long to end before SIGKILL. */
#define GRACE_S 5.0
/* After the child has ended, how long what it left may hold its pipes. */
#define LINGER_S 2.0

static volatile sig_atomic_t interrupted;

static void on_signal(int signo) { interrupted = signo; }

int cmp_interrupted(void) { return interrupted; }

void cmp_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* No SA_RESTART: poll returns with EINTR, and the child is stopped. */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

void cmp_output_free(cmp_output *output)
{
    free(output->out);
    output->out = NULL;
}

void cmp_ended(const cmp_output *o, char *text, size_t size)
{
    if (o->signal)
        mgpu_killed_text(o->signal, o->oom_before, text, size);
    else
        snprintf(text, size, "exit %d", o->exit_code);
}

/* Append N bytes to the child's stdout, up to OUT_LIMIT. */
static void keep_out(cmp_output *o, size_t *len, const char *buf, size_t n)
{
    if (*len + n > OUT_LIMIT)
        n = OUT_LIMIT - *len;
    memcpy(o->out + *len, buf, n);
    *len += n;
    o->out[*len] = '\0';
}

/* Keep the last bytes of stderr: the message that explains a failure
 * comes last.  When the start is dropped, the line it cut goes too, so
 * that every line kept is whole. */
static void keep_err(cmp_output *o, size_t *len, const char *buf, size_t n)
{
    size_t room = sizeof o->err - 1;
    int cut = 0;
    if (n >= room) {
        memcpy(o->err, buf + n - room, room);
        cut = n > room || *len > 0;
        *len = room;
    } else {
        if (*len + n > room) {
            size_t drop = *len + n - room;
            memmove(o->err, o->err + drop, *len - drop);
            *len -= drop;
            cut = 1;
        }
        memcpy(o->err + *len, buf, n);
        *len += n;
    }
    o->err[*len] = '\0';
    char *newline = cut ? memchr(o->err, '\n', *len) : NULL;
    if (cut) {
        size_t drop = newline ? (size_t) (newline + 1 - o->err) : *len;
        memmove(o->err, o->err + drop, *len - drop + 1);
        *len -= drop;
    }
}

/* The watchdog of one run: it reads the child's process group from
 * LIFELINE, then waits.  A byte from mgpu-compare means the run is over;
 * the end of the pipe without one means mgpu-compare died, and the group
 * is killed.  It outlives mgpu-compare by that moment alone; the signals
 * that stop mgpu-compare (a Ctrl-C reaches the whole foreground group) do
 * not stop it. */
static void watchdog(int lifeline)
{
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    pid_t group;
    char done;
    ssize_t n;
    while ((n = read(lifeline, &group, sizeof group)) < 0 && errno == EINTR)
        ;
    if (n != (ssize_t) sizeof group)
        _exit(0);
    while ((n = read(lifeline, &done, 1)) < 0 && errno == EINTR)
        ;
    if (n == 0 && group > 0)
        kill(-group, SIGKILL);
    _exit(0);
}

/* Fork the watchdog: its pid, and the pipe's end to write in *LIFELINE;
 * -1 when it could not be forked. */
static pid_t start_watchdog(int *lifeline)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[1]);
        watchdog(fds[0]);
    }
    close(fds[0]);
    if (pid < 0)
        close(fds[1]);
    else
        *lifeline = fds[1];
    return pid;
}

/* The run is over: the watchdog goes without killing anything. */
static void stop_watchdog(pid_t pid, int lifeline)
{
    char done = 1;
    ssize_t n = write(lifeline, &done, 1);
    (void) n;
    close(lifeline);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

/* In the child, between fork and exec: its own process group, death with
 * the parent, stdin from /dev/null, the two pipes, the folder.  What fails
 * is told to the parent through REPORT (errno), and the child exits 127. */
static void child(char *const argv[], const char *dir, pid_t parent, int out_fd, int err_fd,
                  int report)
{
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    setpgid(0, 0);
#ifdef __linux__
    /* The child's own SIGKILL when mgpu-compare dies; alone it would spare
     * the rest of the group, and some kernels (gVisor's) do not honour it:
     * the watchdog is what holds.  The parent may have died before this
     * line: then getppid() is another process's pid. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
        _exit(127);
#else
    (void) parent;
#endif
    /* What mgpu-compare ignores (mgpu_program_start), gnuplot and a
     * launcher get as they expect it. */
    signal(SIGPIPE, SIG_DFL);
    signal(SIGXFSZ, SIG_DFL);
    if (null >= 0 && dup2(null, STDIN_FILENO) >= 0 && dup2(out_fd, STDOUT_FILENO) >= 0 &&
        dup2(err_fd, STDERR_FILENO) >= 0 && (!dir || chdir(dir) == 0))
        execvp(argv[0], argv);
    int err = errno;
    ssize_t n = write(report, &err, sizeof err);
    (void) n;
    _exit(127);
}

/* Start ARGV in DIR; 0, or the errno of what failed. */
static int start(char *const argv[], const char *dir, int out_fd, int err_fd, pid_t *pid)
{
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0)
        return errno;
    pid_t parent = getpid();
    *pid = fork();
    if (*pid == 0)
        child(argv, dir, parent, out_fd, err_fd, report[1]);
    int err = *pid < 0 ? errno : 0;
    close(report[1]);
    if (*pid > 0) {
        /* Also here, so that a signal to the group cannot come before the
         * child made it. */
        setpgid(*pid, *pid);
        int child_err;
        ssize_t n;
        while ((n = read(report[0], &child_err, sizeof child_err)) < 0 && errno == EINTR)
            ;
        if (n == (ssize_t) sizeof child_err) {
            err = child_err;
            while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
                ;
        }
    }
    close(report[0]);
    return err;
}

/* Read both pipes until both are closed and the child has ended (into
 * *WSTATUS; 0, or the errno of a waitpid that failed), stopping the child's group when its time is up or when we are
 * interrupted.  Neither can keep mgpu-compare waiting past its time: a
 * child that closes its pipes early is still waited for within its time,
 * and pipes that something else holds open after the child has ended (a
 * process that left its group: setsid, a daemon) are given up LINGER_S
 * later. */
static int collect(pid_t pid, int fds[2], double timeout_s, cmp_output *o, int *wstatus)
{
    size_t out_len = 0, err_len = 0;
    double begin = mgpu_now(), killed_at = 0, ended_at = 0;
    int open_fds = 2, reaped = 0, wait_errno = 0;
    while (open_fds > 0 || !reaped) {
        struct pollfd p[2] = {{.fd = fds[0], .events = POLLIN}, {.fd = fds[1], .events = POLLIN}};
        double now = mgpu_now();
        if (!reaped) {
            pid_t r = waitpid(pid, wstatus, WNOHANG);
            if (r == pid || (r < 0 && errno != EINTR)) {
                wait_errno = r < 0 ? errno : 0;
                reaped = 1;
                ended_at = now;
            }
        }
        if (reaped && now - ended_at > LINGER_S)
            break;
        int stop = !reaped && (interrupted || now - begin > timeout_s);
        if (stop && killed_at == 0) {
            o->timed_out = !interrupted;
            kill(-pid, SIGTERM);
            killed_at = now;
        } else if (!reaped && killed_at > 0 && now - killed_at > GRACE_S) {
            kill(-pid, SIGKILL);
        }
        if (poll(p, 2, reaped ? 50 : 200) < 0 && errno != EINTR)
            break;
        for (int k = 0; k < 2; k++) {
            if (fds[k] < 0 || !(p[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char buf[4096];
            ssize_t n = read(fds[k], buf, sizeof buf);
            if (n < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (n <= 0) {
                close(fds[k]);
                fds[k] = -1;
                open_fds--;
            } else if (k == 0) {
                keep_out(o, &out_len, buf, (size_t) n);
            } else {
                keep_err(o, &err_len, buf, (size_t) n);
            }
        }
    }
    for (int k = 0; k < 2; k++) {
        if (fds[k] >= 0)
            close(fds[k]);
    }
    /* Not reaped yet only when poll failed: wait, the group killed. */
    while (!reaped && waitpid(pid, wstatus, 0) < 0) {
        if (errno != EINTR)
            return errno;
        kill(-pid, SIGKILL);
    }
    return wait_errno;
}

int cmp_spawn(char *const argv[], const char *dir, double timeout_s, cmp_output *output,
              char *error, size_t error_size)
{
    memset(output, 0, sizeof *output);
    output->exit_code = -1;
    output->out = malloc(OUT_LIMIT + 1);
    if (!output->out) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    output->out[0] = '\0';
    /* The watchdog first, so that it holds none of the child's pipes. */
    int lifeline;
    pid_t guard = start_watchdog(&lifeline);
    if (guard < 0) {
        snprintf(error, error_size, "fork: %s", strerror(errno));
        return -1;
    }
    int out_pipe[2], err_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) != 0) {
        snprintf(error, error_size, "pipe: %s", strerror(errno));
        stop_watchdog(guard, lifeline);
        return -1;
    }
    if (pipe2(err_pipe, O_CLOEXEC) != 0) {
        snprintf(error, error_size, "pipe: %s", strerror(errno));
        close(out_pipe[0]);
        close(out_pipe[1]);
        stop_watchdog(guard, lifeline);
        return -1;
    }
    pid_t pid = -1;
    double begin = mgpu_now();
    output->oom_before = mgpu_oom_kills();
    int err = start(argv, dir, out_pipe[1], err_pipe[1], &pid);
    close(out_pipe[1]);
    close(err_pipe[1]);
    if (err != 0) {
        output->start_errno = err;
        snprintf(error, error_size, "cannot start %s: %s", argv[0], strerror(err));
        close(out_pipe[0]);
        close(err_pipe[0]);
        stop_watchdog(guard, lifeline);
        return -1;
    }
    ssize_t told = write(lifeline, &pid, sizeof pid);
    (void) told; /* a pipe this new takes a pid whole */
    int fds[2] = {out_pipe[0], err_pipe[0]}, wstatus = 0;
    int wait_errno = collect(pid, fds, timeout_s, output, &wstatus);
    if (wait_errno) {
        kill(-pid, SIGKILL);
        snprintf(error, error_size, "waitpid: %s", strerror(wait_errno));
        stop_watchdog(guard, lifeline);
        return -1;
    }
    /* The child has ended; what it left behind in its group goes too.
     * The group's id cannot be reused while any of the group is alive. */
    if (pid > 0)
        kill(-pid, SIGKILL);
    stop_watchdog(guard, lifeline);
    output->seconds = mgpu_now() - begin;
    if (WIFEXITED(wstatus))
        output->exit_code = WEXITSTATUS(wstatus);
    else if (WIFSIGNALED(wstatus))
        output->signal = WTERMSIG(wstatus);
    return 0;
}

/* mpirun ends its stderr with a banner of dashes after the rank's own
 * error line.  Where no rank said why (mpirun refused to start the job:
 * too few slots, no such program), its own message stands between two
 * banners, a paragraph wrapped over several lines, the first of which
 * says what went wrong: its last line alone read "launch.". */
void cmp_last_line(const char *text, const char *name, char *out, size_t size)
{
    if (size == 0)
        return;
    size_t name_len = name ? strlen(name) : 0;
    const char *own = NULL, *other = NULL, *para = NULL, *para_end = NULL;
    size_t own_len = 0, other_len = 0;
    bool after_banner = false, in_para = false;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t) (end - line) : strlen(line);
        while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\r'))
            len--;
        if (name && len > name_len && strncmp(line, name, name_len) == 0 && line[name_len] == ':') {
            own = line;
            own_len = len;
        } else if (strspn(line, " \t") >= len) {
            in_para = false; /* a blank line ends a paragraph */
        } else if (strspn(line, "- \t") >= len) {
            after_banner = true;
            in_para = false;
        } else {
            other = line;
            other_len = len;
            if (after_banner) { /* a new message: its first paragraph */
                para = line;
                in_para = true;
                after_banner = false;
            }
            if (in_para)
                para_end = line + len;
        }
        line = end ? end + 1 : line + strlen(line);
    }
    const char *from = own ? own : para ? para : other ? other : "";
    const char *to = own ? own + own_len : para ? para_end : from + other_len;
    /* Line breaks (a paragraph's) and the blanks around them become one
     * blank; a text too long for the row ends in "...", never cut without a
     * sign. */
    size_t n = 0;
    const char *c = from;
    while (c < to && n + 1 < size) {
        if (*c == '\n' || *c == '\r') {
            while (n > 0 && out[n - 1] == ' ')
                n--;
            c += strspn(c, "\r\n \t");
            out[n++] = ' ';
        } else {
            out[n++] = *c++;
        }
    }
    if (c < to && size >= 4) {
        memcpy(out + size - 4, "...", 3);
        n = size - 1;
    }
    out[n] = '\0';
    cmp_plain_text(out);
}
