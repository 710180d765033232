/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mtrec-attach.c -- "mtrec attach [-o FILE] [--depth N] [--track SPEC]
 * [--reach] PID" and "mtrec detach PID" (share/attach.md).
 *
 * How: one thread of the target is stopped with ptrace (PTRACE_SEIZE, then
 * PTRACE_INTERRUPT) and made to call libc's dlopen(libmtrec.so), then the
 * library's mtrec_attach(SETTINGS), which opens the trace, starts
 * recording and redirects the malloc family's call slots of every loaded
 * object to the recorder (recorder/got.c); mtrec detach makes it call
 * mtrec_detach(), which gives the slots back.  The other threads are never
 * stopped: the slots are single pointer stores, and a thread calling
 * through one at that moment gets libc's function or ours.  No debugger.
 *
 * Which thread: calling dlopen() or malloc() in a thread stopped inside
 * malloc or the dynamic linker would take a lock that thread holds (or
 * tread on its tcache).  So the thread chosen is stopped either in a
 * system call that waits for something outside (poll, epoll_wait, read,
 * nanosleep, sigtimedwait ...: never futex, which may be a lock inside
 * malloc), or in code outside libc and the dynamic linker; a thread that
 * is not is let run for a moment and stopped again, until it is.
 *
 * The return: the called function returns to an int3 byte of libc, whose
 * SIGTRAP stops the thread for us and is never delivered (no stop at each
 * system call of dlopen(): each would wait for the scheduler).  When the
 * thread blocks SIGTRAP or the process ignores it (the kernel would then
 * reset the program's handler: may_trap), it returns to a `syscall`
 * instruction of libc instead (its result in rax, taken as a system call
 * number), where PTRACE_SYSCALL stops it at entry; the call is turned
 * into getpid() there, which any seccomp filter allows, and no signal is
 * raised at all.  The registers are then put back, with the
 * kernel's restart of an interrupted system call done by hand (rip back
 * to the syscall instruction, rax its number, or restart_syscall for the
 * sleeps), as the kernel would have done had the thread not been used. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <dlfcn.h>

#include "mtrec-attach.h"
#include "mtrec-ctl.h"

enum { ATTACH_OK = 0, ATTACH_FAILED = 2, ATTACH_USAGE = 125 };

static const char *progname = "mtrec";
static int quiet;	/* mtrec ctl's call: no message */
#define SAY(...) \
	do { \
		if (!quiet) \
			fprintf(stderr, __VA_ARGS__); \
	} while (0)

static void attach_usage(FILE *out)
{
	fprintf(out,
		"Usage: %s attach [-o FILE] [--depth N] [--track SPEC] [--reach] PID\n"
		"  or:  %s detach PID\n"
		"Start recording inside a running process that was started without the\n"
		"recorder, or stop it and give the program its own calls back.\n"
		"\n"
		"  -o, --output=FILE  the trace ('%%p' becomes the pid) [mtrec.NAME.%%p.log]\n"
		"  -d, --depth=N      frames per recorded stack (as mtrec --depth)\n"
		"  -t, --track=SPEC   record these functions too (as mtrec --track)\n"
		"  -r, --reach        keep the live blocks for a scan (as mtrec --reach)\n"
		"      --seccomp      attach even when the process runs under a seccomp\n"
		"                     filter (a refused system call may kill it)\n"
		"  -h, --help         print this help and exit\n"
		"\n"
		"One thread is stopped for a few milliseconds; the others run on.\n"
		"Exit status: 0 recording runs (attach) or stopped (detach); 2 it could\n"
		"not be done (the reason is said); 125 bad usage.\n",
		progname, progname);
}

#if defined(__x86_64__)

/* ---- small helpers ------------------------------------------------------ */

static ssize_t read_small(const char *path, char *buf, size_t cap)
{
	ssize_t n, len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while ((size_t)len < cap - 1 && (n = read(fd, buf + len, cap - 1 - (size_t)len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	return len;
}

static long status_field(pid_t pid, const char *key)
{
	char path[64], buf[8192], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_small(path, buf, sizeof(buf)) < 0 || (p = strstr(buf, key)) == NULL)
		return -1;
	return strtol(p + strlen(key), NULL, 10);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- the target's objects ------------------------------------------------ */

struct object {
	char path[PATH_MAX];
	uintptr_t bias;			/* load bias: run-time minus link-time address */
	uintptr_t lo, hi;		/* its executable mappings' extent */
	int found;
};

/* Is the mapped file PATH the object NAME ("libc.so.6", "ld-linux", ...)? */
typedef int (*object_test)(const char *path);

static int is_libc(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return strncmp(b, "libc.so", 7) == 0 || (strncmp(b, "libc-2.", 7) == 0 && strstr(b, ".so"));
}

static int is_loader(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return strncmp(b, "ld-linux", 8) == 0 || strncmp(b, "ld-", 3) == 0;
}

static int is_recorder(const char *path)
{
	const char *b = strrchr(path, '/');

	return strcmp(b ? b + 1 : path, "libmtrec.so") == 0;
}

/* The first PT_LOAD's p_vaddr of an ELF file (0 for shared objects). */
static int first_vaddr(int fd, uintptr_t *vaddr)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64)
		return -1;
	for (int i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (size_t)i * eh.e_phentsize)) != sizeof(ph))
			return -1;
		if (ph.p_type == PT_LOAD) {
			*vaddr = ph.p_vaddr & ~(uintptr_t)0xfff;
			return 0;
		}
	}
	return -1;
}

