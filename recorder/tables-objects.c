/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tables-objects.c -- "# object" and "# unload" lines: which file each
 * address belongs to, with its build-id, so that the analyzer can
 * symbolize modules that were dlclose'd before exit and check that it reads
 * the very file that ran.
 *
 * dlopen() is not wrapped around (the dynamic linker looks at its caller;
 * shim.c only looks before it jumps to it); the loader's own counters
 * of loads and unloads, read through dl_iterate_phdr(), tell when to look
 * again.  This runs on slow paths only
 * (a caller or a stack seen for the first time), and hands its lines to
 * the sink its caller passes: where they go is the caller's business.
 *
 * The lines of all objects loaded now are also kept as one text, rewritten
 * in place on every change under a sequence count, that a new part of a
 * rotated trace copies without taking a lock. */
#include "lock.h"
#include "tables.h"
#include "words.h"

#include <elf.h>
#include <link.h>
#include <string.h>

#define MAX_OBJECTS 4096

struct known {
	uintptr_t bias, lo, hi;
	unsigned name_hash;
	int present;
	char *line;		/* its "# object" line, newline included */
	size_t len;
	size_t name_at;		/* where the path begins in line */
};

/* Odd seq: being rewritten.  A larger buffer replaces a smaller one (the
 * old stays mapped for a reader still copying it), so a daemon loading and
 * unloading plugins all day rewrites one buffer instead of mapping a new
 * one each time. */
struct snapshot {
	unsigned long seq;
	size_t cap;
	size_t len;
	char *text;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct known known[MAX_OBJECTS];
static int nknown;
static unsigned long long seen_adds = ~0ull, seen_subs = ~0ull;
static struct snapshot snap;
static char *arena;
static size_t arena_left;

/* The lines of the objects unloaded last: a plugin loaded again where it
 * was gets its old line back instead of a new copy in the arena. */
#define RECENT 16
static struct {
	char *line;
	size_t len;
} recent[RECENT];
static unsigned recent_next;

static void forget_line(char *line, size_t len)
{
	recent[recent_next % RECENT].line = line;
	recent[recent_next % RECENT].len = len;
	recent_next++;
}

static char *keep(const char *text, size_t len)
{
	char *p;

	for (unsigned i = 0; i < RECENT; i++)
		if (recent[i].line && recent[i].len == len && memcmp(recent[i].line, text, len) == 0)
			return recent[i].line;

	if (len > arena_left) {
		size_t block = len > (64u << 10) ? len : (64u << 10);
		if ((arena = prim_map_anon(block)) == NULL)
			return NULL;
		arena_left = block;
	}
	p = arena;
	memcpy(p, text, len);
	arena += len;
	arena_left -= len;
	return p;
}

/* Called with the lock held after the set of objects changed. */
static void publish_snapshot(void)
{
	size_t total = 0, len = 0;
	char *text;

	for (int i = 0; i < nknown; i++)
		total += known[i].line ? known[i].len : 0;
	if (total > snap.cap) {
		size_t cap = 2 * total + 4096;
		if ((text = prim_map_anon(cap)) == NULL)
			return;
		__atomic_store_n(&snap.text, text, __ATOMIC_RELEASE);
		snap.cap = cap;
	}
	__atomic_store_n(&snap.seq, snap.seq + 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (int i = 0; i < nknown; i++)
		if (known[i].line) {
			memcpy(snap.text + len, known[i].line, known[i].len);
			len += known[i].len;
		}
	__atomic_store_n(&snap.len, len, __ATOMIC_RELAXED);
	__atomic_store_n(&snap.seq, snap.seq + 1, __ATOMIC_RELEASE);
}

char *mtrec_objects_put(char *o, char *lim)
{
	for (int tries = 0; tries < 1000; tries++) {
		unsigned long seq = __atomic_load_n(&snap.seq, __ATOMIC_ACQUIRE);
		const char *text = __atomic_load_n(&snap.text, __ATOMIC_ACQUIRE);
		size_t len = __atomic_load_n(&snap.len, __ATOMIC_RELAXED);
		const char *end;

		if (seq & 1)
			continue;
		if (len > (size_t)(lim - o))
			len = (size_t)(lim - o);
		/* whole lines only */
		end = text && len ? memrchr(text, '\n', len) : NULL;
		len = end ? (size_t)(end - text) + 1 : 0;
		if (len > 0)
			memcpy(o, text, len);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&snap.seq, __ATOMIC_RELAXED) == seq)
			return o + len;
	}
	return o;	/* rewritten all along: the part goes without */
}

static unsigned hash_name(const char *s)
{
	unsigned h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

struct counters {
	unsigned long long adds, subs;
};

static int read_counters(struct dl_phdr_info *info, size_t size, void *data)
{
	struct counters *c = data;

	c->adds = info->dlpi_adds;
	c->subs = info->dlpi_subs;
	return 1;		/* the first object is enough */
}

static char *put_build_id(char *o, char *lim, const struct dl_phdr_info *info)
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const unsigned char *desc = (const unsigned char *)p + sizeof(*n) +
						    ((n->n_namesz + 3) & ~3u);
			if ((const char *)desc + n->n_descsz > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(p + sizeof(*n), "GNU", 4) == 0) {
				for (unsigned j = 0; j < n->n_descsz && o + 2 < lim; j++) {
					*o++ = digits[desc[j] >> 4];
					*o++ = digits[desc[j] & 15];
				}
				return o;
			}
			p = (const char *)desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return prim_puts(o, lim, "-");
}

