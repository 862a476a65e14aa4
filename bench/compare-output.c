/* compare-output.c - the output folder, and the set of files a comparison
 * leaves there (results.csv, results.json, plots.gp and the plots), so that
 * the folder holds one comparison's files, never a mix of two.  Before the
 * first run the folder is proved writable (a folder made in it and
 * removed), with no folder in the way of a name of the set, and locked for
 * the comparison: a second mgpu-compare into it fails at once, with one
 * line, running nothing.  Nothing is written there while the programs run.
 * Then the whole set is written into a staging folder made in it (the same
 * file system: a rename is atomic), gnuplot drawing there too; each file is
 * synced, proved whole and renamed over its namesake, results.json last,
 * and each file of the set that the new set lacks is removed.  A failure,
 * SIGINT or SIGTERM before that leaves the previous set whole; a staging
 * folder that a dead comparison left goes when the next one takes the
 * lock. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "compare.h"

#define STAGE_PREFIX ".mgpu-compare-"
#define STAGE_NAME "/" STAGE_PREFIX "XXXXXX"
/* Room left in a path for the staging folder and a file name in it. */
#define PATH_ROOM 64

const char *const cmp_result_files[] = {CMP_PLOT_FILE_NAMES, "results.csv", "results.json", NULL};

/* The first name of NAMES that is a folder in DIR (a rename could not
 * replace it), or NULL. */
static const char *folder_in_the_way(const char *dir, const char *const *names)
{
    char path[PATH_MAX + 32];
    struct stat st;
    for (int i = 0; names[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            return names[i];
    }
    return NULL;
}

void cmp_folder_of(const char *file, char *dir, size_t size)
{
    const char *slash = strrchr(file, '/');
    if (slash == file)
        snprintf(dir, size, "/");
    else if (slash)
        snprintf(dir, size, "%.*s", (int) (slash - file), file);
    else
        snprintf(dir, size, ".");
}

int cmp_folder_check(const char *dir, const char *option, const char *const *names)
{
    char probe[PATH_MAX];
    if (strlen(dir) > PATH_MAX - PATH_ROOM)
        return cmp_usage("%s: the folder's name is longer than %d bytes", option,
                         PATH_MAX - PATH_ROOM);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return cmp_usage("%s: cannot make the folder %s: %s", option, dir, strerror(errno));
    struct stat st;
    if (stat(dir, &st) != 0) {
        int err = errno;
        char target[PATH_MAX];
        ssize_t n = readlink(dir, target, sizeof target - 1);
        if (n > 0) {
            target[n] = '\0';
            return cmp_usage("%s: %s is a symbolic link to %s: %s", option, dir, target,
                             strerror(err));
        }
        return cmp_usage("%s: %s: %s", option, dir, strerror(err));
    }
    if (!S_ISDIR(st.st_mode))
        return cmp_usage("%s: %s is not a folder", option, dir);
    snprintf(probe, sizeof probe, "%s" STAGE_NAME, dir);
    if (!mkdtemp(probe))
        return cmp_usage("%s: cannot write in %s: %s", option, dir, strerror(errno));
    rmdir(probe);
    const char *in_the_way = folder_in_the_way(dir, names);
    if (in_the_way)
        return bench_usage(COMPARE_NAME,
                           "%s: %s/%s is a folder, where %s writes a file (move it away)", option,
                           dir, in_the_way, COMPARE_NAME);
    return -1;
}

/* Remove the staging folders in DIR that a dead comparison left (SIGKILL,
 * a crash): whoever holds the lock is the only one that writes there. */
static void reclaim_stages(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        cmp_stage dead;
        if (strncmp(e->d_name, STAGE_PREFIX, strlen(STAGE_PREFIX)) != 0 ||
            strlen(e->d_name) != strlen(STAGE_PREFIX) + 6) /* mkdtemp's XXXXXX */
            continue;
        snprintf(dead.dir, sizeof dead.dir, "%s", dir);
        snprintf(dead.path, sizeof dead.path, "%s/%s", dir, e->d_name);
        cmp_stage_discard(&dead);
    }
    if (d)
        closedir(d);
}

/* The lock this process holds: its file's descriptor and path. */
static int lock_fd = -1;
static char lock_path[PATH_MAX + 32];

