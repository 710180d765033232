/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trace-output.c -- compress what is written to a FILE, by name suffix.
 *
 * The writer keeps using stdio (fputs, fprintf, fwrite): fopencookie puts
 * a compressor between its buffer and the real file, so the code that
 * writes a trace does not know whether it is compressed.  Each codec
 * turns a block of input into output chunks of OUT_CHUNK bytes written
 * with fwrite to the real file; close flushes the end of the data (the
 * trailer with the checksum), then closes the real file.
 */
#include "trace-output.h"

#include <errno.h>
#include <lzma.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#define OUT_CHUNK (64u << 10)
/* Levels of the tools' defaults: gzip -6, zstd -3, xz -6. */
#define GZIP_LEVEL 6
#define ZSTD_LEVEL 3
#define XZ_PRESET 6

typedef enum { OUT_GZIP, OUT_ZSTD, OUT_XZ } OutFormat;

typedef struct {
	FILE *raw;
	OutFormat format;
	z_stream z;
	ZSTD_CStream *zstd;
	lzma_stream xz;
	unsigned char out[OUT_CHUNK];
} Compressor;

/* Hand the OUT_CHUNK - AVAIL bytes produced to the real file. */
static gboolean
put (Compressor *c, size_t avail)
{
	size_t n = OUT_CHUNK - avail;
	if (n > 0 && fwrite (c->out, 1, n, c->raw) != n) {
		errno = errno ? errno : EIO;
		return FALSE;
	}
	return TRUE;
}

/* Compress LEN bytes of BUF; with FINISH, end the data.  FALSE with
 * errno set on a failure. */
static gboolean
gzip_code (Compressor *c, const char *buf, size_t len, gboolean finish)
{
	c->z.next_in = (Bytef *) buf;
	c->z.avail_in = (uInt) len;     /* stdio hands over a buffer at a time */
	for (;;) {
		c->z.next_out = c->out;
		c->z.avail_out = OUT_CHUNK;
		int rc = deflate (&c->z, finish ? Z_FINISH : Z_NO_FLUSH);
		if (rc == Z_STREAM_ERROR || !put (c, c->z.avail_out)) {
			errno = errno ? errno : EIO;
			return FALSE;
		}
		if (finish ? rc == Z_STREAM_END : c->z.avail_in == 0 && c->z.avail_out != 0)
			return TRUE;
	}
}

static gboolean
zstd_code (Compressor *c, const char *buf, size_t len, gboolean finish)
{
	ZSTD_inBuffer in = { buf, len, 0 };
	for (;;) {
		ZSTD_outBuffer out = { c->out, OUT_CHUNK, 0 };
		size_t left = ZSTD_compressStream2 (c->zstd, &out, &in, finish ? ZSTD_e_end : ZSTD_e_continue);
		if (ZSTD_isError (left) || !put (c, OUT_CHUNK - out.pos)) {
			errno = errno ? errno : EIO;
			return FALSE;
		}
		if (finish ? left == 0 : in.pos == in.size)
			return TRUE;
	}
}

static gboolean
xz_code (Compressor *c, const char *buf, size_t len, gboolean finish)
{
	c->xz.next_in = (const uint8_t *) buf;
	c->xz.avail_in = len;
	for (;;) {
		c->xz.next_out = c->out;
		c->xz.avail_out = OUT_CHUNK;
		lzma_ret rc = lzma_code (&c->xz, finish ? LZMA_FINISH : LZMA_RUN);
		if ((rc != LZMA_OK && rc != LZMA_STREAM_END) || !put (c, c->xz.avail_out)) {
			errno = rc == LZMA_MEM_ERROR ? ENOMEM : errno ? errno : EIO;
			return FALSE;
		}
		if (finish ? rc == LZMA_STREAM_END : c->xz.avail_in == 0 && c->xz.avail_out != 0)
			return TRUE;
	}
}

static gboolean
code (Compressor *c, const char *buf, size_t len, gboolean finish)
{
	errno = 0;
	switch (c->format) {
	case OUT_GZIP:
		return gzip_code (c, buf, len, finish);
	case OUT_ZSTD:
		return zstd_code (c, buf, len, finish);
	default:
		return xz_code (c, buf, len, finish);
	}
}

static void
compressor_free (Compressor *c)
{
	switch (c->format) {
	case OUT_GZIP:
		deflateEnd (&c->z);
		break;
	case OUT_ZSTD:
		ZSTD_freeCStream (c->zstd);
		break;
	case OUT_XZ:
		lzma_end (&c->xz);
		break;
	}
	g_free (c);
}

static ssize_t
cookie_write (void *cookie, const char *buf, size_t len)
{
	return code (cookie, buf, len, FALSE) ? (ssize_t) len : -1;
}

static int
cookie_close (void *cookie)
{
	Compressor *c = cookie;
	gboolean ok = code (c, "", 0, TRUE);
	int e = ok ? 0 : errno;

	if (fclose (c->raw) != 0 && ok) {
		ok = FALSE;
		e = errno;
	}
	compressor_free (c);
	errno = e;
	return ok ? 0 : -1;
}

static gboolean
compressor_start (Compressor *c)
{
	switch (c->format) {
	case OUT_GZIP:
		/* 15 + 16: a gzip header and trailer, as gzip(1) writes */
		return deflateInit2 (&c->z, GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8,
				     Z_DEFAULT_STRATEGY) == Z_OK;
	case OUT_ZSTD:
		c->zstd = ZSTD_createCStream ();
		return c->zstd != NULL &&
			!ZSTD_isError (ZSTD_CCtx_setParameter (c->zstd, ZSTD_c_compressionLevel,
							       ZSTD_LEVEL)) &&
			!ZSTD_isError (ZSTD_CCtx_setParameter (c->zstd, ZSTD_c_checksumFlag, 1));
	default:
		c->xz = (lzma_stream) LZMA_STREAM_INIT;
		return lzma_easy_encoder (&c->xz, XZ_PRESET, LZMA_CHECK_CRC64) == LZMA_OK;
	}
}

FILE *
mta_output_compress (FILE *raw, const char *name, GError **error)
{
	static const struct {
		const char *suffix;
		OutFormat format;
	} by_suffix[] = { { ".gz", OUT_GZIP }, { ".zst", OUT_ZSTD }, { ".xz", OUT_XZ } };
	static const cookie_io_functions_t io = { .write = cookie_write, .close = cookie_close };
	Compressor *c = NULL;

	for (size_t i = 0; i < G_N_ELEMENTS (by_suffix) && c == NULL; i++)
		if (g_str_has_suffix (name, by_suffix[i].suffix)) {
			c = g_new0 (Compressor, 1);
			c->format = by_suffix[i].format;
		}
	if (c == NULL)
		return raw;
	c->raw = raw;
	FILE *f = compressor_start (c) ? fopencookie (c, "w", io) : NULL;
	if (f == NULL) {
		g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOMEM,
			     "cannot write '%s': the compressor does not start", name);
		fclose (raw);
		compressor_free (c);
	}
	return f;
}
