/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* demo.c -- a small multi-threaded request server with leaks, for
 * `make demo`, patches/demo-request-tags.patch and the tests of
 * `mtanalyze diff` (tests/t5000-diff-feature.sh).
 *
 *     demo [THREADS [REQUESTS]]        (default 4 threads, 200 requests)
 *
 * Worker threads take requests from a shared counter until all are
 * served.  What it leaks, on purpose:
 *
 *  - load_config(): the banner, once (an old leak: the same in every run);
 *  - handle_request(): an audit copy of every 16th request's body;
 *  - cache_open(), cache_chunk_new(): each thread opens a cache of the
 *    requests it served, which grows by one chunk every CHUNK_SLOTS
 *    requests and is never given back.  One cache per thread, and as many
 *    chunks as the scheduler's sharing of the requests among the threads
 *    made: noise that changes with the number of threads and from run to
 *    run, which share/demo/demo.supp suppresses.
 *
 * It builds without the recorder: cc -g -pthread -o demo demo.c
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_SLOTS 8

struct config {
	char *name;
	int threads;
	int requests;
};

struct request {
	int id;
	char *body;
	char *reply;
};

struct chunk {
	struct chunk *next;
	int used;
	int ids[CHUNK_SLOTS];
};

struct cache {
	struct chunk *chunks;
	int served;
};

static struct config *config;
static char *banner;
static char *last_audit;
static int next_request;
static pthread_mutex_t audit_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start_line;

static __thread struct cache *cache;

static void
load_config (int threads, int requests)
{
	config = calloc (1, sizeof *config);
	config->name = strdup ("demo");
	config->threads = threads;
	config->requests = requests;
	banner = malloc (64);
	snprintf (banner, 64, "%s: %d threads", config->name, threads);
}

static struct chunk *
cache_chunk_new (struct chunk *next)
{
	struct chunk *c = calloc (1, sizeof *c);
	c->next = next;
	return c;
}

static void
cache_open (void)
{
	cache = calloc (1, sizeof *cache);
}

/* Remember a served request in the thread's cache. */
static void
cache_note (int id)
{
	if (cache->chunks == NULL || cache->chunks->used == CHUNK_SLOTS)
		cache->chunks = cache_chunk_new (cache->chunks);
	cache->chunks->ids[cache->chunks->used++] = id;
	cache->served++;
}

static char *
format_reply (const struct request *req)
{
	char *reply = malloc (64);
	snprintf (reply, 64, "reply to %s", req->body);
	return reply;
}

static void
handle_request (int id)
{
	struct request *req = malloc (sizeof *req);

	req->id = id;
	req->body = malloc (32);
	snprintf (req->body, 32, "request %05d", id);
	cache_note (id);
	req->reply = format_reply (req);
	if (id % 16 == 0) {
		pthread_mutex_lock (&audit_lock);
		last_audit = strdup (req->body);
		pthread_mutex_unlock (&audit_lock);
	}
	free (req->reply);
	free (req->body);
	free (req);
}

static void *
worker (void *arg)
{
	int id;

	(void) arg;
	cache_open ();
	pthread_barrier_wait (&start_line);
	while ((id = __atomic_fetch_add (&next_request, 1, __ATOMIC_RELAXED)) < config->requests)
		handle_request (id);
	return NULL;
}

int
main (int argc, char **argv)
{
	int threads = argc > 1 ? atoi (argv[1]) : 4;
	int requests = argc > 2 ? atoi (argv[2]) : 200;
	pthread_t *tids;

	if (threads < 1 || threads > 256 || requests < 0) {
		fprintf (stderr, "usage: demo [THREADS [REQUESTS]]\n");
		return 2;
	}
	load_config (threads, requests);
	tids = calloc ((size_t) threads, sizeof *tids);
	pthread_barrier_init (&start_line, NULL, (unsigned) threads);
	for (int i = 0; i < threads; i++)
		pthread_create (&tids[i], NULL, worker, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join (tids[i], NULL);
	printf ("%s served %d requests\n", banner, requests);
	pthread_barrier_destroy (&start_line);
	free (tids);
	free (config->name);
	free (config);
	return 0;
}
