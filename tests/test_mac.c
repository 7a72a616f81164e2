/* test_mac.c - the session MAC of a TCP connection (proto/mac.c) and
 * what a credential binds itself to (proto/bind.c): a sealed frame opens
 * on the other side; an altered byte, a replayed, reordered or reflected
 * frame, a cut tag and a wrong key are each refused with a named error;
 * the AuthAck's proof; a credential's payload refused for another
 * nonce, another server end, another client end, another layout.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "bind.h"
#include "frame.h"
#include "mac.h"
#include "weft_errors.h"

static const uint8_t key[WEFT_MAC_KEY] = "0123456789abcdef0123456789abcde";
static const uint8_t key2[WEFT_MAC_KEY] = "0123456789abcdef0123456789abcdX";

/* A sealed frame of an EventBatch with seq `seq`, as m sends it. */
static size_t sealed_batch(weft_mac *m, uint64_t seq, uint8_t **out)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__EventBatch b = WEFT__EVENT_BATCH__INIT;
    ssize_t n;

    b.location = 1;
    b.seq = seq;
    b.records.data = (uint8_t *)"\x10\x01\x02\x03";
    b.records.len = 4;
    env.msg_case = WEFT__ENVELOPE__MSG_EVENT_BATCH;
    env.event_batch = &b;
    n = weft_frame_pack_room(&env, WEFT_MAC_TAG, out);
    assert_true(n > 0);
    return weft_mac_seal_in_place(m, *out, (size_t)n);
}

/* Opens frame f (len bytes with its header) with m: the envelope's
 * length, or the error with why. */
static ssize_t open_frame(weft_mac *m, const uint8_t *f, size_t len,
                          char *why, size_t whylen)
{
    uint32_t announced = (uint32_t)f[0] << 24 | (uint32_t)f[1] << 16 |
                         (uint32_t)f[2] << 8 | f[3];

    assert_int_equal(announced, len - WEFT_FRAME_HEADER);
    why[0] = 0;
    return weft_mac_open(m, f + WEFT_FRAME_HEADER, len - WEFT_FRAME_HEADER,
                         why, whylen);
}

static void test_good_frames(void **state)
{
    weft_mac *c = weft_mac_new(key, WEFT_MAC_CLIENT);
    weft_mac *s = weft_mac_new(key, WEFT_MAC_SERVER);
    uint8_t *f = NULL;
    char why[128];

    (void)state;
    for (uint64_t i = 1; i <= 3; i++) {
        size_t len = sealed_batch(c, i, &f);
        ssize_t n = open_frame(s, f, len, why, sizeof why);
        Weft__Envelope *env;
        assert_int_equal(n, len - WEFT_FRAME_HEADER - WEFT_MAC_TAG);
        env = weft_frame_unpack(f + WEFT_FRAME_HEADER, (size_t)n);
        assert_non_null(env);
        assert_int_equal(env->event_batch->seq, i);
        weft_frame_free_envelope(env);
        free(f);
    }
    assert_int_equal(weft_mac_sent(c), 3);
    assert_int_equal(weft_mac_received(s), 3);
    /* weft_mac_seal (realloc) seals the same way, server to client. */
    {
        uint8_t *g = NULL;
        Weft__Envelope env = WEFT__ENVELOPE__INIT;
        Weft__Heartbeat hb = WEFT__HEARTBEAT__INIT;
        ssize_t n;
        env.msg_case = WEFT__ENVELOPE__MSG_HEARTBEAT;
        env.heartbeat = &hb;
        n = weft_frame_pack(&env, &g);
        assert_true(n > 0);
        n = weft_mac_seal(s, &g, (size_t)n);
        assert_true(n > 0);
        assert_true(open_frame(c, g, (size_t)n, why, sizeof why) >= 0);
        free(g);
    }
    weft_mac_free(c);
    weft_mac_free(s);
}

static void test_altered_byte(void **state)
{
    weft_mac *c = weft_mac_new(key, WEFT_MAC_CLIENT);
    weft_mac *s = weft_mac_new(key, WEFT_MAC_SERVER);
    uint8_t *f = NULL;
    char why[128];
    size_t len = sealed_batch(c, 1, &f);

    (void)state;
    for (size_t i = WEFT_FRAME_HEADER; i < len; i++) {
        f[i] ^= 0x01;
        assert_int_equal(open_frame(s, f, len, why, sizeof why), WEFT_EAUTH);
        assert_string_equal(why, "frame 1: bad MAC (altered or injected)");
        f[i] ^= 0x01;
    }
    /* Untouched, it still opens: a refused frame is not counted. */
    assert_true(open_frame(s, f, len, why, sizeof why) > 0);
    free(f);
    weft_mac_free(c);
    weft_mac_free(s);
}

