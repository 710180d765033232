/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trace-input.c -- open a trace, sniff its format, stream its content.
 *
 * The first bytes decide: 1f 8b is gzip (RFC 1952), 28 b5 2f fd a zstd
 * frame (and 5X 2a 4d 18 a skippable one), fd 37 7a 58 5a 00 xz; anything
 * else is read as it is.  Each decoder consumes a raw buffer of RAW_CHUNK
 * bytes refilled from the file and writes straight into the caller's
 * buffer, so memory does not depend on the file, and the plain case stays
 * one read() per call into the caller's buffer.
 *
 * Concatenated data is one trace, as zcat, zstdcat and xzcat see it:
 * several gzip members (pigz, `cat a.gz b.gz`), several zstd frames,
 * several xz streams.  Data that stops mid-stream (a copy cut short, a
 * compressor killed) and data that does not decode are errors naming the
 * file and the byte of it where decoding stopped; what was decoded before
 * has been handed over already.
 */
#include "trace-input.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <lzma.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define RAW_CHUNK (256u << 10)
#define SNIFF_BYTES 6

/* What a decoder's step says. */
typedef enum {
	STEP_MORE,      /* call again (after a refill when the raw buffer is empty) */
	STEP_NEED,      /* cannot go on before more raw bytes arrive */
	STEP_END,       /* the compressed data ended where it should */
	STEP_ERROR,     /* corrupt data; the error is set */
} Step;

struct MtaInput {
	char *name;
	int fd;                     /* -1 for a buffer */
	gboolean regular;
	uint64_t file_size;
	uint64_t file_offset;       /* raw bytes taken from the file or buffer */
	MtaInputFormat format;
	/* raw bytes not consumed yet: raw[raw_pos..raw_len) */
	const unsigned char *raw;
	unsigned char *raw_buf;     /* RAW_CHUNK bytes; NULL for a buffer */
	size_t raw_pos, raw_len;
	gboolean raw_eof;
	gboolean ended;             /* the compressed data ended */
	GError *pending;            /* to report once what came before is read */
	/* decoders */
	z_stream z;
	gboolean z_between;         /* after a gzip member: another, padding or the end */
	ZSTD_DStream *zstd;
	size_t zstd_hint;           /* 0: between frames */
	lzma_stream xz;
};

G_DEFINE_QUARK (mta-input-error-quark, mta_input_error)

static const char *const format_names[] = { NULL, "gzip", "zstd", "xz" };

const char *
mta_input_name (const MtaInput *in)
{
	return in->name;
}

MtaInputFormat
mta_input_format (const MtaInput *in)
{
	return in->format;
}

const char *
mta_input_format_name (const MtaInput *in)
{
	return format_names[in->format];
}

gboolean
mta_input_is_regular (const MtaInput *in)
{
	return in->regular;
}

uint64_t
mta_input_file_size (const MtaInput *in)
{
	return in->file_size;
}

uint64_t
mta_input_file_offset (const MtaInput *in)
{
	return in->file_offset;
}

/* The byte of the file where the decoder stands. */
static uint64_t
decoded_offset (const MtaInput *in)
{
	return in->file_offset - (in->raw_len - in->raw_pos);
}

static void
set_read_error (GError **error, const char *name, int e)
{
	g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e),
		     "cannot read '%s': %s", name, g_strerror (e));
}

static void
set_corrupt (MtaInput *in, GError **error, const char *why)
{
	g_set_error (error, MTA_INPUT_ERROR, MTA_INPUT_ERROR_CORRUPT,
		     "%s: corrupt %s data at byte %" G_GUINT64_FORMAT " of the file (%s)",
		     in->name, format_names[in->format], decoded_offset (in), why);
}

/* Keep the unconsumed raw bytes and read more after them; FALSE on a
 * read error.  At the end of the file raw_eof is set. */
static gboolean
refill (MtaInput *in, GError **error)
{
	if (in->raw_buf == NULL || in->raw_eof)
		return TRUE;
	size_t keep = in->raw_len - in->raw_pos;
	memmove (in->raw_buf, in->raw_buf + in->raw_pos, keep);
	in->raw_pos = 0;
	in->raw_len = keep;
	for (;;) {
		ssize_t n = read (in->fd, in->raw_buf + in->raw_len, RAW_CHUNK - in->raw_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			set_read_error (error, in->name, errno);
			return FALSE;
		}
		if (n == 0)
			in->raw_eof = TRUE;
		in->raw_len += (size_t) n;
		in->file_offset += (uint64_t) n;
		return TRUE;
	}
}

