-- fleet-leaks-by-host.sql -- Which sites leak on how many hosts?
--
-- For a database that holds the runs of many hosts (--db with --host,
-- share/fleet.md): each site that leaked in some run, on how many hosts
-- (of all the hosts with a run of the same program), in how many runs,
-- and how much in all; the sites that leak everywhere first.  A site is
-- its function, file, line and object: the same on every host whatever
-- the address layout.  Runs SQLite and PostgreSQL alike:
--   sqlite3 -header -column runs.db < fleet-leaks-by-host.sql
--   psql -v program=NULL -f fleet-leaks-by-host.sql postgresql://host/db
-- :program (a LIKE pattern on runs.exe) keeps the runs of one program.
WITH r AS (
	SELECT id, coalesce (host, '') AS host, coalesce (exe, "binary", '') AS program
	FROM runs WHERE coalesce (exe, "binary", '') LIKE coalesce (:program, '%')
),
hosts AS (SELECT program, count (DISTINCT host) AS n FROM r GROUP BY program)
SELECT s.function,
       CASE WHEN s.file = '' THEN '' ELSE s.file || ':' || s.line END AS location,
       s.object, r.program,
       count (DISTINCT r.host) AS hosts, hosts.n AS of_hosts, count (*) AS runs,
       sum (st.leaked_blocks) AS leaked_blocks, sum (st.leaked_bytes) AS leaked_bytes
FROM site_stats st JOIN r ON r.id = st.run_id JOIN sites s ON s.id = st.site_id
JOIN hosts ON hosts.program = r.program
WHERE st.leaked_blocks > 0
GROUP BY s.id, r.program, hosts.n
ORDER BY hosts DESC, leaked_bytes DESC, s.function, location;
