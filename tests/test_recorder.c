/* test_recorder.c - whose call a wrapper sees (weft__recorder_foreign,
 * client/recorder.c, recorder.h section 7): code of the program and of
 * ordinary libraries is the program's; code of the MPI stack (UCX,
 * libevent as Open MPI's progress engine) and of libweft is foreign, by
 * the file name of the object that holds it; an address in no object
 * (heap, a JIT's code) is the program's; answers come back the same from
 * the cache, and from several threads at once. And the functions
 * recorders have libweft call before the session closes
 * (weft__recorder_before_close): in the order given, at most
 * WEFT__BEFORE_CLOSE_MAX, the one beyond refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "client_internal.h"
#include "recorder.h"
#include "weft_errors.h"

static void program_code(void)
{
}

static const void *fn_addr(void (*fn)(void))
{
    const void *p;

    memcpy(&p, &fn, sizeof p);
    return p;
}

/* The address of `sym` in library `lib` (dlopen'd for the test), NULL and
 * a skip when this machine lacks it. */
static const void *lib_addr(const char *lib, const char *sym)
{
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

    if (!h) {
        print_message("SKIP: %s is not installed (scripts/deps.sh installs "
                      "the MPI stacks that bring it)\n", lib);
        return NULL;
    }
    return dlsym(h, sym);
}

static void test_program_and_libc(void **state)
{
    (void)state;
    assert_int_equal(weft__recorder_foreign(fn_addr(program_code)), 0);
    assert_int_equal(weft__recorder_foreign((const char *)fn_addr(program_code) + 3), 0);
    assert_int_equal(weft__recorder_foreign(dlsym(RTLD_DEFAULT, "strlen")), 0);
    assert_int_equal(weft__recorder_foreign(dlsym(RTLD_DEFAULT, "pthread_mutex_lock")), 0);
    /* Asked again: the cached answer. */
    assert_int_equal(weft__recorder_foreign(fn_addr(program_code)), 0);
}

static void test_no_object(void **state)
{
    char *heap = malloc(64);

    (void)state;
    assert_non_null(heap);
    assert_int_equal(weft__recorder_foreign(heap + 8), 0);
    assert_int_equal(weft__recorder_foreign(NULL), 0);
    free(heap);
}

static void test_mpi_stack(void **state)
{
    const void *ucs = lib_addr("libucs.so.0", "ucs_get_tid");
    const void *ev = lib_addr("libevent_core-2.1.so.7", "event_base_new");

    (void)state;
    if (!ucs && !ev)
        skip();
    for (int round = 0; round < 2; round++) {
        if (ucs)
            assert_int_equal(weft__recorder_foreign(ucs), 1);
        if (ev)
            assert_int_equal(weft__recorder_foreign(ev), 1);
    }
}

/* Many addresses of both kinds from four threads: every answer right
 * (the cache's slots are shared, overwritten by whoever comes last). */
static const void *ucs_fn;

static void *asker(void *arg)
{
    const char *base = fn_addr(program_code);
    intptr_t bad = 0;

    (void)arg;
    for (int i = 0; i < 20000; i++) {
        bad += weft__recorder_foreign(base + (i % 16)) != 0;
        if (ucs_fn)
            bad += weft__recorder_foreign((const char *)ucs_fn + (i % 16)) != 1;
    }
    return (void *)bad;
}

static void test_threads(void **state)
{
    pthread_t th[4];

    (void)state;
    ucs_fn = lib_addr("libucs.so.0", "ucs_get_tid");
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, asker, NULL), 0);
    for (int i = 0; i < 4; i++) {
        void *bad;

        assert_int_equal(pthread_join(th[i], &bad), 0);
        assert_int_equal((intptr_t)bad, 0);
    }
}

static char calls[WEFT__BEFORE_CLOSE_MAX + 2];
static size_t ncalls;

static void hook_a(void) { calls[ncalls++] = 'a'; }
static void hook_b(void) { calls[ncalls++] = 'b'; }

static void test_before_close(void **state)
{
    (void)state;
    assert_int_equal(weft__recorder_before_close(hook_a), 0);
    assert_int_equal(weft__recorder_before_close(hook_b), 0);
    for (int i = 2; i < WEFT__BEFORE_CLOSE_MAX; i++)
        assert_int_equal(weft__recorder_before_close(hook_a), 0);
    assert_int_equal(weft__recorder_before_close(hook_b), WEFT_ELIMIT);
    weft__recorder_closing();
    assert_int_equal(ncalls, WEFT__BEFORE_CLOSE_MAX);
    assert_memory_equal(calls, "abaa", 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_program_and_libc),
        cmocka_unit_test(test_no_object),
        cmocka_unit_test(test_mpi_stack),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_before_close),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
