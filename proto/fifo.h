/* fifo.h - the one FIFO: an intrusive singly linked queue over any
 * struct with a `next` pointer, held as a head and a tail pointer of
 * the caller's (both NULL when empty). Macros rather than functions so
 * that the queue keeps the element's type; no locking, no memory of its
 * own: whoever holds head and tail owns the elements queued.
 * Used by the daemon's workers (daemon/worker.c), its journal writer
 * (daemon/ingest/jwriter.c) and the client's sender
 * (batches and definition chunks); header only, so the client library
 * gains no dependency. */
#ifndef WEFT_FIFO_H
#define WEFT_FIFO_H

#include <stddef.h>

/* Appends element e at the tail. */
#define WEFT_FIFO_PUSH(head, tail, e)                                        \
    do {                                                                     \
        __typeof__(e) weft_fifo_e_ = (e);                                    \
        weft_fifo_e_->next = NULL;                                           \
        if (tail)                                                            \
            (tail)->next = weft_fifo_e_;                                     \
        else                                                                 \
            (head) = weft_fifo_e_;                                           \
        (tail) = weft_fifo_e_;                                               \
    } while (0)

/* Takes the element at the head off the queue (which must not be empty)
 * and yields it. */
#define WEFT_FIFO_SHIFT(head, tail)                                          \
    ({                                                                       \
        __typeof__(head) weft_fifo_h_ = (head);                              \
        (head) = weft_fifo_h_->next;                                         \
        if (!(head))                                                         \
            (tail) = NULL;                                                   \
        weft_fifo_h_;                                                        \
    })

#endif
