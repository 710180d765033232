/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* file-bus.c -- SIGBUS: the trace file shrank under its mapping (another
 * process truncated it).  The fault of a write into the lost range is
 * taken: the range becomes anonymous memory, the write is retried there,
 * and the recorder stops at its next slow path (file.c asks
 * mtrec_file_lost()); any other SIGBUS is the program's, whose action
 * runs as if we were not there.
 */
#include <signal.h>
#include <string.h>
#include <sys/mman.h>

#include "file-bus.h"
#include "file.h"

#define ALIGN_2M ((size_t)2 << 20)

static mtrec_sigaction_fn real_sigaction;
static struct mtrec_file *file;		/* file.c's, given at init */
static struct sigaction program_bus;	/* the program's SIGBUS action */
static int bus_guarded;
static int mapping_lost;	/* the file shrank under the mapping */

static void chain_sigbus(int sig, siginfo_t *si, void *ctx);

static int in_mapping(const void *a)
{
	const char *base = file ? __atomic_load_n(&file->base, __ATOMIC_ACQUIRE) : NULL;

	return base && (const char *)a >= base && (const char *)a < base + file->maplen;
}

/* The file is shorter than the mapping: writes go to anonymous memory from
 * now on (nothing written reaches the file any more, and nothing faults);
 * the core stops at its next slow path.  0, or -1 when the memory could
 * not be had. */
int mtrec_bus_lose_mapping(void)
{
	size_t len = (__atomic_load_n(&file->size, __ATOMIC_ACQUIRE) + ALIGN_2M) & ~(ALIGN_2M - 1);

	if (len > file->maplen)
		len = file->maplen;
	if (mmap(file->base, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED)
		return -1;
	__atomic_store_n(&mapping_lost, 1, __ATOMIC_RELEASE);
	return 0;
}

static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
	/* The faulting write is retried in the new memory. */
	if (in_mapping(si->si_addr) && mtrec_bus_lose_mapping() == 0)
		return;
	chain_sigbus(sig, si, ctx);
}

/* Not ours: the program's action runs as if we were not there. */
static void chain_sigbus(int sig, siginfo_t *si, void *ctx)
{
	struct sigaction dfl;

	if (program_bus.sa_flags & SA_SIGINFO) {
		if (program_bus.sa_sigaction) {
			program_bus.sa_sigaction(sig, si, ctx);
			return;
		}
	} else if (program_bus.sa_handler != SIG_DFL && program_bus.sa_handler != SIG_IGN) {
		program_bus.sa_handler(sig);
		return;
	}
	/* As without us: the fault happens again, with the default action. */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	real_sigaction(SIGBUS, &dfl, NULL);
}

void mtrec_bus_guard(void)
{
	struct sigaction sa;

	if (bus_guarded)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (real_sigaction && real_sigaction(SIGBUS, &sa, &program_bus) == 0)
		bus_guarded = 1;
}

int mtrec_file_bus_action(const struct sigaction *act, struct sigaction *old)
{
	if (!bus_guarded)
		return 0;
	if (old)
		*old = program_bus;
	if (act)
		program_bus = *act;
	return 1;
}

int mtrec_file_lost(void)
{
	return __atomic_load_n(&mapping_lost, __ATOMIC_ACQUIRE);
}

void mtrec_bus_init(mtrec_sigaction_fn sa, struct mtrec_file *f)
{
	real_sigaction = sa;
	file = f;
}

void mtrec_bus_fork_child(void)
{
	mapping_lost = 0;
}
