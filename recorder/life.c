/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* life.c -- the recorder's process life: start-up, the session
 * (which process owns the trace's name), scoping (trace_on, trace_off,
 * trace_mark, the MTREC_SIGNAL toggle), fork, and exit.
 *
 * It sits above the event layer and the chunk writer and tells the latter,
 * through struct mtrec_life_hooks, what only it can do on their slow
 * paths: make a child of a process forked without handlers, open a forked
 * child's trace at its first event, act on a toggle that arrived inside
 * the recorder.
 *
 * Stopping.  When recording must stop for good (full disk, a size limit,
 * the file truncated or gone), the recorder says so once on stderr and in
 * the trace ("# stopped WHY", chunk.c), keeps counting the events it
 * no longer writes, and at exit writes "# lost N ..." and "= End"
 * (file.c keeps room for these lines). */
#include "chunk.h"
#include "control.h"
#include "events.h"
#include "file.h"
#include "got.h"
#include "reach.h"
#include "lock.h"
#include "rec.h"
#include "tables.h"
#include "unwind.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
extern void __libc_freeres(void);

int mtrec_recording;
__thread int mtrec_busy;

/* Settings read once at start. */
static struct {
	int depth;		/* MTREC_DEPTH: frames per stack, 1 = caller only */
	int scoped;		/* MTREC_SCOPED: wait for trace_on() */
	int freeres;		/* MTREC_FREERES: call __libc_freeres at exit */
	int patch;		/* MTREC_PATCH: 0 off, 1 on, 2 say what was patched */
	int reach;		/* MTREC_REACH: the live blocks' verdicts at exit */
} settings = { .depth = 1, .freeres = 1, .patch = 1 };

static struct {
	int enabled;		/* MALLOC_TRACE is set */
	int first;		/* first process of the session: owns the name */
	int opened, ended;
	int refused;		/* the session's path was refused: no child records */
	int forked;		/* a child made by fork: no trace of its own yet */
	int child_start;	/* ... and it should start recording at once */
	mtrec_sigaction_fn real_sigaction;
	pthread_mutex_t lock;	/* start, stop, mark, open, exit */
} g = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- the process header ----------------------------------------------- */

/* Made once when the trace is opened: each part of a rotated trace starts
 * with it again. */
static char header_text[8192];
static size_t header_len;

/* Read a small /proc file into buf; its length. */
static size_t read_small(const char *path, char *buf, size_t cap)
{
	int fd = prim_open(path, O_RDONLY | O_CLOEXEC, 0);
	ssize_t n = fd < 0 ? -1 : prim_read(fd, buf, cap);

	if (fd >= 0)
		prim_close(fd);
	return n > 0 ? (size_t)n : 0;
}

/* "# KEY VALUE\n" into o, with newlines in VALUE made spaces. */
static char *put_keyed(char *o, char *lim, enum mtrec_word w, const char *val, size_t len)
{
	o = prim_puts(o, lim, mtrec_word(w));
	for (size_t i = 0; i < len && o < lim; i++)
		*o++ = prim_flat(val[i]);
	return prim_puts(o, lim, "\n");
}

/* ---- lineage: fork marks and the child's "# parent" line -------------- */

/* A forked child starts with the parent's heap: its trace names the
 * parent's trace and the "# fork MARK" line the parent wrote at the fork,
 * so that an analysis can start the child from the blocks live there
 * (share/trace-format.md).  The parent writes the mark in a prepare
 * handler, in order with its events, with room for the child's pid,
 * which the child writes in through the shared mapping before it lets go
 * of the parent's file: no handler of the parent learns the pid (daemon(3)
 * forks inside libc, where no wrapper sees the return value). */
#define PID_WIDTH 10		/* digits of the largest pid_t */

static struct {
	pid_t pid;		/* the parent (0: not a forked child, or no mark) */
	unsigned long mark;	/* its "# fork MARK" */
	char path[4096];	/* part 1 of its trace */
} lineage;

static unsigned long forks_marked;	/* marks written in this process */
/* The forking thread's mark, between the prepare handler and the child
 * (thread-local: two threads may fork at once; a child is a copy of the
 * thread that forked). */
static __thread unsigned long fork_mark;
static __thread char *fork_pid_field;

static char *put_parent(char *o, char *lim)
{
	if (!lineage.mark)
		return o;
	o = prim_puts(o, lim, mtrec_word(MTREC_W_PARENT));
	o = prim_putu(o, lim, (unsigned long)lineage.pid);
	o = prim_puts(o, lim, " ");
	o = prim_putu(o, lim, lineage.mark);
	o = prim_puts(o, lim, " ");
	for (const char *c = lineage.path; *c && o < lim; c++)
		*o++ = prim_flat(*c);
	return prim_puts(o, lim, "\n");
}

/* mtrec attach: how many times this process was attached (0: preloaded). */
static unsigned long attaches;

/* "# attached N REST": the program ran without the recorder before this
 * line; a forked child's header and each part's carry it too. */
static char *put_attached(char *o, char *lim, unsigned long n)
{
	o = prim_puts(o, lim, mtrec_word(MTREC_W_ATTACHED));
	o = prim_putu(o, lim, n);
	return prim_puts(o, lim, " by mtrec attach: blocks allocated before this line are not in the trace\n");
}

