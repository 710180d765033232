/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* reach-roots.c -- the roots of the scan (reach.c tells which, and why):
 * /proc/self/maps, the objects' writable segments, the threads' stacks and
 * TLS, and the program's own mappings without malloc's memory. */
#include "reach-roots.h"
#include "reach-mark.h"
#include "words.h"
#include "file.h"		/* the trace's reservation: never a root */

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* ---- /proc/self/maps ------------------------------------------------ */

static uintptr_t parse_hex(const char **s)
{
	uintptr_t v = 0;
	const char *p = *s;
	int d;

	if (p[0] == '0' && p[1] == 'x')
		p += 2;
	for (;; p++) {
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else
			break;
		v = v * 16 + (uintptr_t)d;
	}
	*s = p;
	return v;
}

/* The whole of /proc/self/maps, in a mapping of *cap bytes at *text:
 * its length (0: it cannot be read). */
static size_t read_maps(char **text, size_t *cap)
{
	for (*cap = 1u << 20; *cap <= (1u << 30); *cap *= 4) {
		size_t len = 0;
		long n = 0;
		int fd;

		if ((*text = prim_map_anon(*cap)) == NULL)
			return 0;
		if ((fd = prim_open("/proc/self/maps", O_RDONLY | O_CLOEXEC, 0)) < 0)
			break;
		while (len < *cap && (n = prim_read(fd, *text + len, *cap - len)) > 0)
			len += (size_t)n;
		prim_close(fd);
		if (len < *cap)
			return n < 0 ? 0 : len;
		munmap(*text, *cap);	/* too small: a larger one */
		*text = NULL;
	}
	if (*text)
		munmap(*text, *cap);
	*text = NULL;
	return 0;
}

static int starts(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && memcmp(s, prefix, n) == 0;
}

/* Is the mapping's file, NAME (len bytes, a path), a device's?  Its
 * memory may be a device's registers: valgrind leaves such mappings out
 * too, but for /dev/zero.  A file of /dev/shm or of hugetlbfs
 * (/dev/hugepages) is memory; a name that cannot be looked at is taken
 * for a device. */
static int device_map(const char *name, size_t len)
{
	char *path = sc.buf;
	struct stat st;

	if (!starts(name, len, "/dev/") || starts(name, len, "/dev/zero") ||
	    starts(name, len, "/dev/shm/"))
		return 0;
	if (len >= BUF_SIZE)
		return 1;
	memcpy(path, name, len);
	path[len] = '\0';
	if (syscall(SYS_newfstatat, AT_FDCWD, path, &st, 0) != 0)
		return 1;
	return S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode);
}

/* What the mapping m is, from its PERMS and NAME (len bytes). */
static unsigned map_flags(const char *perms, const char *name, size_t len)
{
	unsigned f = 0;

	if (perms[0] == 'r' && perms[1] == 'w')
		f |= MF_RW;
	if (perms[3] == 's')
		f |= MF_SHARED;
	if (!len)
		return f;
	if (name[0] == '/') {
		f |= MF_FILE;
		if (f & MF_RW && device_map(name, len))
			f |= MF_SKIP;
		return f;
	}
	/* "[anon:NAME]", "[anon_shmem:NAME]": memory the program named
	 * (prctl PR_SET_VMA_ANON_NAME), but glibc's own ones (with the
	 * tunable glibc.mem.decorate_maps): its malloc's arenas and mmapped
	 * chunks, its threads' stacks.  Any other name is the kernel's:
	 * [heap], [stack], [vvar], and the objects it maps through an
	 * anonymous inode or a socket (io_uring rings, perf buffers, DMA
	 * buffers, packet rings: some are a device's memory). */
	if ((starts(name, len, "[anon:") || starts(name, len, "[anon_shmem:")) &&
	    !starts(name, len, "[anon:glibc: malloc") && !starts(name, len, "[anon:glibc: pthread stack"))
		return f;
	return f | MF_SKIP;
}

/* "LO-HI PERMS OFFSET DEV INODE [NAME]" lines into sc.maps: 0, or -1.
 * The text is kept for the names, till the end of the scan. */
int load_maps(void)
{
	char *text;
	size_t cap, len = read_maps(&text, &cap), lines = 0;
	const char *p, *end = text + len;

	if (!len)
		return -1;
	own(text, cap, 1);
	for (p = text; p < end; p++)
		lines += *p == '\n';
	if ((sc.maps = scan_map((lines + 1) * sizeof(struct map))) == NULL)
		return -1;
	for (p = text; p < end;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *name, *perms;
		struct map *m = &sc.maps[sc.nmaps];

		if (!eol)
			eol = end;
		m->lo = parse_hex(&p);
		if (*p == '-')
			p++;
		m->hi = parse_hex(&p);
		name = p;
		perms = "----";
		for (int f = 0; f < 4 && name < eol; f++) {	/* past PERMS ... INODE */
			while (name < eol && *name == ' ')
				name++;
			if (f == 0 && eol - name >= 4)
				perms = name;
			while (name < eol && *name != ' ')
				name++;
		}
		while (name < eol && *name == ' ')
			name++;
		if (eol - name >= 7 && memcmp(name, "[stack]", 7) == 0)
			m->kind = MK_STACK;
		else if (eol - name >= 6 && memcmp(name, "[heap]", 6) == 0)
			m->kind = MK_HEAP;
		else
			m->kind = MK_OTHER;
		m->name = name;
		m->namelen = (size_t)(eol - name);
		m->flags = map_flags(perms, name, m->namelen);
		if (m->hi > m->lo)
			sc.nmaps++;
		p = eol + 1;
	}
	return 0;
}

