/* flags.h - what libweft-io's wrappers were asked, in OTF2's words:
 * open(2) flags and fopen(3) modes to access mode, creation and status
 * flags; whence to seek option. Pure functions (tests/test_ioflags.c).
 */
#ifndef WEFT_IO_FLAGS_H
#define WEFT_IO_FLAGS_H

#include <otf2/OTF2_Definitions.h>
#include <otf2/OTF2_Events.h>

#define IO_FLAGS__HIDDEN __attribute__((visibility("hidden")))

/* How a file is opened, as IoCreateHandle says it. */
typedef struct io_open_mode {
    OTF2_IoAccessMode access;
    OTF2_IoCreationFlag creation;
    OTF2_IoStatusFlag status;
} io_open_mode;

/* open(2)/openat(2) flags (O_RDONLY|O_CREAT|...). */
IO_FLAGS__HIDDEN io_open_mode io_flags_open(int flags);
/* The status flags among open(2) flags (fcntl F_GETFL/F_SETFL). */
IO_FLAGS__HIDDEN OTF2_IoStatusFlag io_flags_status(int flags);
/* An fopen(3) mode string ("r", "w+b", "ae", "rx,ccs=UTF-8"); NULL or an
 * unknown first letter reads as "r". */
IO_FLAGS__HIDDEN io_open_mode io_flags_fopen(const char *mode);
/* SEEK_SET, SEEK_CUR, SEEK_END, SEEK_DATA, SEEK_HOLE in OTF2's words;
 * an unknown whence reads as SEEK_SET. */
IO_FLAGS__HIDDEN OTF2_IoSeekOption io_flags_whence(int whence);

#endif
