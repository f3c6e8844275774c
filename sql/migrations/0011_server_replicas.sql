-- Every running MCP server replica reports its own metrics here every few seconds,
-- so that get_server_metrics on any replica names every live replica with its own
-- figures (calls, errors, latency per tool). A replica that stops deletes its row;
-- one that dies stops being seen (answers list replicas seen recently).
CREATE TABLE server_replicas (
    name       text PRIMARY KEY,
    started_at timestamptz NOT NULL,
    seen_at    timestamptz NOT NULL DEFAULT now(),
    metrics    jsonb NOT NULL DEFAULT '{}'
);