static const struct map *map_of(uintptr_t a)
{
	size_t l = 0, r = sc.nmaps;

	while (l < r) {
		size_t m = (l + r) / 2;

		if (sc.maps[m].hi <= a)
			l = m + 1;
		else if (sc.maps[m].lo > a)
			r = m;
		else
			return &sc.maps[m];
	}
	return NULL;
}

/* ---- roots ---------------------------------------------------------- */

/* A root [lo, hi) named WHAT (the pieces a, b). */
static struct root *add_root(uintptr_t lo, uintptr_t hi, const char *a, const char *b)
{
	struct root *r;
	char *o;

	if (hi <= lo)
		return NULL;
	if (sc.nroots >= MAX_ROOTS) {
		sc.roots_lost++;
		return NULL;
	}
	r = &sc.roots[sc.nroots++];
	r->lo = lo;
	r->hi = hi;
	r->from = lo;
	r->whole = 0;
	r->resident = 0;
	o = prim_puts(r->what, r->what + sizeof(r->what) - 1, a);
	o = prim_puts(o, r->what + sizeof(r->what) - 1, b ? b : "");
	*o = '\0';
	return r;
}

static struct root *thread_root(uintptr_t lo, uintptr_t hi, const char *what, pid_t tid)
{
	char n[24];

	return add_root(lo, hi, what, dec(n, (unsigned long)tid));
}

/* The first block that ends after a. */
static size_t first_block_after(uintptr_t a)
{
	size_t l = 0, r = sc.n;

	while (l < r) {
		size_t m = (l + r) / 2;

		if (sc.blk[m].addr + sc.blk[m].size <= a)
			l = m + 1;
		else
			r = m;
	}
	return l;
}

/* Scan [lo, hi) of a root, less this file's memory (from own[from] on)
 * and, unless whole, the heap blocks: the bytes that could not be read. */
static uint64_t scan_root_part(uintptr_t lo, uintptr_t hi, int whole, int from)
{
	uint64_t lost = 0;

	for (int i = from; i < sc.nown; i++)
		if (sc.own[i].lo < hi && sc.own[i].hi > lo) {
			if (sc.own[i].lo > lo)
				lost += scan_root_part(lo, sc.own[i].lo, whole, i + 1);
			if (sc.own[i].hi < hi)
				lost += scan_root_part(sc.own[i].hi, hi, whole, i + 1);
			return lost;
		}
	if (whole || !sc.n)
		return scan_range(lo, hi, 1);
	for (size_t k = first_block_after(lo); lo < hi && k < sc.n && sc.blk[k].addr < hi; k++) {
		if (sc.blk[k].addr > lo)
			lost += scan_range(lo, sc.blk[k].addr, 1);
		if (sc.blk[k].addr + sc.blk[k].size > lo)
			lo = sc.blk[k].addr + sc.blk[k].size;
	}
	if (lo < hi)
		lost += scan_range(lo, hi, 1);
	return lost;
}

#define RES_PAGES 8192		/* pages scan_resident looks at a time */
#define PM_PRESENT (1ull << 63)	/* /proc/PID/pagemap: in memory */
#define PM_SWAPPED (1ull << 62)	/* ... swapped out */

/* Which of n pages from page-aligned at hold data: in[i] & 1 for page i;
 * 0, or -1 when neither /proc/self/pagemap nor mincore() tells. */
static int resident_pages(uintptr_t at, size_t n, size_t pg, unsigned char *in)
{
	size_t len = n * sizeof(uint64_t);
	int pm = 0;

	if (!sc.pagemap_fd) {
		int fd = prim_open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC, 0);

		sc.pagemap_fd = fd < 0 ? -1 : fd + 1;
	}
	if (sc.pagemap_fd > 0 &&
	    syscall(SYS_pread64, sc.pagemap_fd - 1, sc.pagemap, len, (off_t)(at / pg * sizeof(uint64_t))) ==
	    (long)len)
		pm = 1;
	/* mincore: pages in the page cache, whether this process touched
	 * them or not (shared memory another process wrote, a file's). */
	if (mincore((void *)at, n * pg, in) != 0) {
		if (!pm)
			return -1;
		memset(in, 0, n);
	}
	for (size_t i = 0; pm && i < n; i++)
		if (sc.pagemap[i] & (PM_PRESENT | PM_SWAPPED))
			in[i] |= 1;
	return 0;
}

/* Scan the pages of [lo, hi) that hold data (in memory, or swapped out):
 * a large reservation is not read page after page of nothing, a file's
 * or shared memory's holes are not filled (a read would allocate them):
 * the bytes that could not be read, or UINT64_MAX when which pages hold
 * data cannot be told. */
