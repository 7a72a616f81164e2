/* symbol.h - what libweft-instrument says about a function besides its
 * symbol: the C++ name a person reads (the symbol demangled) and, from
 * the DWARF of a module built with -g, the source file and lines.
 *
 * Both run once per function, when libweft-instrument resolves its
 * address (under its resolution lock), never on the record path. They
 * allocate with malloc and call into libstdc++ and libdw, none of which is
 * compiled with -finstrument-functions; the caller's hook guard keeps an
 * instrumented malloc from recording.
 */
#ifndef WEFT_SYMBOL_H
#define WEFT_SYMBOL_H

#include <stdint.h>

#include <elfutils/libdwfl.h>

/* The callbacks of a libdw session over this process's own modules
 * (dwfl_linux_proc_report): ELF files as they are mapped; separate debug
 * files are never searched (nor fetched from a debuginfod server):
 * names are read inside the traced program's calls, from the files
 * already mapped. */
extern const Dwfl_Callbacks weft__dwfl_self;

/* The demangled name of `sym` when it is a mangled C++ (Itanium ABI)
 * name, e.g. "ns::Solver::step(int)" for "_ZN2ns6Solver4stepEi": a
 * malloc'd string the caller frees. NULL when `sym` is not a mangled
 * name, the demangler refuses it, or memory ran out: use `sym` as it is. */
char *weft__demangle(const char *sym);

/* Where a function is in its source. */
typedef struct weft__srcloc {
    char *file;          /* absolute when the DWARF says where it was
                            compiled; malloc'd, the caller frees it;
                            NULL: unknown */
    uint32_t begin_line; /* the line of the function's name; 0: unknown */
    uint32_t end_line;   /* its last line (the closing brace); 0: unknown */
} weft__srcloc;

/* Fills *loc for the function whose code starts at address `a` (as the
 * process sees it) of module `m`, from the module's DWARF: the file and
 * line of the function's declaration, and the last line of its own code
 * in that file (the line table rows in its address ranges, code inlined
 * into it left out). Returns 0, or -1 with *loc unknown (no DWARF: built
 * without -g, or stripped; no function there); a file found without its
 * lines returns 0 with lines 0. Out of memory, the file is unknown. */
int weft__srcloc_of(Dwfl_Module *m, uintptr_t a, weft__srcloc *loc);

#endif
