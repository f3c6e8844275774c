-- Named statements of the rebuild's work queue (table work_units): the rebuild
-- enqueues units, worker processes claim, finish or release them.

-- drop_stale_work_units --
-- Called while holding the rebuild lock: units of builds that are not running
-- (their process died, or they failed) will never be published.
DELETE FROM work_units u
USING graph_builds b
WHERE b.id = u.build_id AND b.status <> 'running';

-- drop_build_work_units --
DELETE FROM work_units WHERE build_id = %(build_id)s;

-- enqueue_work_units --
INSERT INTO work_units (build_id, kind, items, size)
SELECT %(build_id)s, %(kind)s, i.items, jsonb_array_length(i.items)
FROM unnest(%(units)s::jsonb[]) WITH ORDINALITY AS i(items, n)
ORDER BY i.n;

-- notify_work_units --
SELECT pg_notify('kb_work_units', %(build_id)s::text);

-- listen_work_units --
LISTEN kb_work_units;

-- claim_work_unit --
-- One unit no live claim holds, of a running build made with this worker's
-- models and extractor version; units of the kind the worker prefers first,
-- oldest first. The lease is measured on the database's clock.
UPDATE work_units u
SET claimed_by = %(worker)s,
    lease_until = now() + make_interval(secs => %(lease_s)s),
    attempts = u.attempts + 1
WHERE u.id = (
    SELECT w.id
    FROM work_units w
    JOIN graph_builds b ON b.id = w.build_id
    WHERE w.done_at IS NULL
      AND b.status = 'running'
      AND b.models = %(models)s
      AND (w.lease_until IS NULL OR w.lease_until < now())
      AND (%(build_id)s::bigint IS NULL OR w.build_id = %(build_id)s::bigint)
      AND w.kind = ANY(%(kinds)s::text[])
    ORDER BY w.build_id, w.kind <> %(prefer)s, w.id
    LIMIT 1
    FOR UPDATE OF w SKIP LOCKED
)
RETURNING u.id, u.build_id, u.kind, u.items, u.size, u.attempts;

-- hold_work_unit --
-- Inside the transaction that writes a unit's results: the unit is still this
-- claim's (not finished, not claimed again after its lease ran out).
SELECT id FROM work_units
WHERE id = %(id)s AND claimed_by = %(worker)s AND attempts = %(attempts)s AND done_at IS NULL
FOR UPDATE;

-- finish_work_unit --
UPDATE work_units SET done_at = now(), lease_until = NULL WHERE id = %(id)s;

-- release_work_unit --
-- A worker that stops before finishing a unit gives it back at once.
UPDATE work_units SET lease_until = NULL
WHERE id = %(id)s AND claimed_by = %(worker)s AND attempts = %(attempts)s AND done_at IS NULL;

-- release_worker_units --
-- The rebuild saw one of its local worker processes exit: its claims end now.
UPDATE work_units SET lease_until = NULL
WHERE build_id = %(build_id)s AND claimed_by = %(worker)s AND done_at IS NULL;

-- work_progress --
SELECT kind,
       count(*) FILTER (WHERE done_at IS NULL) AS pending,
       coalesce(sum(size) FILTER (WHERE done_at IS NOT NULL), 0) AS done_items,
       coalesce(sum(size), 0) AS items
FROM work_units WHERE build_id = %(build_id)s
GROUP BY kind;

-- build_status --
SELECT status, models FROM graph_builds WHERE id = %(id)s;

-- foreign_work --
-- Units of running builds this worker cannot claim: another model or extractor version.
SELECT DISTINCT b.id, b.models
FROM work_units w JOIN graph_builds b ON b.id = w.build_id
WHERE w.done_at IS NULL AND b.status = 'running' AND b.models <> %(models)s;

-- work_summary --
-- What the build's units came to, read just before they are dropped at publish.
SELECT count(*) AS units,
       count(*) FILTER (WHERE attempts > 1) AS claimed_again,
       count(DISTINCT claimed_by) FILTER (WHERE done_at IS NOT NULL) AS workers
FROM work_units WHERE build_id = %(build_id)s;
