/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-scoped: scoping with <mtrec.h> (trace_on/trace_off/trace_mark) and
 * glibc's mtrace()/muntrace(), for tests/t2140.  Built like every helper,
 * NOT linked with the recorder: the mtrec.h calls are weak and must do
 * nothing when the recorder is absent.
 *
 * Each step allocates blocks of its own size (0x1NN), so that a trace
 * shows which steps were recorded:
 *
 *   0x101 before anything            (leaked until the end, then freed)
 *   trace_on()
 *     0x111, mark "first", 0x112, free(0x111)
 *   trace_off()
 *     0x121                          (freed at once)
 *   trace_on()  trace_on()           (the second does nothing)
 *     0x131, mark "second"
 *   trace_off()
 *     mark "hidden"                  (not recording: no line)
 *     0x141
 *   mtrace()
 *     0x151, mark "via mtrace", free(0x131)
 *   muntrace()
 *     0x161
 *   a thread, started now, calls trace_on(), allocates 0x171, calls
 *   trace_off(); then main frees the rest (not recorded)
 *
 * Prints "scoped ok" and exits 0. */
#include <mcheck.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "mtrec.h"

static void *volatile sink;

static void *thread_main(void *arg)
{
	trace_on();
	sink = malloc(0x171);
	trace_off();
	return sink;
}

int main(void)
{
	void *pre, *a, *b, *c, *d, *e, *f, *g, *t;
	pthread_t tid;

	pre = malloc(0x101);
	trace_on();
	a = malloc(0x111);
	sink = a;
	trace_mark("first");
	b = malloc(0x112);
	free(a);
	trace_off();
	c = malloc(0x121);
	sink = c;
	free(c);
	trace_on();
	trace_on();
	d = malloc(0x131);
	sink = d;
	trace_mark("second");
	trace_off();
	trace_mark("hidden");
	e = malloc(0x141);
	mtrace();
	f = malloc(0x151);
	trace_mark("via mtrace");
	free(d);
	muntrace();
	g = malloc(0x161);
	if (pthread_create(&tid, NULL, thread_main, NULL) != 0 || pthread_join(tid, &t) != 0)
		return 1;
	if (!pre || !b || !e || !f || !g || !t)
		return 1;
	free(pre);
	free(b);
	free(e);
	free(f);
	free(g);
	free(t);
	printf("scoped ok\n");
	return 0;
}