int cmp_folder_lock(const char *dir, const char *option)
{
    snprintf(lock_path, sizeof lock_path, "%s/" CMP_LOCK_NAME, dir);
    for (;;) {
        int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
        if (fd < 0) {
            fprintf(stderr, "%s: %s: cannot lock %s: %s\n", COMPARE_NAME, option, lock_path,
                    strerror(errno));
            return -1;
        }
        int rc;
        while ((rc = flock(fd, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR)
            ;
        int err = errno;
        /* The holder removes the file when it is done: a lock taken on a
         * file removed meanwhile is no lock, and the name is tried again. */
        struct stat held, named;
        if (rc == 0 && fstat(fd, &held) == 0 && stat(lock_path, &named) == 0 &&
            held.st_dev == named.st_dev && held.st_ino == named.st_ino) {
            lock_fd = fd;
            reclaim_stages(dir);
            return 0;
        }
        close(fd);
        if (rc == 0)
            continue;
        if (err == EWOULDBLOCK) {
            fprintf(stderr,
                    "%s: %s: another %s is running with its results going into %s (it holds "
                    "%s); wait for it to end, or choose another folder\n",
                    COMPARE_NAME, option, COMPARE_NAME, dir, lock_path);
            return -1;
        }
        /* A file system without locks (some FUSE ones): the comparison
         * goes on, and says what it cannot promise. */
        unlink(lock_path);
        fprintf(stderr,
                "%s: %s: %s cannot be locked (%s): a second comparison into it at once would "
                "not be stopped\n",
                COMPARE_NAME, option, dir, strerror(err));
        return 0;
    }
}

void cmp_folder_unlock(void)
{
    if (lock_fd < 0)
        return;
    /* Removed while still held, so that nobody locks it in between. */
    unlink(lock_path);
    close(lock_fd);
    lock_fd = -1;
}

int cmp_stage_open(cmp_stage *st, const char *dir)
{
    snprintf(st->dir, sizeof st->dir, "%s", dir);
    snprintf(st->path, sizeof st->path, "%s" STAGE_NAME, dir);
    if (!mkdtemp(st->path)) {
        fprintf(stderr, "%s: cannot write in %s: %s\n", COMPARE_NAME, dir, strerror(errno));
        st->path[0] = '\0';
        return -1;
    }
    return 0;
}

void cmp_stage_file(const cmp_stage *st, const char *name, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", st->path, name);
}

void cmp_stage_discard(cmp_stage *st)
{
    if (!st->path[0])
        return;
    DIR *d = opendir(st->path);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            unlinkat(dirfd(d), e->d_name, 0);
    }
    if (d)
        closedir(d);
    rmdir(st->path);
    st->path[0] = '\0';
}

/* The data of PATH on disk before its name is: a crash after the rename
 * must not leave an empty file under the new name. */
static int sync_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* Whether the staged file PATH is whole enough to replace its namesake: a
 * regular file, not empty (every file of the set has bytes), on disk
 * (fsync); else a line that says why. */
static int staged_whole(const cmp_stage *st, const char *path)
{
    struct stat sb;
    const char *why = NULL;
    if (lstat(path, &sb) != 0)
        why = strerror(errno);
    else if (!S_ISREG(sb.st_mode))
        why = "not a regular file";
    else if (sb.st_size == 0)
        why = "empty (a write failed?)";
    else if (sync_file(path) != 0)
        why = strerror(errno);
    if (why)
        fprintf(stderr, "%s: cannot write %s: %s; %s keeps its previous results\n", COMPARE_NAME,
                path, why, st->dir);
    return why == NULL;
}

/* What is left: the renames take microseconds; a crash of the machine, or
 * SIGKILL, between them leaves a mix (a reader that finds results.json new
 * knows the rest is), and SIGKILL while the set is staged leaves the
 * staging folder behind until the next comparison there, never a file of
 * the set.  Replacing the set in one step would need the results in a
 * folder of their own swapped in (renameat2 RENAME_EXCHANGE): --output may
 * be any folder, ".", so they are not. */
int cmp_stage_commit(cmp_stage *st, const char *const *names)
{
    char from[PATH_MAX + 32], to[PATH_MAX + 32];
    int present[64] = {0}, n = 0;
    for (; names[n] && n < (int) (sizeof present / sizeof present[0]); n++) {
        cmp_stage_file(st, names[n], from, sizeof from);
        present[n] = access(from, F_OK) == 0;
        if (present[n] && !staged_whole(st, from)) {
            cmp_stage_discard(st);
            return -1;
        }
    }
    /* A name made a folder while the runs ran: nothing replaced, rather
     * than a set renamed in part. */
    const char *in_the_way = folder_in_the_way(st->dir, names);
    if (in_the_way) {
        fprintf(stderr,
                "%s: %s/%s is a folder, where %s writes a file; %s keeps its previous "
                "results\n",
                COMPARE_NAME, st->dir, in_the_way, COMPARE_NAME, st->dir);
        cmp_stage_discard(st);
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        cmp_stage_file(st, names[i], from, sizeof from);
        snprintf(to, sizeof to, "%s/%s", st->dir, names[i]);
        if (present[i] && rename(from, to) != 0) {
            fprintf(stderr, "%s: cannot rename %s to %s: %s\n", COMPARE_NAME, from, to,
                    strerror(errno));
            rc = -1;
        }
    }
    for (int i = 0; i < n; i++) {
        snprintf(to, sizeof to, "%s/%s", st->dir, names[i]);
        if (!present[i] && unlink(to) != 0 && errno != ENOENT) {
            fprintf(stderr, "%s: cannot remove the old %s: %s\n", COMPARE_NAME, to,
                    strerror(errno));
            rc = -1;
        }
    }
    int fd = open(st->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    cmp_stage_discard(st);
    return rc;
}
