/* test_procwatch.c - is a process still there (daemon/ingest/procwatch.c):
 * a running child, the same child as a zombie and reaped, a pid that
 * names another process than the one that started then, and which peers
 * weftd may watch (the Unix socket's peer pid; a loopback TCP peer whose
 * Hello names a process of its user, or one of weftd's pid namespace that
 * ended already). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "procwatch.h"
#include "testutil.h"

static void test_running_zombie_reaped(void **state)
{
    pid_t pid = test_sleeper();
    uint64_t start = weft_proc_start((uint32_t)pid);
    int status;

    (void)state;
    assert_true(start > 0);
    assert_int_equal(weft_proc_start((uint32_t)pid), start);
    assert_int_equal(weft_proc_gone((uint32_t)pid, start), 0);
    assert_int_equal(weft_proc_gone((uint32_t)pid, 0), 0);
    kill(pid, SIGKILL);
    /* A zombie until reaped: gone already. */
    assert_int_equal(waitid(P_PID, (id_t)pid, NULL, WEXITED | WNOWAIT), 0);
    assert_int_equal(weft_proc_gone((uint32_t)pid, start), 1);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(weft_proc_gone((uint32_t)pid, start), 1);
    assert_int_equal(weft_proc_start((uint32_t)pid), 0);
}

static void test_other_process(void **state)
{
    uint64_t start = weft_proc_start((uint32_t)getpid());

    (void)state;
    assert_true(start > 0);
    /* This pid, but a start time it did not have: another process now. */
    assert_int_equal(weft_proc_gone((uint32_t)getpid(), start + 1), 1);
    assert_int_equal(weft_proc_gone((uint32_t)getpid(), start), 0);
    assert_int_equal(weft_proc_gone(0, 0), 0); /* no pid: cannot tell */
    assert_int_equal(weft_proc_start(0), 0);
    assert_int_equal(weft_proc_self_start(), start);
}

static void test_watchable(void **state)
{
    weft_conn c;
    Weft__Hello h = WEFT__HELLO__INIT;
    uint64_t start = 99;
    uint32_t me = (uint32_t)getpid(), uid = (uint32_t)getuid();

    (void)state;
    memset(&c, 0, sizeof c);
    c.is_unix = 1;
    c.peer_pid = me;
    h.pid = me;
    assert_int_equal(weft_proc_watchable(&c, &h, uid + 1, &start), 1);
    assert_int_equal(start, weft_proc_start(me));
    /* A Hello naming another process than the peer's. */
    h.pid = me + 1;
    assert_int_equal(weft_proc_watchable(&c, &h, uid, &start), 0);
    assert_int_equal(start, 0);
    h.pid = me;
    c.peer_pid = 0; /* another pid namespace */
    assert_int_equal(weft_proc_watchable(&c, &h, uid, &start), 0);
    h.pid = 0;
    assert_int_equal(weft_proc_watchable(&c, &h, uid, &start), 0);
    /* TCP: from loopback, a process of the user, which started when the
     * Hello says (or it does not say). */
    c.is_unix = 0;
    c.peer_loopback = 1;
    h.pid = me;
    assert_int_equal(weft_proc_watchable(&c, &h, uid, &start), 1);
    assert_int_equal(start, weft_proc_start(me));
    assert_int_equal(weft_proc_watchable(&c, &h, uid + 1, &start), 0);
    h.proc_start = weft_proc_start(me);
    h.pid_ns = weft_proc_pidns();
    assert_true(h.pid_ns != 0);
    assert_int_equal(weft_proc_watchable(&c, &h, uid, &start), 1);
    assert_int_equal(start, h.proc_start);
    /* Another process has the pid now: the Hello's ended. */
    h.proc_start++;
    assert_int_equal(weft_proc_watchable(&c, &h, uid, &start), 1);
    assert_int_equal(start, h.proc_start);
    assert_int_equal(weft_proc_gone(me, start), 1);
    h.pid_ns++; /* ... unless the pid is another namespace's */
    assert_int_equal(weft_proc_watchable(&c, &h, uid, &start), 0);
    c.peer_loopback = 0; /* another host's pids mean nothing here */
    h.pid_ns--;
    h.proc_start--;
    assert_int_equal(weft_proc_watchable(&c, &h, uid, &start), 0);
}

/* A loopback peer that ended before weftd read its Hello: watched, and
 * gone, when its pid is of weftd's namespace; not watched otherwise. */
static void test_watchable_gone(void **state)
{
    weft_conn c;
    Weft__Hello h = WEFT__HELLO__INIT;
    pid_t pid = test_sleeper();
    uint64_t start = 0;
    uint32_t uid = (uint32_t)getuid();
    int status;

    (void)state;
    memset(&c, 0, sizeof c);
    c.peer_loopback = 1;
    h.pid = (uint32_t)pid;
    h.proc_start = weft_proc_start(h.pid);
    h.pid_ns = weft_proc_pidns();
    kill(pid, SIGKILL);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(weft_proc_watchable(&c, &h, uid, &start), 1);
    assert_int_equal(start, h.proc_start);
    assert_int_equal(weft_proc_gone(h.pid, start), 1);
    h.pid_ns = 0; /* an older client: cannot tell */
    assert_int_equal(weft_proc_watchable(&c, &h, uid, &start), 0);
    h.pid_ns = weft_proc_pidns() + 1;
    assert_int_equal(weft_proc_watchable(&c, &h, uid, &start), 0);
    /* On the Unix socket, the peer's pid: its start as the Hello says. */
    c.is_unix = 1;
    c.peer_pid = h.pid;
    assert_int_equal(weft_proc_watchable(&c, &h, uid, &start), 1);
    assert_int_equal(start, h.proc_start);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_running_zombie_reaped),
        cmocka_unit_test(test_other_process),
        cmocka_unit_test(test_watchable),
        cmocka_unit_test(test_watchable_gone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