/* ------------------------------------------------------------ decoders */

static Step
gzip_between_members (MtaInput *in, GError **error)
{
	/* gzip(1) skips zero padding after the last member (tapes, dd) */
	while (in->raw_pos < in->raw_len && in->raw[in->raw_pos] == 0)
		in->raw_pos++;
	size_t avail = in->raw_len - in->raw_pos;
	if (avail == 0)
		return in->raw_eof ? STEP_END : STEP_NEED;
	if (avail < 2 && !in->raw_eof)
		return STEP_NEED;
	if (avail < 2 || in->raw[in->raw_pos] != 0x1f || in->raw[in->raw_pos + 1] != 0x8b) {
		set_corrupt (in, error, "other bytes after the gzip data");
		return STEP_ERROR;
	}
	inflateReset (&in->z);
	in->z_between = FALSE;
	return STEP_MORE;
}

static Step
gzip_step (MtaInput *in, char *out, size_t len, size_t *produced, GError **error)
{
	if (in->z_between)
		return gzip_between_members (in, error);
	in->z.next_in = (Bytef *) (in->raw + in->raw_pos);
	in->z.avail_in = (uInt) MIN (in->raw_len - in->raw_pos, (size_t) UINT_MAX);
	in->z.next_out = (Bytef *) out;
	in->z.avail_out = (uInt) MIN (len, (size_t) UINT_MAX);
	int rc = inflate (&in->z, Z_NO_FLUSH);
	in->raw_pos = (size_t) (in->z.next_in - in->raw);
	*produced = (size_t) (in->z.next_out - (Bytef *) out);
	switch (rc) {
	case Z_STREAM_END:
		in->z_between = TRUE;
		return STEP_MORE;
	case Z_OK:
		return STEP_MORE;
	case Z_BUF_ERROR:       /* no progress possible: input needed */
		return STEP_NEED;
	default:
		set_corrupt (in, error, in->z.msg ? in->z.msg : "inflate failed");
		return STEP_ERROR;
	}
}

static Step
zstd_step (MtaInput *in, char *out, size_t len, size_t *produced, GError **error)
{
	/* the file may end only between frames (after one, the decoder
	 * asks for the next frame's header: its hint is no longer 0) */
	if (in->raw_pos == in->raw_len && in->raw_eof && in->zstd_hint == 0)
		return STEP_END;
	ZSTD_inBuffer ib = { in->raw, in->raw_len, in->raw_pos };
	ZSTD_outBuffer ob = { out, len, 0 };
	size_t rc = ZSTD_decompressStream (in->zstd, &ob, &ib);
	in->raw_pos = ib.pos;
	*produced = ob.pos;
	if (ZSTD_isError (rc)) {
		set_corrupt (in, error, ZSTD_getErrorName (rc));
		return STEP_ERROR;
	}
	/* a new frame started: the hint says what it still needs */
	if (rc == 0 || ib.pos > 0)
		in->zstd_hint = rc;
	if (rc == 0 && in->raw_pos == in->raw_len && in->raw_eof)
		return STEP_END;
	if (ob.pos == 0 && ib.pos == ib.size)
		return STEP_NEED;
	return STEP_MORE;
}

static Step
xz_step (MtaInput *in, char *out, size_t len, size_t *produced, GError **error)
{
	in->xz.next_in = in->raw + in->raw_pos;
	in->xz.avail_in = in->raw_len - in->raw_pos;
	in->xz.next_out = (uint8_t *) out;
	in->xz.avail_out = len;
	/* LZMA_FINISH tells a concatenated decoder that no stream follows */
	lzma_ret rc = lzma_code (&in->xz, in->raw_eof ? LZMA_FINISH : LZMA_RUN);
	in->raw_pos = (size_t) (in->xz.next_in - in->raw);
	*produced = (size_t) (in->xz.next_out - (uint8_t *) out);
	switch (rc) {
	case LZMA_OK:
		return STEP_MORE;
	case LZMA_STREAM_END:
		return STEP_END;
	case LZMA_BUF_ERROR:    /* no progress possible: input needed */
		return STEP_NEED;
	case LZMA_MEM_ERROR:
		set_corrupt (in, error, "out of memory");
		return STEP_ERROR;
	case LZMA_FORMAT_ERROR:
		set_corrupt (in, error, "not an xz stream");
		return STEP_ERROR;
	case LZMA_OPTIONS_ERROR:
		set_corrupt (in, error, "unsupported xz options");
		return STEP_ERROR;
	default:
		set_corrupt (in, error, "compressed data is corrupt");
		return STEP_ERROR;
	}
}

