/* output.c - a program's standard output is its result: a record that could
 * not be written is a failed run (exit 1), never a success.
 *
 * stdio buffers what a program prints, so a write that fails (a full disk,
 * a closed pipe or descriptor) is often known only when the buffer is
 * flushed, at exit.  Every program therefore ends through
 * mgpu_stdout_close, which flushes and closes standard output and turns a
 * failure into one line on stderr and exit status 1; what prints a result
 * (the record, mgpu-p2p's figures) flushes it at once with
 * mgpu_output_flush, whose failure names what was lost.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mgpu-private.h"

void mgpu_stdout_guard(void)
{
    /* A program started with a standard descriptor closed (">&-") would
     * hand that number to the next file it opens, a shared-memory segment
     * or one of MPI's sockets, and print its record into it.  The number
     * is taken by /dev/null opened the wrong way round, so that writing to
     * a closed stdout (or reading a closed stdin) still fails, as it
     * should, with EBADF. */
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
            continue;
        int opened = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
        if (opened >= 0 && opened != fd)
            close(opened); /* not the lowest free number: leave it */
    }
}

mgpu_status mgpu_output_flush(FILE *out, const char *what)
{
    /* errno is cleared first: the write that failed may be long past by
     * the time the error indicator is read, and its errno gone. */
    errno = 0;
    if (fflush(out) == 0 && !ferror(out))
        return MGPU_OK;
    int saved = errno;
    clearerr(out);
    return mgpu_fail(MGPU_ERR_SYSTEM, "%s could not be written: %s", what,
                     saved ? strerror(saved) : "a write failed");
}

int mgpu_stdout_close(const mgpu_program *program, int code)
{
    /* A write that failed earlier left the stream's error indicator set
     * (glibc drops what it could not write), but its errno may be gone. */
    errno = 0;
    int failed = fflush(stdout) != 0 || ferror(stdout);
    int saved = errno;
    if (fclose(stdout) != 0 && !failed) {
        failed = 1;
        saved = errno;
    }
    if (!failed)
        return code;
    mgpu_error(program, "standard output: what the program printed was not all written: %s",
               saved ? strerror(saved) : "a write failed");
    return code != 0 ? code : 1;
}
