-- What every MCP server replica on this database must agree on lives here, not
-- in a file beside one server: the API keys (hashed) and their revocation, the
-- secret that signs pagination cursors, and the rate-limit buckets. A call is
-- admitted by one statement (kb_admit) that checks its key and takes a token
-- from each tier under the bucket's row lock: a revoked key is refused by the
-- next call on any replica, and the limits hold exactly across replicas.
CREATE TABLE api_keys (
    key_id     text PRIMARY KEY,
    name       text NOT NULL,
    digest     text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);
CREATE UNIQUE INDEX api_keys_active_name ON api_keys (name) WHERE revoked_at IS NULL;

CREATE TABLE server_secrets (
    name  text PRIMARY KEY,
    value bytea NOT NULL CHECK (length(value) >= 16)
);

-- One token bucket per key and tier (minute, hour, day, in that order), as the
-- level at the time `at` of the database's clock: every replica reads the same
-- clock, so clock skew between server machines changes nothing.
CREATE TABLE rate_buckets (
    key_id text PRIMARY KEY REFERENCES api_keys (key_id) ON DELETE CASCADE,
    at     timestamptz NOT NULL,
    levels float8[] NOT NULL
);

-- Admit one call presented with the key whose SHA-256 is p_digest, under
-- p_limits (tokens per minute, hour and day). No row: the key is unknown or
-- revoked. Otherwise whether the call is allowed, the whole tokens left per
-- tier, and the seconds until every exhausted tier has a token again (0 when
-- allowed). p_now replaces the database clock (tests).
CREATE FUNCTION kb_admit(p_digest text, p_limits float8[], p_now timestamptz DEFAULT NULL)
RETURNS TABLE (key_id text, key_name text, allowed boolean, remaining integer[], wait_s float8)
LANGUAGE plpgsql AS $$
DECLARE
    windows constant float8[] := ARRAY[60, 3600, 86400];
    t timestamptz := coalesce(p_now, clock_timestamp());
    k_id text;
    k_name text;
    b_at timestamptz;
    lv float8[];
    elapsed float8;
    ok boolean := true;
    w float8 := 0;
BEGIN
    SELECT a.key_id, a.name INTO k_id, k_name
    FROM api_keys a WHERE a.digest = p_digest AND a.revoked_at IS NULL;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT r.at, r.levels INTO b_at, lv FROM rate_buckets r WHERE r.key_id = k_id FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO rate_buckets AS r (key_id, at, levels) VALUES (k_id, t, p_limits)
        ON CONFLICT ON CONSTRAINT rate_buckets_pkey DO NOTHING;
        SELECT r.at, r.levels INTO b_at, lv
        FROM rate_buckets r WHERE r.key_id = k_id FOR UPDATE;
    END IF;
    elapsed := greatest(0, extract(epoch FROM t - b_at));
    FOR i IN 1..3 LOOP
        lv[i] := least(p_limits[i],
                       coalesce(lv[i], p_limits[i]) + elapsed * (p_limits[i] / windows[i]));
        ok := ok AND lv[i] >= 1;
    END LOOP;
    IF ok THEN
        FOR i IN 1..3 LOOP
            lv[i] := lv[i] - 1;
        END LOOP;
    ELSE
        FOR i IN 1..3 LOOP
            IF lv[i] < 1 THEN
                w := greatest(w, (1 - lv[i]) / (p_limits[i] / windows[i]));
            END IF;
        END LOOP;
    END IF;
    UPDATE rate_buckets r SET at = greatest(b_at, t), levels = lv
    WHERE r.key_id = k_id;
    RETURN QUERY SELECT k_id, k_name, ok,
        ARRAY[floor(lv[1])::int, floor(lv[2])::int, floor(lv[3])::int], w;
END $$;
