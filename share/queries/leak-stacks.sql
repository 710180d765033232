-- leak-stacks.sql -- How did the code get to each leaking site?
--
-- For the leaking sites of a run (largest first), the stacks that leaked
-- there, frame by frame from the charged frame outwards (:frames of them,
-- default 8).  Needs a trace recorded with stacks (mtrec --depth N).
-- :run defaults to the latest run.
--   sqlite3 -header -column run.db < leak-stacks.sql
SELECT st.site_id, st.id AS stack_id, st.leaked_blocks, st.leaked_bytes,
       f.level, f.function, f.location, f.object
FROM stacks st JOIN stack_frames f ON f.stack_id = st.id
WHERE st.run_id = coalesce (:run, (SELECT max (id) FROM runs))
  AND st.leaked_blocks > 0
  AND f.level >= st.site_level AND f.level < st.site_level + coalesce (:frames, 8)
ORDER BY (SELECT leaked_bytes FROM site_stats ss
          WHERE ss.run_id = st.run_id AND ss.site_id = st.site_id) DESC,
         st.site_id, st.leaked_bytes DESC, st.id, f.level;
