/* fuzz_detect.c - libFuzzer target for what weft run reads of a program
 * before it runs it (cli/detect.c): the file's kind, its PT_INTERP and
 * its dynamic section's DT_NEEDED (weft__detect_file), and the loader's
 * list of libraries (weft__detect_mpi_in_list).
 *
 * Input: the first byte picks the way. Odd: the rest is a whole file as
 * it is. Even: the rest is laid over a 64-bit ELF program with PT_LOAD,
 * PT_INTERP and PT_DYNAMIC in place (from the dynamic section's offset
 * on), so that the fuzzer reaches the dynamic section's reading without
 * having to find an ELF header first. Either way the same bytes, NUL-
 * terminated, are read as the loader's list too. Checked beyond memory
 * safety: a kind the enum knows; a dynamic program has a terminated
 * interpreter path; base_only is 0 or 1, and 1 only for a dynamic
 * program; an error comes with its reason and the kind OTHER; the list's
 * MPI flavours are the enum's, named only with a library.
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "detect.h"
#include "fuzz.h"
#include "weft_errors.h"

#define SKELETON 4096
#define DYN_AT 1024       /* where the input goes over the skeleton */

/* An ELF program whose PT_LOAD maps the file at 0x10000, PT_INTERP at
 * 512, PT_DYNAMIC at DYN_AT (up to the end of the file). */
static void skeleton(unsigned char *buf)
{
    Elf64_Ehdr *e = (Elf64_Ehdr *)buf;
    Elf64_Phdr *ph = (Elf64_Phdr *)(buf + sizeof *e);
    static const char interp[] = "/lib64/ld-linux-x86-64.so.2";

    memset(buf, 0, SKELETON);
    memcpy(e->e_ident, ELFMAG, SELFMAG);
    e->e_ident[EI_CLASS] = ELFCLASS64;
    e->e_ident[EI_DATA] = ELFDATA2LSB;
    e->e_ident[EI_VERSION] = EV_CURRENT;
    e->e_type = ET_DYN;
    e->e_machine = EM_X86_64;
    e->e_phoff = sizeof *e;
    e->e_phentsize = sizeof *ph;
    e->e_phnum = 3;
    ph[0].p_type = PT_LOAD;
    ph[0].p_vaddr = 0x10000;
    ph[0].p_filesz = SKELETON;
    ph[1].p_type = PT_INTERP;
    ph[1].p_offset = 512;
    ph[1].p_filesz = sizeof interp;
    memcpy(buf + 512, interp, sizeof interp);
    ph[2].p_type = PT_DYNAMIC;
    ph[2].p_offset = DYN_AT;
    ph[2].p_filesz = SKELETON - DYN_AT;
}

static void check_file(const unsigned char *buf, size_t len)
{
    weft_prog_info info;
    const char *why = "unset";
    int rc = weft__detect_file(buf, len, &info, &why);

    CHECK(rc == 0 || rc == WEFT_ECORRUPT);
    CHECK(info.kind == WEFT_PROG_DYNAMIC || info.kind == WEFT_PROG_STATIC ||
          info.kind == WEFT_PROG_SCRIPT || info.kind == WEFT_PROG_OTHER);
    CHECK(memchr(info.interp, '\0', sizeof info.interp) != NULL);
    CHECK(info.base_only == 0 || info.base_only == 1);
    CHECK(!info.base_only || info.kind == WEFT_PROG_DYNAMIC);
    if (rc < 0)
        CHECK(why && why[0] && info.kind == WEFT_PROG_OTHER);
    else
        CHECK(why == NULL);
    if (info.kind == WEFT_PROG_DYNAMIC)
        CHECK(info.interp[0] != '\0');
}

static void check_list(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    weft_mpi_found found;
    int n;

    CHECK(text);
    memcpy(text, data, size);
    text[size] = '\0';
    n = weft__detect_mpi_in_list(text, &found);
    CHECK(n >= 0);
    CHECK(found.flavour < WEFT_MPI_NFLAVOURS &&
          found.other < WEFT_MPI_NFLAVOURS);
    CHECK(memchr(found.lib, '\0', sizeof found.lib) != NULL);
    CHECK(memchr(found.other_lib, '\0', sizeof found.other_lib) != NULL);
    CHECK(found.flavour != WEFT_MPI_NONE || found.other == WEFT_MPI_NONE);
    CHECK(found.flavour == WEFT_MPI_NONE || found.lib[0] != '\0');
    CHECK(found.other == WEFT_MPI_NONE ||
          (found.other != found.flavour && found.other_lib[0] != '\0'));
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *buf;

    if (size < 1)
        return 0;
    if (data[0] & 1) {
        /* its own heap block: reads past the end are ASan's to see */
        buf = malloc(size - 1 ? size - 1 : 1);
        CHECK(buf);
        memcpy(buf, data + 1, size - 1);
        check_file(buf, size - 1);
    } else {
        size_t n = size - 1 < SKELETON - DYN_AT ? size - 1 : SKELETON - DYN_AT;
        buf = malloc(SKELETON);
        CHECK(buf);
        skeleton(buf);
        memcpy(buf + DYN_AT, data + 1, n);
        check_file(buf, SKELETON);
        /* the same file cut short: PT_DYNAMIC and the strings beyond it */
        check_file(buf, DYN_AT + n);
    }
    free(buf);
    check_list(data + 1, size - 1);
    return 0;
}
