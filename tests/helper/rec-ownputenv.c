/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-ownputenv: a program with a putenv of its own, as bash has (it keeps
 * its shell variables in step with the environment).  Prints how many
 * times its putenv ran before main ("before N"), then whether
 * MTREC_SESSION is in libc's environment ("session yes" / "session no").
 *
 * Usage: rec-ownputenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

static int calls, in_main;
static int calls_before_main;

int putenv(char *s)
{
	(void)s;
	if (!in_main)
		calls_before_main++;
	calls++;
	return 0;	/* a program's own: it does not touch environ */
}

int main(void)
{
	int session = 0;

	in_main = 1;
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "MTREC_SESSION=", 14) == 0)
			session = 1;
	printf("before %d\nsession %s\n", calls_before_main, session ? "yes" : "no");
	return calls < 0;
}