static uint64_t scan_resident(uintptr_t lo, uintptr_t hi)
{
	long sz = sysconf(_SC_PAGESIZE);
	size_t pg = sz > 0 ? (size_t)sz : PAGE;	/* pagemap's and mincore's unit */
	uint64_t lost = 0;

	if (!sc.pagemap)
		sc.pagemap = scan_map(RES_PAGES * sizeof(uint64_t));
	if (!sc.incore)
		sc.incore = scan_map(RES_PAGES);
	if (!sc.pagemap || !sc.incore)
		return UINT64_MAX;
	for (uintptr_t at = lo & ~(uintptr_t)(pg - 1); at < hi;) {
		size_t n = (hi - at + pg - 1) / pg;

		if (n > RES_PAGES)
			n = RES_PAGES;
		if (resident_pages(at, n, pg, sc.incore) < 0)
			return UINT64_MAX;
		for (size_t i = 0; i < n;) {
			size_t j = i;
			uintptr_t a, b;

			while (j < n && (sc.incore[j] & 1))
				j++;
			a = at + i * pg;
			b = at + j * pg;
			if (j > i)
				lost += scan_root_part(a > lo ? a : lo, b < hi ? b : hi, 0, 0);
			while (j < n && !(sc.incore[j] & 1))
				j++;
			i = j;
		}
		at += n * pg;
	}
	return lost;
}

void scan_roots(void)
{
	char a[24], b[24], c[24];

	scan_blocks();		/* the system calls' arguments, already marked */
	for (size_t i = 0; i < sc.nroots; i++) {
		const struct root *r = &sc.roots[i];
		uint64_t lost = r->resident ? scan_resident(r->lo, r->hi) :
			scan_root_part(r->lo, r->hi, r->whole, 0);

		scan_blocks();
		if (lost == UINT64_MAX)
			note(mtrec_word(MTREC_W_REACH), "unscanned ", r->what, " ", hex(a, r->lo), "-", hex(b, r->hi),
			     ": which of its pages hold data cannot be told (neither /proc/self/pagemap "
			     "nor mincore can be read)", SAY_END);
		else if (lost)
			note(mtrec_word(MTREC_W_REACH), "unscanned ", r->what, " ", hex(a, r->lo), "-", hex(b, r->hi), ": ",
			     dec(c, lost), " bytes unreadable", SAY_END);
	}
	if (sc.pagemap_fd > 0)
		prim_close(sc.pagemap_fd - 1);
	sc.pagemap_fd = 0;
}

/* glibc's main arena, the malloc_state in libc's data (2.26 on, 64-bit):
 * its top chunk, bins and fast bins point at chunk headers, and the
 * header of a chunk lies in the last bytes of the live block before it
 * (top, after the latest block: a block whose only pointer was dropped
 * would be "possible" for that).  valgrind's malloc leaves glibc's unused,
 * so it is never a root here either.  Found by its shape: the bins of an
 * empty bin point at themselves, less 16 (bin_at()), and the arenas'
 * next fields make a ring that comes back to it. */
#define MSTATE_BINS 112		/* offsetof(struct malloc_state, bins) */
#define MSTATE_NBINS 127	/* pairs of bins: NBINS - 1 */
#define MSTATE_NEXT 2160	/* offsetof(struct malloc_state, next) */
#define MSTATE_SIZE 2200

static int arena_ring(uintptr_t ms)
{
	uintptr_t a = ms;

	for (int hops = 0; hops < 2 * MAX_ARENAS_RING; hops++) {
		if (!a || a % 8 || (a = peek(a + MSTATE_NEXT)) == 0)
			return 0;
		if (a == ms)
			return 1;
	}
	return 0;
}

static void skip_main_arena(uintptr_t lo, uintptr_t hi)
{
	uintptr_t first = 0;

	lo = (lo + 7) & ~(uintptr_t)7;
	if (hi < lo + MSTATE_SIZE)
		return;
	for (uintptr_t at = lo; !first;) {
		size_t want = hi - at < BUF_SIZE ? hi - at : BUF_SIZE;
		size_t got = read_mem(sc.buf, at, want) / 8;
		const uintptr_t *w = (const uintptr_t *)(void *)sc.buf;

		for (size_t i = 0; i + 1 < got; i++)
			if (w[i] == at + 8 * i - 16 && w[i + 1] == w[i]) {
				first = at + 8 * i;
				break;
			}
		if (!first && (got * 8 < want || at + want >= hi))
			return;
		at += want - 8;	/* a pair across the pieces */
	}
	/* first is the lowest empty bin's: the bins start up to 126 pairs
	 * before it; the self-pointers look alike at every shift, the ring
	 * of next fields does not. */
	for (int i = 0; first && i < MSTATE_NBINS; i++) {
		uintptr_t ms = first - 16 * (uintptr_t)i - MSTATE_BINS;

		if (ms < lo || ms + MSTATE_SIZE > hi)
			continue;
		if (arena_ring(ms)) {
			own((const void *)ms, MSTATE_SIZE, 0);
			return;
		}
	}
}

/* The writable PT_LOAD segments of every object but the recorder. */
int object_roots(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t self = (uintptr_t)&sc;

	(void)size;
	(void)data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;

		if (ph->p_type == PT_TLS)
			sc.tls_size += ph->p_memsz + ph->p_align;
		if (ph->p_type == PT_LOAD)
			sc.nloads++;
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
			continue;
		if (self >= lo && self < hi) {
			sc.self_lo = lo;
			sc.self_hi = hi;
			continue;
		}
		if (info->dlpi_name && strstr(info->dlpi_name, "/libc.so."))
			skip_main_arena(lo, hi);
		add_root(lo, hi, info->dlpi_name && *info->dlpi_name ? info->dlpi_name
			 : "the executable", NULL);
	}
	return 0;
}

/* The static TLS and thread control block around tp, when they are not
 * on the thread's stack (the main thread's: memory the dynamic linker
 * mapped), and glibc's DTV, which holds the dynamic TLS blocks. */
