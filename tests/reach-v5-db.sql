-- reach-v5-db.sql -- a database of schema version 5, as mtanalyze wrote it
-- before the reachability columns (main at dfb1fa3: mtanalyze --db v5.db of
-- a two-block malloc trace), dumped with sqlite3 .dump, plus its two
-- pragmas, which .dump leaves out.  t3410 loads it to test the migration
-- to v6.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE runs (
	id INTEGER PRIMARY KEY,
	loaded_at TEXT NOT NULL,          -- when it was loaded, UTC ISO 8601
	traces TEXT NOT NULL,             -- the trace files, in order, one per line
	binary TEXT,                      -- the BINARY argument, if any
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
	freeres TEXT                      -- v3: '# freeres': 'done', or 'skipped: WHY' (libc's caches
	                                  --     were not released: libc's own blocks show as leaks)
);
INSERT INTO runs VALUES(1,'2026-11-23T08:08:05.764Z','v5.log',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,1,0,'0.1.0',4,0,2,2,0,0,0,0,112,112,2,112,0,3,NULL,0,'line',NULL,NULL,NULL,NULL,NULL);
CREATE TABLE sites (
	id INTEGER PRIMARY KEY,
	function TEXT NOT NULL,
	file TEXT NOT NULL,
	line INTEGER NOT NULL,
	object TEXT NOT NULL,             -- the executable or library ('' unknown)
	UNIQUE (function, file, line, object)
);
INSERT INTO sites VALUES(1,'a+0x10','',0,'./app');
INSERT INTO sites VALUES(2,'b+0x10','',0,'./app');
CREATE TABLE stacks (
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
INSERT INTO stacks VALUES(1,1,NULL,'./app:(a+10)[0x1010]',1,0,1,1,0,48,1,48,0);
INSERT INTO stacks VALUES(2,1,NULL,'./app:(b+10)[0x1110]',2,0,1,1,0,64,1,64,0);
CREATE TABLE frames (
	stack_id INTEGER NOT NULL REFERENCES stacks (id),
	level INTEGER NOT NULL,
	address INTEGER,                  -- run-time address; NULL: no stack
	site_id INTEGER NOT NULL REFERENCES sites (id),
	inlined INTEGER,                  -- v4: 1 when this function was inlined into the
	                                  --     next level's (same address), else 0
	PRIMARY KEY (stack_id, level)
) WITHOUT ROWID;
INSERT INTO frames VALUES(1,0,NULL,1,0);
INSERT INTO frames VALUES(2,0,NULL,2,0);
CREATE TABLE site_stats (
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
INSERT INTO site_stats VALUES(1,1,1,0,48,48,1,48,0,2,'constant',0.0,0,48);
INSERT INTO site_stats VALUES(1,2,1,0,64,64,1,64,0,3,'constant',0.0,0,64);
CREATE TABLE timeline (
	run_id INTEGER NOT NULL REFERENCES runs (id),
	seq INTEGER NOT NULL,             -- 0, 1, ...
	line INTEGER NOT NULL,            -- trace line of the sample
	time_ns INTEGER,                  -- its time, NULL when runs.timeline_axis = 'line'
	PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
INSERT INTO timeline VALUES(1,0,2,NULL);
INSERT INTO timeline VALUES(1,1,3,NULL);
INSERT INTO timeline VALUES(1,2,5,NULL);
CREATE TABLE site_timeline (
	run_id INTEGER NOT NULL REFERENCES runs (id),
	site_id INTEGER NOT NULL REFERENCES sites (id),
	seq INTEGER NOT NULL,             -- timeline.seq
	live_blocks INTEGER NOT NULL,
	live_bytes INTEGER NOT NULL,
	PRIMARY KEY (run_id, site_id, seq)
) WITHOUT ROWID;
INSERT INTO site_timeline VALUES(1,1,0,0,0);
INSERT INTO site_timeline VALUES(1,1,1,1,48);
INSERT INTO site_timeline VALUES(1,1,2,1,48);
INSERT INTO site_timeline VALUES(1,2,0,0,0);
INSERT INTO site_timeline VALUES(1,2,1,0,0);
INSERT INTO site_timeline VALUES(1,2,2,1,64);
CREATE TABLE leaks (
	run_id INTEGER NOT NULL REFERENCES runs (id),
	address INTEGER NOT NULL,
	size INTEGER NOT NULL,
	site_id INTEGER NOT NULL REFERENCES sites (id),
	stack_id INTEGER NOT NULL REFERENCES stacks (id),
	line INTEGER NOT NULL,            -- the allocation's line in the trace
	thread INTEGER                    -- '# T' thread id; NULL: not recorded
);
INSERT INTO leaks VALUES(1,4096,48,1,1,2,NULL);
INSERT INTO leaks VALUES(1,8192,64,2,2,3,NULL);
CREATE TABLE bad_frees (
	run_id INTEGER NOT NULL REFERENCES runs (id),
	address INTEGER NOT NULL,
	kind TEXT NOT NULL,
	site_id INTEGER NOT NULL REFERENCES sites (id),
	stack_id INTEGER NOT NULL REFERENCES stacks (id),
	line INTEGER NOT NULL,
	thread INTEGER
);
CREATE TABLE threads (
	run_id INTEGER NOT NULL REFERENCES runs (id),
	tid INTEGER NOT NULL,
	name TEXT NOT NULL,
	PRIMARY KEY (run_id, tid)
) WITHOUT ROWID;
CREATE TABLE events (
	run_id INTEGER NOT NULL REFERENCES runs (id),
	line INTEGER NOT NULL,
	op TEXT NOT NULL,
	address INTEGER NOT NULL,
	size INTEGER,                     -- NULL for '-' and '<'
	stack_id INTEGER NOT NULL REFERENCES stacks (id),
	thread INTEGER,
	PRIMARY KEY (run_id, line)
) WITHOUT ROWID;
CREATE TABLE kinds (
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
CREATE TABLE kind_stats (
	run_id INTEGER NOT NULL REFERENCES runs (id),
	kind TEXT NOT NULL,
	site_id INTEGER NOT NULL REFERENCES sites (id),
	leaked_blocks INTEGER NOT NULL,
	leaked_bytes INTEGER NOT NULL,
	bad_frees INTEGER NOT NULL,
	first_line INTEGER NOT NULL,      -- its first leaked block or bad free
	PRIMARY KEY (run_id, kind, site_id)
) WITHOUT ROWID;
CREATE TABLE kind_leaks (
	run_id INTEGER NOT NULL REFERENCES runs (id),
	kind TEXT NOT NULL,
	address INTEGER NOT NULL,
	size INTEGER NOT NULL,            -- 0: the event did not say
	site_id INTEGER NOT NULL REFERENCES sites (id),
	stack_id INTEGER NOT NULL REFERENCES stacks (id),
	line INTEGER NOT NULL,
	thread INTEGER
);
CREATE TABLE kind_bad_frees (
	run_id INTEGER NOT NULL REFERENCES runs (id),
	kind TEXT NOT NULL,
	address INTEGER NOT NULL,
	site_id INTEGER NOT NULL REFERENCES sites (id),
	stack_id INTEGER NOT NULL REFERENCES stacks (id),
	line INTEGER NOT NULL,
	thread INTEGER
);
CREATE TABLE refcounts (
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
CREATE TABLE refcount_paths (
	run_id INTEGER NOT NULL REFERENCES runs (id),
	kind TEXT NOT NULL,
	entry INTEGER NOT NULL,
	op TEXT NOT NULL,                 -- 'r' or 'u'
	stack_id INTEGER NOT NULL REFERENCES stacks (id),
	site_id INTEGER NOT NULL REFERENCES sites (id),
	count INTEGER NOT NULL
);
CREATE INDEX stacks_run ON stacks (run_id, site_id);
CREATE INDEX frames_site ON frames (site_id);
CREATE INDEX leaks_run ON leaks (run_id, site_id);
CREATE INDEX bad_frees_run ON bad_frees (run_id, site_id);
CREATE INDEX kind_leaks_run ON kind_leaks (run_id, kind, site_id);
CREATE INDEX refcount_paths_run ON refcount_paths (run_id, kind, entry);
CREATE VIEW site_summary AS
SELECT st.run_id, s.id AS site_id, s.function, s.file, s.line,
       CASE WHEN s.file = '' THEN '' ELSE s.file || ':' || s.line END AS location,
       s.object, st.allocations, st.frees, st.bytes_allocated, st.peak_live_bytes,
       st.leaked_blocks, st.leaked_bytes, st.bad_frees, st.first_line,
       st.growth, st.growth_exponent, st.temporary_allocations, st.peak_share_bytes
FROM site_stats st JOIN sites s ON s.id = st.site_id;
CREATE VIEW leaks_by_site AS
SELECT run_id, site_id, function, location, object, leaked_blocks, leaked_bytes,
       allocations, frees, peak_live_bytes, first_line, file, line, growth
FROM site_summary WHERE leaked_blocks > 0;
CREATE VIEW leak_growth AS
SELECT g.run_id, g.site_id, s.function,
       CASE WHEN s.file = '' THEN '' ELSE s.file || ':' || s.line END AS location,
       st.growth, g.seq, t.line, t.time_ns, g.live_blocks, g.live_bytes
FROM site_timeline g JOIN timeline t ON t.run_id = g.run_id AND t.seq = g.seq
JOIN sites s ON s.id = g.site_id
JOIN site_stats st ON st.run_id = g.run_id AND st.site_id = g.site_id;
CREATE VIEW leak_list AS
SELECT l.run_id, printf ('0x%x', l.address) AS address, l.size, s.function,
       CASE WHEN s.file = '' THEN '' ELSE s.file || ':' || s.line END AS location,
       s.object, l.line, l.thread, t.name AS thread_name, l.stack_id, l.site_id
FROM leaks l JOIN sites s ON s.id = l.site_id
LEFT JOIN threads t ON t.run_id = l.run_id AND t.tid = l.thread;
CREATE VIEW bad_frees_by_site AS
SELECT run_id, site_id, function, location, object, bad_frees, first_line, file, line
FROM site_summary WHERE bad_frees > 0;
CREATE VIEW bad_free_list AS
SELECT b.run_id, printf ('0x%x', b.address) AS address, b.kind, s.function,
       CASE WHEN s.file = '' THEN '' ELSE s.file || ':' || s.line END AS location,
       s.object, b.line, b.thread, b.stack_id, b.site_id
FROM bad_frees b JOIN sites s ON s.id = b.site_id;
CREATE VIEW stack_frames AS
SELECT f.stack_id, st.run_id, f.level, f.level = st.site_level AS charged,
       printf ('0x%x', f.address) AS address, s.function,
       CASE WHEN s.file = '' THEN '' ELSE s.file || ':' || s.line END AS location,
       s.object, f.site_id, f.inlined
FROM frames f JOIN stacks st ON st.id = f.stack_id JOIN sites s ON s.id = f.site_id;
CREATE VIEW kind_leaks_by_site AS
SELECT k.run_id, k.kind, k.site_id, s.function,
       CASE WHEN s.file = '' THEN '' ELSE s.file || ':' || s.line END AS location,
       s.object, k.leaked_blocks, k.leaked_bytes, k.first_line, s.file, s.line
FROM kind_stats k JOIN sites s ON s.id = k.site_id WHERE k.leaked_blocks > 0;
CREATE VIEW refcount_list AS
SELECT r.run_id, r.kind, r.entry, r.objects, r.net_count, r.below_zero,
       printf ('0x%x', r.example) AS example, p.op, p.count, s.function,
       CASE WHEN s.file = '' THEN '' ELSE s.file || ':' || s.line END AS location,
       s.object, p.stack_id
FROM refcounts r JOIN refcount_paths p
  ON p.run_id = r.run_id AND p.kind = r.kind AND p.entry = r.entry
JOIN sites s ON s.id = p.site_id;
COMMIT;
PRAGMA application_id = 1836348003;
PRAGMA user_version = 5;