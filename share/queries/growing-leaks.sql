-- growing-leaks.sql -- Which sites leak more and more as the run goes on?
--
-- The leaking call sites of one run whose leak grew linearly or faster
-- (share/growth.md): the real leaks, not start-up nor caches, largest
-- first, with how much each leaked per second of the recorder's clock
-- (NULL when the run has no clock: then per 1000 trace lines).
-- Parameter: :run (default: the latest run).
--   sqlite3 -header -column run.db < growing-leaks.sql
WITH r AS (SELECT coalesce (:run, (SELECT max (id) FROM runs)) AS id),
span AS (
	SELECT t.run_id, max (t.time_ns) AS ns, max (t.line) AS lines
	FROM timeline t, r WHERE t.run_id = r.id GROUP BY t.run_id
)
SELECT l.function, l.location, l.growth, l.leaked_blocks, l.leaked_bytes,
       CASE WHEN span.ns > 0 THEN round (l.leaked_bytes * 1e9 / span.ns, 1) END AS bytes_per_second,
       round (l.leaked_bytes * 1000.0 / span.lines, 1) AS bytes_per_1000_lines
FROM leaks_by_site l JOIN r ON l.run_id = r.id JOIN span ON span.run_id = l.run_id
WHERE l.growth IN ('linear', 'exponential')
ORDER BY l.leaked_bytes DESC, l.leaked_blocks DESC, l.first_line;
