/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* reach-mark.c -- the scan's state (sc), its lines, its reading of memory
 * that may be gone, and the marking of the blocks reached from the roots
 * (reach.c tells the whole). */
#include "reach-mark.h"
#include "words.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

struct scan sc;

void own(const void *p, size_t len, int unmap)
{
	if (p && len && sc.nown < MAX_OWN) {
		sc.own[sc.nown].lo = (uintptr_t)p;
		sc.own[sc.nown].hi = (uintptr_t)p + len;
		sc.own[sc.nown].unmap = unmap;
		sc.nown++;
	}
}

void *scan_map(size_t len)
{
	void *p = prim_map_anon(len);

	if (p && len >= ((size_t)2 << 20))
		madvise(p, len, MADV_HUGEPAGE);
	own(p, len, 1);
	return p;
}

/* ---- output --------------------------------------------------------- */

void flush(void)
{
	if (sc.outlen && !sc.region) {
		sc.to->text(sc.out, sc.outlen);
		sc.outlen = 0;
	}
}

/* Is there room for len more bytes of lines?  A region's size is fixed:
 * the verdicts leave its last TAIL_ROOM bytes to the lines after them. */
static int room_for(size_t len)
{
	if (sc.outlen + len + (sc.region && !sc.tail ? TAIL_ROOM : 0) <= sc.outcap)
		return 1;
	if (sc.region) {
		sc.lines_lost++;
		return 0;
	}
	flush();
	return 1;
}

/* The pieces (the variable arguments after first, up to a NULL) and a
 * newline at buf + len (cap bytes).  va_start() is in it: clang's
 * analyzer, which says va_arg() reads an uninitialized list there, is
 * mistaken (as in prim_say). */
#define PUT_PIECES(buf, len, cap, first) \
	do { \
		char *o_ = (buf) + (len), *lim_ = (buf) + (cap) - 1; \
		va_list ap_; \
		va_start(ap_, first); \
		for (const char *s_ = (first); s_; s_ = va_arg(ap_, const char *)) \
			o_ = prim_puts(o_, lim_, s_); \
		va_end(ap_); \
		*o_++ = '\n'; \
		(len) = (size_t)(o_ - (buf)); \
	} while (0)

/* A line of the scan's output. */
__attribute__((sentinel)) void put_line(const char *first, ...)
{
	if (!room_for(512))
		return;
	PUT_PIECES(sc.out, sc.outlen, sc.outcap, first); // NOLINT(clang-analyzer-valist.Uninitialized)
}

/* A "# reach unscanned" line, kept for after the verdicts. */
__attribute__((sentinel)) void note(const char *first, ...)
{
	if (sc.noteslen + 512 > NOTES_SIZE) {
		sc.notes_lost++;
		return;
	}
	PUT_PIECES(sc.notes, sc.noteslen, NOTES_SIZE, first); // NOLINT(clang-analyzer-valist.Uninitialized)
}

/* "# reach ADDR KIND" at O, the end returned (a million of them took a
 * tenth of a second with put_line, half of it in formatting): the number
 * of digits from the highest bit set, the kind's text with its blank
 * and newline copied at one of two fixed sizes, which the compiler
 * inlines. */
static char *verdict_line(char *o, uintptr_t addr, unsigned kind)
{
	static const char digits[] = "0123456789abcdef";
	static const char tail[4][12] = { " definite\n", " possible\n", " reachable\n", " indirect\n" };
	int d = addr ? (64 - __builtin_clzl(addr) + 3) / 4 : 1;

	o = mtrec_put_word(o, MTREC_W_REACH);
	*o++ = '0';
	*o++ = 'x';
	for (int j = d - 1; j >= 0; j--)
		*o++ = digits[(addr >> (4 * j)) & 15];
	kind &= 3;
	if (kind == 2) {	/* " reachable\n" */
		memcpy(o, tail[kind], 11);
		return o + 11;
	}
	memcpy(o, tail[kind], 10);
	return o + 10;
}