static void test_replayed_reordered_reflected(void **state)
{
    weft_mac *c = weft_mac_new(key, WEFT_MAC_CLIENT);
    weft_mac *s = weft_mac_new(key, WEFT_MAC_SERVER);
    weft_mac *s2 = weft_mac_new(key, WEFT_MAC_CLIENT);
    uint8_t *f1 = NULL, *f2 = NULL;
    char why[128];
    size_t l1 = sealed_batch(c, 1, &f1), l2 = sealed_batch(c, 2, &f2);

    (void)state;
    /* Frame 2 first: reordered (or frame 1 dropped). */
    assert_int_equal(open_frame(s, f2, l2, why, sizeof why), WEFT_EAUTH);
    assert_string_equal(why, "frame 1: bad MAC (altered or injected)");
    assert_true(open_frame(s, f1, l1, why, sizeof why) > 0);
    /* Frame 1 again: replayed. */
    assert_int_equal(open_frame(s, f1, l1, why, sizeof why), WEFT_EAUTH);
    assert_string_equal(why, "frame 2: bad MAC (altered or injected)");
    assert_true(open_frame(s, f2, l2, why, sizeof why) > 0);
    /* The client's own frame sent back to it: reflected. */
    assert_int_equal(open_frame(s2, f1, l1, why, sizeof why), WEFT_EAUTH);
    free(f1);
    free(f2);
    weft_mac_free(c);
    weft_mac_free(s);
    weft_mac_free(s2);
}

static void test_truncated_and_wrong_key(void **state)
{
    weft_mac *c = weft_mac_new(key, WEFT_MAC_CLIENT);
    weft_mac *s = weft_mac_new(key, WEFT_MAC_SERVER);
    weft_mac *other = weft_mac_new(key2, WEFT_MAC_SERVER);
    uint8_t *f = NULL;
    char why[128];
    size_t len = sealed_batch(c, 1, &f);

    (void)state;
    /* The tag cut by one byte. */
    assert_int_equal(weft_mac_open(s, f + WEFT_FRAME_HEADER,
                                   len - WEFT_FRAME_HEADER - 1, why,
                                   sizeof why), WEFT_EAUTH);
    assert_string_equal(why, "frame 1: bad MAC (altered or injected)");
    /* Less than a tag: an unsealed frame. */
    assert_int_equal(weft_mac_open(s, f + WEFT_FRAME_HEADER, 5, why,
                                   sizeof why), WEFT_EAUTH);
    assert_string_equal(why, "frame 1: 5 bytes, shorter than its MAC");
    /* Another session's key. */
    assert_int_equal(open_frame(other, f, len, why, sizeof why), WEFT_EAUTH);
    assert_string_equal(why, "frame 1: bad MAC (altered or injected)");
    assert_true(open_frame(s, f, len, why, sizeof why) > 0);
    free(f);
    weft_mac_free(c);
    weft_mac_free(s);
    weft_mac_free(other);
}

static void test_proof(void **state)
{
    const uint8_t nonce[WEFT_AUTH_NONCE] = "nonce-of-16-byte";
    uint8_t nonce2[WEFT_AUTH_NONCE], p[WEFT_MAC_TAG];

    (void)state;
    memcpy(nonce2, nonce, sizeof nonce2);
    nonce2[3] ^= 1;
    weft_mac_proof(key, nonce, sizeof nonce, p);
    assert_true(weft_mac_proof_ok(key, nonce, sizeof nonce, p, sizeof p));
    assert_false(weft_mac_proof_ok(key2, nonce, sizeof nonce, p, sizeof p));
    assert_false(weft_mac_proof_ok(key, nonce2, sizeof nonce, p, sizeof p));
    assert_false(weft_mac_proof_ok(key, nonce, sizeof nonce, p, 15));
    /* No frame's tag is a proof: a frame of the nonce's bytes. */
    {
        weft_mac *s = weft_mac_new(key, WEFT_MAC_SERVER);
        uint8_t f[4 + WEFT_AUTH_NONCE + WEFT_MAC_TAG] = {0, 0, 0, 16};
        memcpy(f + 4, nonce, WEFT_AUTH_NONCE);
        weft_mac_seal_in_place(s, f, 4 + WEFT_AUTH_NONCE);
        assert_false(weft_mac_proof_ok(key, nonce, sizeof nonce,
                                       f + 4 + WEFT_AUTH_NONCE,
                                       WEFT_MAC_TAG));
        weft_mac_free(s);
    }
}

/* ---- the credential's binding ------------------------------------------- */

static weft_bind_addr end4(const char *ip, uint16_t port)
{
    struct sockaddr_in in;
    weft_bind_addr a;

    memset(&in, 0, sizeof in);
    in.sin_family = AF_INET;
    in.sin_port = htons(port);
    assert_int_equal(inet_pton(AF_INET, ip, &in.sin_addr), 1);
    assert_int_equal(weft_bind_addr_from(&a, (struct sockaddr *)&in), 0);
    return a;
}

static weft_bind_addr end6(const char *ip, uint16_t port)
{
    struct sockaddr_in6 in6;
    weft_bind_addr a;

    memset(&in6, 0, sizeof in6);
    in6.sin6_family = AF_INET6;
    in6.sin6_port = htons(port);
    assert_int_equal(inet_pton(AF_INET6, ip, &in6.sin6_addr), 1);
    assert_int_equal(weft_bind_addr_from(&a, (struct sockaddr *)&in6), 0);
    return a;
}

