/* symbol.c - demangled names and source lines of functions for
 * libweft-instrument (symbol.h): __cxa_demangle of the C++ runtime
 * (libstdc++, linked for it: a C program has no other use for it) and
 * libdw's DWARF readers.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "symbol.h"

#define NOINSTR __attribute__((no_instrument_function))

/* The Itanium C++ ABI's demangler (<cxxabi.h> declares it for C++). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len,
                            int *status);

/* See symbol.h. */
NOINSTR char *weft__demangle(const char *sym)
{
    int status = -1;
    char *s;

    /* Only a symbol: the demangler also reads bare types ("i" is int). */
    if (!sym || strncmp(sym, "_Z", 2) != 0)
        return NULL;
    s = __cxa_demangle(sym, NULL, NULL, &status);
    if (status != 0 || !s || !*s) {
        free(s);
        return NULL;
    }
    return s;
}

/* Address ranges [lo, hi) of DWARF addresses. */
typedef struct ranges {
    Dwarf_Addr (*r)[2];
    size_t n, cap;
} ranges;

/* Appends the ranges of die to rs: 0, or -1 without memory. */
NOINSTR static int ranges_add(ranges *rs, Dwarf_Die *die)
{
    Dwarf_Addr base, lo, hi;
    ptrdiff_t off = 0;

    while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
        if (rs->n == rs->cap) {
            size_t cap = rs->cap ? rs->cap * 2 : 8;
            Dwarf_Addr (*r)[2] = realloc(rs->r, cap * sizeof *r);

            if (!r)
                return -1;
            rs->r = r;
            rs->cap = cap;
        }
        rs->r[rs->n][0] = lo;
        rs->r[rs->n][1] = hi;
        rs->n++;
    }
    return 0;
}

NOINSTR static int ranges_have(const ranges *rs, Dwarf_Addr a)
{
    for (size_t i = 0; i < rs->n; i++)
        if (a >= rs->r[i][0] && a < rs->r[i][1])
            return 1;
    return 0;
}

/* Adds the ranges of the functions inlined into the scope `die` (its
 * lexical blocks searched too, nested inlines are inside their caller's
 * ranges) to rs: 0, or -1 without memory. */