/* The file of a mapping as the process sees it, opened through its root. */
static int open_in(pid_t pid, const char *path)
{
	char full[PATH_MAX + 64];
	int fd;

	snprintf(full, sizeof(full), "/proc/%d/root%s", (int)pid, path);
	if ((fd = open(full, O_RDONLY | O_CLOEXEC)) < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd;
}

static int find_object(pid_t pid, object_test test, struct object *o)
{
	char path[64], line[PATH_MAX + 256];
	FILE *maps;

	memset(o, 0, sizeof(*o));
	o->lo = UINTPTR_MAX;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((maps = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), maps)) {
		unsigned long lo, hi, off;
		char perms[8], file[PATH_MAX];
		int fd;
		uintptr_t vaddr;

		file[0] = '\0';
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095[^\n]", &lo, &hi, perms, &off, file) < 4 ||
		    file[0] != '/' || !test(file))
			continue;
		if (o->found && strcmp(file, o->path) != 0)
			continue;
		if (!o->found) {
			snprintf(o->path, sizeof(o->path), "%s", file);
			if (off != 0 || (fd = open_in(pid, file)) < 0)
				continue;
			if (first_vaddr(fd, &vaddr) < 0) {
				close(fd);
				continue;
			}
			close(fd);
			o->bias = lo - vaddr;
			o->found = 1;
		}
		if (perms[2] == 'x') {
			if (lo < o->lo)
				o->lo = lo;
			if (hi > o->hi)
				o->hi = hi;
		}
	}
	fclose(maps);
	return o->found ? 0 : -1;
}

static uintptr_t object_symbol_at(pid_t pid, const struct object *o, const char *name,
				  uintptr_t at, char *out, size_t cap);

/* The address of NAME, a function the object exports (its default
 * version when there are several), or 0. */
static uintptr_t object_symbol(pid_t pid, const struct object *o, const char *name)
{
	return object_symbol_at(pid, o, name, 0, NULL, 0);
}

/* The name of the exported function of the object that holds address AT
 * into out; 0 when none does. */
static int object_function_at(pid_t pid, const struct object *o, uintptr_t at, char *out, size_t cap)
{
	out[0] = '\0';
	return object_symbol_at(pid, o, NULL, at, out, cap) ? 0 : -1;
}

/* NAME's address, or (NAME NULL) that of the function holding AT. */
static uintptr_t object_symbol_at(pid_t pid, const struct object *o, const char *name,
				  uintptr_t at, char *out, size_t cap)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh, *shs = NULL;
	Elf64_Sym *syms = NULL;
	char *strs = NULL;
	uint16_t *versym = NULL;
	size_t nsyms = 0;
	uintptr_t found = 0;
	int fd = open_in(pid, o->path), found_default = 0;

	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || eh.e_shentsize != sizeof(sh) ||
	    eh.e_shnum == 0 || eh.e_shnum > 4096)
		goto out;
	shs = calloc(eh.e_shnum, sizeof(*shs));
	if (!shs || pread(fd, shs, sizeof(*shs) * eh.e_shnum, (off_t)eh.e_shoff) !=
		    (ssize_t)(sizeof(*shs) * eh.e_shnum))
		goto out;
	for (int i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr *s = &shs[i];

		if (s->sh_type == SHT_DYNSYM && s->sh_link < eh.e_shnum && s->sh_size < (64u << 20)) {
			Elf64_Shdr *st = &shs[s->sh_link];

			nsyms = s->sh_size / sizeof(Elf64_Sym);
			syms = malloc(s->sh_size);
			strs = malloc(st->sh_size + 1);
			if (!syms || !strs || pread(fd, syms, s->sh_size, (off_t)s->sh_offset) != (ssize_t)s->sh_size ||
			    pread(fd, strs, st->sh_size, (off_t)st->sh_offset) != (ssize_t)st->sh_size)
				goto out;
			strs[st->sh_size] = '\0';
			for (int j = 0; j < eh.e_shnum; j++)
				if (shs[j].sh_type == SHT_GNU_versym && shs[j].sh_size == nsyms * 2) {
					versym = malloc(shs[j].sh_size);
					if (versym && pread(fd, versym, shs[j].sh_size, (off_t)shs[j].sh_offset) !=
							      (ssize_t)shs[j].sh_size) {
						free(versym);
						versym = NULL;
					}
				}
			(void)st;
			break;
		}
	}
	for (size_t i = 1; syms && i < nsyms; i++) {
		Elf64_Sym *y = &syms[i];
		int dflt = !versym || !(versym[i] & 0x8000);

		if (y->st_shndx == SHN_UNDEF || ELF64_ST_TYPE(y->st_info) != STT_FUNC)
			continue;
		if (!name) {
			if (at >= o->bias + y->st_value && at < o->bias + y->st_value + y->st_size) {
				snprintf(out, cap, "%s", strs + y->st_name);
				found = at;
				break;
			}
			continue;
		}
		if (strcmp(strs + y->st_name, name) != 0)
			continue;
		if (!found || (dflt && !found_default)) {
			found = o->bias + y->st_value;
			found_default = dflt;
		}
	}
out:
	(void)sh;
	free(shs);
	free(syms);
	free(strs);
	free(versym);
	if (fd >= 0)
		close(fd);
	return found;
}

/* The first LEN bytes BYTES in the object's executable code (a `syscall`
 * instruction, an `int3`: where the calls return to).  0 when there is
 * none. */