void put_verdict(uintptr_t addr, int kind)
{
	int d = addr ? (64 - __builtin_clzl(addr) + 3) / 4 : 1;

	if (room_for(mtrec_word_len(MTREC_W_REACH) + 2 + (size_t)d + ((kind & 3) == 2 ? 11 : 10)))
		sc.outlen = (size_t)(verdict_line(sc.out + sc.outlen, addr, (unsigned)kind) - sc.out);
}

/* The verdicts of every block, in the blocks' order, a stretch of lines
 * at a time: their room checked once. */
void put_verdicts(void)
{
	const size_t most = VERDICT_LINE(16);

	for (size_t i = 0; i < sc.n;) {
		size_t keep = sc.region ? TAIL_ROOM : 0;
		size_t k = sc.outcap > sc.outlen + keep ? (sc.outcap - sc.outlen - keep) / most : 0;
		char *o = sc.out + sc.outlen;

		if (k > sc.n - i)
			k = sc.n - i;
		if (k > 4096)
			k = 4096;
		if (!k) {	/* the last lines of a region, or a full buffer */
			put_verdict(sc.blk[i].addr, sc.state[i]);
			i++;
			continue;
		}
		for (size_t end = i + k; i < end; i++)
			o = verdict_line(o, sc.blk[i].addr, sc.state[i]);
		sc.outlen = (size_t)(o - sc.out);
		flush();
	}
}

/* Numbers as text for the lines: dec and hex (with 0x) into b[24]. */
const char *dec(char *b, unsigned long v)
{
	*prim_putu(b, b + 23, v) = '\0';
	return b;
}

const char *hex(char *b, unsigned long v)
{
	b[0] = '0';
	b[1] = 'x';
	*prim_putx(b + 2, b + 23, v) = '\0';
	return b;
}

/* ---- reading memory that may be gone -------------------------------- */

/* Copy len bytes at src (in this process) to dst: the length of the
 * prefix copied, short at the first page that cannot be read. */
size_t read_mem(void *dst, uintptr_t src, size_t len)
{
	size_t total = 0;

	if (!sc.no_vm) {
		struct iovec l = { dst, len }, r = { (void *)src, len };
		long n = syscall(SYS_process_vm_readv, sc.pid, &l, 1ul, &r, 1ul, 0ul);

		if (n >= 0)
			return (size_t)n;
		if (errno != ENOSYS && errno != EPERM)
			return 0;
		sc.no_vm = 1;	/* a seccomp filter, or an old kernel */
	}
	if (sc.pipefd[0] < 0 && syscall(SYS_pipe2, sc.pipefd, O_CLOEXEC) < 0) {
		sc.pipefd[0] = sc.pipefd[1] = -1;
		return 0;
	}
	/* write() from memory that cannot be read fails with EFAULT, or
	 * writes the pipe buffers (of a page each, from the start of the
	 * write) it filled before: so that these are the source's pages, a
	 * first piece goes up to the first page boundary. */
	while (total < len) {
		size_t off = (src + total) % PAGE, piece = off ? PAGE - off : 16 * PAGE;

		if (piece > len - total)
			piece = len - total;
		long w = syscall(SYS_write, sc.pipefd[1], src + total, piece);

		if (w <= 0)
			break;
		for (long got = 0, r; got < w; got += r)
			if ((r = syscall(SYS_read, sc.pipefd[0], (char *)dst + total + got,
					 (size_t)(w - got))) <= 0)
				return total;
		total += (size_t)w;
		if ((size_t)w < piece)
			break;
	}
	return total;
}

/* One word; 0 when it cannot be read. */
uintptr_t peek(uintptr_t a)
{
	uintptr_t w = 0;

	return read_mem(&w, a, sizeof(w)) == sizeof(w) ? w : 0;
}

/* ---- marking -------------------------------------------------------- */

