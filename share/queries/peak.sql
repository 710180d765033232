-- peak.sql -- When was the peak of live memory, and which sites held it?
--
-- The run's peak (bytes, trace line, nanoseconds into the run when it has
-- a clock) and the sites holding the most bytes at that moment.
-- Parameter: :run (default: the latest run).
--   sqlite3 -header -column run.db < peak.sql
WITH r AS (SELECT coalesce (:run, (SELECT max (id) FROM runs)) AS id)
SELECT runs.peak_live_bytes AS peak_bytes, runs.peak_line, runs.peak_time_ns,
       s.function, s.location, s.peak_share_bytes,
       round (100.0 * s.peak_share_bytes / runs.peak_live_bytes, 1) AS percent
FROM runs JOIN r ON runs.id = r.id
JOIN site_summary s ON s.run_id = runs.id
WHERE s.peak_share_bytes > 0
ORDER BY s.peak_share_bytes DESC
LIMIT 10;
