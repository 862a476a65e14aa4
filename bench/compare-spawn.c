/* compare-spawn.c - run one program as a child process and collect what it
 * prints: posix_spawn with its stdout and stderr on two pipes, read with
 * poll so that neither pipe can fill up and stall the child, and a time
 * limit.  SIGINT and SIGTERM stop the child too, so that no run outlives
 * mgpu-compare. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compare.h"
#include "mgpu.h"

extern char **environ;

/* A record is one line; this is room for far more than any program says. */
#define OUT_LIMIT ((size_t) 1 << 20)
/* After SIGTERM, a child has this long to end before SIGKILL. */
#define GRACE_S 5.0

static volatile sig_atomic_t interrupted;

static void on_signal(int signo)
{
    (void) signo;
    interrupted = 1;
}

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

static int start(char *const argv[], int out_fd, int err_fd, pid_t *pid)
{
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err_fd, STDERR_FILENO);
    int err = strchr(argv[0], '/') ? posix_spawn(pid, argv[0], &actions, NULL, argv, environ)
                                   : posix_spawnp(pid, argv[0], &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    return err;
}

/* Read both pipes until both are closed, stopping the child when its time
 * is up or when we are interrupted. */
static void collect(pid_t pid, int fds[2], double timeout_s, cmp_output *o)
{
    size_t out_len = 0, err_len = 0;
    double begin = mgpu_now(), killed_at = 0;
    int open_fds = 2;
    while (open_fds > 0) {
        struct pollfd p[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
        double now = mgpu_now();
        int stop = interrupted || now - begin > timeout_s;
        if (stop && killed_at == 0) {
            o->timed_out = !interrupted;
            kill(pid, SIGTERM);
            killed_at = now;
        } else if (killed_at > 0 && now - killed_at > GRACE_S) {
            kill(pid, SIGKILL);
        }
        if (poll(p, 2, 200) < 0 && errno != EINTR)
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
}

int cmp_spawn(char *const argv[], double timeout_s, cmp_output *output, char *error,
              size_t error_size)
{
    memset(output, 0, sizeof *output);
    output->exit_code = -1;
    output->out = malloc(OUT_LIMIT + 1);
    if (!output->out) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    output->out[0] = '\0';
    int out_pipe[2], err_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) != 0) {
        snprintf(error, error_size, "pipe: %s", strerror(errno));
        return -1;
    }
    if (pipe2(err_pipe, O_CLOEXEC) != 0) {
        snprintf(error, error_size, "pipe: %s", strerror(errno));
        close(out_pipe[0]);
        close(out_pipe[1]);
        return -1;
    }
    pid_t pid;
    double begin = mgpu_now();
    int err = start(argv, out_pipe[1], err_pipe[1], &pid);
    close(out_pipe[1]);
    close(err_pipe[1]);
    if (err != 0) {
        snprintf(error, error_size, "cannot start %s: %s", argv[0], strerror(err));
        close(out_pipe[0]);
        close(err_pipe[0]);
        return -1;
    }
    int fds[2] = {out_pipe[0], err_pipe[0]};
    collect(pid, fds, timeout_s, output);
    int wstatus;
    while (waitpid(pid, &wstatus, 0) < 0) {
        if (errno != EINTR) {
            snprintf(error, error_size, "waitpid: %s", strerror(errno));
            return -1;
        }
        kill(pid, SIGKILL); /* interrupted while it lingered */
    }
    output->seconds = mgpu_now() - begin;
    if (WIFEXITED(wstatus))
        output->exit_code = WEXITSTATUS(wstatus);
    else if (WIFSIGNALED(wstatus))
        output->signal = WTERMSIG(wstatus);
    return 0;
}