/* Block k is pointed at; start: at its first byte; definite: from a
 * root, or from a block reached by start pointers only (valgrind's
 * is_prior_definite). */
static inline void reached(size_t k, int start, int definite)
{
	unsigned char st = sc.state[k];

	if (sc.collect) {
		if (st == UNREACHED && k != sc.cur && sc.edge)
			sc.edge[sc.nedge++] = (uint32_t)k;
		return;
	}
	if (sc.leader >= 0) {
		if (st == UNREACHED && (long)k != sc.leader) {
			sc.state[k] = INDIRECT;
			push(k);
		}
		return;
	}
	if (st == REACHABLE)
		return;
	if (start && definite) {
		sc.state[k] = REACHABLE;
		push(k);
	} else if (st == UNREACHED) {
		sc.state[k] = POSSIBLE;
		push(k);
	}
}

/* The aligned words of [at, at + len), whose copy is at buf. */
void scan_words(const char *buf, uintptr_t at, size_t len, int definite)
{
	uintptr_t a = (at + 7) & ~(uintptr_t)7, end = (at + len) & ~(uintptr_t)7;

	for (; a < end; a += 8) {
		uintptr_t w;
		long k;

		memcpy(&w, buf + (a - at), sizeof(w));
		if (w - sc.lo >= sc.hi - sc.lo)
			continue;
		if ((k = find(w)) >= 0)
			reached((size_t)k, w == sc.blk[k].addr, definite);
	}
}

/* Read and scan [lo, hi): the bytes that could not be read. */
uint64_t scan_range(uintptr_t lo, uintptr_t hi, int definite)
{
	uint64_t lost = 0;

	while (lo < hi) {
		size_t want = hi - lo < BUF_SIZE ? hi - lo : BUF_SIZE;
		size_t got = read_mem(sc.buf, lo, want);

		scan_words(sc.buf, lo, got, definite);
		sc.scanned += got;
		lo += got;
		if (got < want) {	/* skip the page that failed */
			uintptr_t next = (lo | (PAGE - 1)) + 1;

			if (next > hi || next < lo)
				next = hi;
			lost += next - lo;
			lo = next;
		}
	}
	return lost;
}

static inline int block_definite(size_t k)
{
	return sc.state[k] != POSSIBLE;
}

static void block_unreadable(uint64_t bytes)
{
	if (bytes) {
		sc.unreadable++;
		sc.unreadable_bytes += bytes;
	}
}

/* Block b is scanned now, and has been: what the scan of lost blocks
 * (cliques) keeps of it. */
static inline void block_begin(uint32_t b)
{
	if (sc.collect && sc.first) {
		sc.cur = b;
		sc.first[b] = sc.nedge;
	}
}

static inline void block_end(uint32_t b)
{
	if (sc.collect && sc.cnt && sc.first)
		sc.cnt[b] = (uint32_t)(sc.nedge - sc.first[b]);
}

/* Scan block b, page by page. */
static void scan_block_alone(uint32_t b)
{
	block_begin(b);
	block_unreadable(scan_range(sc.blk[b].addr, sc.blk[b].addr + block_words(b), block_definite(b)));
	block_end(b);
}

/* Block numbers in increasing order, which is the blocks' address order.
 * Blocks pushed in address order (a table's entries, a list built in
 * order) come off the stack in the reverse order: turned round, not
 * sorted.  Otherwise a Shell sort: no recursion, no memory. */
