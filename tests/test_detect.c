/* test_detect.c - what weft run reads of a program (cli/detect.c): the
 * kind of file from synthetic ELF headers (64 and 32 bit, dynamic,
 * static, static-pie, every malformed header it refuses), #! lines, the
 * system's own /bin/sh, the MPI flavour of library names, and the
 * dynamic loader's list output as glibc prints it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "detect.h"
#include "weft_errors.h"

/* ---- synthetic ELF files ------------------------------------------------ */

#define INTERP "/lib64/ld-linux-x86-64.so.2"

/* A 64-bit ELF executable in buf (4096 bytes): header, program headers
 * at 64 (PT_LOAD, then PT_INTERP at 512 when interp, then PT_DYNAMIC
 * when dynamic). Returns the header for tweaking. */
static Elf64_Ehdr *elf64(unsigned char *buf, const char *interp,
                         int dynamic)
{
    Elf64_Ehdr *e = (Elf64_Ehdr *)buf;
    Elf64_Phdr *ph = (Elf64_Phdr *)(buf + sizeof *e);
    int n = 0;

    memset(buf, 0, 4096);
    memcpy(e->e_ident, ELFMAG, SELFMAG);
    e->e_ident[EI_CLASS] = ELFCLASS64;
    e->e_ident[EI_DATA] = ELFDATA2LSB;
    e->e_ident[EI_VERSION] = EV_CURRENT;
    e->e_type = ET_DYN;
    e->e_machine = EM_X86_64;
    e->e_phoff = sizeof *e;
    e->e_phentsize = sizeof *ph;
    ph[n++].p_type = PT_LOAD;
    if (interp) {
        ph[n].p_type = PT_INTERP;
        ph[n].p_offset = 512;
        ph[n].p_filesz = strlen(interp) + 1;
        memcpy(buf + 512, interp, strlen(interp) + 1);
        n++;
    }
    if (dynamic)
        ph[n++].p_type = PT_DYNAMIC;
    e->e_phnum = (uint16_t)n;
    return e;
}

static Elf32_Ehdr *elf32(unsigned char *buf, const char *interp)
{
    Elf32_Ehdr *e = (Elf32_Ehdr *)buf;
    Elf32_Phdr *ph = (Elf32_Phdr *)(buf + sizeof *e);

    memset(buf, 0, 4096);
    memcpy(e->e_ident, ELFMAG, SELFMAG);
    e->e_ident[EI_CLASS] = ELFCLASS32;
    e->e_ident[EI_DATA] = ELFDATA2LSB;
    e->e_type = ET_EXEC;
    e->e_phoff = sizeof *e;
    e->e_phentsize = sizeof *ph;
    e->e_phnum = 2;
    ph[0].p_type = PT_LOAD;
    ph[1].p_type = PT_INTERP;
    ph[1].p_offset = 300;
    ph[1].p_filesz = (Elf32_Word)strlen(interp) + 1;
    memcpy(buf + 300, interp, strlen(interp) + 1);
    return e;
}

static weft_prog_info info;

static int detect(const void *buf, size_t len, const char **why)
{
    return weft__detect_file(buf, len, &info, why);
}

static void test_elf_dynamic(void **state)
{
    unsigned char buf[4096];
    const char *why;

    (void)state;
    elf64(buf, INTERP, 1);
    assert_int_equal(detect(buf, sizeof buf, &why), 0);
    assert_int_equal(info.kind, WEFT_PROG_DYNAMIC);
    assert_string_equal(info.interp, INTERP);
    assert_null(why);
    /* The interpreter string may be the last bytes of the file. */
    assert_int_equal(detect(buf, 512 + sizeof INTERP, &why), 0);
    assert_int_equal(info.kind, WEFT_PROG_DYNAMIC);

    elf32(buf, "/lib/ld-linux.so.2");
    assert_int_equal(detect(buf, sizeof buf, &why), 0);
    assert_int_equal(info.kind, WEFT_PROG_DYNAMIC);
    assert_string_equal(info.interp, "/lib/ld-linux.so.2");
}

