/* Corpus replay: a main() for any libFuzzer target, built with the
 * ordinary compiler (no clang needed) and run by `make check` over the
 * saved seeds and every past crash (tests/cli/fuzz_replay.sh).
 *
 *   replay_<name> FILE|DIR...
 *
 * Each file (a directory's regular files, dot files and *.md skipped) is
 * read whole into a buffer of exactly its size, so that under SAN=1 an
 * over-read is caught as libFuzzer would catch it, and passed to
 * LLVMFuzzerTestOneInput.  A crash is the failure; the exit status is 0
 * otherwise, 2 when an argument cannot be read. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perfmon/fileio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_MAX ((size_t)64 << 20)

static int run_file(const char *path)
{
    char *text = NULL;
    size_t len = 0;
    pm_error err;
    if (pm_read_whole(path, REPLAY_MAX, &text, &len, &err) != 0) {
        fprintf(stderr, "replay: %s\n", err.msg);
        return -1;
    }
    /* Exactly len bytes (pm_read_whole adds a NUL the target must not see). */
    uint8_t *data = malloc(len ? len : 1);
    if (!data) {
        free(text);
        return -1;
    }
    memcpy(data, text, len);
    free(text);
    LLVMFuzzerTestOneInput(data, len);
    free(data);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    if (!d) {
        perror(dir);
        return -1;
    }
    char **names = NULL;
    size_t nn = 0, cap = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] == '.' || (l > 3 && strcmp(e->d_name + l - 3, ".md") == 0))
            continue;
        if (nn == cap) {
            cap = cap ? 2 * cap : 64;
            char **nv = realloc(names, cap * sizeof *nv);
            if (!nv) {
                rc = -1;
                break;
            }
            names = nv;
        }
        if (!(names[nn] = strdup(e->d_name))) {
            rc = -1;
            break;
        }
        nn++;
    }
    closedir(d);
    if (nn)
        qsort(names, nn, sizeof *names, cmp_str);
    for (size_t i = 0; i < nn; i++) {
        char path[4200];
        struct stat st;
        if (rc == 0 && pm_path_join(path, sizeof path, dir, names[i]) == 0 &&
            stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            if (run_file(path) != 0)
                rc = -1;
            else
                (*n)++;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    size_t n = 0;
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            rc = 2;
        } else if (S_ISDIR(st.st_mode)) {
            if (run_dir(argv[i], &n) != 0)
                rc = 2;
        } else if (run_file(argv[i]) != 0) {
            rc = 2;
        } else {
            n++;
        }
    }
    printf("replayed %zu input%s\n", n, n == 1 ? "" : "s");
    return rc;
}