static uintptr_t find_code(pid_t pid, const struct object *o, const unsigned char *bytes, size_t len)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	uintptr_t at = 0;
	int fd = open_in(pid, o->path);

	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		goto out;
	for (int i = 0; i < eh.e_phnum && !at; i++) {
		unsigned char buf[65536];
		ssize_t n;

		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (size_t)i * eh.e_phentsize)) != sizeof(ph))
			goto out;
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		for (size_t off = 0; off < ph.p_filesz && !at; off += sizeof(buf) - 1) {
			n = pread(fd, buf, sizeof(buf), (off_t)(ph.p_offset + off));
			for (ssize_t k = 0; k + (ssize_t)len <= n; k++)
				if (memcmp(buf + k, bytes, len) == 0) {
					at = o->bias + ph.p_vaddr + off + (size_t)k;
					break;
				}
			if (n <= 0)
				break;
		}
	}
out:
	if (fd >= 0)
		close(fd);
	return at;
}

/* ---- the target's memory -------------------------------------------------- */

static int mem_fd = -1;

static int mem_write(uintptr_t at, const void *buf, size_t len)
{
	return pwrite(mem_fd, buf, len, (off_t)at) == (ssize_t)len ? 0 : -1;
}

static void mem_string(uintptr_t at, char *out, size_t cap)
{
	ssize_t n = at ? pread(mem_fd, out, cap - 1, (off_t)at) : -1;

	out[n > 0 ? n : 0] = '\0';
	out[strnlen(out, cap - 1)] = '\0';
}

/* ---- one thread, stopped --------------------------------------------------- */

struct held {
	pid_t tid;
	struct user_regs_struct saved;	/* as it was stopped */
	int pending_sig;		/* a signal it was stopped for: delivered at the end */
	uintptr_t trap;			/* the syscall instruction calls return to */
	uintptr_t int3;			/* or this int3, when SIGTRAP may be raised: 0 if not */
	uintptr_t sp;			/* the lowest stack address we used */
	double stopped_at;
	int at_syscall_stop;		/* the last stop was our trap's syscall exit */
	int signalled;			/* a signal of the program's was delivered to it meanwhile */
	int nice, boosted;		/* its nice value, and whether we raised it meanwhile */
	long last_nr;			/* the last system call seen it in, or -1 */
};

/* Wait for TID to stop; 0 and *status, or -1 when it is gone. */
static int wait_stop(pid_t tid, int *status)
{
	for (;;) {
		pid_t r = waitpid(tid, status, __WALL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || WIFEXITED(*status) || WIFSIGNALED(*status))
			return -1;
		if (WIFSTOPPED(*status))
			return 0;
	}
}

/* Stop a seized thread; 0 once it is in a ptrace-stop. */
static int stop_thread(struct held *h)
{
	int status;

	if (ptrace(PTRACE_INTERRUPT, h->tid, 0, 0) < 0 || wait_stop(h->tid, &status) < 0)
		return -1;
	if (status >> 16 == 0 && WSTOPSIG(status) != SIGTRAP)
		h->pending_sig = WSTOPSIG(status);	/* a signal-delivery-stop */
	return ptrace(PTRACE_GETREGS, h->tid, 0, &h->saved) < 0 ? -1 : 0;
}

/* System calls that wait for something outside the process: a thread
 * blocked in one is not inside malloc or the loader.  futex is not one
 * of them (malloc's and the loader's locks wait in it). */
static int waits_outside(long nr)
{
	static const long ok[] = {
		SYS_read, SYS_poll, SYS_select, SYS_pause, SYS_nanosleep, SYS_accept,
		SYS_recvfrom, SYS_recvmsg, SYS_wait4, SYS_rt_sigtimedwait, SYS_rt_sigsuspend,
		SYS_epoll_wait, SYS_clock_nanosleep, SYS_epoll_pwait, SYS_waitid, SYS_pselect6,
		SYS_ppoll, SYS_accept4, SYS_recvmmsg, SYS_msgrcv, SYS_io_getevents,
#ifdef SYS_epoll_pwait2
		SYS_epoll_pwait2,
#endif
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (nr == ok[i])
			return 1;
	return 0;
}

struct ranges {
	pid_t pid;
	struct object libc, loader, recorder;
};

static int in(const struct object *o, uintptr_t ip)
{
	return o->found && ip >= o->lo && ip < o->hi;
}

/* restart_syscall goes on with a call that was interrupted: poll() or
 * nanosleep() with a timeout, or a futex wait (a lock, maybe malloc's).
 * Which: libc's function the thread is in (exported wrappers for the
 * former; the futex waits are internal). */
static int restarts_wait(const struct held *h, const struct ranges *r)
{
	static const char *const wrappers[] = {
		"poll", "__poll", "nanosleep", "__nanosleep", "clock_nanosleep",
		"__clock_nanosleep", "__clock_nanosleep_time64", "usleep", "sleep",
	};
	char name[128];

	if (!in(&r->libc, h->saved.rip) ||
	    object_function_at(r->pid, &r->libc, h->saved.rip, name, sizeof(name)) < 0)
		return 0;
	for (size_t i = 0; i < sizeof(wrappers) / sizeof(wrappers[0]); i++)
		if (strcmp(name, wrappers[i]) == 0)
			return 1;
	return 0;
}

/* Can this stopped thread be made to call dlopen() now?  A thread
 * stopped once in poll() or nanosleep() with a timeout goes on in
 * restart_syscall: that is the call it was in (last_nr).  One about to
 * enter such a call (rip on a syscall instruction, rax the call's
 * number: we released it there) is not inside malloc either. */
static int safe_point(struct held *h, const struct ranges *r)
{
	long nr = (long)h->saved.orig_rax, word;

	if (nr == SYS_restart_syscall && waits_outside(h->last_nr))
		return 1;
	if (nr == SYS_restart_syscall)
		return restarts_wait(h, r);
	if (nr >= 0) {
		h->last_nr = nr;
		return waits_outside(nr);
	}
	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, h->tid, (void *)h->saved.rip, 0);
	if (errno == 0 && (word & 0xffff) == 0x050f && waits_outside((long)h->saved.rax)) {
		h->last_nr = (long)h->saved.rax;
		return 1;
	}
	if (errno == 0 && (word & 0xffff) == 0x050f && (long)h->saved.rax == SYS_restart_syscall)
		return restarts_wait(h, r);
	return !in(&r->libc, h->saved.rip) && !in(&r->loader, h->saved.rip) &&
	       !in(&r->recorder, h->saved.rip);
}