static void test_elf_static(void **state)
{
    unsigned char buf[4096];
    const char *why;

    (void)state;
    elf64(buf, NULL, 0)->e_type = ET_EXEC;   /* cc -static */
    assert_int_equal(detect(buf, sizeof buf, &why), 0);
    assert_int_equal(info.kind, WEFT_PROG_STATIC);
    assert_string_equal(info.interp, "");
    elf64(buf, NULL, 1);                     /* cc -static-pie */
    assert_int_equal(detect(buf, sizeof buf, &why), 0);
    assert_int_equal(info.kind, WEFT_PROG_STATIC);
}

/* Each malformed header is refused with a reason, the kind left OTHER. */
static void expect_corrupt(const unsigned char *buf, size_t len,
                           const char *reason)
{
    const char *why = NULL;

    assert_int_equal(detect(buf, len, &why), WEFT_ECORRUPT);
    assert_int_equal(info.kind, WEFT_PROG_OTHER);
    assert_string_equal(info.interp, "");
    assert_non_null(why);
    if (!strstr(why, reason))
        fail_msg("reason '%s', expected '%s'", why, reason);
}

static void test_elf_malformed(void **state)
{
    unsigned char buf[4096];
    Elf64_Ehdr *e;
    Elf64_Phdr *ph = (Elf64_Phdr *)(buf + sizeof(Elf64_Ehdr));

    (void)state;
    elf64(buf, INTERP, 0);
    expect_corrupt(buf, 10, "shorter");
    expect_corrupt(buf, 40, "truncated ELF header");

    elf64(buf, INTERP, 0)->e_ident[EI_CLASS] = 7;
    expect_corrupt(buf, sizeof buf, "class");
    elf64(buf, INTERP, 0)->e_ident[EI_DATA] = ELFDATA2MSB;
    expect_corrupt(buf, sizeof buf, "byte order");
    elf64(buf, INTERP, 0)->e_type = ET_REL;
    expect_corrupt(buf, sizeof buf, "not an executable");
    elf64(buf, INTERP, 0)->e_type = ET_CORE;
    expect_corrupt(buf, sizeof buf, "not an executable");

    e = elf64(buf, INTERP, 0);
    e->e_phoff = 4000;                        /* headers past the end */
    expect_corrupt(buf, sizeof buf, "program headers beyond");
    e->e_phoff = UINT64_MAX - 8;              /* offset + size overflows */
    expect_corrupt(buf, sizeof buf, "program headers beyond");
    e = elf64(buf, INTERP, 0);
    e->e_phnum = 0xffff;                      /* count * size past the end */
    expect_corrupt(buf, sizeof buf, "program headers beyond");
    e = elf64(buf, INTERP, 0);
    e->e_phentsize = 8;
    expect_corrupt(buf, sizeof buf, "smaller than their type");

    elf64(buf, INTERP, 0);
    ph[1].p_offset = 4090;                    /* string past the end */
    expect_corrupt(buf, sizeof buf, "PT_INTERP beyond");
    ph[1].p_offset = UINT64_MAX;
    expect_corrupt(buf, sizeof buf, "PT_INTERP beyond");
    ph[1].p_offset = 512;
    ph[1].p_filesz = 1;
    expect_corrupt(buf, sizeof buf, "PT_INTERP beyond");
    elf64(buf, INTERP, 0);
    ph[1].p_filesz -= 1;                      /* no NUL inside */
    expect_corrupt(buf, sizeof buf, "not a terminated path");
    elf64(buf, INTERP, 0);
    ph[1].p_filesz += 4;                      /* NUL before the end */
    expect_corrupt(buf, sizeof buf, "not a terminated path");
}