/* "# pid" to "# depth", and "# parent" in a forked child. */
static void build_header(void)
{
	/* Under the life lock; off the stack, as a forked child makes its
	 * header in its first malloc call. */
	static char buf[4096];
	char *o = header_text, *lim = header_text + sizeof(header_text) - 1;
	struct timespec now;
	ssize_t n;

	o = prim_puts(o, lim, mtrec_word(MTREC_W_PID));
	o = prim_putu(o, lim, (unsigned long)getpid());
	o = prim_puts(o, lim, " ");
	o = prim_putu(o, lim, (unsigned long)getppid());
	o = prim_puts(o, lim, "\n");
	n = readlink("/proc/self/exe", buf, sizeof(buf));
	o = put_keyed(o, lim, MTREC_W_EXE, buf, n > 0 ? (size_t)n : 0);
	n = (ssize_t)read_small("/proc/self/cmdline", buf, sizeof(buf));
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	o = put_keyed(o, lim, MTREC_W_CMDLINE, buf, n > 0 ? (size_t)n : 0);
	clock_gettime(CLOCK_REALTIME, &now);
	o = prim_puts(o, lim, mtrec_word(MTREC_W_START));
	o = prim_putu(o, lim, (unsigned long)now.tv_sec);
	o = prim_puts(o, lim, ".");
	for (long d = 100000000; d >= 1 && o < lim; d /= 10)
		*o++ = (char)('0' + now.tv_nsec / d % 10);
	o = prim_puts(o, lim, "\n");
	o = prim_puts(o, lim, mtrec_word(MTREC_W_DEPTH));
	o = prim_putu(o, lim, (unsigned long)settings.depth);
	o = prim_puts(o, lim, "\n");
	o = put_parent(o, lim);
	if (attaches)
		o = put_attached(o, lim, attaches);
	header_len = (size_t)(o - header_text);
}

/* ---- scoping ---------------------------------------------------------- */

static void refuse_session(void);

static int open_trace(void)
{
	struct mtrec_file_err e = { NULL, 0 };

	if (g.opened)
		return 0;
	if (mtrec_failed || mtrec_file_open(g.first, &e) < 0) {
		if (e.why)
			mtrec_give_up(e.why, e.err);
		mtrec_chunk_refuse();
		if (g.first)
			refuse_session();
		return -1;
	}
	g.opened = 1;
	build_header();
	mtrec_chunk_begin(header_text, header_len);
	mtrec_chunk_text(header_text, header_len);
	mtrec_objects_sync(mtrec_chunk_line);
	return 0;
}

static void start_locked(void)
{
	if (!g.enabled || g.ended || mtrec_recording || open_trace() < 0)
		return;
	mtrec_new_epoch();
	mtrec_chunk_time();
	mtrec_chunk_line("= Start", 7);
	__atomic_store_n(&mtrec_recording, 1, __ATOMIC_RELEASE);
}

static void stop_locked(void)
{
	/* A forked child that has not opened its file yet (trace_off() or
	 * mtrec ctl off before its first event): it never will. */
	if (g.child_start) {
		g.child_start = 0;
		__atomic_store_n(&mtrec_recording, 0, __ATOMIC_RELEASE);
		return;
	}
	if (!mtrec_recording)
		return;
	__atomic_store_n(&mtrec_recording, 0, __ATOMIC_RELEASE);
	mtrec_new_epoch();
	if (!mtrec_failed)
		mtrec_chunk_time();
	mtrec_chunk_line("= End", 5);
}

static void mark_locked(const char *label)
{
	if (mtrec_recording && !mtrec_failed) {
		mtrec_new_epoch();
		mtrec_chunk_keyed(MTREC_W_MARK, label, strlen(label));
	}
}

/* start, stop and mark from a signal handler that interrupted this very
 * thread inside one of them are dropped: the lock is its own. */
void mtrec_start(void)
{
	mtrec_enter();
	if (mtrec_lock(&g.lock, MTREC_LOCK_LIFE) == 0) {
		start_locked();
		mtrec_unlock(&g.lock, MTREC_LOCK_LIFE);
	}
	mtrec_leave();
}

/* Where a scan's lines go: one piece of the file (reach.h). */
static const struct mtrec_reach_out reach_out = {
	mtrec_chunk_region, mtrec_events_fence, mtrec_chunk_region_end, mtrec_chunk_text,
};

/* A stop that MTREC_REACH=2 wants a scan at: the scan first, in the
 * thread that stops recording, or, when REFUSED says why it cannot be
 * made, that reason in its place -- without a word the trace would end
 * on the latest scan's verdicts, or on none, as if nothing was asked. */
static void stop_scanned(const char *refused, size_t len)
{
	mtrec_enter();
	if (mtrec_lock(&g.lock, MTREC_LOCK_LIFE) == 0) {
		if (settings.reach > 1 && mtrec_recording && !mtrec_failed && !g.ended) {
			if (refused == NULL) {
				mtrec_reach_scan(&reach_out, 1);
			} else {
				mtrec_new_epoch();
				mtrec_chunk_keyed(MTREC_W_REACH, refused, len);
			}
		}
		stop_locked();
		mtrec_unlock(&g.lock, MTREC_LOCK_LIFE);
	}
	mtrec_leave();
}

/* trace_off(), muntrace(), mtrec ctl PID off. */
void mtrec_stop_asked(void)
{
	stop_scanned(NULL, 0);
}

