/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lock.h -- the recorder's one kind of lock: a mutex that a signal handler
 * never waits for when its own thread holds it.
 *
 * A signal handler that allocates while its thread is inside the recorder
 * makes a nested record call.  It must never wait for a lock that its own
 * thread holds (that thread is suspended under the handler): each lock has
 * a bit in mtrec_held, set before it is taken and cleared after it is
 * released, and mtrec_lock() refuses (returns -1) a lock whose bit is set.
 * Outside signal handlers the bit is never set on entry.
 *
 * Each module owns its lock and re-creates it in a fork child (its
 * *_fork_child function), so that a child never inherits one held by a
 * thread that no longer exists. */
#ifndef MTREC_LOCK_H
#define MTREC_LOCK_H

#include <pthread.h>

#include "prim.h"

enum {
	MTREC_LOCK_OBJECTS = 1, MTREC_LOCK_CALLER = 2, MTREC_LOCK_STACK = 4,
	MTREC_LOCK_GROW = 8, MTREC_LOCK_LIFE = 16, MTREC_LOCK_GOT = 32,
};
extern __thread unsigned mtrec_held MTREC_HIDDEN;

static inline int mtrec_lock(pthread_mutex_t *m, unsigned bit)
{
	if (unlikely(mtrec_held & bit))
		return -1;
	mtrec_held |= bit;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pthread_mutex_lock(m);
	return 0;
}

static inline void mtrec_unlock(pthread_mutex_t *m, unsigned bit)
{
	pthread_mutex_unlock(m);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	mtrec_held &= ~bit;
}

#endif
