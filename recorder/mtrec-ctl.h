/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mtrec-ctl.h -- the launcher's "ctl" command (mtrec-ctl.c). */
#ifndef MTREC_CTL_H
#define MTREC_CTL_H

/* "mtrec ctl ARGS": argv[0] is "ctl"; the exit status. */
int mtrec_ctl_main(int argc, char **argv);

/* The name among NAMES (NULL-ended) nearest to WORD when it is near
 * enough to be a typo of it, for "did you mean"; or NULL (mtrec.c). */
const char *mtrec_nearest(const char *word, const char *const *names);

struct option;
/* The one line for getopt_long's '?' at WORD (argv[optind - 1], opterr 0)
 * of "mtrec CMD" (NULL: mtrec itself), whose short options in VALUED take
 * a value: the nearest long option for a typo, as mtanalyze says it. */
void mtrec_bad_option(const char *cmd, const char *valued, const char *word,
		      const struct option *opts);

#endif