void mtrec_mark(const char *label)
{
	mtrec_enter();
	if (mtrec_lock(&g.lock, MTREC_LOCK_LIFE) == 0) {
		mark_locked(label);
		mtrec_unlock(&g.lock, MTREC_LOCK_LIFE);
	}
	mtrec_leave();
}

void mtrec_forget_callers(void)
{
	mtrec_caller_reset();
	mtrec_unwind_flush();
}

/* ---- mtrec attach, mtrec detach ---------------------------------------- */

const char *mtrec_attach_begin(void)
{
	static char why[256];
	const char *ret = NULL;
	char line[160], *o;

	if (!g.enabled)
		return "the recorder could not start (no trace name, or no memory for it)";
	mtrec_enter();
	if (mtrec_lock(&g.lock, MTREC_LOCK_LIFE) < 0) {
		mtrec_leave();
		return "the recorder is busy in this thread";
	}
	attaches++;
	if (g.opened && !g.ended && !mtrec_recording && !mtrec_failed) {
		o = put_attached(line, line + sizeof(line) - 1, attaches);
		mtrec_new_epoch();
		mtrec_chunk_line(line, (size_t)(o - line) - 1);
	}
	start_locked();
	if (!mtrec_recording) {
		attaches--;
		o = prim_puts(why, why + sizeof(why) - 1, mtrec_failed || g.refused
			      ? "cannot write the trace '" : "cannot start recording into '");
		o = prim_puts(o, why + sizeof(why) - 1, mtrec_file_pattern());
		o = prim_puts(o, why + sizeof(why) - 1, "' (the program's standard error says why)");
		*o = '\0';
		ret = why;
	}
	mtrec_unlock(&g.lock, MTREC_LOCK_LIFE);
	mtrec_leave();
	return ret;
}

void mtrec_attach_end(void)
{
	char line[64], *o;

	mtrec_enter();
	if (mtrec_lock(&g.lock, MTREC_LOCK_LIFE) == 0) {
		if (settings.reach && mtrec_recording && !mtrec_failed && !g.ended)
			mtrec_reach_scan(&reach_out, 1);
		if (mtrec_recording && !mtrec_failed) {
			o = prim_puts(line, line + sizeof(line) - 1, mtrec_word(MTREC_W_DETACHED));
			o = prim_putu(o, line + sizeof(line) - 1, attaches);
			mtrec_new_epoch();
			mtrec_chunk_line(line, (size_t)(o - line));
		}
		stop_locked();
		mtrec_unlock(&g.lock, MTREC_LOCK_LIFE);
	}
	mtrec_leave();
}

const char *mtrec_attached_path(void)
{
	return g.opened ? mtrec_file_first_path() : mtrec_file_pattern();
}

/* ---- objects that bypass the preload ---------------------------------- */

/* MTREC_PATCH=verbose: "OBJECT: N call slots redirected, M of them bound
 * past the preload". */
static void say_patched(const char *object, unsigned slots, unsigned bound)
{
	char n[24], m[24];

	*prim_putu(n, n + sizeof(n) - 1, slots) = '\0';
	*prim_putu(m, m + sizeof(m) - 1, bound) = '\0';
	prim_say(object, ": ", n, slots == 1 ? " call slot redirected, " : " call slots redirected, ",
		 m, " of them bound past the preload", SAY_END);
}

/* MTREC_PATCH=0 leaves the malloc family's slots alone; the functions
 * MTREC_TRACK names are seen through their slots only, and keep them. */
int mtrec_redirect_init(struct mtrec_got_func *funcs, int n, int ntracked,
			const void *const *keep, int nkeep)
{
	if (!g.enabled || (!settings.patch && !ntracked))
		return 0;
	if (!settings.patch)
		funcs += n, n = 0;
	if (mtrec_got_init(funcs, n + ntracked, keep, nkeep,
			   settings.patch > 1 ? say_patched : NULL) < 0) {
		if (settings.patch > 1 || ntracked)
			prim_say(ntracked ? "MTREC_TRACK" : "MTREC_PATCH",
				 ": not supported on this architecture", SAY_END);
		return 0;
	}
	mtrec_got_sync(&(struct mtrec_got_report){ 0, 0, 0, 0, 0 });
	return 1;
}

void mtrec_loader_moved(void)
{
	struct mtrec_got_report r = { 0, 0, 0, 0, 0 };

	mtrec_got_sync(&r);
}

/* ---- the toggle signal (MTREC_SIGNAL) ---------------------------------- */

/* Each delivery starts or stops recording.  A signal that interrupts the
 * recorder itself (its locks or a half-written line) is acted on when the
 * recorder is next left (mtrec_defer). */
/* The toggle's stop makes no scan: the scan takes the dynamic linker's
 * lock to list the objects, and the handler may have interrupted it. */
#define TOGGLE_REFUSED "refused asked by the toggle signal (MTREC_SIGNAL), whose handler " \
	"may have interrupted the dynamic linker; mtrec ctl PID off scans"

static void toggle(void)
{
	if (__atomic_load_n(&mtrec_recording, __ATOMIC_ACQUIRE))
		stop_scanned(TOGGLE_REFUSED, sizeof(TOGGLE_REFUSED) - 1);
	else
		mtrec_start();
}