/* The thread's pending system call, as /proc says without stopping it;
 * -1 when it runs. */
static long proc_syscall(pid_t pid, pid_t tid)
{
	char path[96], buf[256];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	if (read_small(path, buf, sizeof(buf)) <= 0 || buf[0] < '0' || buf[0] > '9')
		return -1;
	return strtol(buf, NULL, 10);
}

static int list_threads(pid_t pid, pid_t *out, int cap)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((dir = opendir(path)) == NULL)
		return -1;
	while ((d = readdir(dir)) != NULL && n < cap)
		if (d->d_name[0] >= '0' && d->d_name[0] <= '9')
			out[n++] = (pid_t)atoi(d->d_name);
	closedir(dir);
	return n;
}

/* Seize one thread and bring it to a safe point: 0 (it is stopped, held),
 * or -1 (it was let go again). */
static int hold_thread(pid_t tid, long nr, const struct ranges *r, struct held *h, int tries)
{
	memset(h, 0, sizeof(*h));
	h->tid = tid;
	h->last_nr = nr;
	if (ptrace(PTRACE_SEIZE, tid, 0, (void *)(long)PTRACE_O_TRACESYSGOOD) < 0)
		return -1;
	h->stopped_at = now_ms();
	if (stop_thread(h) < 0)
		return -1;
	for (int i = 0; !safe_point(h, r); i++) {
		struct timespec ts = { 0, 100000 + (i % 7) * 50000 };

		if (i >= tries || ptrace(PTRACE_CONT, tid, 0, (void *)(long)h->pending_sig) < 0) {
			ptrace(PTRACE_DETACH, tid, 0, (void *)(long)h->pending_sig);
			return -1;
		}
		h->pending_sig = 0;
		nanosleep(&ts, NULL);
		h->stopped_at = now_ms();
		if (stop_thread(h) < 0)
			return -1;
	}
	h->sp = h->saved.rsp - 256;	/* below the red zone */
	return 0;
}

/* Thread TID's /proc status into BUF; -1 when it cannot be read. */
static int task_status(pid_t pid, pid_t tid, char *buf, size_t cap)
{
	char path[96];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	return read_small(path, buf, cap) < 0 ? -1 : 0;
}

/* The signal set FIELD (SigPnd, ShdPnd, SigBlk, SigIgn) of such a status
 * in *SET; 0 when it has none. */
static int status_sigset(const char *status, const char *field, unsigned long long *set)
{
	char key[16];
	const char *p;

	snprintf(key, sizeof(key), "\n%s:", field);
	return (p = strstr(status, key)) != NULL && sscanf(p + strlen(key), " %llx", set) == 1;
}

/* A signal that the thread would take, pending for it or for the
 * process: 1 when there is one (or it cannot be told). */
static int signal_waiting(pid_t pid, pid_t tid)
{
	char buf[8192];
	unsigned long long pnd, shd, blk;

	if (task_status(pid, tid, buf, sizeof(buf)) < 0 || !status_sigset(buf, "SigPnd", &pnd) ||
	    !status_sigset(buf, "ShdPnd", &shd) || !status_sigset(buf, "SigBlk", &blk))
		return 1;
	return ((pnd | shd) & ~blk) != 0;
}

/* May the held thread's calls return to an int3?  The SIGTRAP it raises
 * stops the thread for us at once (no stop at each system call of
 * dlopen() and the recorder: 2 to 5 stops in all instead of about 110,
 * each a wait for the scheduler on a busy machine), and is never
 * delivered.  Not when the thread blocks SIGTRAP or the process ignores
 * it: the kernel would then reset the program's handler for it to the
 * default before we see it.  Nor when it was stopped in a call that
 * waits with a mask of its own (ppoll, pselect, epoll_pwait,
 * sigsuspend): the mask it will run our calls with is not the one /proc
 * shows now.  The calls then return to a syscall instruction, stopped at
 * each system call (call()). */
