/* map.h - a small hash map from 64-bit keys (MPI handles, identities) to
 * pointers, for libweft-mpi's tables. Open addressing with linear
 * probing and tombstones; not thread-safe (callers hold their lock).
 */
#ifndef WEFT_WM_MAP_H
#define WEFT_WM_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct wm_map_slot {
    uint64_t key;
    void *value;         /* NULL: empty; WM_MAP_GONE: removed */
} wm_map_slot;

typedef struct wm_map {
    wm_map_slot *slots;
    size_t cap;          /* a power of two, or 0 */
    size_t used;         /* values + tombstones */
    size_t count;        /* values */
} wm_map;

/* The value of `key`, NULL if none. */
void *wm_map_get(const wm_map *m, uint64_t key)
    __attribute__((visibility("hidden")));
/* Sets key -> value (value not NULL), replacing an old value. Returns 0,
 * or -1 when out of memory (the map is unchanged). */
int wm_map_put(wm_map *m, uint64_t key, void *value)
    __attribute__((visibility("hidden")));
/* Removes key; returns its value, NULL if none. */
void *wm_map_del(wm_map *m, uint64_t key)
    __attribute__((visibility("hidden")));
/* Calls fn on every value, then empties the map and frees its memory. */
void wm_map_clear(wm_map *m, void (*fn)(void *value))
    __attribute__((visibility("hidden")));
/* A well-mixed 64-bit hash of a and b (splitmix64's finaliser). */
uint64_t wm_mix(uint64_t a, uint64_t b) __attribute__((visibility("hidden")));

#endif
