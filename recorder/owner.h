/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* owner.h -- whose file is it: the rules by which the recorder, the
 * launcher and mtrec ctl refuse a path another user may have prepared for
 * them.  Pure functions of stat results; no state, no I/O. */
#ifndef MTREC_OWNER_H
#define MTREC_OWNER_H

#include <sys/stat.h>
#include <sys/types.h>

/* Did another user leave this file in a directory that others may write
 * in, for us to open and write?  The kernel's protected_regular rule
 * (fs/namei.c, may_create_in_sticky), at its strictest (level 2) and
 * whatever the sysctl says (it is 0 on many systems, and root is not
 * spared by it when it is set): in a sticky directory that is world- or
 * group-writable, a file owned neither by us nor by the directory's
 * owner.  A user who can make /tmp/x.log before a root program with
 * MALLOC_TRACE=/tmp/x.log starts would otherwise read its trace: the
 * command line, heap and library addresses. */
static inline int mtrec_planted(const struct stat *dir, const struct stat *file, uid_t me)
{
	if (!(dir->st_mode & S_ISVTX) || file->st_uid == me || file->st_uid == dir->st_uid)
		return 0;
	return (dir->st_mode & (S_IWOTH | S_IWGRP)) != 0;
}

/* A file with other names, in such a directory: maybe a hard link another
 * user made there to a file of ours (fs.protected_hardlinks 0, the
 * kernel's default, lets a user link any file it can see: /etc/shadow
 * for root), and opening it as a trace would empty that file.  The
 * kernel's protected_regular does not look at links. */
#define MTREC_LINKED_WHY "has other names (a hard link), in a sticky directory others may write in"
#define MTREC_LINKED_HARM "writing would empty the file they name"
static inline int mtrec_linked(const struct stat *dir, const struct stat *file)
{
	return S_ISREG(file->st_mode) && file->st_nlink > 1 && (dir->st_mode & S_ISVTX) &&
	       (dir->st_mode & (S_IWOTH | S_IWGRP)) != 0;
}

#endif
