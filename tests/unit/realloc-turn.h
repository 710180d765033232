/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* realloc-turn.h -- shared by libturn.so and its driver. */
#ifndef REALLOC_TURN_H
#define REALLOC_TURN_H

/* The size of the blocks that change hands inside realloc. */
#define TURN_SIZE 4321

#endif
