-- The send job check of text-message lines (communications/texting.ts, `queue` and the send command): makes sure the
-- line's send job will see a text just queued. When the line's job is waiting (not running, no failed attempt)
-- nothing is written; otherwise add_job adds it (a running job gets a successor, a job in backoff is reset).
-- A VOLATILE plpgsql function: under READ COMMITTED each of its queries takes a fresh snapshot, so a caller's
-- statement that first waited for the line's lock (held by a send job draining the queue) reads the job as it is
-- once that lock is held, not as it was when the statement began. Reads Graphile Worker 0.17's `_private_jobs`
-- (`key`, `locked_at`, `attempts`): re-check on an upgrade.
CREATE OR REPLACE FUNCTION "media_buying"."ensure_text_send_job"(p_identifier text, p_job_key text, p_line_id text)
RETURNS void
LANGUAGE plpgsql
VOLATILE
AS $$
BEGIN
  IF EXISTS (
    SELECT 1 FROM graphile_worker._private_jobs j
    WHERE j.key = p_job_key AND j.locked_at IS NULL AND j.attempts = 0
  ) THEN
    RETURN;
  END IF;
  PERFORM graphile_worker.add_job(
    identifier => p_identifier,
    payload => json_build_object('lineId', p_line_id),
    job_key => p_job_key,
    job_key_mode => 'preserve_run_at');
END;
$$;
