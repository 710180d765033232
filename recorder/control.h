/* control.h -- requests from "mtrec ctl PID on|off|mark LABEL|status|reach"
 * (control.c): how they are found and answered.  A leaf: it calls
 * nothing of the recorder but prim.h, and hands each request to process
 * life (life.c), which acts on it.
 *
 * A request is a small file, DIR/PID.ctl, that mtrec ctl writes and the
 * recorder looks for at most every MTREC_CONTROL_EVERY_NS, from the
 * program's own allocation calls, or at once when mtrec ctl makes a thread
 * call mtrec_ctl_now() (no thread of ours, no descriptor kept open, no
 * signal): DIR is $XDG_RUNTIME_DIR/mtrec when the process started
 * with XDG_RUNTIME_DIR set, else /tmp/mtrec-EUID.  The recorder writes its
 * answer into the same file at MTREC_CONTROL_ANSWER_AT and then removes it:
 * the removal is the acknowledgement, and mtrec ctl, which keeps the file
 * open, reads the answer after it.  The format is in share/control.md. */
#ifndef MTREC_CONTROL_H
#define MTREC_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "prim.h"

#define MTREC_CONTROL_EVERY_NS 100000000ull	/* look at most this often */
#define MTREC_CONTROL_ANSWER_AT 1024		/* requests are shorter */

enum mtrec_ctl_cmd { MTREC_CTL_ON, MTREC_CTL_OFF, MTREC_CTL_MARK, MTREC_CTL_STATUS, MTREC_CTL_REACH };

struct mtrec_ctl_req {
	enum mtrec_ctl_cmd cmd;
	char label[512];	/* MTREC_CTL_MARK's, NUL-terminated */
	int fd;			/* the request file, open */
	int dirfd;		/* its directory, open */
	char path[320];
	const char *name;	/* the request file's name in path */
};

/* CLOCK_MONOTONIC_COARSE in nanoseconds when the next look is due;
 * UINT64_MAX when requests are not looked for (MTREC_CONTROL=0, or this
 * process does not record). */
extern uint64_t mtrec_ctl_due MTREC_HIDDEN;

/* From start-up: look for requests from now on, unless MTREC_CONTROL=0. */
void mtrec_control_init(void) MTREC_HIDDEN;
/* A request for this process, if one is waiting: 1 and *r filled (answer
 * it with mtrec_control_answer), or 0.  Requests that are malformed, not
 * made by this user or root, or left for an earlier process with this pid
 * are removed unanswered.  One thread at a time (its buffers are static). */
int mtrec_control_take(struct mtrec_ctl_req *r) MTREC_HIDDEN;
/* "ok TEXT" (done is 1) or "no TEXT" into the request, then remove it. */
void mtrec_control_answer(struct mtrec_ctl_req *r, int done, const char *text) MTREC_HIDDEN;

#endif