static void test_long_interp(void **state)
{
    static unsigned char big[3 * WEFT_DETECT_INTERP_MAX];
    char path[WEFT_DETECT_INTERP_MAX + 10];
    Elf64_Phdr *ph = (Elf64_Phdr *)(big + sizeof(Elf64_Ehdr));
    const char *why;

    (void)state;
    elf64(big, INTERP, 0);
    memset(path, 'a', sizeof path - 1);
    path[0] = '/';
    path[sizeof path - 1] = '\0';
    memcpy(big + 512, path, sizeof path);
    ph[1].p_filesz = sizeof path;
    assert_int_equal(detect(big, sizeof big, &why), WEFT_ECORRUPT);
    /* The longest path that fits is kept whole. */
    path[WEFT_DETECT_INTERP_MAX - 1] = '\0';
    memcpy(big + 512, path, WEFT_DETECT_INTERP_MAX);
    ph[1].p_filesz = WEFT_DETECT_INTERP_MAX;
    assert_int_equal(detect(big, sizeof big, &why), 0);
    assert_int_equal(strlen(info.interp), WEFT_DETECT_INTERP_MAX - 1);
}

static void test_scripts_and_others(void **state)
{
    const char *why;

    (void)state;
#define DETECT_S(s) detect(s, sizeof s - 1, &why)
    assert_int_equal(DETECT_S("#!/bin/sh\necho hi\n"), 0);
    assert_int_equal(info.kind, WEFT_PROG_SCRIPT);
    assert_string_equal(info.interp, "/bin/sh");
    assert_int_equal(DETECT_S("#! /usr/bin/env python3 -u\n"), 0);
    assert_string_equal(info.interp, "/usr/bin/env");
    assert_int_equal(DETECT_S("#!\t/bin/bash"), 0);   /* no newline */
    assert_string_equal(info.interp, "/bin/bash");
    assert_int_equal(DETECT_S("#!\n"), 0);
    assert_int_equal(info.kind, WEFT_PROG_SCRIPT);
    assert_string_equal(info.interp, "");
    assert_int_equal(DETECT_S("echo no shebang\n"), 0);
    assert_int_equal(info.kind, WEFT_PROG_OTHER);
    assert_int_equal(DETECT_S("\x7f" "EL"), 0);       /* not even ELF */
    assert_int_equal(info.kind, WEFT_PROG_OTHER);
    assert_int_equal(detect("", 0, &why), 0);
    assert_int_equal(info.kind, WEFT_PROG_OTHER);
#undef DETECT_S
    {
        /* Only the kernel's 256 bytes of a #! line count. */
        char line[400];
        memset(line, 'x', sizeof line);
        memcpy(line, "#!/", 3);
        assert_int_equal(detect(line, sizeof line, &why), 0);
        assert_int_equal(strlen(info.interp), 254);
    }
}

/* The real /bin/sh of this system: a dynamically linked ELF program. */
static void test_real_program(void **state)
{
    struct stat st;
    void *map;
    const char *why;
    int fd = open("/bin/sh", O_RDONLY);

    (void)state;
    assert_true(fd >= 0);
    assert_int_equal(fstat(fd, &st), 0);
    map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    assert_true(map != MAP_FAILED);
    assert_int_equal(detect(map, (size_t)st.st_size, &why), 0);
    assert_int_equal(info.kind, WEFT_PROG_DYNAMIC);
    assert_true(strstr(info.interp, "ld-") != NULL);
    assert_int_equal(info.base_only, 1);    /* dash needs libc alone */
    munmap(map, (size_t)st.st_size);
    close(fd);
}

/* A dynamic section in buf (elf64(buf, INTERP, 1)): PT_LOAD maps the
 * file at vaddr 0x10000, PT_DYNAMIC is at 1024, the string table at 2048
 * holds the names of `needed` (n of them), DT_NEEDED each. */
static void dynamic_section(unsigned char *buf, const char *const *needed,
                            int n)
{
    Elf64_Phdr *ph = (Elf64_Phdr *)(buf + sizeof(Elf64_Ehdr));
    Elf64_Dyn *d = (Elf64_Dyn *)(buf + 1024);
    size_t str = 1;  /* offset 0: the empty string */
    int k = 0;

    ph[0].p_vaddr = 0x10000;
    ph[0].p_offset = 0;
    ph[0].p_filesz = 4096;
    for (int i = 0; i < n; i++) {
        memcpy(buf + 2048 + str, needed[i], strlen(needed[i]) + 1);
        d[k].d_tag = DT_NEEDED;
        d[k++].d_un.d_val = str;
        str += strlen(needed[i]) + 1;
    }
    d[k].d_tag = DT_STRTAB;
    d[k++].d_un.d_ptr = 0x10000 + 2048;
    d[k].d_tag = DT_STRSZ;
    d[k++].d_un.d_val = str;
    d[k++].d_tag = DT_NULL;
    ph[2].p_offset = 1024;
    ph[2].p_filesz = (uint64_t)k * sizeof *d;
}

