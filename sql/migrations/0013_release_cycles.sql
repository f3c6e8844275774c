-- Release cycles as data: every cycle of every product note (an endoflife.date
-- page's releases table), typed, with the product's own labels for its support
-- phases and the note it came from. A rebuild replaces a changed note's cycles in
-- its publish transaction; deleting the note deletes them.
CREATE TABLE lifecycle_products (
    document_id bigint PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
    vendor_id   bigint NOT NULL REFERENCES vendors (id) ON DELETE CASCADE,
    product     text NOT NULL,
    product_key text NOT NULL,
    permalink   text,
    aliases     text[] NOT NULL DEFAULT '{}',
    category    text,
    labels      jsonb NOT NULL DEFAULT '{}',
    -- the product's entity in its vendor's graph (set when that graph is rebuilt)
    entity_id   bigint REFERENCES entities (id) ON DELETE SET NULL
);
CREATE INDEX lifecycle_products_vendor ON lifecycle_products (vendor_id, product_key);
CREATE INDEX lifecycle_products_key ON lifecycle_products (product_key);
-- A support date is a date, or a flag when the note says true ("already") or false
-- ("not planned"); both NULL: the note does not say.
CREATE TABLE release_cycles (
    document_id         bigint NOT NULL
                        REFERENCES lifecycle_products (document_id) ON DELETE CASCADE,
    position            integer NOT NULL,
    cycle               text NOT NULL,
    release_date        date,
    eol                 date,
    eol_flag            boolean,
    eoas                date,
    eoas_flag           boolean,
    eoes                date,
    eoes_flag           boolean,
    lts                 date,
    lts_flag            boolean,
    discontinued        date,
    discontinued_flag   boolean,
    latest              text,
    latest_release_date date,
    codename            text,
    label               text,
    link                text,
    extra               jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (document_id, position)
);
CREATE INDEX release_cycles_eol ON release_cycles (eol) WHERE eol IS NOT NULL;
CREATE INDEX release_cycles_eoes ON release_cycles (eoes) WHERE eoes IS NOT NULL;
