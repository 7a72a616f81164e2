/* test_ioflags.c - libweft-io's translation of open flags, fopen modes
 * and whence into OTF2's access modes, creation and status flags and
 * seek options (recorders/io/flags.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <unistd.h>

#include "flags.h"

static void test_open_access(void **state)
{
    (void)state;
    assert_int_equal(io_flags_open(O_RDONLY).access,
                     OTF2_IO_ACCESS_MODE_READ_ONLY);
    assert_int_equal(io_flags_open(O_WRONLY).access,
                     OTF2_IO_ACCESS_MODE_WRITE_ONLY);
    assert_int_equal(io_flags_open(O_RDWR).access,
                     OTF2_IO_ACCESS_MODE_READ_WRITE);
}

static void test_open_creation(void **state)
{
    io_open_mode m = io_flags_open(O_WRONLY | O_CREAT | O_TRUNC | O_EXCL);

    (void)state;
    assert_int_equal(m.creation, OTF2_IO_CREATION_FLAG_CREATE |
                                     OTF2_IO_CREATION_FLAG_TRUNCATE |
                                     OTF2_IO_CREATION_FLAG_EXCLUSIVE);
    assert_int_equal(m.status, OTF2_IO_STATUS_FLAG_NONE);
    m = io_flags_open(O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NOCTTY);
    assert_int_equal(m.creation, OTF2_IO_CREATION_FLAG_DIRECTORY |
                                     OTF2_IO_CREATION_FLAG_NO_FOLLOW |
                                     OTF2_IO_CREATION_FLAG_NO_CONTROLLING_TERMINAL);
    /* O_TMPFILE holds O_DIRECTORY's bit: a temporary file, not a
     * directory */
    m = io_flags_open(O_RDWR | O_TMPFILE);
    assert_int_equal(m.creation, OTF2_IO_CREATION_FLAG_TEMPORARY_FILE);
    m = io_flags_open(O_PATH);
    assert_int_equal(m.creation, OTF2_IO_CREATION_FLAG_PATH);
}

static void test_status(void **state)
{
    (void)state;
    assert_int_equal(io_flags_status(O_CLOEXEC | O_APPEND | O_NONBLOCK),
                     OTF2_IO_STATUS_FLAG_CLOSE_ON_EXEC |
                         OTF2_IO_STATUS_FLAG_APPEND |
                         OTF2_IO_STATUS_FLAG_NON_BLOCKING);
    /* O_SYNC holds O_DSYNC's bit: SYNC only */
    assert_int_equal(io_flags_status(O_SYNC), OTF2_IO_STATUS_FLAG_SYNC);
    assert_int_equal(io_flags_status(O_DSYNC), OTF2_IO_STATUS_FLAG_DATA_SYNC);
    assert_int_equal(io_flags_status(O_DIRECT | O_NOATIME | O_ASYNC),
                     OTF2_IO_STATUS_FLAG_AVOID_CACHING |
                         OTF2_IO_STATUS_FLAG_NO_ACCESS_TIME |
                         OTF2_IO_STATUS_FLAG_ASYNC);
    assert_int_equal(io_flags_status(O_RDWR | O_CREAT), 0);
}

static void test_fopen_modes(void **state)
{
    io_open_mode m;

    (void)state;
    m = io_flags_fopen("r");
    assert_int_equal(m.access, OTF2_IO_ACCESS_MODE_READ_ONLY);
    assert_int_equal(m.creation, 0);
    m = io_flags_fopen("rb+");
    assert_int_equal(m.access, OTF2_IO_ACCESS_MODE_READ_WRITE);
    m = io_flags_fopen("w");
    assert_int_equal(m.access, OTF2_IO_ACCESS_MODE_WRITE_ONLY);
    assert_int_equal(m.creation, OTF2_IO_CREATION_FLAG_CREATE |
                                     OTF2_IO_CREATION_FLAG_TRUNCATE);
    m = io_flags_fopen("w+xe");
    assert_int_equal(m.access, OTF2_IO_ACCESS_MODE_READ_WRITE);
    assert_int_equal(m.creation, OTF2_IO_CREATION_FLAG_CREATE |
                                     OTF2_IO_CREATION_FLAG_TRUNCATE |
                                     OTF2_IO_CREATION_FLAG_EXCLUSIVE);
    assert_int_equal(m.status, OTF2_IO_STATUS_FLAG_CLOSE_ON_EXEC);
    m = io_flags_fopen("a");
    assert_int_equal(m.access, OTF2_IO_ACCESS_MODE_WRITE_ONLY);
    assert_int_equal(m.creation, OTF2_IO_CREATION_FLAG_CREATE);
    assert_int_equal(m.status, OTF2_IO_STATUS_FLAG_APPEND);
    m = io_flags_fopen("a+");
    assert_int_equal(m.access, OTF2_IO_ACCESS_MODE_READ_WRITE);
    /* what follows a comma is the character set, not flags */
    m = io_flags_fopen("r,ccs=x+e");
    assert_int_equal(m.access, OTF2_IO_ACCESS_MODE_READ_ONLY);
    assert_int_equal(m.status, 0);
    m = io_flags_fopen(NULL);
    assert_int_equal(m.access, OTF2_IO_ACCESS_MODE_READ_ONLY);
    m = io_flags_fopen("");
    assert_int_equal(m.access, OTF2_IO_ACCESS_MODE_READ_ONLY);
}

static void test_whence(void **state)
{
    (void)state;
    assert_int_equal(io_flags_whence(SEEK_SET), OTF2_IO_SEEK_FROM_START);
    assert_int_equal(io_flags_whence(SEEK_CUR), OTF2_IO_SEEK_FROM_CURRENT);
    assert_int_equal(io_flags_whence(SEEK_END), OTF2_IO_SEEK_FROM_END);
    assert_int_equal(io_flags_whence(SEEK_DATA), OTF2_IO_SEEK_DATA);
    assert_int_equal(io_flags_whence(SEEK_HOLE), OTF2_IO_SEEK_HOLE);
    assert_int_equal(io_flags_whence(99), OTF2_IO_SEEK_FROM_START);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_access),
        cmocka_unit_test(test_open_creation),
        cmocka_unit_test(test_status),
        cmocka_unit_test(test_fopen_modes),
        cmocka_unit_test(test_whence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
