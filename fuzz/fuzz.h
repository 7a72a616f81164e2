/* fuzz.h - what every libFuzzer target here shares: the entry points'
 * prototypes and CHECK, which aborts (a crash for libFuzzer, which then
 * keeps the input) with a message when a property fails. */
#ifndef WEFT_FUZZ_H
#define WEFT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional: called once before the first input. */
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__,       \
                    __LINE__, #cond);                                        \
            abort();                                                         \
        }                                                                    \
    } while (0)

#endif
