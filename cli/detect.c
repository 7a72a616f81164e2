/* detect.c - what kind of program a file is and which MPI implementation
 * its libraries belong to, from bytes alone (see detect.h).
 *
 * Why the loader's list and not our own walk of DT_NEEDED: the libraries
 * a program really gets depend on its RPATH/RUNPATH (with $ORIGIN), on
 * LD_LIBRARY_PATH, on /etc/ld.so.cache, on the hwcaps subdirectories and
 * on LD_PRELOAD, recursively; a second implementation of that search
 * would drift from glibc's. The program's own interpreter in list mode
 * does exactly that search and runs none of the program's code (no
 * constructor, no relocation), so run.c runs it and this file only
 * parses what it prints. The ELF headers are read here only for what the
 * loader cannot tell: whether there is a loader at all (PT_INTERP), and
 * which one.
 */
#include <elf.h>
#include <stdint.h>
#include <string.h>

#include "detect.h"
#include "weft_errors.h"

/* Bytes of a #! line the kernel reads (BINPRM_BUF_SIZE). */
#define SHEBANG_MAX 256

/* ---- the file's kind ---------------------------------------------------- */

/* The fields of the ELF header and a program header this file needs,
 * whatever the class. */
typedef struct ehdr {
    uint16_t type;
    uint64_t phoff;
    uint16_t phentsize, phnum;
} ehdr;

typedef struct phdr {
    uint32_t type;
    uint64_t offset, filesz, vaddr;
} phdr;

static int native_order(unsigned char data)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return data == ELFDATA2LSB;
#else
    return data == ELFDATA2MSB;
#endif
}

/* The ELF header of buf (len >= the class's header size, checked). */
static void read_ehdr(const unsigned char *buf, int is64, ehdr *h)
{
    if (is64) {
        Elf64_Ehdr e;
        memcpy(&e, buf, sizeof e);
        h->type = e.e_type;
        h->phoff = e.e_phoff;
        h->phentsize = e.e_phentsize;
        h->phnum = e.e_phnum;
    } else {
        Elf32_Ehdr e;
        memcpy(&e, buf, sizeof e);
        h->type = e.e_type;
        h->phoff = e.e_phoff;
        h->phentsize = e.e_phentsize;
        h->phnum = e.e_phnum;
    }
}

static void read_phdr(const unsigned char *p, int is64, phdr *h)
{
    if (is64) {
        Elf64_Phdr e;
        memcpy(&e, p, sizeof e);
        h->type = e.p_type;
        h->offset = e.p_offset;
        h->filesz = e.p_filesz;
        h->vaddr = e.p_vaddr;
    } else {
        Elf32_Phdr e;
        memcpy(&e, p, sizeof e);
        h->type = e.p_type;
        h->offset = e.p_offset;
        h->filesz = e.p_filesz;
        h->vaddr = e.p_vaddr;
    }
}

/* Is [off, off + n) inside a buffer of len bytes? */
static int inside(uint64_t off, uint64_t n, size_t len)
{
    return off <= len && n <= len - off;
}

/* Libraries that never link an MPI library: glibc's and the compiler
 * runtimes' (sonames). */
static const char *const base_libraries[] = {
    "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1",
    "libresolv.so.2", "libutil.so.1", "libanl.so.1", "libmvec.so.1",
    "libnsl.so.1", "libBrokenLocale.so.1", "libcrypt.so.1",
    "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1", "ld-linux.so.2",
    "libgcc_s.so.1", "libstdc++.so.6", "libgfortran.so.5",
    "libquadmath.so.0", "libatomic.so.1",
};

int weft__detect_base_library(const char *name)
{
    for (size_t i = 0; i < sizeof base_libraries / sizeof *base_libraries;
         i++)
        if (strcmp(name, base_libraries[i]) == 0)
            return 1;
    return 0;
}

/* The file offset of virtual address [addr, addr + n) in a PT_LOAD
 * segment of the n program headers at ph, or UINT64_MAX. */
