/* fifo.h - the one FIFO: an intrusive singly linked queue over any
 * struct with a `next` pointer, held as a head and a tail pointer of
 * the caller's (both NULL when empty). Macros rather than functions so
 * that the queue keeps the element's type; no locking, no memory of its
 * own: whoever holds head and tail owns the elements queued.
 * Used by the daemon's workers (daemon/worker.c), its journal writer
 * (daemon/ingest/jwriter.c) and the client's sender
 * (batches and definition chunks); header only, so the client library
 * gains no dependency.
 *
 * Its doubly linked form (WEFT_DLIST_*), for a queue whose elements also
 * leave from the middle: the element's two link fields are named by the
 * caller (PREV, NEXT), so that one element can be on two such lists.
 * Used by the connections not yet authenticated (preauth.c, oldest
 * first) and the journals holding a descriptor (jcache.c, most recently
 * used first). */
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

/* Adds e at the tail (PUSH_TAIL) or the head (PUSH_HEAD); e is on no
 * list. */
#define WEFT_DLIST_PUSH_TAIL(head, tail, e, PREV, NEXT)                      \
    do {                                                                     \
        __typeof__(e) weft_dl_e_ = (e);                                      \
        weft_dl_e_->NEXT = NULL;                                             \
        weft_dl_e_->PREV = (tail);                                           \
        if (tail)                                                            \
            (tail)->NEXT = weft_dl_e_;                                       \
        else                                                                 \
            (head) = weft_dl_e_;                                             \
        (tail) = weft_dl_e_;                                                 \
    } while (0)
#define WEFT_DLIST_PUSH_HEAD(head, tail, e, PREV, NEXT)                      \
    WEFT_DLIST_PUSH_TAIL(tail, head, e, NEXT, PREV)

/* Takes e, which is on the list, off it (its links NULL after). */
#define WEFT_DLIST_UNLINK(head, tail, e, PREV, NEXT)                         \
    do {                                                                     \
        __typeof__(e) weft_dl_u_ = (e);                                      \
        if (weft_dl_u_->PREV)                                                \
            weft_dl_u_->PREV->NEXT = weft_dl_u_->NEXT;                       \
        else                                                                 \
            (head) = weft_dl_u_->NEXT;                                       \
        if (weft_dl_u_->NEXT)                                                \
            weft_dl_u_->NEXT->PREV = weft_dl_u_->PREV;                       \
        else                                                                 \
            (tail) = weft_dl_u_->PREV;                                       \
        weft_dl_u_->PREV = weft_dl_u_->NEXT = NULL;                          \
    } while (0)

#endif
