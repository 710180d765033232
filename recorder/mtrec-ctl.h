/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mtrec-ctl.h -- the launcher's "ctl" command (mtrec-ctl.c). */
#ifndef MTREC_CTL_H
#define MTREC_CTL_H

/* "mtrec ctl ARGS": argv[0] is "ctl"; the exit status. */
int mtrec_ctl_main(int argc, char **argv);

#endif