static uint64_t file_offset(const unsigned char *ph, const ehdr *h, int is64,
                            uint64_t addr, uint64_t n)
{
    for (uint16_t i = 0; i < h->phnum; i++) {
        phdr p;

        read_phdr(ph + (uint64_t)i * h->phentsize, is64, &p);
        if (p.type == PT_LOAD && addr >= p.vaddr &&
            addr - p.vaddr <= p.filesz && n <= p.filesz - (addr - p.vaddr))
            return p.offset + (addr - p.vaddr);
    }
    return UINT64_MAX;
}

/* 1 when every DT_NEEDED of the dynamic section dyn (in buf, checked
 * inside) names a base library (weft__detect_base_library); 0 when one
 * does not, or anything is out of place: then the loader's list decides. */
static int needs_base_only(const unsigned char *buf, size_t len,
                           const ehdr *h, int is64, const phdr *dyn)
{
    size_t entsize = is64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
    uint64_t strtab = UINT64_MAX, strsz = 0, off, n = dyn->filesz / entsize;
    const char *names;

    for (int pass = 0; pass < 2; pass++) {
        for (uint64_t i = 0; i < n; i++) {
            int64_t tag;
            uint64_t val;

            if (is64) {
                Elf64_Dyn d;
                memcpy(&d, buf + dyn->offset + i * entsize, sizeof d);
                tag = d.d_tag;
                val = d.d_un.d_val;
            } else {
                Elf32_Dyn d;
                memcpy(&d, buf + dyn->offset + i * entsize, sizeof d);
                tag = d.d_tag;
                val = d.d_un.d_val;
            }
            if (tag == DT_NULL)
                break;
            if (pass == 0) {
                if (tag == DT_STRTAB)
                    strtab = val;
                else if (tag == DT_STRSZ)
                    strsz = val;
                continue;
            }
            if (tag != DT_NEEDED)
                continue;
            if (val >= strsz || !memchr(names + val, '\0', strsz - val) ||
                !weft__detect_base_library(names + val))
                return 0;
        }
        if (pass == 0) {
            if (strtab == UINT64_MAX || strsz == 0 ||
                (off = file_offset(buf + h->phoff, h, is64, strtab, strsz)) ==
                    UINT64_MAX || !inside(off, strsz, len))
                return 0;
            names = (const char *)buf + off;
        }
    }
    return 1;
}

static int elf_kind(const unsigned char *buf, size_t len,
                    weft_prog_info *info, const char **why)
{
    int is64;
    size_t ehsize, phsize;
    phdr dyn = { 0 };
    ehdr h;

    if (len < EI_NIDENT) {
        *why = "file shorter than an ELF identification";
        return WEFT_ECORRUPT;
    }
    if (buf[EI_CLASS] != ELFCLASS64 && buf[EI_CLASS] != ELFCLASS32) {
        *why = "unknown ELF class";
        return WEFT_ECORRUPT;
    }
    if (!native_order(buf[EI_DATA])) {
        *why = "ELF byte order of another machine";
        return WEFT_ECORRUPT;
    }
    is64 = buf[EI_CLASS] == ELFCLASS64;
    ehsize = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
    phsize = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
    if (len < ehsize) {
        *why = "truncated ELF header";
        return WEFT_ECORRUPT;
    }
    read_ehdr(buf, is64, &h);
    if (h.type != ET_EXEC && h.type != ET_DYN) {
        *why = "not an executable ELF file (object file or core dump)";
        return WEFT_ECORRUPT;
    }
    if (h.phnum > 0 && h.phentsize < phsize) {
        *why = "ELF program headers smaller than their type";
        return WEFT_ECORRUPT;
    }
    if (!inside(h.phoff, (uint64_t)h.phnum * h.phentsize, len)) {
        *why = "ELF program headers beyond the end of the file";
        return WEFT_ECORRUPT;
    }
    /* No PT_INTERP: the kernel starts it without a loader, so nothing
     * would read LD_PRELOAD (static, and static-pie with its PT_DYNAMIC). */
    info->kind = WEFT_PROG_STATIC;
    for (uint16_t i = 0; i < h.phnum; i++) {
        phdr p;
        const char *s;

        read_phdr(buf + h.phoff + (uint64_t)i * h.phentsize, is64, &p);
        if (p.type == PT_DYNAMIC && inside(p.offset, p.filesz, len))
            dyn = p;
        if (p.type != PT_INTERP || info->kind == WEFT_PROG_DYNAMIC)
            continue;
        if (!inside(p.offset, p.filesz, len) || p.filesz < 2) {
            *why = "PT_INTERP beyond the end of the file";
            return WEFT_ECORRUPT;
        }
        s = (const char *)buf + p.offset;
        /* The kernel requires the terminating NUL at the very end. */
        if (s[p.filesz - 1] != '\0' || strlen(s) != p.filesz - 1 ||
            p.filesz > sizeof info->interp) {
            *why = "PT_INTERP is not a terminated path";
            return WEFT_ECORRUPT;
        }
        memcpy(info->interp, s, p.filesz);
        info->kind = WEFT_PROG_DYNAMIC;
    }
    if (info->kind == WEFT_PROG_DYNAMIC && dyn.type == PT_DYNAMIC)
        info->base_only = needs_base_only(buf, len, &h, is64, &dyn);
    return 0;
}