static int may_trap(pid_t pid, const struct held *h)
{
	char buf[8192];
	unsigned long long blk, ign, bit = 1ULL << (SIGTRAP - 1);
	long nr = (long)h->saved.orig_rax;

	if (nr == SYS_rt_sigsuspend || nr == SYS_ppoll || nr == SYS_pselect6 || nr == SYS_epoll_pwait ||
#ifdef SYS_epoll_pwait2
	    nr == SYS_epoll_pwait2 ||
#endif
	    h->pending_sig)
		return 0;
	if (task_status(pid, h->tid, buf, sizeof(buf)) < 0 || !status_sigset(buf, "SigBlk", &blk) ||
	    !status_sigset(buf, "SigIgn", &ign))
		return 0;
	return !((blk | ign) & bit);
}

/* Put the registers back and let the thread go; a system call it was
 * stopped in is restarted as the kernel would have (see the top). */
static void release(struct held *h, pid_t pid)
{
	struct user_regs_struct r = h->saved;
	long rax = (long)r.rax;

	if (h->at_syscall_stop && (long)r.orig_rax >= 0) {
		/* -ERESTARTSYS, -ERESTARTNOINTR, -ERESTARTNOHAND: made again.
		 * And epoll_wait, sigtimedwait, io_getevents ... fail with EINTR
		 * when a stop interrupts them (signal(7)), where the program would
		 * have gone on waiting: when no signal of its own came, the EINTR
		 * is our stop's, and the call is made again too (its timeout
		 * whole: a few milliseconds more at most). */
		int again = rax == -512 || rax == -513 || rax == -514 ||
			    (rax == -EINTR && !h->pending_sig && !h->signalled &&
			     !signal_waiting(pid, h->tid));

		if (again || rax == -516) {
			r.rax = again ? r.orig_rax : SYS_restart_syscall;	/* -ERESTART_RESTARTBLOCK */
			r.rip -= 2;
		}
	}
	if (h->at_syscall_stop)
		r.orig_rax = (unsigned long)-1;
	ptrace(PTRACE_SETREGS, h->tid, 0, &r);
	if (h->boosted)
		setpriority(PRIO_PROCESS, (id_t)h->tid, h->nice);
	ptrace(PTRACE_DETACH, h->tid, 0, (void *)(long)h->pending_sig);
}

/* Call FN(A1, A2) in the held thread: 0 and its return value in *ret,
 * or -1 when the thread or the process died meanwhile.  The program's
 * signals that come meanwhile are delivered, inside the call. */
static int call(struct held *h, uintptr_t fn, uintptr_t a1, uintptr_t a2, uintptr_t *ret)
{
	struct user_regs_struct r = h->saved;
	uintptr_t sp = (h->sp & ~(uintptr_t)15) - 8;
	int status, sig = 0, entered = 0;
	double said = now_ms();

	if (mem_write(sp, h->int3 ? &h->int3 : &h->trap, sizeof(h->trap)) < 0)
		return -1;
	r.rip = fn;
	r.rdi = a1;
	r.rsi = a2;
	r.rax = 0;
	r.rsp = sp;
	r.orig_rax = (unsigned long)-1;	/* no restart of what it was stopped in */
	if (ptrace(PTRACE_SETREGS, h->tid, 0, &r) < 0)
		return -1;
	for (;;) {
		if (ptrace(h->int3 ? PTRACE_CONT : PTRACE_SYSCALL, h->tid, 0, (void *)(long)sig) < 0 ||
		    wait_stop(h->tid, &status) < 0)
			return -1;
		sig = 0;
		if (h->int3 && status >> 16 == 0 && WSTOPSIG(status) == SIGTRAP) {
			if (ptrace(PTRACE_GETREGS, h->tid, 0, &r) < 0)
				return -1;
			if (r.rip == h->int3 + 1 && r.rsp == sp + 8) {
				/* Ours: the SIGTRAP goes no further (the next resume
				 * passes no signal); the registers are put back as at
				 * the syscall stop of the other way. */
				*ret = r.rax;
				h->at_syscall_stop = 1;
				return 0;
			}
			sig = SIGTRAP;	/* the program's own */
			h->signalled = 1;
		} else if (WSTOPSIG(status) == (SIGTRAP | 0x80)) {
			if (ptrace(PTRACE_GETREGS, h->tid, 0, &r) < 0)
				return -1;
			if (r.rip != h->trap + 2 || r.rsp != sp + 8)
				continue;	/* a system call of the function's own */
			if (entered) {
				h->at_syscall_stop = 1;
				return 0;
			}
			entered = 1;
			*ret = r.orig_rax;	/* the function's result, taken as a number */
			r.orig_rax = SYS_getpid;
			if (ptrace(PTRACE_SETREGS, h->tid, 0, &r) < 0)
				return -1;
		} else if (status >> 16 == 0) {
			sig = WSTOPSIG(status);	/* the program's signal: delivered */
			h->signalled = 1;
		}
		if (now_ms() - said > 10000) {
			fprintf(stderr, "%s: thread %d has not come back from the call yet; waiting\n",
				progname, (int)h->tid);
			said = now_ms();
		}
	}
}

/* A string into the target's stack, below what is used already. */
static uintptr_t push_string(struct held *h, const char *s)
{
	size_t len = strlen(s) + 1;

	h->sp = (h->sp - len) & ~(uintptr_t)15;
	return mem_write(h->sp, s, len) < 0 ? 0 : h->sp;
}

/* ---- refusals --------------------------------------------------------- */

