/* bench/peers_prog.c - the program bench/peers.sh traces with weft,
 * LTTng-UST and uftrace: a few million calls of small functions, one
 * thread, compiled with -finstrument-functions.
 *
 * A tiny expression interpreter: build() makes a full binary tree of
 * depth DEPTH (operators inside, constants and the variable x at the
 * leaves), then eval() walks it EVALS times with a different x, calling
 * leaf() at each leaf and apply() -> op_add/op_sub/op_mul/op_max at each
 * operator; free_tree() frees it. Every instrumented function counts its
 * calls, and the program prints
 *   calls C result R
 * C being every call of an instrumented function, main included, so a
 * complete trace holds 2 * C Enter and Leave events. EVALS is CALLS (the
 * option) divided by the calls of one walk, at least 1.
 *
 * Linked alone (bench/peers_prog) the hooks are glibc's, which do
 * nothing; linked with libweft-instrument (bench/peers_prog_weft) they
 * record. The source is the same.
 *
 *   peers_prog [-n CALLS] [-d DEPTH]
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

typedef struct node {
    int op;              /* 0: leaf; 1-4: add, sub, mul, max */
    long val;            /* leaf: constant, or -1 for x */
    struct node *l, *r;
} node;

static unsigned long calls;  /* instrumented calls so far */

NOINLINE long leaf(const node *n, long x);
NOINLINE long op_add(long a, long b);
NOINLINE long op_sub(long a, long b);
NOINLINE long op_mul(long a, long b);
NOINLINE long op_max(long a, long b);
NOINLINE long apply(int op, long a, long b);
NOINLINE long eval(const node *n, long x);
NOINLINE node *build(unsigned depth, unsigned seed);
NOINLINE void free_tree(node *n);

long leaf(const node *n, long x)
{
    calls++;
    return n->val < 0 ? x : n->val;
}

long op_add(long a, long b)
{
    calls++;
    return a + b;
}

long op_sub(long a, long b)
{
    calls++;
    return a - b;
}

/* Wraps at 2^32 so the sums stay small and defined. */
long op_mul(long a, long b)
{
    calls++;
    return (long)(((unsigned long)a * (unsigned long)b) & 0xffffffffUL);
}

long op_max(long a, long b)
{
    calls++;
    return a > b ? a : b;
}

long apply(int op, long a, long b)
{
    calls++;
    switch (op) {
    case 1: return op_add(a, b);
    case 2: return op_sub(a, b);
    case 3: return op_mul(a, b);
    default: return op_max(a, b);
    }
}

long eval(const node *n, long x)
{
    calls++;
    if (n->op == 0)
        return leaf(n, x);
    return apply(n->op, eval(n->l, x), eval(n->r, x));
}

node *build(unsigned depth, unsigned seed)
{
    node *n = calloc(1, sizeof *n);

    calls++;
    if (n == NULL) {
        perror("peers_prog: calloc");
        exit(1);
    }
    if (depth == 0) {
        n->val = seed % 3 == 0 ? -1 : (long)(seed % 7) + 1;
        return n;
    }
    n->op = (int)(seed % 4) + 1;
    n->l = build(depth - 1, seed * 2 + 1);
    n->r = build(depth - 1, seed * 2 + 2);
    return n;
}

void free_tree(node *n)
{
    calls++;
    if (n->op != 0) {
        free_tree(n->l);
        free_tree(n->r);
    }
    free(n);
}

int main(int argc, char **argv)
{
    unsigned long want = 4000000, evals, per_eval;
    unsigned depth = 10;
    long result = 0;
    node *root;
    int opt;

    calls++;
    while ((opt = getopt(argc, argv, "n:d:")) != -1) {
        switch (opt) {
        case 'n': want = strtoul(optarg, NULL, 10); break;
        case 'd': depth = (unsigned)strtoul(optarg, NULL, 10); break;
        default:
            fprintf(stderr, "usage: peers_prog [-n CALLS] [-d DEPTH]\n");
            return 2;
        }
    }
    if (depth > 20) {
        fprintf(stderr, "peers_prog: depth %u is above 20\n", depth);
        return 2;
    }
    /* one walk: 2^(d+1)-1 eval, 2^d leaf, 2^d-1 apply and as many op_ */
    per_eval = 5UL * (1UL << depth) - 3;
    evals = want / per_eval ? want / per_eval : 1;
    root = build(depth, 0);
    for (unsigned long i = 0; i < evals; i++)
        result += eval(root, (long)i);
    free_tree(root);
    printf("calls %lu result %ld\n", calls, result);
    return 0;
}
