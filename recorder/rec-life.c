/* rec-life.c -- the recorder's process life: start-up, the session
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
 * the trace ("# stopped WHY", rec-chunk.c), keeps counting the events it
 * no longer writes, and at exit writes "# lost N ..." and "= End"
 * (rec-file.c keeps room for these lines). */
#include "chunk.h"
#include "events.h"
#include "file.h"
#include "got.h"
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
static char *put_keyed(char *o, char *lim, const char *key, const char *val, size_t len)
{
	o = prim_puts(o, lim, "# ");
	o = prim_puts(o, lim, key);
	o = prim_puts(o, lim, " ");
	for (size_t i = 0; i < len && o < lim; i++)
		*o++ = prim_flat(val[i]);
	return prim_puts(o, lim, "\n");
}

/* "# pid" to "# depth". */
static void build_header(void)
{
	char *o = header_text, *lim = header_text + sizeof(header_text) - 1;
	char buf[4096];
	struct timespec now;
	ssize_t n;

	o = prim_puts(o, lim, "# pid ");
	o = prim_putu(o, lim, (unsigned long)getpid());
	o = prim_puts(o, lim, " ");
	o = prim_putu(o, lim, (unsigned long)getppid());
	o = prim_puts(o, lim, "\n");
	n = readlink("/proc/self/exe", buf, sizeof(buf));
	o = put_keyed(o, lim, "exe", buf, n > 0 ? (size_t)n : 0);
	n = (ssize_t)read_small("/proc/self/cmdline", buf, sizeof(buf));
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	o = put_keyed(o, lim, "cmdline", buf, n > 0 ? (size_t)n : 0);
	clock_gettime(CLOCK_REALTIME, &now);
	o = prim_puts(o, lim, "# start ");
	o = prim_putu(o, lim, (unsigned long)now.tv_sec);
	o = prim_puts(o, lim, ".");
	for (long d = 100000000; d >= 1 && o < lim; d /= 10)
		*o++ = (char)('0' + now.tv_nsec / d % 10);
	o = prim_puts(o, lim, "\n# depth ");
	o = prim_putu(o, lim, (unsigned long)settings.depth);
	o = prim_puts(o, lim, "\n");
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
	mtrec_chunk_line("= Start", 7);
	__atomic_store_n(&mtrec_recording, 1, __ATOMIC_RELEASE);
}

static void stop_locked(void)
{
	if (!mtrec_recording)
		return;
	__atomic_store_n(&mtrec_recording, 0, __ATOMIC_RELEASE);
	mtrec_new_epoch();
	mtrec_chunk_line("= End", 5);
}

static void mark_locked(const char *label)
{
	if (mtrec_recording && !mtrec_failed) {
		mtrec_new_epoch();
		mtrec_chunk_keyed("mark", label, strlen(label));
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

void mtrec_stop(void)
{
	mtrec_enter();
	if (mtrec_lock(&g.lock, MTREC_LOCK_LIFE) == 0) {
		stop_locked();
		mtrec_unlock(&g.lock, MTREC_LOCK_LIFE);
	}
	mtrec_leave();
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

void mtrec_redirect_init(struct mtrec_got_func *funcs, int n,
			 const void *const *keep, int nkeep)
{
	if (!g.enabled || !settings.patch)
		return;
	if (mtrec_got_init(funcs, n, keep, nkeep, settings.patch > 1 ? say_patched : NULL) < 0) {
		if (settings.patch > 1)
			prim_say("MTREC_PATCH: not supported on this architecture", SAY_END);
		return;
	}
	mtrec_loader_moved();
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
static void toggle(void)
{
	if (__atomic_load_n(&mtrec_recording, __ATOMIC_ACQUIRE))
		mtrec_stop();
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
		prim_say("MTREC_SIGNAL: unknown signal '", name, "'", SAY_END);
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_toggle_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	g.real_sigaction(sig, &sa, NULL);
}

/* ---- trouble ------------------------------------------------------------ */

/* The program got no memory: under RLIMIT_AS, the trace's reservation may
 * be what it lacks.  Stop recording and give the reservation back; 1 when
 * the program should try again. */
int mtrec_out_of_memory(size_t size)
{
	int again;

	if (!g.opened || !mtrec_file.maplen || size > mtrec_file.maplen)
		return 0;
	mtrec_enter();
	mtrec_give_up("the program ran out of address space (ulimit -v); "
		      "the recorder gave its reservation back", 0);
	again = mtrec_file_release();
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
 * pattern the session uses (see rec-file.c). */
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
	g.enabled = 1;
	if (!settings.scoped)
		mtrec_start();
}

/* Called from the library constructor, outside any libc call. */
void mtrec_mark_session(void)
{
	char *o;

	if (!g.enabled || !g.first)
		return;
	o = prim_puts(session_env + 14, session_env + sizeof(session_env) - 1,
		      g.refused ? "-" : mtrec_file_pattern());
	*o = '\0';
	/* putenv() grows libc's environ array with malloc: that block is ours,
	 * not the program's, and is left out of the trace until the program
	 * itself reallocates it. */
	mtrec_busy = 1;
	putenv(session_env);
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
		o = prim_puts(line, line + sizeof(line), "# lost ");
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
		mtrec_file_note("# lost ", 7);
		mtrec_file_note(line, len + 1);
	} else {
		mtrec_chunk_keyed("lost", line, len);
	}
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
		mtrec_chunk_keyed("freeres", freeres, strlen(freeres));
	say_lost();
	if (mtrec_failed) {
		if (mtrec_recording)
			mtrec_file_note("= End\n", 6);
		__atomic_store_n(&mtrec_recording, 0, __ATOMIC_RELEASE);
	} else {
		stop_locked();
	}
	g.ended = 1;
	mtrec_chunk_finish();
	mtrec_unlock(&g.lock, MTREC_LOCK_LIFE);
	mtrec_leave();
}

/* ---- fork --------------------------------------------------------------- */

/* No lock is held across fork (there are no prepare or parent handlers):
 * other libraries' fork handlers may allocate (they run around ours), and
 * the child discards everything the locks protect anyway.  Each module
 * re-creates its own lock in the child.
 *
 * The child keeps nothing of the parent's trace: it records into a file
 * of its own (named by the rule in rec-file.c), opened at its first event,
 * so that a child that only execs or exits leaves no file.  Called by our
 * fork handler, or from the chunk writer when a child made without
 * handlers records. */
static void child_begin(void)
{
	int was_recording = mtrec_recording;

	pthread_mutex_init(&g.lock, NULL);
	mtrec_held = 0;
	mtrec_objects_fork_child();
	mtrec_got_fork_child();
	mtrec_caller_fork_child();
	mtrec_stack_fork_child();
	mtrec_chunk_fork_child();
	mtrec_events_fork_child();
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
