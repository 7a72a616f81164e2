/* front.c - the weft command as installed: `weft run` here, every other
 * command by the whole CLI (weft-cli, given the same arguments).
 *
 * DESIGN: weft run replaces itself with the program it traces, so what
 * its own start costs is paid by every traced run. The whole CLI links
 * SQLite, libotf2, jansson, zlib, protobuf-c and more: loading and
 * relocating them took about 2 ms of CPU per run on the development
 * machine (bench/procs, "run-none"), more than the rest of weft run.
 * This program links what weft run needs and nothing else (run.c,
 * detect.c, preload.c, msg.c, libweftrun); weft-cli is the program weft
 * always was, in pkglibexecdir - or beside this one when it is there
 * (its build tree, or a copy of both). `weft OPTION... run`
 * (a global option first) goes to weft-cli too, which runs it the same
 * way, only later.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "out.h"

/* 1 when st (weft-cli beside this program, exe) may be run: the same
 * owner, and writable by nobody who cannot write this program (in a
 * sticky directory such as /tmp anyone may add a weft-cli beside a copy
 * of weft, but not as its owner). */
static int trusted_beside(const struct stat *exe, const struct stat *st)
{
    if (st->st_uid != exe->st_uid || !S_ISREG(st->st_mode))
        return 0;
    if ((st->st_mode & S_IWOTH) && !(exe->st_mode & S_IWOTH))
        return 0;
    return !(st->st_mode & S_IWGRP) ||
           ((exe->st_mode & S_IWGRP) && exe->st_gid == st->st_gid);
}

/* weft-cli's path: beside this program if it is there (its build tree,
 * or a copy of both) and trusted as much as this program, else where it
 * was installed. */
static const char *cli_path(char *buf, size_t len)
{
    static const char name[] = "weft-cli";
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    struct stat exe, st;
    char *slash;

    if (n > 0 && stat("/proc/self/exe", &exe) == 0) {
        buf[n] = 0;
        slash = strrchr(buf, '/');
        if (slash && (size_t)(slash + 1 - buf) + sizeof name <= len) {
            memcpy(slash + 1, name, sizeof name);
            if (stat(buf, &st) == 0 && trusted_beside(&exe, &st) &&
                access(buf, X_OK) == 0)
                return buf;
        }
    }
    return WEFT_PKGLIBEXECDIR "/weft-cli";
}

/* Runs weft-cli with argv (argv[0] stays "weft" for its messages).
 * Returns only if it cannot: EXIT_FAIL after saying why. */
static int run_cli(char **argv)
{
    char buf[PATH_MAX];
    const char *path = cli_path(buf, sizeof buf);

    execv(path, argv);
    return weft__cli_fail("cannot run %s: %s (is weft installed whole?)",
                          path, strerror(errno));
}

/* weft run's --help is the whole CLI's (its table of commands). */
void weft__cli_command_help(const char *name)
{
    char *argv[] = { (char *)"weft", (char *)"help", (char *)name, NULL };

    fflush(NULL);
    exit(run_cli(argv));
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "run") == 0) {
        cli c = { 0 };

        c.args = argv + 1;
        c.nargs = argc - 1;
        return weft__cmd_run(&c);
    }
    return run_cli(argv);
}