static Step
decode_step (MtaInput *in, char *out, size_t len, size_t *produced, GError **error)
{
	switch (in->format) {
	case MTA_INPUT_GZIP:
		return gzip_step (in, out, len, produced, error);
	case MTA_INPUT_ZSTD:
		return zstd_step (in, out, len, produced, error);
	default:
		return xz_step (in, out, len, produced, error);
	}
}

/* Decode until some bytes come out, the data ends, or it fails. */
static gssize
read_compressed (MtaInput *in, char *buf, size_t len, GError **error)
{
	size_t produced = 0;

	if (in->pending != NULL) {
		g_propagate_error (error, g_steal_pointer (&in->pending));
		return -1;
	}
	while (produced == 0 && !in->ended) {
		if (in->raw_pos == in->raw_len && !refill (in, error))
			return -1;
		Step st = decode_step (in, buf, len, &produced, &in->pending);
		if (st == STEP_ERROR && produced == 0) {
			g_propagate_error (error, g_steal_pointer (&in->pending));
			return -1;
		}
		if (st == STEP_ERROR)
			break;      /* the bytes decoded before it first */
		if (st == STEP_END)
			in->ended = TRUE;
		else if (st == STEP_NEED && produced == 0) {
			if (in->raw_eof) {
				g_set_error (error, MTA_INPUT_ERROR, MTA_INPUT_ERROR_TRUNCATED,
					     "%s: %s data cut short at byte %" G_GUINT64_FORMAT
					     ", where the file ends: it is truncated", in->name,
					     format_names[in->format], in->file_offset);
				return -1;
			}
			if (!refill (in, error))
				return -1;
		}
	}
	return (gssize) produced;
}

static gssize
read_plain (MtaInput *in, char *buf, size_t len, GError **error)
{
	if (in->raw_pos < in->raw_len) {        /* the sniffed head, or a buffer */
		size_t n = MIN (len, in->raw_len - in->raw_pos);
		memcpy (buf, in->raw + in->raw_pos, n);
		in->raw_pos += n;
		return (gssize) n;
	}
	if (in->raw_eof)
		return 0;
	for (;;) {
		ssize_t n = read (in->fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			set_read_error (error, in->name, errno);
			return -1;
		}
		if (n == 0)
			in->raw_eof = TRUE;
		in->file_offset += (uint64_t) n;
		return n;
	}
}

gssize
mta_input_read (MtaInput *in, char *buf, size_t len, GError **error)
{
	if (len == 0)
		return 0;
	if (in->format == MTA_INPUT_PLAIN)
		return read_plain (in, buf, len, error);
	return read_compressed (in, buf, len, error);
}

/* ------------------------------------------------------------ opening */

static MtaInputFormat
sniff (const unsigned char *p, size_t n)
{
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return MTA_INPUT_GZIP;
	if (n >= 4 && ((p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd) ||
		       ((p[0] & 0xf0) == 0x50 && p[1] == 0x2a && p[2] == 0x4d && p[3] == 0x18)))
		return MTA_INPUT_ZSTD;
	if (n >= 6 && memcmp (p, "\xfd" "7zXZ\0", 6) == 0)
		return MTA_INPUT_XZ;
	return MTA_INPUT_PLAIN;
}

/* Start the decoder the first bytes call for. */
static gboolean
start_decoder (MtaInput *in, GError **error)
{
	gboolean ok = TRUE;

	in->format = sniff (in->raw + in->raw_pos, in->raw_len - in->raw_pos);
	switch (in->format) {
	case MTA_INPUT_GZIP:
		ok = inflateInit2 (&in->z, 15 + 16) == Z_OK;   /* gzip wrapper only */
		break;
	case MTA_INPUT_ZSTD:
		in->zstd = ZSTD_createDStream ();
		in->zstd_hint = 1;
		ok = in->zstd != NULL && !ZSTD_isError (ZSTD_initDStream (in->zstd));
		break;
	case MTA_INPUT_XZ:
		in->xz = (lzma_stream) LZMA_STREAM_INIT;
		ok = lzma_stream_decoder (&in->xz, UINT64_MAX, LZMA_CONCATENATED) == LZMA_OK;
		break;
	case MTA_INPUT_PLAIN:
		break;
	}
	if (!ok) {
		g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOMEM,
			     "cannot read '%s': the %s decoder does not start", in->name,
			     format_names[in->format]);
		in->format = MTA_INPUT_PLAIN;      /* nothing to end at the close */
	}
	return ok;
}

