/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kind-json.h -- the tracked kinds in --json: "kinds" (allocators' leaks
 * and bad frees by site) and "refcounts" (unbalanced reference counts),
 * documented in share/json-format.md. */
#ifndef MTA_KIND_JSON_H
#define MTA_KIND_JSON_H

#include <stdio.h>
#include "run.h"

/* Write the members "kinds" and "refcounts", each followed by ",\n".
 * FRAMES: the callers given with each reference path. */
void mta_kind_json (const MtaRun *run, int frames, FILE *out);

#endif
