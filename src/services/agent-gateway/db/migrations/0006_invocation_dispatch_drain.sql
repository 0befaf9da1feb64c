CREATE INDEX "invocations_accepted_jobs_idx" ON "agent_gateway"."invocations" USING btree ("created_at","id") WHERE "agent_gateway"."invocations"."status" = 'accepted' and "agent_gateway"."invocations"."kind" = 'job';--> statement-breakpoint
-- The dispatch drain's job check (invocations/invocations.ts, the job submission): makes sure the drain job of the
-- submitted invocation's shard will see it, without a job queue write per submission. First the shard's lock in
-- shared mode (held to commit; a drain scan takes it exclusively, so it runs after this submission commits); then,
-- when the shard's job is waiting (not running, no failed attempt), nothing is written; otherwise add_job adds it (a
-- running job gets a successor: Graphile Worker detaches the key of a locked job; a job in backoff runs again now).
-- VOLATILE plpgsql: under READ COMMITTED each query takes a fresh snapshot, so after waiting for a scan's lock the
-- job is read as it is then. Reads Graphile Worker 0.17's `_private_jobs` (`key`, `locked_at`, `attempts`): re-check on
-- an upgrade.
CREATE OR REPLACE FUNCTION "agent_gateway"."ensure_invocation_drain"(p_identifier text, p_job_key text, p_lock integer, p_shard integer)
RETURNS void
LANGUAGE plpgsql
VOLATILE
AS $$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(p_lock, p_shard);
  IF EXISTS (
    SELECT 1 FROM graphile_worker._private_jobs j
    WHERE j.key = p_job_key AND j.locked_at IS NULL AND j.attempts = 0
  ) THEN
    RETURN;
  END IF;
  PERFORM graphile_worker.add_job(
    identifier => p_identifier,
    payload => json_build_object('shard', p_shard),
    job_key => p_job_key);
END;
$$;