/* A client's payload: alice at 10.0.0.5:40000 to weftd at
 * 10.0.0.1:7420, encoded and decoded again. */
static weft_bind payload(const uint8_t nonce[WEFT_AUTH_NONCE])
{
    weft_bind b, got;
    uint8_t bytes[WEFT_BIND_PAYLOAD];
    char why[128];

    memset(&b, 0, sizeof b);
    memcpy(b.nonce, nonce, WEFT_AUTH_NONCE);
    b.client = end4("10.0.0.5", 40000);
    b.server = end4("10.0.0.1", 7420);
    memcpy(b.key, key, WEFT_MAC_KEY);
    weft_bind_encode(&b, bytes);
    assert_int_equal(weft_bind_decode(bytes, sizeof bytes, &got, why,
                                      sizeof why), 0);
    assert_memory_equal(&got, &b, sizeof b);
    return got;
}

static void test_bind_check(void **state)
{
    const uint8_t nonce[WEFT_AUTH_NONCE] = "nonce-of-16-byte";
    uint8_t other[WEFT_AUTH_NONCE];
    weft_bind b = payload(nonce);
    weft_bind_addr local = end4("10.0.0.1", 7420);
    weft_bind_addr peer = end4("10.0.0.5", 40000);
    weft_bind_addr relay_local = end4("10.0.0.1", 7421);
    weft_bind_addr relay_peer = end4("10.0.0.5", 40001);
    weft_bind_addr other_host = end4("10.0.0.9", 40000);
    char why[256];

    (void)state;
    assert_int_equal(weft_bind_check(&b, nonce, &local, &peer, why,
                                     sizeof why), 0);
    memcpy(other, nonce, sizeof other);
    other[15] ^= 1;
    assert_int_equal(weft_bind_check(&b, other, &local, &peer, why,
                                     sizeof why), WEFT_EAUTH);
    assert_string_equal(why, "it answers another connection's challenge "
                        "(replayed or relayed)");
    /* Made for a relay's port, presented on weftd's. */
    assert_int_equal(weft_bind_check(&b, nonce, &relay_local, &peer, why,
                                     sizeof why), WEFT_EAUTH);
    assert_string_equal(why, "it was made for a connection to "
                        "10.0.0.1:7420, not to weftd's 10.0.0.1:7421 "
                        "(relayed by another program?)");
    /* Presented by another port of the client's host, or another host. */
    assert_int_equal(weft_bind_check(&b, nonce, &local, &relay_peer, why,
                                     sizeof why), WEFT_EAUTH);
    assert_string_equal(why, "it was made for a connection from "
                        "10.0.0.5:40000, not from 10.0.0.5:40001 "
                        "(relayed by another program?)");
    assert_int_equal(weft_bind_check(&b, nonce, &local, &other_host, why,
                                     sizeof why), WEFT_EAUTH);
    /* An IPv4-mapped view of the same ends is the same ends. */
    local = end6("::ffff:10.0.0.1", 7420);
    peer = end6("::ffff:10.0.0.5", 40000);
    assert_int_equal(weft_bind_check(&b, nonce, &local, &peer, why,
                                     sizeof why), 0);
    local = end6("::1", 7420);
    assert_int_equal(weft_bind_check(&b, nonce, &local, &peer, why,
                                     sizeof why), WEFT_EAUTH);
    assert_string_equal(why, "it was made for a connection to "
                        "10.0.0.1:7420, not to weftd's [::1]:7420 "
                        "(relayed by another program?)");
}

static void test_bind_decode_refuses(void **state)
{
    uint8_t bytes[WEFT_BIND_PAYLOAD + 1];
    weft_bind b;
    char why[256];

    (void)state;
    memset(bytes, 0, sizeof bytes);
    bytes[0] = WEFT_BIND_VERSION;
    /* A protocol 5 client's payload: its 16-byte nonce alone. */
    assert_int_equal(weft_bind_decode(bytes, WEFT_AUTH_NONCE, &b, why,
                                      sizeof why), WEFT_EAUTH);
    assert_string_equal(why, "its payload (16 bytes) does not bind it to a "
                        "connection (an older client, or not libweft's)");
    assert_int_equal(weft_bind_decode(bytes, sizeof bytes, &b, why,
                                      sizeof why), WEFT_EAUTH);
    bytes[0] = WEFT_BIND_VERSION + 1;
    assert_int_equal(weft_bind_decode(bytes, WEFT_BIND_PAYLOAD, &b, why,
                                      sizeof why), WEFT_EAUTH);
    assert_true(WEFT_BIND_PAYLOAD <= WEFT_AUTH_MAX_PAYLOAD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_frames),
        cmocka_unit_test(test_altered_byte),
        cmocka_unit_test(test_replayed_reordered_reflected),
        cmocka_unit_test(test_truncated_and_wrong_key),
        cmocka_unit_test(test_proof),
        cmocka_unit_test(test_bind_check),
        cmocka_unit_test(test_bind_decode_refuses),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
