-- The embed and extract work of a rebuild, split into units that any worker
-- process (python -m extraction worker, on any machine with DATABASE_URL, or the
-- rebuilding process itself) claims with FOR UPDATE SKIP LOCKED. A claim holds a
-- lease measured on the database's clock (machines' clocks never matter); a unit
-- whose lease ran out, because its worker died or lost the database, is claimed
-- again. A unit is finished only by the claim that holds it and in the same
-- transaction that writes its results into the work caches, so no unit is done
-- twice into the caches. The rebuild publishes once every unit is done; units go
-- with their build.
CREATE TABLE work_units (
    id          bigserial PRIMARY KEY,
    build_id    bigint NOT NULL REFERENCES graph_builds (id) ON DELETE CASCADE,
    kind        text NOT NULL CHECK (kind IN ('embed', 'extract')),
    items       jsonb NOT NULL,
    size        integer NOT NULL CHECK (size > 0),
    claimed_by  text,
    lease_until timestamptz,
    attempts    integer NOT NULL DEFAULT 0,
    done_at     timestamptz
);
CREATE INDEX work_units_pending ON work_units (build_id, id) WHERE done_at IS NULL;
