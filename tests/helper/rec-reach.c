/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-reach: one block or more of each of valgrind's leak kinds alive at
 * exit, for MTREC_REACH=1 (t2700), each of a size of its own so that the
 * byte totals tell the kinds apart:
 *
 *   definite   a plain block dropped (24 bytes), and the head of a list
 *              whose head pointer is dropped (48)
 *   indirect   the three other nodes of that list (3 x 48)
 *   possible   a block reached only through a pointer into its middle
 *              (100 bytes, the pointer 40 bytes in)
 *   reachable  a global cache and its two entries (64 + 2 x 32), and a
 *              block only another thread's stack points to (200); that
 *              thread sleeps in nanosleep() when the program exits
 *
 * The pointers dropped are dropped in functions that return, and the
 * stack they used is cleared, so that no stale copy of them is left
 * where a scan would take it for a live one.
 *
 * Usage: rec-reach           the fixture
 *        rec-reach many N    N blocks of 32 bytes kept live from a global
 *                            array (the scan's cost), then the fixture
 *        rec-reach lost N    N blocks of 32 bytes lost, in pairs (the
 *                            first definite, the second indirect), then
 *                            the fixture
 *        rec-reach gaps N    N blocks of 16 bytes 240 bytes apart (freed
 *                            blocks between them), by fours: the first
 *                            kept from a global array, the second only
 *                            from the first (reachable both), the third
 *                            dropped (definite), the fourth only from the
 *                            third (indirect) -- many small blocks whose
 *                            gaps a scan reads with them; then the fixture
 *        rec-reach seccomp   the fixture under a seccomp filter that
 *                            refuses process_vm_readv() (EPERM), as some
 *                            containers' do: the scan reads through a pipe
 *        rec-reach busy      the fixture, with two more threads that block
 *                            every signal and allocate and free without
 *                            end while the program exits, and a page of
 *                            the program's data made PROT_NONE after the
 *                            page before it took a pointer to a block of
 *                            300 bytes (reachable) */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

struct node {
	struct node *next;
	char pad[40];
};

struct cache {
	void *entry[2];
	char pad[48];
};

/* volatile: the compiler would drop allocations nothing reads */
static struct cache *volatile cache;	/* reachable, as its entries */
static char *volatile middle;		/* into the middle of a block: possible */
static void **volatile many;		/* rec-reach many N: reachable */
static sem_t held;
static char guarded[2 * 4096] __attribute__((aligned(4096)));

/* Write over the stack below the caller, where the dropped pointers were. */
static NOINLINE void clear_stack(void)
{
	volatile char junk[16384];

	memset((char *)junk, 0, sizeof(junk));
	__asm__ volatile("" ::: "memory");
}

static NOINLINE void drop_plain(void)
{
	volatile char *p = malloc(24);

	p[0] = 1;
}

static NOINLINE void drop_list(void)
{
	struct node *head = NULL;

	for (int i = 0; i < 4; i++) {
		struct node *n = calloc(1, sizeof(*n));

		n->next = head;
		head = n;
	}
	__asm__ volatile("" : : "r"(head) : "memory");
}

static NOINLINE void keep_middle(void)
{
	char *b = calloc(1, 100);

	middle = b + 40;
}

static NOINLINE void fill_cache(void)
{
	struct cache *c = calloc(1, sizeof(*c));

	c->entry[0] = calloc(1, 32);
	c->entry[1] = calloc(1, 32);
	cache = c;
}

/* The block only this thread's stack points to: it sleeps holding it. */
static void *holder(void *arg)
{
	void *volatile mine = calloc(1, 200);
	struct timespec forever = { 3600, 0 };

	(void)arg;
	sem_post(&held);
	for (;;)
		nanosleep(&forever, NULL);
	return mine;
}

static NOINLINE void keep_many(long n)
{
	void **m = malloc((size_t)n * sizeof(void *));

	for (long i = 0; i < n; i++)
		m[i] = malloc(32);
	many = m;
}

/* Allocates and frees until the process ends, deaf to every signal. */
static void *churn(void *arg)
{
	void *keep[64] = { 0 };
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (unsigned i = 0;; i++) {
		free(keep[i % 64]);
		keep[i % 64] = malloc(16 + i % 200);
	}
	return NULL;
}

static NOINLINE void busy(void)
{
	void *b = calloc(1, 300);
	pthread_t t;

	memcpy(guarded, &b, sizeof(b));
	mprotect(guarded + 4096, 4096, PROT_NONE);
	for (int i = 0; i < 2; i++)
		pthread_create(&t, NULL, churn, NULL);
}

static void *volatile sink;
static void **volatile gaps;		/* rec-reach gaps N: every fourth block */

static NOINLINE void keep_gaps(long n)
{
	void **g = calloc((size_t)n / 4 + 1, sizeof(void *));
	void **b = malloc((size_t)n * sizeof(void *)), **spacer = malloc((size_t)n * sizeof(void *));

	/* all first, then the spacers freed: between two blocks in use,
	 * they cannot merge, nor be split for the next block */
	for (long i = 0; i < n; i++) {
		b[i] = calloc(1, 16);
		spacer[i] = malloc(200);
	}
	for (long i = 0; i + 1 < n; i += 2)
		*(void **)b[i] = b[i + 1];
	for (long i = 0; i < n; i += 4)
		g[i / 4] = b[i];
	for (long i = 0; i < n; i++)
		free(spacer[i]);
	memset(b, 0, (size_t)n * sizeof(void *));
	free(b);
	free(spacer);
	gaps = g;
}

static NOINLINE void lose_many(long n)
{
	for (long i = 0; i + 1 < n; i += 2) {
		void **first = malloc(32);

		first[0] = malloc(32);
		sink = first;
	}
	sink = NULL;
}

/* process_vm_readv() fails with EPERM from now on, in this thread and
 * those it makes. */
static void deny_process_vm_readv(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
		exit(3);
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 1 && strcmp(argv[1], "seccomp") == 0)
		deny_process_vm_readv();

	if (argc > 2 && strcmp(argv[1], "many") == 0)
		keep_many(atol(argv[2]));
	if (argc > 2 && strcmp(argv[1], "lost") == 0) {
		lose_many(atol(argv[2]));
		clear_stack();
	}
	if (argc > 2 && strcmp(argv[1], "gaps") == 0) {
		keep_gaps(atol(argv[2]));
		clear_stack();
	}
	if (argc > 1 && strcmp(argv[1], "busy") == 0)
		busy();
	sem_init(&held, 0, 0);
	if (pthread_create(&t, NULL, holder, NULL) != 0)
		return 2;
	while (sem_wait(&held) != 0)
		;
	drop_plain();
	clear_stack();
	drop_list();
	clear_stack();
	keep_middle();
	clear_stack();
	fill_cache();
	clear_stack();
	return 0;
}