NOINSTR static int inlined_ranges(Dwarf_Die *die, ranges *rs)
{
    Dwarf_Die child;

    if (dwarf_child(die, &child) != 0)
        return 0;
    do {
        switch (dwarf_tag(&child)) {
        case DW_TAG_inlined_subroutine:
            if (ranges_add(rs, &child) < 0)
                return -1;
            break;
        case DW_TAG_lexical_block:
        case DW_TAG_try_block:
        case DW_TAG_catch_block:
            if (inlined_ranges(&child, rs) < 0)
                return -1;
            break;
        default:
            break;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return 0;
}

/* The last line of function fn of compilation unit cu in `file`: the
 * largest line of the line table rows of fn's own code (in its ranges,
 * not in those of code inlined into it) in that file; 0 if none. DWARF
 * has no end line: this is where the compiler put the epilogue, i.e.
 * the closing brace, unless the code after the last statement was
 * optimized away. */
NOINSTR static uint32_t last_line(Dwarf_Die *cu, Dwarf_Die *fn,
                                  const char *file)
{
    ranges own = { 0 }, inl = { 0 };
    Dwarf_Lines *lines;
    size_t nlines;
    uint32_t last = 0;

    if (dwarf_getsrclines(cu, &lines, &nlines) != 0 ||
        ranges_add(&own, fn) < 0 || own.n == 0 ||
        inlined_ranges(fn, &inl) < 0)
        goto out;
    for (size_t i = 0; i < nlines; i++) {
        Dwarf_Line *l = dwarf_onesrcline(lines, i);
        Dwarf_Line *next = i + 1 < nlines ? dwarf_onesrcline(lines, i + 1)
                                          : NULL;
        Dwarf_Addr addr, next_addr;
        bool end = false;
        int no = 0;
        const char *src;

        /* A row followed by one at the same address covers no code (a
         * location view: statements optimized into nothing, or code of
         * an inlined function that ended there). */
        if (next && dwarf_lineaddr(next, &next_addr) == 0 &&
            dwarf_lineaddr(l, &addr) == 0 && next_addr == addr)
            continue;
        if (!l || dwarf_lineaddr(l, &addr) != 0 ||
            dwarf_lineendsequence(l, &end) != 0 || end ||
            dwarf_lineno(l, &no) != 0 || no <= 0 || (uint32_t)no <= last ||
            !ranges_have(&own, addr) || ranges_have(&inl, addr))
            continue;
        src = dwarf_linesrc(l, NULL, NULL);
        if (src && strcmp(src, file) == 0)
            last = (uint32_t)no;
    }
out:
    free(own.r);
    free(inl.r);
    return last;
}

/* path with "." and "dir/.." components taken out (by name: the file
 * need not exist here), in place. */
NOINSTR static void tidy_path(char *path)
{
    int abs = *path == '/';
    char *root = path + abs, *out = root, *p = path;

    while (*p) {
        char *end, *last = out;
        size_t len;

        while (*p == '/')
            p++;
        if (!*p)
            break;
        end = strchr(p, '/');
        len = end ? (size_t)(end - p) : strlen(p);
        while (last > root && last[-1] != '/')
            last--;
        if (len == 1 && p[0] == '.') {
            /* nothing */
        } else if (len == 2 && p[0] == '.' && p[1] == '.' && out > root &&
                   !(out - last == 2 && last[0] == '.' && last[1] == '.')) {
            out = last > root ? last - 1 : root;
        } else if (!(len == 2 && p[0] == '.' && p[1] == '.' && abs)) {
            if (out > root)
                *out++ = '/';
            memmove(out, p, len);
            out += len;
        }
        p += len;
    }
    if (out == path)
        *out++ = '.';
    *out = '\0';
}

/* The source file `name` (from the DWARF of compilation unit cu) as a
 * malloc'd absolute path when the unit says in which directory it was
 * compiled, else as it is; NULL without memory. */
NOINSTR static char *source_path(Dwarf_Die *cu, const char *name)
{
    Dwarf_Attribute attr;
    const char *dir = name[0] == '/' ? NULL
                      : dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
    size_t dlen = dir ? strlen(dir) : 0, nlen = strlen(name);
    char *path = malloc(dlen + nlen + 2);

    if (!path)
        return NULL;
    if (dir) {
        memcpy(path, dir, dlen);
        path[dlen++] = '/';
    }
    memcpy(path + dlen, name, nlen + 1);
    tidy_path(path);
    return path;
}

/* The concrete DIE of the function whose code holds DWARF address pc,
 * among the children of die and the namespaces and classes there: where
 * compilers put out-of-line definitions (a C++ method's too, which
 * refers to its declaration in the class). 0 with *out, or -1. */
NOINSTR static int find_fn(Dwarf_Die *die, Dwarf_Addr pc, Dwarf_Die *out)
{
    Dwarf_Die child;

    if (dwarf_child(die, &child) != 0)
        return -1;
    do {
        switch (dwarf_tag(&child)) {
        case DW_TAG_subprogram:
            if (dwarf_haspc(&child, pc) == 1) {
                *out = child;
                return 0;
            }
            break;
        case DW_TAG_namespace:
        case DW_TAG_class_type:
        case DW_TAG_structure_type:
        case DW_TAG_union_type:
        case DW_TAG_module:
            if (find_fn(&child, pc, out) == 0)
                return 0;
            break;
        default:
            break;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return -1;
}

/* The function holding DWARF address pc of compilation unit cu: 0 with
 * *out, or -1. */
NOINSTR static int function_at(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *out)
{
    Dwarf_Die *scopes = NULL;
    int n = dwarf_getscopes(cu, pc, &scopes), rc = -1;

    /* The scopes around pc, innermost first, find nested functions too;
     * but when code inlined into the function starts at pc, they go on
     * with the scopes of the inlined function's abstract definition,
     * which hold no code: then the walk. */
    for (int i = 0; i < n && rc < 0; i++)
        if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram &&
            dwarf_haspc(&scopes[i], pc) == 1) {
            *out = scopes[i];
            rc = 0;
        }
    free(scopes);
    return rc == 0 ? 0 : find_fn(cu, pc, out);
}

/* See symbol.h. */
NOINSTR int weft__srcloc_of(Dwfl_Module *m, uintptr_t a, weft__srcloc *loc)
{
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu, die, *fn = NULL;
    const char *file = NULL;
    int line = 0;

    loc->file = NULL;
    loc->begin_line = loc->end_line = 0;
    cu = dwfl_module_addrdie(m, a, &bias);
    if (!cu)
        return -1;
    if (function_at(cu, a - bias, &die) == 0)
        fn = &die;
    if (fn) {
        /* The definition, else (dwarf_attr_integrate) the declaration it
         * completes (a C++ method declared in its class) or the
         * function it is an out-of-line copy of. */
        file = dwarf_decl_file(fn);
        if (file && dwarf_decl_line(fn, &line) == 0 && line > 0)
            loc->begin_line = (uint32_t)line;
    }
    if (!file) {
        /* No function DIE: the row of the entry says where it starts. */
        Dwfl_Line *l = dwfl_module_getsrc(m, a);

        file = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
        if (file && line > 0)
            loc->begin_line = (uint32_t)line;
    } else if (loc->begin_line) {
        loc->end_line = last_line(cu, fn, file);
        if (loc->end_line && loc->end_line < loc->begin_line)
            loc->end_line = loc->begin_line;
    }
    if (file)
        loc->file = source_path(cu, file);
    if (!loc->file)
        loc->begin_line = loc->end_line = 0;
    return loc->file ? 0 : -1;
}

/* See symbol.h: a module's debug information is in its own file or
 * nowhere. */
static int find_no_debuginfo(Dwfl_Module *mod, void **userdata,
                             const char *modname, Dwarf_Addr base,
                             const char *file_name,
                             const char *debuglink_file,
                             GElf_Word debuglink_crc,
                             char **debuginfo_file_name)
{
    (void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
    (void)debuglink_file, (void)debuglink_crc, (void)debuginfo_file_name;
    return -1;
}

static char *no_debuginfo_path;

const Dwfl_Callbacks weft__dwfl_self = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = find_no_debuginfo,
    .debuginfo_path = &no_debuginfo_path,
};
