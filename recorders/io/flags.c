/* flags.c - open flags, fopen modes and whence in OTF2's words (see
 * flags.h). */
#include "flags.h"

#include <fcntl.h>
#include <stddef.h>
#include <unistd.h>

#ifndef __O_LARGEFILE
#define __O_LARGEFILE 0100000
#endif

/* See flags.h. */
OTF2_IoStatusFlag io_flags_status(int flags)
{
    OTF2_IoStatusFlag s = OTF2_IO_STATUS_FLAG_NONE;

    if (flags & O_CLOEXEC)
        s |= OTF2_IO_STATUS_FLAG_CLOSE_ON_EXEC;
    if (flags & O_APPEND)
        s |= OTF2_IO_STATUS_FLAG_APPEND;
    if (flags & O_NONBLOCK)
        s |= OTF2_IO_STATUS_FLAG_NON_BLOCKING;
    if (flags & O_ASYNC)
        s |= OTF2_IO_STATUS_FLAG_ASYNC;
    /* O_SYNC includes O_DSYNC's bit. */
    if ((flags & O_SYNC) == O_SYNC)
        s |= OTF2_IO_STATUS_FLAG_SYNC;
    else if (flags & O_DSYNC)
        s |= OTF2_IO_STATUS_FLAG_DATA_SYNC;
    if (flags & O_DIRECT)
        s |= OTF2_IO_STATUS_FLAG_AVOID_CACHING;
    if (flags & O_NOATIME)
        s |= OTF2_IO_STATUS_FLAG_NO_ACCESS_TIME;
    return s;
}

/* See flags.h. */
io_open_mode io_flags_open(int flags)
{
    io_open_mode m = { OTF2_IO_ACCESS_MODE_READ_ONLY,
                       OTF2_IO_CREATION_FLAG_NONE,
                       io_flags_status(flags) };

    switch (flags & O_ACCMODE) {
    case O_WRONLY: m.access = OTF2_IO_ACCESS_MODE_WRITE_ONLY; break;
    case O_RDWR: m.access = OTF2_IO_ACCESS_MODE_READ_WRITE; break;
    default: break;
    }
    if (flags & O_CREAT)
        m.creation |= OTF2_IO_CREATION_FLAG_CREATE;
    if (flags & O_TRUNC)
        m.creation |= OTF2_IO_CREATION_FLAG_TRUNCATE;
    /* O_TMPFILE includes O_DIRECTORY's bit. */
    if ((flags & O_TMPFILE) == O_TMPFILE)
        m.creation |= OTF2_IO_CREATION_FLAG_TEMPORARY_FILE;
    else if (flags & O_DIRECTORY)
        m.creation |= OTF2_IO_CREATION_FLAG_DIRECTORY;
    if (flags & O_EXCL)
        m.creation |= OTF2_IO_CREATION_FLAG_EXCLUSIVE;
    if (flags & O_NOCTTY)
        m.creation |= OTF2_IO_CREATION_FLAG_NO_CONTROLLING_TERMINAL;
    if (flags & O_NOFOLLOW)
        m.creation |= OTF2_IO_CREATION_FLAG_NO_FOLLOW;
    if (flags & O_PATH)
        m.creation |= OTF2_IO_CREATION_FLAG_PATH;
    if (flags & __O_LARGEFILE)
        m.creation |= OTF2_IO_CREATION_FLAG_LARGEFILE;
    return m;
}

/* See flags.h. */
io_open_mode io_flags_fopen(const char *mode)
{
    io_open_mode m = { OTF2_IO_ACCESS_MODE_READ_ONLY,
                       OTF2_IO_CREATION_FLAG_NONE, OTF2_IO_STATUS_FLAG_NONE };
    int plus = 0;

    if (!mode)
        return m;
    for (const char *p = mode + (*mode ? 1 : 0); *p && *p != ','; p++) {
        switch (*p) {
        case '+': plus = 1; break;
        case 'x': m.creation |= OTF2_IO_CREATION_FLAG_EXCLUSIVE; break;
        case 'e': m.status |= OTF2_IO_STATUS_FLAG_CLOSE_ON_EXEC; break;
        default: break;   /* b, m, c: nothing OTF2 names */
        }
    }
    switch (*mode) {
    case 'w':
        m.access = OTF2_IO_ACCESS_MODE_WRITE_ONLY;
        m.creation |= OTF2_IO_CREATION_FLAG_CREATE |
                      OTF2_IO_CREATION_FLAG_TRUNCATE;
        break;
    case 'a':
        m.access = OTF2_IO_ACCESS_MODE_WRITE_ONLY;
        m.creation |= OTF2_IO_CREATION_FLAG_CREATE;
        m.status |= OTF2_IO_STATUS_FLAG_APPEND;
        break;
    default:
        break;
    }
    if (plus)
        m.access = OTF2_IO_ACCESS_MODE_READ_WRITE;
    return m;
}

/* See flags.h. */
OTF2_IoSeekOption io_flags_whence(int whence)
{
    switch (whence) {
    case SEEK_CUR: return OTF2_IO_SEEK_FROM_CURRENT;
    case SEEK_END: return OTF2_IO_SEEK_FROM_END;
    case SEEK_DATA: return OTF2_IO_SEEK_DATA;
    case SEEK_HOLE: return OTF2_IO_SEEK_HOLE;
    default: return OTF2_IO_SEEK_FROM_START;
    }
}
