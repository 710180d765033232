-- top-leaking-lines.sql -- Which source lines leak the most?
--
-- The call sites of one run that left blocks allocated, largest first
-- (wrappers skipped as at load time).  Parameters: :run (default: the
-- latest run), :limit (default 20).
--   sqlite3 -header -column run.db < top-leaking-lines.sql
--   sqlite3 -cmd '.param set :run 3' run.db < top-leaking-lines.sql
SELECT function, location, object, leaked_blocks, leaked_bytes,
       allocations, peak_live_bytes
FROM leaks_by_site
WHERE run_id = coalesce (:run, (SELECT max (id) FROM runs))
ORDER BY leaked_bytes DESC, leaked_blocks DESC, first_line
LIMIT coalesce (:limit, 20);
