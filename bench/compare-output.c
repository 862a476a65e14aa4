/* compare-output.c - the output folder, and replacing the set of files a
 * comparison leaves there (results.csv, results.json, plots.gp and the
 * PNG and SVG plots) so that the folder holds one comparison's files, never
 * a mix of two:
 *
 *  1. Before the first run, the folder is made if need be and proved
 *     writable (a folder made in it and removed): a bad --output costs no
 *     run.
 *  2. Nothing is written there while the programs run.  When they have
 *     all run, every file of the new set is written into a staging folder
 *     made in the output folder (".mgpu-compare-XXXXXX": the same file
 *     system, so a rename is atomic); gnuplot draws there too.
 *  3. Only when all of it was written, each file is synced and renamed
 *     over its namesake (results.json last), and then each file of the
 *     set that the new set lacks (the old plots, when no run succeeded or
 *     gnuplot failed) is removed; the staging folder goes.
 *  4. When anything fails, or SIGINT or SIGTERM comes, before step 3, the
 *     staging folder is removed and the folder keeps the previous set
 *     whole.
 * What is left: step 3 is a few renames, microseconds; a crash of the
 * machine, or SIGKILL, between them leaves a mix (a reader that finds
 * results.json new knows the rest is), and SIGKILL during step 2 leaves
 * the staging folder behind, never a file of the set.  Replacing the set in
 * one step would need the results in a folder of their own swapped in
 * (renameat2 RENAME_EXCHANGE): --output may be any folder, ".", so they
 * are not. */
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
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "compare.h"

#define STAGE_NAME "/.mgpu-compare-XXXXXX"
/* Room left in a path for the staging folder and a file name in it. */
#define PATH_ROOM 64

int cmp_folder_check(const char *dir, const char *option)
{
    char probe[PATH_MAX];
    if (strlen(dir) > PATH_MAX - PATH_ROOM)
        return bench_usage(COMPARE_NAME, "%s: the folder's name is longer than %d bytes", option,
                           PATH_MAX - PATH_ROOM);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return bench_usage(COMPARE_NAME, "%s: cannot make the folder %s: %s", option, dir,
                           strerror(errno));
    struct stat st;
    if (stat(dir, &st) != 0)
        return bench_usage(COMPARE_NAME, "%s: %s: %s", option, dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return bench_usage(COMPARE_NAME, "%s: %s is not a folder", option, dir);
    snprintf(probe, sizeof probe, "%s" STAGE_NAME, dir);
    if (!mkdtemp(probe))
        return bench_usage(COMPARE_NAME, "%s: cannot write in %s: %s", option, dir,
                           strerror(errno));
    rmdir(probe);
    return -1;
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

int cmp_stage_commit(cmp_stage *st, const char *const *names)
{
    char from[PATH_MAX + 32], to[PATH_MAX + 32];
    int present[64] = {0}, n = 0;
    for (; names[n] && n < (int) (sizeof present / sizeof present[0]); n++) {
        cmp_stage_file(st, names[n], from, sizeof from);
        present[n] = access(from, F_OK) == 0;
        if (present[n] && sync_file(from) != 0) {
            fprintf(stderr, "%s: cannot write %s: %s; %s keeps its previous results\n",
                    COMPARE_NAME, from, strerror(errno), st->dir);
            cmp_stage_discard(st);
            return -1;
        }
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