static void tls_roots(uintptr_t tp, pid_t tid)
{
	const struct map *m = map_of(tp);
	size_t span = sc.tls_size + 4 * PAGE;
	uintptr_t lo = tp > span ? tp - span : 0, hi = tp + span;

	if (m && m->kind != MK_HEAP) {
		if (lo < m->lo)
			lo = m->lo;
		if (hi > m->hi)
			hi = m->hi;
		thread_root(lo, hi, "TLS of thread ", tid);
	}
#if defined(__GLIBC__) && (defined(__x86_64__) || defined(__aarch64__))
	{
		/* The TCB's dtv points at dtv[1]: dtv[0] is the generation,
		 * dtv[-1] the number of entries (16 bytes each) after it. */
#if defined(__x86_64__)
		uintptr_t dtv = peek(tp + 8);
#else
		uintptr_t dtv = peek(tp);
#endif
		uintptr_t len = dtv > 16 ? peek(dtv - 16) : 0;

		if (len && len < 65536 && !(m && m->kind != MK_HEAP && dtv - 16 >= lo &&
					    dtv + 16 * (len + 1) <= hi))
			thread_root(dtv - 16, dtv + 16 * (len + 1), "DTV of thread ", tid);
	}
#endif
}

/* Thread tid's stack, from its stack pointer sp (0: not known) or, when
 * that is not known, whole; sample: an address it noted in its stack
 * (0: none), tp: its thread pointer (0: not known). */
void stack_roots(pid_t tid, uintptr_t sample, uintptr_t sp, uintptr_t tp)
{
	uintptr_t at = sp ? sp : sample, lo, hi;
	const struct map *m = map_of(at), *ms;
	struct root *r;
	char n[24];
	long k;

	if (!m) {
		note(mtrec_word(MTREC_W_REACH), "unscanned stack of thread ", dec(n, (unsigned long)tid),
		     ": not mapped", SAY_END);
		return;
	}
	if ((k = find(at)) >= 0) {
		/* a stack the program allocated: from sp to the block's end */
		lo = sc.blk[k].addr;
		hi = lo + sc.blk[k].size;
		if (sp >= lo + RED_ZONE && sp < hi)
			lo = sp - RED_ZONE;
		if ((r = thread_root(lo, hi, "stack of thread ", tid)) != NULL)
			r->whole = 1;
	} else if (m->kind == MK_HEAP) {
		note(mtrec_word(MTREC_W_REACH), "unscanned stack of thread ", dec(n, (unsigned long)tid),
		     ": in the heap, outside any live block", SAY_END);
	} else {
		lo = m->lo;
		hi = m->hi;
#if defined(__x86_64__)
		/* glibc puts the thread's TCB (struct pthread, tp at its
		 * start) at the top of its stack mapping: nothing of the
		 * thread's lies above, and the mapping may have merged with
		 * the next one. */
		if (m->kind != MK_STACK && tp >= lo && tp < hi && hi - tp > PAGE)
			hi = tp + PAGE;
#endif
		if (sp >= lo + RED_ZONE && sp < hi)
			lo = (sp - RED_ZONE) & ~(uintptr_t)7;
		if ((r = thread_root(lo, hi, "stack of thread ", tid)) != NULL)
			r->from = m->lo;	/* below the stack pointer: stale */
	}
	/* A thread on another stack (a signal's) keeps its own. */
	if (sp && sample && (ms = map_of(sample)) != NULL && ms != m && ms->kind != MK_HEAP &&
	    find(sample) < 0)
		thread_root(ms->lo, ms->hi, "stack of thread ", tid);
	if (tp && !(tp >= m->lo && tp < m->hi))
		tls_roots(tp, tid);
}

/* A blocked thread's /proc/self/task/TID/syscall: its stack pointer (0
 * when it runs), and its system call's arguments, marked. */
static uintptr_t blocked_thread(pid_t tid)
{
	char path[64], text[256], *o;
	const char *p, *end;
	uintptr_t v[10];
	int fd, nv = 0;
	long len;

	o = prim_puts(path, path + sizeof(path) - 1, "/proc/self/task/");
	o = prim_putu(o, path + sizeof(path) - 1, (unsigned long)tid);
	o = prim_puts(o, path + sizeof(path) - 1, "/syscall");
	*o = '\0';
	if ((fd = prim_open(path, O_RDONLY | O_CLOEXEC, 0)) < 0)
		return 0;
	len = prim_read(fd, text, sizeof(text) - 1);
	prim_close(fd);
	if (len <= 0 || text[0] == 'r')		/* "running" */
		return 0;
	end = text + len;
	for (p = text; p < end && nv < 10;) {
		while (p < end && (*p == ' ' || *p == '\n'))
			p++;
		if (p >= end)
			break;
		if (*p == '-') {	/* "-1": blocked, not in a system call */
			v[nv++] = 0;
			while (p < end && *p != ' ')
				p++;
			continue;
		}
		v[nv++] = parse_hex(&p);
		while (p < end && *p != ' ' && *p != '\n')
			p++;
	}
	/* "NR ARG1 ... ARG6 SP PC", or "-1 SP PC" */
	if (nv == 9) {
		scan_words((const char *)&v[1], 8, 6 * sizeof(uintptr_t), 1);
		return v[7];
	}
	return nv == 3 ? v[1] : 0;
}

/* Every thread but the caller.  The directory is read into static
 * memory: scans run one at a time (under the life lock), on the stack
 * of whatever call took the request (mtrec ctl PID reach, from a malloc
 * on a small stack). */