/* The interpreter a #! line names: its first word. */
static void shebang(const unsigned char *buf, size_t len,
                    weft_prog_info *info)
{
    size_t i = 2, n = 0;

    if (len > SHEBANG_MAX)
        len = SHEBANG_MAX;
    while (i < len && (buf[i] == ' ' || buf[i] == '\t'))
        i++;
    while (i + n < len && buf[i + n] != ' ' && buf[i + n] != '\t' &&
           buf[i + n] != '\n' && buf[i + n] != '\0')
        n++;
    memcpy(info->interp, buf + i, n);
    info->interp[n] = '\0';
    info->kind = WEFT_PROG_SCRIPT;
}

int weft__detect_file(const void *buf, size_t len, weft_prog_info *info,
                      const char **why)
{
    const unsigned char *b = buf;
    int rc = 0;

    memset(info, 0, sizeof *info);
    info->kind = WEFT_PROG_OTHER;
    *why = NULL;
    if (len >= 4 && memcmp(b, ELFMAG, SELFMAG) == 0) {
        if ((rc = elf_kind(b, len, info, why)) < 0) {
            info->kind = WEFT_PROG_OTHER;
            info->interp[0] = '\0';
        }
    } else if (len >= 2 && b[0] == '#' && b[1] == '!') {
        shebang(b, len, info);
    }
    return rc;
}

/* ---- MPI libraries ------------------------------------------------------ */

/* Shared libraries of each implementation, by soname without its version
 * ("libmpi.so" for libmpi.so.40) and, where it decides, the major version.
 * The first entry that matches counts: libmpi.so.12 is MPICH's (the MPICH
 * ABI that Intel MPI shares), any other libmpi.so.N Open MPI's. The
 * Fortran and C++ bindings are listed too, though they always bring the C
 * library along, for a list where the C library is "not found". */
static const struct mpi_lib {
    const char *stem;
    const char *major;           /* NULL: any */
    weft_mpi_flavour flavour;
} mpi_libs[] = {
    { "libmpi.so", "12", WEFT_MPI_MPICH },
    { "libmpi.so", NULL, WEFT_MPI_OPENMPI },
    { "libmpi_mpifh.so", NULL, WEFT_MPI_OPENMPI },
    { "libmpi_usempif08.so", NULL, WEFT_MPI_OPENMPI },
    { "libmpi_usempi_ignore_tkr.so", NULL, WEFT_MPI_OPENMPI },
    { "libmpi_cxx.so", NULL, WEFT_MPI_OPENMPI },
    { "libmpich.so", NULL, WEFT_MPI_MPICH },
    { "libmpichfort.so", NULL, WEFT_MPI_MPICH },
    { "libmpichcxx.so", NULL, WEFT_MPI_MPICH },
    { "libmpifort.so", "12", WEFT_MPI_MPICH },
};

/* Does name (a file name) match l: stem "." digits, more "." digits
 * allowed, the first number being l->major if set? */