/* base_only: every DT_NEEDED is glibc's or the compiler runtime's, read
 * through the string table's PT_LOAD; anything out of place says 0 (the
 * loader's list decides). */
static void test_base_only(void **state)
{
    static const char *const base[] = { "libm.so.6", "libstdc++.so.6",
                                        "libc.so.6" };
    static const char *const mpi[] = { "libc.so.6", "libmpi.so.40" };
    static const char *const other[] = { "libz.so.1", "libc.so.6" };
    unsigned char buf[4096];
    Elf64_Dyn *d = (Elf64_Dyn *)(buf + 1024);
    const char *why;

    (void)state;
    elf64(buf, INTERP, 1);
    dynamic_section(buf, base, 3);
    assert_int_equal(detect(buf, sizeof buf, &why), 0);
    assert_int_equal(info.kind, WEFT_PROG_DYNAMIC);
    assert_int_equal(info.base_only, 1);
    dynamic_section(buf, NULL, 0);           /* needs nothing at all */
    assert_int_equal(detect(buf, sizeof buf, &why), 0);
    assert_int_equal(info.base_only, 1);

    elf64(buf, INTERP, 1);
    dynamic_section(buf, mpi, 2);
    assert_int_equal(detect(buf, sizeof buf, &why), 0);
    assert_int_equal(info.base_only, 0);
    elf64(buf, INTERP, 1);
    dynamic_section(buf, other, 2);
    assert_int_equal(detect(buf, sizeof buf, &why), 0);
    assert_int_equal(info.base_only, 0);

    /* Out of place: a name beyond DT_STRSZ, a string table no PT_LOAD
     * maps, one running past the end of the file, no string table, a
     * name not terminated within the table, no PT_DYNAMIC. */
    elf64(buf, INTERP, 1);
    dynamic_section(buf, base, 3);
    d[0].d_un.d_val = 4000;
    assert_int_equal(detect(buf, sizeof buf, &why), 0);
    assert_int_equal(info.base_only, 0);
    dynamic_section(buf, base, 3);
    d[3].d_un.d_ptr = 0x90000;
    assert_int_equal(detect(buf, sizeof buf, &why), 0);
    assert_int_equal(info.base_only, 0);
    dynamic_section(buf, base, 3);
    assert_int_equal(detect(buf, 2060, &why), 0);
    assert_int_equal(info.kind, WEFT_PROG_DYNAMIC);
    assert_int_equal(info.base_only, 0);
    dynamic_section(buf, base, 3);
    d[3].d_tag = DT_DEBUG;
    assert_int_equal(detect(buf, sizeof buf, &why), 0);
    assert_int_equal(info.base_only, 0);
    dynamic_section(buf, base, 3);
    d[4].d_un.d_val = 5;                     /* cuts "libm.so.6" */
    assert_int_equal(detect(buf, sizeof buf, &why), 0);
    assert_int_equal(info.base_only, 0);
    elf64(buf, INTERP, 0);
    assert_int_equal(detect(buf, sizeof buf, &why), 0);
    assert_int_equal(info.kind, WEFT_PROG_DYNAMIC);
    assert_int_equal(info.base_only, 0);

    assert_true(weft__detect_base_library("libgfortran.so.5"));
    assert_false(weft__detect_base_library("libc.so"));
    assert_false(weft__detect_base_library("libmpi.so.40"));
}

/* ---- MPI libraries ------------------------------------------------------ */

