/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ana-plateau.c -- leaks that stop growing while the program goes on, and
 * short runs, for the growth rule of issue 26 (t7001):
 *
 *   capped    a 256-entry cache that fills in the first quarter of a 1 s
 *             run, then keeps taking new entries, each replacing one
 *             picked at random (what GlusterFS's io-stats and a fuse.so
 *             cache look like): what it holds at exit is its newest
 *             entries, but it holds 256 from the first quarter on
 *   lru       a 64-entry LRU cache over an 80 ms run, its keys skewed (a
 *             few hot ones stay, the others come and go)
 *   shutdown  a 1.5 s run that allocates every 10 ms: 2 blocks at
 *             start-up and 14 at shutdown amid 28 temporary allocations,
 *             in the run's last millisecond but a quarter of its events
 *             (Open vSwitch's cmap_rehash); a recorder that writes its
 *             clock only when a thread fills its chunk wrote it 7 times
 *   flat      500 blocks made over the first 15% of a 1 s run, kept to
 *             the end while requests go on (GlusterFS's io-stats: 500
 *             blocks flat for over 80% of a brick's run)
 *   saturate  a cache of up to 1,024 entries, one per key, the keys of a
 *             request at random: it fills ever more slowly and is full
 *             from about a third of a 2 s run on (a fuse.so cache that
 *             saturates at 1,024)
 *   slowing   a leak of one block per request, the requests ever slower
 *             (the k-th of 300 at 1.2 s * (k/300)^2: a script on a machine
 *             ever busier), each with 20 temporary allocations
 *   clients   per-client state: 12 clients, each arriving at a random
 *             moment of the first 55% of a 1.2 s run with 3 to 10 blocks
 *             of state, then making requests (each with a block of state
 *             that lives while the request does) until the end
 *
 * capped, shutdown, flat, saturate and clients also have a steady leak
 * beside them, one
 * block every 2 ms of the run: the control that must stay linear.  The
 * phases are paced by the clock (CLOCK_MONOTONIC), so that the shapes are
 * the same in time whatever the machine's load; the random choices are
 * seeded by the pid, so that no two runs are the same.  Each leaking call
 * carries its tag.
 *
 * usage: ana-plateau SHAPE [NO-STEADY]: with a second argument, no
 * steady leak.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *volatile sink;
static int with_steady = 1;

static double
now_ms (void)
{
	struct timespec ts;

	clock_gettime (CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static void
temporary (long i)
{
	char *volatile t = malloc (32 + (size_t) (i % 64));
	t[0] = (char) i;
	free (t);
}

__attribute__((noinline)) static void
steady_leak (void)
{
	sink = malloc (64);                /* STEADY */
}

/* One steady block for each 2 ms since T0, those of a time the program
 * was not scheduled made up at once (as its requests would be, queued
 * meanwhile): a load that stalls the program bends the curve only where
 * the stall was, not everything after it. */
static void
steady_until (double t0, double *next)
{
	while (with_steady && *next <= now_ms () - t0) {
		steady_leak ();
		*next += 2;
	}
}

/* ---- capped ---- */

#define CAPPED 256

__attribute__((noinline)) static void *
capped_entry (long key)
{
	char *e = malloc (300);            /* CAPPED */
	memset (e, (int) key, 300);
	return e;
}

static void
capped (void)
{
	static void *cache[CAPPED];
	double t0 = now_ms (), steady = 0;
	long n = 0, i = 0;

	while (now_ms () - t0 < 1000) {
		double t = now_ms () - t0;
		temporary (i++);
		/* fill over the first 250 ms, then a new entry every 2 ms */
		if (n < CAPPED && n < t * CAPPED / 250) {
			cache[n] = capped_entry (n);
			n++;
		} else if (n >= CAPPED && t - 250 >= (double) (n - CAPPED) * 2) {
			long victim = random () % CAPPED;
			free (cache[victim]);
			cache[victim] = capped_entry (n++);
		}
		steady_until (t0, &steady);
		usleep (200);
	}
}

/* ---- lru ---- */

#define LRU 64
#define KEYS 256

struct entry {
	struct entry *prev, *next;
	long key;
	char data[120];
};

static struct entry *lru_index[KEYS];
static struct entry lru_head = { &lru_head, &lru_head, -1, { 0 } };
static int lru_len;

static void
lru_unlink (struct entry *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
}

static void
lru_front (struct entry *e)
{
	e->next = lru_head.next;
	e->prev = &lru_head;
	lru_head.next->prev = e;
	lru_head.next = e;
}

__attribute__((noinline)) static struct entry *
lru_insert (long key)
{
	struct entry *e = malloc (sizeof *e);   /* LRU */
	e->key = key;
	memset (e->data, (int) key, sizeof e->data);
	return e;
}

static void
lru_lookup (long key)
{
	struct entry *e = lru_index[key];

	if (e != NULL) {
		lru_unlink (e);
		lru_front (e);
		return;
	}
	if (lru_len == LRU) {
		struct entry *old = lru_head.prev;
		lru_unlink (old);
		lru_index[old->key] = NULL;
		free (old);
		lru_len--;
	}
	e = lru_insert (key);
	lru_index[key] = e;
	lru_front (e);
	lru_len++;
}

static void
lru (void)
{
	double t0 = now_ms ();
	long i = 0;

	while (now_ms () - t0 < 80) {
		/* skewed: 16 keys take half the lookups */
		long r = random () % 1024, key = r < 512 ? r % 16 : r % KEYS;
		temporary (i++);
		lru_lookup (key);
		if (i % 64 == 0)
			usleep (100);
	}
}

/* ---- shutdown ---- */

__attribute__((noinline)) static void
rehash (int n, int temporaries)
{
	for (int i = 0; i < n; i++) {
		sink = malloc (512);       /* REHASH */
		for (int k = 0; k < temporaries; k++)
			temporary (k);
	}
}

static void
shutdown_run (void)
{
	double t0 = now_ms (), steady = 0;

	rehash (2, 0);
	while (now_ms () - t0 < 1500) {
		steady_until (t0, &steady);
		usleep (10000);
	}
	rehash (14, 2);
}

/* ---- flat ---- */

#define FLAT 500

__attribute__((noinline)) static void *
flat_block (long i)
{
	char *b = malloc (200);            /* FLAT */
	b[0] = (char) i;
	return b;
}

static void
flat (void)
{
	double t0 = now_ms (), steady = 0;
	long n = 0;

	for (long i = 0; now_ms () - t0 < 1000; i++) {
		double t = now_ms () - t0;
		while (n < FLAT && n < t * FLAT / 150)
			sink = flat_block (n++);
		temporary (i);
		steady_until (t0, &steady);
		usleep (200);
	}
}

/* ---- saturate ---- */

#define SATURATE 1024

__attribute__((noinline)) static void *
saturate_entry (long key)
{
	char *e = malloc (28);             /* SATURATE */
	e[0] = (char) key;
	return e;
}

static void
saturate (void)
{
	static void *cache[SATURATE];
	double t0 = now_ms (), steady = 0, next = 0;

	for (long i = 0; now_ms () - t0 < 2000; i++) {
		/* 12 requests a millisecond, those of a stall made up at once:
		 * 1,024 keys are all seen after about 7,000 requests, in 0.6 s */
		while (next <= now_ms () - t0) {
			long key = random () % SATURATE;
			if (cache[key] == NULL)
				cache[key] = saturate_entry (key);
			next += 1.0 / 12;
		}
		temporary (i);
		steady_until (t0, &steady);
		usleep (200);
	}
}

/* ---- slowing ---- */

__attribute__((noinline)) static void
request_leak (long k)
{
	char *b = malloc (80);             /* SLOWING */
	b[0] = (char) k;
	sink = b;
}

static void
slowing (void)
{
	double t0 = now_ms ();

	for (long k = 1; k <= 300; k++) {
		double due = 1200.0 * ((double) k / 300) * ((double) k / 300);
		while (now_ms () - t0 < due)
			usleep (200);
		for (long i = 0; i < 20; i++)
			temporary (k * 20 + i);
		request_leak (k);
	}
}

/* ---- clients ---- */

#define CLIENTS 12

__attribute__((noinline)) static void *
client_state (size_t n)
{
	return malloc (n);                 /* CLIENT */
}

static void
clients (void)
{
	double arrive[CLIENTS], t0 = now_ms (), steady = 0;
	int arrived[CLIENTS] = { 0 };

	for (int c = 0; c < CLIENTS; c++)
		arrive[c] = (double) (random () % 660);
	for (long i = 0; now_ms () - t0 < 1200; i++) {
		double t = now_ms () - t0;
		int c = (int) (random () % CLIENTS);
		for (int k = 0; k < CLIENTS; k++) {
			if (arrived[k] || t < arrive[k])
				continue;
			arrived[k] = 1;
			for (long b = 3 + random () % 8; b > 0; b--)
				sink = client_state (96);
		}
		if (arrived[c]) {
			/* a request: state of its own while it runs */
			char *volatile req = client_state (48 + (size_t) (random () % 64));
			req[0] = (char) i;
			temporary (i);
			free (req);
		}
		steady_until (t0, &steady);
		usleep (300);
	}
}

int
main (int argc, char **argv)
{
	if (argc < 2)
		return 2;
	with_steady = argc < 3;
	srandom ((unsigned) getpid ());
	if (strcmp (argv[1], "capped") == 0)
		capped ();
	else if (strcmp (argv[1], "lru") == 0)
		lru ();
	else if (strcmp (argv[1], "shutdown") == 0)
		shutdown_run ();
	else if (strcmp (argv[1], "flat") == 0)
		flat ();
	else if (strcmp (argv[1], "saturate") == 0)
		saturate ();
	else if (strcmp (argv[1], "slowing") == 0)
		slowing ();
	else if (strcmp (argv[1], "clients") == 0)
		clients ();
	else
		return 2;
	return 0;
}