static int lib_matches(const char *name, const struct mpi_lib *l)
{
    size_t n = strlen(l->stem);
    const char *v, *end;

    if (strncmp(name, l->stem, n) != 0 || name[n] != '.')
        return 0;
    v = name + n + 1;
    end = v;
    while (*end >= '0' && *end <= '9')
        end++;
    if (end == v || (*end != '\0' && *end != '.'))
        return 0;
    if (l->major && ((size_t)(end - v) != strlen(l->major) ||
                     strncmp(v, l->major, (size_t)(end - v)) != 0))
        return 0;
    for (const char *p = end; *p; p++)
        if (!(*p == '.' || (*p >= '0' && *p <= '9')))
            return 0;
    return 1;
}

weft_mpi_flavour weft__detect_mpi_library(const char *name)
{
    const char *slash = strrchr(name, '/');

    if (slash)
        name = slash + 1;
    for (size_t i = 0; i < sizeof mpi_libs / sizeof mpi_libs[0]; i++)
        if (lib_matches(name, &mpi_libs[i]))
            return mpi_libs[i].flavour;
    return WEFT_MPI_NONE;
}

const char *weft__detect_flavour_name(weft_mpi_flavour f)
{
    switch (f) {
    case WEFT_MPI_OPENMPI: return "Open MPI";
    case WEFT_MPI_MPICH: return "MPICH";
    default: return "no MPI";
    }
}

/* Copies the n bytes at s into dst (cap bytes), cut and terminated. */
static void copy_word(char *dst, size_t cap, const char *s, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

/* Notes library word (NAME or PATH of a list line) in *found. */
weft_omp_runtime weft__detect_omp_library(const char *name)
{
    static const struct {
        const char *prefix;
        weft_omp_runtime rt;
    } runtimes[] = {
        { "libgomp.so", WEFT_OMP_GNU },
        { "libomp.so", WEFT_OMP_LLVM },
        { "libiomp5.so", WEFT_OMP_INTEL },
    };
    const char *base = strrchr(name, '/');

    base = base ? base + 1 : name;
    for (size_t i = 0; i < sizeof runtimes / sizeof *runtimes; i++)
        if (strncmp(base, runtimes[i].prefix, strlen(runtimes[i].prefix)) ==
            0)
            return runtimes[i].rt;
    return WEFT_OMP_NONE;
}

static void note_library(const char *word, weft_mpi_found *found)
{
    weft_mpi_flavour f = weft__detect_mpi_library(word);
    weft_omp_runtime o = weft__detect_omp_library(word);

    if (o != WEFT_OMP_NONE && found->omp == WEFT_OMP_NONE) {
        found->omp = o;
        copy_word(found->omp_lib, sizeof found->omp_lib, word, strlen(word));
    }
    if (f == WEFT_MPI_NONE)
        return;
    if (found->flavour == WEFT_MPI_NONE) {
        found->flavour = f;
        copy_word(found->lib, sizeof found->lib, word, strlen(word));
    } else if (f != found->flavour && found->other == WEFT_MPI_NONE) {
        found->other = f;
        copy_word(found->other_lib, sizeof found->other_lib, word,
                  strlen(word));
    }
}

int weft__detect_mpi_in_list(const char *text, weft_mpi_found *found)
{
    int lines = 0;
    char name[256], path[4096];

    memset(found, 0, sizeof *found);
    while (*text) {
        const char *eol = strchr(text, '\n');
        size_t len = eol ? (size_t)(eol - text) : strlen(text);
        const char *p = text, *end = text + len, *w;

        text += len + (eol ? 1 : 0);
        if (*p != '\t')
            continue;              /* not a library line (an error...) */
        p++;
        for (w = p; p < end && *p != ' '; p++)
            ;
        if (p == w)
            continue;
        copy_word(name, sizeof name, w, (size_t)(p - w));
        path[0] = '\0';
        if (end - p > 4 && strncmp(p, " => ", 4) == 0) {
            p += 4;
            for (w = p; p < end && *p != ' '; p++)
                ;
            /* "not found", or the path up to " (0x...)" */
            if (!(p - w == 3 && strncmp(w, "not", 3) == 0))
                copy_word(path, sizeof path, w, (size_t)(p - w));
        } else if (!(end - p > 2 && strncmp(p, " (", 2) == 0)) {
            continue;              /* "statically linked" and the like */
        }
        lines++;
        note_library(name, found);
        if (path[0])
            note_library(path, found);
    }
    return lines;
}