static void sort_ids(uint32_t *ids, int k)
{
	static const int gaps[] = { 4711, 1750, 701, 301, 132, 57, 23, 10, 4, 1 };
	int up = 1, down = 1;

	for (int i = 1; i < k && (up || down); i++) {
		up &= ids[i - 1] < ids[i];
		down &= ids[i - 1] > ids[i];
	}
	if (up)
		return;
	if (down) {
		for (int i = 0, j = k - 1; i < j; i++, j--) {
			uint32_t v = ids[i];

			ids[i] = ids[j];
			ids[j] = v;
		}
		return;
	}
	for (unsigned g = 0; g < sizeof(gaps) / sizeof(gaps[0]); g++)
		for (int gap = gaps[g], i = gap; i < k; i++) {
			uint32_t v = ids[i];
			int j = i;

			for (; j >= gap && ids[j - gap] > v; j -= gap)
				ids[j] = ids[j - gap];
			ids[j] = v;
		}
}

/* Read blocks ids[0 .. k), in address order, by one system call, those
 * that lie close together as one piece of memory (a system call's cost
 * is in the pieces, the bytes between them are few), and scan them: the
 * number of blocks taken, all k unless they make more than BATCH pieces. */
static int read_batch(const uint32_t *ids, int k)
{
	size_t total = 0, len, off = 0;
	int m = 0, took = 0;
	long n;

	for (; took < k; took++) {
		uintptr_t at = sc.blk[ids[took]].addr;
		struct iovec *v = m ? &sc.iov[m - 1] : NULL;

		len = block_words(ids[took]);
		if (v && at >= (uintptr_t)v->iov_base + v->iov_len &&
		    at - ((uintptr_t)v->iov_base + v->iov_len) <= GAP) {
			size_t more = at + len - ((uintptr_t)v->iov_base + v->iov_len);

			if (total + more > BUF_SIZE)	/* the gaps count too */
				break;
			total += more;
			v->iov_len = at + len - (uintptr_t)v->iov_base;
		} else {
			if (m == BATCH || total + len > BUF_SIZE)
				break;
			sc.iov[m].iov_base = (void *)at;
			sc.iov[m++].iov_len = len;
			total += len;
		}
	}
	if (!sc.no_vm) {
		struct iovec l = { sc.buf, total };

		n = syscall(SYS_process_vm_readv, sc.pid, &l, 1ul, sc.iov, (unsigned long)m, 0ul);
	} else {	/* through the pipe, piece by piece */
		n = 0;
		for (int j = 0; j < m; j++) {
			size_t got = read_mem(sc.buf + n, (uintptr_t)sc.iov[j].iov_base,
					      sc.iov[j].iov_len);

			n += (long)got;
			if (got < sc.iov[j].iov_len)
				break;
		}
	}
	if (n != (long)total) {
		/* some of it could not be read: block by block, page by page */
		for (int i = 0; i < took; i++)
			scan_block_alone(ids[i]);
		return took;
	}
	for (int i = 0, j = 0; i < took; i++) {
		uintptr_t at = sc.blk[ids[i]].addr;

		sc.scanned += block_words(ids[i]);
		while (at >= (uintptr_t)sc.iov[j].iov_base + sc.iov[j].iov_len)
			off += sc.iov[j++].iov_len;
		block_begin(ids[i]);
		scan_words(sc.buf + off + (at - (uintptr_t)sc.iov[j].iov_base), at,
			   block_words(ids[i]), block_definite(ids[i]));
		block_end(ids[i]);
	}
	return took;
}

/* Scan the blocks on the stack until it is empty, up to IDS of them at a
 * time, read in address order. */
void scan_blocks(void)
{
	while (sc.top) {
		size_t total = 0, len;
		int k = 0;

		while (sc.top && k < IDS) {
			uint32_t b = sc.stack[sc.top - 1];

			len = block_words(b);
			if (len > BUF_SIZE / 2) {	/* alone, in pieces */
				if (k)
					break;
				sc.top--;
				scan_block_alone(b);
				break;
			}
			if (total + len > BUF_SIZE / 2)
				break;
			sc.top--;
			if (len) {
				sc.ids[k++] = b;
				total += len;
			}
		}
		if (!k)
			continue;
		sort_ids(sc.ids, k);
		for (int i = 0; i < k;)
			i += read_batch(sc.ids + i, k - i);
	}
}