static void test_flavours(void **state)
{
    static const struct {
        const char *name;
        weft_mpi_flavour f;
    } cases[] = {
        { "libmpi.so.40", WEFT_MPI_OPENMPI },
        { "libmpi.so.40.30.4", WEFT_MPI_OPENMPI },
        { "libmpi.so.20", WEFT_MPI_OPENMPI },
        { "/usr/lib/x86_64-linux-gnu/openmpi/lib/libmpi.so.40",
          WEFT_MPI_OPENMPI },
        { "libmpi_mpifh.so.40", WEFT_MPI_OPENMPI },
        { "libmpi_usempif08.so.40", WEFT_MPI_OPENMPI },
        { "libmpi_cxx.so.40", WEFT_MPI_OPENMPI },
        { "libmpich.so.12", WEFT_MPI_MPICH },
        { "libmpich.so.12.2.2", WEFT_MPI_MPICH },
        { "/lib/x86_64-linux-gnu/libmpich.so.12", WEFT_MPI_MPICH },
        { "libmpi.so.12", WEFT_MPI_MPICH },        /* the MPICH ABI */
        { "libmpi.so.12.1.1", WEFT_MPI_MPICH },
        { "libmpichfort.so.12", WEFT_MPI_MPICH },
        { "libmpichcxx.so.12", WEFT_MPI_MPICH },
        { "libmpifort.so.12", WEFT_MPI_MPICH },
        /* not MPI, or not a versioned soname */
        { "libmpi.so", WEFT_MPI_NONE },
        { "libmpi.so.", WEFT_MPI_NONE },
        { "libmpi.so.x", WEFT_MPI_NONE },
        { "libmpi.so.40a", WEFT_MPI_NONE },
        { "libmpi.so.40.x", WEFT_MPI_NONE },
        { "libmpi.so.120", WEFT_MPI_OPENMPI },     /* not 12 */
        { "libmpifort.so.5", WEFT_MPI_NONE },
        { "libmpix.so.40", WEFT_MPI_NONE },
        { "libopen-pal.so.40", WEFT_MPI_NONE },
        { "libc.so.6", WEFT_MPI_NONE },
        { "/opt/libmpi.so.40/libc.so.6", WEFT_MPI_NONE },
        { "", WEFT_MPI_NONE },
    };

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (weft__detect_mpi_library(cases[i].name) != cases[i].f)
            fail_msg("%s: flavour %d, expected %d", cases[i].name,
                     weft__detect_mpi_library(cases[i].name), cases[i].f);
    assert_string_equal(weft__detect_flavour_name(WEFT_MPI_OPENMPI),
                        "Open MPI");
    assert_string_equal(weft__detect_flavour_name(WEFT_MPI_MPICH), "MPICH");
}

/* What glibc 2.36's ld.so --list prints (Debian 12, abridged). */
static const char openmpi_list[] =
    "\tlinux-vdso.so.1 (0x00007f6ea4f77000)\n"
    "\tlibmpi.so.40 => /lib/x86_64-linux-gnu/libmpi.so.40 "
    "(0x00007f6ea4e1e000)\n"
    "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f6ea4c3c000)\n"
    "\tlibopen-rte.so.40 => /lib/x86_64-linux-gnu/libopen-rte.so.40 "
    "(0x00007f6ea4b80000)\n"
    "\t/lib64/ld-linux-x86-64.so.2 (0x00007f6ea4f79000)\n";
static const char mpich_fortran_list[] =
    "\tlinux-vdso.so.1 (0x00007ffd2a5f2000)\n"
    "\tlibmpichfort.so.12 => /lib/x86_64-linux-gnu/libmpichfort.so.12 "
    "(0x00007f0f3a000000)\n"
    "\tlibgfortran.so.5 => /lib/x86_64-linux-gnu/libgfortran.so.5 "
    "(0x00007f0f39c00000)\n"
    "\tlibmpich.so.12 => /lib/x86_64-linux-gnu/libmpich.so.12 "
    "(0x00007f0f37200000)\n"
    "\t/lib64/ld-linux-x86-64.so.2 (0x00007f0f3a2a0000)\n";

