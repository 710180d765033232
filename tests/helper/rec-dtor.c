/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-dtor: a program linked with librec-dtor.so, whose destructor frees
 * at exit the block its constructor allocated.  Prints "mask yes" when
 * the block is there in main.
 *
 * Usage: rec-dtor */
#include <stdio.h>

extern void *rec_dtor_mask;

int main(void)
{
	printf("mask %s\n", rec_dtor_mask ? "yes" : "no");
	return 0;
}
