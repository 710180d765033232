/* mtrec-attach.h -- the launcher's "attach" and "detach" commands
 * (mtrec-attach.c, share/attach.md). */
#ifndef MTREC_ATTACH_H
#define MTREC_ATTACH_H

/* "mtrec attach ARGS" or "mtrec detach PID": argv[0] is "attach" or
 * "detach"; LIB the libmtrec.so to load.  The exit status. */
int mtrec_attach_main(int argc, char **argv, const char *lib);

#endif