static int say_seize_refused(pid_t pid, int err)
{
	char buf[16];
	long tracer = status_field(pid, "TracerPid:");
	int scope = read_small("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof(buf)) > 0 ? atoi(buf) : -1;

	if (err == ESRCH) {
		SAY("%s: process %d is gone\n", progname, (int)pid);
	} else if (tracer > 0) {
		SAY("%s: process %d is already traced by process %ld (a debugger, strace?): "
			"the kernel allows one tracer at a time\n", progname, (int)pid, tracer);
	} else if (err == EPERM && scope == 3) {
		SAY("%s: the kernel refuses to let any process be traced "
			"(/proc/sys/kernel/yama/ptrace_scope is 3)\n", progname);
	} else if (err == EPERM && scope >= 1 && geteuid() != 0) {
		SAY("%s: the kernel refuses to let process %d be traced "
			"(/proc/sys/kernel/yama/ptrace_scope is %d: only %s may); run as root\n",
			progname, (int)pid, scope, scope == 1 ? "its ancestors or root" : "root");
	} else {
		SAY("%s: cannot trace process %d: %s (run as its user or as root)\n",
			progname, (int)pid, strerror(err));
	}
	return ATTACH_FAILED;
}

/* Are all the process's user ids ours (/proc/PID/status is readable
 * whatever its dumpability)? */
static int same_user(pid_t pid)
{
	char path[64], buf[8192], *p;
	unsigned long id[4];
	uid_t me = geteuid();

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_small(path, buf, sizeof(buf)) < 0 || (p = strstr(buf, "\nUid:")) == NULL ||
	    sscanf(p, "\nUid: %lu %lu %lu %lu", &id[0], &id[1], &id[2], &id[3]) != 4)
		return 0;
	return id[0] == me && id[1] == me && id[2] == me;
}

/* Everything that can be told before stopping anything; 0 or
 * ATTACH_FAILED after saying why. */
static int look_at(pid_t pid, int seccomp_ok, struct ranges *r)
{
	char path[64], exe[PATH_MAX];
	long tracer, seccomp;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (kill(pid, 0) < 0 && errno == ESRCH) {
		SAY("%s: no process %d\n", progname, (int)pid);
		return ATTACH_FAILED;
	}
	if (pid == getpid()) {
		SAY("%s: process %d is this one\n", progname, (int)pid);
		return ATTACH_FAILED;
	}
	if ((n = readlink(path, exe, sizeof(exe) - 1)) < 0) {
		int err = errno;

		if (err == EACCES && geteuid() != 0 && same_user(pid))
			SAY("%s: process %d is not dumpable (it changed its user or group ids, "
				"or called prctl(PR_SET_DUMPABLE, 0)): the kernel lets only root "
				"look into it and trace it\n", progname, (int)pid);
		else
			SAY("%s: cannot look into process %d: %s (run as its user or as root)\n",
				progname, (int)pid, strerror(err));
		return ATTACH_FAILED;
	}
	exe[n] = '\0';
	{
		Elf64_Ehdr eh;
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		int ok = fd >= 0 && pread(fd, &eh, sizeof(eh), 0) == sizeof(eh) &&
			 eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_machine == EM_X86_64;

		if (fd >= 0)
			close(fd);
		if (fd >= 0 && !ok) {
			SAY("%s: process %d (%s) is not an x86-64 program: not supported\n",
				progname, (int)pid, exe);
			return ATTACH_FAILED;
		}
	}
	if ((tracer = status_field(pid, "TracerPid:")) > 0) {
		SAY("%s: process %d is already traced by process %ld (a debugger, strace?): "
			"the kernel allows one tracer at a time\n", progname, (int)pid, tracer);
		return ATTACH_FAILED;
	}
	seccomp = status_field(pid, "Seccomp:");
	if (seccomp == 1 || (seccomp == 2 && !seccomp_ok)) {
		SAY("%s: process %d runs under %s: a system call the recorder makes "
			"could kill it%s\n", progname, (int)pid,
			seccomp == 1 ? "seccomp's strict mode" : "a seccomp filter",
			seccomp == 1 ? "" : " (--seccomp to attach all the same)");
		return ATTACH_FAILED;
	}
	r->pid = pid;
	if (find_object(pid, is_libc, &r->libc) < 0) {
		SAY("%s: process %d (%s) has no libc.so loaded (a static program?): "
			"nothing in it can load the recorder\n", progname, (int)pid, exe);
		return ATTACH_FAILED;
	}
	find_object(pid, is_loader, &r->loader);
	find_object(pid, is_recorder, &r->recorder);
	return 0;
}

/* ---- the attacher ------------------------------------------------------ */

struct request {
	pid_t pid;
	int detach;		/* no library loaded: it must be there */
	const char *entry;	/* the recorder's function to call */
	const char *lib;	/* attach: libmtrec.so to load, absolute */
	char config[8192];	/* attach: mtrec_attach's settings */
	int seccomp_ok;
};

/* Calls the kernel restarts unseen after a ptrace stop (poll, nanosleep,
 * read ...), where epoll_wait and sigtimedwait return EINTR to the
 * program (signal(7)): those are used last. */
static int restarts_unseen(long nr)
{
	return nr != SYS_epoll_wait && nr != SYS_epoll_pwait && nr != SYS_rt_sigtimedwait &&
#ifdef SYS_epoll_pwait2
	       nr != SYS_epoll_pwait2 &&
#endif
	       nr != SYS_io_getevents && nr != SYS_msgrcv;
}

/* Hold a thread at a safe point: those waiting in a system call first
 * (one the kernel restarts unseen before the others), then each in turn,
 * let run and stopped again until it is outside libc. */
