-- schema.sql -- the database `mtanalyze --db FILE` loads runs into.
--
-- One file holds many runs; each load adds one run in one transaction.
-- Call sites are shared by all runs and keyed by strings that stay the
-- same from one build to the next (function, source file, line, object),
-- never by address, so that runs of two builds compare (compare-runs.sql,
-- `mtanalyze diff`).  Everything else belongs to one run (run_id).
-- See share/database.md.  mtanalyze runs this file (every statement is
-- idempotent) at the start of each load; `sqlite3 x.db < schema.sql`
-- makes an empty database.
--
-- The same file makes a PostgreSQL database (--db postgresql://...,
-- share/fleet.md): mtanalyze changes a few words for it, in one place
-- (analyzer/db/db-conn.c, mta_conn_schema): INTEGER is BIGINT there
-- (SQLite's is 64-bit), an INTEGER PRIMARY KEY an identity column, REAL
-- DOUBLE PRECISION, WITHOUT ROWID goes, a view is CREATE OR REPLACE,
-- printf ('0x%x', X) is '0x' || to_hex (X), and the PRAGMAs are rows of
-- a table mta_pragma.  Everything else is SQL both engines take: no
-- bare column beside GROUP BY but of a grouped primary key, no
-- group_concat, no round (double, n), no char (), "binary" quoted.
--
-- Addresses are stored as INTEGER (64-bit, signed: an address at or above
-- 2^63 reads as negative); the views add them in hex.  Line numbers count
-- the lines of the trace from 1, across all its parts, as mtrace does.

PRAGMA application_id = 1836348003;   -- 0x6d747263, "mtrc"
PRAGMA user_version = 8;              -- this schema's version
-- Version 2 (issue 7) added the columns marked "v2" and the tables
-- timeline and site_timeline; mtanalyze adds them to a version 1 database
-- (ALTER TABLE) at its next load.  Runs loaded before have NULL there.
-- Version 3 (issue 18) added the columns marked "v3" (what the recorder
-- did not record); the same holds for them.  Version 4 (issue 11) added
-- frames.inlined; the view stack_frames is made again to show it.
-- Version 5 (issue 10) added the tables of the tracked kinds (kind_stats,
-- kind_leaks, kind_bad_frees, refcounts, refcount_paths) and their views;
-- the tables of malloc stay malloc's alone.  An older database gets them
-- at its next load; runs loaded before have no rows there.  Version 6
-- (issue 17) added the columns marked "v6" (the recorder's verdicts of
-- reachability, share/reach.md) and the view leaks_by_reach; leak_list is
-- made again to show them.  Runs loaded before have NULL there.  Version
-- 7 (issue 31) added the columns marked "v7" (frames by build-id and
-- offset, a run's host and build) and made leaks_by_reach and
-- stack_frames again (the same in PostgreSQL).  Version 8 (issue 30)
-- keeps a site's timeline as the ranges of samples over which it stays
-- the same (site_timeline_ranges: a site that leaks one block has two,
-- where it had a row at each of up to 64 samples); site_timeline is the
-- view of them a sample a row, with the columns of the table it was.  An
-- older database's table becomes ranges of one sample each at its next
-- load (SQLite and PostgreSQL alike), and leak_growth is made again.

-- One load of a trace.
CREATE TABLE IF NOT EXISTS runs (
	id INTEGER PRIMARY KEY,
	loaded_at TEXT NOT NULL,          -- when it was loaded, UTC ISO 8601
	traces TEXT NOT NULL,             -- the trace files, in order, one per line
	"binary" TEXT,                    -- the BINARY argument, if any
	pid INTEGER,                      -- '# pid' (mtrec traces), else NULL
	ppid INTEGER,
	exe TEXT,                         -- '# exe': the executable
	cmdline TEXT,                     -- '# cmdline': its arguments
	start_time TEXT,                  -- '# start', UTC ISO 8601 (ns)
	start_epoch REAL,                 -- the same, seconds since 1970
	stack_depth INTEGER,              -- '# depth': frames per stack (1: none)
	skip_wrappers INTEGER NOT NULL,   -- 1: leaks charged past allocation wrappers
	all_events INTEGER NOT NULL,      -- 1: the events table has this run
	analyzer_version TEXT NOT NULL,
	lines INTEGER NOT NULL,           -- lines read
	unreadable_lines INTEGER NOT NULL,
	events INTEGER NOT NULL,          -- + - < > ! lines
	allocations INTEGER NOT NULL,     -- blocks allocated ('+', '>')
	frees INTEGER NOT NULL,           -- blocks freed ('-', '<' of a live block)
	reallocations INTEGER NOT NULL,   -- '>' lines
	failed_allocations INTEGER NOT NULL,    -- '+ (nil)', '!'
	duplicate_allocations INTEGER NOT NULL, -- an allocation of a live address
	bytes_allocated INTEGER NOT NULL,
	peak_live_bytes INTEGER NOT NULL, -- most bytes live at once
	leaked_blocks INTEGER NOT NULL,   -- blocks never freed: mtrace's "Memory not freed"
	leaked_bytes INTEGER NOT NULL,
	bad_frees INTEGER NOT NULL,       -- frees and reallocs of memory never allocated
	peak_line INTEGER,                -- v2: trace line where peak_live_bytes was reached
	peak_time_ns INTEGER,             -- v2: its time ('# time' clock), NULL without one
	temporary_allocations INTEGER,    -- v2: blocks freed before any other allocation in their thread
	timeline_axis TEXT,               -- v2: 'time' or 'line' (see timeline)
	stopped_line INTEGER,             -- v3: line of '# stopped': the recorder stopped for good
	                                  --     there, and leaked_* count the blocks live then;
	                                  --     NULL: it recorded to the end
	stop_reason TEXT,                 -- v3: why it stopped ('the disk is full: ...')
	lost_events INTEGER,              -- v3: events not recorded (sum of '# lost'), NULL: none said
	lost_reason TEXT,                 -- v3: why (the first '# lost' line's)
	freeres TEXT,                     -- v3: '# freeres': 'done', or 'skipped: WHY' (libc's caches
	                                  --     were not released: libc's own blocks show as leaks)
	reach_line INTEGER,               -- v6: the '# reach begin' line of the scan whose verdicts
	                                  --     leaks.reach holds; NULL: the trace has none
	reach_finished INTEGER,           -- v6: 1 when that scan has its '# reach end' line
	reach_notes TEXT,                 -- v6: its '# reach unscanned' lines (WHAT: WHY), one per line
	leak_kinds TEXT,                  -- v6: the kinds --leaks kept ('definite,indirect'), NULL: all;
	                                  --     leaked_* and the leaks rows are those kinds only
	all_leaked_blocks INTEGER,        -- v6: every block not freed, whatever --leaks kept
	all_leaked_bytes INTEGER,
	host TEXT,                        -- v7: the host the run is from (--host, default the
	                                  --     loading machine's name)
	build_id TEXT                     -- v7: the program's GNU build-id ('# object'), NULL: not
	                                  --     recorded: runs of one build share it
);

-- A source location: where a block was allocated (charged), or one frame
-- of a stack.  function is the symbol ("0xOFFSET" when the object has
-- none), file '' and line 0 when there is no debug information.
CREATE TABLE IF NOT EXISTS sites (
	id INTEGER PRIMARY KEY,
	function TEXT NOT NULL,
	file TEXT NOT NULL,
	line INTEGER NOT NULL,
	object TEXT NOT NULL,             -- the executable or library ('' unknown)
	UNIQUE (function, file, line, object)
);

-- A call path of one run: a recorded stack ('# stack', s=ID), or the
-- caller field alone when the trace has no stacks.  Its blocks are
-- charged to site_id, the first frame that is not an allocation wrapper.
CREATE TABLE IF NOT EXISTS stacks (
	id INTEGER PRIMARY KEY,
	run_id INTEGER NOT NULL REFERENCES runs (id),
	trace_stack INTEGER,              -- the trace's stack id; NULL: no stack
	caller TEXT NOT NULL,             -- the caller field of its first event
	site_id INTEGER NOT NULL REFERENCES sites (id),
	site_level INTEGER NOT NULL,      -- frames.level of the charged frame
	depth INTEGER NOT NULL,           -- its frames
	allocations INTEGER NOT NULL,
	frees INTEGER NOT NULL,
	bytes_allocated INTEGER NOT NULL,
	leaked_blocks INTEGER NOT NULL,
	leaked_bytes INTEGER NOT NULL,
	bad_frees INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS stacks_run ON stacks (run_id, site_id);

-- The frames of a stack, innermost (level 0, the caller of malloc) first.
-- Code the compiler inlined is one frame per function at one address: the
-- inlined function (inlined = 1) at the line of the code, then the
-- function it was inlined into at the line of the inlined call (DWARF),
-- out to the function that holds the code (inlined = 0).
CREATE TABLE IF NOT EXISTS frames (
	stack_id INTEGER NOT NULL REFERENCES stacks (id),
	level INTEGER NOT NULL,
	address INTEGER,                  -- run-time address; NULL: no stack
	site_id INTEGER NOT NULL REFERENCES sites (id),
	inlined INTEGER,                  -- v4: 1 when this function was inlined into the
	                                  --     next level's (same address), else 0
	build_id TEXT,                    -- v7: the GNU build-id of the object of the address
	object_offset INTEGER,            -- v7: the address in that object (address minus where
	                                  --     it was loaded): the same in every run of a build,
	                                  --     whatever the address layout; NULL: not known
	PRIMARY KEY (stack_id, level)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS frames_site ON frames (site_id);

-- What happened at each site charged in a run.
CREATE TABLE IF NOT EXISTS site_stats (
	run_id INTEGER NOT NULL REFERENCES runs (id),
	site_id INTEGER NOT NULL REFERENCES sites (id),
	allocations INTEGER NOT NULL,
	frees INTEGER NOT NULL,           -- of blocks allocated here
	bytes_allocated INTEGER NOT NULL,
	peak_live_bytes INTEGER NOT NULL, -- most bytes from here live at once
	leaked_blocks INTEGER NOT NULL,
	leaked_bytes INTEGER NOT NULL,
	bad_frees INTEGER NOT NULL,       -- frees here of memory never allocated
	first_line INTEGER NOT NULL,      -- first event charged here
	growth TEXT,                      -- v2: how its leak grew: constant, logarithmic,
	                                  --     linear, exponential (share/growth.md); NULL no leak
	growth_exponent REAL,             -- v2: p of the fit y = a + b x^p (0: not fitted)
	temporary_allocations INTEGER,    -- v2: allocated here, freed before any other allocation
	peak_share_bytes INTEGER,         -- v2: bytes from here live at the run's peak
	PRIMARY KEY (run_id, site_id)
) WITHOUT ROWID;

-- v2: the moments at which every site's live blocks and bytes were sampled
-- (up to 64, evenly spaced in lines; the last is the end of the run).
CREATE TABLE IF NOT EXISTS timeline (
	run_id INTEGER NOT NULL REFERENCES runs (id),
	seq INTEGER NOT NULL,             -- 0, 1, ...
	line INTEGER NOT NULL,            -- trace line of the sample
	time_ns INTEGER,                  -- its time, NULL when runs.timeline_axis = 'line'
	PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

-- v8: live blocks and bytes of each leaking site over the samples SEQ to
-- UNTIL_SEQ - 1, in which they stay the same (every sample of the run is
-- in one range of each leaking site: the ones where it held nothing too).
CREATE TABLE IF NOT EXISTS site_timeline_ranges (
	run_id INTEGER NOT NULL REFERENCES runs (id),
	site_id INTEGER NOT NULL REFERENCES sites (id),
	seq INTEGER NOT NULL,             -- timeline.seq of the range's first sample
	until_seq INTEGER NOT NULL,       -- one past its last
	live_blocks INTEGER NOT NULL,
	live_bytes INTEGER NOT NULL,
	PRIMARY KEY (run_id, site_id, seq)
) WITHOUT ROWID;

-- Blocks never freed.
CREATE TABLE IF NOT EXISTS leaks (
	run_id INTEGER NOT NULL REFERENCES runs (id),
	address INTEGER NOT NULL,
	size INTEGER NOT NULL,
	site_id INTEGER NOT NULL REFERENCES sites (id),
	stack_id INTEGER NOT NULL REFERENCES stacks (id),
	line INTEGER NOT NULL,            -- the allocation's line in the trace
	thread INTEGER,                   -- '# T' thread id; NULL: not recorded
	reach TEXT                        -- v6: 'definite', 'indirect', 'possible', 'reachable',
	                                  --     'unknown' (no verdict); NULL: the trace has none
);
CREATE INDEX IF NOT EXISTS leaks_run ON leaks (run_id, site_id);

-- Frees (kind 'free') and reallocs ('realloc') of memory never allocated,
-- charged to the site of the free.  At most 2^20 per run are kept one by
-- one; runs.bad_frees and site_stats.bad_frees count them all.
CREATE TABLE IF NOT EXISTS bad_frees (
	run_id INTEGER NOT NULL REFERENCES runs (id),
	address INTEGER NOT NULL,
	kind TEXT NOT NULL,
	site_id INTEGER NOT NULL REFERENCES sites (id),
	stack_id INTEGER NOT NULL REFERENCES stacks (id),
	line INTEGER NOT NULL,
	thread INTEGER
);
CREATE INDEX IF NOT EXISTS bad_frees_run ON bad_frees (run_id, site_id);

-- Thread names ('# thread TID NAME').
CREATE TABLE IF NOT EXISTS threads (
	run_id INTEGER NOT NULL REFERENCES runs (id),
	tid INTEGER NOT NULL,
	name TEXT NOT NULL,
	PRIMARY KEY (run_id, tid)
) WITHOUT ROWID;

-- Every event, only for runs loaded with --all-events (about 25 bytes and
-- 2 microseconds of loading per event).  op is the trace's
-- operator: '+' allocation, '-' free, '<' '>' realloc from / to, '!'
-- failed realloc.  The event's own call path is stack_id (for a free,
-- the path of the free, not of the allocation).
CREATE TABLE IF NOT EXISTS events (
	run_id INTEGER NOT NULL REFERENCES runs (id),
	line INTEGER NOT NULL,
	op TEXT NOT NULL,
	address INTEGER NOT NULL,
	size INTEGER,                     -- NULL for '-' and '<'
	stack_id INTEGER NOT NULL REFERENCES stacks (id),
	thread INTEGER,
	PRIMARY KEY (run_id, line)
) WITHOUT ROWID;

-- v5: the tracked kinds ("# k KIND" lines: other allocators, reference
-- counts; share/analyzer.md "Other allocators and reference counts").
-- malloc's tables above hold malloc's events only.

-- Each kind of a run: its totals.
CREATE TABLE IF NOT EXISTS kinds (
	run_id INTEGER NOT NULL REFERENCES runs (id),
	kind TEXT NOT NULL,               -- 'pool', 'rte', 'dict_t', ...
	allocations INTEGER NOT NULL,     -- '+' that stored a block
	releases INTEGER NOT NULL,        -- '-' of blocks it allocated
	bytes_allocated INTEGER NOT NULL,
	leaked_blocks INTEGER NOT NULL,
	leaked_bytes INTEGER NOT NULL,
	bad_frees INTEGER NOT NULL,       -- '-' of blocks it never allocated
	references_taken INTEGER NOT NULL,   -- 'r'
	references_dropped INTEGER NOT NULL, -- 'u'
	PRIMARY KEY (run_id, kind)
) WITHOUT ROWID;

-- Leaks and bad frees of each kind by call site.
CREATE TABLE IF NOT EXISTS kind_stats (
	run_id INTEGER NOT NULL REFERENCES runs (id),
	kind TEXT NOT NULL,
	site_id INTEGER NOT NULL REFERENCES sites (id),
	leaked_blocks INTEGER NOT NULL,
	leaked_bytes INTEGER NOT NULL,
	bad_frees INTEGER NOT NULL,
	first_line INTEGER NOT NULL,      -- its first leaked block or bad free
	PRIMARY KEY (run_id, kind, site_id)
) WITHOUT ROWID;

-- Blocks of a kind never released.
CREATE TABLE IF NOT EXISTS kind_leaks (
	run_id INTEGER NOT NULL REFERENCES runs (id),
	kind TEXT NOT NULL,
	address INTEGER NOT NULL,
	size INTEGER NOT NULL,            -- 0: the event did not say
	site_id INTEGER NOT NULL REFERENCES sites (id),
	stack_id INTEGER NOT NULL REFERENCES stacks (id),
	line INTEGER NOT NULL,
	thread INTEGER
);
CREATE INDEX IF NOT EXISTS kind_leaks_run ON kind_leaks (run_id, kind, site_id);

-- Releases by a kind of blocks it never allocated (at most 2^16 per kind
-- and run one by one; kinds.bad_frees counts them all).
CREATE TABLE IF NOT EXISTS kind_bad_frees (
	run_id INTEGER NOT NULL REFERENCES runs (id),
	kind TEXT NOT NULL,
	address INTEGER NOT NULL,
	site_id INTEGER NOT NULL REFERENCES sites (id),
	stack_id INTEGER NOT NULL REFERENCES stacks (id),
	line INTEGER NOT NULL,
	thread INTEGER
);

-- Objects whose reference count is not zero at the end of the run, or
-- went below zero: one row for the objects with the same end count, fate
-- and call paths (entry numbers them within the kind, most objects first).
CREATE TABLE IF NOT EXISTS refcounts (
	run_id INTEGER NOT NULL REFERENCES runs (id),
	kind TEXT NOT NULL,
	entry INTEGER NOT NULL,           -- 0, 1, ...
	objects INTEGER NOT NULL,
	net_count INTEGER NOT NULL,       -- each object's count at the end
	below_zero INTEGER NOT NULL,      -- 1: the count went below zero
	lowest_count INTEGER NOT NULL,
	example INTEGER NOT NULL,         -- the address of one of the objects
	first_line INTEGER NOT NULL,
	PRIMARY KEY (run_id, kind, entry)
) WITHOUT ROWID;

-- The call paths of each refcounts entry: references taken (op 'r', the
-- allocation of an object its kind allocated counting as one) and
-- dropped ('u'), summed over its objects.
CREATE TABLE IF NOT EXISTS refcount_paths (
	run_id INTEGER NOT NULL REFERENCES runs (id),
	kind TEXT NOT NULL,
	entry INTEGER NOT NULL,
	op TEXT NOT NULL,                 -- 'r' or 'u'
	stack_id INTEGER NOT NULL REFERENCES stacks (id),
	site_id INTEGER NOT NULL REFERENCES sites (id),
	count INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS refcount_paths_run ON refcount_paths (run_id, kind, entry);

-- ---------------------------------------------------------------- views

-- Sites with what happened there, per run.
CREATE VIEW IF NOT EXISTS site_summary AS
SELECT st.run_id, s.id AS site_id, s.function, s.file, s.line,
       CASE WHEN s.file = '' THEN '' ELSE s.file || ':' || s.line END AS location,
       s.object, st.allocations, st.frees, st.bytes_allocated, st.peak_live_bytes,
       st.leaked_blocks, st.leaked_bytes, st.bad_frees, st.first_line,
       st.growth, st.growth_exponent, st.temporary_allocations, st.peak_share_bytes
FROM site_stats st JOIN sites s ON s.id = st.site_id;

-- Leaks by call site, per run (order by leaked_bytes DESC for the report).
CREATE VIEW IF NOT EXISTS leaks_by_site AS
SELECT run_id, site_id, function, location, object, leaked_blocks, leaked_bytes,
       allocations, frees, peak_live_bytes, first_line, file, line, growth
FROM site_summary WHERE leaked_blocks > 0;

-- v2: live blocks and bytes of each leaking site at each sample (a table
-- until v8).
CREATE VIEW IF NOT EXISTS site_timeline AS
SELECT r.run_id, r.site_id, t.seq, r.live_blocks, r.live_bytes
FROM site_timeline_ranges r JOIN timeline t
  ON t.run_id = r.run_id AND t.seq >= r.seq AND t.seq < r.until_seq;

-- v2: each leaking site's live blocks and bytes over the run.
CREATE VIEW IF NOT EXISTS leak_growth AS
SELECT g.run_id, g.site_id, s.function,
       CASE WHEN s.file = '' THEN '' ELSE s.file || ':' || s.line END AS location,
       st.growth, g.seq, t.line, t.time_ns, g.live_blocks, g.live_bytes
FROM site_timeline g JOIN timeline t ON t.run_id = g.run_id AND t.seq = g.seq
JOIN sites s ON s.id = g.site_id
JOIN site_stats st ON st.run_id = g.run_id AND st.site_id = g.site_id;

-- Each leaked block with its site.
CREATE VIEW IF NOT EXISTS leak_list AS
SELECT l.run_id, printf ('0x%x', l.address) AS address, l.size, s.function,
       CASE WHEN s.file = '' THEN '' ELSE s.file || ':' || s.line END AS location,
       s.object, l.line, l.thread, t.name AS thread_name, l.stack_id, l.site_id, l.reach
FROM leaks l JOIN sites s ON s.id = l.site_id
LEFT JOIN threads t ON t.run_id = l.run_id AND t.tid = l.thread;

-- v6: the blocks not freed of each site by reachability (valgrind's
-- kinds, share/reach.md), per run; only runs whose trace has verdicts.
CREATE VIEW IF NOT EXISTS leaks_by_reach AS
SELECT l.run_id, s.id AS site_id, s.function,
       CASE WHEN s.file = '' THEN '' ELSE s.file || ':' || s.line END AS location,
       s.object, l.reach, count (*) AS blocks, sum (l.size) AS bytes
FROM leaks l JOIN sites s ON s.id = l.site_id
WHERE l.reach IS NOT NULL
GROUP BY l.run_id, s.id, l.reach;

-- Frees of memory never allocated, by site of the free.
CREATE VIEW IF NOT EXISTS bad_frees_by_site AS
SELECT run_id, site_id, function, location, object, bad_frees, first_line, file, line
FROM site_summary WHERE bad_frees > 0;

-- Each bad free with its site.
CREATE VIEW IF NOT EXISTS bad_free_list AS
SELECT b.run_id, printf ('0x%x', b.address) AS address, b.kind, s.function,
       CASE WHEN s.file = '' THEN '' ELSE s.file || ':' || s.line END AS location,
       s.object, b.line, b.thread, b.stack_id, b.site_id
FROM bad_frees b JOIN sites s ON s.id = b.site_id;

-- Stacks frame by frame, with their locations.
CREATE VIEW IF NOT EXISTS stack_frames AS
SELECT f.stack_id, st.run_id, f.level,
       CASE WHEN f.level = st.site_level THEN 1 ELSE 0 END AS charged,
       printf ('0x%x', f.address) AS address, s.function,
       CASE WHEN s.file = '' THEN '' ELSE s.file || ':' || s.line END AS location,
       s.object, f.site_id, f.inlined, f.build_id, printf ('0x%x', f.object_offset) AS offset_hex
FROM frames f JOIN stacks st ON st.id = f.stack_id JOIN sites s ON s.id = f.site_id;

-- v5: leaks of each tracked kind by call site, per run.
CREATE VIEW IF NOT EXISTS kind_leaks_by_site AS
SELECT k.run_id, k.kind, k.site_id, s.function,
       CASE WHEN s.file = '' THEN '' ELSE s.file || ':' || s.line END AS location,
       s.object, k.leaked_blocks, k.leaked_bytes, k.first_line, s.file, s.line
FROM kind_stats k JOIN sites s ON s.id = k.site_id WHERE k.leaked_blocks > 0;

-- v5: the call paths of the unbalanced reference counts, with their sites.
CREATE VIEW IF NOT EXISTS refcount_list AS
SELECT r.run_id, r.kind, r.entry, r.objects, r.net_count, r.below_zero,
       printf ('0x%x', r.example) AS example, p.op, p.count, s.function,
       CASE WHEN s.file = '' THEN '' ELSE s.file || ':' || s.line END AS location,
       s.object, p.stack_id
FROM refcounts r JOIN refcount_paths p
  ON p.run_id = r.run_id AND p.kind = r.kind AND p.entry = r.entry
JOIN sites s ON s.id = p.site_id;
