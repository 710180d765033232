/* got.h -- redirecting other objects' calls through their GOT/PLT slots
 * (got.c).  A leaf: it owns its lock, calls nothing of the recorder
 * but prim.h and lock.h, and reports what it did to its caller.
 *
 * Some objects call the interposed functions without going through the
 * preload: a plugin dlopen()ed with RTLD_DEEPBIND finds libc's malloc in
 * its own scope first.  Their JUMP_SLOT and GLOB_DAT slots for a function
 * are rewritten to point to a replacement, as heaptrack's inject library
 * does.  The same table serves any set of functions (the allocation
 * family now; named allocators later). */
#ifndef MTREC_GOT_H
#define MTREC_GOT_H

#include "prim.h"

/* One function to redirect: slots naming `name` that hold `real` (or, with
 * MTREC_GOT_LAZY, a lazy-binding stub of their own object) are made to
 * hold `ours`.  Slots holding anything else are left alone: that object
 * was bound to another definition on purpose. */
struct mtrec_got_func {
	const char *name;
	void *ours;
	void *real;
	int flags;
	unsigned long slots;	/* slots redirected so far, all passes */
};
enum {
	/* A lazy stub may be redirected: the dynamic linker would bind it to
	 * ours (nobody before us in the global scope defines the name). */
	MTREC_GOT_LAZY = 1,
	/* Also slots of the object that defines the name, bound to real:
	 * calls inside a library to its own exported function go through
	 * its PLT (for functions tracked by name; never for malloc, whose
	 * private definitions must keep their own callers). */
	MTREC_GOT_OWN = 2,
	/* real is not known beforehand: each pass after objects were loaded
	 * or unloaded takes the first definition of the name in load order
	 * (the program, then its libraries, then what was dlopen()ed), read
	 * from the objects' own symbol tables -- dlsym() would allocate its
	 * error message when the name is missing.  NULL while none defines
	 * it; no slot is redirected then. */
	MTREC_GOT_FIND = 4,
};

/* What one pass did. */
struct mtrec_got_report {
	unsigned objects;	/* objects with at least one slot redirected */
	unsigned slots;		/* slots redirected */
	unsigned bound;		/* ... of them bound past the preload (the others
				 * were not bound yet: lazy binding) */
	unsigned elsewhere;	/* slots bound to a definition neither ours nor real */
	unsigned pending;	/* objects not relocated yet: looked at again next pass */
};

/* Called for each object whose slots this pass redirected: how many, and
 * how many of them were bound past the preload. */
typedef void (*mtrec_got_note)(const char *object, unsigned slots, unsigned bound);

/* Set the functions to redirect (the table must live as long as the
 * process; passes count into its slots fields), the objects never to touch: those holding any of the
 * addresses in keep[0..nkeep) (the recorder itself, libc, the dynamic
 * linker, the next allocator), and whom to tell of each object patched
 * (may be NULL).  0, or -1 when this architecture is not supported (then
 * nothing is ever patched). */
int mtrec_got_init(struct mtrec_got_func *funcs, int n,
		   const void *const *keep, int nkeep, mtrec_got_note note) MTREC_HIDDEN;
/* Cheap: 1 when objects were loaded or unloaded since the last pass. */
int mtrec_got_changed(void) MTREC_HIDDEN;
/* Redirect the slots of objects loaded since the last pass (cheap when
 * none was: mtrec_got_changed() first).  Never waits for its own thread (a signal handler nested in a
 * pass returns at once).  Safe to call from any thread at any time after
 * the program's start-up relocation. */
void mtrec_got_sync(struct mtrec_got_report *r) MTREC_HIDDEN;
/* mtrec detach: give every slot holding one of ours the real function
 * back, and make no pass until mtrec_got_resume() (mtrec attach again:
 * the next pass redirects every object anew).  The slots given back. */
unsigned mtrec_got_restore(void) MTREC_HIDDEN;
void mtrec_got_resume(void) MTREC_HIDDEN;
/* fork: the child re-creates the lock (the patched slots it inherits
 * stay patched). */
void mtrec_got_fork_child(void) MTREC_HIDDEN;

#endif