static int choose(pid_t pid, const struct ranges *r, struct held *h)
{
	pid_t tids[4096];
	int n = list_threads(pid, tids, 4096), err = 0;

	if (n <= 0)
		return -1;
	for (int pass = 0; pass < 3; pass++)
		for (int i = 0; i < n; i++) {
			long nr = proc_syscall(pid, tids[i]);
			int waits = waits_outside(nr) || nr == SYS_restart_syscall;

			if ((pass == 0 && (!waits || !restarts_unseen(nr))) ||
			    (pass == 1 && (!waits || restarts_unseen(nr))))
				continue;
			if (hold_thread(tids[i], nr, r, h, pass < 2 ? 0 : 400) == 0)
				return 0;
			if (errno == EPERM || errno == ESRCH)
				err = errno;
			if (err == EPERM)
				break;
		}
	errno = err ? err : EAGAIN;
	return -1;
}

static int inject(struct request *q, struct ranges *r)
{
	char path[64], text[600];
	struct held h;
	uintptr_t dlopen_fn, dlerror_fn, entry, trap, int3, arg = 0, ret = 0, handle = 0;
	struct object rec;
	int code = ATTACH_FAILED;

	dlopen_fn = object_symbol(q->pid, &r->libc, "dlopen");
	dlerror_fn = object_symbol(q->pid, &r->libc, "dlerror");
	if (!q->detach && !r->recorder.found && !dlopen_fn) {
		SAY("%s: process %d's libc (%s) has no dlopen (glibc before 2.34?): "
			"cannot load the recorder into it\n", progname, (int)q->pid, r->libc.path);
		return ATTACH_FAILED;
	}
	int3 = find_code(q->pid, &r->libc, (const unsigned char *)"\xcc", 1);
	if ((trap = find_code(q->pid, &r->libc, (const unsigned char *)"\x0f\x05", 2)) == 0) {
		SAY("%s: no system call instruction found in %s\n", progname, r->libc.path);
		return ATTACH_FAILED;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)q->pid);
	if (setpriority(PRIO_PROCESS, 0, -20) < 0)
		errno = 0;	/* not allowed: at our own */
	if (choose(q->pid, r, &h) < 0) {
		if (errno == EAGAIN)
			SAY("%s: no thread of process %d came out of libc or the dynamic "
				"linker to a safe point; try again\n", progname, (int)q->pid);
		else
			say_seize_refused(q->pid, errno);
		return ATTACH_FAILED;
	}
	h.trap = trap;
	/* On a busy machine the hold is mostly waits for a processor, the
	 * held thread's (it runs dlopen()) and ours: both get the highest
	 * nice value while it lasts, when we may (root, CAP_SYS_NICE); the
	 * thread's own is put back at the release. */
	errno = 0;
	h.nice = getpriority(PRIO_PROCESS, (id_t)h.tid);
	h.boosted = errno == 0 && h.nice > -20 && setpriority(PRIO_PROCESS, (id_t)h.tid, -20) == 0;
	h.int3 = int3 && may_trap(q->pid, &h) ? int3 : 0;
	if ((mem_fd = open(path, O_RDWR | O_CLOEXEC)) < 0) {
		SAY("%s: cannot open %s: %s\n", progname, path, strerror(errno));
		release(&h, q->pid);
		return ATTACH_FAILED;
	}
	if (!r->recorder.found) {
		uintptr_t lib = q->lib ? push_string(&h, q->lib) : 0;

		if (!lib || call(&h, dlopen_fn, lib, RTLD_NOW | RTLD_NODELETE, &handle) < 0)
			goto gone;
		if (!handle) {
			if (dlerror_fn && call(&h, dlerror_fn, 0, 0, &ret) == 0)
				mem_string(ret, text, sizeof(text));
			else
				snprintf(text, sizeof(text), "(no reason given)");
			SAY("%s: process %d could not load %s: %s\n", progname, (int)q->pid,
				q->lib, text);
			goto done;
		}
		if (find_object(q->pid, is_recorder, &r->recorder) < 0) {
			SAY("%s: %s was loaded but is not in process %d's maps\n", progname,
				q->lib, (int)q->pid);
			goto done;
		}
	}
	rec = r->recorder;
	entry = object_symbol(q->pid, &rec, q->entry);
	if (!entry) {
		SAY("%s: %s in process %d has no %s (an older recorder?)\n", progname,
			rec.path, (int)q->pid, q->entry);
		goto done;
	}
	if (q->config[0] && (arg = push_string(&h, q->config)) == 0)
		goto gone;
	if (call(&h, entry, arg, 0, &ret) < 0)
		goto gone;
	mem_string(ret, text, sizeof(text));
	release(&h, q->pid);
	close(mem_fd);
	if (strncmp(text, "ok ", 3) != 0) {
		SAY("%s: process %d: %s\n", progname, (int)q->pid,
			strncmp(text, "no ", 3) == 0 ? text + 3 : "the recorder gave no answer");
		return ATTACH_FAILED;
	}
	if (!quiet)
		printf("%s: process %d: %s; thread %d was held %.1f ms, the others ran on\n", progname,
	       (int)q->pid, text + 3, (int)h.tid, now_ms() - h.stopped_at);
	return ATTACH_OK;
done:
	release(&h, q->pid);
	close(mem_fd);
	return code;
gone:
	SAY("%s: process %d (or its thread %d) went away during the attach\n", progname,
		(int)q->pid, (int)h.tid);
	ptrace(PTRACE_DETACH, h.tid, 0, 0);
	close(mem_fd);
	return ATTACH_FAILED;
}

