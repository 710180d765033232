/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pprof-out.h -- the run as a pprof profile (--pprof FILE): the
 * gzip-compressed profile.proto that go tool pprof, speedscope, Pyroscope,
 * Grafana and Perfetto read.  share/pprof.md. */
#ifndef MTA_PPROF_OUT_H
#define MTA_PPROF_OUT_H

#include <glib.h>
#include "run.h"

/* Write RUN to PATH (whole or not at all): one sample per call path with
 * the values alloc_objects, alloc_space, inuse_objects, inuse_space (the
 * blocks and bytes not freed, as the report counts them), its stack from
 * the site charged outwards (the allocation wrappers skipped, as in the
 * report), and a "kind" label; the leaks of tracked allocators as samples
 * of their own kind. */
gboolean mta_pprof_write (const char *path, const MtaRun *run, GError **error);

#endif
