/* map.c - libweft-mpi's hash map (see map.h). */
#include "map.h"

#include <stdlib.h>

static char gone_marker;
#define WM_MAP_GONE ((void *)&gone_marker)

/* See map.h. */
uint64_t wm_mix(uint64_t a, uint64_t b)
{
    uint64_t z = a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2));

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t slot_of(const wm_map *m, uint64_t key)
{
    return (size_t)wm_mix(key, 0) & (m->cap - 1);
}

/* See map.h. */
void *wm_map_get(const wm_map *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    for (size_t i = slot_of(m, key);; i = (i + 1) & (m->cap - 1)) {
        const wm_map_slot *s = &m->slots[i];
        if (!s->value)
            return NULL;
        if (s->value != WM_MAP_GONE && s->key == key)
            return s->value;
    }
}

/* Rehashes into `cap` slots. 0 or -1. */
static int resize(wm_map *m, size_t cap)
{
    wm_map_slot *old = m->slots;
    size_t oldcap = m->cap;
    wm_map_slot *slots = calloc(cap, sizeof *slots);

    if (!slots)
        return -1;
    m->slots = slots;
    m->cap = cap;
    m->used = m->count = 0;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].value && old[i].value != WM_MAP_GONE)
            (void)wm_map_put(m, old[i].key, old[i].value);
    free(old);
    return 0;
}

/* See map.h. */
int wm_map_put(wm_map *m, uint64_t key, void *value)
{
    wm_map_slot *free_slot = NULL;
    size_t i;

    if ((m->used + 1) * 4 > m->cap * 3 &&
        resize(m, m->cap ? (m->count * 2 + 2 > m->cap ? m->cap * 2 : m->cap)
                         : 16) < 0)
        return -1;
    for (i = slot_of(m, key);; i = (i + 1) & (m->cap - 1)) {
        wm_map_slot *s = &m->slots[i];
        if (!s->value)
            break;
        if (s->value == WM_MAP_GONE) {
            if (!free_slot)
                free_slot = s;
        } else if (s->key == key) {
            s->value = value;
            return 0;
        }
    }
    if (!free_slot) {
        free_slot = &m->slots[i];
        m->used++;
    }
    free_slot->key = key;
    free_slot->value = value;
    m->count++;
    return 0;
}

/* See map.h. */
void *wm_map_del(wm_map *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    for (size_t i = slot_of(m, key);; i = (i + 1) & (m->cap - 1)) {
        wm_map_slot *s = &m->slots[i];
        void *v = s->value;
        if (!v)
            return NULL;
        if (v != WM_MAP_GONE && s->key == key) {
            s->value = WM_MAP_GONE;
            m->count--;
            return v;
        }
    }
}

/* See map.h. */
void wm_map_clear(wm_map *m, void (*fn)(void *value))
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].value && m->slots[i].value != WM_MAP_GONE && fn)
            fn(m->slots[i].value);
    free(m->slots);
    m->slots = NULL;
    m->cap = m->used = m->count = 0;
}