/* "# KEY BIAS LOW-HIGH " into buf. */
static char *put_range(char *o, char *lim, enum mtrec_word w, const struct known *k)
{
	o = prim_puts(o, lim, mtrec_word(w));
	o = prim_puts(o, lim, "0x");
	o = prim_putx(o, lim, k->bias);
	o = prim_puts(o, lim, " 0x");
	o = prim_putx(o, lim, k->lo);
	o = prim_puts(o, lim, "-0x");
	o = prim_putx(o, lim, k->hi);
	return prim_puts(o, lim, " ");
}

/* A line being made, under the lock: not on the stack, which is that of
 * whatever malloc call saw a new caller (a small thread stack). */
static char line_buf[4096 + 256];

/* "# object BIAS LOW-HIGH BUILDID PATH", kept for the snapshot. */
static void write_object(struct known *k, const struct dl_phdr_info *info,
			 mtrec_line_sink sink)
{
	char *buf = line_buf, *o = buf, *lim = buf + sizeof(line_buf) - 1;

	o = put_range(o, lim, MTREC_W_OBJECT, k);
	o = put_build_id(o, lim, info);
	o = prim_puts(o, lim, " ");
	k->name_at = (size_t)(o - buf);
	o = prim_puts(o, lim, info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "-");
	sink(buf, (size_t)(o - buf));
	*o++ = '\n';
	k->len = (size_t)(o - buf);
	k->line = keep(buf, k->len);
}

/* "# unload BIAS LOW-HIGH PATH", the path as its object line gave it. */
static void write_unload(const struct known *k, mtrec_line_sink sink)
{
	char *buf = line_buf, *o = buf, *lim = buf + sizeof(line_buf);

	o = put_range(o, lim, MTREC_W_UNLOAD, k);
	if (k->line && k->len > k->name_at + 1) {
		size_t n = k->len - k->name_at - 1;
		if (n > (size_t)(lim - o))
			n = (size_t)(lim - o);
		memcpy(o, k->line + k->name_at, n);
		o += n;
	} else {
		o = prim_puts(o, lim, "-");
	}
	sink(buf, (size_t)(o - buf));
}

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
	mtrec_line_sink sink = *(mtrec_line_sink *)data;
	struct known k = { .bias = info->dlpi_addr, .lo = UINTPTR_MAX, .hi = 0, .present = 1 };

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < k.lo)
			k.lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > k.hi)
			k.hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (k.hi == 0)
		return 0;
	k.name_hash = hash_name(info->dlpi_name ? info->dlpi_name : "");
	for (int i = 0; i < nknown; i++) {
		if (known[i].bias == k.bias && known[i].lo == k.lo &&
		    known[i].name_hash == k.name_hash) {
			known[i].present = 1;
			return 0;
		}
	}
	write_object(&k, info, sink);
	if (nknown < MAX_OBJECTS)
		known[nknown++] = k;
	return 0;
}

/* One pass of dl_iterate_phdr.  Our lock is taken inside it, under the
 * dynamic linker's lock, never around it: a program's own
 * dl_iterate_phdr callback (holding that lock) may allocate, and its
 * thread then syncs here; taking ours first would wait for it while it
 * waits for us. */
struct pass {
	mtrec_line_sink sink;
	int locked;
};

static int visit_locked(struct dl_phdr_info *info, size_t size, void *data)
{
	struct pass *p = data;

	if (!p->locked) {
		/* Nested in this thread's own sync (a signal handler): the
		 * lines come with the next caller or stack seen for the first
		 * time. */
		if (mtrec_lock(&lock, MTREC_LOCK_OBJECTS) < 0)
			return 1;
		p->locked = 1;
		for (int i = 0; i < nknown; i++)
			known[i].present = 0;
	}
	return visit(info, size, &p->sink);
}

void mtrec_objects_sync(mtrec_line_sink sink)
{
	struct counters now = { 0, 0 };
	struct pass p = { sink, 0 };

	prim_dl_iterate_phdr(read_counters, &now);
	if (now.adds == __atomic_load_n(&seen_adds, __ATOMIC_RELAXED) &&
	    now.subs == __atomic_load_n(&seen_subs, __ATOMIC_RELAXED))
		return;
	prim_dl_iterate_phdr(visit_locked, &p);
	if (!p.locked)
		return;
	for (int i = 0; i < nknown; i++) {
		if (known[i].present)
			continue;
		write_unload(&known[i], sink);
		if (known[i].line)
			forget_line(known[i].line, known[i].len);
		known[i--] = known[--nknown];
	}
	publish_snapshot();
	__atomic_store_n(&seen_adds, now.adds, __ATOMIC_RELAXED);
	__atomic_store_n(&seen_subs, now.subs, __ATOMIC_RELAXED);
	mtrec_unlock(&lock, MTREC_LOCK_OBJECTS);
}

/* Only the forking thread runs in the child: no lock is needed, and the
 * parent's may be held by a thread that is gone. */
void mtrec_objects_fork_child(void)
{
	pthread_mutex_init(&lock, NULL);
	nknown = 0;
	__atomic_store_n(&seen_adds, ~0ull, __ATOMIC_RELAXED);
	__atomic_store_n(&seen_subs, ~0ull, __ATOMIC_RELAXED);
}
