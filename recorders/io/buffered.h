/* buffered.h - whether a stdio call was served from its stream's buffer
 * (issue #32): the pure part of counting such calls (buffered.c).
 *
 * A glibc stream keeps its buffer's pointers in the FILE itself. A call
 * that moved its n bytes within the buffer - no read or write of the
 * file - leaves the buffer's base and (reading) end where they were and
 * moves the read or write pointer by exactly n; a call that refilled,
 * flushed, allocated the buffer, switched between reading and writing
 * or went around the buffer (an unbuffered stream, a request larger
 * than the buffer) moves them otherwise. A call that failed or read
 * nothing (the end of the file: a read(2) that returned 0) is never
 * served. Another thread using the same stream at once can only make a
 * served call look unserved (recorded, as before), except in contrived
 * interleavings that make an unserved one look served (counted).
 */
#ifndef WEFT_IO_BUFFERED_H
#define WEFT_IO_BUFFERED_H

#include <stdint.h>
#include <stdio.h>

/* Where a stream's buffer pointers were. */
typedef struct io_bufview {
    const char *rptr, *rend, *rbase;  /* _IO_read_ptr, _end, _base */
    const char *wptr, *wbase;         /* _IO_write_ptr, _base */
} io_bufview;

/* Reads fp's buffer pointers into *v (no lock: see above). */
static inline void io_bufview_take(io_bufview *v, FILE *fp)
{
    const volatile struct _IO_FILE *f = fp;

    v->rptr = f->_IO_read_ptr;
    v->rend = f->_IO_read_end;
    v->rbase = f->_IO_read_base;
    v->wptr = f->_IO_write_ptr;
    v->wbase = f->_IO_write_base;
}

/* 1 when a call that read (write 0) or wrote (1) `bytes` bytes (< 0:
 * it failed or read nothing) left fp's buffer as b, from a, without
 * reading or writing the file; else 0. A flush (write 2, bytes 0 when
 * it succeeded) is served when it found nothing to do: every pointer
 * where it was (one that wrote out the buffer moves the write pointer
 * back, one that dropped read-ahead input the read pointers). */
static inline int io_buffer_served(const io_bufview *a, const io_bufview *b,
                                   int write, int64_t bytes)
{
    if (bytes < 0)
        return 0;
    if (write == 2)
        return bytes == 0 && a->wptr == b->wptr && a->wbase == b->wbase &&
               a->rptr == b->rptr && a->rend == b->rend &&
               a->rbase == b->rbase;
    if (write)
        return a->wbase == b->wbase && a->wptr && b->wptr >= a->wptr &&
               b->wptr - a->wptr == bytes;
    return bytes > 0 && a->rbase == b->rbase && a->rend == b->rend &&
           a->rptr && b->rptr >= a->rptr && b->rptr - a->rptr == bytes;
}

#endif
