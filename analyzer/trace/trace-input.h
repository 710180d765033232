/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trace-input.h -- the bytes of a trace file, decompressed when they are
 * gzip, zstd or xz data.
 *
 * Traces are big and compress well (ten to fifty times), so users keep them
 * compressed; the analyses read them as they are.  The format is told by
 * the first bytes of the content (magic numbers), never by the file's
 * name: a rotated part renamed, or data on standard input, is read the
 * same.  Decompression streams through a fixed buffer into the caller's:
 * nothing is decompressed whole into memory or to a temporary file.  A
 * plain file costs one read() per call, as before this layer.
 */
#ifndef MTA_TRACE_INPUT_H
#define MTA_TRACE_INPUT_H

#include <glib.h>
#include <stdint.h>

typedef enum {
	MTA_INPUT_PLAIN,
	MTA_INPUT_GZIP,
	MTA_INPUT_ZSTD,
	MTA_INPUT_XZ,
} MtaInputFormat;

typedef struct MtaInput MtaInput;

#define MTA_INPUT_ERROR (mta_input_error_quark ())
GQuark mta_input_error_quark (void);

typedef enum {
	MTA_INPUT_ERROR_CORRUPT,   /* compressed data that cannot be decoded */
	MTA_INPUT_ERROR_TRUNCATED, /* compressed data that stops mid-stream */
} MtaInputError;

/* Open PATH ("-": standard input) and tell its format from its first
 * bytes.  Fails, with "cannot read 'PATH': ...", when it cannot be opened
 * or is a directory. */
MtaInput *mta_input_open (const char *path, GError **error);

/* The same over LEN bytes at DATA (kept by the caller until the close). */
MtaInput *mta_input_open_buffer (const char *name, const char *data, size_t len);

void mta_input_close (MtaInput *in);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MtaInput, mta_input_close)

/* Fail, with "cannot read 'PATH': ...", when the trace PATH cannot be
 * read at all -- before any output, in every subcommand.  "-" (standard
 * input) passes; a FIFO or a device is checked without being opened (its
 * writer would go on into a pipe closed at once). */
gboolean mta_input_check_readable (const char *path, GError **error);

/* Up to LEN bytes of content into BUF; 0 at the end, -1 with ERROR set
 * (a read error, corrupt or truncated compressed data, naming the file
 * and the byte of it reached). */
gssize mta_input_read (MtaInput *in, char *buf, size_t len, GError **error);

/* The name for messages: PATH, or "<stdin>". */
const char *mta_input_name (const MtaInput *in);
MtaInputFormat mta_input_format (const MtaInput *in);
/* "gzip", "zstd", "xz"; NULL for a plain file. */
const char *mta_input_format_name (const MtaInput *in);
/* TRUE for a regular file: it can be read again (it was not consumed). */
gboolean mta_input_is_regular (const MtaInput *in);
/* Size of the file on disk (0 when not a regular file), and how much of it
 * was consumed so far: a progress indicator's measure. */
uint64_t mta_input_file_size (const MtaInput *in);
uint64_t mta_input_file_offset (const MtaInput *in);

/* A descriptor on PATH when it is a non-empty regular file outside /proc
 * and /sys, else -1 (errno EINVAL when it is not such a file).  Never waits:
 * a FIFO or a device named by a trace is refused, not read; the checks are
 * made on the descriptor, so the file checked is the file read. */
int mta_open_regular (const char *path);

#endif