/* Open IN->name's file and look at its first bytes. */
static gboolean
open_file (MtaInput *in, const char *path, GError **error)
{
	struct stat st;

	/* stdin is read through a copy, so that closing is the same for all */
	in->fd = strcmp (path, "-") == 0 ? fcntl (0, F_DUPFD_CLOEXEC, 0)
					 : open (path, O_RDONLY | O_CLOEXEC);
	if (in->fd < 0 || fstat (in->fd, &st) < 0) {
		set_read_error (error, in->name, errno);
		return FALSE;
	}
	if (S_ISDIR (st.st_mode)) {
		set_read_error (error, in->name, EISDIR);
		return FALSE;
	}
	in->regular = S_ISREG (st.st_mode);
	in->file_size = in->regular ? (uint64_t) st.st_size : 0;
	in->raw_buf = g_malloc (RAW_CHUNK);
	in->raw = in->raw_buf;
	/* a pipe may hand over the magic in pieces */
	while (in->raw_len < SNIFF_BYTES && !in->raw_eof)
		if (!refill (in, error))
			return FALSE;
	return start_decoder (in, error);
}

MtaInput *
mta_input_open (const char *path, GError **error)
{
	MtaInput *in = g_new0 (MtaInput, 1);

	in->name = g_strdup (strcmp (path, "-") == 0 ? "<stdin>" : path);
	if (!open_file (in, path, error)) {
		mta_input_close (in);
		return NULL;
	}
	return in;
}

MtaInput *
mta_input_open_buffer (const char *name, const char *data, size_t len)
{
	MtaInput *in = g_new0 (MtaInput, 1);

	in->name = g_strdup (name);
	in->fd = -1;
	in->raw = (const unsigned char *) data;
	in->raw_len = len;
	in->raw_eof = TRUE;
	in->file_offset = len;
	if (!start_decoder (in, NULL))
		in->raw_len = 0;    /* cannot decode: an empty input */
	return in;
}

void
mta_input_close (MtaInput *in)
{
	if (in == NULL)
		return;
	switch (in->format) {
	case MTA_INPUT_GZIP:
		inflateEnd (&in->z);
		break;
	case MTA_INPUT_ZSTD:
		ZSTD_freeDStream (in->zstd);
		break;
	case MTA_INPUT_XZ:
		lzma_end (&in->xz);
		break;
	case MTA_INPUT_PLAIN:
		break;
	}
	if (in->fd >= 0)
		close (in->fd);
	g_clear_error (&in->pending);
	g_free (in->raw_buf);
	g_free (in->name);
	g_free (in);
}

gboolean
mta_input_check_readable (const char *path, GError **error)
{
	struct stat st;
	int fd, e;

	if (strcmp (path, "-") == 0)
		return TRUE;
	/* A FIFO or a device is read once, by the analysis: opening it here
	 * would let a FIFO's writer write into a pipe we then close. */
	if (stat (path, &st) < 0)
		e = errno;
	else if (S_ISDIR (st.st_mode))
		e = EISDIR;
	else if (!S_ISREG (st.st_mode))
		e = access (path, R_OK) < 0 ? errno : 0;
	else {
		fd = open (path, O_RDONLY | O_CLOEXEC);
		e = fd < 0 ? errno : 0;
		if (fd >= 0)
			close (fd);
	}
	if (e == 0)
		return TRUE;
	g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e),
		     "cannot read '%s': %s", path, g_strerror (e));
	return FALSE;
}

int
mta_open_regular (const char *path)
{
	struct stat st;
	struct statfs fs;
	int fd;

	/* Look before opening: even a non-blocking open of a FIFO makes us a
	 * reader for a moment, which lets its writer go on and lose what it
	 * writes when we close it again. */
	if (stat (path, &st) < 0)
		return -1;
	if (!S_ISREG (st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	fd = open (path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || st.st_size == 0 ||
	    fstatfs (fd, &fs) < 0 || fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC) {
		close (fd);
		errno = EINVAL;
		return -1;
	}
	/* no effect on a regular file, but what we hand on reads normally */
	(void) fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}
