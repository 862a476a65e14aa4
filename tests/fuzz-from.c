/* fuzz-from.c - a libFuzzer target: random and mutated results files fed
 * to what mgpu-compare --from reads them with (cmp_results_parse), under
 * AddressSanitizer and UndefinedBehaviorSanitizer.  Every input must be
 * read or refused with a message, never crash, hang or leak; what is read
 * must hold only rows that keep the rules the reader promises.
 *
 * One input in four also goes through the file the reader is given
 * (cmp_read_json), of a kind its first bytes choose: a regular file of the
 * input, which must be read as the input is; or one that no results.json
 * is, a FIFO nobody writes, a link to it, a folder, a file past the size
 * limit (sparse), each of which must be refused with one line, and at
 * once: the type and size are checked before anything can block. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compare.h"
#include "mgpu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The folder of the files made for the inputs, removed at exit. */
static char folder[PATH_MAX];

/* The file of each kind (make_file). */
static const char *const file_names[] = {"results.json", "fifo", "link", "dir", "huge"};

static void remove_folder(void)
{
    char path[PATH_MAX + 16];
    for (size_t i = 0; i < sizeof file_names / sizeof file_names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", folder, file_names[i]);
        if (unlink(path) != 0)
            rmdir(path);
    }
    rmdir(folder);
}

/* PATH made of the KIND of file the reader must refuse, or holding the
 * input.  0, or -1 when it could not be made (no verdict then). */
static int make_file(int kind, const char *path, const uint8_t *data, size_t size)
{
    char fifo[PATH_MAX + 16];
    snprintf(fifo, sizeof fifo, "%s/fifo", folder);
    if (unlink(path) != 0)
        rmdir(path);
    switch (kind) {
    case 1: /* a FIFO nobody writes */
        return mkfifo(path, 0600);
    case 2: /* a link to one */
        if (access(fifo, F_OK) != 0 && mkfifo(fifo, 0600) != 0)
            return -1;
        return symlink(fifo, path);
    case 3: /* a folder */
        return mkdir(path, 0700);
    default: { /* the input; kind 4: past the size limit, sparse */
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
            return -1;
        int rc = kind == 4 ? ftruncate(fd, CMP_MAX_RESULTS + 1) : 0;
        if (rc == 0 && size > 0 && pwrite(fd, data, size, 0) != (ssize_t) size)
            rc = -1;
        return close(fd) == 0 ? rc : -1;
    }
    }
}

/* The input as a file of kind KIND (0: regular, the input), through
 * cmp_read_json: the regular file read as DIRECT_RC says the text is; any
 * other kind refused with one line. */
static void through_a_file(int kind, const uint8_t *data, size_t size, int direct_rc)
{
    if (!folder[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(folder, sizeof folder, "%s/mgpu-fuzz-from.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(folder)) {
            folder[0] = '\0';
            return;
        }
        atexit(remove_folder);
    }
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/%s", folder, file_names[kind]);
    if (make_file(kind, path, data, size) != 0)
        return;
    cmp_rows rows = {0};
    char error[512] = "";
    struct timespec begin, end;
    clock_gettime(CLOCK_MONOTONIC, &begin);
    int rc = cmp_read_json(path, &rows, error, sizeof error);
    clock_gettime(CLOCK_MONOTONIC, &end);
    if (rc != 0 && (!error[0] || strchr(error, '\n')))
        abort(); /* a refusal says why, in one line */
    if (kind == 0 ? rc != direct_rc : rc == 0)
        abort();
    /* Blocked, until libFuzzer's alarm broke the wait (EINTR): a hang. */
    if (kind != 0 && end.tv_sec - begin.tv_sec > 1)
        abort();
    cmp_rows_free(&rows);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The reader takes text with a NUL after it, as cmp_read_json gives. */
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    cmp_rows rows = {0};
    char error[512] = "";
    int rc = cmp_results_parse(text, size, &rows, error, sizeof error);
    if (rc != 0 && (!error[0] || strchr(error, '\n')))
        abort(); /* a refusal says why, in one line */
    for (int i = 0; rc == 0 && i < rows.count; i++) {
        const cmp_row *r = &rows.row[i];
        if (!cmp_is_name(r->program) || !cmp_is_name(r->exchange) || !cmp_is_name(r->backend) ||
            !cmp_is_name(r->kernel) || (r->verify[0] && !cmp_is_name(r->verify)) ||
            strpbrk(r->reason, "\n\r\t") || r->devices < 1 || r->devices > MGPU_MAX_DEVICES ||
            r->nx < CMP_MIN_GRID || r->nx > CMP_MAX_GRID || r->ny < CMP_MIN_GRID ||
            r->ny > CMP_MAX_GRID || r->steps < 1 || r->steps > CMP_MAX_STEPS ||
            (r->status == RUN_OK && !(r->time_s > 0)))
            abort();
    }
    cmp_rows_free(&rows);
    free(text);
    if (size >= 2 && data[0] % 4 == 0)
        through_a_file(data[1] % 5, data, size, rc);
    return 0;
}
