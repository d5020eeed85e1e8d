-- Admission of a new run under AGENT_MAX_CONCURRENT_RUNS_PER_USER, called from inside the single
-- statement that opens the run. It takes the per-user transaction advisory lock (two-key space
-- 72707371, the second key a hash of the user id), then counts the user's RUNNING runs with a fresh
-- heartbeat. Being a VOLATILE PL/pgSQL function, its count takes a snapshot after the lock is held
-- (READ COMMITTED), so it sees a run that another instance committed while this one waited; the lock
-- is held until the calling statement's transaction ends, after the new run is inserted.
CREATE OR REPLACE FUNCTION "in_app_agent_admit_run"(p_user_id text, p_max_running integer, p_stale_seconds integer)
RETURNS boolean
LANGUAGE plpgsql
VOLATILE
AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(72707371, hashtext(p_user_id));
  RETURN (
    SELECT count(*) FROM "AgentRun"
    WHERE "userId" = p_user_id AND "status" = 'RUNNING'
      AND "lastHeartbeatAt" >= (now() AT TIME ZONE 'UTC') - make_interval(secs => p_stale_seconds)
  ) < p_max_running;
END
$$;
