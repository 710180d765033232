/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* outputs.c -- the one place that decides which output the options select
 * (outputs.h).  Standard output gets one format: the first of the
 * precedence below that was asked for; the files (--html, --pprof) are
 * written besides, and when they are all there is, standard output gets
 * a line naming each.
 */
#include "outputs.h"
#include "escape.h"

#include <stdio.h>

static gboolean asked_folded (const MtaOutputRequest *r) { return r->folded != NULL; }
static gboolean asked_json (const MtaOutputRequest *r) { return r->json; }
static gboolean asked_by_site (const MtaOutputRequest *r) { return r->by_site; }
static gboolean asked_db (const MtaOutputRequest *r) { return r->db != NULL; }
static gboolean asked_gate (const MtaOutputRequest *r) { return r->gate; }

static gboolean
asked_files (const MtaOutputRequest *r)
{
	for (int i = 0; i < MTA_FILE_N; i++)
		if (r->files[i] != NULL)
			return TRUE;
	return FALSE;
}

/* Standard output's format: the first asked for wins. */
static const struct {
	MtaOut out;
	gboolean (*asked) (const MtaOutputRequest *r);
} precedence[] = {
	{ MTA_OUT_FOLDED, asked_folded },
	{ MTA_OUT_JSON, asked_json },
	{ MTA_OUT_TEXT, asked_by_site },
	{ MTA_OUT_LOADED, asked_db },
	{ MTA_OUT_WRITTEN, asked_files },
	{ MTA_OUT_TEXT, asked_gate },    /* --growth alone: the report it filters */
};

static gboolean
bad_value (GError **error, const char *message)
{
	g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, message);
	return FALSE;
}

/* The options that need another, or exclude one. */
static gboolean
check_together (const MtaOutputRequest *r, GError **error)
{
	if (r->host != NULL && r->db == NULL)
		return bad_value (error, "--host needs --db");
	if (r->all_events && r->db == NULL)
		return bad_value (error, "--all-events needs --db");
	if (r->folded_count != NULL && r->folded == NULL)
		return bad_value (error, "--folded-count needs --folded");
	if (r->folded != NULL && r->json)
		return bad_value (error, "--folded prints its own report: not with --json");
	if (r->folded != NULL && r->by_site)
		return bad_value (error, "--folded prints its own report: not with --by-site");
	return TRUE;
}

gboolean
mta_outputs_resolve (const MtaOutputRequest *req, MtaOutputs *out, GError **error)
{
	*out = (MtaOutputs) { .out = req->fallback, .folded = MTA_FOLDED_NONE };
	if (!check_together (req, error))
		return FALSE;
	for (gsize i = 0; i < G_N_ELEMENTS (precedence); i++)
		if (precedence[i].asked (req)) {
			out->out = precedence[i].out;
			break;
		}
	for (int i = 0; i < MTA_FILE_N; i++)
		out->files[i] = req->files[i];
	if (req->folded != NULL &&
	    !(mta_folded_parse (req->folded, &out->folded, error) &&
	      mta_folded_parse_count (req->folded_count, out->folded, &out->folded_blocks, error)))
		return FALSE;
	return TRUE;
}

gboolean
mta_outputs_by_site (const MtaOutputs *o)
{
	return o->out != MTA_OUT_SCRIPT;
}

FILE *
mta_outputs_stream (MtaOut out)
{
	return out == MTA_OUT_JSON ? stdout : mta_text_out ();
}