static void on_toggle_signal(int sig)
{
	int saved = errno;

	if (mtrec_depth || mtrec_held || mtrec_busy)
		mtrec_defer();
	else
		toggle();
	errno = saved;
}

/* "SIGUSR2", "USR2", "SIGRTMIN+3", "12": the signal number, or 0. */
static int parse_signal(const char *name)
{
	static const struct { const char *name; int sig; } known[] = {
		{ "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "HUP", SIGHUP },
		{ "WINCH", SIGWINCH }, { "URG", SIGURG }, { "PWR", SIGPWR },
	};
	char *end;
	long n;

	if (strncmp(name, "SIG", 3) == 0)
		name += 3;
	for (unsigned i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(name, known[i].name) == 0)
			return known[i].sig;
	if (strncmp(name, "RTMIN", 5) == 0) {
		n = name[5] ? strtol(name + 5, &end, 10) : 0;
		return (!name[5] || !*end) && SIGRTMIN + n <= SIGRTMAX && n >= 0 ? SIGRTMIN + (int)n : 0;
	}
	n = strtol(name, &end, 10);
	return !*end && n > 0 && n < NSIG ? (int)n : 0;
}

/* Installed from the constructor; a handler the program installs later
 * for the same signal simply replaces ours. */
void mtrec_install_signal(void)
{
	const char *name = prim_getenv("MTREC_SIGNAL");
	struct sigaction sa;
	int sig;

	if (!g.enabled || !name || !*name)
		return;
	if ((sig = parse_signal(name)) == 0) {
		prim_say_error("MTREC_SIGNAL: unknown signal '", name, "'", SAY_END);
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_toggle_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	g.real_sigaction(sig, &sa, NULL);
}

/* ---- mtrec ctl (control.h) ---------------------------------------------- */

/* mtrec ctl PID reach: the scan of MTREC_REACH now, in this thread, while
 * the others run (its lines in this thread's chunk); answered with the
 * blocks judged and the time it took. */
static void reach_now(struct mtrec_ctl_req *r, int recording)
{
	char text[96], *o = text, *lim = text + sizeof(text) - 1;
	uint64_t t0 = prim_monotonic_ns();
	size_t n = 0;
	int done = 0;

	if (!settings.reach) {
		mtrec_control_answer(r, 0, "MTREC_REACH was not set when the program started "
				     "(no table of live blocks to scan)");
		return;
	}
	if (!recording || mtrec_failed) {
		mtrec_control_answer(r, 0, mtrec_failed ? "recording stopped for good: no scan"
				     : "recording is off: no scan");
		return;
	}
	mtrec_enter();
	if (mtrec_lock(&g.lock, MTREC_LOCK_LIFE) == 0) {
		if (mtrec_recording && !mtrec_failed && !g.ended) {
			n = mtrec_reach_scan(&reach_out, 1);
			done = 1;
		}
		mtrec_unlock(&g.lock, MTREC_LOCK_LIFE);
	}
	mtrec_leave();
	if (!done) {
		mtrec_control_answer(r, 0, "recording stopped meanwhile: no scan");
		return;
	}
	o = prim_puts(o, lim, "scan written to the trace: ");
	o = prim_putu(o, lim, (unsigned long)n);
	o = prim_puts(o, lim, n == 1 ? " block judged in " : " blocks judged in ");
	o = prim_putu(o, lim, (unsigned long)((prim_monotonic_ns() - t0) / 1000000));
	o = prim_puts(o, lim, " ms");
	*o = '\0';
	mtrec_control_answer(r, 1, text);
}

static void act(struct mtrec_ctl_req *r)
{
	int was = __atomic_load_n(&mtrec_recording, __ATOMIC_ACQUIRE);

	switch (r->cmd) {
	case MTREC_CTL_ON:
		if (!was)
			mtrec_start();
		if (__atomic_load_n(&mtrec_recording, __ATOMIC_ACQUIRE))
			mtrec_control_answer(r, 1, was ? "recording was already on" : "recording on");
		else
			mtrec_control_answer(r, 0, mtrec_failed ? "recording stopped for good (see "
					     "the trace's \"# stopped\" line)" : "recording cannot start");
		break;
	case MTREC_CTL_OFF:
		if (was)
			mtrec_stop_asked();
		mtrec_control_answer(r, 1, was ? "recording off" : "recording was already off");
		break;
	case MTREC_CTL_MARK:
		if (was && !mtrec_failed) {
			mtrec_mark(r->label);
			mtrec_control_answer(r, 1, "mark written");
		} else {
			mtrec_control_answer(r, 0, "recording is off: mark not written");
		}
		break;
	case MTREC_CTL_REACH:
		reach_now(r, was);
		break;
	case MTREC_CTL_STATUS:
		mtrec_control_answer(r, 1, mtrec_failed ? "recording stopped for good"
				     : was ? "recording on" : "recording off");
		break;
	}
}

__thread int mtrec_ctl_countdown;

#define STRIDE_MAX 1024			/* calls between two looks at the clock */
#define STRIDE_MAX_RECORDING 16		/* the same while recording */
#define STRIDE_QUICK_NS 1000000ull	/* a thread that made them quicker doubles it */
#define STRIDE_SLOW_NS 10000000ull	/* one that made them slower starts again at 1 */

static uint64_t coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int ctl_taking;	/* a thread is taking a request (a try-lock) */

/* The request being taken lives here, not on the stack of the thread that
 * takes it: that is whoever called malloc, on a stack of any size
 * (control.c keeps its buffers for the same reason). */
static void take_request(void)
{
	static struct mtrec_ctl_req r;
	int free_ = 0;

	if (!__atomic_compare_exchange_n(&ctl_taking, &free_, 1, 0, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return;
	if (mtrec_control_take(&r))
		act(&r);
	__atomic_store_n(&ctl_taking, 0, __ATOMIC_RELEASE);
}

/* Each thread looks at the clock every stride calls: a stride that doubles
 * while its calls come quicker than STRIDE_QUICK_NS apart, so that a busy
 * thread pays for the clock once in up to STRIDE_MAX calls, and a thread
 * that is active at all looks at least every few milliseconds -- but only
 * as long as its calls come as quick as they did: a stride learnt in a
 * burst is counted out in the calls after it, however slow.  The same
 * look says when the trace's next "# time" line is due (chunk.c), in a
 * process that takes no requests too, so while recording the stride stops
 * at STRIDE_MAX_RECORDING: after a start-up's burst, a daemon's idle loop
 * (a call every 10 ms) would count out 1,024 calls between looks, and its
 * trace have a "# time" line only when a chunk fills, seconds apart.  A
 * recorded call costs about four looks (35 ns of CPU, a look 8), so a look
 * in 16 is lost in the noise (a look in 8 was 4%: 10 million malloc/free
 * pairs), and the first look after a burst comes at most 16 calls late.
 * When a look for a request is due, one thread looks (the one that moves the due time), the others go on.
 * Not from a signal handler that interrupted the recorder, nor in a child
 * made without fork handlers that is not yet a child of its own. */
void mtrec_control_poll(void)
{
	static __thread uint64_t last;
	static __thread int stride = 1;
	uint64_t due = __atomic_load_n(&mtrec_ctl_due, __ATOMIC_RELAXED), now;
	int max = mtrec_recording ? STRIDE_MAX_RECORDING : STRIDE_MAX;

	now = coarse_ns();
	if (now - last < STRIDE_QUICK_NS && stride < max)
		stride *= 2;
	else if (now - last > STRIDE_SLOW_NS)
		stride = 1;
	if (stride > max)
		stride = max;
	last = now;
	mtrec_ctl_countdown = stride - 1;
	if (mtrec_recording)
		mtrec_chunk_tick(now);
	/* due is UINT64_MAX when this process takes no requests */
	if (now < due || mtrec_depth || mtrec_held || mtrec_busy)
		return;
	if (!__atomic_compare_exchange_n(&mtrec_ctl_due, &due, now + MTREC_CONTROL_EVERY_NS, 0,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	if (mtrec_chunk_owner() != getpid())
		return;
	mtrec_chunk_watch(now);		/* a trace removed: said within 100 ms */
	take_request();
}

int mtrec_control_now(void)
{
	struct mtrec_ctl_req r;

	if (__atomic_load_n(&mtrec_ctl_due, __ATOMIC_RELAXED) == UINT64_MAX ||
	    mtrec_depth || mtrec_held || mtrec_busy || mtrec_chunk_owner() != getpid())
		return 0;
	if (!mtrec_control_take(&r))
		return 0;
	act(&r);
	return 1;
}

/* ---- trouble ------------------------------------------------------------ */

/* The program got no memory: under RLIMIT_AS, the trace's reservation may
 * be what it lacks.  Stop recording and give the reservation back; 1 when
 * the program should try again.  MTREC_REACH's reservation for its table
 * goes first, recording going on (reach-table.c). */
int mtrec_out_of_memory(size_t size)
{
	int again = mtrec_reach_release();

	if (!g.opened || !mtrec_file.maplen || size > mtrec_file.maplen)
		return again;
	mtrec_enter();
	mtrec_give_up("the program ran out of address space (ulimit -v); "
		      "the recorder gave its reservation back", 0);
	again |= mtrec_file_release();
	mtrec_leave();
	return again;
}

int mtrec_sigbus_action(const struct sigaction *act, struct sigaction *old)
{
	return mtrec_file_bus_action(act, old);
}

/* ---- start-up ----------------------------------------------------------- */

static int env_int(const char *name, int dflt)
{
	const char *v = prim_getenv(name);

	return v && *v ? atoi(v) : dflt;
}

/* MTREC_PATCH: "0" off, "verbose" (or 2) says what it patched; else on. */
static int parse_patch(const char *v)
{
	if (v && strcmp(v, "0") == 0)
		return 0;
	if (v && (strcmp(v, "verbose") == 0 || strcmp(v, "2") == 0))
		return 2;
	return 1;
}

static void child_begin(void);
static int child_first_event(void);

static const struct mtrec_life_hooks hooks = {
	.new_process = child_begin,
	.attached = child_first_event,
	.deferred = toggle,
};

/* The session marker tells an exec'd program that it is not the first
 * process and must not take the trace file's name, and which absolute name
 * pattern the session uses (see file.c). */
static char session_env[4096 + 16] = "MTREC_SESSION=";

void mtrec_init(mtrec_sigaction_fn real_sigaction)
{
	const char *trace = prim_getenv("MALLOC_TRACE");
	const char *session = prim_getenv("MTREC_SESSION");

	settings.depth = env_int("MTREC_DEPTH", 1);
	if (settings.depth < 1)
		settings.depth = 1;
	if (settings.depth > 64)
		settings.depth = 64;
	settings.scoped = env_int("MTREC_SCOPED", 0);
	settings.freeres = env_int("MTREC_FREERES", 1);
	settings.patch = parse_patch(prim_getenv("MTREC_PATCH"));
	settings.reach = env_int("MTREC_REACH", 0);
	prim_quiet = env_int("MTREC_QUIET", 0);
	g.real_sigaction = real_sigaction;
	mtrec_chunk_set_hooks(&hooks);
	if (!trace || !*trace)
		return;		/* like glibc: no MALLOC_TRACE, no trace */
	/* The session's first process refused the name and said so: its
	 * children do not write beside a device, a FIFO or a directory. */
	if (session && strcmp(session, "-") == 0)
		return;
	g.first = session == NULL;
	mtrec_file_init(session, real_sigaction);
	if (mtrec_chunk_init() < 0 || mtrec_events_init(settings.depth) < 0) {
		prim_say("cannot map memory for the recorder; not recording", SAY_END);
		return;
	}
	if (settings.reach) {
		if (mtrec_reach_init() == 0)
			mtrec_events_reach();
		else
			prim_say("MTREC_REACH: cannot map memory for the table of live blocks; "
				 "no scan at exit", SAY_END);
	}
	g.enabled = 1;
	mtrec_control_init();
	if (!settings.scoped)
		mtrec_start();
}

/* Called from the library constructor, outside any libc call.  Only
 * libc's putenv will do: a program's own (bash's keeps its shell
 * variables with it) would run before the program's main, its
 * allocations hidden from the trace -- bash's variable table then showed
 * as lost at exit.  Without it the session is not passed on. */
void mtrec_mark_session(int (*libc_putenv)(char *))
{
	char *o;

	if (!g.enabled || !g.first || !libc_putenv)
		return;
	o = prim_puts(session_env + 14, session_env + sizeof(session_env) - 1,
		      g.refused ? "-" : mtrec_file_pattern());
	*o = '\0';
	/* putenv() grows libc's environ array with malloc: that block is ours,
	 * not the program's, and is left out of the trace until the program
	 * itself reallocates it. */
	mtrec_busy = 1;
	libc_putenv(session_env);
	mtrec_busy = 0;
	mtrec_events_hide(environ);
}

/* The session's path was refused (a device, a FIFO, a directory, no
 * such directory): the processes it starts record nothing either.  The
 * environment string is ours (putenv), so a later refusal edits it. */
static void refuse_session(void)
{
	g.refused = 1;
	if (session_env[14])
		memcpy(session_env + 14, "-", 2);
}

/* ---- exit --------------------------------------------------------------- */

/* libc's private buffers are freed while still recording, so that they
 * are not reported as leaks (as glibc's mtrace and valgrind do), but only
 * when no other thread can still use them: __libc_freeres() frees stdio
 * buffers and locale data under threads that may be using them (a crash
 * at exit in most runs of a program that exits with threads in printf or
 * localtime).  Not in a forked child: most of what it would free was
 * allocated by the parent before the fork, and would show as frees of
 * memory never allocated in the child's trace.  What happened, for the
 * "# freeres" line. */
static const char *release_libc_caches(char *buf, size_t cap)
{
	char *o;
	int n;

	if (!settings.freeres)
		return "skipped: MTREC_FREERES=0";
	if (g.forked)
		return "skipped: a forked child";
	/* A thread just joined can still be in /proc/self/task for a moment
	 * (pthread_join returns when the kernel clears its tid, before the
	 * task is gone): look again for up to 20 ms before deciding. */
	for (int tries = 0; (n = prim_count_threads()) > 1 && tries < 20; tries++)
		syscall(SYS_nanosleep, &(struct timespec){ 0, 1000000 }, NULL);
	if (n == 1) {
		__libc_freeres();
		return "done";
	}
	if (n < 1)
		return "skipped: the threads cannot be counted (no /proc)";
	o = prim_puts(buf, buf + cap - 1, "skipped: ");
	o = prim_putu(o, buf + cap - 1, (unsigned long)(n - 1));
	o = prim_puts(o, buf + cap - 1, n == 2 ? " other thread running" : " other threads running");
	*o = '\0';
	return buf;
}

/* "# lost N REST" for the events counted instead of written. */
static void say_lost(void)
{
	unsigned long stopped_n, nested_n;
	char line[128], *o;
	size_t len;

	mtrec_chunk_lost(&stopped_n, &nested_n);
	if (mtrec_failed) {
		o = prim_puts(line, line + sizeof(line), mtrec_word(MTREC_W_LOST));
		o = prim_putu(o, line + sizeof(line), stopped_n);
		o = prim_puts(o, line + sizeof(line) - 1, " events after recording stopped\n");
		mtrec_file_note(line, (size_t)(o - line));
	}
	if (nested_n == 0)
		return;
	o = prim_putu(line, line + sizeof(line), nested_n);
	o = prim_puts(o, line + sizeof(line) - 1, " events in signal handlers that the recorder could not write");
	len = (size_t)(o - line);
	if (mtrec_failed) {
		*o++ = '\n';
		mtrec_file_note(mtrec_word(MTREC_W_LOST), mtrec_word_len(MTREC_W_LOST));
		mtrec_file_note(line, len + 1);
	} else {
		mtrec_chunk_keyed(MTREC_W_LOST, line, len);
	}
}

/* Threads still inside the recorder when the exit had waited for them
 * long enough (stopped, or blocked in a signal handler that interrupted
 * them there): the event each was writing may be cut or missing. */
static void say_unfinished(unsigned threads)
{
	char line[160], *o, *lim = line + sizeof(line) - 1;

	if (threads == 0)
		return;
	o = prim_putu(line, lim, threads);
	o = prim_puts(o, lim, threads == 1 ? " event of a thread" : " events of threads");
	o = prim_puts(o, lim, " still inside the recorder when the program exited, not waited for");
	o = prim_puts(o, lim, threads == 1 ? " (its line may be cut)" : " (their lines may be cut)");
	mtrec_chunk_keyed(MTREC_W_LOST, line, (size_t)(o - line));
}

void mtrec_fini(void)
{
	const char *freeres = NULL;
	char buf[64];

	if (!g.opened || g.ended)
		return;
	/* Outside mtrec_enter(): libc's frees are the program's events. */
	if (mtrec_recording && !mtrec_failed)
		freeres = release_libc_caches(buf, sizeof(buf));
	mtrec_enter();
	if (mtrec_lock(&g.lock, MTREC_LOCK_LIFE) < 0) {
		mtrec_leave();
		return;
	}
	if (!mtrec_failed && mtrec_file_lost())
		mtrec_give_up("the trace file was truncated by another process", 0);
	if (freeres && !mtrec_failed)
		mtrec_chunk_keyed(MTREC_W_FREERES, freeres, strlen(freeres));
	say_lost();
	/* After the program's exit handlers and libc's freeres, before "= End". */
	if (settings.reach && mtrec_recording && !mtrec_failed)
		mtrec_reach_scan(&reach_out, 0);
	/* When the process ended, for the order of a parent's and its child's
	 * ends (did the parent outlive its child, or hand it its heap?). */
	if (mtrec_recording && !mtrec_failed)
		mtrec_chunk_time();
	if (mtrec_failed) {
		if (mtrec_recording)
			mtrec_file_note("= End\n", 6);
		__atomic_store_n(&mtrec_recording, 0, __ATOMIC_RELEASE);
	} else if (mtrec_recording) {
		__atomic_store_n(&mtrec_recording, 0, __ATOMIC_RELEASE);
		say_unfinished(mtrec_chunk_drain());
		mtrec_new_epoch();
		mtrec_chunk_line("= End", 5);
	}
	g.ended = 1;
	mtrec_chunk_finish();
	mtrec_unlock(&g.lock, MTREC_LOCK_LIFE);
	mtrec_leave();
}

/* ---- exec --------------------------------------------------------------- */

/* "# exec PATH" first, so that an analysis knows the heap this process
 * had (its own and what it inherited at a fork) is gone if the call
 * succeeds: a parent's blocks are never handed to a child that exec'd
 * (share/analyzer.md, "Forks and daemons").  Then the file is cut: not in
 * a vfork child (it shares the parent's memory, and the file is the
 * parent's), nor in a forked child that has not opened its own file.
 * Only in a process of one thread: the chunks of threads that may be
 * writing cannot be finished from outside, nor the file cut under them,
 * without a cost on every event (a count of writers in flight), and a
 * failed exec must leave them recording.  A program that execs with other
 * threads running keeps the growth ahead in its file, as at a crash;
 * the analyzer and /usr/bin/mtrace read it all the same.  (Only this
 * thread can make another meanwhile: the count cannot go stale.) */
int mtrec_exec_begin(const char *what)
{
	if (!g.enabled || !g.opened || g.ended || mtrec_chunk_owner() != getpid())
		return 0;
	mtrec_enter();
	if (mtrec_lock(&g.lock, MTREC_LOCK_LIFE) < 0) {
		mtrec_leave();
		return 0;
	}
	if (!g.opened || g.ended) {
		mtrec_unlock(&g.lock, MTREC_LOCK_LIFE);
		mtrec_leave();
		return 0;
	}
	if (mtrec_recording && !mtrec_failed) {
		if (!what || !*what)
			what = "-";
		/* The clock, since no exit of ours comes: a forked child that
		 * execs within 100 ms of its start has a time axis too. */
		mtrec_chunk_time();
		mtrec_new_epoch();
		mtrec_chunk_keyed(MTREC_W_EXEC, what, strlen(what));
	}
	if (prim_count_threads() != 1) {
		mtrec_unlock(&g.lock, MTREC_LOCK_LIFE);
		mtrec_leave();
		return 0;
	}
	mtrec_chunk_pause();
	return 1;
}

void mtrec_exec_end(int paused)
{
	if (!paused)
		return;
	mtrec_chunk_resume();
	mtrec_unlock(&g.lock, MTREC_LOCK_LIFE);
	mtrec_leave();
}

/* ---- fork --------------------------------------------------------------- */

/* "# fork MARK" and PID_WIDTH spaces for the child's pid; the caller
 * holds the life lock.  The field is found where the line ends in the
 * calling thread's chunk, and only kept when it is really there. */
static void write_fork_mark(void)
{
	char line[48 + PID_WIDTH], *o;
	struct mtrec_slot *s;
	size_t len;
	char *end;

	o = prim_puts(line, line + 16, mtrec_word(MTREC_W_FORK));
	o = prim_putu(o, line + 40, ++forks_marked);
	memset(o, ' ', PID_WIDTH + 1);
	o += PID_WIDTH + 1;
	len = (size_t)(o - line);
	mtrec_new_epoch();
	mtrec_chunk_keyed(MTREC_W_FORK, line + mtrec_word_len(MTREC_W_FORK),
			  len - mtrec_word_len(MTREC_W_FORK));
	s = mtrec_depth - 1 < MTREC_NEST ? mtrec_self[mtrec_depth - 1] : NULL;
	end = s ? s->pos : NULL;
	if (mtrec_failed || !end || end - len - 1 < mtrec_file.base ||
	    memcmp(end - len - 1, line, len) != 0 || end[-1] != '\n')
		return;
	fork_mark = forks_marked;
	fork_pid_field = end - PID_WIDTH - 1;
}

/* The prepare handler.  A child that has not opened its trace yet (it
 * made no event since its own fork: the middle process of a double fork)
 * writes no mark: its children inherit its parent's mark, which still
 * describes their heap. */
void mtrec_fork_prepare(void)
{
	fork_mark = 0;
	fork_pid_field = NULL;
	if (!__atomic_load_n(&mtrec_recording, __ATOMIC_ACQUIRE) || mtrec_failed)
		return;
	mtrec_enter();
	if (mtrec_lock(&g.lock, MTREC_LOCK_LIFE) == 0) {
		if (g.opened && mtrec_recording && !mtrec_failed)
			write_fork_mark();
		mtrec_unlock(&g.lock, MTREC_LOCK_LIFE);
	}
	mtrec_leave();
}

/* The parent handler: the field belongs to the child now. */
void mtrec_fork_parent(void)
{
	fork_mark = 0;
	fork_pid_field = NULL;
}

/* In the child, before the parent's mapping goes: the pid into the
 * parent's mark, and the lineage for the child's header. */
static void child_lineage(pid_t parent)
{
	char digits[PID_WIDTH + 1], *o;

	if (fork_mark && fork_pid_field && mtrec_file.base && !mtrec_failed &&
	    !mtrec_file_lost()) {
		o = prim_putu(digits, digits + PID_WIDTH, (unsigned long)getpid());
		memcpy(fork_pid_field, digits, (size_t)(o - digits));
	}
	if (fork_mark) {
		lineage.pid = parent;
		lineage.mark = fork_mark;
		o = prim_puts(lineage.path, lineage.path + sizeof(lineage.path) - 1,
			      mtrec_file_first_path());
		*o = '\0';
	} else if (g.opened || !g.forked) {
		lineage.mark = 0;	/* a fork that could not be marked */
	}
	fork_mark = 0;
	fork_pid_field = NULL;
	forks_marked = 0;	/* marks count per trace */
}

/* No lock is held across fork (the prepare handler takes the life lock
 * only to write the mark): other libraries' fork handlers may allocate
 * (they run around ours), and the child discards everything the locks
 * protect anyway.  Each module re-creates its own lock in the child.
 *
 * The child keeps nothing of the parent's trace: it records into a file
 * of its own (named by the rule in file.c), opened at its first event,
 * so that a child that only execs or exits leaves no file.  Called by our
 * fork handler, or from the chunk writer when a child made without
 * handlers records. */
static void child_begin(void)
{
	int was_recording = mtrec_recording;

	child_lineage(mtrec_chunk_owner());
	pthread_mutex_init(&g.lock, NULL);
	ctl_taking = 0;		/* another thread of the parent's may have been taking one */
	mtrec_held = 0;
	mtrec_objects_fork_child();
	mtrec_got_fork_child();
	mtrec_caller_fork_child();
	mtrec_stack_fork_child();
	mtrec_unwind_forget_tags();	/* they name entries of the table just emptied */
	mtrec_chunk_fork_child();
	mtrec_events_fork_child();
	mtrec_reach_fork_child();
	if (!g.enabled)
		return;
	mtrec_recording = 0;
	g.opened = g.ended = 0;
	g.first = 0;
	g.forked = 1;
	/* A parent that could not record has said why; its children are quiet. */
	if (was_recording && !mtrec_failed) {
		g.child_start = 1;
		mtrec_recording = 1;	/* so that the first event comes here */
	}
}

/* Another library's fork handler (they run before ours in the child) may
 * have made this process a child already. */
void mtrec_fork_child(void)
{
	if (mtrec_chunk_owner() != getpid())
		child_begin();
}

/* A thread's first event; in a forked child, the first of all opens its
 * trace (see struct mtrec_life_hooks for what it returns). */
static MTREC_COLD int child_first_event(void)
{
	int ok;

	if (!__atomic_load_n(&g.child_start, __ATOMIC_ACQUIRE))
		return 0;
	if (pthread_mutex_trylock(&g.lock) != 0)
		return -2;
	if (g.child_start) {
		g.child_start = 0;
		mtrec_recording = 0;
		start_locked();
	}
	ok = mtrec_recording ? 0 : -1;
	pthread_mutex_unlock(&g.lock);
	return ok;
}