static void test_list(void **state)
{
    weft_mpi_found f;

    (void)state;
    assert_int_equal(weft__detect_mpi_in_list(openmpi_list, &f), 5);
    assert_int_equal(f.flavour, WEFT_MPI_OPENMPI);
    assert_string_equal(f.lib, "libmpi.so.40");
    assert_int_equal(f.other, WEFT_MPI_NONE);

    assert_int_equal(weft__detect_mpi_in_list(mpich_fortran_list, &f), 5);
    assert_int_equal(f.flavour, WEFT_MPI_MPICH);
    assert_string_equal(f.lib, "libmpichfort.so.12");

    /* No MPI; no trailing newline. */
    assert_int_equal(weft__detect_mpi_in_list(
                         "\tlinux-vdso.so.1 (0x1)\n"
                         "\tlibc.so.6 => /lib/libc.so.6 (0x2)", &f), 2);
    assert_int_equal(f.flavour, WEFT_MPI_NONE);
    assert_string_equal(f.lib, "");
}

static void test_list_odd_lines(void **state)
{
    weft_mpi_found f;

    (void)state;
    /* A library that is not found still names its implementation. */
    assert_int_equal(weft__detect_mpi_in_list(
                         "\tlibmpi.so.40 => not found\n"
                         "\tlibc.so.6 => /lib/libc.so.6 (0x2)\n", &f), 2);
    assert_int_equal(f.flavour, WEFT_MPI_OPENMPI);
    /* The path counts as well as the name (a library linked by path, or
     * a soname that is a symlink to MPICH's). */
    assert_int_equal(weft__detect_mpi_in_list(
                         "\tlibfoo.so => /opt/mpich/lib/libmpich.so.12 "
                         "(0x1)\n", &f), 1);
    assert_int_equal(f.flavour, WEFT_MPI_MPICH);
    assert_string_equal(f.lib, "/opt/mpich/lib/libmpich.so.12");
    /* Error lines, blank lines and "statically linked" are no library
     * lines; an MPI name inside an error message does not count. */
    assert_int_equal(weft__detect_mpi_in_list(
                         "ERROR: ld.so: object 'libmpi.so.40' from "
                         "LD_PRELOAD cannot be preloaded: ignored.\n"
                         "\n\tstatically linked\n\t\n\t (0x1)\n", &f), 0);
    assert_int_equal(f.flavour, WEFT_MPI_NONE);
    assert_int_equal(weft__detect_mpi_in_list("", &f), 0);
    /* Both implementations: the first wins, the other is kept. */
    assert_int_equal(weft__detect_mpi_in_list(
                         "\tlibmpich.so.12 => /l/libmpich.so.12 (0x1)\n"
                         "\tlibmpi.so.40 => /l/libmpi.so.40 (0x2)\n"
                         "\tlibmpichcxx.so.12 => /l/libmpichcxx.so.12 "
                         "(0x3)\n", &f), 3);
    assert_int_equal(f.flavour, WEFT_MPI_MPICH);
    assert_string_equal(f.lib, "libmpich.so.12");
    assert_int_equal(f.other, WEFT_MPI_OPENMPI);
    assert_string_equal(f.other_lib, "libmpi.so.40");
}

static void test_list_long_words(void **state)
{
    char text[9000];
    weft_mpi_found f;

    (void)state;
    /* A name longer than the buffers is cut, never overflows. */
    memset(text, 'a', sizeof text);
    text[0] = '\t';
    memcpy(text + 1, "libmpi.so.40", 12);
    memcpy(text + 4000, " => /x", 6);
    memcpy(text + sizeof text - 10, " (0x1)\n", 8);
    text[sizeof text - 2] = '\0';
    assert_int_equal(weft__detect_mpi_in_list(text, &f), 1);
    assert_int_equal(f.flavour, WEFT_MPI_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elf_dynamic),
        cmocka_unit_test(test_elf_static),
        cmocka_unit_test(test_elf_malformed),
        cmocka_unit_test(test_long_interp),
        cmocka_unit_test(test_scripts_and_others),
        cmocka_unit_test(test_base_only),
        cmocka_unit_test(test_real_program),
        cmocka_unit_test(test_flavours),
        cmocka_unit_test(test_list),
        cmocka_unit_test(test_list_odd_lines),
        cmocka_unit_test(test_list_long_words),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
