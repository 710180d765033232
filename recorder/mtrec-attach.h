/* mtrec-attach.h -- the launcher's "attach" and "detach" commands
 * (mtrec-attach.c, share/attach.md). */
#ifndef MTREC_ATTACH_H
#define MTREC_ATTACH_H

/* "mtrec attach ARGS" or "mtrec detach PID": argv[0] is "attach" or
 * "detach"; LIB the libmtrec.so to load.  The exit status. */
int mtrec_attach_main(int argc, char **argv, const char *lib);

/* mtrec ctl: make one thread of process PID call the recorder's
 * mtrec_ctl_now(), which takes a request waiting for it; 0 when it was
 * called, -1 when it could not be (not allowed, another tracer, no
 * recorder in it, not x86-64).  Says nothing. */
int mtrec_attach_kick(long pid);

#endif
