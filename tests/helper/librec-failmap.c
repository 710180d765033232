/* librec-failmap: mmap() refuses shared mappings at a fixed place after
 * the first MTREC_TEST_MAPS of them (ENOMEM), as a seccomp filter or a
 * security module might: preloaded after the recorder, it stands for
 * libc's mmap in the recorder's calls (tests/t2365-recorder-refusals.sh:
 * a part of a rotated trace that cannot be mapped). */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static int seen;
	const char *allow = getenv("MTREC_TEST_MAPS");

	if ((flags & MAP_SHARED) && (flags & MAP_FIXED) && fd >= 0 && allow &&
	    ++seen > atoi(allow)) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}