static int parse_pid(const char *s, pid_t *pid)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v <= 0 || v > INT32_MAX)
		return -1;
	*pid = (pid_t)v;
	return 0;
}

static int add_setting(struct request *q, const char *name, const char *value)
{
	size_t len = strlen(q->config);
	int n = snprintf(q->config + len, sizeof(q->config) - len, "%s=%s\n", name, value);

	if (strchr(value, '\n') || n < 0 || (size_t)n >= sizeof(q->config) - len) {
		SAY("%s: %s: the value is too long or holds a line break\n", progname, name);
		return -1;
	}
	return 0;
}

/* The process's name, for the default trace name. */
static void comm_of(pid_t pid, char *out, size_t cap)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (read_small(path, out, cap) <= 0)
		snprintf(out, cap, "process");
	out[strcspn(out, "\n/")] = '\0';
}

int mtrec_attach_main(int argc, char **argv, const char *lib)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "depth", required_argument, NULL, 'd' },
		{ "track", required_argument, NULL, 't' },
		{ "reach", no_argument, NULL, 'r' },
		{ "seccomp", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct request q;
	const char *output = NULL, *depth = NULL, *track = NULL;
	char pattern[PATH_MAX + 128], cwd[PATH_MAX - 128], comm[64], libpath[PATH_MAX];
	struct ranges r;
	int c, reach = 0, ret;

	q.detach = strcmp(argv[0], "detach") == 0;
	q.entry = q.detach ? "mtrec_detach" : "mtrec_attach";
	/* The recorder runs in it already: its seccomp filter was accepted at
	 * the attach (--seccomp), and the detach makes no call the recording
	 * did not. */
	q.seccomp_ok = q.detach;
	optind = 1;
	opterr = 0;	/* said below, with a suggestion */
	while ((c = getopt_long(argc, argv, q.detach ? "h" : "+o:d:t:rh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 'd': depth = optarg; break;
		case 't': track = optarg; break;
		case 'r': reach = 1; break;
		case 'S': q.seccomp_ok = 1; break;
		case 'h': attach_usage(stdout); return 0;
		default:
			mtrec_bad_option(argv[0], q.detach ? "" : "odt", argv[optind - 1], longopts);
			fprintf(stderr, "Try '%s %s --help' for more information.\n", progname, argv[0]);
			return ATTACH_USAGE;
		}
	}
	if (optind != argc - 1 || parse_pid(argv[optind], &q.pid) < 0) {
		fprintf(stderr, "%s: %s: one process id expected\n", progname, argv[0]);
		fprintf(stderr, "Try '%s %s --help' for more information.\n", progname, argv[0]);
		return ATTACH_USAGE;
	}
	if (depth && (atoi(depth) < 1 || atoi(depth) > 64)) {
		fprintf(stderr, "%s: --depth: a number from 1 to 64 expected, not '%s'\n", progname, depth);
		return ATTACH_USAGE;
	}
	if ((ret = look_at(q.pid, q.seccomp_ok, &r)) != 0)
		return ret;
	if (q.detach && !r.recorder.found) {
		fprintf(stderr, "%s: process %d does not run the recorder (libmtrec.so is not "
			"loaded in it)\n", progname, (int)q.pid);
		return ATTACH_FAILED;
	}
	if (!q.detach) {
		if (!realpath(lib, libpath)) {
			fprintf(stderr, "%s: %s: %s\n", progname, lib, strerror(errno));
			return ATTACH_FAILED;
		}
		q.lib = libpath;
		comm_of(q.pid, comm, sizeof(comm));
		if (!getcwd(cwd, sizeof(cwd)))
			snprintf(cwd, sizeof(cwd), "/tmp");
		if (output && output[0] == '/')
			snprintf(pattern, sizeof(pattern), "%s", output);
		else if (output)
			snprintf(pattern, sizeof(pattern), "%s/%s", cwd, output);
		else
			snprintf(pattern, sizeof(pattern), "%s/mtrec.%s.%%p.log", cwd, comm);
		if (add_setting(&q, "MALLOC_TRACE", pattern) < 0 || add_setting(&q, "MTREC_SCOPED", "1") < 0 ||
		    (depth && add_setting(&q, "MTREC_DEPTH", depth) < 0) ||
		    (track && add_setting(&q, "MTREC_TRACK", track) < 0) ||
		    (reach && add_setting(&q, "MTREC_REACH", "1") < 0))
			return ATTACH_USAGE;
	}
	return inject(&q, &r);
}

int mtrec_attach_kick(long pid)
{
	static struct request q;
	struct ranges r;
	int ret;

	quiet = 1;
	memset(&q, 0, sizeof(q));
	q.pid = (pid_t)pid;
	q.detach = 1;
	q.entry = "mtrec_ctl_now";
	ret = look_at(q.pid, 1, &r) == 0 && r.recorder.found ? inject(&q, &r) : ATTACH_FAILED;
	quiet = 0;
	return ret == ATTACH_OK ? 0 : -1;
}

#else

int mtrec_attach_kick(long pid)
{
	(void)pid;
	return -1;
}

int mtrec_attach_main(int argc, char **argv, const char *lib)
{
	(void)argc, (void)lib;
	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		attach_usage(stdout);
		return 0;
	}
	fprintf(stderr, "%s: %s is only supported on x86-64 for now\n", progname, argv[0]);
	return ATTACH_FAILED;
}

#endif
