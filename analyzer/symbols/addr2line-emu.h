/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* addr2line-emu.h -- binutils' addr2line, emulated (addr2line-emu.c). */
#ifndef MTA_ADDR2LINE_EMU_H
#define MTA_ADDR2LINE_EMU_H

#include "elf-module.h"

/* What addr2line prints for ADDR (a file address of M) on its first line,
 * or NULL for "??:0".  Free it. */
char *mta_addr2line_emulate (MtaModule *m, uint64_t addr);

#endif
