/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pprof-out.c -- the run as a gzip-compressed pprof profile (--pprof).
 *
 * The format is github.com/google/pprof's proto/profile.proto: one
 * Profile message of sample types, samples (a stack of location ids, leaf
 * first, and one value per sample type), locations (an address and its
 * lines: several when code was inlined, innermost first), functions,
 * mappings (an object with its build-id) and a table of strings that the
 * other messages name by index, "" first.  The encoder is the few lines of
 * protobuf's wire format this needs (varints and length-delimited fields,
 * nested messages built inside out), not libprotobuf-c: that would bring
 * a code generator and a copy of the .proto into the build for six
 * message types that never change.
 *
 * What a sample is: a call path of the run (run.h), from the frame the
 * report charges (the first that is not an allocation wrapper) outwards,
 * so that `go tool pprof -top` charges what `--by-site` charges, and its
 * totals are the report's.  share/pprof.md.
 */
#include "pprof-out.h"
#include "kinds.h"
#include "site-report.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <inttypes.h>
#include <string.h>
#include <zlib.h>

/* ------------------------------------------------------ the wire format */

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

static void
put_varint (GByteArray *b, uint64_t v)
{
	guint8 buf[10];
	guint n = 0;

	do {
		buf[n++] = (guint8) ((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v != 0);
	g_byte_array_append (b, buf, n);
}

static void
put_tag (GByteArray *b, guint field, guint wire)
{
	put_varint (b, ((uint64_t) field << 3) | wire);
}

/* A varint field; proto3 leaves zeros out. */
static void
put_uint (GByteArray *b, guint field, uint64_t v)
{
	if (v == 0)
		return;
	put_tag (b, field, WIRE_VARINT);
	put_varint (b, v);
}

static void
put_bytes (GByteArray *b, guint field, const void *data, gsize len)
{
	put_tag (b, field, WIRE_LEN);
	put_varint (b, len);
	g_byte_array_append (b, data, (guint) len);
}

/* A nested message, MSG, which is emptied for the next one. */
static void
put_message (GByteArray *b, guint field, GByteArray *msg)
{
	put_bytes (b, field, msg->data, msg->len);
	g_byte_array_set_size (msg, 0);
}

/* Repeated integers, packed as proto3 packs them. */
static void
put_packed (GByteArray *b, guint field, const uint64_t *v, guint n, GByteArray *tmp)
{
	if (n == 0)
		return;
	for (guint i = 0; i < n; i++)
		put_varint (tmp, v[i]);
	put_message (b, field, tmp);
}

/* ------------------------------------------------------------ the model */

/* Profile's fields (profile.proto) */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE, PROFILE_MAPPING, PROFILE_LOCATION,
	PROFILE_FUNCTION, PROFILE_STRING_TABLE, PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS, PROFILE_PERIOD_TYPE, PROFILE_PERIOD, PROFILE_COMMENT,
	PROFILE_DEFAULT_SAMPLE_TYPE,
};

/* The sample types, in the order of each sample's values. */
static const char *const sample_types[][2] = {
	{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
	{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
};
#define N_VALUES G_N_ELEMENTS (sample_types)

typedef struct {
	GByteArray *out;           /* the Profile's fields but the strings */
	GByteArray *msg, *sub, *tmp;
	GHashTable *strings;       /* char * -> index + 1 */
	GPtrArray *string_list;    /* in index order */
	GHashTable *functions;     /* "name\nfile" -> id */
	GHashTable *locations;     /* location key -> id */
	GHashTable *mappings;      /* object -> id */
	const MtaRun *run;
	guint64 kind_key, malloc_kind;
} Pprof;

static uint64_t
string_index (Pprof *p, const char *s)
{
	gpointer v = g_hash_table_lookup (p->strings, s);

	if (v != NULL)
		return GPOINTER_TO_UINT (v) - 1;
	char *copy = g_strdup (s);
	g_ptr_array_add (p->string_list, copy);
	g_hash_table_insert (p->strings, copy, GUINT_TO_POINTER (p->string_list->len));
	return p->string_list->len - 1;
}

static void
put_value_type (Pprof *p, guint field, const char *type, const char *unit)
{
	put_uint (p->msg, 1, string_index (p, type));
	put_uint (p->msg, 2, string_index (p, unit));
	put_message (p->out, field, p->msg);
}

/* The name pprof shows for the function of site S: its symbol, else
 * OBJECT+0xOFF (a stripped object), else "??". */
static char *
function_name (const MtaSite *s)
{
	if (s->function[0] == '\0')
		return g_strdup (s->object[0] ? s->object : "??");
	if (g_str_has_prefix (s->function, "0x") && s->object[0])
		return g_strdup_printf ("%s+%s", s->object, s->function);
	return g_strdup (s->function);
}

static uint64_t
function_id (Pprof *p, const MtaSite *s)
{
	g_autofree char *name = function_name (s);
	g_autofree char *key = g_strconcat (name, "\n", s->file, NULL);
	gpointer v = g_hash_table_lookup (p->functions, key);

	if (v != NULL)
		return GPOINTER_TO_UINT (v);
	guint id = g_hash_table_size (p->functions) + 1;
	g_hash_table_insert (p->functions, g_steal_pointer (&key), GUINT_TO_POINTER (id));
	put_uint (p->msg, 1, id);
	put_uint (p->msg, 2, string_index (p, name));
	put_uint (p->msg, 3, string_index (p, name));
	put_uint (p->msg, 4, string_index (p, s->file));
	put_message (p->out, PROFILE_FUNCTION, p->msg);
	return id;
}

/* The mapping of OBJECT: its range and build-id from the trace's
 * '# object' lines when they name it. */
static uint64_t
mapping_id (Pprof *p, const char *object)
{
	gpointer v = g_hash_table_lookup (p->mappings, object);
	uint64_t lo = 0, hi = 0;
	const char *build_id = NULL;

	if (object[0] == '\0')
		return 0;
	if (v != NULL)
		return GPOINTER_TO_UINT (v);
	guint id = g_hash_table_size (p->mappings) + 1;
	g_hash_table_insert (p->mappings, g_strdup (object), GUINT_TO_POINTER (id));
	mta_symbolizer_object_info (mta_run_symbolizer (p->run), object, &lo, &hi, &build_id);
	put_uint (p->msg, 1, id);
	put_uint (p->msg, 2, lo);
	put_uint (p->msg, 3, hi);
	put_uint (p->msg, 5, string_index (p, object));
	put_uint (p->msg, 6, string_index (p, build_id ? build_id : ""));
	for (guint f = 7; f <= 10; f++)     /* has_functions, _filenames, _line_numbers, _inline_frames */
		put_uint (p->msg, f, 1);
	put_message (p->out, PROFILE_MAPPING, p->msg);
	return id;
}

/* The location of frames FIRST..LAST of path P (LAST is the frame the
 * code is in; the ones before it were inlined into it, at its address). */
static uint64_t
location_id (Pprof *p, const MtaPath *path, uint32_t first, uint32_t last)
{
	GPtrArray *sites = mta_run_sites (p->run);
	const MtaSite *outer = sites->pdata[path->frames[last]];
	uint64_t addr = path->addrs ? path->addrs[first] : 0;
	/* With an address, the address is the location; without one (a trace
	 * without stacks), the sites are. */
	g_autoptr (GString) key = g_string_new (NULL);
	if (path->addrs != NULL)
		g_string_printf (key, "@%" PRIx64 "/%u", addr, path->frames[first]);
	else
		for (uint32_t i = first; i <= last; i++)
			g_string_append_printf (key, "%u,", path->frames[i]);
	gpointer v = g_hash_table_lookup (p->locations, key->str);
	if (v != NULL)
		return GPOINTER_TO_UINT (v);

	guint id = g_hash_table_size (p->locations) + 1;
	g_hash_table_insert (p->locations, g_string_free (g_steal_pointer (&key), FALSE),
			     GUINT_TO_POINTER (id));
	uint64_t mapping = mapping_id (p, outer->object);
	uint64_t fids[64];
	guint n = 0;
	for (uint32_t i = first; i <= last && n < G_N_ELEMENTS (fids); i++)
		fids[n++] = function_id (p, sites->pdata[path->frames[i]]);
	put_uint (p->msg, 1, id);
	put_uint (p->msg, 2, mapping);
	put_uint (p->msg, 3, addr);
	for (guint i = 0; i < n; i++) {
		const MtaSite *s = sites->pdata[path->frames[first + i]];
		put_uint (p->sub, 1, fids[i]);
		put_uint (p->sub, 2, s->line);
		put_message (p->msg, 4, p->sub);
	}
	put_message (p->out, PROFILE_LOCATION, p->msg);
	return id;
}

/* The locations of path P's stack, leaf first, from the frame charged. */
static GArray *
path_locations (Pprof *p, const MtaPath *path)
{
	GArray *ids = g_array_new (FALSE, FALSE, sizeof (uint64_t));

	for (uint32_t i = path->site_frame; i < path->nframes;) {
		uint32_t last = i;
		while (mta_path_inlined (path, last) && last + 1 < path->nframes)
			last++;
		uint64_t id = location_id (p, path, i, last);
		g_array_append_val (ids, id);
		i = last + 1;
	}
	return ids;
}

static void
put_sample (Pprof *p, GArray *locations, const uint64_t *values, uint64_t kind)
{
	put_packed (p->msg, 1, (const uint64_t *) (void *) locations->data, locations->len, p->tmp);
	put_packed (p->msg, 2, values, N_VALUES, p->tmp);
	put_uint (p->sub, 1, p->kind_key);
	put_uint (p->sub, 2, kind);
	put_message (p->msg, 3, p->sub);
	put_message (p->out, PROFILE_SAMPLE, p->msg);
}

/* Every path's allocations and blocks not freed, of malloc's family. */
static void
put_malloc_samples (Pprof *p)
{
	GPtrArray *paths = mta_run_paths (p->run);

	for (guint i = 0; i < paths->len; i++) {
		const MtaPath *path = paths->pdata[i];
		uint64_t v[N_VALUES] = { path->allocs, path->bytes_allocated,
					 path->leaked_blocks, path->leaked_bytes };
		if (path->site < 0 || (path->allocs == 0 && path->leaked_blocks == 0))
			continue;
		g_autoptr (GArray) locations = path_locations (p, path);
		put_sample (p, locations, v, p->malloc_kind);
	}
}

/* The blocks a tracked allocator did not take back, per path, labelled
 * with the kind (its allocations are counted by kind, not by path). */
static void
put_kind_samples (Pprof *p)
{
	const MtaKinds *kinds = mta_run_kinds (p->run);
	GPtrArray *paths = mta_run_paths (p->run);

	for (guint k = 0; kinds != NULL && k < mta_kinds_count (kinds); k++) {
		const MtaKind *kind = mta_kinds_get (kinds, k);
		if (kind->leaks == NULL || kind->leaks->len == 0)
			continue;
		g_autoptr (GHashTable) by_path = g_hash_table_new_full (NULL, NULL, NULL, g_free);
		for (guint i = 0; i < kind->leaks->len; i++) {
			const MtaRecord *r = &g_array_index (kind->leaks, MtaRecord, i);
			uint64_t *v = g_hash_table_lookup (by_path, GUINT_TO_POINTER (r->path + 1));
			if (v == NULL) {
				v = g_new0 (uint64_t, N_VALUES);
				g_hash_table_insert (by_path, GUINT_TO_POINTER (r->path + 1), v);
			}
			v[2]++;
			v[3] += r->size;
		}
		uint64_t label = string_index (p, kind->name);
		GHashTableIter it;
		gpointer key, value;
		g_hash_table_iter_init (&it, by_path);
		while (g_hash_table_iter_next (&it, &key, &value)) {
			const MtaPath *path = paths->pdata[GPOINTER_TO_UINT (key) - 1];
			if (path->site < 0)
				continue;
			g_autoptr (GArray) locations = path_locations (p, path);
			put_sample (p, locations, value, label);
		}
	}
}

/* The run's start and length, when the trace has its clock. */
static void
put_times (Pprof *p)
{
	const MtaRunInfo *info = mta_run_info (p->run);
	char *end;

	if (info->start != NULL) {
		uint64_t sec = g_ascii_strtoull (info->start, &end, 10), ns = 0;
		if (*end == '.')
			ns = g_ascii_strtoull (end + 1, NULL, 10);
		put_uint (p->out, PROFILE_TIME_NANOS, sec * 1000000000ull + ns);
	}
	if (info->time_axis)
		put_uint (p->out, PROFILE_DURATION_NANOS, info->end_time_ns);
}

static void
pprof_release (Pprof *p)
{
	g_byte_array_unref (p->out);
	g_byte_array_unref (p->msg);
	g_byte_array_unref (p->sub);
	g_byte_array_unref (p->tmp);
	g_hash_table_unref (p->strings);
	g_ptr_array_unref (p->string_list);
	g_hash_table_unref (p->functions);
	g_hash_table_unref (p->locations);
	g_hash_table_unref (p->mappings);
}

/* The whole profile, unpacked. */
static GByteArray *
encode (const MtaRun *run)
{
	Pprof p = {
		.out = g_byte_array_new (), .msg = g_byte_array_new (),
		.sub = g_byte_array_new (), .tmp = g_byte_array_new (),
		.strings = g_hash_table_new (g_str_hash, g_str_equal),
		.string_list = g_ptr_array_new_with_free_func (g_free),
		.functions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL),
		.locations = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL),
		.mappings = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL),
		.run = run,
	};
	const MtaRunInfo *info = mta_run_info (run);

	string_index (&p, "");
	for (guint i = 0; i < N_VALUES; i++)
		put_value_type (&p, PROFILE_SAMPLE_TYPE, sample_types[i][0], sample_types[i][1]);
	p.kind_key = string_index (&p, "kind");
	p.malloc_kind = string_index (&p, "malloc");
	put_malloc_samples (&p);
	put_kind_samples (&p);
	put_times (&p);
	put_value_type (&p, PROFILE_PERIOD_TYPE, "space", "bytes");
	put_uint (p.out, PROFILE_PERIOD, 1);
	g_autofree char *what = g_strdup_printf ("mtanalyze: %s%s%s",
						 info->exe ? info->exe : "",
						 info->exe ? " " : "",
						 info->traces->len ? (char *) info->traces->pdata[0] : "");
	put_uint (p.out, PROFILE_COMMENT, string_index (&p, what));
	/* the wrappers found without symbols, which no leaf shows: said where
	 * pprof -comments and the web view's header show it */
	g_autoptr (GPtrArray) wrappers = mta_auto_wrappers (run);
	for (guint i = 0; i < wrappers->len; i++) {
		g_autofree char *c = g_strdup_printf ("allocation wrapper found without symbols, skipped: %s",
						      (const char *) wrappers->pdata[i]);
		put_uint (p.out, PROFILE_COMMENT, string_index (&p, c));
	}
	put_uint (p.out, PROFILE_DEFAULT_SAMPLE_TYPE, string_index (&p, "inuse_space"));

	GByteArray *all = g_byte_array_new ();
	for (guint i = 0; i < p.string_list->len; i++) {
		const char *s = p.string_list->pdata[i];
		put_bytes (all, PROFILE_STRING_TABLE, s, strlen (s));
	}
	g_byte_array_append (all, p.out->data, p.out->len);
	pprof_release (&p);
	return all;
}

/* DATA gzip-compressed into PATH, through a temporary file renamed at the
 * end: a reader never sees half a profile. */
static gboolean
write_gzip (const char *path, const GByteArray *data, GError **error)
{
	g_autofree char *tmp = g_strconcat (path, ".tmp", NULL);
	gzFile gz = gzopen (tmp, "wb9");
	gboolean ok;

	if (gz == NULL) {
		g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno),
			     "cannot write '%s': %s", path, g_strerror (errno));
		return FALSE;
	}
	ok = data->len == 0 || gzwrite (gz, data->data, data->len) == (int) data->len;
	ok = gzclose (gz) == Z_OK && ok;
	if (ok && g_rename (tmp, path) == 0)
		return TRUE;
	int e = errno;
	g_unlink (tmp);
	g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "cannot write '%s': %s",
		     path, g_strerror (e));
	return FALSE;
}

gboolean
mta_pprof_write (const char *path, const MtaRun *run, GError **error)
{
	g_autoptr (GByteArray) data = encode (run);
	return write_gzip (path, data, error);
}
