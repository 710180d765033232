-- fleet-first-build.sql -- Which build introduced each leak?
--
-- Builds are told apart by the program's GNU build-id (runs.build_id,
-- from the trace's '# object' lines) and ordered by their first run in
-- the database.  For each site that leaks in some run: the first build
-- in which it leaked, that build's first run and how many of its runs
-- leak there, and how many runs of earlier builds there were (in none
-- of which it leaked).  The newest leaks first.  SQLite and PostgreSQL:
--   sqlite3 -header -column runs.db < fleet-first-build.sql
--   psql -f fleet-first-build.sql postgresql://host/db
WITH builds AS (
	SELECT coalesce (build_id, '') AS build, min (id) AS first_run, count (*) AS runs
	FROM runs GROUP BY coalesce (build_id, '')
),
leaking AS (
	SELECT st.site_id, coalesce (r.build_id, '') AS build, count (*) AS runs,
	       sum (st.leaked_bytes) AS bytes
	FROM site_stats st JOIN runs r ON r.id = st.run_id
	WHERE st.leaked_blocks > 0
	GROUP BY st.site_id, coalesce (r.build_id, '')
),
first AS (
	SELECT l.site_id, min (b.first_run) AS first_run
	FROM leaking l JOIN builds b ON b.build = l.build GROUP BY l.site_id
)
SELECT s.function,
       CASE WHEN s.file = '' THEN '' ELSE s.file || ':' || s.line END AS location,
       s.object, b.build AS introduced_by, b.first_run, l.runs AS leaking_runs,
       b.runs AS runs_of_build,
       (SELECT count (*) FROM runs x WHERE x.id < b.first_run) AS earlier_runs
FROM first f JOIN builds b ON b.first_run = f.first_run
JOIN leaking l ON l.site_id = f.site_id AND l.build = b.build
JOIN sites s ON s.id = f.site_id
ORDER BY b.first_run DESC, l.bytes DESC, s.function, location;
