/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unit-check.h -- what the recorder's unit tests (chunk-test.c,
 * tables-test.c) share: a check that counts and says what failed, and the
 * last line, "PASS" or "FAIL N". */
#ifndef UNIT_CHECK_H
#define UNIT_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...) \
	do { \
		if (!(cond)) { \
			failures++; \
			printf("# FAIL %s:%d: ", __FILE__, __LINE__); \
			printf(__VA_ARGS__); \
			printf("\n"); \
		} \
	} while (0)

/* The verdict line; main's exit status. */
static inline int verdict(void)
{
	if (failures)
		printf("FAIL %d\n", failures);
	else
		printf("PASS\n");
	return failures != 0;
}

#endif