void other_threads(pid_t self)
{
	static char buf[4096];
	char n[24];
	unsigned long others = 0;
	int fd = prim_open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	long len;

	if (fd < 0) {
		note(mtrec_word(MTREC_W_REACH), "unscanned other threads: /proc/self/task cannot be read", SAY_END);
		return;
	}
	while ((len = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < len;) {
			const struct dirent64 *d = (const struct dirent64 *)(buf + off);
			const char *c = d->d_name;
			const struct thr *t;
			unsigned long tid = 0;
			uintptr_t sp;

			off += d->d_reclen;
			while (*c >= '0' && *c <= '9')
				tid = tid * 10 + (unsigned long)(*c++ - '0');
			if (*c || !tid || (pid_t)tid == self)
				continue;
			others++;
			t = &thr[tid % NTHR];
			if (__atomic_load_n(&t->tid, __ATOMIC_ACQUIRE) != (pid_t)tid)
				t = NULL;
			sp = blocked_thread((pid_t)tid);
			if (!sp && !t)
				note(mtrec_word(MTREC_W_REACH), "unscanned stack of thread ", dec(n, tid), ": not found (it "
				     "is running, and made no allocation the recorder saw)", SAY_END);
			else
				stack_roots((pid_t)tid, t ? t->stack : 0, sp, t ? t->tp : 0);
		}
	}
	prim_close(fd);
	if (others)
		note(mtrec_word(MTREC_W_REACH), "unscanned registers of ", dec(n, others),
		     others == 1 ? " other thread" : " other threads",
		     ": not readable while they run (their stacks, and the arguments of "
		     "the system calls they are blocked in, are scanned)", SAY_END);
}

/* ---- the program's own mappings --------------------------------- */

/* Every other readable and writable mapping is a root too, as in
 * valgrind (mc_leakcheck.c scans every client segment that is readable
 * and writable but its own heap and devices): memory the program mapped
 * itself (pools, arrays, shared memory with other processes, files
 * mapped writable, memory named with PR_SET_VMA_ANON_NAME), the dynamic
 * linker's, libc's.  Never:
 *
 *   - malloc's memory, whose free chunks keep stale pointers that would
 *     hide leaks: the [heap] (the main arena), the heaps of the other
 *     arenas (at an address aligned to HEAP_MAX, a heap_info at their
 *     start), the chunks malloc mapped for large blocks, which are live
 *     blocks (only their own span is left out: the kernel merges a
 *     mapping with its neighbours of the same kind), and the memory malloc
 *     mapped for its main arena when brk() failed (found from the chunks
 *     of live blocks in it): said unscanned; when the blocks are another
 *     allocator's (no chunk header before them), no anonymous mapping at
 *     all, said unscanned;
 *   - the stacks of threads: a live thread's is scanned from its stack
 *     pointer (stack_roots), what lies below is stale; the stack of a
 *     thread that ended (glibc keeps up to 40 MB of them for the next
 *     threads) holds only stale words (valgrind makes a stack
 *     inaccessible as it unwinds): found from the thread pointer every
 *     thread noted, and from its thread control block at the top of the
 *     mapping (glibc, x86-64);
 *   - what is a root already (objects' segments, stacks, TLS);
 *   - the recorder's: the trace's reservation, the table, the scan's
 *     buffers, and its other tables, found from where libmtrec.so's data
 *     points (skip_self; some hold offsets in the trace, which would pass
 *     for addresses in the heap of a program built without -pie);
 *   - what is not read and write, guard pages and PROT_NONE reservations;
 *     devices (but /dev/zero), whose memory may be registers; the
 *     kernel's objects mapped through an anonymous inode or a socket.
 *
 * A mapping that is shared or backed by a file, or larger than
 * LARGE_MAP, is read only where its pages hold data (scan_resident). */

#define LARGE_MAP ((size_t)64 << 20)
#if UINTPTR_MAX > 0xffffffffu
#define HEAP_MAX ((uintptr_t)64 << 20)	/* glibc's HEAP_MAX_SIZE: 2 * DEFAULT_MMAP_THRESHOLD_MAX */
#else
#define HEAP_MAX ((uintptr_t)1 << 20)
#endif
#define MAX_ARENAS 64		/* arena heaps in one mapping: more, and it is left out */
/* What of the recorder's is left out from where its data points: its
 * largest tables that hold numbers (chunk.c's slots, 2 MB, and
 * events.c's offsets in the trace, 512 kB; unwind.c's cache,
 * 1 MB) are pointed to at their start.  The rest of the recorder's memory
 * holds addresses of code, strings, hashes: reading it costs time, not
 * verdicts. */
#define SELF_WINDOW ((uintptr_t)2 << 20)

static void skip(uintptr_t lo, uintptr_t hi)
{
	if (hi <= lo || sc.nskip >= sc.skip_cap)
		return;
	sc.skip[sc.nskip].lo = lo;
	sc.skip[sc.nskip++].hi = hi;
}

/* Every object's segments, whole pages: roots already, or read-only. */
static int object_spans(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD)
			skip(lo & ~(uintptr_t)(PAGE - 1), (lo + ph->p_memsz + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
	}
	return 0;
}

/* The spans by their start (a heap sort: no recursion, no memory), then
 * merged where they overlap or touch. */
static void sort_skip(void)
{
	struct span *v = sc.skip, t;
	size_t n = sc.nskip, k = 0;

	for (size_t end = n, start = n / 2; end > 1;) {
		size_t root, child;

		if (start > 0) {
			start--;
		} else {
			end--;
			t = v[end];
			v[end] = v[0];
			v[0] = t;
		}
		for (root = start; (child = 2 * root + 1) < end; root = child) {
			if (child + 1 < end && v[child + 1].lo > v[child].lo)
				child++;
			if (v[root].lo >= v[child].lo)
				break;
			t = v[root];
			v[root] = v[child];
			v[child] = t;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (k && v[i].lo <= v[k - 1].hi) {
			if (v[i].hi > v[k - 1].hi)
				v[k - 1].hi = v[i].hi;
		} else {
			v[k++] = v[i];
		}
	}
	sc.nskip = k;
}

/* Is there a heap_info of a glibc malloc arena's heap at a (aligned to
 * HEAP_MAX)?  { ar_ptr, prev, size, mprotect_size }: the first heap of
 * an arena holds the arena (ar_ptr) just after it, the others have a
 * prev, aligned; sizes in pages, at most HEAP_MAX. */
static int arena_heap(uintptr_t a, uintptr_t hi)
{
	uintptr_t h[4];

	if (read_mem(h, a, sizeof(h)) != sizeof(h))
		return 0;
	if (!h[0] || h[0] % 8 || (h[1] ? h[1] % HEAP_MAX != 0 : h[0] - a >= PAGE))
		return 0;
	return h[2] >= PAGE && h[2] <= HEAP_MAX && h[2] % PAGE == 0 && h[3] >= h[2] &&
	       h[3] <= HEAP_MAX && h[3] % PAGE == 0 && h[3] <= hi - a;
}

/* A thread control block at a, as glibc makes it on x86-64: its tcb and
 * self words (at 0 and 16) point to it.  Elsewhere 0: the thread
 * pointers noted are trusted. */
static int is_tcb(const uintptr_t *w, uintptr_t a)
{
#if defined(__x86_64__) && defined(__GLIBC__)
	return w[0] == a && w[2] == a;
#else
	(void)w;
	(void)a;
	return 0;
#endif
}

/* The thread pointer of the main thread, or 0: its thread control block
 * is in memory of the dynamic linker's, not at the top of a stack. */
static uintptr_t main_tp(pid_t self)
{
	const struct thr *t = &thr[(unsigned)sc.pid % NTHR];

	if (self == sc.pid)
		return thread_pointer();
	return __atomic_load_n(&t->tid, __ATOMIC_ACQUIRE) == sc.pid ? t->tp : 0;
}

/* A thread's stack, the thread pointer tp in it (its mapping m): from
 * the start of the mapping to the page past its thread control block
 * (the mapping may have merged with the next one). */
static void skip_stack(struct map *m, uintptr_t tp)
{
	uintptr_t hi = tp + PAGE < m->hi ? tp + PAGE : m->hi;

#if !(defined(__x86_64__) && defined(__GLIBC__))
	hi = m->hi;		/* the TLS is above the thread pointer */
#endif
	skip(m->lo, hi);
}

/* The static TLS and the thread control block (struct pthread) of a
 * thread whose stack is no root (one that ended, whose stack glibc keeps
 * for its next threads, or one the scan did not find), thread pointer tp
 * in mapping m: valgrind reads them, for they stay addressable when the
 * stack below them is no longer (it unwound) -- so the DTV of an ended
 * thread is "possible" (its TCB points 16 bytes into it), a block its
 * __thread variable held "reachable", one only its stack held lost.
 * From the lowest static TLS block its DTV points to (the surplus below
 * holds nothing) to the page past the TCB (glibc, x86-64). */
static void tls_of_stack(const struct map *m, uintptr_t tp)
{
	uintptr_t hi = tp + PAGE < m->hi ? tp + PAGE : m->hi, lo = tp;
	uintptr_t dtv = peek(tp + 8), len = dtv > 16 ? peek(dtv - 16) : 0;
	/* no lower than the static TLS can be (the mapping may have merged
	 * with memory below: malloc's, whose stale words must not count) */
	uintptr_t floor = tp - m->lo > sc.tls_size + 4 * PAGE ? tp - sc.tls_size - 4 * PAGE : m->lo;
	const uintptr_t *e = (const uintptr_t *)(void *)sc.buf;

	for (size_t i = 0; i < sc.nroots; i++)
		if (tp >= sc.roots[i].lo && tp < sc.roots[i].hi)
			return;		/* a live thread's stack, read already */
	if (len && len < BUF_SIZE / 16) {
		/* dtv[1 ..] { val, to_free }: a static block lies below tp */
		size_t got = read_mem(sc.buf, dtv + 16, 16 * len) / 16;

		for (size_t i = 0; i < got; i++)
			if (e[2 * i] < lo && e[2 * i] >= floor)
				lo = e[2 * i];
	}
	add_root(lo & ~(uintptr_t)7, hi, "TLS of a thread that ended or was not found", NULL);
}

/* The stacks of the threads that noted their thread pointer, ended or
 * not (a live thread's is a root already, from its stack pointer). */
static void skip_thread_stacks(uintptr_t mtp)
{
	for (unsigned i = 0; i < NTHR; i++) {
		pid_t tid = __atomic_load_n(&thr[i].tid, __ATOMIC_ACQUIRE);
		uintptr_t tp = thr[i].tp, w[3];
		struct map *m;

		if (!tid || tid == sc.pid || !tp || tp == mtp ||
		    (m = (struct map *)map_of(tp)) == NULL || m->kind != MK_OTHER)
			continue;
#if defined(__x86_64__) && defined(__GLIBC__)
		/* still a thread's: the mapping was not reused */
		if (read_mem(w, tp, sizeof(w)) != sizeof(w) || !is_tcb(w, tp))
			continue;
#else
		(void)w;
		if (!map_of(thr[i].stack) || map_of(thr[i].stack) != m)
			continue;
#endif
		skip_stack(m, tp);
#if defined(__x86_64__) && defined(__GLIBC__)
		tls_of_stack(m, tp);
#endif
	}
}

/* An anonymous mapping with a thread control block in its last pages
 * (but the main thread's, mtp): the stack of a thread that made no
 * allocation, or of one that ended before. */
static int tcb_at_top(struct map *m, uintptr_t mtp)
{
	const uintptr_t *w = (const uintptr_t *)(void *)sc.buf;
	uintptr_t lo = m->hi - m->lo > 2 * PAGE ? m->hi - 2 * PAGE : m->lo;
	size_t got = read_mem(sc.buf, lo, m->hi - lo) / sizeof(uintptr_t);

	for (size_t i = 0; i + 2 < got; i++)
		if (is_tcb(&w[i], lo + i * sizeof(uintptr_t)) && w[i] != mtp) {
			uintptr_t tp = w[i];	/* sc.buf is read again */

			skip_stack(m, tp);
			tls_of_stack(m, tp);
			return 1;
		}
	return 0;
}

/* The chunk of a block malloc mapped alone (IS_MMAPPED in its size
 * word; prev_size: where the mapping starts before the chunk): its span
 * in *s, 1; 0 for any other block. */
static int mmapped_chunk(uintptr_t p, const struct map *m, struct span *s)
{
	uintptr_t h[2];	/* prev_size, size */

	if (p - m->lo < sizeof(h) || read_mem(h, p - sizeof(h), sizeof(h)) != sizeof(h) || !(h[1] & 2))
		return 0;
	s->lo = p - sizeof(h) - h[0];
	s->hi = p - sizeof(h) + (h[1] & ~(uintptr_t)7);
	return s->lo >= m->lo && s->lo < p && s->hi <= m->hi && s->hi > p &&
	       s->lo % PAGE == 0 && s->hi % PAGE == 0;
}

/* Is block p of size bytes in mapping m a chunk of one of glibc's arenas:
 * the word before it the chunk's size as glibc makes it for that request
 * (the request and a word, rounded up to 16, at least 32; less than a
 * chunk's worth more after a realloc or an aligned allocation), not
 * mapped alone?  Another allocator's blocks have no such word. */
static int arena_chunk(uintptr_t p, size_t size, const struct map *m)
{
	size_t want = (size + sizeof(size_t) + 15) & ~(size_t)15, c;
	uintptr_t h;

	if (want < 32)
		want = 32;
	if (p - m->lo < sizeof(h) || read_mem(&h, p - sizeof(h), sizeof(h)) != sizeof(h) || (h & 2))
		return 0;
	c = h & ~(uintptr_t)7;
	return c >= want && c < want + 32 && c <= m->hi - (p - 2 * sizeof(h));
}

/* What of m is malloc's: its arenas' heaps and the chunks it mapped for
 * blocks, left out; 0, -1 when m holds other chunks of glibc's arenas
 * (memory malloc mapped for the main arena when brk() failed), -2 when it
 * holds blocks of another allocator's (jemalloc, tcmalloc: their free
 * memory and their own tables may be in any anonymous mapping). */
static int skip_malloc(struct map *m)
{
	/* Static, as sc is (one scan at a time): 1 KiB on the stack of the
	 * malloc call that takes mtrec ctl's reach request was the deepest
	 * frame of the scan there (issue 24; t2350). */
	static struct span heaps[MAX_ARENAS];
	struct span s;
	int nheaps = 0;

	if (!(m->flags & (MF_SHARED | MF_FILE)))
		for (uintptr_t a = (m->lo + HEAP_MAX - 1) & ~(HEAP_MAX - 1); a >= m->lo && a < m->hi;
		     a += HEAP_MAX) {
			if (!arena_heap(a, m->hi))
				continue;
			if (nheaps == MAX_ARENAS)
				return -1;
			heaps[nheaps].lo = a;
			heaps[nheaps].hi = m->hi - a > HEAP_MAX ? a + HEAP_MAX : m->hi;
			skip(heaps[nheaps].lo, heaps[nheaps].hi);
			nheaps++;
		}
	for (size_t k = first_block_after(m->lo); k < sc.n && sc.blk[k].addr < m->hi; k++) {
		uintptr_t p = sc.blk[k].addr;
		int in_heap = 0;

		for (int i = 0; i < nheaps && !in_heap; i++)
			in_heap = p >= heaps[i].lo && p < heaps[i].hi;
		if (in_heap)
			continue;
		if (!mmapped_chunk(p, m, &s))
			return arena_chunk(p, sc.blk[k].size, m) ? -1 : -2;
		skip(s.lo, s.hi);
	}
	return 0;
}

/* Roots for what of [lo, hi) of mapping m is not left out. */
static void map_pieces(const struct map *m, uintptr_t lo, uintptr_t hi)
{
	size_t l = 0, r = sc.nskip;
	char name[80];
	size_t n = m->namelen < sizeof(name) - 1 ? m->namelen : sizeof(name) - 1;
	struct root *rt;

	memcpy(name, m->name, n);
	name[n] = '\0';
	while (l < r) {		/* the first span that ends after lo */
		size_t mid = (l + r) / 2;

		if (sc.skip[mid].hi <= lo)
			l = mid + 1;
		else
			r = mid;
	}
	for (; lo < hi; l++) {
		uintptr_t end = l < sc.nskip && sc.skip[l].lo < hi ? sc.skip[l].lo : hi;

		if (end > lo && (rt = add_root(lo, end, n ? "mapping " : "anonymous mapping", name)) != NULL)
			rt->resident = (m->flags & (MF_SHARED | MF_FILE)) || m->hi - m->lo > LARGE_MAP;
		if (l >= sc.nskip || sc.skip[l].lo >= hi)
			break;
		lo = sc.skip[l].hi;
	}
}

/* The recorder's other mappings: from each page of an anonymous mapping
 * that libmtrec.so's writable data points into, SELF_WINDOW on, but for
 * the words of this scan's state (its buffers are own() already; the
 * blocks' bounds it keeps may lie in a mapping of the program's).  Not
 * the whole mapping: the kernel merges the recorder's mappings with the
 * program's of the same kind (MAP_NORESERVE) on either side. */
static void skip_self(void)
{
	uintptr_t lo = sc.maps[0].lo, hi = sc.maps[sc.nmaps - 1].hi;
	const uintptr_t *w = (const uintptr_t *)sc.self_lo, *end = (const uintptr_t *)sc.self_hi;

	for (; w + 1 <= end; w++) {
		uintptr_t v, at;
		const struct map *m;

		if ((const void *)w >= (const void *)&sc && (const void *)w < (const void *)(&sc + 1))
			continue;
		v = *(const volatile uintptr_t *)w;
		if (v - lo >= hi - lo || (m = map_of(v)) == NULL || (m->flags & (MF_SHARED | MF_FILE)) ||
		    m->namelen)
			continue;
		at = v & ~(uintptr_t)(PAGE - 1);
		skip(at, m->hi - at > SELF_WINDOW ? at + SELF_WINDOW : m->hi);
	}
}

/* The program's own mappings, as roots.  Called after every other root
 * is known, the stacks' included. */
void map_roots(pid_t self)
{
	uintptr_t mtp = main_tp(self);
	char a[24], b[24];
	int foreign = 0;

	if (!sc.nmaps)
		return;
	sc.skip_cap = sc.nloads + sc.nroots + sc.n + NTHR + 4 * sc.nmaps + 64 +
		(sc.self_hi - sc.self_lo) / sizeof(uintptr_t);
	if ((sc.skip = scan_map(sc.skip_cap * sizeof(struct span))) == NULL) {
		note(mtrec_word(MTREC_W_REACH), "unscanned mappings: no memory for the scan", SAY_END);
		return;
	}
	own(thr, NTHR * sizeof(*thr), 0);
	{
		/* the trace's whole reservation (its parts, when rotated) */
		char *base = __atomic_load_n(&mtrec_file.base, __ATOMIC_ACQUIRE);

		if (base)
			skip((uintptr_t)base, (uintptr_t)base + mtrec_file.maplen);
	}
	for (int i = 0; i < sc.nown; i++)	/* mapped: whole pages */
		skip(sc.own[i].lo, (sc.own[i].hi + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
	prim_dl_iterate_phdr(object_spans, NULL);
	for (size_t i = 0; i < sc.nroots; i++)
		skip(sc.roots[i].from, sc.roots[i].hi);
	if (sc.self_hi)
		skip_self();
	skip_thread_stacks(mtp);
	for (size_t i = 0; i < sc.nmaps; i++) {
		struct map *m = &sc.maps[i];

		if (m->kind != MK_OTHER || (m->flags & (MF_RW | MF_SKIP)) != MF_RW)
			continue;
		if (!(m->flags & (MF_SHARED | MF_FILE)))
			tcb_at_top(m, mtp);
		switch (skip_malloc(m)) {
		case -2:
			foreign = 1;
			break;
		case -1:
			m->flags |= MF_SKIP;
			note(mtrec_word(MTREC_W_REACH), "unscanned mapping ", hex(a, m->lo), "-", hex(b, m->hi),
			     ": holds chunks of malloc's main arena (mapped when brk() failed): "
			     "its free memory would hide leaks", SAY_END);
			break;
		default:
			break;
		}
	}
	if (foreign) {
		for (size_t i = 0; i < sc.nmaps; i++)
			if (!(sc.maps[i].flags & (MF_SHARED | MF_FILE)))
				sc.maps[i].flags |= MF_SKIP;
		note(mtrec_word(MTREC_W_REACH), "unscanned anonymous mappings: malloc is not glibc's (live blocks without "
		     "its chunk headers): its free memory and its own tables cannot be told from the "
		     "program's", SAY_END);
	}
	if (sc.nskip >= sc.skip_cap) {
		note(mtrec_word(MTREC_W_REACH), "unscanned mappings: no memory for the scan", SAY_END);
		return;
	}
	sort_skip();
	for (size_t i = 0; i < sc.nmaps; i++) {
		const struct map *m = &sc.maps[i];

		if (m->kind == MK_OTHER && (m->flags & (MF_RW | MF_SKIP)) == MF_RW)
			map_pieces(m, m->lo, m->hi);
	}
}

